/*
 batches.h: what the model sees at each training step. The examples of step s come from the
 paper's random sampler (an epoch's permutation, read in order) or from --sort-pool's pools of
 similar lengths; fill_batch lays them out right-padded (to a multiple of N tokens with
 --pad-to-multiple N), with the answer tokens as targets;
 draw_positions and draw_place_offsets add what --random-positions, --abacus and
 --position-coupling draw for them; pack_batch (--pack) lays them end to end in fewer rows.
 Evaluation fills its batches here too, and draw_eval_positions draws their positions where
 --eval-positions asks for it. batch_cost counts what a run's batches make its steps compute
 (--stats).

 Invariants worth knowing:
   - everything here is a function of (seed, step) alone, so a resumed run sees the batches,
     positions and offsets the uninterrupted run would have seen; evaluation's positions are
     a function of (seed, split, example), so an evaluation repeats whatever its batches
   - targets[b,t] is -1 except where the next token is part of the answer (target words and
     <eos>), so the loss sees only answers
   - packing and padding to a multiple change where a sequence lies in the batch, never what the
     model computes for it, dropout aside: its masks are drawn by a tensor element's index, so
     with dropout on they differ
*/
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "common.h"
#include "model.h"
#include "pe.h"
#include "tasks.h"


// B examples right-padded to the longest: targets[b,t] is the next token where that token is
// part of the answer (target words and <eos>), else -1, so the loss sees only answers.
// pack_batch then lays them end to end in fewer rows.
struct Batch {
    int B = 0, T = 0;
    std::vector<int> tokens, targets;  // (B, T)
    std::vector<int> lengths;          // (B) each row's tokens before its padding
    std::vector<int> positions;        // (B, T) drawn by draw_positions, or counted by pack_batch; empty: 0 .. T-1
    std::vector<int> place_offsets;    // (B) drawn by draw_place_offsets; empty: 0
    std::vector<int> starts;           // (B, T) where each token's sequence starts in its row (pack_batch); empty: 0
    std::vector<int> prompt_lens;      // (B) each row's prompt (tokens before its target), from fill_batch
    long real_tokens = 0;              // tokens that are not padding
    size_t loss_tokens = 0;            // what the summed loss is divided by (model_backward); 0: its targets

    TokenPlaces places() const {
        auto given = [](const std::vector<int>& v) { return v.empty() ? nullptr : v.data(); };
        return {given(positions), given(place_offsets), given(starts), given(prompt_lens)};
    }
};

// --pad-to-multiple N: a training batch's rows padded to a multiple of N tokens, so that its
// steps take few shapes (a captured CUDA graph is made for one shape) and a kernel's tiles divide
// the rows; never past `cap`, the longest sequence the model is built for (its PE tables and
// buffers). The real tokens, and what the model computes for them, are those of the shorter
// batch (dropout's masks aside, drawn by element index): a causal model's real tokens never read
// the padding after them.
struct Rounding {
    int multiple = 1, cap = INT_MAX;

    int length(int T) const { return std::max(T, std::min(cap, (T + multiple - 1) / multiple * multiple)); }
};

static void fill_batch(Batch* batch, const Split& split, const std::vector<int>& examples, Rounding rounding = {}) {
    batch->B = (int)examples.size();
    batch->T = 0;
    for (int e : examples) batch->T = std::max(batch->T, split.example_len(e));
    batch->T = rounding.length(batch->T);
    batch->tokens.assign((size_t)batch->B * batch->T, PAD_ID);
    batch->targets.assign((size_t)batch->B * batch->T, -1);
    batch->lengths.clear();
    batch->prompt_lens.clear();
    batch->positions.clear();
    batch->place_offsets.clear();
    batch->starts.clear();
    batch->real_tokens = 0;
    for (int b = 0; b < batch->B; b++) {
        int e = examples[b], len = split.example_len(e);
        int* tokens = batch->tokens.data() + (size_t)b * batch->T;
        std::copy(split.example(e), split.example(e) + len, tokens);
        for (int t = split.prompt_len[e] - 1; t < len - 1; t++) batch->targets[(size_t)b * batch->T + t] = tokens[t + 1];
        batch->real_tokens += len;
        batch->lengths.push_back(len);
        batch->prompt_lens.push_back(split.prompt_len[e]);
    }
}

// --random-positions L: a sequence's n positions, n distinct values of 0 .. L-1 in increasing
// order, uniformly over all such sets (Ruoss et al. 2023), into row b of the batch. Selection
// sampling draws them in one pass: position p is taken with probability (still needed) / (still
// available).
static void draw_row_positions(Batch* batch, int b, int L, Rng rng) {
    int* pos = batch->positions.data() + (size_t)b * batch->T;
    int n = batch->lengths[b], taken = 0;
    for (int p = 0; p < L && taken < n; p++)
        if (rng.below(L - p) < n - taken) pos[taken++] = p;
    for (int t = n; t < batch->T; t++) pos[t] = pos[n - 1];  // padding: any position in range will do
}

// Training's draw: a function of (seed, step) alone, like the batches, so a resumed run draws the same.
static void draw_positions(Batch* batch, int L, uint64_t seed, int step) {
    batch->positions.assign((size_t)batch->B * batch->T, 0);
    for (int b = 0; b < batch->B; b++) draw_row_positions(batch, b, L, rng_stream(seed, hash_string("positions"), step, b));
}

// --eval-positions drawn: evaluation draws too, as Ruoss et al.'s code evaluates, so that the
// model meets the spacing of positions it was trained on (0 .. n-1 is a draw training all but
// never makes). A function of (seed, split, example) alone: the batch size and the order of the
// examples change no example's positions.
static void draw_eval_positions(Batch* batch, int L, uint64_t seed, const char* split, const std::vector<int>& examples) {
    batch->positions.assign((size_t)batch->B * batch->T, 0);
    for (int b = 0; b < batch->B; b++)
        draw_row_positions(batch, b, L, rng_stream(seed, hash_string("evaluation positions"), hash_string(split), examples[b]));
}

// --abacus and --position-coupling: each training sequence's shift of its digits' places (pe.h),
// uniform in 0 .. ABACUS_MAX_OFFSET-1 for Abacus; for coupling, among the starts that keep the
// sequence's positions below max_pos. Like the positions, a function of (seed, step) alone.
static void draw_place_offsets(Batch* batch, const Model& m, uint64_t seed, int step) {
    batch->place_offsets.resize(batch->B);
    for (int b = 0; b < batch->B; b++) {
        Rng rng = rng_stream(seed, hash_string(m.config.position_coupling ? "coupling" : "abacus"), step, b);
        if (!m.config.position_coupling) {
            batch->place_offsets[b] = (int)rng.below(ABACUS_MAX_OFFSET);
            continue;
        }
        int largest = 0;
        for (int t = 0; t < batch->lengths[b]; t++)
            largest = std::max(largest, digit_place(batch->tokens.data() + (size_t)b * batch->T, m.is_digit.data(), t));
        batch->place_offsets[b] = (int)rng.below(m.config.max_pos() - largest);
    }
}

// --pack: the batch's sequences laid end to end in rows of its T tokens, longest first, each in
// the first row with room for it (first fit decreasing), so that padding fills only the rows'
// ends and few of them. Which row a sequence lands in changes nothing it computes. Each
// sequence attends only within itself (starts) and counts its positions from its own start (or
// keeps those draw_positions drew), so the model computes on the packed rows what it computes on
// the padded batch: the same loss and gradient, up to the rounding of sums taken in another
// order (with dropout off; with it on, its masks, drawn by element index, differ). A row's padding starts a sequence of its own, which nothing reads.
static void pack_batch(Batch* batch) {
    int T = batch->T;
    std::vector<int> order(batch->B);  // longest first: first fit then leaves the short ones for the gaps
    for (int b = 0; b < batch->B; b++) order[b] = b;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return batch->lengths[a] > batch->lengths[b]; });
    std::vector<int> row_of(batch->B), offset(batch->B), used;  // used: each row's tokens so far
    for (int b : order) {
        int len = batch->lengths[b], row = 0;
        while (row < (int)used.size() && used[row] + len > T) row++;
        if (row == (int)used.size()) used.push_back(0);
        row_of[b] = row, offset[b] = used[row], used[row] += len;
    }
    size_t n = used.size() * (size_t)T;
    std::vector<int> tokens(n, PAD_ID), targets(n, -1), positions(n), starts(n);
    for (size_t row = 0; row < used.size(); row++)
        for (int t = 0; t < T; t++) starts[row * T + t] = used[row], positions[row * T + t] = t - used[row];  // the padding's
    for (int b = 0; b < batch->B; b++)
        for (int t = 0; t < batch->lengths[b]; t++) {
            size_t from = (size_t)b * T + t, to = (size_t)row_of[b] * T + offset[b] + t;
            tokens[to] = batch->tokens[from], targets[to] = batch->targets[from];
            positions[to] = batch->positions.empty() ? t : batch->positions[from];
            starts[to] = offset[b];
        }
    batch->B = (int)used.size();
    batch->tokens.swap(tokens), batch->targets.swap(targets), batch->positions.swap(positions), batch->starts.swap(starts);
    batch->lengths = used;
    batch->prompt_lens.clear();  // (a row holds several prompts: a prompt window is for evaluation's rows alone)
}

// 0 .. n-1 in the order a Fisher-Yates shuffle with `rng` draws
static std::vector<int> drawn_permutation(int n, Rng rng) {
    std::vector<int> order(n);
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) std::swap(order[i], order[rng.below(i + 1)]);
    return order;
}

// The examples of training batch `step`: epochs over the training split, each a permutation
// drawn from (seed, epoch) and read in order (the paper's random sampler). With --sort-pool K
// the stream is read K batches at a time: those K B examples are sorted by length, cut into K
// batches of similar lengths, and the K taken in an order drawn from (seed, pool). Every example
// is still read once per epoch, within K batches of where the paper's sampler reads it; what
// changes is which examples share a batch, so that a batch's padding shrinks. And since a
// batch's loss is a mean over its target tokens, which would weigh a token of a batch of short
// examples more than one of long ones, a pool's batches divide their summed loss by the pool's
// mean count of targets per batch instead (loss_tokens): every token weighs what it would in
// the paper's mixed batches. A function of (seed, step) alone, so a resumed run sees the
// batches the uninterrupted run would have.
struct BatchSampler {
    uint64_t seed;
    const Split& split;
    int pool;                 // batches sorted together; 1: the paper's batches
    long epoch = -1;
    std::vector<int> order;   // epoch's permutation
    long pooled = -1;         // the pool in `sorted`
    std::vector<int> sorted;  // its K B examples, shortest first
    std::vector<int> slots;   // which K-th of `sorted` each of its batches takes
    size_t pool_loss_tokens = 0;  // its targets / K, rounded
    Rounding rounding;            // of each batch's T

    BatchSampler(uint64_t s, const Split& training, int sort_pool, Rounding r = {})
        : seed(s), split(training), pool(std::max(1, sort_pool)), rounding(r) {}
    // it keeps a reference to the split: a temporary one would be gone before the first batch
    BatchSampler(uint64_t s, Split&& training, int sort_pool, Rounding r = {}) = delete;

    // the k-th example of the paper's stream
    int stream(long k) {
        int n = split.size();
        if (k / n != epoch) {
            epoch = k / n;
            order = drawn_permutation(n, rng_stream(seed, hash_string("batches"), epoch));
        }
        return order[k % n];
    }

    std::vector<int> examples(long step, int B) {
        if (pool == 1) {
            std::vector<int> out;
            for (long k = step * B; k < (step + 1) * B; k++) out.push_back(stream(k));
            return out;
        }
        if (step / pool != pooled) {
            pooled = step / pool;
            sorted.clear();
            for (long k = pooled * pool * B; k < (pooled + 1) * pool * B; k++) sorted.push_back(stream(k));
            // stable: examples of one length keep the stream's order, so which share a batch is a
            // function of (seed, step) under any C++ library (std::sort orders ties its own way)
            std::stable_sort(sorted.begin(), sorted.end(), [&](int a, int b) { return split.example_len(a) < split.example_len(b); });
            size_t targets = 0;
            for (int e : sorted) targets += split.example_len(e) - split.prompt_len[e];  // fill_batch's targets
            pool_loss_tokens = (targets + pool / 2) / pool;
            slots = drawn_permutation(pool, rng_stream(seed, hash_string("pools"), pooled));
        }
        auto first = sorted.begin() + (size_t)slots[step % pool] * B;
        return std::vector<int>(first, first + B);
    }

    // the batch of `step`, with its loss's divisor
    void fill(Batch* batch, long step, int B) {
        fill_batch(batch, split, examples(step, B), rounding);
        batch->loss_tokens = pool == 1 ? 0 : pool_loss_tokens;
    }
};

// What the batches of a run's first `steps` steps make a step compute (--stats): the examples'
// own tokens, the tokens computed (rows x T: padding included), and the distinct shapes
// (rows, T) its steps take, each of which a captured CUDA graph would need a graph of its own.
struct BatchCost {
    long steps = 0, rows = 0;
    long real = 0, computed = 0;
    std::set<std::pair<int, int>> shapes;  // (rows, T)

    double padding() const { return computed ? 1 - (double)real / computed : 0; }
};

static BatchCost batch_cost(const Split& split, uint64_t seed, int B, int sort_pool, bool pack, long steps, Rounding rounding = {}) {
    BatchSampler sampler(seed, split, sort_pool, rounding);
    BatchCost cost;
    Batch batch;
    for (long step = 0; step < steps; step++) {
        sampler.fill(&batch, step, B);
        if (pack) pack_batch(&batch);
        cost.steps++, cost.rows += batch.B;
        cost.real += batch.real_tokens, cost.computed += (long)batch.B * batch.T;
        cost.shapes.insert({batch.B, batch.T});
    }
    return cost;
}
