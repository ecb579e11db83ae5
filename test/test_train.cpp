// Tests of the training program's own parts, through train.cu's real code paths (included
// here, as llm.c's tests include its trainer): batches, sampler, schedule, AdamW, clipping,
// checkpoints (round trip, corrupt files, mismatches), resume, --dump-state, validation and the
// report (log.tsv, results.json, the tables), what a saved run keeps and refuses, the flags'
// bounds and documented defaults, and a short CPU run that must learn.
#define TESTING
#include <fcntl.h>

#include "train.cu"
#include "test/unity.h"


// a run that takes a second or two: short copy examples, a small model
static RunConfig small_run(const std::string& dir, int steps) {
    RunConfig c;
    c.task = "copy_cmc";
    c.pe = "t5";
    c.layers = 1, c.d_model = 32, c.heads = 2, c.d_ff = 64;
    c.steps = steps, c.eval_every = 4, c.batch = 8, c.lr = 1e-3, c.dropout = 0.1;  // dropout on: resume must redraw the same masks
    c.data.train_size = 200, c.data.valid_size = 40, c.data.test_size = 40, c.data.train_max = 6, c.data.test_max = 8;
    c.out = dir;
    return c;
}

// a run that learns copy in seconds: the default model, trained on lengths up to 8 and tested up to 12
static RunConfig short_copy_run(int steps, int eval_every) {
    RunConfig c;
    c.task = "copy";
    c.data.train_max = 8, c.data.test_max = 12, c.data.train_size = 2000, c.data.valid_size = 200, c.data.test_size = 200;
    c.steps = steps, c.batch = 32, c.eval_every = eval_every;
    c.out = unity_temp_dir();
    return c;
}

// prepares a run, and trains it up to step `until` if given, without printing
static void prepare_quietly(Run* r, int until = 0) {
    Silence quiet;
    prepare_run(r);
    if (until) train(r, until);
}

// trains without printing (an assertion's message must not go where the silence goes)
static void train_quietly(Run* r, int until) {
    Silence quiet;
    train(r, until);
}

static std::vector<float> logits_of(Run* r, const Batch& batch) {
    model_forward(&r->model, batch.tokens.data(), nullptr, batch.B, batch.T, NO_DROPOUT);
    return std::vector<float>(r->model.act(A_LOGITS), r->model.act(A_LOGITS) + (size_t)batch.B * batch.T * r->model.config.V);
}

// ----------------------------------------------------------------------------
// batches and order

static void test_batches_put_targets_on_the_answer_and_eos_only(void) {
    const Task& task = find_task("addition");
    Vocab vocab = make_vocab(task);
    Split split = make_split(task, vocab, DataConfig(), SPLIT_TRAIN);
    Batch batch;
    fill_batch(&batch, split, {0, 1, 2});
    long real = 0;
    for (int b = 0; b < batch.B; b++) {
        int len = split.example_len(b), prompt = split.prompt_len[b];
        real += len;
        for (int t = 0; t < batch.T; t++) {
            int target = batch.targets[(size_t)b * batch.T + t];
            int token = batch.tokens[(size_t)b * batch.T + t];
            if (t >= len) TEST_ASSERT_EQUAL_INT(PAD_ID, token);
            // position t predicts token t + 1: answers start at the last prompt position
            int expected = t >= prompt - 1 && t < len - 1 ? batch.tokens[(size_t)b * batch.T + t + 1] : -1;
            TEST_ASSERT_EQUAL_INT(expected, target);
        }
        TEST_ASSERT_EQUAL_INT(EOS_ID, batch.targets[(size_t)b * batch.T + len - 2]);  // <eos> is a target
    }
    TEST_ASSERT_EQUAL_INT(real, batch.real_tokens);
}

// a training split of n examples of lengths 2-7 (copy_cmc: 7 to 17 tokens)
static Split training_split(int n) {
    const Task& task = find_task("copy_cmc");
    DataConfig data;
    data.train_size = n, data.train_max = 7;
    return make_split(task, make_vocab(task, data), data, SPLIT_TRAIN);
}

static void test_batch_order_visits_every_example_once_per_epoch_and_depends_only_on_the_step(void) {
    const int n = 50, B = 8;
    Split split = training_split(n);
    TEST_ASSERT_EQUAL_INT(n, split.size());
    BatchSampler sampler(7, split, 0), fresh(7, split, 0);
    std::vector<int> seen;
    for (int step = 0; step * B < n * 2; step++) {
        std::vector<int> examples = sampler.examples(step, B);
        seen.insert(seen.end(), examples.begin(), examples.end());
    }
    for (int epoch = 0; epoch < 2; epoch++) {
        std::vector<int> one(seen.begin() + epoch * n, seen.begin() + (epoch + 1) * n);
        std::sort(one.begin(), one.end());
        for (int i = 0; i < n; i++) TEST_ASSERT_EQUAL_INT(i, one[i]);
    }
    TEST_ASSERT_MESSAGE(fresh.examples(9, B) == std::vector<int>(seen.begin() + 9 * B, seen.begin() + 10 * B), "a fresh sampler disagrees");
}

// --sort-pool K: the K batches of a pool hold the examples the paper's sampler puts in those K
// batches, cut from their order by length (no batch's longest is longer than the next one's
// shortest), in an order that is not always by length; less padding in all; each divides its
// loss by the pool's mean count of targets per batch (the paper's batches by their own); and a
// fresh sampler (a resumed run) agrees in the middle of a pool.
static void test_sort_pool_sorts_the_papers_batches_by_length_within_each_pool(void) {
    const int n = 200, B = 8, K = 4, pools = 12;  // 384 batches' worth of examples: pools straddle epochs
    Split split = training_split(n);
    BatchSampler plain(7, split, 0), pooled(7, split, K), fresh(7, split, K);
    long plain_padded = 0, pooled_padded = 0;
    int pools_in_length_order = 0;
    auto longest = [&](const std::vector<int>& batch) {
        int most = 0;
        for (int e : batch) most = std::max(most, split.example_len(e));
        return most;
    };
    for (int pool = 0; pool < pools; pool++) {
        std::vector<int> paper, ours;
        std::vector<std::pair<int, int>> ranges;  // each batch's (shortest, longest)
        std::vector<size_t> loss_tokens;          // each batch's
        long targets = 0;
        for (int step = pool * K; step < (pool + 1) * K; step++) {
            std::vector<int> a = plain.examples(step, B), b = pooled.examples(step, B);
            Batch plain_batch, pooled_batch;
            plain.fill(&plain_batch, step, B), pooled.fill(&pooled_batch, step, B);
            TEST_ASSERT_EQUAL_INT(0, plain_batch.loss_tokens);
            for (int target : pooled_batch.targets) targets += target >= 0;
            loss_tokens.push_back(pooled_batch.loss_tokens);
            TEST_ASSERT_EQUAL_INT(B, b.size());
            paper.insert(paper.end(), a.begin(), a.end());
            ours.insert(ours.end(), b.begin(), b.end());
            plain_padded += (long)B * longest(a), pooled_padded += (long)B * longest(b);
            int shortest = INT_MAX;
            for (int e : b) shortest = std::min(shortest, split.example_len(e));
            ranges.push_back({shortest, longest(b)});
        }
        pools_in_length_order += std::is_sorted(ranges.begin(), ranges.end());
        for (size_t tokens : loss_tokens) TEST_ASSERT_EQUAL_INT((targets + K / 2) / K, tokens);
        std::sort(paper.begin(), paper.end());
        std::sort(ours.begin(), ours.end());
        TEST_ASSERT_MESSAGE(paper == ours, "a pool holds other examples than the paper's batches");
        std::sort(ranges.begin(), ranges.end());
        for (int i = 0; i + 1 < K; i++) TEST_ASSERT_MESSAGE(ranges[i].second <= ranges[i + 1].first, "batches of a pool overlap in length");
    }
    TEST_ASSERT_LESS_THAN(pools, pools_in_length_order);
    TEST_ASSERT_LESS_THAN(plain_padded, pooled_padded);
    TEST_ASSERT_MESSAGE(fresh.examples(2 * K + 1, B) == pooled.examples(2 * K + 1, B), "a fresh sampler disagrees");
}

// A batch of B rows of n tokens each, as fill_batch would leave it (for the draws of positions)
static Batch rows_of(int B, int n) {
    Batch batch;
    batch.B = B, batch.T = n;
    batch.lengths.assign(B, n);
    return batch;
}

// --random-positions L: each sequence's positions are n distinct values below L, increasing, the
// padding at the last one, and every such set equally likely (all 56 sets of 3 of 8, each
// 1,000 times in expectation over 56,000 draws: 5 standard deviations either side); a function
// of (seed, step) alone.
static void test_drawn_positions_are_uniform_over_the_sorted_sets_below_L(void) {
    Split split = training_split(100);
    BatchSampler sampler(7, split, 0);
    Batch padded;
    sampler.fill(&padded, 3, 16);
    draw_positions(&padded, 64, 7, 3);
    for (int b = 0; b < padded.B; b++) {
        const int* pos = padded.positions.data() + (size_t)b * padded.T;
        int n = padded.lengths[b];
        for (int t = 0; t < padded.T; t++) {
            TEST_ASSERT_TRUE(pos[t] >= 0 && pos[t] < 64);
            if (t > 0 && t < n) TEST_ASSERT_MESSAGE(pos[t - 1] < pos[t], "positions not increasing");
            if (t >= n) TEST_ASSERT_EQUAL_INT(pos[n - 1], pos[t]);
        }
    }
    Batch again = padded;
    draw_positions(&again, 64, 7, 3);
    TEST_ASSERT_MESSAGE(again.positions == padded.positions, "the same (seed, step) drew other positions");
    draw_positions(&again, 64, 7, 4);
    TEST_ASSERT_MESSAGE(again.positions != padded.positions, "another step drew the same positions");
    std::map<std::vector<int>, int> sets;
    Batch small = rows_of(1000, 3);
    for (int step = 0; step < 56; step++) {
        draw_positions(&small, 8, 11, step);
        for (int b = 0; b < small.B; b++) sets[std::vector<int>(small.positions.begin() + 3 * b, small.positions.begin() + 3 * b + 3)]++;
    }
    TEST_ASSERT_EQUAL_INT(56, (int)sets.size());
    for (const auto& [set, count] : sets) TEST_ASSERT_MESSAGE(count > 842 && count < 1158, format_text("set drawn %d times", count).c_str());
}

// --eval-positions drawn: an example's positions depend on (seed, split, example) alone, not on
// the batch it is evaluated in, and differ between examples and between splits
static void test_evaluation_draws_each_example_its_own_positions(void) {
    Batch first = rows_of(3, 20), second = rows_of(2, 20);
    draw_eval_positions(&first, 2048, 7, "valid", {4, 9, 2});
    draw_eval_positions(&second, 2048, 7, "valid", {9, 5});
    auto row = [](const Batch& b, int r) { return std::vector<int>(b.positions.begin() + (size_t)r * b.T, b.positions.begin() + (size_t)(r + 1) * b.T); };
    TEST_ASSERT_MESSAGE(row(first, 1) == row(second, 0), "example 9 drew other positions in another batch");
    TEST_ASSERT_MESSAGE(row(first, 0) != row(first, 1), "two examples drew the same positions");
    Batch test = rows_of(1, 20);
    draw_eval_positions(&test, 2048, 7, "test", {9});
    TEST_ASSERT_MESSAGE(row(test, 0) != row(second, 0), "example 9 of test drew valid's positions");
    for (const Batch* b : {&first, &second, &test})
        for (int r = 0; r < b->B; r++) {
            std::vector<int> pos = row(*b, r);
            TEST_ASSERT_MESSAGE(std::is_sorted(pos.begin(), pos.end()) && std::adjacent_find(pos.begin(), pos.end()) == pos.end() && pos.back() < 2048,
                                "not distinct increasing positions below L");
        }
}

// each epoch a fresh permutation, uniform over the orders (each of the 6 orders of 3 alike over
// many streams: Sattolo's shuffle, which never leaves an element in place, makes 2 of them), and
// each --sort-pool pool its own drawn order of batches
static void test_epochs_and_pools_are_drawn_afresh_and_uniformly(void) {
    const int n = 50, B = 10;
    Split split = training_split(n);
    BatchSampler sampler(7, split, 0);
    std::vector<int> seen;
    for (int step = 0; step < 10; step++)
        for (int e : sampler.examples(step, B)) seen.push_back(e);
    TEST_ASSERT_MESSAGE(std::vector<int>(seen.begin(), seen.begin() + n) != std::vector<int>(seen.begin() + n, seen.end()), "epoch 1 repeats epoch 0");
    std::map<std::vector<int>, int> orders;
    for (int s = 0; s < 6000; s++) orders[drawn_permutation(3, rng_stream(1, 2, s))]++;
    TEST_ASSERT_EQUAL_INT(6, orders.size());
    for (const auto& kv : orders) TEST_ASSERT_DOUBLE_WITHIN(5 * std::sqrt(6000 * (1.0 / 6) * (5.0 / 6)), 1000, kv.second);
    const int K = 4;
    Split pooled_split = training_split(200);
    BatchSampler pooled(7, pooled_split, K);
    std::set<std::vector<int>> slot_orders;  // one order for all 12 pools: (1/24)^11 by chance
    for (int pool = 0; pool < 12; pool++) {
        pooled.examples(pool * K, 8);
        slot_orders.insert(pooled.slots);
    }
    TEST_ASSERT_TRUE(slot_orders.size() > 1);
}

// --pack: each sequence of the padded batch sits whole in one packed row (its tokens, targets
// and drawn positions, counting from where it starts, which its starts name), no two overlap,
// padding only ends a row, and the rows are fewer; with positions not drawn, each sequence's
// count from 0.
static void test_pack_batch_lays_the_sequences_end_to_end_in_fewer_rows(void) {
    const int B = 16;
    Split split = training_split(100);
    BatchSampler sampler(7, split, 0);
    for (bool drawn : {false, true}) {
        Batch padded, packed;
        sampler.fill(&padded, 3, B);
        if (drawn) draw_positions(&padded, 64, 7, 3);
        packed = padded;
        pack_batch(&packed);
        TEST_ASSERT_LESS_THAN(B, packed.B);
        TEST_ASSERT_EQUAL_INT(padded.T, packed.T);
        TEST_ASSERT_EQUAL_INT(padded.real_tokens, packed.real_tokens);
        typedef std::vector<int> Column;
        std::vector<std::vector<Column>> sequences, segments;  // tokens, targets, positions of each
        for (int b = 0; b < B; b++) {
            std::vector<Column> seq(3);
            for (int t = 0; t < padded.lengths[b]; t++) {
                size_t at = (size_t)b * padded.T + t;
                seq[0].push_back(padded.tokens[at]), seq[1].push_back(padded.targets[at]), seq[2].push_back(drawn ? padded.positions[at] : t);
            }
            sequences.push_back(seq);
        }
        long packed_real = 0;
        for (int row = 0; row < packed.B; row++) {
            const int T = packed.T, used = packed.lengths[row];
            packed_real += used;
            for (int t = 0; t < T;) {  // one segment: the tokens that share t's start
                int start = packed.starts[(size_t)row * T + t], end = t;
                TEST_ASSERT_EQUAL_INT(t, start);
                while (end < T && packed.starts[(size_t)row * T + end] == start) end++;
                std::vector<Column> seg(3);
                for (int k = t; k < end; k++) {
                    size_t at = (size_t)row * T + k;
                    seg[0].push_back(packed.tokens[at]), seg[1].push_back(packed.targets[at]), seg[2].push_back(packed.positions[at]);
                }
                if (t < used) segments.push_back(seg);
                else TEST_ASSERT_MESSAGE(std::all_of(seg[0].begin(), seg[0].end(), [](int tok) { return tok == PAD_ID; }), "padding inside a row");
                TEST_ASSERT_MESSAGE(t < used ? end <= used : end == T, "a sequence runs into the padding");
                t = end;
            }
        }
        TEST_ASSERT_EQUAL_INT(padded.real_tokens, packed_real);
        std::sort(sequences.begin(), sequences.end());
        std::sort(segments.begin(), segments.end());
        TEST_ASSERT_MESSAGE(sequences == segments, drawn ? "the packed sequences differ (drawn positions)" : "the packed sequences differ");
    }
}

// ----------------------------------------------------------------------------
// optimisation

// first fit decreasing: lengths 1, 1, 3, 3 in rows of 4 fill two rows (3 1 | 3 1; in the given
// order, shortest first, or with a sequence that would exactly fill a row kept out of it, three);
// and batch_cost's shapes with --pack are the packed batches' own
static void test_pack_fills_rows_longest_first_and_batch_cost_counts_its_shapes(void) {
    Batch b;
    b.B = 4, b.T = 4;
    b.lengths = {1, 1, 3, 3};
    b.tokens.assign(16, 5), b.targets.assign(16, -1);
    pack_batch(&b);
    TEST_ASSERT_EQUAL_INT(2, b.B);
    TEST_ASSERT_MESSAGE(b.lengths == std::vector<int>({4, 4}), "rows not full");
    Split split = training_split(100);
    BatchSampler sampler(7, split, 0);
    std::set<std::pair<int, int>> shapes;
    for (int step = 0; step < 12; step++) {
        Batch batch;
        sampler.fill(&batch, step, 8);
        pack_batch(&batch);
        shapes.insert({batch.B, batch.T});
    }
    TEST_ASSERT_MESSAGE(shapes == batch_cost(split, 7, 8, 0, true, 12).shapes, "packed shapes");
}

// --position-coupling's offset keeps a sequence's largest place below the table's last position
// and reaches it, reading every token of the row (a three-digit number inside it, and one that
// ends it: the last token counts too); --abacus's takes every offset below ABACUS_MAX_OFFSET
static void test_place_offsets_reach_the_last_position_and_every_abacus_offset(void) {
    Model m;
    m.config.position_coupling = true, m.config.max_T = 10;  // positions 0..10
    m.is_digit.assign(16, 0);
    m.is_digit[4] = 1;
    Batch b;
    for (std::vector<int> row : {std::vector<int>{3, 4, 4, 4, 3}, std::vector<int>{3, 4, 4, 4}}) {  // largest place: 3
        b.B = 1, b.T = (int)row.size();
        b.tokens = row;
        b.lengths = {b.T};
        int highest = -1;
        for (int step = 0; step < 2000; step++) {
            draw_place_offsets(&b, m, 7, step);
            highest = std::max(highest, b.place_offsets[0] + 3);
        }
        TEST_ASSERT_EQUAL_INT(m.config.max_pos() - 1, highest);
    }
    m.config.position_coupling = false;
    std::set<int> abacus;
    for (int step = 0; step < 5000; step++) draw_place_offsets(&b, m, 7, step), abacus.insert(b.place_offsets[0]);
    TEST_ASSERT_EQUAL_INT(ABACUS_MAX_OFFSET, abacus.size());
    TEST_ASSERT_EQUAL_INT(ABACUS_MAX_OFFSET - 1, *abacus.rbegin());
}

// --stats' batch costs, counted again here from the sampler's examples: the paper's batches compute
// B rows of their longest example; --pack the same real tokens in fewer rows of that length;
// --sort-pool's whole pools hold the paper's examples (so the same real tokens) and compute
// less; the shapes are those the steps took.
static void test_batch_cost_counts_what_the_steps_compute(void) {
    const int B = 8, K = 4, steps = 12;
    Split split = training_split(100);
    BatchSampler sampler(7, split, 0);
    long real = 0, computed = 0;
    std::set<std::pair<int, int>> shapes;
    for (int step = 0; step < steps; step++) {
        int longest = 0;
        for (int e : sampler.examples(step, B)) real += split.example_len(e), longest = std::max(longest, split.example_len(e));
        computed += (long)B * longest;
        shapes.insert({B, longest});
    }
    BatchCost paper = batch_cost(split, 7, B, 0, false, steps), packed = batch_cost(split, 7, B, 0, true, steps);
    BatchCost sorted = batch_cost(split, 7, B, K, false, steps), both = batch_cost(split, 7, B, K, true, steps);
    TEST_ASSERT_EQUAL_INT(steps, paper.steps);
    TEST_ASSERT_EQUAL_INT(steps * B, paper.rows);
    TEST_ASSERT_EQUAL_INT(real, paper.real);
    TEST_ASSERT_EQUAL_INT(computed, paper.computed);
    TEST_ASSERT_MESSAGE(shapes == paper.shapes, "the paper's shapes differ");
    TEST_ASSERT_EQUAL_FLOAT(1 - (double)real / computed, paper.padding());
    for (const BatchCost* less : {&packed, &sorted, &both}) {
        TEST_ASSERT_EQUAL_INT(real, less->real);
        TEST_ASSERT_LESS_THAN(computed, less->computed);
        TEST_ASSERT_LESS_THAN(paper.padding(), less->padding());
    }
    TEST_ASSERT_LESS_THAN(paper.rows, packed.rows);
    TEST_ASSERT_EQUAL_INT(paper.rows, sorted.rows);
}

// --pad-to-multiple N: each batch's rows are padded to a multiple of N tokens (never past the
// cap, the longest sequence the model is built for, nor shorter than the batch's longest
// example), holding the paper's batch's tokens, targets and real tokens; a step on them
// computes that batch's loss and gradient (its sums over rows in another order: equal to
// rounding); batch_cost counts the rounded rows.
static void test_pad_to_multiple_rounds_the_rows_and_computes_what_the_batch_did(void) {
    RunConfig c = small_run(unity_temp_dir(), 1);
    c.dropout = 0;  // dropout's masks are drawn by place in the (B, T) buffers, which the rounding moves
    Run r(&c);
    prepare_quietly(&r);
    const Split& split = train_split(r);
    const int B = 8, steps = 6, cap = r.model.config.max_T;
    TEST_ASSERT_MESSAGE(cap % 8 != 0, "the cap is a multiple of 8: nothing tests that it stops the rounding");
    BatchSampler plain(7, split, 0), rounded(7, split, 0, {8, cap}), capped(7, split, 0, {64, cap});
    long computed = 0;
    for (int step = 0; step < steps; step++) {
        Batch a, b, most;
        plain.fill(&a, step, B), rounded.fill(&b, step, B), capped.fill(&most, step, B);
        TEST_ASSERT_MESSAGE(b.T % 8 == 0 || b.T == cap, "rows neither a multiple of 8 nor the cap");
        TEST_ASSERT_TRUE(b.T >= a.T && b.T < a.T + 8);
        TEST_ASSERT_EQUAL_INT(cap, most.T);
        TEST_ASSERT_EQUAL_INT(a.real_tokens, b.real_tokens);
        TEST_ASSERT_MESSAGE(a.lengths == b.lengths, "row lengths differ");
        for (int row = 0; row < B; row++)
            for (int t = 0; t < b.T; t++) {
                size_t at = (size_t)row * b.T + t, from = (size_t)row * a.T + t;
                TEST_ASSERT_EQUAL_INT(t < a.T ? a.tokens[from] : PAD_ID, b.tokens[at]);
                TEST_ASSERT_EQUAL_INT(t < a.T ? a.targets[from] : -1, b.targets[at]);
            }
        computed += (long)B * b.T;
        double loss = model_forward(&r.model, a.tokens.data(), a.targets.data(), B, a.T, NO_DROPOUT, 0, a.places());
        model_backward(&r.model, a.tokens.data(), a.targets.data(), B, a.T, NO_DROPOUT, a.places());
        std::vector<real> grads = r.model.grads;
        for (const Batch* padded : {&b, &most}) {
            const int* tokens = padded->tokens.data();
            const int* targets = padded->targets.data();
            TEST_ASSERT_DOUBLE_WITHIN(1e-12, loss, model_forward(&r.model, tokens, targets, B, padded->T, NO_DROPOUT, 0, padded->places()));
            model_backward(&r.model, tokens, targets, B, padded->T, NO_DROPOUT, padded->places());
            TEST_ASSERT_TENSOR_CLOSE(1e-12, 1e-9, grads.data(), r.model.grads.data(), grads.size(), "gradient");
        }
    }
    BatchCost cost = batch_cost(split, 7, B, 0, false, steps, {8, cap});
    TEST_ASSERT_EQUAL_INT(computed, cost.computed);
    for (const std::pair<int, int>& shape : cost.shapes) TEST_ASSERT_TRUE(shape.second % 8 == 0 || shape.second == cap);
}

// --pad-to-multiple N's rows, against a count up from T: the first multiple of N at or above
// T, but never past the cap; and never shorter than T itself, so a batch whose longest example
// is already past the cap keeps it whole rather than losing its end
static void test_rounding_takes_the_next_multiple_up_to_the_cap_and_never_cuts_a_row(void) {
    for (int multiple = 1; multiple <= 9; multiple++)
        for (int cap : {5, 12, 17, INT_MAX})
            for (int T = 1; T <= 40; T++) {
                int next = T;
                while (next % multiple != 0) next++;
                int expected = T >= cap ? T : std::min(next, cap);
                Rounding rounding = {multiple, cap};
                TEST_ASSERT_EQUAL_INT_MESSAGE(expected, rounding.length(T), format_text("T %d, multiple %d, cap %d", T, multiple, cap).c_str());
            }
}

// fill_batch lays a batch out afresh whatever the Batch held: one that was given drawn positions
// and place offsets and then packed (its starts, its counted positions, fewer rows), filled again,
// is what a fresh Batch gets, with no positions, offsets or starts left to misplace its tokens
// (training reuses one Batch step after step)
static void test_fill_batch_keeps_nothing_of_the_batch_it_refills(void) {
    Split split = training_split(100);
    BatchSampler sampler(7, split, 0);
    Batch fresh, reused;
    sampler.fill(&reused, 0, 8);
    draw_positions(&reused, 64, 7, 0);
    reused.place_offsets.assign(reused.B, 3);
    pack_batch(&reused);
    sampler.fill(&reused, 1, 8), sampler.fill(&fresh, 1, 8);
    TEST_ASSERT_EQUAL_INT(fresh.B, reused.B);
    TEST_ASSERT_EQUAL_INT(fresh.T, reused.T);
    TEST_ASSERT_MESSAGE(reused.tokens == fresh.tokens && reused.targets == fresh.targets, "tokens or targets");
    TEST_ASSERT_MESSAGE(reused.lengths == fresh.lengths && reused.prompt_lens == fresh.prompt_lens, "lengths or prompts");
    TEST_ASSERT_EQUAL_INT(fresh.real_tokens, reused.real_tokens);
    TEST_ASSERT_MESSAGE(reused.positions.empty() && reused.place_offsets.empty() && reused.starts.empty(), "the packed batch's positions, offsets or starts");
}

// --sort-pool K: the pool's examples sorted shortest first, those of one length in the stream's
// order, and cut into K batches of B, step s taking cut slots[s mod K], the pool's drawn order:
// each batch is its cut of the pool, counted here from the paper's batches of the pool
static void test_sort_pool_gives_each_step_the_cut_its_drawn_slot_names(void) {
    const int n = 200, B = 8, K = 4;
    Split split = training_split(n);
    BatchSampler plain(7, split, 0), pooled(7, split, K);
    auto shorter = [&split](int a, int b) { return split.example_len(a) < split.example_len(b); };
    for (int pool = 0; pool < 6; pool++) {
        std::vector<int> examples;  // the pool's, from the paper's batches, in the stream's order
        for (int step = pool * K; step < (pool + 1) * K; step++)
            for (int e : plain.examples(step, B)) examples.push_back(e);
        // (a pool of 32 of the split's examples holds ties of length, whose order shows)
        for (size_t i = 0; i < examples.size(); i++)
            for (size_t j = examples.size() - 1; j > i; j--)  // bubble sort: stable by its nature, not by a library's
                if (shorter(examples[j], examples[j - 1])) std::swap(examples[j], examples[j - 1]);
        for (int step = pool * K; step < (pool + 1) * K; step++) {
            std::vector<int> batch = pooled.examples(step, B);
            int slot = pooled.slots[step % K];  // (drawn by the call above, at the pool's first step)
            TEST_ASSERT_MESSAGE(batch == std::vector<int>(examples.begin() + slot * B, examples.begin() + (slot + 1) * B),
                                format_text("step %d is not cut %d of its pool", step, slot).c_str());
        }
    }
}

// --bench times the batches of steps 0, 1, ... (after the same batches once as a warm-up): 10 of them, or
// with --sort-pool K whole pools, so that a pool's short and long batches count alike; the
// tokens it reports are those batches' own, as batch_cost counts them.
static void test_bench_times_whole_pools_of_the_first_steps(void) {
    for (int pool : {0, 4, 16}) {
        RunConfig c = small_run(unity_temp_dir(), 1);
        c.bench = true, c.sort_pool = pool, c.device = "cpu";
        std::string printed;
        {
            Capture out;
            run_bench(&c);
            printed = out.text();
        }
        int steps = pool == 16 ? 16 : pool == 4 ? 12 : 10;
        TEST_ASSERT_MESSAGE(printed.find(": " + std::to_string(steps) + " steps of 8 sequences") != std::string::npos, printed.c_str());
        BatchCost cost = batch_cost(make_dataset(find_task(c.task), c.data).splits[SPLIT_TRAIN], c.seed, c.batch, pool, false, steps);
        std::string tokens = std::to_string(cost.real) + " tokens in the timed steps, " + std::to_string(cost.computed) + " computed";
        TEST_ASSERT_MESSAGE(printed.find(tokens) != std::string::npos, (tokens + " not in: " + printed).c_str());
    }
}

static void test_learning_rate_warms_up_from_zero_then_decays_to_lr_end(void) {
    OptimConfig o;
    o.steps = 1000, o.lr = 1e-3;
    TEST_ASSERT_EQUAL_FLOAT(0.0, lr_at(o, 0));             // HF: the first update has learning rate 0
    TEST_ASSERT_EQUAL_FLOAT(0.5e-3, lr_at(o, 30));         // warmup: ceil(6% of 1000) = 60 steps
    TEST_ASSERT_EQUAL_FLOAT(1e-3, lr_at(o, 60));
    TEST_ASSERT_EQUAL_FLOAT((1e-3 - 1e-7) * 0.5 + 1e-7, lr_at(o, 530));  // halfway down
    TEST_ASSERT_EQUAL_FLOAT(1e-7, lr_at(o, 1000));
    o.steps = 10;  // warmup rounds 6% of the steps up, as HF's get_warmup_steps: ceil(0.6) = 1
    TEST_ASSERT_EQUAL_FLOAT(0.0, lr_at(o, 0));
    TEST_ASSERT_EQUAL_FLOAT(1e-3, lr_at(o, 1));
    o.steps = 1005;  // ceil(60.3) = 61, where rounding to nearest would give 60
    TEST_ASSERT_EQUAL_FLOAT(1e-3 * 60 / 61, lr_at(o, 60));
}

// the run's flags reach the optimiser, and its step clips to --grad-clip and divides the loss
// by the batch's loss_tokens (--sort-pool's pool mean; 0: the batch's own count of targets)
static void test_a_training_step_follows_the_runs_optimiser_flags(void) {
    RunConfig c = small_run(unity_temp_dir(), 4);
    c.weight_decay = 0.2, c.warmup_frac = 0.1;
    OptimConfig o = optim_config(c);
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 0.2, o.weight_decay);
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 0.1, o.warmup_frac);
    double norms[3];
    for (int k = 0; k < 3; k++) {
        RunConfig run = small_run(unity_temp_dir(), 4);
        run.grad_clip = k == 2 ? 0.01 : 1.0;
        Run r(&run);
        prepare_quietly(&r);
        BatchSampler sampler(run.seed, train_split(r), 0);
        Batch batch;
        sampler.fill(&batch, 0, run.batch);
        size_t targets = 0;
        for (int t : batch.targets) targets += t >= 0;
        batch.loss_tokens = k == 1 ? 2 * targets : 0;  // twice the divisor: half the gradient
        double loss;
        TEST_ASSERT_TRUE(device_train_step(&r, batch, NO_DROPOUT, 0, &loss, &norms[k]));
        if (k == 2) TEST_ASSERT_DOUBLE_WITHIN(1e-5, 0.01, gradient_norm(r.model));  // clipped to the flag's 0.01
    }
    TEST_ASSERT_DOUBLE_WITHIN(1e-6 * norms[0], norms[0] / 2, norms[1]);
    TEST_ASSERT_TRUE(norms[2] > 0.01);
}

static void test_adamw_follows_hf_transformers_formulas(void) {
    Model m;
    model_init(&m, ModelConfig{1, 8, 2, 8, 5, 4, PE_NOPE, 0.25f, 0.0f}, 1, 3);
    OptimConfig o;
    o.steps = 10;
    std::vector<float> p0 = m.params;
    for (size_t i = 0; i < m.grads.size(); i++) m.grads[i] = (float)(0.01 * ((int)(i % 7) - 3));
    adamw_update(&m, o, 1e-2, 1);
    adamw_update(&m, o, 1e-2, 2);  // same gradient twice
    for (size_t i : {(size_t)0, (size_t)13, m.params.size() - 1}) {
        double g = m.grads[i], mm = 0, v = 0, p = p0[i];
        for (int t = 1; t <= 2; t++) {
            mm = 0.9 * mm + 0.1 * g;
            v = 0.999 * v + 0.001 * g * g;
            p -= 1e-2 * sqrt(1 - pow(0.999, t)) / (1 - pow(0.9, t)) * mm / (sqrt(v) + 1e-8);
            p -= 1e-2 * 0.05 * p;
        }
        TEST_ASSERT_DOUBLE_WITHIN(1e-6, p, m.params[i]);
    }
}

// The paper's trainer exempted parameters named "*bias*" from weight decay: T5's bias table is
// one, the norm weights are not. With a zero gradient, decay is all an update does.
// AdamW's decay spares the positional tables (T5's, the later PEs', learned APE's, Abacus's) and
// decays every other value: written here as a list, not read from PARAMS' flags
static void test_weight_decay_spares_the_positional_tables_only(void) {
    for (PEKind kind : {PE_T5, PE_FIRE, PE_APE_LEARNED})
        for (bool abacus : {false, true}) {
            ModelConfig c{2, 8, 2, 8, 5, 4, kind, 0.25f, 0.0f};
            c.abacus = abacus;
            Model m;
            model_init(&m, c, 1, 3);
            OptimConfig o;
            std::vector<float> p0 = m.params;
            std::fill(m.grads.begin(), m.grads.end(), 0.0f);
            adamw_update(&m, o, 1e-2, 1);
            int spared = 0;
            for (int id = 0; id < NUM_PARAMS; id++)
                for (int l = 0; l < (PARAMS[id].per_layer ? c.L : 1); l++)
                    for (size_t i = 0; i < param_numel(c, id); i++) {
                        size_t at = m.layout.at(id, l) + i;
                        bool positional = id == P_PE_TABLE || id == P_ABACUS;
                        spared += positional;
                        double expected = positional ? p0[at] : p0[at] * (1 - 1e-2 * o.weight_decay);
                        TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(1e-7, expected, m.params[at], PARAMS[id].name);
                    }
            TEST_ASSERT_TRUE(spared > 0 && (!abacus || param_numel(c, P_ABACUS) > 0));  // the spared tables were there
        }
}

// KERPLE's values are clamped into their range before the update, as the official code clamps
// them before each forward (pe.h): a value past its bound moves from the bound
static void test_adamw_moves_a_kerple_value_from_its_bound(void) {
    Model m;
    model_init(&m, ModelConfig{1, 8, 2, 8, 5, 4, PE_KERPLE_LOG, 0.25f, 0.0f}, 1, 3);
    const int NH = 2;
    real* table = m.param(P_PE_TABLE);
    table[0] = 0.001f, table[NH] = 0.001f;  // r1 and r2 of head 0, both below 0.01
    std::fill(m.grads.begin(), m.grads.end(), 0.0f);
    m.grads[m.layout.at(P_PE_TABLE, 0) + NH] = 1.0f;  // r2 pushed down
    OptimConfig o;
    o.steps = 10;
    adamw_update(&m, o, 1e-3, 1);
    TEST_ASSERT_EQUAL_FLOAT(0.01f, table[0]);  // no gradient: left at its bound
    // the first step moves a value by lr (times sqrt(1 - b2) / (sqrt(1 - b2) + eps)), from 0.01
    TEST_ASSERT_DOUBLE_WITHIN(1e-7, 0.01 - 1e-3, table[NH]);
}

// with --pe-per-layer, every layer's KERPLE table is clamped so, not layer 0's alone: a value
// below its bound in the last layer, with no gradient, is left at the bound
static void test_adamw_clamps_every_layers_kerple_table(void) {
    ModelConfig c{3, 8, 2, 8, 5, 4, PE_KERPLE_LOG, 0.25f, 0.0f};
    c.pe_per_layer = true;
    Model m;
    model_init(&m, c, 1, 3);
    for (int l = 0; l < c.L; l++) m.param(P_PE_TABLE, l)[0] = 0.001f;  // r1 of head 0, below 0.01
    std::fill(m.grads.begin(), m.grads.end(), 0.0f);
    OptimConfig o;
    o.steps = 10;
    adamw_update(&m, o, 1e-3, 1);
    for (int l = 0; l < c.L; l++) TEST_ASSERT_EQUAL_FLOAT(0.01f, m.param(P_PE_TABLE, l)[0]);
}

static void test_clipping_scales_the_global_norm_to_the_limit(void) {
    Model m;
    model_init(&m, ModelConfig{1, 8, 2, 8, 5, 4, PE_NOPE, 0.25f, 0.0f}, 1, 3);
    for (size_t i = 0; i < m.grads.size(); i++) m.grads[i] = (float)((i % 5) - 2.0);
    double squares = 0;
    for (float g : m.grads) squares += (double)g * g;
    double before = gradient_norm(m);
    TEST_ASSERT_DOUBLE_WITHIN(1e-12 * before, sqrt(squares), before);
    TEST_ASSERT_GREATER_THAN(2.0, before);
    clip_gradients(&m, 1.0, before);
    TEST_ASSERT_DOUBLE_WITHIN(1e-5, 1.0, gradient_norm(m));
    std::vector<float> small = m.grads;
    clip_gradients(&m, 2.0, gradient_norm(m));  // under the limit: untouched
    TEST_ASSERT_MESSAGE(small == m.grads, "a gradient under the limit was changed");
}

// ----------------------------------------------------------------------------
// checkpoints

static void test_checkpoint_round_trip_gives_identical_logits(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 4);
    c.data.bos = true;  // a saved data setting that changes the vocabulary: the reload must rebuild it
    c.layers = 2, c.pe_per_layer = true;  // and a saved model setting that changes the layout: two T5 tables
    Run a(&c);
    prepare_quietly(&a, INT_MAX);
    Batch batch;
    fill_batch(&batch, test_split(a), {0, 1, 2, 3});
    std::vector<float> before = logits_of(&a, batch);
    save_checkpoint(dir + "/copy.bin", a.model, run_header(a.model, CKPT_MODEL, &c, a.progress));

    RunConfig c2;
    Header h = read_checkpoint_header(dir + "/copy.bin");
    Run b(&c2);
    b.progress = restore_run(h, &c2);
    c2.model = header_preset(h);
    {
        Silence quiet;
        resolve_config(&c2);
        build(&b);
    }
    load_checkpoint(dir + "/copy.bin", h, &b.model);
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, before.data(), logits_of(&b, batch).data(), before.size(), "logits after loading");
    TEST_ASSERT_EQUAL_STRING(c.task, c2.task);
    TEST_ASSERT_EQUAL_STRING(c.pe, c2.pe);
    TEST_ASSERT_EQUAL_INT(c.data.train_max, c2.data.train_max);
    TEST_ASSERT_EQUAL_FLOAT(c.lr, c2.lr);
    TEST_ASSERT_EQUAL_INT(c.data.seed, c2.data.seed);
    TEST_ASSERT_TRUE(c2.data.bos);
    TEST_ASSERT_TRUE(c2.pe_per_layer);
    TEST_ASSERT_EQUAL_INT(2, param_copies(b.model.config, P_PE_TABLE));
}

// a switch, the count of skipped steps and the best step apart from the last survive a
// checkpoint, like every saved setting
static void test_skip_nonfinite_and_the_skipped_count_are_saved(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 4);
    c.skip_nonfinite = true;
    Run r(&c);
    prepare_quietly(&r);
    r.progress.skipped = 3;
    r.progress.step = 12, r.progress.best_step = 4, r.progress.best_accuracy = 0.5;  // a best step other than the last
    Header h = run_header(r.model, CKPT_TRAIN_STATE, &c, r.progress);
    RunConfig back;
    Progress p = restore_run(h, &back);
    TEST_ASSERT_TRUE(back.skip_nonfinite);
    TEST_ASSERT_EQUAL_INT(3, p.skipped);
    TEST_ASSERT_EQUAL_INT(12, p.step);
    TEST_ASSERT_EQUAL_INT(4, p.best_step);
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 0.5, p.best_accuracy);
    TEST_ASSERT_EQUAL_FLOAT(0.1f, bits_float(h[H_DROPOUT]));  // the model fields too, README's layout
    c.skip_nonfinite = false;
    restore_run(run_header(r.model, CKPT_TRAIN_STATE, &c, r.progress), &back);
    TEST_ASSERT_FALSE(back.skip_nonfinite);
}

// --keep-every survives a checkpoint; a value the command line refuses, in a checkpoint whose
// CRC-32s are right (a file edited with care), is refused when the run is rebuilt from it
static void test_keep_every_is_saved_and_a_negative_one_refused(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 4);
    c.keep_every = 2;
    Run r(&c);
    prepare_quietly(&r);
    RunConfig back;
    restore_run(run_header(r.model, CKPT_TRAIN_STATE, &c, r.progress), &back);
    TEST_ASSERT_EQUAL_INT(2, back.keep_every);
    c.keep_every = -3;
    save_checkpoint(dir + "/state.bin", r.model, run_header(r.model, CKPT_TRAIN_STATE, &c, r.progress));
    std::string d = dir;
    const char* resume[] = {"train", "--resume", d.c_str()};
    TEST_ASSERT_THROWS_WITH(run(3, (char**)resume), "--keep-every -3 is below 0");
}

static std::vector<char> file_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

static void write_bytes(const std::string& path, const std::vector<char>& bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
}

// the header field where a checkpoint keeps a saved flag's value
static int saved_field(RunConfig* c, const char* name) {
    int field = R_FLAGS;
    for (const Flag& f : flag_table(c)) {
        if (strcmp(f.name, name) == 0) return field;
        if (f.saved) field += 2;
    }
    return -1;
}

static void test_corrupt_and_truncated_checkpoints_are_refused(void) {
    TEST_ASSERT_THROWS_WITH(read_checkpoint_header("/tmp"), "/tmp is a directory, not a checkpoint file");
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 4);
    Run r(&c);
    prepare_quietly(&r);
    std::string good = dir + "/good.bin";
    save_checkpoint(good, r.model, run_header(r.model, CKPT_TRAIN_STATE, &c, r.progress));
    std::vector<char> bytes = file_bytes(good);

    std::vector<char> truncated(bytes.begin(), bytes.end() - 100);
    write_bytes(dir + "/truncated.bin", truncated);
    TEST_ASSERT_THROWS_WITH(read_checkpoint_header(dir + "/truncated.bin"), "is truncated or corrupt");
    std::vector<char> extended = bytes;  // bytes past the tensors its header announces
    extended.resize(extended.size() + 100);
    write_bytes(dir + "/extended.bin", extended);
    TEST_ASSERT_THROWS_WITH(read_checkpoint_header(dir + "/extended.bin"), "is truncated or corrupt");

    // a header announcing 2^62 + 5 parameters (its CRC made right) over 5 floats: 3 sets of them
    // times 4 bytes wraps around to 60 in 64 bits, which a size check that multiplied would pass
    Header huge(HEADER_FIELDS);
    memcpy(huge.data(), bytes.data(), HEADER_FIELDS * sizeof(int32_t));
    huge[H_NUM_PARAMS_LO] = 5, huge[H_NUM_PARAMS_HI] = 1 << 30;
    huge[H_HEADER_CRC] = (int32_t)header_crc(huge);
    std::vector<char> wrapped((const char*)huge.data(), (const char*)huge.data() + HEADER_FIELDS * sizeof(int32_t));
    wrapped.resize(wrapped.size() + 60);
    write_bytes(dir + "/wrapped.bin", wrapped);
    TEST_ASSERT_THROWS_WITH(read_checkpoint_header(dir + "/wrapped.bin"), "is truncated or corrupt");

    write_bytes(dir + "/short.bin", std::vector<char>(bytes.begin(), bytes.begin() + 100));
    TEST_ASSERT_THROWS_WITH(read_checkpoint_header(dir + "/short.bin"), "shorter than its 1024-byte header");

    std::vector<char> magic = bytes;
    magic[0] ^= 0x5a;
    write_bytes(dir + "/magic.bin", magic);
    TEST_ASSERT_THROWS_WITH(read_checkpoint_header(dir + "/magic.bin"), "is not a checkpoint");

    std::vector<char> old_version = bytes;
    old_version[4 * H_VERSION] = 1;
    write_bytes(dir + "/v1.bin", old_version);
    TEST_ASSERT_THROWS_WITH(read_checkpoint_header(dir + "/v1.bin"), "is checkpoint version 1; this build reads version 2");

    // one bit of one parameter: the size and header are right, the tensors' CRC is not
    std::vector<char> flipped = bytes;
    flipped[1024 + 4 * 100 + 2] ^= 0x10;
    write_bytes(dir + "/flipped.bin", flipped);
    Header h = read_checkpoint_header(dir + "/flipped.bin");
    TEST_ASSERT_THROWS_WITH(load_checkpoint(dir + "/flipped.bin", h, &r.model), "its tensors fail their CRC-32 check");

    // header fields edited by hand (t5 to rope; the data seed; the longest test length): each
    // would load wrong numbers with exit 0 if the header were not checked
    for (int field : {(int)H_PE, saved_field(&c, "--data-seed"), saved_field(&c, "--test-max")}) {
        std::vector<char> edited = bytes;
        edited[4 * field] ^= 1;
        write_bytes(dir + "/edited.bin", edited);
        TEST_ASSERT_THROWS_WITH(read_checkpoint_header(dir + "/edited.bin"), "its header fails its CRC-32 check");
    }

    // a NaN with both CRCs right (what a diverged run would have saved): named, tensor and element
    std::vector<char> nan = bytes;
    float not_a_number = NAN;
    size_t wq = r.model.layout.at(P_WQ, 0) + 5;
    memcpy(nan.data() + 1024 + 4 * wq, &not_a_number, 4);
    uint32_t crc = crc32_update(0, nan.data() + 1024, nan.size() - 1024);
    memcpy(nan.data() + 4 * H_PAYLOAD_CRC, &crc, 4);
    crc = crc32_update(0, nan.data(), 4 * H_HEADER_CRC);
    memcpy(nan.data() + 4 * H_HEADER_CRC, &crc, 4);
    write_bytes(dir + "/nan.bin", nan);
    h = read_checkpoint_header(dir + "/nan.bin");
    TEST_ASSERT_THROWS_WITH(load_checkpoint(dir + "/nan.bin", h, &r.model), "holds a value that is not finite: parameter wq of layer 0, element 5");

    TEST_ASSERT_THROWS_WITH(read_checkpoint_header(dir + "/missing.bin"), "can not open checkpoint");
}

// the CRC-32 of zlib, gzip and PNG: its published check value, and the same fed in pieces
static void test_crc32_is_the_standard_one(void) {
    const char* check = "123456789";
    TEST_ASSERT_EQUAL_INT(0xCBF43926u, crc32_update(0, check, 9));
    TEST_ASSERT_EQUAL_INT(0xCBF43926u, crc32_update(crc32_update(0, check, 4), check + 4, 5));
    TEST_ASSERT_EQUAL_INT(0, crc32_update(0, check, 0));
}

// README's table of the checkpoint layout is what other tools read the format from: its magic,
// version, PE numbers and the fields of the run's settings, in order, must be this build's.
// (Written by hand, it once went on listing 23 settings and 5 PEs after checkpoints held 33 and 11.)
static std::string readme_checkpoint_row(const std::string& fields, const std::string& meaning_start) {
    std::ifstream readme(repo_path("README.md"));
    const std::string row = "   | " + fields + " | " + meaning_start;
    for (std::string line; std::getline(readme, line);)
        if (line.rfind(row, 0) == 0) return line.substr(row.size());
    return "(README has no checkpoint row '" + row + "')";
}

static void test_readme_documents_this_builds_checkpoint_layout(void) {
    TEST_ASSERT_EQUAL_STRING(std::to_string(CHECKPOINT_MAGIC) + " |", readme_checkpoint_row("0", "magic "));
    TEST_ASSERT_EQUAL_STRING(std::to_string(CHECKPOINT_VERSION) + " |", readme_checkpoint_row("1", "version "));
    std::string pes;
    for (int p = 0; p < NUM_PES; p++) pes += (p ? ", " : "") + std::to_string(p) + " " + PE_NAMES[p];
    TEST_ASSERT_EQUAL_STRING(pes + " |", readme_checkpoint_row(std::to_string(H_PE), "PE: "));
    RunConfig c;
    std::string saved;
    int fields = 0;
    for (const Flag& f : flag_table(&c))
        if (f.saved) saved += (saved.empty() ? "`" : " ") + std::string(f.name), fields += 2;
    std::string range = std::to_string(R_FLAGS) + "-" + std::to_string(R_FLAGS + fields - 1);
    std::string settings = readme_checkpoint_row(range, "the run's settings, two fields each, in this order: ");
    TEST_ASSERT_EQUAL_STRING(saved + "`;", settings.substr(0, settings.find(';') + 1));
    TEST_ASSERT_LESS_THAN(H_HEADER_CRC, R_FLAGS + fields - 1);  // the settings end before the header's CRC-32
}

static void test_loading_into_a_different_model_is_refused(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 4);
    Run r(&c);
    prepare_quietly(&r);
    save_checkpoint(dir + "/m.bin", r.model, run_header(r.model, CKPT_MODEL, &c, r.progress));
    Header h = read_checkpoint_header(dir + "/m.bin");
    Model other;
    ModelConfig different = r.model.config;
    different.NH = 4;
    model_init(&other, different, 1, 1);
    TEST_ASSERT_THROWS_WITH(load_checkpoint(dir + "/m.bin", h, &other), "with a different heads (2) than this model's (4)");
    // the PE by name and RoPE's fraction as a number, not their header encodings
    Header edited = h;
    edited[H_PE] = PE_ROPE, edited[H_ROPE_FRAC] = float_bits(0.5f);
    TEST_ASSERT_THROWS_WITH(load_checkpoint(dir + "/m.bin", edited, &r.model), "with a different pe (rope) than this model's (" + c.pe + ")");
    edited[H_PE] = h[H_PE];
    TEST_ASSERT_THROWS_WITH(load_checkpoint(dir + "/m.bin", edited, &r.model), "with a different rope_frac (0.5) than this model's (0.25)");
}

// An interrupted run, resumed from its state.bin in a fresh Run (as a new process would),
// ends with exactly the parameters and log of a run that was never interrupted.
static void check_resume_continues_bit_exactly(int sort_pool, bool pack, int pad_multiple, const char* precision = "tf32") {
    std::string straight_dir = unity_temp_dir(), resumed_dir = unity_temp_dir();
    RunConfig straight = small_run(straight_dir, 12), interrupted = small_run(resumed_dir, 12);
    straight.sort_pool = interrupted.sort_pool = sort_pool;
    straight.pack = interrupted.pack = pack;
    straight.pad_multiple = interrupted.pad_multiple = pad_multiple;
    straight.precision = interrupted.precision = precision;
    Run a(&straight), b(&interrupted);
    prepare_quietly(&a, INT_MAX);
    prepare_quietly(&b, 10);  // killed after step 10: state.bin is from step 8, log.tsv already has 9 and 10
    RunConfig resumed;
    resumed.resume = resumed_dir;
    resumed.precision = precision;  // (a setting of where to compute: given again, as dev/sweep.sh gives it)
    Run c(&resumed);
    prepare_quietly(&c);
    TEST_ASSERT_EQUAL_INT(8, c.progress.step);
    TEST_ASSERT_EQUAL_INT(pad_multiple, resumed.pad_multiple);
    {
        Silence quiet;
        train(&c, INT_MAX);
    }
    TEST_ASSERT_MESSAGE(a.model.params == c.model.params, "parameters differ from the uninterrupted run");
    TEST_ASSERT_MESSAGE(a.model.adam_v == c.model.adam_v, "AdamW state differs from the uninterrupted run");
    std::vector<std::string> log_a, log_c;
    std::ifstream fa(straight_dir + "/log.tsv"), fc(resumed_dir + "/log.tsv");
    for (std::string line; std::getline(fa, line);) log_a.push_back(line.substr(0, line.find('\t', line.find('\t') + 1)));
    for (std::string line; std::getline(fc, line);) log_c.push_back(line.substr(0, line.find('\t', line.find('\t') + 1)));
    TEST_ASSERT_EQUAL_INT(13, log_c.size());  // header and steps 1-12, none twice
    TEST_ASSERT_MESSAGE(log_a == log_c, "step and loss columns of log.tsv differ");
}

// with the paper's batches, with --sort-pool 3 (step 8, where the run resumes, is the last of a
// pool: the resumed sampler makes the pool again), packed, padded to a multiple of 8 (--pack
// and --pad-to-multiple are saved, and restored), and in bf16
static void test_resume_continues_bit_exactly(void) {
    check_resume_continues_bit_exactly(0, false, 0);
    check_resume_continues_bit_exactly(3, false, 0);
    check_resume_continues_bit_exactly(0, true, 0);
    check_resume_continues_bit_exactly(0, false, 8);
    check_resume_continues_bit_exactly(0, false, 0, "bf16");
}

// A run killed after it saved a validation's state but before it wrote that best model.bin
// (here: the write fails, a directory standing where model.bin goes) resumes with model.bin
// written from the state, which is that best checkpoint; written first, model.bin would be a
// step the resumed run had not reached, with no state.bin at all at the first validation
static void test_a_run_killed_between_state_and_model_bin_resumes_with_its_best(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 12);
    Run r(&c);
    prepare_quietly(&r);
    TEST_ASSERT_EQUAL_INT(0, mkdir((dir + "/model.bin").c_str(), 0755) + mkdir((dir + "/model.bin/x").c_str(), 0755));
    TEST_ASSERT_THROWS_WITH(train_quietly(&r, INT_MAX), "can not write " + dir + "/model.bin");
    TEST_ASSERT_EQUAL_INT(0, rmdir((dir + "/model.bin/x").c_str()) + rmdir((dir + "/model.bin").c_str()));
    TEST_ASSERT_EQUAL_INT(4, read_checkpoint_header(dir + "/state.bin")[R_BEST_STEP]);  // the first validation's

    RunConfig resumed;
    resumed.resume = dir;
    Run b(&resumed);
    prepare_quietly(&b);
    Header best = read_checkpoint_header(dir + "/model.bin");
    TEST_ASSERT_EQUAL_INT(4, best[R_STEP]);
    Model from_state = b.model;
    load_checkpoint(dir + "/model.bin", best, &b.model);
    TEST_ASSERT_MESSAGE(from_state.params == b.model.params, "model.bin is not the state's parameters");
}

// a run is bf16 throughout or not at all: a resume that would switch is refused, either way, and
// so is one whose config.json, which says, is cut short or gone
static void test_a_resume_keeps_the_run_in_or_out_of_bf16(void) {
    for (const char* trained : {"bf16", "fp32"}) {
        RunConfig c = small_run(unity_temp_dir(), 12);
        c.precision = trained;
        Run r(&c);
        prepare_quietly(&r, 8);
        RunConfig resumed;
        resumed.resume = c.out;
        resumed.precision = std::string(trained) == "bf16" ? "tf32" : "bf16";
        Run again(&resumed);
        TEST_ASSERT_THROWS_WITH(prepare_quietly(&again), std::string(trained) == "bf16" ? "computed in bf16 (its config.json): resume it with --precision bf16"
                                                                                       : "did not compute in bf16 (its config.json)");
        std::ofstream(c.out + "/config.json") << "{\n  \"task\": \"copy\",";  // cut short
        RunConfig torn;
        torn.resume = c.out;
        torn.precision = trained;
        Run cut(&torn);
        TEST_ASSERT_THROWS_WITH(prepare_quietly(&cut), "config.json is empty or cut short: it says whether the run computed in bf16");
        TEST_ASSERT_EQUAL_INT(0, remove((c.out + "/config.json").c_str()));
        RunConfig unknown;
        unknown.resume = c.out;
        unknown.precision = trained;
        Run blind(&unknown);
        TEST_ASSERT_THROWS_WITH(prepare_quietly(&blind), "config.json (No such file or directory): it says whether the run computed in bf16");
    }
}

// ----------------------------------------------------------------------------
// failures: non-finite steps, full disks, progress in logs

// A NaN parameter makes the loss NaN: the step's update is not made (parameters and AdamW state
// bit for bit as before), the run stops naming the step and the parameter, and nonfinite.txt
// lists every tensor. With --skip-nonfinite the steps are counted and skipped, until too many
// come in a row.
static void test_a_nonfinite_step_changes_nothing_and_stops_the_run(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 40);
    Run r(&c);
    prepare_quietly(&r);
    r.model.params[r.model.layout.at(P_WQ, 0) + 5] = NAN;
    std::vector<real> params = r.model.params, adam_m = r.model.adam_m;
    Batch batch;
    fill_batch(&batch, train_split(r), {0, 1, 2, 3});
    double loss = 0, grad_norm = 0;
    TEST_ASSERT_FALSE(train_step(&r, batch, 0, &loss, &grad_norm));
    TEST_ASSERT_FALSE(std::isfinite(loss));
    TEST_ASSERT_EQUAL_INT(0, memcmp(params.data(), r.model.params.data(), params.size() * sizeof(real)));
    TEST_ASSERT_EQUAL_INT(0, memcmp(adam_m.data(), r.model.adam_m.data(), adam_m.size() * sizeof(real)));

    TEST_ASSERT_THROWS_WITH(train_quietly(&r, INT_MAX), "step 1: loss nan, gradient norm nan: not finite (first: parameter wq of layer 0, element 5;");
    std::vector<char> report = file_bytes(dir + "/nonfinite.txt");
    std::string text(report.begin(), report.end());
    TEST_ASSERT_MESSAGE(text.rfind("step 1: loss nan", 0) == 0, text.c_str());
    TEST_ASSERT_MESSAGE(text.find("\nwq                   0                 1") != std::string::npos, text.c_str());

    c.skip_nonfinite = true;
    c.eval_every = 1000;  // no validation: it would refuse to save the NaN parameter (next test)
    train_quietly(&r, 3);
    TEST_ASSERT_EQUAL_INT(3, r.progress.step);
    TEST_ASSERT_EQUAL_INT(3, r.progress.skipped);
    TEST_ASSERT_EQUAL_INT(0, memcmp(params.data(), r.model.params.data(), params.size() * sizeof(real)));
    TEST_ASSERT_THROWS_WITH(train_quietly(&r, INT_MAX), "step 24: 21 steps in a row were not finite, skipping does not help");
}

// a parameter that is not finite is never written into a checkpoint
static void test_a_nonfinite_parameter_is_never_saved(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 4);
    Run r(&c);
    prepare_quietly(&r);
    r.model.params[r.model.layout.at(P_W2, 0)] = INFINITY;
    TEST_ASSERT_THROWS_WITH(save_checkpoints(&r, 0.5), "parameter w2 of layer 0, element 0 is not finite; nothing saved, no state was saved yet");
    TEST_ASSERT_FALSE(access((dir + "/state.bin").c_str(), F_OK) == 0);
}

// resuming rewrites log.tsv without the rows after the saved step; if that write fails, the
// old log stays whole (it used to be left empty)
static void test_a_failed_log_rewrite_keeps_the_old_log(void) {
    std::string dir = unity_temp_dir();
    write_bytes(dir + "/log.tsv", std::vector<char>({'h', '\n', '1', '\n', '2', '\n'}));
    TEST_ASSERT_EQUAL_INT(0, mkdir((dir + "/log.tsv.tmp").c_str(), 0755) + mkdir((dir + "/log.tsv.tmp/x").c_str(), 0755));
    TEST_ASSERT_THROWS_WITH(open_log(dir + "/log.tsv", 1), "can not write " + dir + "/log.tsv.tmp: Is a directory");
    TEST_ASSERT_EQUAL_INT(6, file_bytes(dir + "/log.tsv").size());
    FILE* full = fopen("/dev/full", "a");
    fprintf(full, "1\t2\n");
    TEST_ASSERT_THROWS_WITH(flush_log(full, "log.tsv"), "can not write log.tsv: No space left on device");
    fclose(full);
}

// a kill mid-row leaves a last row with no newline, which a resume drops whatever it holds: cut
// inside its step number, it would read as an earlier step
static void test_a_resume_drops_a_torn_last_row_of_the_log(void) {
    std::string dir = unity_temp_dir();
    std::string rows = "step\tloss\n1\t0.5\n2\t0.4\n3\t0.3\n";
    std::ofstream(dir + "/log.tsv") << rows << "1";  // the start of row 10, say
    fclose(open_log(dir + "/log.tsv", 3));
    std::vector<char> kept = file_bytes(dir + "/log.tsv");
    TEST_ASSERT_EQUAL_STRING(rows.c_str(), std::string(kept.begin(), kept.end()).c_str());
}

// with stdout not a terminal, evaluation prints progress lines too (at the log interval)
static void test_evaluation_prints_progress_lines_in_a_log(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 4);
    Run r(&c);
    prepare_quietly(&r);
    progress_log_seconds = 0;
    std::string text;
    {
        Capture out;
        evaluate(&r, valid_split(r), "valid");
        text = out.text();
    }
    progress_log_seconds = 15;
    TEST_ASSERT_EQUAL_STRING("evaluating valid: 8 of 40 examples\nevaluating valid: 16 of 40 examples\nevaluating valid: 24 of 40 examples\n"
                             "evaluating valid: 32 of 40 examples\nevaluating valid: 40 of 40 examples\n",
                             text);
}

// model.bin is the checkpoint of the first step with the best valid accuracy in log.tsv
// a full disk shows only at the flush: the error must still name the file and the reason
static void test_a_failed_write_names_the_file_and_the_reason(void) {
    TEST_ASSERT_THROWS_WITH(write_text("/dev/full", "{}\n"), "can not write /dev/full: No space left on device");
    TEST_ASSERT_THROWS_WITH(write_text("/nonexistent/results.json", "{}\n"), "can not write /nonexistent/results.json: No such file");

    // a checkpoint whose rename fails (a non-empty directory stands where it goes): the error
    // names it, and its .tmp is gone
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 4);
    Run r(&c);
    prepare_quietly(&r);
    TEST_ASSERT_EQUAL_INT(0, mkdir((dir + "/model.bin").c_str(), 0755) + mkdir((dir + "/model.bin/x").c_str(), 0755));
    TEST_ASSERT_THROWS_WITH(save_checkpoint(dir + "/model.bin", r.model, run_header(r.model, CKPT_MODEL, &c, r.progress)),
                            "can not write " + dir + "/model.bin: ");
    TEST_ASSERT_FALSE(access((dir + "/model.bin.tmp").c_str(), F_OK) == 0);
}

static void test_model_bin_is_the_best_validation_checkpoint(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 16);
    c.eval_every = 2;
    Run r(&c);
    prepare_quietly(&r, INT_MAX);
    std::ifstream log(dir + "/log.tsv");
    double best = -1;
    int best_step = 0;
    std::string line;
    std::getline(log, line);
    while (std::getline(log, line)) {
        std::vector<std::string> fields;
        std::stringstream s(line);
        for (std::string f; std::getline(s, f, '\t');) fields.push_back(f);
        if (fields.size() == 6 && atof(fields[5].c_str()) > best) best = atof(fields[5].c_str()), best_step = atoi(fields[0].c_str());
    }
    Header h = read_checkpoint_header(dir + "/model.bin");
    TEST_ASSERT_EQUAL_INT(best_step, h[R_BEST_STEP]);
    TEST_ASSERT_EQUAL_INT(best_step, h[R_STEP]);
}

// the rule itself, on scores that move (a short run's validations may all score 0): a higher
// accuracy replaces model.bin, an equal one later does not (the paper's trainer kept the first)
static void test_model_bin_keeps_the_first_step_of_the_best_accuracy(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 16);
    Run r(&c);
    prepare_quietly(&r);
    const double accuracy[] = {0.1, 0.3, 0.3, 0.2};  // at steps 2, 4, 6, 8
    for (int k = 0; k < 4; k++) {
        r.progress.step = 2 * (k + 1);
        save_checkpoints(&r, accuracy[k]);
    }
    Header h = read_checkpoint_header(dir + "/model.bin");
    TEST_ASSERT_EQUAL_INT(4, h[R_STEP]);
    TEST_ASSERT_EQUAL_INT(4, r.progress.best_step);
    TEST_ASSERT_EQUAL_INT(8, read_checkpoint_header(dir + "/state.bin")[R_STEP]);
}

// the debug state holds what README documents; its loss is recomputed here from its own logits
static void test_dump_state_follows_the_documented_layout(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 4);
    c.dump_state = dir + "/state.dump";
    {
        Silence quiet;
        run_dump_state(&c);
    }
    std::vector<char> bytes = file_bytes(c.dump_state);
    const int32_t* h = (const int32_t*)bytes.data();
    TEST_ASSERT_EQUAL_INT(DUMP_MAGIC, h[H_MAGIC]);
    size_t P = header_num_params(Header(h, h + HEADER_FIELDS));
    int B = h[H_RUN], T = h[H_RUN + 1], V = h[H_VOCAB];
    TEST_ASSERT_EQUAL_INT(c.batch, B);
    TEST_ASSERT_EQUAL_INT(0, h[H_PAYLOAD_CRC]);  // README: no CRC
    TEST_ASSERT_EQUAL_INT(0, h[H_HEADER_CRC]);
    TEST_ASSERT_EQUAL_INT(1024 + 4 * (P + 2 * (size_t)B * T + (size_t)B * T * V + 1 + P), bytes.size());
    const int* targets = (const int*)(bytes.data() + 1024 + 4 * P + 4 * (size_t)B * T);
    const float* logits = (const float*)(targets + (size_t)B * T);
    float loss = *(const float*)(logits + (size_t)B * T * V);
    double total = 0;
    int count = 0;
    for (size_t n = 0; n < (size_t)B * T; n++) {
        if (targets[n] < 0) continue;
        const float* z = logits + n * V;
        double max = *std::max_element(z, z + V), sum = 0;
        for (int v = 0; v < V; v++) sum += exp(z[v] - max);
        total += log(sum) + max - z[targets[n]];
        count++;
    }
    TEST_ASSERT_GREATER_THAN(0, count);
    TEST_ASSERT_DOUBLE_WITHIN(1e-5 * loss, total / count, loss);
}

// a saved run keeps its settings: flags that would change them are refused, not ignored
static void test_a_saved_run_refuses_flags_that_would_change_it(void) {
    const char* resume[] = {"train", "--resume", "/tmp/x", "--lr", "1"};
    TEST_ASSERT_THROWS_WITH(run(5, (char**)resume), "--lr can not be combined with --resume");
    const char* load[] = {"train", "--load", "/tmp/x", "--task", "sum"};
    TEST_ASSERT_THROWS_WITH(run(5, (char**)load), "--task can not be combined with --load");
    const char* both[] = {"train", "--load", "/tmp/x", "--resume", "/tmp/y"};
    TEST_ASSERT_THROWS_WITH(run(5, (char**)both), "--resume and --load can not be combined");
}

// Per-token accuracy counts every target token and <eos> once, right where the argmax is the
// gold token: recounted here one example at a time, after a little training (some right, some not).
static void test_token_accuracy_counts_every_target_token_once(void) {
    RunConfig c = small_run(unity_temp_dir(), 24);
    Run r(&c);
    prepare_quietly(&r, 24);
    Graded graded;
    {
        Silence quiet;
        graded = evaluate(&r, valid_split(r), "valid");
    }
    std::map<int, Tally> recount;
    Batch batch;
    for (int i = 0; i < valid_split(r).size(); i++) {
        fill_batch(&batch, valid_split(r), {i});
        std::vector<float> logits = logits_of(&r, batch);
        for (int t = 0; t < batch.T; t++)
            if (batch.targets[t] >= 0) {
                recount[valid_split(r).length[i]].total++;
                recount[valid_split(r).length[i]].correct += argmax(&logits[(size_t)t * r.model.config.V], r.model.config.V) == batch.targets[t];
            }
    }
    int right = 0, total = 0;
    for (const auto& kv : recount) {
        TEST_ASSERT_EQUAL_INT(kv.second.total, graded.tokens.by_length[kv.first].total);
        TEST_ASSERT_EQUAL_INT(kv.second.correct, graded.tokens.by_length[kv.first].correct);
        right += kv.second.correct, total += kv.second.total;
    }
    TEST_ASSERT_EQUAL_INT(total, graded.tokens.all.total);
    TEST_ASSERT_EQUAL_INT(right, graded.tokens.all.correct);
    TEST_ASSERT_GREATER_THAN(0, right);
    TEST_ASSERT_LESS_THAN(total, right);
}

// With a scratchpad, evaluate() decides most verdicts from one teacher-forced pass and decodes
// only from where the argmax first left the gold before the scratchpad's end. Its verdicts must
// be those of decoding every example greedily from its prompt. A model that memorised its 16
// training examples gets those right and others right or wrong in part, taking every path. Then
// the same model made never to say "Thus," (its row of the tied embedding negated: no prompt
// holds the word, so only what the model says changes) leaves the gold on the training examples
// exactly where their scratchpad should end: a scratchpad that does not end there is wrong.
static void test_scratchpad_verdicts_are_those_of_decoding_every_example(void) {
    RunConfig c;
    c.task = "sum";
    c.data.scratchpad = 1;  // full
    c.data.train_max = 3, c.data.test_max = 4, c.data.train_size = 16, c.data.valid_size = 40, c.data.test_size = 40;
    c.steps = 150, c.batch = 16, c.eval_every = 150;
    c.out = unity_temp_dir();
    TEST_ASSERT_EQUAL_STRING("full", SCRATCHPAD_FORMATS[c.data.scratchpad].name);
    Run r(&c);
    prepare_quietly(&r, INT_MAX);
    int seen[2][2] = {};      // examples by [answer right][scratchpad right]
    int left_at_the_end = 0;  // examples whose output first leaves the gold where "Thus," is due
    const std::vector<const Split*> splits = {&train_split(r), &valid_split(r), &test_split(r)}, memorised = {&train_split(r)};
    for (bool never_thus : {false, true}) {
        if (never_thus) {
            real* row = r.model.param(P_WTE) + (size_t)r.data.vocab.id(SCRATCHPAD_END.back()) * r.model.config.C;
            for (int k = 0; k < r.model.config.C; k++) row[k] = -row[k];
        }
        for (const Split* split : never_thus ? memorised : splits) {
            Graded fast, slow;
            {
                Silence quiet;
                fast = evaluate(&r, *split, "split");
            }
            for (int i = 0; i < split->size(); i++) {
                std::vector<int> prompt(split->example(i), split->example(i) + split->prompt_len[i]);
                std::vector<int> output = generate_greedy(&r.model, prompt, EOS_ID);
                Words prompt_words, gold, said;
                example_words(*split, r.data.vocab, i, &prompt_words, &gold);
                for (int token : output)
                    if (token != EOS_ID) said.push_back(r.data.vocab.words[token]);
                Verdict v = grade_output(gold, said, output.back() == EOS_ID);
                slow.answers.add(split->length[i], v.answer);
                slow.scratchpads.add(split->length[i], v.scratchpad);
                if (!never_thus) seen[v.answer][v.scratchpad]++;
                size_t end = std::find(gold.begin(), gold.end(), SCRATCHPAD_END.back()) - gold.begin();
                left_at_the_end += never_thus && said.size() >= end && std::equal(gold.begin(), gold.begin() + end, said.begin()) &&
                                   (said.size() == end || said[end] != gold[end]);
            }
            for (const auto& kv : slow.answers.by_length) {
                TEST_ASSERT_EQUAL_INT(kv.second.correct, fast.answers.by_length[kv.first].correct);
                TEST_ASSERT_EQUAL_INT(kv.second.total, fast.answers.by_length[kv.first].total);
                TEST_ASSERT_EQUAL_INT(slow.scratchpads.by_length[kv.first].correct, fast.scratchpads.by_length[kv.first].correct);
            }
        }
    }
    TEST_MESSAGE(format_text("answer and scratchpad right %d, answer only %d, scratchpad only %d, neither %d; %d left the gold where \"Thus,\" was due",
                             seen[1][1], seen[1][0], seen[0][1], seen[0][0], left_at_the_end));
    TEST_ASSERT_GREATER_THAN(0, seen[1][1]);  // decided by the teacher-forced pass
    TEST_ASSERT_GREATER_THAN(0, seen[1][0]);  // decoded on, and right by another way
    TEST_ASSERT_GREATER_THAN(0, seen[0][0]);  // decoded on, and wrong
    TEST_ASSERT_GREATER_THAN(0, left_at_the_end);
}

// What the most common answer scores, recounted from each example's gold words: with a
// scratchpad only what follows its "Thus," is the answer (sum: one digit, the same for many
// examples whose steps differ), without one the whole target (parity: Yes or No, about half).
static void test_the_most_common_answer_score_counts_answers_not_scratchpads(void) {
    for (int scratchpad : {1, 0}) {
        RunConfig c = small_run(unity_temp_dir(), 1);
        c.task = scratchpad ? "sum" : "parity";
        c.data.scratchpad = scratchpad;  // 1: full
        c.data.valid_size = 400, c.data.train_max = 0, c.data.test_max = 0;  // the task's own lengths
        Run r(&c);
        {
            Silence quiet;
            build(&r);
        }
        const Split& split = valid_split(r);
        std::map<Words, int> answers, targets;
        int most_answer = 0, most_target = 0;
        for (int i = 0; i < split.size(); i++) {
            Words prompt, gold;
            example_words(split, r.data.vocab, i, &prompt, &gold);
            auto thus = std::find(gold.begin(), gold.end(), SCRATCHPAD_END.back());
            Words answer(thus == gold.end() ? gold.begin() : thus + 1, gold.end());
            most_answer = std::max(most_answer, ++answers[answer]);
            most_target = std::max(most_target, ++targets[gold]);
        }
        double score = majority_answer_accuracy(split, r.data.vocab.id(SCRATCHPAD_END.back()));
        TEST_ASSERT_DOUBLE_WITHIN(1e-12, (double)most_answer / split.size(), score);
        if (scratchpad) TEST_ASSERT_LESS_THAN(most_answer, most_target * 4);  // the whole targets would score far less
        else TEST_ASSERT_DOUBLE_WITHIN(0.1, 0.5, score);
    }
}

// the loss column of a run's log.tsv, a value per step
static std::vector<double> logged_losses(const std::string& dir) {
    std::vector<double> losses;
    std::ifstream log(dir + "/log.tsv");
    std::string line;
    std::getline(log, line);  // the header
    while (std::getline(log, line)) losses.push_back(atof(line.substr(line.find('\t') + 1).c_str()));
    return losses;
}

// a run's config.json, whole
static std::string config_text(const std::string& dir) {
    std::ifstream in(dir + "/config.json");
    std::stringstream config;
    config << in.rdbuf();
    return config.str();
}

// --precision bf16 on the CPU (every operand of the linear layers' products rounded to bf16,
// fp32 sums): 20 steps track the same run's fp32 steps to 1e-3 of the loss, and differ from
// them, so the rounding is on in forward and backward alike. Measured on this small run (1
// layer of 32, dropout 0.1): at most 3.2e-4 over nope, ape, t5, alibi and rope. The gradients
// of one step are further apart than the losses: a gradient sums products whose terms cancel,
// and the rounding of each term does not (w2's at step 1 differs from fp32's by 10% of its
// norm, 35% of its largest element, with NoPE; 1-3% of the norm by step 20), so the losses are
// what this test bounds.
static void test_bf16_products_track_fp32_training(void) {
    for (const char* pe : {"t5", "rope"}) {
        std::vector<double> losses[2];
        for (int run = 0; run < 2; run++) {
            RunConfig c = small_run(unity_temp_dir(), 20);
            c.pe = pe;
            c.precision = run == 0 ? "fp32" : "bf16";
            Run r(&c);
            prepare_quietly(&r, INT_MAX);
            losses[run] = logged_losses(c.out);
            std::string config = config_text(c.out);
            TEST_ASSERT_MESSAGE(config.find(std::string("\"precision\": \"") + c.precision + "\"") != std::string::npos, config.c_str());
        }
        TEST_ASSERT_EQUAL_INT(20, losses[0].size());
        TEST_ASSERT_EQUAL_INT(20, losses[1].size());
        TEST_ASSERT_MESSAGE(losses[0] != losses[1], pe);
        for (int step = 0; step < 20; step++) TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(1e-3 * losses[0][step], losses[0][step], losses[1][step], pe);
    }
}

// --attention fused trains the model simple attention trains: 20 steps' losses within 1e-5 of
// each other (float, the sums in another order: log.tsv's six decimals showed no difference at
// all for these three PEs when this was written), the fused model holds no probabilities, and
// config.json says which attention ran
static void test_fused_attention_trains_as_simple_attention(void) {
    for (const char* pe : {"t5", "alibi", "rope"}) {
        std::vector<double> losses[2];
        for (int run = 0; run < 2; run++) {
            RunConfig c = small_run(unity_temp_dir(), 20);
            c.pe = pe;
            c.attention = run == 0 ? ATTENTION_SIMPLE : ATTENTION_FUSED;
            Run r(&c);
            prepare_quietly(&r, INT_MAX);
            losses[run] = logged_losses(c.out);
            TEST_ASSERT_EQUAL_INT_MESSAGE(run == 0, !r.model.acts[A_ATT].empty(), pe);
            std::string config = config_text(c.out), field = std::string("\"attention\": \"") + ATTENTION_NAMES[c.attention] + "\"";
            TEST_ASSERT_MESSAGE(config.find(field) != std::string::npos, config.c_str());
        }
        TEST_ASSERT_EQUAL_INT(20, losses[0].size());
        TEST_ASSERT_EQUAL_INT(20, losses[1].size());
        for (int step = 0; step < 20; step++) TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(1e-5 * losses[0][step], losses[0][step], losses[1][step], pe);
    }
}

// A short CPU run on copy (lengths 2-8, about 5 seconds) learns: the loss falls more than tenfold
// and the best checkpoint answers at least 95% of held-out examples exactly. (Seeds 1-4 each
// reached 1.000 when this was written; before training, accuracy is 0.)
static void test_a_short_cpu_run_on_copy_learns(void) {
    RunConfig c = short_copy_run(400, 100);
    Run r(&c);
    {
        Silence quiet;
        prepare_run(&r);
        TEST_ASSERT_EQUAL_INT(0, evaluate(&r, valid_split(r), "valid").answers.all.correct);
        train(&r, INT_MAX);
    }
    std::ifstream log(c.out + "/log.tsv");
    std::string header, first, line, last;
    std::getline(log, header);
    std::getline(log, first);
    while (std::getline(log, line)) last = line;
    double first_loss = atof(first.substr(first.find('\t') + 1).c_str()), last_loss = atof(last.substr(last.find('\t') + 1).c_str());
    TEST_ASSERT_LESS_THAN(first_loss / 10, last_loss);
    TEST_ASSERT_GREATER_THAN(0.95, r.progress.best_accuracy);
}

// ----------------------------------------------------------------------------
// the training loop's bookkeeping, the report, and what a saved run keeps

// A run whose --steps is no multiple of --eval-every validates at its last step too (log.tsv's
// accuracy column, state.bin's step): the steps after the last multiple would otherwise never be
// candidates for model.bin, and a run shorter than --eval-every would end with no model.bin.
static void test_the_last_step_is_validated_whatever_eval_every_says(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 10);  // validations every 4: steps 4, 8 and the last, 10
    Run r(&c);
    prepare_quietly(&r, INT_MAX);
    std::ifstream log(dir + "/log.tsv");
    std::string line;
    std::getline(log, line);  // the header
    std::vector<int> validated;
    while (std::getline(log, line))
        if (line.back() != '\t') validated.push_back(atoi(line.c_str()));  // a row without validation ends at its tab
    TEST_ASSERT_EQUAL_INT(3, validated.size());
    TEST_ASSERT_EQUAL_INT(4, validated[0]);
    TEST_ASSERT_EQUAL_INT(8, validated[1]);
    TEST_ASSERT_EQUAL_INT(10, validated[2]);
    TEST_ASSERT_EQUAL_INT(10, read_checkpoint_header(dir + "/state.bin")[R_STEP]);

    RunConfig shorter = small_run(unity_temp_dir(), 3);  // fewer steps than --eval-every 4
    Run s(&shorter);
    prepare_quietly(&s, INT_MAX);
    TEST_ASSERT_EQUAL_INT(3, read_checkpoint_header(shorter.out + "/model.bin")[R_STEP]);
}

// log.tsv's lr column is the learning rate of the update its row made: update 0's is 0 (the
// warmup starts there), and row k holds lr_at(k - 1), not the next step's
static void test_log_tsv_gives_each_step_the_learning_rate_of_its_update(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 8);
    Run r(&c);
    prepare_quietly(&r, INT_MAX);
    std::ifstream log(dir + "/log.tsv");
    std::string line;
    std::getline(log, line);
    std::set<std::string> distinct;
    for (int step = 0; std::getline(log, line); step++) {
        std::vector<std::string> fields;
        std::stringstream s(line);
        for (std::string f; std::getline(s, f, '\t');) fields.push_back(f);
        TEST_ASSERT_EQUAL_STRING(format_text("%.6g", lr_at(optim_config(c), step)).c_str(), fields[2].c_str());
        distinct.insert(fields[2]);
    }
    TEST_ASSERT_EQUAL_STRING("0", format_text("%.6g", lr_at(optim_config(c), 0)).c_str());
    TEST_ASSERT_GREATER_THAN(4, distinct.size());  // a schedule that moves: an off-by-one shows
}

// the text of print_accuracy_table(valid, test)
static std::string accuracy_table_text(const SplitResult& valid, const SplitResult& test) {
    FILE* f = tmpfile();
    print_accuracy_table(f, valid, test);
    std::string text(ftell(f), '\0');
    rewind(f);
    size_t read = fread(&text[0], 1, text.size(), f);
    fclose(f);
    return text.substr(0, read);
}

// What report() prints and writes to results.json is each split's own: the table's columns, the
// per-token and most-common-answer lines, and results.json's tallies, scratchpads, majority
// scores, train_max and steps, each recomputed here from evaluate() and the splits. The
// checkpoint is a state.bin (the latest step, 12) whose best step came earlier, so that
// best_step and evaluated_step are told apart; a scratchpad task, so that its fields are written.
static void test_a_report_gives_each_split_and_step_its_own_numbers(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 12);
    c.task = "sum", c.data.scratchpad = 1;  // full
    c.data.train_max = 3, c.data.test_max = 5, c.data.test_size = 48;  // (a size of its own: the splits score apart)
    Run trained(&c);
    prepare_quietly(&trained, INT_MAX);
    RunConfig e;
    Run r(&e);
    {
        Silence quiet;
        load_run(&r, dir + "/state.bin");
    }
    r.dir = unity_temp_dir();
    r.progress.skipped = 2;  // as a run that skipped two steps would have saved
    TEST_ASSERT_EQUAL_INT(12, r.evaluated_step);
    TEST_ASSERT_MESSAGE(r.progress.best_step != 12, "the run's best step should come before its last");
    std::string printed;
    {
        Capture out;
        report(&r, true);
        printed = out.text();
    }
    Graded valid, test;
    {
        Silence quiet;
        valid = evaluate(&r, valid_split(r), "valid"), test = evaluate(&r, test_split(r), "test");
    }
    int thus = r.data.vocab.id(SCRATCHPAD_END.back());
    double valid_majority = majority_answer_accuracy(valid_split(r), thus), test_majority = majority_answer_accuracy(test_split(r), thus);
    // (the two splits score apart, so that one split's number in the other's place would show)
    TEST_ASSERT_MESSAGE(format_text("%.4f", valid_majority) != format_text("%.4f", test_majority), "the splits' majority scores agree");
    TEST_ASSERT_MESSAGE(format_text("%.3f", valid.tokens.all.accuracy()) != format_text("%.3f", test.tokens.all.accuracy()), "the splits' per-token accuracies agree");

    // (each table where it belongs: untrained, the answers' and the scratchpads' tallies may read alike)
    TEST_ASSERT_MESSAGE(printed.find(accuracy_table_text(valid.answers, test.answers) + "per-token accuracy") != std::string::npos, printed.c_str());
    TEST_ASSERT_MESSAGE(printed.find("them alone):\n" + accuracy_table_text(valid.scratchpads, test.scratchpads)) != std::string::npos,
                        printed.c_str());
    TEST_ASSERT_MESSAGE(printed.find(format_text("per-token accuracy (teacher-forced, <eos> included): valid %.3f, test %.3f\n",
                                                 valid.tokens.all.accuracy(), test.tokens.all.accuracy())) != std::string::npos,
                        printed.c_str());
    TEST_ASSERT_MESSAGE(printed.find(format_text("the most common answer, always given, scores: valid %.3f, test %.3f\n", valid_majority,
                                                 test_majority)) != std::string::npos,
                        printed.c_str());

    std::ifstream in(r.dir + "/results.json");
    std::string results((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string expected[] = {
        "\"steps\": 12,", "\"best_step\": " + std::to_string(r.progress.best_step) + ",", "\"evaluated_step\": 12,",
        "\"evaluated\": \"latest\",", "\"skipped_steps\": 2,", "\"train_max\": 3,",
        "\"valid\": " + json_split(valid.answers) + ",", "\"test\": " + json_split(test.answers) + ",",
        "\"valid_tokens\": " + json_split(valid.tokens) + ",", "\"test_tokens\": " + json_split(test.tokens) + ",",
        format_text("\"valid_majority_answer\": %.4f,", valid_majority), format_text("\"test_majority_answer\": %.4f,", test_majority),
        "\"valid_scratchpad\": " + json_split(valid.scratchpads) + ",", "\"test_scratchpad\": " + json_split(test.scratchpads) + "\n",
    };
    for (const std::string& field : expected) TEST_ASSERT_MESSAGE(results.find(field) != std::string::npos, (field + " not in " + results).c_str());
}

// A resumed run, and a checkpoint loaded, keep the run's model preset (in no flag's field: the
// header's name), which config.json, results.json and every later checkpoint name; and a resumed
// run knows the state it started from, which a later failure's message names.
static void test_a_resume_and_a_load_keep_the_runs_preset_and_state(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 12);
    c.model = "small";  // (its sizes, steps and rates given: as small and quick as small_run's)
    Run r(&c);
    prepare_quietly(&r, 8);
    RunConfig resumed;
    resumed.resume = dir;
    Run b(&resumed);
    prepare_quietly(&b);
    TEST_ASSERT_EQUAL_STRING("small", resumed.model.c_str());
    TEST_ASSERT_MESSAGE(config_text(dir).find("\"model\": \"small\",") != std::string::npos, config_text(dir).c_str());
    TEST_ASSERT_EQUAL_STRING(("its last state, " + dir + "/state.bin, is from step 8").c_str(), last_state(b).c_str());
    RunConfig loaded;
    Run l(&loaded);
    {
        Silence quiet;
        load_run(&l, dir + "/model.bin");
    }
    TEST_ASSERT_EQUAL_STRING("small", loaded.model.c_str());
}

// How a run validated (--rope-scaling, --eval-positions) is kept by its checkpoints, and a resume
// restores it; --load evaluates as it is told, by default unscaled and at positions 0..n-1,
// whatever the run validated with.
static void test_load_evaluates_unscaled_and_counted_unless_told_otherwise(void) {
    std::string dir = unity_temp_dir();
    RunConfig c = small_run(dir, 4);
    c.pe = "rope", c.random_positions = 64, c.rope_scaling = ROPE_PI, c.eval_positions = EVAL_DRAWN;
    Run r(&c);
    prepare_quietly(&r, INT_MAX);
    RunConfig back;
    restore_run(read_checkpoint_header(dir + "/state.bin"), &back);
    TEST_ASSERT_EQUAL_INT(ROPE_PI, back.rope_scaling);
    TEST_ASSERT_EQUAL_INT(EVAL_DRAWN, back.eval_positions);
    for (const char* file : {"/model.bin", "/state.bin"}) {
        RunConfig loaded;
        Run l(&loaded);
        {
            Silence quiet;
            load_run(&l, dir + file);
        }
        TEST_ASSERT_EQUAL_INT_MESSAGE(ROPE_UNSCALED, loaded.rope_scaling, file);
        TEST_ASSERT_EQUAL_INT_MESSAGE(EVAL_COUNTED, loaded.eval_positions, file);
        TEST_ASSERT_EQUAL_INT_MESSAGE(64, loaded.random_positions, file);  // the model's own setting is the run's
    }
}

// the run directory a run gets without --out: runs/TASK-PE-MODEL-sSEED (README's, dev/ tools')
static void test_the_default_run_directory_is_named_by_task_pe_model_and_seed(void) {
    RunConfig c;
    TEST_ASSERT_EQUAL_STRING("runs/copy-nope-tiny-s256788", run_dir(c).c_str());
    c.task = "scan", c.pe = "rope", c.model = "small", c.seed = 7, c.data.seed = 9;
    TEST_ASSERT_EQUAL_STRING("runs/scan-rope-small-s7", run_dir(c).c_str());
    c.out = "elsewhere";
    TEST_ASSERT_EQUAL_STRING("elsewhere", run_dir(c).c_str());
}

// the flags' own values, read as ./train reads them (parse_flags, find_mode, resolve_config)
static RunConfig config_of(std::vector<const char*> args) {
    args.insert(args.begin(), "train");
    RunConfig c;
    std::set<std::string> given = parse_flags((int)args.size(), (char**)args.data(), &c);
    find_mode(given, &c);
    resolve_config(&c);
    return c;
}

// Every bound a range's message states is itself accepted ("[0, 1024]" takes 1024), and a
// decimal may start with its point; so is a --keep-every of the run's last step, which keeps one
// snapshot, and a --show of every example the split has.
static void test_each_range_accepts_the_bounds_it_states(void) {
    TEST_ASSERT_EQUAL_INT(1024, config_of({"--threads", "1024"}).threads);
    TEST_ASSERT_EQUAL_INT(10, config_of({"--steps", "10", "--keep-every", "10"}).keep_every);
    TEST_ASSERT_EQUAL_FLOAT(1.0, config_of({"--warmup-frac", "1"}).warmup_frac);
    TEST_ASSERT_EQUAL_FLOAT(1.0, config_of({"--weight-decay", "1"}).weight_decay);
    TEST_ASSERT_EQUAL_FLOAT(0.001, config_of({"--lr", ".001"}).lr);
    TEST_ASSERT_EQUAL_INT(INT_MAX, config_of({"--sample", "2147483647"}).sample);  // decodes every example
    TEST_ASSERT_EQUAL_INT(LLONG_MAX, config_of({"--seed", "9223372036854775807"}).seed);
    std::string shown;
    {
        Capture out;
        const char* show[] = {"train", "--task", "copy", "--show", "6", "--split", "test", "--test-size", "6"};
        run(9, (char**)show);
        shown = out.text();
    }
    TEST_ASSERT_EQUAL_INT(6, std::count(shown.begin(), shown.end(), '\n'));
}

// --stats: the examples of every length up to the longest test one, and sort pools of 16
// batches unless --sort-pool says; the data line of a run (here --check's) adds how many test
// lengths have examples only where some have none
static void test_stats_and_the_data_line_show_every_length(void) {
    std::string text;
    {
        Capture out;
        const char* stats[] = {"train", "--task", "copy", "--stats", "--train-size", "400", "--valid-size", "40", "--test-size", "40",
                               "--train-max", "6", "--test-max", "9"};
        run(14, (char**)stats);
        text = out.text();
    }
    TEST_ASSERT_MESSAGE(text.find("pools of 16):") != std::string::npos, text.c_str());
    std::string rows = text.substr(text.find("examples per length:"));
    TEST_ASSERT_MESSAGE(rows.find("\n     9       0       0      ") != std::string::npos, rows.c_str());  // the longest test length
    TEST_ASSERT_MESSAGE(rows.find("\n    10 ") == std::string::npos, rows.c_str());
    for (int test_size : {40, 2}) {
        std::string line;
        {
            Capture out;
            std::string size = std::to_string(test_size), dir = unity_temp_dir() + "/run";
            const char* check[] = {"train", "--task", "copy", "--train-size", "400", "--valid-size", "40", "--test-size", size.c_str(),
                                   "--train-max", "6", "--test-max", "9", "--check", "--out", dir.c_str()};
            run(16, (char**)check);
            line = out.text();
        }
        // test lengths 7-9: 40 examples hold all three, 2 examples two of them
        const char* expected = test_size == 40 ? "(lengths 2-6, test 7-9), " : "(lengths 2-6, test 7-9, 2 of them with examples), ";
        TEST_ASSERT_MESSAGE(line.find(expected) != std::string::npos, line.c_str());
    }
}

// A saved run keeps its settings. With --resume every setting its checkpoint keeps, and the
// flags that make its model (--task, --pe, --model), is refused with the reason, not taken and
// then overwritten by the checkpoint's; with --load the same, but for the test's lengths and
// size and how it is evaluated, which --load takes in place of the run's own.
static void test_a_saved_run_refuses_every_setting_it_keeps(void) {
    RunConfig c;
    const std::vector<Flag> flags = flag_table(&c);
    const std::set<std::string> load_takes = {"--test-max", "--test-size", "--rope-scaling", "--eval-positions"};
    std::vector<const Flag*> settings;
    for (const Flag& f : flags)
        if (f.saved || !strcmp(f.name, "--task") || !strcmp(f.name, "--pe") || !strcmp(f.name, "--model")) settings.push_back(&f);
    TEST_ASSERT_GREATER_THAN(30, settings.size());
    for (const std::string mode : {"--resume", "--load"})
        for (const Flag* f : settings) {
            if (mode == "--load" && load_takes.count(f->name)) continue;
            std::vector<std::string> args = {"train", mode, "/tmp/x", f->name};
            if (f->type == FLAG_CHOICE) args.push_back(f->choices.back());
            else if (f->type == FLAG_STRING) args.push_back("copy");
            else if (f->type != FLAG_SWITCH) args.push_back("1");
            std::vector<char*> argv;
            for (std::string& a : args) argv.push_back(&a[0]);
            TEST_ASSERT_THROWS_WITH(run((int)argv.size(), argv.data()),
                                    std::string(f->name) + " can not be combined with " + mode + ": a saved run keeps its own settings");
        }
}

// Every default that --help states ("(default 64, the paper's)") is the value the flag has when
// it is not given: the help's text and RunConfig's initial values can not change apart.
static void test_the_help_states_each_flags_own_default(void) {
    RunConfig c;
    int checked = 0;
    for (const Flag& f : flag_table(&c)) {
        const char* at = strstr(f.help, "(default ");
        if (!at || !isdigit((unsigned char)at[9])) continue;  // "(default: the preset's)", "(default, or 0: all cores)"
        double stated = atof(at + 9);
        double value = f.type == FLAG_INT ? *(int*)f.value : f.type == FLAG_U64 ? (double)*(uint64_t*)f.value : *(double*)f.value;
        TEST_ASSERT_MESSAGE(f.type == FLAG_INT || f.type == FLAG_U64 || f.type == FLAG_FLOAT, f.name);
        TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(0, stated, value, f.name);
        checked++;
    }
    TEST_ASSERT_GREATER_THAN(10, checked);  // batch, seeds, split sizes, rope-frac, the optimiser's
}

// README's table of the model presets gives each one's sizes and training defaults: this build's
// (PRESETS, TRAINING_DEFAULTS), as --help prints them from the same tables
static void test_readme_documents_each_presets_sizes_and_training_defaults(void) {
    for (const TrainingDefaults& d : TRAINING_DEFAULTS) {
        const Preset* p = nullptr;
        for (const Preset& preset : PRESETS)
            if (!strcmp(preset.name, d.model)) p = &preset;
        TEST_ASSERT_MESSAGE(p, d.model);
        std::ifstream readme(repo_path("README.md"));
        std::string row, start = std::string("| `") + d.model + "` |";
        for (std::string line; std::getline(readme, line);)
            if (line.rfind(start, 0) == 0) row = line;
        TEST_ASSERT_MESSAGE(!row.empty(), ("README has no row " + start).c_str());
        std::string plain;  // "10,000" as 10000
        for (size_t i = 0; i < row.size(); i++)
            if (!(row[i] == ',' && i + 1 < row.size() && isdigit((unsigned char)row[i + 1]))) plain += row[i];
        int L = 0, C = 0, NH = 0, F = 0, steps = 0, every = 0;
        double lr = 0;
        char dropout[32] = "";
        int read = sscanf(plain.c_str() + start.size(), " %d | %d | %d | %d | %d steps, lr %lf, %31[^,], validation every %d", &L, &C, &NH, &F,
                          &steps, &lr, dropout, &every);
        TEST_ASSERT_EQUAL_INT_MESSAGE(8, read, row.c_str());
        TEST_ASSERT_EQUAL_INT_MESSAGE(p->L, L, d.model);
        TEST_ASSERT_EQUAL_INT_MESSAGE(p->C, C, d.model);
        TEST_ASSERT_EQUAL_INT_MESSAGE(p->NH, NH, d.model);
        TEST_ASSERT_EQUAL_INT_MESSAGE(p->F, F, d.model);
        TEST_ASSERT_EQUAL_INT_MESSAGE(d.steps, steps, d.model);
        TEST_ASSERT_EQUAL_INT_MESSAGE(d.eval_every, every, d.model);
        TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(1e-12, d.lr, lr, d.model);
        std::string stated = dropout, expected = d.dropout > 0 ? format_text("dropout %g", d.dropout) : "no dropout";
        TEST_ASSERT_EQUAL_STRING_MESSAGE(expected, stated, d.model);
    }
}

// Validation scores the valid split (the training lengths), as the paper chose its checkpoints:
// each validation's accuracy in log.tsv, and the best of them, is evaluate()'s on valid at that
// step, recomputed here between pieces of the run. Part-way through learning copy, the model
// scores the longer test lengths otherwise, so scoring the wrong split would show.
static void test_validation_scores_the_valid_split(void) {
    RunConfig c = short_copy_run(200, 50);
    Run r(&c);
    prepare_quietly(&r);
    bool told_apart = false;
    double best = -1;
    for (int step = 50; step <= c.steps; step += 50) {
        train_quietly(&r, step);
        double valid = 0, test = 0;
        {
            Silence quiet;
            valid = evaluate(&r, valid_split(r), "valid").answers.all.accuracy();
            test = evaluate(&r, test_split(r), "test").answers.all.accuracy();
        }
        told_apart |= format_text("%.6f", valid) != format_text("%.6f", test);
        best = std::max(best, valid);
        std::ifstream log(c.out + "/log.tsv");
        std::string line, last;
        while (std::getline(log, line)) last = line;
        TEST_ASSERT_EQUAL_INT(step, atoi(last.c_str()));
        TEST_ASSERT_EQUAL_STRING(format_text("%.6f", valid), last.substr(last.rfind('\t') + 1));
    }
    TEST_ASSERT_MESSAGE(told_apart, "valid and test scored alike at every validation: this run can not tell them apart");
    TEST_ASSERT_DOUBLE_WITHIN(0, best, r.progress.best_accuracy);
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_batches_put_targets_on_the_answer_and_eos_only);
    RUN_TEST(test_batch_order_visits_every_example_once_per_epoch_and_depends_only_on_the_step);
    RUN_TEST(test_sort_pool_sorts_the_papers_batches_by_length_within_each_pool);
    RUN_TEST(test_drawn_positions_are_uniform_over_the_sorted_sets_below_L);
    RUN_TEST(test_evaluation_draws_each_example_its_own_positions);
    RUN_TEST(test_epochs_and_pools_are_drawn_afresh_and_uniformly);
    RUN_TEST(test_pack_batch_lays_the_sequences_end_to_end_in_fewer_rows);
    RUN_TEST(test_pack_fills_rows_longest_first_and_batch_cost_counts_its_shapes);
    RUN_TEST(test_place_offsets_reach_the_last_position_and_every_abacus_offset);
    RUN_TEST(test_batch_cost_counts_what_the_steps_compute);
    RUN_TEST(test_pad_to_multiple_rounds_the_rows_and_computes_what_the_batch_did);
    RUN_TEST(test_rounding_takes_the_next_multiple_up_to_the_cap_and_never_cuts_a_row);
    RUN_TEST(test_fill_batch_keeps_nothing_of_the_batch_it_refills);
    RUN_TEST(test_sort_pool_gives_each_step_the_cut_its_drawn_slot_names);
    RUN_TEST(test_bench_times_whole_pools_of_the_first_steps);
    RUN_TEST(test_learning_rate_warms_up_from_zero_then_decays_to_lr_end);
    RUN_TEST(test_a_training_step_follows_the_runs_optimiser_flags);
    RUN_TEST(test_adamw_follows_hf_transformers_formulas);
    RUN_TEST(test_weight_decay_spares_the_positional_tables_only);
    RUN_TEST(test_adamw_moves_a_kerple_value_from_its_bound);
    RUN_TEST(test_adamw_clamps_every_layers_kerple_table);
    RUN_TEST(test_clipping_scales_the_global_norm_to_the_limit);
    RUN_TEST(test_checkpoint_round_trip_gives_identical_logits);
    RUN_TEST(test_crc32_is_the_standard_one);
    RUN_TEST(test_readme_documents_this_builds_checkpoint_layout);
    RUN_TEST(test_corrupt_and_truncated_checkpoints_are_refused);
    RUN_TEST(test_skip_nonfinite_and_the_skipped_count_are_saved);
    RUN_TEST(test_keep_every_is_saved_and_a_negative_one_refused);
    RUN_TEST(test_a_failed_write_names_the_file_and_the_reason);
    RUN_TEST(test_loading_into_a_different_model_is_refused);
    RUN_TEST(test_resume_continues_bit_exactly);
    RUN_TEST(test_a_run_killed_between_state_and_model_bin_resumes_with_its_best);
    RUN_TEST(test_a_resume_keeps_the_run_in_or_out_of_bf16);
    RUN_TEST(test_a_nonfinite_step_changes_nothing_and_stops_the_run);
    RUN_TEST(test_a_nonfinite_parameter_is_never_saved);
    RUN_TEST(test_a_failed_log_rewrite_keeps_the_old_log);
    RUN_TEST(test_a_resume_drops_a_torn_last_row_of_the_log);
    RUN_TEST(test_evaluation_prints_progress_lines_in_a_log);
    RUN_TEST(test_model_bin_is_the_best_validation_checkpoint);
    RUN_TEST(test_model_bin_keeps_the_first_step_of_the_best_accuracy);
    RUN_TEST(test_dump_state_follows_the_documented_layout);
    RUN_TEST(test_a_saved_run_refuses_flags_that_would_change_it);
    RUN_TEST(test_token_accuracy_counts_every_target_token_once);
    RUN_TEST(test_scratchpad_verdicts_are_those_of_decoding_every_example);
    RUN_TEST(test_the_most_common_answer_score_counts_answers_not_scratchpads);
    RUN_TEST(test_bf16_products_track_fp32_training);
    RUN_TEST(test_fused_attention_trains_as_simple_attention);
    RUN_TEST(test_a_short_cpu_run_on_copy_learns);
    RUN_TEST(test_the_last_step_is_validated_whatever_eval_every_says);
    RUN_TEST(test_log_tsv_gives_each_step_the_learning_rate_of_its_update);
    RUN_TEST(test_a_report_gives_each_split_and_step_its_own_numbers);
    RUN_TEST(test_a_resume_and_a_load_keep_the_runs_preset_and_state);
    RUN_TEST(test_load_evaluates_unscaled_and_counted_unless_told_otherwise);
    RUN_TEST(test_the_default_run_directory_is_named_by_task_pe_model_and_seed);
    RUN_TEST(test_each_range_accepts_the_bounds_it_states);
    RUN_TEST(test_stats_and_the_data_line_show_every_length);
    RUN_TEST(test_a_saved_run_refuses_every_setting_it_keeps);
    RUN_TEST(test_the_help_states_each_flags_own_default);
    RUN_TEST(test_readme_documents_each_presets_sizes_and_training_defaults);
    RUN_TEST(test_validation_scores_the_valid_split);
    return UNITY_END();
}
