// Tests of the sweep report (dev/report.cpp, included here with TESTING defined, as test_train
// includes train.cu): the mean reciprocal rank against a hand computation, the columns drawn
// again against the law of the draw, task families, settings kept apart, the JSON reader on
// train.cu's own format, a whole report of a small synthetic sweep (with the MRR without
// all-tied columns, the note on unlearned tasks and the MRR over the tasks some PE learned),
// wrapped PEs ranked as methods of their own, and bad input.
#define TESTING
#include <functional>

#include "dev/report.cpp"
#include "test/unity.h"

// MRRs here are means of three or four fractions: exact up to a few rounding steps
static const double MEAN_OF_FRACTIONS = 1e-12;

// most sweeps here rank the paper's five PEs, plain (the tables and MRR are for any list of methods)
static std::vector<Method> paper_methods() {
    std::vector<Method> ranked;
    for (int p = 0; p < NUM_PAPER_PES; p++) ranked.push_back(Method{p, ""});
    return ranked;
}
static const std::vector<Method> PAPER_METHODS = paper_methods();

// one (task, seed) column, an accuracy per ranked method in the listed order; NAN marks a method
// without a finished run
static Column column(const std::string& task, uint64_t seed, std::vector<double> ood_by_method) {
    Column c;
    c.task = task, c.seed = seed, c.ood = ood_by_method;
    return c;
}

static int count_of(const std::string& text, const std::string& part) {
    int n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) n++;
    return n;
}

// The wrappers of a run as train.cu records them now: config.json's "random-positions", "abacus",
// "position-coupling" and "pe-per-layer", results.json's "rope_scaling", "eval_positions" and
// "attention_window" (next to its per-token counts). Without a Wrappers the helpers below leave all these fields out, as runs from before them did.
struct Wrappers {
    int random_positions = 0;
    bool abacus = false;
    std::string rope_scaling = "none";
    bool position_coupling = false;
    bool pe_per_layer = false;
    double majority = 0;  // what the most common answer scores, on both splits
    std::string eval_positions = "counted";
    std::string attention_window = "none";
};
static const Wrappers PLAIN{};                          // recorded, every wrapper off
static const Wrappers RANDOM_POSITIONS{256, false, "none"};
static const Wrappers ABACUS{0, true, "none"};
static const Wrappers PI_SCALING{0, false, "pi"};        // an evaluation of a rope checkpoint
static const Wrappers COUPLED{0, false, "none", true};
static const Wrappers PER_LAYER{0, false, "none", false, true};
static const Wrappers DRAWN_POSITIONS{256, false, "none", false, false, 0, "drawn"};  // an evaluation of a +rand checkpoint
static const Wrappers WINDOWED{0, false, "none", false, false, 0, "counted", "0:20"};   // an evaluation with layer 0 windowed

// config.json as train.cu's config_json writes it (fields in flag_table's order)
static std::string config_json(const std::string& task, const std::string& pe, uint64_t seed, const std::string& model,
                               const Wrappers* w) {
    std::string wrappers = w ? "  \"random-positions\": " + std::to_string(w->random_positions) + ",\n  \"abacus\": " +
                                   (w->abacus ? "true" : "false") + ",\n  \"position-coupling\": " + (w->position_coupling ? "true" : "false") + ",\n" +
                                   "  \"pe-per-layer\": " + (w->pe_per_layer ? "true" : "false") + ",\n"
                             : "";
    bool small = model == "small";
    return "{\n  \"task\": \"" + task + "\",\n  \"pe\": \"" + pe + "\",\n  \"model\": \"" + model + "\",\n" +
           "  \"layers\": " + (small ? "6" : "2") + ",\n  \"d-model\": " + (small ? "384" : "64") + ",\n  \"heads\": " + (small ? "6" : "4") +
           ",\n  \"d-ff\": " + (small ? "1536" : "256") + ",\n  \"rope-frac\": 0.25,\n  \"dropout\": " + (small ? "0.1" : "0") +
           ",\n  \"steps\": " + (small ? "10000" : "2000") + ",\n  \"batch\": 64,\n  \"lr\": " + (small ? "0.0003" : "0.003") +
           ",\n  \"warmup-frac\": 0.06,\n  \"weight-decay\": 0.05,\n  \"grad-clip\": 1,\n  \"eval-every\": " + (small ? "1000" : "250") +
           ",\n  \"seed\": " + std::to_string(seed) + ",\n  \"data-seed\": 9842497,\n  \"train-size\": 100000,\n  \"valid-size\": 7500,\n" +
           "  \"test-size\": 10000,\n  \"train-max\": 4,\n  \"test-max\": 6,\n" + wrappers + "  \"train-min\": 2,\n  \"vocab\": 40,\n  \"max-tokens\": 20,\n" +
           "  \"parameters\": " + std::to_string(100000 + 64 * (pe == "t5")) + "\n}\n";
}

// results.json as train.cu's report() writes it (json_split is the very function it calls)
static std::string results_json(const std::string& task, const std::string& pe, uint64_t seed, const std::string& model,
                                const SplitResult& valid, const SplitResult& test, const Wrappers* w, const SplitResult& test_tokens) {
    return "{\n  \"task\": \"" + task + "\",\n  \"pe\": \"" + pe + "\",\n  \"model\": \"" + model + "\",\n  \"seed\": " + std::to_string(seed) +
           (w ? ",\n  \"rope_scaling\": \"" + w->rope_scaling + "\",\n  \"eval_positions\": \"" + w->eval_positions +
                    "\",\n  \"attention_window\": \"" + w->attention_window + "\"" : "") +
           ",\n  \"steps\": 2000,\n  \"best_step\": 1000,\n  \"train_max\": 4,\n  \"valid\": " + json_split(valid) +
           ",\n  \"test\": " + json_split(test) + (w ? ",\n  \"test_tokens\": " + json_split(test_tokens) : "") +
           (w ? format_text(",\n  \"valid_majority_answer\": %.4f,\n  \"test_majority_answer\": %.4f", w->majority, w->majority) : "") +
           "\n}\n";
}

// A run directory as ./train leaves it: lengths 2-4 in valid with a fraction `id` right at each
// length, 5-6 in test with a fraction `ood` right (10 examples a length). ood < 0: unfinished.
// With wrappers, the fields train.cu writes now, and a per-token OOD accuracy of (1 + ood) / 2
// (20 tokens a length): a wrong answer still has some tokens right.
static void write_run(const std::string& dir, const std::string& task, const std::string& pe, uint64_t seed, double ood,
                      const std::string& model = "tiny", double id = 1.0, const Wrappers* w = nullptr) {
    fs::create_directories(dir);
    write_text(dir + "/config.json", config_json(task, pe, seed, model, w));
    if (ood < 0) return;
    SplitResult valid, test, test_tokens;
    for (int length = 2; length <= 6; length++)
        for (int k = 0; k < 10; k++) (length <= 4 ? valid : test).add(length, k < (int)lround((length <= 4 ? id : ood) * 10));
    for (int length = 5; length <= 6; length++)
        for (int k = 0; k < 20; k++) test_tokens.add(length, k < (int)lround((1 + ood) / 2 * 20));
    write_text(dir + "/results.json", results_json(task, pe, seed, model, valid, test, w, test_tokens));
}

// a run directory as ./train leaves it now, its wrappers recorded
static void write_wrapped_run(const std::string& dir, const std::string& task, const std::string& pe, const Wrappers& w, uint64_t seed,
                              double ood, const std::string& model = "tiny") {
    write_run(dir, task, pe, seed, ood, model, 1.0, &w);
}

// ----------------------------------------------------------------------------
// mean reciprocal rank

static bool ends_with(const std::string& text, const std::string& tail) {
    return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

static void test_mrr_matches_a_hand_computation_with_ties_and_a_dropped_column(void) {
    //                        nope  ape   t5    alibi rope     ranks (1 = best)                 RR
    // copy s1                0.9   0.1   0.5   0.5   0.3      1 5 2 3 4 (t5 before alibi)      1    1/5  1/2  1/3  1/4
    // copy s2                0.4   0.8   0.4   0.2   0.6      3 1 4 5 2 (nope before t5)       1/3  1    1/4  1/5  1/2
    // sort s1                0.7   0.7   0.7   0.1   0.9      2 3 4 5 1 (three-way tie)        1/2  1/3  1/4  1/5  1
    // sort s2                0.9   0.9   0.2   0.3   -        dropped: no rope run
    // MRR over 3 columns:    nope (1 + 1/3 + 1/2)/3 = 11/18, ape (1/5 + 1 + 1/3)/3 = 23/45, t5 (1/2 + 1/4 + 1/4)/3 = 1/3,
    //                        alibi (1/3 + 1/5 + 1/5)/3 = 11/45, rope (1/4 + 1/2 + 1)/3 = 7/12
    std::vector<Column> columns = {column("copy", 1, {0.9, 0.1, 0.5, 0.5, 0.3}), column("copy", 2, {0.4, 0.8, 0.4, 0.2, 0.6}),
                                   column("sort", 1, {0.7, 0.7, 0.7, 0.1, 0.9}), column("sort", 2, {0.9, 0.9, 0.2, 0.3, NAN})};
    Mrr m = mean_reciprocal_rank(columns, PAPER_METHODS);
    TEST_ASSERT_EQUAL_INT(3, m.columns);
    TEST_ASSERT_EQUAL_INT(1, m.dropped);
    const double expected[NUM_PAPER_PES] = {11.0 / 18, 23.0 / 45, 1.0 / 3, 11.0 / 45, 7.0 / 12};
    for (int p = 0; p < NUM_PAPER_PES; p++) TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(MEAN_OF_FRACTIONS, expected[p], m.of_method[p], PE_NAMES[p]);
}

static void test_reciprocal_ranks_of_a_column_are_a_permutation_of_one_over_one_to_five(void) {
    std::vector<double> rr = reciprocal_ranks({0.5, 0.5, 0.5, 0.5, 0.5});  // all tied: listed order decides
    for (int p = 0; p < NUM_PAPER_PES; p++) TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 1.0 / (p + 1), rr[p]);
}

// ties shared: a block of t methods tied from rank r on each gets (1/r + ... + 1/(r + t - 1)) / t,
// so a column's reciprocal ranks still sum to 1 + 1/2 + ... + 1/n
static void test_shared_ties_give_each_tied_method_the_mean_of_its_blocks_reciprocal_ranks(void) {
    std::vector<double> rr = reciprocal_ranks({0.7, 0.7, 0.7, 0.1, 0.9}, TIES_SHARED);  // rope first, three tied at 2-4, alibi 5th
    double tied = (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 3;
    const double expected[] = {tied, tied, tied, 1.0 / 5, 1.0};
    for (int k = 0; k < 5; k++) TEST_ASSERT_DOUBLE_WITHIN(1e-12, expected[k], rr[k]);
    std::vector<double> listed = reciprocal_ranks({0.7, 0.7, 0.7, 0.1, 0.9});
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, listed[0] + listed[1] + listed[2], rr[0] + rr[1] + rr[2]);  // the same ranks, shared
    TEST_ASSERT_TRUE(listed[0] > rr[0] && listed[2] < rr[2]);                                   // the first listed loses, the last gains
}

// MRRs equal but for their last bit (sums taken in another order) keep the listed order
static void test_equal_mrrs_are_listed_in_the_listed_order(void) {
    TEST_ASSERT_TRUE(0.3 != 0.1 + 0.2);
    TEST_ASSERT_TRUE(best_first({0.3, 0.1 + 0.2, 0.5}) == std::vector<size_t>({2, 0, 1}));
}

// An evaluation of a run's latest parameters, or of a --keep-every snapshot, is a method of its
// own beside the best checkpoint's, not the same run twice
static void test_latest_and_snapshot_evaluations_are_methods_of_their_own(void) {
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++) write_run(dir + "/copy-" + PE_NAMES[p] + "-s1", "copy", PE_NAMES[p], 1, 0.1 * p);
    for (const char* evaluated : {"latest", "snapshot"}) {
        std::string run = dir + "/copy-nope-s1-" + evaluated;
        write_run(run, "copy", "nope", 1, evaluated == std::string("latest") ? 0.9 : 0.8);
        std::string results = read_text(run + "/results.json");
        results.insert(results.find(",\n  \"steps\""), std::string(",\n  \"evaluated_step\": 500,\n  \"evaluated\": \"") + evaluated + "\"");
        write_text(run + "/results.json", results);
    }
    std::string summary = write_report(dir);
    TEST_ASSERT_MESSAGE(ends_with(summary, "MRR over 1 columns: nope+latest 1.000  nope+step500 0.500  rope 0.333  alibi 0.250  t5 0.200  ape 0.167  nope 0.143\n"),
                        summary.c_str());
}

static void test_mrr_without_all_tied_columns_matches_a_hand_computation(void) {
    //                        nope  ape   t5    alibi rope     ranks (1 = best)                 RR
    // copy s1                0.9   0.1   0.5   0.5   0.3      1 5 2 3 4 (t5 before alibi)      1    1/5  1/2  1/3  1/4
    // copy s2                0     0     0     0     0        1 2 3 4 5 (all tied: PE order)   1    1/2  1/3  1/4  1/5
    // sort s1                0.2   0.8   0.4   0.6   1.0      5 2 4 3 1                        1/5  1/2  1/4  1/3  1
    // paper MRR, 3 columns:  nope (1 + 1 + 1/5)/3 = 11/15, ape (1/5 + 1/2 + 1/2)/3 = 2/5, t5 (1/2 + 1/3 + 1/4)/3 = 13/36,
    //                        alibi (1/3 + 1/4 + 1/3)/3 = 11/36, rope (1/4 + 1/5 + 1)/3 = 29/60
    // without copy s2:       nope (1 + 1/5)/2 = 3/5, ape (1/5 + 1/2)/2 = 7/20, t5 (1/2 + 1/4)/2 = 3/8,
    //                        alibi (1/3 + 1/3)/2 = 1/3, rope (1/4 + 1)/2 = 5/8
    // The tie-break alone puts nope (11/15) ahead of rope (29/60); without it rope (5/8) leads nope (3/5).
    std::vector<Column> columns = {column("copy", 1, {0.9, 0.1, 0.5, 0.5, 0.3}), column("copy", 2, {0.0, 0.0, 0.0, 0.0, 0.0}),
                                   column("sort", 1, {0.2, 0.8, 0.4, 0.6, 1.0})};
    Mrr paper = mean_reciprocal_rank(columns, PAPER_METHODS);
    TEST_ASSERT_EQUAL_INT(3, paper.columns);
    TEST_ASSERT_EQUAL_INT(1, paper.all_tied);
    const double expected_paper[NUM_PAPER_PES] = {11.0 / 15, 2.0 / 5, 13.0 / 36, 11.0 / 36, 29.0 / 60};
    for (int p = 0; p < NUM_PAPER_PES; p++) TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(MEAN_OF_FRACTIONS, expected_paper[p], paper.of_method[p], PE_NAMES[p]);
    Mrr untied = mrr_without_all_tied(columns, PAPER_METHODS);
    TEST_ASSERT_EQUAL_INT(2, untied.columns);
    TEST_ASSERT_EQUAL_INT(0, untied.all_tied);
    TEST_ASSERT_EQUAL_INT(0, untied.dropped);
    const double expected_untied[NUM_PAPER_PES] = {3.0 / 5, 7.0 / 20, 3.0 / 8, 1.0 / 3, 5.0 / 8};
    for (int p = 0; p < NUM_PAPER_PES; p++) TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(MEAN_OF_FRACTIONS, expected_untied[p], untied.of_method[p], PE_NAMES[p]);
}

static void test_a_column_is_all_tied_only_when_every_ranked_method_has_the_same_accuracy(void) {
    TEST_ASSERT(all_tied(column("copy", 1, {0.0, 0.0, 0.0, 0.0, 0.0})));
    TEST_ASSERT(all_tied(column("copy", 1, {0.3, 0.3, 0.3, 0.3, 0.3})));
    TEST_ASSERT(!all_tied(column("copy", 1, {0.0, 0.0, 0.0, 0.0, 0.0001})));  // one correct answer more is no tie
    TEST_ASSERT(!all_tied(column("copy", 1, {0.0, 0.0, 0.0, 0.0, NAN})));     // incomplete: dropped, not tied
    TEST_ASSERT(all_tied(column("copy", 1, {0.5, 0.5})));                     // a sweep of two methods
    TEST_ASSERT(!all_tied(column("copy", 1, {0.5})));  // one method: nothing is broken by the tie-break
}

static void test_only_the_methods_a_sweep_finished_are_ranked(void) {
    std::vector<SweepRun> runs(3);  // a sweep of nope and rope, and an ape run that did not finish
    runs[0].method.pe = PE_ROPE, runs[1].method.pe = PE_NOPE, runs[2].method.pe = PE_APE;
    runs[0].finished = runs[1].finished = true;
    std::vector<Method> ranked = ranked_methods(runs);
    TEST_ASSERT_EQUAL_INT(2, (int)ranked.size());
    TEST_ASSERT_EQUAL_STRING("nope", ranked[0].name());
    TEST_ASSERT_EQUAL_STRING("rope", ranked[1].name());
    Mrr m = mean_reciprocal_rank({column("copy", 1, {0.2, 0.9}), column("copy", 2, {0.8, 0.1})}, ranked);
    TEST_ASSERT_EQUAL_INT(2, m.columns);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.75, m.of_method[0]);  // (1/2 + 1)/2
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.75, m.of_method[1]);
}

// ----------------------------------------------------------------------------
// the columns drawn again

// The draws are fixed (REDRAW_SEED), so these shares are exact for this code; the tolerance is
// what any correct draw of 10,000 would meet (the shares' standard errors are 0.005 or less).
static const double SHARE_OF_DRAWS = 0.02;

static void test_drawing_again_the_one_seed_of_each_task_moves_nothing(void) {
    // three tasks of one seed each: each task's seed drawn again is that seed, so every draw is
    // the MRR itself (the hand-computed columns of the first MRR test, each its own task)
    std::vector<Column> columns = {column("copy", 1, {0.9, 0.1, 0.5, 0.5, 0.3}), column("sort", 1, {0.4, 0.8, 0.4, 0.2, 0.6}),
                                   column("scan", 1, {0.7, 0.7, 0.7, 0.1, 0.9})};
    Mrr m = mean_reciprocal_rank(columns, PAPER_METHODS);
    Redrawn r = redraw_columns(columns, PAPER_METHODS.size(), false);
    for (int p = 0; p < NUM_PAPER_PES; p++) {
        TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(MEAN_OF_FRACTIONS, m.of_method[p], r.lo[p], PE_NAMES[p]);
        TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(MEAN_OF_FRACTIONS, m.of_method[p], r.hi[p], PE_NAMES[p]);
        TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(MEAN_OF_FRACTIONS, p == PE_NOPE ? 1.0 : 0.0, r.first[p], PE_NAMES[p]);  // nope 11/18 leads
    }
}

static void test_two_tasks_that_disagree_share_first_place_by_the_law_of_the_draw(void) {
    // two methods; A wins task a, B wins task b, one seed each. Tasks kept: both MRRs are 3/4 in
    // every draw, a tie shared. Tasks drawn again: (a, a) 1/4 of draws, A first with MRR 1;
    // (b, b) 1/4, B first, A's MRR 1/2; mixed 1/2, tied. A's MRR: 1/2 in a quarter of the draws,
    // so its 90% reaches 1/2 and 1; A is first in 1/4 + 1/2 x 1/2 = 1/2 of the draws.
    std::vector<Column> columns = {column("a", 1, {1.0, 0.0}), column("b", 1, {0.0, 1.0})};
    Redrawn kept = redraw_columns(columns, 2, false), drawn = redraw_columns(columns, 2, true);
    for (int k = 0; k < 2; k++) {
        TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.75, kept.lo[k]);
        TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.75, kept.hi[k]);
        TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.5, kept.first[k]);
        TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.5, drawn.lo[k]);
        TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 1.0, drawn.hi[k]);
        TEST_ASSERT_DOUBLE_WITHIN(SHARE_OF_DRAWS, 0.5, drawn.first[k]);
    }
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 1.0, drawn.first[0] + drawn.first[1]);
}

static void test_seeds_are_drawn_again_within_their_task_and_a_task_keeps_its_count(void) {
    // Task a: A wins seed 1, B seed 2. Tasks kept, a's two seeds drawn again: (1, 1) a quarter of
    // the draws, A first; (2, 2) a quarter, B; mixed, tied: A first in 1/2.
    std::vector<Column> split = {column("a", 1, {1.0, 0.0}), column("a", 2, {0.0, 1.0})};
    TEST_ASSERT_DOUBLE_WITHIN(SHARE_OF_DRAWS, 0.5, redraw_columns(split, 2, false).first[0]);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.5, redraw_columns(split, 2, false).lo[0]);
    // Task a: A wins its three seeds; task b: B wins its one. Tasks drawn again: (a, a) 1/4, six
    // columns, A first; (b, b) 1/4, B; mixed 1/2, four columns, A 7/8 against B 5/8: A first in
    // 3/4 of the draws. Were a drawn task one column whatever its seeds, mixed draws would tie
    // and A would be first in 1/2.
    std::vector<Column> uneven = {column("a", 1, {1.0, 0.0}), column("a", 2, {1.0, 0.0}), column("a", 3, {1.0, 0.0}),
                                  column("b", 1, {0.0, 1.0})};
    TEST_ASSERT_DOUBLE_WITHIN(SHARE_OF_DRAWS, 0.75, redraw_columns(uneven, 2, true).first[0]);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 1.0, redraw_columns(uneven, 2, false).first[0]);  // tasks kept: always 7/8
}

static void test_ties_shared_draws_share_a_tied_first_place(void) {
    // one task, one seed, A and B tied: the listed order puts A first in every draw (MRR 1
    // against 1/2); shared, each has 3/4 in every draw and the draws' first place is halved
    std::vector<Column> tied = {column("a", 1, {0.0, 0.0})};
    Redrawn listed = redraw_columns(tied, 2, false), shared = redraw_columns(tied, 2, false, TIES_SHARED);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 1.0, listed.first[0]);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.5, listed.lo[1]);
    for (int k = 0; k < 2; k++) {
        TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.5, shared.first[k]);
        TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.75, shared.lo[k]);
        TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.75, shared.hi[k]);
    }
}

static void test_families_group_task_variants_by_the_name_before_the_underscore(void) {
    TEST_ASSERT_EQUAL_STRING("copy", family_of("copy"));
    TEST_ASSERT_EQUAL_STRING("copy", family_of("copy_rdc"));
    TEST_ASSERT_EQUAL_STRING("copy", family_of("copy_cmc2x"));
    TEST_ASSERT_EQUAL_STRING("reverse", family_of("reverse_mcrv"));
    TEST_ASSERT_EQUAL_STRING("sort", family_of("sort_multi"));
    // family copy: copy s1 ranks nope first (RR 1), copy_rdc s1 ranks it last (RR 1/5): MRR 3/5;
    // the sort column, where nope is first again, is not part of it
    std::vector<Column> columns = {column("copy", 1, {0.9, 0.1, 0.2, 0.3, 0.4}), column("copy_rdc", 1, {0.0, 0.1, 0.2, 0.3, 0.4}),
                                   column("sort", 1, {0.9, 0.1, 0.2, 0.3, 0.4})};
    std::vector<Column> copy = columns_where(columns, [](const Column& c) { return family_of(c.task) == "copy"; });
    Mrr m = mean_reciprocal_rank(copy, PAPER_METHODS);
    TEST_ASSERT_EQUAL_INT(2, m.columns);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.6, m.of_method[0]);  // nope
}

static void test_settings_are_labelled_by_the_fewest_fields_that_tell_them_apart(void) {
    // copy in two presets (model implies layers, lr, ...), and once more in `tiny` with other steps
    std::vector<SweepRun> runs(3);
    const char* values[3][4] = {{"tiny", "2", "0.003", "2000"}, {"small", "6", "0.0003", "10000"}, {"tiny", "2", "0.003", "500"}};
    const char* fields[4] = {"model", "layers", "lr", "steps"};
    for (int k = 0; k < 3; k++) {
        runs[k].task = "copy", runs[k].finished = true;
        for (int f = 0; f < 4; f++) runs[k].setting[fields[f]] = values[k][f];
    }
    std::vector<std::string> named = label_settings(&runs, {"model", "layers", "lr", "steps"});
    TEST_ASSERT_EQUAL_STRING("model steps", join_words(named));
    TEST_ASSERT_EQUAL_STRING("copy [model=tiny steps=2000]", runs[0].group());
    TEST_ASSERT_EQUAL_STRING("copy [model=small steps=10000]", runs[1].group());
    TEST_ASSERT_EQUAL_STRING("copy [model=tiny steps=500]", runs[2].group());
}

static void test_fields_that_differ_only_between_tasks_label_nothing(void) {
    std::vector<SweepRun> runs(2);  // copy and sort have their own lengths, but one setting each
    runs[0].task = "copy", runs[0].setting["train-max"] = "20";
    runs[1].task = "sort", runs[1].setting["train-max"] = "8";
    for (SweepRun& r : runs) r.finished = true;
    TEST_ASSERT_EQUAL_INT(0, (int)label_settings(&runs, {"train-max"}).size());
    TEST_ASSERT_EQUAL_STRING("copy", runs[0].group());
}

// ----------------------------------------------------------------------------
// reading what ./train wrote

// a results.json exactly as train.cu writes it (its report() function), seed at the top of uint64
static const char* RESULTS_JSON =
    "{\n  \"task\": \"copy\",\n  \"pe\": \"t5\",\n  \"model\": \"tiny\",\n  \"seed\": 18446744073709551557,\n  \"steps\": 2000,\n"
    "  \"best_step\": 1000,\n  \"train_max\": 3,\n"
    "  \"valid\": {\"accuracy\": 0.750000, \"correct\": 3, \"total\": 4, \"by_length\": [{\"length\": 2, \"correct\": 2, \"total\": 2, "
    "\"accuracy\": 1.000000}, {\"length\": 3, \"correct\": 1, \"total\": 2, \"accuracy\": 0.500000}]},\n"
    "  \"test\": {\"accuracy\": 0.000000, \"correct\": 0, \"total\": 2, \"by_length\": [{\"length\": 4, \"correct\": 0, \"total\": 2, "
    "\"accuracy\": 0.000000}]}\n}\n";

static void test_json_reader_reads_results_json_in_train_cu_format(void) {
    Json j = parse_json(RESULTS_JSON, "results.json");
    TEST_ASSERT_EQUAL_STRING("copy", field(j, "task", Json::STRING, "").text);
    TEST_ASSERT_EQUAL_STRING("18446744073709551557", field(j, "seed", Json::NUMBER, "").text);  // every digit kept
    TEST_ASSERT_EQUAL_INT(3, int_field(j, "train_max", ""));
    SplitResult valid = read_split(field(j, "valid", Json::OBJECT, ""), "");
    TEST_ASSERT_EQUAL_INT(2, (int)valid.by_length.size());
    TEST_ASSERT_EQUAL_INT(1, valid.by_length[3].correct);
    TEST_ASSERT_EQUAL_INT(2, valid.by_length[3].total);
    TEST_ASSERT_EQUAL_INT(4, valid.all.total);
    SplitResult test = read_split(field(j, "test", Json::OBJECT, ""), "");
    TEST_ASSERT_EQUAL_INT(2, test.by_length[4].total);
    TEST_ASSERT_EQUAL_INT(0, test.all.correct);
    // config.json's switches (--skip-nonfinite) are JSON booleans
    Json config = parse_json("{\"skip-nonfinite\": false, \"x\": true}", "config.json");
    TEST_ASSERT_EQUAL_STRING("false", field(config, "skip-nonfinite", Json::BOOLEAN, "").text);
    TEST_ASSERT_EQUAL_STRING("true", field(config, "x", Json::BOOLEAN, "").text);
}

static void test_json_split_reads_back_as_the_same_counts(void) {
    SplitResult r;
    for (int k = 0; k < 50; k++) r.add(2 + k % 7, k % 3 == 0);
    SplitResult back = read_split(parse_json(json_split(r), "split"), "split");
    TEST_ASSERT_EQUAL_INT(r.all.correct, back.all.correct);
    TEST_ASSERT_EQUAL_INT(r.all.total, back.all.total);
    for (const auto& kv : r.by_length) {
        TEST_ASSERT_EQUAL_INT(kv.second.correct, back.by_length[kv.first].correct);
        TEST_ASSERT_EQUAL_INT(kv.second.total, back.by_length[kv.first].total);
    }
}

static void test_malformed_json_is_refused_with_file_and_line(void) {
    TEST_ASSERT_THROWS_WITH(parse_json("{\n  \"task\": \"copy\",\n  \"pe\": \n}", "x.json"), "x.json: malformed JSON at line 4: expected a value");
    TEST_ASSERT_THROWS_WITH(parse_json("{\"a\": 1} 2", "x.json"), "expected the end of the file");
    TEST_ASSERT_THROWS_WITH(parse_json("[1, 2", "x.json"), "expected ',' or ']'");
    TEST_ASSERT_THROWS_WITH(parse_json("{\"a\": \"open", "x.json"), "expected the end of a string");
    TEST_ASSERT_THROWS_WITH(field(parse_json("{\"a\": 1}", "x.json"), "a", Json::STRING, "x.json"), "x.json: field \"a\" should be a string");
    TEST_ASSERT_THROWS_WITH(field(parse_json("{\"a\": 1}", "x.json"), "a", Json::BOOLEAN, "x.json"), "field \"a\" should be true or false");
    TEST_ASSERT_THROWS_WITH(field(parse_json("{\"a\": 1}", "x.json"), "a", Json::OBJECT, "x.json"), "field \"a\" should be an object");
}

// the reader recurses into arrays and objects: 64 levels read, a deeper file is refused before
// it can overflow the stack (100,000 levels did, under AddressSanitizer)
static void test_json_nested_past_the_limit_is_refused(void) {
    std::string nested = "1";
    for (int depth = 0; depth < MAX_JSON_DEPTH; depth++) nested = (depth % 2 ? "{\"a\": " : "[") + nested + (depth % 2 ? "}" : "]");
    TEST_ASSERT_EQUAL_INT(Json::OBJECT, parse_json(nested, "x.json").kind);
    TEST_ASSERT_THROWS_WITH(parse_json("[" + nested + "]", "x.json"), "x.json: JSON nested more than 64 deep at line 1");
    TEST_ASSERT_THROWS_WITH(parse_json("\n" + std::string(100000, '['), "x.json"), "x.json: JSON nested more than 64 deep at line 2");
}

// lengths are ints: a number an int can not hold, or one with a fraction, is refused (casting
// 1e300 to int is undefined behaviour); counts go past 2^31 (a large split's tokens), to 2^53
static void test_int_fields_must_be_whole_numbers_an_int_holds(void) {
    Json j = parse_json("{\"max\": 2147483647, \"min\": -2147483647, \"big\": 1e300, \"past\": 2147483648, \"half\": 2.5}", "x.json");
    TEST_ASSERT_EQUAL_INT(INT_MAX, int_field(j, "max", "x.json"));
    TEST_ASSERT_EQUAL_INT(-INT_MAX, int_field(j, "min", "x.json"));
    TEST_ASSERT_THROWS_WITH(int_field(j, "big", "x.json"), "x.json: field \"big\" should be a whole number of at most 2147483647, not 1e300");
    TEST_ASSERT_THROWS_WITH(int_field(j, "past", "x.json"), "not 2147483648");
    TEST_ASSERT_THROWS_WITH(int_field(j, "half", "x.json"), "not 2.5");
    TEST_ASSERT_TRUE(count_field(j, "past", "x.json") == 2147483648LL);
    TEST_ASSERT_THROWS_WITH(count_field(j, "min", "x.json"), "x.json: field \"min\" should be a count, a whole number from 0 to 2^53, not -2147483647");
    TEST_ASSERT_THROWS_WITH(count_field(j, "big", "x.json"), "not 1e300");
}

// ----------------------------------------------------------------------------
// whole reports

static void test_report_of_a_small_sweep_has_the_expected_mrr_and_plots(void) {
    // OOD accuracy of nope ape t5 alibi rope     ranks       RR
    // copy s1 and s2: 1.0 0.0 0.5 0.5 0.2         1 5 2 3 4   1 1/5 1/2 1/3 1/4
    // copy_rdc s1:    0.2 1.0 0.5 0.6 0.0         4 1 3 2 5   1/4 1 1/3 1/2 1/5
    // MRR: nope 9/12 = 0.750, ape 7/15 = 0.467, t5 4/9 = 0.444, alibi 7/18 = 0.389, rope 7/30 = 0.233
    std::string dir = unity_temp_dir();
    const double copy[NUM_PAPER_PES] = {1.0, 0.0, 0.5, 0.5, 0.2}, rdc[NUM_PAPER_PES] = {0.2, 1.0, 0.5, 0.6, 0.0};
    for (int p = 0; p < NUM_PAPER_PES; p++) {
        for (int seed : {1, 2}) write_run(dir + "/copy-" + PE_NAMES[p] + "-s" + std::to_string(seed), "copy", PE_NAMES[p], seed, copy[p]);
        write_run(dir + "/ablation/copy_rdc-" + std::string(PE_NAMES[p]) + "-s1", "copy_rdc", PE_NAMES[p], 1, rdc[p]);  // one level deeper
    }
    write_run(dir + "/copy-rope-s3", "copy", "rope", 3, -1);  // unfinished
    std::string summary = write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("16 found, 15 finished, 1 unfinished") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| **all** | 0.750 | 0.467 | 0.444 | 0.389 | 0.233 | 3 | 0 |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| family copy | 0.750 | 0.467 | 0.444 | 0.389 | 0.233 | 3 | 0 |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| t5 | 0.500 | 0.500-0.500 | 1.000 | 2 | 0.500 | 0 of 2 | - |") != std::string::npos, md.c_str());
    // copy: nope first in both seeds; copy_rdc: ape in its one
    TEST_ASSERT_MESSAGE(md.find("| nope | 1.000 | 1.000-1.000 | 1.000 | 2 | 1.000 | 2 of 2 | - |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| rope | 0.200 | 0.200-0.200 | 1.000 | 2 | 0.250 | 0 of 2 | - |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| ape | 1.000 | 1.000-1.000 | 1.000 | 1 | 1.000 | 1 of 1 | - |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("- `copy-rope-s3`: copy, rope, seed 3") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(summary.find("MRR over 3 columns: nope 0.750  ape 0.467  t5 0.444  alibi 0.389  rope 0.233\n") != std::string::npos,
                        summary.c_str());
    TEST_ASSERT_MESSAGE(summary.find("all-tied columns: none of 3") != std::string::npos, summary.c_str());
    // copy's two seeds rank alike and copy_rdc has one, so with the tasks kept no draw moves an MRR
    TEST_ASSERT_MESSAGE(md.find("### How sure: the columns drawn again") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| **all** (3 columns, 2 tasks) | nope | 0.750 | 0.750-0.750 | 1.00 |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("|  | rope | 0.233 | 0.233-0.233 | 0.00 |") != std::string::npos, md.c_str());
    // no ties in these columns: the shared rule's draws are the listed order's
    TEST_ASSERT_MESSAGE(md.find("| **all** (3 columns, 2 tasks), ties shared | nope | 0.750 | 0.750-0.750 | 1.00 |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(summary.find("first by MRR, ties shared, in 10000 draws of the tasks and their seeds (report.md, \"How sure\"): nope ") !=
                            std::string::npos,
                        summary.c_str());
    TEST_ASSERT_MESSAGE(summary.find("first by MRR in 10000 draws of the tasks and their seeds (report.md, \"How sure\"): nope ") !=
                            std::string::npos,
                        summary.c_str());
    TEST_ASSERT_MESSAGE(md.find("0 of the 3 ranked columns are all tied") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find(", without ") == std::string::npos, md.c_str());  // no all-tied column: no second MRR row
    TEST_ASSERT_MESSAGE(md.find("No PE learned") == std::string::npos, md.c_str());  // every PE has ID accuracy 1
    // every task learned: no MRR row or summary line over the learned tasks
    TEST_ASSERT_MESSAGE(md.find("some PE learned (") == std::string::npos && md.find("some PE learned:") == std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("0 of the 2 tasks were learned by no PE") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(summary.find("some PE learned") == std::string::npos, summary.c_str());
    for (const char* task : {"copy", "copy_rdc"}) {
        std::string svg = read_text(dir + "/" + task + ".svg");
        TEST_ASSERT_EQUAL_INT_MESSAGE(NUM_PAPER_PES, count_of(svg, "<polyline"), task);  // one mean line per PE
        TEST_ASSERT_MESSAGE(svg.find("exact-match accuracy") != std::string::npos && svg.find("length (λ)") != std::string::npos, task);
        TEST_ASSERT_MESSAGE(md.find(std::string("(") + task + ".svg)") != std::string::npos, task);
    }
    TEST_ASSERT_EQUAL_INT(NUM_PAPER_PES, count_of(read_text(dir + "/mrr.svg"), "<rect x="));  // one bar per PE
}

static void test_a_report_of_one_column_draws_nothing_again(void) {
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++) write_run(dir + "/copy-" + PE_NAMES[p] + "-s1", "copy", PE_NAMES[p], 1, 0.1 * p);
    std::string summary = write_report(dir);
    TEST_ASSERT_MESSAGE(read_text(dir + "/report.md").find("How sure") == std::string::npos, summary.c_str());
    TEST_ASSERT_MESSAGE(summary.find("draws") == std::string::npos, summary.c_str());
}

static void test_report_gives_the_mrr_without_all_tied_columns_and_flags_a_task_no_pe_learned(void) {
    // OOD accuracy of nope ape t5 alibi rope     ranks                   RR
    // copy s1 and s2:    1.0 0.0 0.5 0.6 0.2      1 5 3 2 4               1 1/5 1/3 1/2 1/4
    // addition s1, s2:   0   0   0   0   0        1 2 3 4 5 (all tied)    1 1/2 1/3 1/4 1/5   (ID accuracy 0.2: not learned)
    // paper MRR, 4 columns: nope 1, ape (2/5 + 1)/4 = 0.350, t5 (2/3 + 2/3)/4 = 0.333, alibi (1 + 1/2)/4 = 0.375,
    //                       rope (1/2 + 2/5)/4 = 0.225
    // without the 2 all-tied (addition) columns: the copy columns alone, nope 1, ape 0.2, t5 0.333, alibi 0.5, rope 0.25
    std::string dir = unity_temp_dir();
    const double copy[NUM_PAPER_PES] = {1.0, 0.0, 0.5, 0.6, 0.2};
    for (int p = 0; p < NUM_PAPER_PES; p++)
        for (int seed : {1, 2}) {
            write_run(dir + "/copy-" + PE_NAMES[p] + "-s" + std::to_string(seed), "copy", PE_NAMES[p], seed, copy[p]);
            write_run(dir + "/addition-" + PE_NAMES[p] + "-s" + std::to_string(seed), "addition", PE_NAMES[p], seed, 0.0, "tiny", 0.2);
        }
    std::string summary = write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("2 of the 4 ranked columns are all tied") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| **all** | 1.000 | 0.350 | 0.333 | 0.375 | 0.225 | 4 | 0 |\n"
                                "| **all**, without 2 all-tied columns | 1.000 | 0.200 | 0.333 | 0.500 | 0.250 | 2 | 0 |\n") != std::string::npos,
                        md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| family addition | 1.000 | 0.500 | 0.333 | 0.250 | 0.200 | 2 | 0 |\n"
                                "| family addition, without 2 all-tied columns | - | - | - | - | - | 0 | 0 |\n") != std::string::npos,
                        md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| family copy | 1.000 | 0.200 | 0.333 | 0.500 | 0.250 | 2 | 0 |\n| family copy, without") == std::string::npos &&
                            md.find("| family copy | 1.000 | 0.200 | 0.333 | 0.500 | 0.250 | 2 | 0 |\n") != std::string::npos,
                        md.c_str());  // no all-tied copy column: no second row
    // ties shared: each tied method gets the mean of its block's 1/rank; the all-tied addition
    // columns give everyone (1 + 1/2 + 1/3 + 1/4 + 1/5) / 5 = 0.4567, so over 4 columns nope
    // (2 + 2 x 0.4567) / 4 = 0.728, ape 0.328, t5 0.395, alibi 0.478, rope 0.353
    TEST_ASSERT_MESSAGE(md.find("| **all**, ties shared | 0.728 | 0.328 | 0.395 | 0.478 | 0.353 | 4 | 0 |\n") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| family addition, ties shared | 0.457 | 0.457 | 0.457 | 0.457 | 0.457 | 2 | 0 |\n") != std::string::npos, md.c_str());
    // the note is under the addition table (ID 0.2 for every PE) and nowhere else (copy: ID 1)
    size_t addition = md.find("### addition"), copy_at = md.find("### copy"), note = md.find("No PE learned this task in distribution");
    TEST_ASSERT_EQUAL_INT(1, count_of(md, "No PE learned this task in distribution"));
    TEST_ASSERT_MESSAGE(addition < note && note < copy_at, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("No PE learned this task in distribution (best mean ID accuracy 0.200 < 0.500; the runs do not record what the "
                                "most common answer scores): its ranks are noise.") !=
                            std::string::npos,
                        md.c_str());
    TEST_ASSERT_MESSAGE(md.find("seeds with a finished run of every method: 2, 2 of them all tied") != std::string::npos, md.c_str());
    // addition is also a task no PE learned: after the row without all-tied columns, the row over copy alone
    TEST_ASSERT_MESSAGE(md.find("| **all**, without 2 all-tied columns | 1.000 | 0.200 | 0.333 | 0.500 | 0.250 | 2 | 0 |\n"
                                "| **all**, only the task some PE learned (2 columns) | 1.000 | 0.200 | 0.333 | 0.500 | 0.250 | 2 | 0 |\n") !=
                            std::string::npos,
                        md.c_str());
    // the summary: the MRR without the all-tied columns, over the learned tasks, then the paper's MRR as the last line
    const std::string tail = "MRR without the 2 all-tied columns, over 2: nope 1.000  alibi 0.500  t5 0.333  rope 0.250  ape 0.200\n"
                             "MRR over the tasks some PE learned, ties shared (2 columns): nope 1.000  alibi 0.500  t5 0.333  rope 0.250  ape 0.200\n"
                             "MRR over the tasks some PE learned (2 columns): nope 1.000  alibi 0.500  t5 0.333  rope 0.250  ape 0.200\n"
                             "MRR over 4 columns, ties shared: nope 0.728  alibi 0.478  t5 0.395  rope 0.353  ape 0.328\n"
                             "MRR over 4 columns: nope 1.000  alibi 0.375  ape 0.350  t5 0.333  rope 0.225\n";
    TEST_ASSERT_MESSAGE(ends_with(summary, tail), summary.c_str());
}

static void test_a_run_below_the_bar_of_a_learned_task_is_named_under_its_table(void) {
    // copy: every run learns it in distribution (ID 1) but alibi seed 2 (ID 0.2); addition: no run does
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++)
        for (int seed : {1, 2}) {
            std::string name = std::string("-") + PE_NAMES[p] + "-s" + std::to_string(seed);
            double id = std::string(PE_NAMES[p]) == "alibi" && seed == 2 ? 0.2 : 1.0;
            write_run(dir + "/copy" + name, "copy", PE_NAMES[p], seed, 0.5, "tiny", id);
            write_run(dir + "/addition" + name, "addition", PE_NAMES[p], seed, 0.0, "tiny", 0.2);
        }
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    const std::string note = "Runs that did not learn this task in distribution themselves (ID accuracy < 0.500): alibi seed 2 (0.200). Their OOD "
                             "accuracy says the run failed, not how far its method reaches.";
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, count_of(md, note), md.c_str());
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, count_of(md, "Runs that did not learn this task"), md.c_str());  // not under addition's table
    size_t copy_at = md.find("### copy"), at = md.find(note);
    TEST_ASSERT_MESSAGE(copy_at < at, md.c_str());
}

static void test_report_gives_the_mrr_over_the_tasks_some_pe_learned(void) {
    // The real-data bias the all-tied row misses: in a task no PE learned, one PE gets a few OOD
    // answers right and the others tie at 0, so its column is not all tied yet ranks noise.
    // OOD accuracy of nope ape t5 alibi rope      ranks                          RR
    // copy s1 and s2:    0.2 0.0 0.5 0.6 1.0       4 5 3 2 1                      1/4 1/5 1/3 1/2 1
    // addition s1, s2:   0   0   0   0.1 0         2 3 4 1 5 (ties in PE order)   1/2 1/3 1/4 1   1/5   (ID 0.2: not learned)
    // paper MRR, 4 columns: nope (1/2 + 1)/4 = 0.375, ape (2/5 + 2/3)/4 = 4/15 = 0.267, t5 (2/3 + 1/2)/4 = 7/24 = 0.292,
    //                       alibi (1 + 2)/4 = 0.750, rope (2 + 2/5)/4 = 0.600: alibi first, for 1 OOD answer in 20
    // no column is all tied, so there is no row without all-tied columns
    // over the task some PE learned (copy, 2 columns): nope 0.250, ape 0.200, t5 0.333, alibi 0.500, rope 1.000
    // family copy holds no unlearned task: no extra row; family addition holds no learned one: a row of "-" over 0 columns
    std::string dir = unity_temp_dir();
    const double copy[NUM_PAPER_PES] = {0.2, 0.0, 0.5, 0.6, 1.0}, addition[NUM_PAPER_PES] = {0.0, 0.0, 0.0, 0.1, 0.0};
    for (int p = 0; p < NUM_PAPER_PES; p++)
        for (int seed : {1, 2}) {
            write_run(dir + "/copy-" + PE_NAMES[p] + "-s" + std::to_string(seed), "copy", PE_NAMES[p], seed, copy[p]);
            write_run(dir + "/addition-" + PE_NAMES[p] + "-s" + std::to_string(seed), "addition", PE_NAMES[p], seed, addition[p], "tiny",
                      0.2);
        }
    std::string summary = write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("0 of the 4 ranked columns are all tied") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("1 of the 2 tasks was learned by no PE (no method's mean ID accuracy got halfway") != std::string::npos,
                        md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| **all** | 0.375 | 0.267 | 0.292 | 0.750 | 0.600 | 4 | 0 |\n"
                                "| **all**, only the task some PE learned (2 columns) | 0.250 | 0.200 | 0.333 | 0.500 | 1.000 | 2 | 0 |\n") !=
                            std::string::npos,
                        md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| family addition | 0.500 | 0.333 | 0.250 | 1.000 | 0.200 | 2 | 0 |\n"
                                "| family addition, only the tasks some PE learned: none (0 columns) | - | - | - | - | - | 0 | 0 |\n") !=
                            std::string::npos,
                        md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| family copy | 0.250 | 0.200 | 0.333 | 0.500 | 1.000 | 2 | 0 |\n"
                                "| family copy, ties shared | 0.250 | 0.200 | 0.333 | 0.500 | 1.000 | 2 | 0 |\n\n") != std::string::npos,
                        md.c_str());
    // ties shared: addition's four tied at 0 share ranks 2-5, (1/2 + 1/3 + 1/4 + 1/5) / 4 = 0.3208 each
    TEST_ASSERT_MESSAGE(md.find("| **all**, ties shared | 0.285 | 0.260 | 0.327 | 0.750 | 0.660 | 4 | 0 |\n"
                                "| **all**, only the task some PE learned (2 columns), ties shared | 0.250 | 0.200 | 0.333 | 0.500 | 1.000 | 2 | 0 |\n") !=
                            std::string::npos,
                        md.c_str());
    TEST_ASSERT_EQUAL_INT(7, count_of(md, "some PE learned"));  // the section's sentence, the rows above, the first one's shared twin, "How sure"'s text and two scopes
    TEST_ASSERT_EQUAL_INT(0, count_of(md, "all-tied column"));          // no all-tied row
    TEST_ASSERT_EQUAL_INT(1, count_of(md, "No PE learned this task"));  // the note and the row follow one rule
    const std::string tail = "all-tied columns: none of 4\n"
                             "MRR over the tasks some PE learned, ties shared (2 columns): rope 1.000  alibi 0.500  t5 0.333  nope 0.250  ape 0.200\n"
                             "MRR over the tasks some PE learned (2 columns): rope 1.000  alibi 0.500  t5 0.333  nope 0.250  ape 0.200\n"
                             "MRR over 4 columns, ties shared: alibi 0.750  rope 0.660  t5 0.327  nope 0.285  ape 0.260\n"
                             "MRR over 4 columns: alibi 0.750  rope 0.600  nope 0.375  t5 0.292  ape 0.267\n";
    TEST_ASSERT_MESSAGE(ends_with(summary, tail), summary.c_str());
}

// A yes-or-no task: the most common answer scores 0.5, so "learned" needs 0.75 ID. Parity's best
// PE at 0.7 ID learned nothing; LEGO's at 0.8 did. Runs from before the field (copy, 0.7 ID)
// keep the bar of 0.5.
static void test_a_task_is_learned_halfway_from_what_the_most_common_answer_scores(void) {
    std::string dir = unity_temp_dir();
    Wrappers yes_or_no = PLAIN;
    yes_or_no.majority = 0.5;
    for (int p = 0; p < NUM_PAPER_PES; p++) {
        write_run(dir + "/parity-" + PE_NAMES[p], "parity", PE_NAMES[p], 1, 0.5, "tiny", p == PE_NOPE ? 0.7 : 0.5, &yes_or_no);
        write_run(dir + "/lego-" + PE_NAMES[p], "lego", PE_NAMES[p], 1, 0.5, "tiny", p == PE_NOPE ? 0.8 : 0.5, &yes_or_no);
        write_run(dir + "/copy-" + PE_NAMES[p], "copy", PE_NAMES[p], 1, 0.1 * p, "tiny", 0.7);
    }
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, count_of(md, "No PE learned this task"), md.c_str());
    size_t parity = md.find("### parity"), note = md.find("No PE learned this task in distribution (best mean ID accuracy 0.700 < 0.750, "
                                                          "halfway from the most common answer's 0.500 to 1): its ranks are noise.");
    TEST_ASSERT_MESSAGE(parity != std::string::npos && note > parity, md.c_str());
    TEST_ASSERT_EQUAL_INT_MESSAGE(2, count_of(md, "The most common answer, always given, scores 0.500 ID and 0.500 OOD."), md.c_str());
    TEST_ASSERT_MESSAGE(md.find("1 of the 3 tasks was learned by no PE") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("only the 2 tasks some PE learned (2 columns)") != std::string::npos, md.c_str());
}

static void test_runs_of_different_presets_are_never_ranked_against_each_other(void) {
    // tiny: nope wins; small: rope wins. Ranked together per seed, neither would be a column.
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++) {
        write_run(dir + "/tiny-" + PE_NAMES[p], "copy", PE_NAMES[p], 1, p == PE_NOPE ? 1.0 : 0.1 * p, "tiny");
        write_run(dir + "/small-" + PE_NAMES[p], "copy", PE_NAMES[p], 1, p == PE_ROPE ? 1.0 : 0.1 * p, "small");
    }
    std::string summary = write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("### copy [model=small]") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("### copy [model=tiny]") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| setting model=small | 0.200 | 0.250 | 0.333 | 0.500 | 1.000 | 1 | 0 |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(summary.find("MRR over 2 columns: ") != std::string::npos, summary.c_str());
    TEST_ASSERT(fs::exists(dir + "/copy-model-small.svg") && fs::exists(dir + "/copy-model-tiny.svg"));
}

// ----------------------------------------------------------------------------
// wrapped PEs: methods of their own, ranked in the plain PEs' columns

static void test_wrapped_pes_are_ranked_as_methods_of_their_own_in_the_plain_pes_column(void) {
    // copy, seed 1: one column of five methods, listed in PE_NAMES order, each plain PE before its variants.
    // rope+pi is an evaluation of the rope run's checkpoint: the same config.json, results with "rope_scaling": "pi".
    // nope's run is from before the wrapper fields (none recorded): a plain PE, without per-token accuracy.
    //   method      nope  rope  rope+pi  fire  fire+rand
    //   OOD         0.0   0.5   0.7      0.5   0.9
    //   rank        5     3     2        4     1          (rope before fire in their tie: rope comes first in PE_NAMES)
    //   RR          1/5   1/3   1/2      1/4   1
    //   per-token   -     0.75  0.85     0.75  0.95       ((1 + OOD) / 2, as write_run writes it)
    std::string dir = unity_temp_dir();
    write_run(dir + "/copy-nope-s1", "copy", "nope", 1, 0.0);
    write_wrapped_run(dir + "/copy-rope-s1", "copy", "rope", PLAIN, 1, 0.5);
    write_wrapped_run(dir + "/copy-rope-s1-pi", "copy", "rope", PI_SCALING, 1, 0.7);
    write_wrapped_run(dir + "/copy-fire-s1", "copy", "fire", PLAIN, 1, 0.5);
    write_wrapped_run(dir + "/copy-fire-s1-rand", "copy", "fire", RANDOM_POSITIONS, 1, 0.9);
    TEST_ASSERT_EQUAL_STRING(read_text(dir + "/copy-rope-s1/config.json"), read_text(dir + "/copy-rope-s1-pi/config.json"));
    std::string summary = write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("| scope | nope | rope | rope+pi | fire | fire+rand | ranked | dropped |\n") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| **all** | 0.200 | 0.333 | 0.500 | 0.250 | 1.000 | 1 | 0 |\n") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(ends_with(summary, "MRR over 1 columns: fire+rand 1.000  rope+pi 0.500  rope 0.333  fire 0.250  nope 0.200\n"),
                        summary.c_str());
    TEST_ASSERT_MESSAGE(md.find("### copy\n") != std::string::npos && md.find("### copy [") == std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| fire+rand | 0.900 | 0.900-0.900 | 1.000 | 1 | 1.000 | 1 of 1 | 0.950 |\n") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| rope+pi | 0.700 | 0.700-0.700 | 1.000 | 1 | 0.500 | 0 of 1 | 0.850 |\n") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| nope | 0.000 | 0.000-0.000 | 1.000 | 1 | 0.200 | 0 of 1 | - |\n") != std::string::npos, md.c_str());
    std::string svg = read_text(dir + "/copy.svg");
    TEST_ASSERT_EQUAL_INT(5, count_of(svg, "<polyline"));  // one mean line per method
    TEST_ASSERT_MESSAGE(svg.find(">fire+rand (1 seed)</text>") != std::string::npos && svg.find(">rope+pi (1 seed)</text>") != std::string::npos,
                        svg.c_str());
    std::string bars = read_text(dir + "/mrr.svg");
    TEST_ASSERT_EQUAL_INT(5, count_of(bars, "<rect x="));  // one bar per method
    TEST_ASSERT(bars.find(">fire+rand</text>") != std::string::npos);
}

// fire+rand's checkpoint evaluated at drawn positions: the same config.json, results with
// "eval_positions": "drawn", a method after fire+rand ("+rand" < "+rand+drawn").
//   method   fire  fire+rand  fire+rand+drawn
//   OOD      0.5   0.3        0.9
//   RR       1/2   1/3        1
static void test_an_evaluation_at_drawn_positions_is_a_method_of_its_own(void) {
    std::string dir = unity_temp_dir();
    write_wrapped_run(dir + "/copy-fire-s1", "copy", "fire", PLAIN, 1, 0.5);
    write_wrapped_run(dir + "/copy-fire-s1-rand", "copy", "fire", RANDOM_POSITIONS, 1, 0.3);
    write_wrapped_run(dir + "/copy-fire-s1-rand-drawn", "copy", "fire", DRAWN_POSITIONS, 1, 0.9);
    TEST_ASSERT_EQUAL_STRING(read_text(dir + "/copy-fire-s1-rand/config.json"), read_text(dir + "/copy-fire-s1-rand-drawn/config.json"));
    std::string summary = write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("| scope | fire | fire+rand | fire+rand+drawn | ranked | dropped |\n") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(ends_with(summary, "MRR over 1 columns: fire+rand+drawn 1.000  fire 0.500  fire+rand 0.333\n"), summary.c_str());
}

// an alibi checkpoint evaluated with layer 0 windowed (--attention-window 0:20): the same
// config.json, results with "attention_window": "0:20", a method of its own. OOD 0.2 and 0.6.
static void test_an_evaluation_with_a_window_is_a_method_of_its_own(void) {
    std::string dir = unity_temp_dir();
    write_wrapped_run(dir + "/copy-alibi-s1", "copy", "alibi", PLAIN, 1, 0.2);
    write_wrapped_run(dir + "/copy-alibi-s1-window", "copy", "alibi", WINDOWED, 1, 0.6);
    std::string summary = write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("| scope | alibi | alibi+window0:20 | ranked | dropped |\n") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(ends_with(summary, "MRR over 1 columns: alibi+window0:20 1.000  alibi 0.500\n"), summary.c_str());
}

static void test_wrappers_are_no_setting_of_their_own(void) {
    // nope, nope+abacus and fire+rand in two presets: the settings are told apart by model alone,
    // and each preset's column ranks all three. OOD nope 0.1, nope+abacus 0.5, fire+rand 0.9: RR 1/3, 1/2, 1.
    std::string dir = unity_temp_dir();
    for (const char* model : {"tiny", "small"}) {
        std::string m = model;
        write_wrapped_run(dir + "/" + m + "-nope", "copy", "nope", PLAIN, 1, 0.1, m);
        write_wrapped_run(dir + "/" + m + "-nope-abacus", "copy", "nope", ABACUS, 1, 0.5, m);
        write_wrapped_run(dir + "/" + m + "-fire-rand", "copy", "fire", RANDOM_POSITIONS, 1, 0.9, m);
    }
    std::string summary = write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("### copy [model=small]\n") != std::string::npos && md.find("### copy [model=tiny]\n") != std::string::npos,
                        md.c_str());
    TEST_ASSERT_MESSAGE(md.find("random-positions") == std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("abacus=") == std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("the runs of a task also differ in model, so") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| setting model=small | 0.333 | 0.500 | 1.000 | 1 | 0 |\n") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(ends_with(summary, "MRR over 2 columns: fire+rand 1.000  nope+abacus 0.500  nope 0.333\n"), summary.c_str());
}

// a field config.json gained later, written before "train-min" as train.cu writes new fields
static void add_config_field(const std::string& dir, const std::string& field) {
    std::string config = read_text(dir + "/config.json");
    config.insert(config.find("  \"train-min\""), "  " + field + ",\n");
    write_text(dir + "/config.json", config);
}

// A sweep finished by a commit whose config.json has a new field stays one setting: runs from
// before the field have its old value. A run that sets the field otherwise is a setting apart.
static void check_a_field_added_later(const std::string& name, const std::string& old_value, const std::string& other_value) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/old-nope", "addition", "nope", 1, 0.1);  // without the field
    write_run(dir + "/new-ape", "addition", "ape", 1, 0.5);
    add_config_field(dir + "/new-ape", "\"" + name + "\": " + old_value);
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("### addition\n") != std::string::npos && md.find(name) == std::string::npos, md.c_str());
    write_run(dir + "/new-rope", "addition", "rope", 1, 0.9);
    add_config_field(dir + "/new-rope", "\"" + name + "\": " + other_value);
    write_report(dir);
    md = read_text(dir + "/report.md");
    auto label = [](const std::string& json) { return json[0] == '"' ? json.substr(1, json.size() - 2) : json; };  // a string without its quotes
    TEST_ASSERT_MESSAGE(md.find("### addition [" + name + "=" + label(old_value) + "]\n") != std::string::npos &&
                            md.find("### addition [" + name + "=" + label(other_value) + "]\n") != std::string::npos,
                        md.c_str());
    TEST_ASSERT_MESSAGE(md.find("(none)") == std::string::npos, md.c_str());
}

static void test_a_field_added_later_reads_as_its_old_value_in_older_runs(void) {
    check_a_field_added_later("zero-pad", "false", "true");
    check_a_field_added_later("pad-to-multiple", "0", "8");
    check_a_field_added_later("skip-nonfinite", "false", "true");  // the fields the paper grid's runs (335988d) lack
    check_a_field_added_later("bos", "false", "true");
    check_a_field_added_later("reverse-digits", "false", "true");
    check_a_field_added_later("index-hints", "false", "true");
    check_a_field_added_later("scratchpad", "\"none\"", "\"full\"");
}

// Three copy runs that a field does not tell apart: nope's from before the field, ape's and
// rope's with its values `a` and `b` (JSON), in the sweep `dir`. One setting: no label, one
// column (RR 1/3, 1/2, 1).
static void check_one_setting(const std::string& dir, const std::string& name, const std::string& a, const std::string& b) {
    write_run(dir + "/old-nope", "copy", "nope", 1, 0.1);  // without the field
    write_run(dir + "/ape", "copy", "ape", 1, 0.5);
    add_config_field(dir + "/ape", "\"" + name + "\": " + a);
    write_run(dir + "/rope", "copy", "rope", 1, 0.9);
    add_config_field(dir + "/rope", "\"" + name + "\": " + b);
    std::string summary = write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("### copy\n") != std::string::npos && md.find(name) == std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(ends_with(summary, "MRR over 1 columns: rope 1.000  ape 0.500  nope 0.333\n"), summary.c_str());
}

// Runs from before "precision" computed in fp32 (CPU) or tf32 (GPU), unrecorded: a tf32 run is
// one setting with them and with fp32 runs, a bf16 run a setting apart
static void test_tf32_and_fp32_runs_are_one_setting_and_bf16_runs_another(void) {
    std::string dir = unity_temp_dir();
    check_one_setting(dir, "precision", "\"tf32\"", "\"fp32\"");
    write_run(dir + "/rope-bf16", "copy", "rope", 1, 0.2);
    add_config_field(dir + "/rope-bf16", "\"precision\": \"bf16\"");
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("### copy [precision=fp32]\n") != std::string::npos && md.find("### copy [precision=bf16]\n") != std::string::npos,
                        md.c_str());
}

// Keeping snapshots changes no step of a run: runs with --keep-every, without it and from before
// it are one setting
static void test_keep_every_is_no_setting(void) {
    std::string dir = unity_temp_dir();
    check_one_setting(dir, "keep-every", "0", "500");
}

// Fused attention computes the model simple attention computes: runs with either, and runs from
// before the field, are one setting
static void test_simple_and_fused_attention_are_one_setting(void) {
    std::string dir = unity_temp_dir();
    check_one_setting(dir, "attention", "\"simple\"", "\"fused\"");
}

// A wrapped run of `pe` (OOD `wrapped_ood`) is ranked in the plain run's column (OOD
// `plain_ood`) as a method of its own, and its config field (`field`) makes no setting apart.
static void check_a_wrapped_run_is_a_rival(const std::string& pe, const Wrappers& w, double plain_ood, double wrapped_ood,
                                           const std::string& mrr, const std::string& field) {
    std::string dir = unity_temp_dir();
    write_wrapped_run(dir + "/copy-" + pe + "-s1", "copy", pe, PLAIN, 1, plain_ood);
    write_wrapped_run(dir + "/copy-" + pe + "-wrapped-s1", "copy", pe, w, 1, wrapped_ood);
    std::string summary = write_report(dir);
    TEST_ASSERT_MESSAGE(ends_with(summary, "MRR over 1 columns: " + mrr + "\n"), summary.c_str());
    TEST_ASSERT_MESSAGE(read_text(dir + "/report.md").find(field + "=") == std::string::npos, summary.c_str());
}

static void test_a_per_layer_run_is_a_rival_of_its_plain_pe(void) {
    check_a_wrapped_run_is_a_rival("cope", PER_LAYER, 0.6, 0.3, "cope 1.000  cope+layers 0.500", "pe-per-layer");
}

static void test_a_coupled_run_is_a_rival_of_its_plain_pe(void) {
    check_a_wrapped_run_is_a_rival("ape_learned", COUPLED, 0.2, 0.7, "ape_learned+coupled 1.000  ape_learned 0.500", "position-coupling");
}

static void test_two_runs_of_one_wrapped_pe_and_seed_are_the_same_run_but_a_pe_and_its_wrapped_self_are_not(void) {
    std::string dir = unity_temp_dir();
    write_wrapped_run(dir + "/a/copy-fire-s1", "copy", "fire", PLAIN, 1, 0.5);
    write_wrapped_run(dir + "/a/copy-fire-rand-s1", "copy", "fire", RANDOM_POSITIONS, 1, 0.9);
    std::string summary = write_report(dir);  // two methods of one column, not one run twice
    TEST_ASSERT_MESSAGE(ends_with(summary, "MRR over 1 columns: fire+rand 1.000  fire 0.500\n"), summary.c_str());
    write_wrapped_run(dir + "/b/copy-fire-rand-s1", "copy", "fire", RANDOM_POSITIONS, 1, 0.8);
    TEST_ASSERT_THROWS_WITH(write_report(dir), "a/copy-fire-rand-s1 and b/copy-fire-rand-s1 are the same run (copy fire+rand, seed 1)");
}

static void test_methods_are_listed_and_tie_broken_by_pe_then_plain_before_wrapped(void) {
    // an all-tied column (every method at 0): the listed order alone ranks them, RR 1, 1/2, 1/3,
    // whatever the order of their directories (here the reverse)
    std::string dir = unity_temp_dir();
    write_wrapped_run(dir + "/a-fire-rand", "copy", "fire", RANDOM_POSITIONS, 1, 0.0);
    write_wrapped_run(dir + "/b-fire", "copy", "fire", PLAIN, 1, 0.0);
    write_wrapped_run(dir + "/c-nope", "copy", "nope", PLAIN, 1, 0.0);
    std::string summary = write_report(dir);
    TEST_ASSERT_MESSAGE(ends_with(summary, "MRR over 1 columns: nope 1.000  fire 0.500  fire+rand 0.333\n"), summary.c_str());
    TEST_ASSERT_MESSAGE(read_text(dir + "/report.md").find("| scope | nope | fire | fire+rand |") != std::string::npos, summary.c_str());
    // the variants of one PE follow it in the order of their suffixes as strings
    std::vector<Method> methods = {{PE_FIRE, "+rand+abacus"}, {PE_FIRE, "+rand"}, {PE_ROPE, "+pi"}, {PE_FIRE, ""},
                                   {PE_NOPE, "+abacus"},      {PE_FIRE, "+abacus"}, {PE_NOPE, ""}};
    std::sort(methods.begin(), methods.end());
    Words names;
    for (const Method& m : methods) names.push_back(m.name());
    TEST_ASSERT_EQUAL_STRING("nope nope+abacus rope+pi fire fire+abacus fire+rand fire+rand+abacus", join_words(names));
}

static void test_single_run_plot_has_both_axis_titles_and_shaded_training_lengths(void) {
    SplitResult valid, test;
    valid.add(2, true), valid.add(3, true), test.add(4, false), test.add(5, true);
    std::string svg = accuracy_svg(valid, test, 3, "copy / nope");
    TEST_ASSERT(svg.find(">length (λ)</text>") != std::string::npos);
    TEST_ASSERT(svg.find(">exact-match accuracy</text>") != std::string::npos);
    TEST_ASSERT(svg.find(">training lengths</text>") != std::string::npos);
    TEST_ASSERT_EQUAL_INT(2, count_of(svg, "<polyline"));
    // the band covers lengths 2-3 (training's, with half a length each side): from x(1.5) to
    // x(3.5) on the plot's axis of 1.5-5.5
    SvgPlot axis(1.5, 5.5, "");
    std::string band = format_text("<rect x=\"%g\" y=\"%g\" width=\"%g\"", axis.x(1.5), axis.y(axis.y_hi), axis.x(3.5) - axis.x(1.5));
    TEST_ASSERT_MESSAGE(svg.find(band) != std::string::npos && count_of(svg, "fill-opacity=\"0.07\"") == 2, svg.c_str());  // and its legend swatch
    // valid's line in the first colour through its own points (right at 2 and 3), test's in the
    // second (wrong at 4, right at 5); the y axis labelled 0 to 1 in quarters
    std::string valid_line = format_text("stroke=\"%s\" points=\"%.1f,%.1f %.1f,%.1f \"", plot_color(0), axis.x(2), axis.y(1), axis.x(3), axis.y(1));
    std::string test_line = format_text("stroke=\"%s\" points=\"%.1f,%.1f %.1f,%.1f \"", plot_color(1), axis.x(4), axis.y(0), axis.x(5), axis.y(1));
    TEST_ASSERT_MESSAGE(svg.find(valid_line) != std::string::npos && svg.find(test_line) != std::string::npos, svg.c_str());
    TEST_ASSERT_EQUAL_INT(5, count_of(svg, "text-anchor=\"end\">"));
    TEST_ASSERT(svg.find("text-anchor=\"end\">0.75</text>") != std::string::npos && svg.find("text-anchor=\"end\">1</text>") != std::string::npos);
    // text is escaped for XML (a title, as the attention heatmaps' words, may hold <eos>)
    svg = accuracy_svg(valid, test, 3, "<eos> & \"x\"");
    TEST_ASSERT_MESSAGE(svg.find(">&lt;eos&gt; &amp; &quot;x&quot;</text>") != std::string::npos, svg.c_str());
}

// Training lengths past the plot's last length (a run trained to 8, scored at 2-3 alone) shade the
// plot to its right edge, not past it into the legend
static void test_training_lengths_past_the_plot_shade_it_to_its_edge(void) {
    SplitResult valid, test;
    valid.add(2, true), valid.add(3, false);
    std::string svg = accuracy_svg(valid, test, 8, "copy / nope");
    SvgPlot axis(1.5, 3.5, "");
    std::string band = format_text("<rect x=\"%g\" y=\"%g\" width=\"%g\"", axis.x(1.5), axis.y(axis.y_hi), axis.x(3.5) - axis.x(1.5));
    TEST_ASSERT_MESSAGE(svg.find(band) != std::string::npos, svg.c_str());
}

// A band is drawn over the plot alone: clipped at both ends, and left out where nothing of it lies
// within (training lengths all past the plotted ones, or dev/attention's reference without valid
// examples, whose band would end before it starts: an SVG width is never negative)
static void test_a_band_is_drawn_within_the_plot_or_not_at_all(void) {
    SvgPlot plot(1.5, 5.5, "");
    plot.band(-3, 9);
    plot.band(1.5, 0.5);
    plot.band(6, 8);
    std::string svg = plot.finish();
    std::string whole = format_text("<rect x=\"%g\" y=\"%g\" width=\"%g\"", plot.x(1.5), plot.y(plot.y_hi), plot.x(5.5) - plot.x(1.5));
    TEST_ASSERT_MESSAGE(svg.find(whole) != std::string::npos && count_of(svg, "fill-opacity=\"0.07\"") == 1, svg.c_str());
}

// ./train's table of accuracy by length: a row for each length of either split ("-" where the
// split has none), each rounded to 3 places, then the means over the examples
static void test_accuracy_table_has_a_row_per_length_of_either_split(void) {
    SplitResult valid, test;
    valid.add(2, true), valid.add(3, true), valid.add(3, false);
    test.add(3, true), test.add(5, false), test.add(5, true), test.add(5, true);
    char* text = nullptr;
    size_t size = 0;
    FILE* out = open_memstream(&text, &size);
    print_accuracy_table(out, valid, test);
    fclose(out);
    std::string table(text, size);
    free(text);
    TEST_ASSERT_EQUAL_STRING("  length   valid (ID)   test (OOD)\n"
                             "       2        1.000            -\n"
                             "       3        0.500        1.000\n"
                             "       5            -        0.667\n"
                             "    mean        0.667        0.750\n",
                             table.c_str());
}

// the length axis is labelled at a round step: every 5 over 1-40, and about ten labels however
// far apart the lengths are (a label per 1,000 over 0-2e9 took 16 s and 2 million labels)
static void test_length_axis_has_about_ten_labels_at_a_round_step(void) {
    auto labels = [](int lo, int hi) {
        SvgPlot plot(lo, hi, "t");
        plot.x_ticks(lo, hi);
        return plot.finish();
    };
    std::string svg = labels(1, 40);
    TEST_ASSERT_EQUAL_INT(8, count_of(svg, "text-anchor=\"middle\">"));
    TEST_ASSERT(svg.find(">5</text>") != std::string::npos && svg.find(">40</text>") != std::string::npos);
    svg = labels(0, 2000000000);
    TEST_ASSERT_EQUAL_INT(11, count_of(svg, "text-anchor=\"middle\">"));  // 0, 2e8, ..., 2e9
    TEST_ASSERT(svg.find(">2000000000</text>") != std::string::npos);
    svg = labels(-INT_MAX, INT_MAX);
    TEST_ASSERT(count_of(svg, "text-anchor=\"middle\">") <= 11);
    TEST_ASSERT(svg.find(">-2000000000</text>") != std::string::npos && svg.find(">0</text>") != std::string::npos);
}

// ----------------------------------------------------------------------------
// bad input

static void test_missing_sweep_directory_is_refused(void) {
    TEST_ASSERT_THROWS_WITH(write_report("/tmp/test_report_no_such_dir"), "sweep directory '/tmp/test_report_no_such_dir' does not exist");
}

// a report over links: a directory of links to two sweeps finds the runs of both, a run linked
// twice counts once, and a link back up the tree does not loop
static void test_linked_sweeps_are_followed_once(void) {
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++) {
        write_run(dir + "/a/copy-" + PE_NAMES[p] + "-s1", "copy", PE_NAMES[p], 1, 0.1 * p);
        write_run(dir + "/b/copy_rdc-" + std::string(PE_NAMES[p]) + "-s1", "copy_rdc", PE_NAMES[p], 1, 0.1 * p);
    }
    std::string top = dir + "/top";
    fs::create_directories(top);
    fs::create_directory_symlink(dir + "/a", top + "/a");
    fs::create_directory_symlink(dir + "/b", top + "/b");
    fs::create_directory_symlink(dir + "/a", top + "/a-again");
    fs::create_directory_symlink(top, top + "/loop");
    write_report(top);
    std::string md = read_text(top + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("- runs: 10 found, 10 finished, 0 unfinished") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("- tasks: copy copy_rdc") != std::string::npos, md.c_str());
}

static void test_directory_without_runs_is_refused(void) {
    std::string dir = unity_temp_dir();
    TEST_ASSERT_THROWS_WITH(write_report(dir), "no run directories (directories with a config.json) under");
}

static void test_malformed_results_json_is_refused_with_its_path(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/copy-nope-s1", "copy", "nope", 1, 0.5);
    write_text(dir + "/copy-nope-s1/results.json", "{\n  \"task\": \"copy\",\n  \"pe\": \"nope\",\n  \"seed\": 1,\n  \"valid\": {\"accuracy\": ");
    TEST_ASSERT_THROWS_WITH(write_report(dir), "copy-nope-s1/results.json: malformed JSON at line 5: expected a value");
}

static void test_a_majority_answer_score_outside_0_to_1_is_refused(void) {
    std::string dir = unity_temp_dir();
    Wrappers w = PLAIN;
    w.majority = 1.5;
    write_run(dir + "/copy-nope-s1", "copy", "nope", 1, 0.5, "tiny", 1.0, &w);
    TEST_ASSERT_THROWS_WITH(write_report(dir), "copy-nope-s1/results.json: field \"valid_majority_answer\" should be a fraction from 0 to 1, not 1.5000");
}

static void test_unknown_pe_in_a_config_is_refused_with_its_path(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/copy-cape-s1", "copy", "cape", 1, -1);
    TEST_ASSERT_THROWS_WITH(write_report(dir), "copy-cape-s1/config.json: unknown positional encoding 'cape' (valid: nope ape t5 alibi rope ape_learned xpos kerple_log kerple_power fire cope)");
}

static void test_the_same_run_twice_is_refused(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/a/copy-nope-s1", "copy", "nope", 1, 0.5);
    write_run(dir + "/b/copy-nope-s1", "copy", "nope", 1, 0.5);
    TEST_ASSERT_THROWS_WITH(write_report(dir), "a/copy-nope-s1 and b/copy-nope-s1 are the same run (copy nope, seed 1)");
}

// ----------------------------------------------------------------------------
// the rules at their edges: bars met exactly, percentiles, ties, settings, old runs beside new
// ones, the plots' data (each of these caught a change of the report that the tests above passed)

static Column labelled(const std::string& task, const std::string& label, uint64_t seed, std::vector<double> ood) {
    Column c = column(task, seed, ood);
    c.label = label;
    return c;
}

// report.md of copy runs of the paper's five PEs, `seeds` each, with ID accuracy id(pe, seed)
// (runs from before the majority field: the learned bar is 0.5)
static std::string report_of_copy_runs(std::vector<int> seeds, double ood, const std::function<double(int, int)>& id) {
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++)
        for (int seed : seeds)
            write_run(dir + "/copy-" + PE_NAMES[p] + "-s" + std::to_string(seed), "copy", PE_NAMES[p], seed, ood, "tiny", id(p, seed));
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    return md;
}

// the bar is reached at exactly halfway: ID 0.5 of runs from before the majority field is learned
static void test_an_id_accuracy_exactly_at_the_bar_is_learned(void) {
    std::string md = report_of_copy_runs({1}, 0.1, [](int p, int) { return p == PE_NOPE ? 0.5 : 0.2; });
    TEST_ASSERT_MESSAGE(md.find("No PE learned") == std::string::npos, md.c_str());
}

// learned is judged by a method's mean over seeds, not by its best seed: nope 0.8 and 0.0 -> mean 0.4 < 0.5
static void test_learned_uses_the_mean_over_seeds_not_the_best_seed(void) {
    std::string md = report_of_copy_runs({1, 2}, 0.0, [](int p, int seed) { return p == PE_NOPE ? (seed == 1 ? 0.8 : 0.0) : 0.2; });
    TEST_ASSERT_MESSAGE(md.find("No PE learned this task in distribution (best mean ID accuracy 0.400 < 0.500") != std::string::npos, md.c_str());
}

// a run exactly at the bar is not named as below it
static void test_a_run_exactly_at_the_bar_is_not_named(void) {
    std::string md = report_of_copy_runs({1, 2}, 0.5, [](int p, int seed) { return p == PE_ALIBI && seed == 2 ? 0.5 : 1.0; });
    TEST_ASSERT_MESSAGE(md.find("Runs that did not learn") == std::string::npos, md.c_str());
}

// the central 90% are the 5th and 95th percentiles. One task, three seeds, A first in
// two: A's MRR over a draw is (1 x wins + 1/2 x losses) / 3; P(no win) = 1/27 = 3.7%, between
// 2.5% and 5%, so the 5th percentile is one win (2/3); B's 95th percentile is two wins (5/6).
static void test_the_interval_is_the_5th_to_95th_percentile(void) {
    std::vector<Column> c = {column("a", 1, {1.0, 0.0}), column("a", 2, {1.0, 0.0}), column("a", 3, {0.0, 1.0})};
    Redrawn r = redraw_columns(c, 2, false);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 2.0 / 3, r.lo[0]);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 5.0 / 6, r.hi[1]);
}

// MRRs equal but for their last bit (sums in another order) share the first place of a draw.
// Six methods, three one-seed tasks: A ranks 1, 2, 6 and B 2, 6, 1 (both 5/9); the others lower.
static void test_mrrs_equal_but_for_rounding_share_first_place(void) {
    std::vector<Column> c = {column("a", 1, {0.9, 0.8, 0.1, 0.7, 0.6, 0.5}), column("b", 1, {0.8, 0.1, 0.9, 0.7, 0.6, 0.5}),
                             column("c", 1, {0.1, 0.9, 0.5, 0.8, 0.7, 0.6})};
    Redrawn r = redraw_columns(c, 6, false);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.5, r.first[0]);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.5, r.first[1]);
}

// a column without every method is drawn no more than it is ranked. a: A first; b lacks B.
// Only a is ranked, so B's MRR is 1/2 in every draw.
static void test_an_incomplete_column_is_never_drawn(void) {
    Redrawn r = redraw_columns({column("a", 1, {1.0, 0.0}), column("b", 1, {0.0, NAN})}, 2, false);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.5, r.lo[1]);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.5, r.hi[1]);
}

// two settings of one task are two tasks when drawn again: one seed each, tasks kept, nothing moves
static void test_the_settings_of_a_task_are_drawn_as_tasks_apart(void) {
    Redrawn r = redraw_columns({labelled("copy", "model=tiny", 1, {1.0, 0.0}), labelled("copy", "model=small", 1, {0.0, 1.0})}, 2, false);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.75, r.lo[0]);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.75, r.hi[0]);
}

// a run with both wrappers is named "+rand+abacus" (config.json's order of the top comment)
static void test_rand_comes_before_abacus_in_a_name(void) {
    std::string dir = unity_temp_dir();
    write_wrapped_run(dir + "/copy-nope", "copy", "nope", PLAIN, 1, 0.1);
    write_wrapped_run(dir + "/copy-nope-rand-abacus", "copy", "nope", Wrappers{256, true, "none"}, 1, 0.9);
    TEST_ASSERT_MESSAGE(ends_with(write_report(dir), "MRR over 1 columns: nope+rand+abacus 1.000  nope 0.500\n"), dir.c_str());
}

// the per-token mean is over the seeds that record it; the min-max is over all seeds.
// nope seed 1 from before test_tokens (OOD 0.8), seed 2 now (OOD 0.2, per-token 0.6)
static void test_a_method_row_mixes_old_and_new_seeds(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/copy-nope-s1", "copy", "nope", 1, 0.8);
    write_wrapped_run(dir + "/copy-nope-s2", "copy", "nope", PLAIN, 2, 0.2);
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("| nope | 0.500 | 0.200-0.800 | 1.000 | 2 | 1.000 | 2 of 2 | 0.600 |\n") != std::string::npos, md.c_str());
}

// the OOD majority score is test_majority_answer's, not valid_majority_answer's
static void test_the_ood_majority_score_is_read_from_its_own_field(void) {
    std::string dir = unity_temp_dir();
    Wrappers w = PLAIN;
    w.majority = 0.5;
    write_run(dir + "/parity-nope", "parity", "nope", 1, 0.5, "tiny", 1.0, &w);
    std::string results = read_text(dir + "/parity-nope/results.json");
    results.replace(results.find("\"test_majority_answer\": 0.5000"), 30, "\"test_majority_answer\": 0.2500");
    write_text(dir + "/parity-nope/results.json", results);
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("The most common answer, always given, scores 0.500 ID and 0.250 OOD.") != std::string::npos, md.c_str());
}

// a family is the name up to the FIRST underscore
static void test_a_family_ends_at_the_first_underscore(void) {
    TEST_ASSERT_EQUAL_STRING("ch", family_of("ch_binary_addition"));
}

// an unfinished run labels no setting
static void test_an_unfinished_run_labels_no_setting(void) {
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++) write_run(dir + "/tiny-" + PE_NAMES[p], "copy", PE_NAMES[p], 1, 0.1 * p, "tiny");
    write_run(dir + "/small-nope", "copy", "nope", 1, -1, "small");
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("### copy\n") != std::string::npos && md.find("model=") == std::string::npos, md.c_str());
}

// the tasks some PE learned are told apart by setting: copy [model=tiny] learned (ID 1),
// copy [model=small] not (ID 0.2): the MRR over the learned tasks is over tiny's one column
static void test_a_setting_no_pe_learned_is_left_out_of_the_learned_mrr(void) {
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++) {
        write_run(dir + "/tiny-" + PE_NAMES[p], "copy", PE_NAMES[p], 1, p == PE_NOPE ? 1.0 : 0.1 * p, "tiny");
        write_run(dir + "/small-" + PE_NAMES[p], "copy", PE_NAMES[p], 1, p == PE_ROPE ? 1.0 : 0.1 * p, "small", 0.2);
    }
    std::string summary = write_report(dir);
    TEST_ASSERT_MESSAGE(summary.find("MRR over the tasks some PE learned (1 columns): nope 1.000  rope 0.500  alibi 0.333  t5 0.250  ape 0.200\n") !=
                            std::string::npos,
                        summary.c_str());
}

// "first in" follows the MRR's rule, tie-break included: nope and ape tied at 1.0, nope listed first
static void test_first_in_gives_a_tie_to_the_method_listed_first(void) {
    std::string dir = unity_temp_dir();
    const double ood[NUM_PAPER_PES] = {1.0, 1.0, 0.5, 0.3, 0.2};
    for (int p = 0; p < NUM_PAPER_PES; p++) write_run(dir + "/copy-" + PE_NAMES[p], "copy", PE_NAMES[p], 1, ood[p]);
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("| nope | 1.000 | 1.000-1.000 | 1.000 | 1 | 1.000 | 1 of 1 | - |\n") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| ape | 1.000 | 1.000-1.000 | 1.000 | 1 | 0.500 | 0 of 1 | - |\n") != std::string::npos, md.c_str());
}

// a task plot's data. One task, nope (place 0) and ape (place 1), one seed:
// ID 1.0 at lengths 2-4, OOD 0.5 (nope) and 0.0 (ape) at 5-6; axis 1.5-6.5, training band to 4.5
static void test_a_task_plot_draws_every_length_and_its_methods_colour(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/copy-nope", "copy", "nope", 1, 0.5);
    write_run(dir + "/copy-ape", "copy", "ape", 1, 0.0);
    write_report(dir);
    std::string svg = read_text(dir + "/copy.svg");
    SvgPlot axis(1.5, 6.5, "");
    std::string nope_line;
    for (int length = 2; length <= 6; length++) nope_line += format_text("%.1f,%.1f ", axis.x(length), axis.y(length <= 4 ? 1.0 : 0.5));
    TEST_ASSERT_MESSAGE(svg.find("stroke=\"" + std::string(plot_color(0)) + "\" points=\"" + nope_line + "\"") != std::string::npos, svg.c_str());
    std::string band = format_text("<rect x=\"%g\" y=\"%g\" width=\"%g\"", axis.x(1.5), axis.y(1), axis.x(4.5) - axis.x(1.5));
    TEST_ASSERT_MESSAGE(svg.find(band) != std::string::npos, svg.c_str());
    TEST_ASSERT_EQUAL_INT(5, count_of(svg, "fill=\"" + std::string(plot_color(1)) + "\" fill-opacity=\"0.3\""));  // ape's dots
}

// each bar of mrr.svg is its own method's MRR (0.750 ... 0.233 in the small sweep's values)
static void test_mrr_bars_carry_their_own_values(void) {
    Mrr m;
    m.of_method = {0.75, 0.5, 0.25};
    m.columns = 1;
    std::vector<Method> ranked = {{PE_NOPE, ""}, {PE_APE, ""}, {PE_ROPE, ""}};
    std::string svg = mrr_svg(m, ranked, "t");
    for (const char* v : {">0.750</text>", ">0.500</text>", ">0.250</text>"}) TEST_ASSERT_EQUAL_INT_MESSAGE(1, count_of(svg, v), svg.c_str());
}

// over copy (2 seeds, nope first) and copy_rdc (1 seed, ape first), tasks drawn again:
// (rdc, rdc) a quarter of the draws, ape first; otherwise nope. nope's MRR: 1, 0.75 or 0.25
static std::string small_sweep_summary(const std::string& dir, std::string* md) {
    const double copy[NUM_PAPER_PES] = {1.0, 0.0, 0.5, 0.5, 0.2}, rdc[NUM_PAPER_PES] = {0.2, 1.0, 0.5, 0.6, 0.0};
    for (int p = 0; p < NUM_PAPER_PES; p++) {
        for (int seed : {1, 2}) write_run(dir + "/copy-" + PE_NAMES[p] + "-s" + std::to_string(seed), "copy", PE_NAMES[p], seed, copy[p]);
        write_run(dir + "/copy_rdc-" + std::string(PE_NAMES[p]) + "-s1", "copy_rdc", PE_NAMES[p], 1, rdc[p]);
    }
    std::string summary = write_report(dir);
    *md = read_text(dir + "/report.md");
    return summary;
}
static void test_the_summary_and_table_give_the_tasks_drawn_again(void) {
    std::string dir = unity_temp_dir(), md;
    std::string summary = small_sweep_summary(dir, &md);
    size_t at = summary.find("first by MRR in 10000 draws of the tasks and their seeds (report.md, \"How sure\"): nope ");
    TEST_ASSERT_MESSAGE(at != std::string::npos, summary.c_str());
    double nope = atof(summary.c_str() + summary.find("nope ", at) + 5);
    TEST_ASSERT_DOUBLE_WITHIN(SHARE_OF_DRAWS, 0.75, nope);
    at = md.find("| **all** (3 columns, 2 tasks) | nope | 0.750 | 0.750-0.750 | 1.00 | 0.250-1.000 | ");
    TEST_ASSERT_MESSAGE(at != std::string::npos, md.c_str());
    TEST_ASSERT_DOUBLE_WITHIN(SHARE_OF_DRAWS, 0.75, atof(md.c_str() + md.find("0.250-1.000 | ", at) + 14));
}

// a results.json whose seed is not its config.json's is refused
static void test_results_of_another_seed_are_refused(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/copy-nope-s1", "copy", "nope", 1, 0.5);
    std::string results = read_text(dir + "/copy-nope-s1/results.json");
    results.replace(results.find("\"seed\": 1,"), 10, "\"seed\": 2,");
    write_text(dir + "/copy-nope-s1/results.json", results);
    TEST_ASSERT_THROWS_WITH(write_report(dir), "copy-nope-s1/results.json: task, pe or seed differ from the run's config.json");
}

// a backslash keeps the next character
static void test_a_backslash_keeps_the_next_character(void) {
    TEST_ASSERT_EQUAL_STRING("a\"b", parse_json("\"a\\\"b\"", "x.json").text);
}

// every field added later reads as its old value (pack, cope-max, sort-pool too)
static void test_the_remaining_fields_added_later(void) {
    check_a_field_added_later("pack", "false", "true");
    check_a_field_added_later("cope-max", "0", "16");
    check_a_field_added_later("sort-pool", "0", "100");
}

// the ranked and dropped counts of a scope's row: copy s2 lacks rope
static void test_a_scopes_row_counts_its_dropped_columns(void) {
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++)
        for (int seed : {1, 2})
            if (!(p == PE_ROPE && seed == 2)) write_run(dir + "/copy-" + PE_NAMES[p] + "-s" + std::to_string(seed), "copy", PE_NAMES[p], seed, 0.1 * p);
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("| **all** | 0.200 | 0.250 | 0.333 | 0.500 | 1.000 | 1 | 1 |\n") != std::string::npos, md.c_str());
}

// learned is judged by each method's own mean, a wrapped PE apart from its plain PE: nope ID 0.2
// and nope+rand ID 0.6 (bar 0.5). nope+rand learned the task, so the task is learned and nope's
// run is named below the bar; pooled as one PE they would average 0.4 and nothing learned it.
static void test_a_wrapped_pe_that_learned_a_task_is_judged_apart_from_its_plain_pe(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/copy-nope", "copy", "nope", 1, 0.5, "tiny", 0.2, &PLAIN);
    write_run(dir + "/copy-nope-rand", "copy", "nope", 1, 0.5, "tiny", 0.6, &RANDOM_POSITIONS);
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("No PE learned") == std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("(ID accuracy < 0.500): nope seed 1 (0.200).") != std::string::npos, md.c_str());
}

// the summary lists MRRs best first even where they differ by less than a thousandth (0.5004
// ahead of 0.5000, though both print as 0.500): only differences below 1e-9 count as ties
static void test_mrrs_a_ten_thousandth_apart_are_listed_best_first(void) {
    Mrr m;
    m.of_method = {0.5, 0.5004};
    m.columns = 1;
    TEST_ASSERT_EQUAL_STRING("ape 0.500  nope 0.500", mrr_line(m, {{PE_NOPE, ""}, {PE_APE, ""}}).c_str());
}

// the draws are seeded: the same columns drawn again give the same shares and intervals to the
// last bit, so a sweep always gives the same report
static void test_the_same_columns_drawn_again_give_the_same_draws(void) {
    std::vector<Column> c = {column("a", 1, {1.0, 0.0}), column("a", 2, {0.0, 1.0}), column("b", 1, {1.0, 0.0})};
    for (bool redraw_tasks : {false, true}) {
        Redrawn r1 = redraw_columns(c, 2, redraw_tasks), r2 = redraw_columns(c, 2, redraw_tasks);
        for (size_t k = 0; k < 2; k++) {
            TEST_ASSERT_TRUE(r1.first[k] == r2.first[k]);
            TEST_ASSERT_TRUE(r1.lo[k] == r2.lo[k]);
            TEST_ASSERT_TRUE(r1.hi[k] == r2.hi[k]);
        }
    }
}

// the interval's low end is the 5th percentile, not the 10th. One task, four seeds, A first in
// two: A's MRR over a draw is (wins + losses / 2) / 4; P(no win) = 1/16 = 6.25% > 5%, so the 5th
// percentile is no win (0.5), while P(at most one win) = 5/16 puts the 10th at one win (0.625).
static void test_the_interval_starts_at_the_5th_percentile_not_the_10th(void) {
    std::vector<Column> c = {column("a", 1, {1.0, 0.0}), column("a", 2, {1.0, 0.0}), column("a", 3, {0.0, 1.0}), column("a", 4, {0.0, 1.0})};
    Redrawn r = redraw_columns(c, 2, false);
    TEST_ASSERT_DOUBLE_WITHIN(MEAN_OF_FRACTIONS, 0.5, r.lo[0]);
}

// a task plot's line is each length's mean over the seeds, and every seed's dots are in its
// method's colour: nope seeds OOD 0.2 and 0.6 -> the line at 0.4 at lengths 5-6; 2 x 5 dots in
// place 0's colour (ID 1.0 at lengths 2-4)
static void test_a_task_plot_line_is_the_mean_over_seeds_and_dots_take_the_methods_colour(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/copy-nope-s1", "copy", "nope", 1, 0.2);
    write_run(dir + "/copy-nope-s2", "copy", "nope", 2, 0.6);
    write_report(dir);
    std::string svg = read_text(dir + "/copy.svg");
    SvgPlot axis(1.5, 6.5, "");
    std::string mean_line;
    for (int length = 2; length <= 6; length++) mean_line += format_text("%.1f,%.1f ", axis.x(length), axis.y(length <= 4 ? 1.0 : 0.4));
    TEST_ASSERT_MESSAGE(svg.find("stroke=\"" + std::string(plot_color(0)) + "\" points=\"" + mean_line + "\"") != std::string::npos, svg.c_str());
    TEST_ASSERT_EQUAL_INT(10, count_of(svg, "fill=\"" + std::string(plot_color(0)) + "\" fill-opacity=\"0.3\""));
}

// each bar of mrr.svg is in its method's colour, the colour of its lines in the task plots
static void test_mrr_bars_take_their_methods_colour(void) {
    Mrr m;
    m.of_method = {0.75, 0.5, 0.25};
    m.columns = 1;
    std::string svg = mrr_svg(m, {{PE_NOPE, ""}, {PE_APE, ""}, {PE_ROPE, ""}}, "t");
    for (size_t k = 0; k < 3; k++) TEST_ASSERT_EQUAL_INT_MESSAGE(1, count_of(svg, "fill=\"" + std::string(plot_color(k)) + "\"/>"), svg.c_str());
}

// one all-tied column is enough for the row without it: copy ranks rope, alibi, t5, ape, nope
// (OOD 0.1 x place) and copy_rdc ties every PE at 0; without copy_rdc the MRR is copy's alone
static void test_a_single_all_tied_column_gets_its_row_without_it(void) {
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++) {
        write_run(dir + "/copy-" + PE_NAMES[p], "copy", PE_NAMES[p], 1, 0.1 * p);
        write_run(dir + "/copy_rdc-" + PE_NAMES[p], "copy_rdc", PE_NAMES[p], 1, 0.0);
    }
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("| **all**, without 1 all-tied column | 0.200 | 0.250 | 0.333 | 0.500 | 1.000 | 1 | 0 |\n") != std::string::npos, md.c_str());
}

// report.md of a sweep with a dropped and an all-tied column: copy seed 1 ties every PE at 0,
// copy seed 2 ranks them by OOD 0.1 x place, copy_rdc's one seed lacks rope (dropped)
static std::string report_with_a_dropped_and_an_all_tied_column(void) {
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++) {
        write_run(dir + "/copy-" + PE_NAMES[p] + "-s1", "copy", PE_NAMES[p], 1, 0.0);
        write_run(dir + "/copy-" + PE_NAMES[p] + "-s2", "copy", PE_NAMES[p], 2, 0.1 * p);
        if (p != PE_ROPE) write_run(dir + "/copy_rdc-" + PE_NAMES[p], "copy_rdc", PE_NAMES[p], 1, 0.1 * p);
    }
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    return md;
}

// the MRR section's note counts the all-tied columns among the ranked ones (1 of 2, the dropped
// column not among them) and names the method the tie-break favours: nope, listed first
static void test_the_all_tied_note_counts_ranked_columns_and_names_the_first_listed_method(void) {
    std::string md = report_with_a_dropped_and_an_all_tied_column();
    TEST_ASSERT_MESSAGE(md.find("1 of the 2 ranked columns are all tied") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("handing nope a free 1") != std::string::npos, md.c_str());
}

// the note's count of tasks is of every task with a finished run, a task whose columns were all
// dropped included (copy_rdc, learned), as the unlearned tasks it counts are
static void test_the_unlearned_note_counts_every_task(void) {
    std::string md = report_with_a_dropped_and_an_all_tied_column();
    TEST_ASSERT_MESSAGE(md.find("0 of the 2 tasks were learned by no PE") != std::string::npos, md.c_str());
}

// a task table counts its own all-tied columns: copy's seed 1 of its 2
static void test_a_task_table_counts_its_all_tied_columns(void) {
    std::string md = report_with_a_dropped_and_an_all_tied_column();
    TEST_ASSERT_MESSAGE(md.find("### copy\n\nID (valid) lengths 2-4, OOD (test) lengths 5-6; seeds with a finished run of every method: 2, 1 of them "
                                "all tied") != std::string::npos,
                        md.c_str());
}

// "How sure" counts the tasks that have a ranked column (copy; copy_rdc was dropped), and the
// MRR table has a row per family (copy_rdc is of family copy), not per task
static void test_how_sure_counts_ranked_tasks_and_the_mrr_table_rows_are_families(void) {
    std::string md = report_with_a_dropped_and_an_all_tied_column();
    TEST_ASSERT_MESSAGE(md.find("| **all** (2 columns, 1 tasks) |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| family copy |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| family copy_rdc") == std::string::npos, md.c_str());
}

// "How sure" draws the tasks some PE learned apart only when they have two ranked columns:
// copy (learned, one seed) and copy_rdc (ID 0.2, not learned, one seed) draw only all columns
static void test_one_learned_column_is_not_drawn_again_apart(void) {
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++) {
        write_run(dir + "/copy-" + PE_NAMES[p], "copy", PE_NAMES[p], 1, 0.1 * p);
        write_run(dir + "/copy_rdc-" + PE_NAMES[p], "copy_rdc", PE_NAMES[p], 1, 0.1 * p, "tiny", 0.2);
    }
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("| **all** (2 columns, 2 tasks) |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| the tasks some PE learned (") == std::string::npos, md.c_str());
}

// a task table counts only the ranked columns: copy_rdc's one seed lacks rope, so it is dropped:
// no seed has every method, and alibi, though it leads that seed, is first in 0 of 0
static void test_a_task_table_counts_only_its_ranked_columns(void) {
    std::string md = report_with_a_dropped_and_an_all_tied_column();
    TEST_ASSERT_MESSAGE(md.find("### copy_rdc\n\nID (valid) lengths 2-4, OOD (test) lengths 5-6; seeds with a finished run of every method: 0.\n") !=
                            std::string::npos,
                        md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| alibi | 0.300 | 0.300-0.300 | 1.000 | 1 | - | 0 of 0 | - |\n") != std::string::npos, md.c_str());
}

// the runs below the bar are named by method in the listed order, then by seed: nope ID 0.2 and
// 0.3 (seeds 1, 2), alibi seed 2 ID 0.4, every other run 1.0 (the bar: 0.5)
static void test_runs_below_the_bar_are_named_by_method_then_seed(void) {
    std::string md = report_of_copy_runs({1, 2}, 0.5, [](int p, int seed) {
        return p == PE_NOPE ? (seed == 1 ? 0.2 : 0.3) : p == PE_ALIBI && seed == 2 ? 0.4 : 1.0;
    });
    TEST_ASSERT_MESSAGE(md.find("(ID accuracy < 0.500): nope seed 1 (0.200), nope seed 2 (0.300), alibi seed 2 (0.400).") != std::string::npos,
                        md.c_str());
}

// copy (learned) with nope and rope tied at OOD 1.0, then alibi 0.3, t5 0.2, ape 0.1; copy_rdc
// (ID 0.2, not learned) ranked rope, alibi, t5, ape, nope (OOD 0.1 x place). Returns the summary.
static std::string report_of_a_tie_in_a_learned_task(const std::string& dir) {
    for (int p = 0; p < NUM_PAPER_PES; p++) {
        write_run(dir + "/copy-" + PE_NAMES[p], "copy", PE_NAMES[p], 1, p == PE_NOPE || p == PE_ROPE ? 1.0 : 0.1 * p);
        write_run(dir + "/copy_rdc-" + PE_NAMES[p], "copy_rdc", PE_NAMES[p], 1, 0.1 * p, "tiny", 0.2);
    }
    return write_report(dir);
}

// the summary's MRR over the learned tasks with ties shared shares them: in copy nope and rope
// each get (1 + 1/2) / 2; copy_rdc is left out
static void test_the_summarys_learned_mrr_with_ties_shared_shares_them(void) {
    std::string dir = unity_temp_dir();
    std::string summary = report_of_a_tie_in_a_learned_task(dir);
    TEST_ASSERT_MESSAGE(summary.find("MRR over the tasks some PE learned, ties shared (1 columns): nope 0.750  rope 0.750  alibi 0.333  t5 0.250  "
                                     "ape 0.200\n") != std::string::npos,
                        summary.c_str());
}

// "How sure" labels the rows with ties shared as such: rope's MRR over both columns is 0.750 by
// the listed order (1/2 in copy, 1 in copy_rdc) and 0.875 with ties shared (3/4, 1)
static void test_how_sure_labels_its_rows_with_ties_shared(void) {
    std::string dir = unity_temp_dir();
    report_of_a_tie_in_a_learned_task(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("| **all** (2 columns, 2 tasks) | rope | 0.750 |") != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| **all** (2 columns, 2 tasks), ties shared | rope | 0.875 |") != std::string::npos, md.c_str());
}

// a majority score of exactly 1 (every answer the same) is a fraction like any other, not refused
static void test_a_majority_answer_score_of_exactly_1_is_read(void) {
    std::string dir = unity_temp_dir();
    Wrappers w = PLAIN;
    w.majority = 1.0;
    write_run(dir + "/copy-nope", "copy", "nope", 1, 1.0, "tiny", 1.0, &w);
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("The most common answer, always given, scores 1.000 ID and 1.000 OOD.") != std::string::npos, md.c_str());
}

// a results.json that says it evaluated anything but the best checkpoint, the latest or a
// snapshot is refused, with the values it may have
static void test_an_unknown_evaluated_value_is_refused(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/copy-nope", "copy", "nope", 1, 0.5);
    std::string results = read_text(dir + "/copy-nope/results.json");
    results.insert(results.find(",\n  \"steps\""), ",\n  \"evaluated\": \"final\"");
    write_text(dir + "/copy-nope/results.json", results);
    TEST_ASSERT_THROWS_WITH(write_report(dir), "copy-nope/results.json: \"evaluated\" is 'final' (valid: best latest snapshot)");
}

// a setting's plot keeps the dots of its label's numbers: copy runs with lr 0.003 and 0.001 are
// two settings, copy [lr=0.003] and copy [lr=0.001], plotted in copy-lr-0.003.svg and copy-lr-0.001.svg
static void test_a_settings_plot_name_keeps_the_dots_of_its_label(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/copy-nope-a", "copy", "nope", 1, 0.5);
    write_run(dir + "/copy-nope-b", "copy", "nope", 1, 0.5);
    std::string config = read_text(dir + "/copy-nope-b/config.json");
    config.replace(config.find("\"lr\": 0.003"), 11, "\"lr\": 0.001");
    write_text(dir + "/copy-nope-b/config.json", config);
    write_report(dir);
    TEST_ASSERT_MESSAGE(fs::exists(dir + "/copy-lr-0.003.svg") && fs::exists(dir + "/copy-lr-0.001.svg"), read_text(dir + "/report.md").c_str());
}

// each setting's table ranks only its own columns: copy [model=tiny] has nope first (OOD 1.0 to
// ape's 0.0), copy [model=small] ape first; in small's table one seed is ranked and nope's MRR is 1/2
static void test_a_settings_table_ranks_only_its_own_columns(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/tiny-nope", "copy", "nope", 1, 1.0, "tiny");
    write_run(dir + "/tiny-ape", "copy", "ape", 1, 0.0, "tiny");
    write_run(dir + "/small-nope", "copy", "nope", 1, 0.0, "small");
    write_run(dir + "/small-ape", "copy", "ape", 1, 1.0, "small");
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    size_t small = md.find("### copy [model=small]\n");
    TEST_ASSERT_MESSAGE(small != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("seeds with a finished run of every method: 1.", small) != std::string::npos, md.c_str());
    TEST_ASSERT_MESSAGE(md.find("| nope | 0.000 | 0.000-0.000 | 1.000 | 1 | 0.500 | 0 of 1 | - |\n", small) != std::string::npos, md.c_str());
}

// with no all-tied column the summary says so, out of the ranked columns: copy seed 2 lacks rope,
// so 1 of the 2 columns is ranked
static void test_the_summary_counts_no_all_tied_column_among_the_ranked(void) {
    std::string dir = unity_temp_dir();
    for (int p = 0; p < NUM_PAPER_PES; p++)
        for (int seed : {1, 2})
            if (!(p == PE_ROPE && seed == 2)) write_run(dir + "/copy-" + PE_NAMES[p] + "-s" + std::to_string(seed), "copy", PE_NAMES[p], seed, 0.1 * p);
    std::string summary = write_report(dir);
    TEST_ASSERT_MESSAGE(summary.find("all-tied columns: none of 1\n") != std::string::npos, summary.c_str());
}

// the wrappers of a name follow the top comment's order: abacus before coupled
static void test_abacus_comes_before_coupled_in_a_name(void) {
    std::string dir = unity_temp_dir();
    write_wrapped_run(dir + "/copy-nope", "copy", "nope", PLAIN, 1, 0.1);
    write_wrapped_run(dir + "/copy-nope-abacus-coupled", "copy", "nope", Wrappers{0, true, "none", true}, 1, 0.9);
    TEST_ASSERT_MESSAGE(ends_with(write_report(dir), "MRR over 1 columns: nope+abacus+coupled 1.000  nope 0.500\n"), dir.c_str());
}

// the header gives the model presets and the steps of the runs (tiny: 2000, small: 10000)
static void test_the_header_gives_the_presets_and_steps(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/tiny-nope", "copy", "nope", 1, 0.5, "tiny");
    write_run(dir + "/small-nope", "copy", "nope", 1, 0.5, "small");
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("- model presets: small, tiny; steps: 10000, 2000\n") != std::string::npos, md.c_str());
}

// a task plot's legend names only the methods run in that task, and the summary counts one plot
// a task (three tasks, two methods): nope and ape in copy, nope alone in copy_rdc and copy_rev
static void test_a_task_plots_legend_has_only_its_methods_and_the_summary_counts_the_plots(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/copy-nope", "copy", "nope", 1, 0.5);
    write_run(dir + "/copy-ape", "copy", "ape", 1, 0.2);
    write_run(dir + "/copy_rdc-nope", "copy_rdc", "nope", 1, 0.5);
    write_run(dir + "/copy_rev-nope", "copy_rev", "nope", 1, 0.5);
    std::string summary = write_report(dir);
    TEST_ASSERT_MESSAGE(summary.find("mrr.svg and 3 task plots\n") != std::string::npos, summary.c_str());
    std::string svg = read_text(dir + "/copy_rdc.svg");
    TEST_ASSERT_MESSAGE(svg.find(">nope (1 seed)</text>") != std::string::npos && svg.find(">ape (") == std::string::npos, svg.c_str());
}

// parity runs whose answers are half yes (valid_majority_answer 0.5, so the bar is 0.75) and
// whose OOD majority is 0.25, the ID accuracy of each PE given; returns report.md
static std::string report_of_parity_runs(const std::map<std::string, double>& id_of_pe) {
    std::string dir = unity_temp_dir();
    Wrappers w = PLAIN;
    w.majority = 0.5;
    for (const auto& pe : id_of_pe) {
        std::string run = dir + "/parity-" + pe.first;
        write_run(run, "parity", pe.first, 1, 0.5, "tiny", pe.second, &w);
        std::string results = read_text(run + "/results.json");
        results.replace(results.find("\"test_majority_answer\": 0.5000"), 30, "\"test_majority_answer\": 0.2500");
        write_text(run + "/results.json", results);
    }
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    return md;
}

// the note on a task no PE learned gives the bar's ID majority score (0.5), not the OOD one (0.25)
static void test_the_unlearned_note_gives_the_id_majority_score(void) {
    std::string md = report_of_parity_runs({{"nope", 0.6}});
    TEST_ASSERT_MESSAGE(md.find("(best mean ID accuracy 0.600 < 0.750, halfway from the most common answer's 0.500 to 1)") != std::string::npos,
                        md.c_str());
}

// a run is named below the bar of its task, here 0.75 for a yes-or-no question: ape's ID 0.6
// passes 0.5 but not that bar (nope's 1.0 learned the task)
static void test_a_run_is_named_below_its_tasks_own_bar(void) {
    std::string md = report_of_parity_runs({{"nope", 1.0}, {"ape", 0.6}});
    TEST_ASSERT_MESSAGE(md.find("(ID accuracy < 0.750): ape seed 1 (0.600).") != std::string::npos, md.c_str());
}

// the summary lists the shares of draws each method leads best first. Four one-seed tasks rank
// four PEs (rank 1..4: OOD 0.9, 0.6, 0.3, 0); ape, second everywhere, has the second MRR (1/2)
// but leads no draw (t5 41/64, alibi 13/64, nope 10/64), so the share order is not the MRR order
static void test_the_summary_lists_the_shares_of_first_place_best_first(void) {
    std::string dir = unity_temp_dir();
    const std::vector<std::vector<std::string>> ranking = {
        {"nope", "ape", "t5", "alibi"}, {"t5", "ape", "alibi", "nope"}, {"alibi", "ape", "t5", "nope"}, {"t5", "ape", "alibi", "nope"}};
    for (size_t t = 0; t < ranking.size(); t++)
        for (size_t r = 0; r < 4; r++) {
            std::string task = "copy_" + std::to_string(t);
            write_run(dir + "/" + task + "-" + ranking[t][r], task, ranking[t][r], 1, 0.9 - 0.3 * r);
        }
    std::string summary = write_report(dir);
    std::string head = "first by MRR in 10000 draws of the tasks and their seeds (report.md, \"How sure\"): ";
    size_t at = summary.find(head);
    TEST_ASSERT_MESSAGE(at != std::string::npos, summary.c_str());
    std::istringstream line(summary.substr(at + head.size(), summary.find('\n', at) - at - head.size()));
    std::string name;
    double share, previous = 1;
    int methods = 0;
    for (; line >> name >> share; methods++) {
        TEST_ASSERT_MESSAGE(share <= previous, summary.c_str());
        previous = share;
    }
    TEST_ASSERT_EQUAL_INT_MESSAGE(4, methods, summary.c_str());
}

// an unfinished run is listed under its task and setting: copy [model=small]
static void test_an_unfinished_run_is_listed_with_its_setting(void) {
    std::string dir = unity_temp_dir();
    write_run(dir + "/tiny-nope", "copy", "nope", 1, 0.5, "tiny");
    write_run(dir + "/small-nope", "copy", "nope", 1, 0.5, "small");
    write_run(dir + "/small-ape", "copy", "ape", 1, -1, "small");
    write_report(dir);
    std::string md = read_text(dir + "/report.md");
    TEST_ASSERT_MESSAGE(md.find("- `small-ape`: copy [model=small], ape, seed 1\n") != std::string::npos, md.c_str());
}

// mrr.svg of a sweep where no column has every method says so instead of drawing bars
static void test_mrr_plot_without_a_ranked_column_says_so(void) {
    Mrr m;
    m.of_method = {NAN, NAN};
    std::string svg = mrr_svg(m, {{PE_NOPE, ""}, {PE_APE, ""}}, "t");
    TEST_ASSERT_MESSAGE(svg.find(">no (task, seed) has a finished run of every method</text>") != std::string::npos, svg.c_str());
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_mrr_matches_a_hand_computation_with_ties_and_a_dropped_column);
    RUN_TEST(test_reciprocal_ranks_of_a_column_are_a_permutation_of_one_over_one_to_five);
    RUN_TEST(test_shared_ties_give_each_tied_method_the_mean_of_its_blocks_reciprocal_ranks);
    RUN_TEST(test_latest_and_snapshot_evaluations_are_methods_of_their_own);
    RUN_TEST(test_equal_mrrs_are_listed_in_the_listed_order);
    RUN_TEST(test_mrr_without_all_tied_columns_matches_a_hand_computation);
    RUN_TEST(test_a_column_is_all_tied_only_when_every_ranked_method_has_the_same_accuracy);
    RUN_TEST(test_only_the_methods_a_sweep_finished_are_ranked);
    RUN_TEST(test_drawing_again_the_one_seed_of_each_task_moves_nothing);
    RUN_TEST(test_two_tasks_that_disagree_share_first_place_by_the_law_of_the_draw);
    RUN_TEST(test_seeds_are_drawn_again_within_their_task_and_a_task_keeps_its_count);
    RUN_TEST(test_ties_shared_draws_share_a_tied_first_place);
    RUN_TEST(test_families_group_task_variants_by_the_name_before_the_underscore);
    RUN_TEST(test_settings_are_labelled_by_the_fewest_fields_that_tell_them_apart);
    RUN_TEST(test_fields_that_differ_only_between_tasks_label_nothing);
    RUN_TEST(test_json_reader_reads_results_json_in_train_cu_format);
    RUN_TEST(test_json_split_reads_back_as_the_same_counts);
    RUN_TEST(test_malformed_json_is_refused_with_file_and_line);
    RUN_TEST(test_json_nested_past_the_limit_is_refused);
    RUN_TEST(test_int_fields_must_be_whole_numbers_an_int_holds);
    RUN_TEST(test_report_of_a_small_sweep_has_the_expected_mrr_and_plots);
    RUN_TEST(test_a_report_of_one_column_draws_nothing_again);
    RUN_TEST(test_report_gives_the_mrr_without_all_tied_columns_and_flags_a_task_no_pe_learned);
    RUN_TEST(test_report_gives_the_mrr_over_the_tasks_some_pe_learned);
    RUN_TEST(test_a_run_below_the_bar_of_a_learned_task_is_named_under_its_table);
    RUN_TEST(test_a_task_is_learned_halfway_from_what_the_most_common_answer_scores);
    RUN_TEST(test_runs_of_different_presets_are_never_ranked_against_each_other);
    RUN_TEST(test_wrapped_pes_are_ranked_as_methods_of_their_own_in_the_plain_pes_column);
    RUN_TEST(test_an_evaluation_at_drawn_positions_is_a_method_of_its_own);
    RUN_TEST(test_an_evaluation_with_a_window_is_a_method_of_its_own);
    RUN_TEST(test_wrappers_are_no_setting_of_their_own);
    RUN_TEST(test_a_field_added_later_reads_as_its_old_value_in_older_runs);
    RUN_TEST(test_tf32_and_fp32_runs_are_one_setting_and_bf16_runs_another);
    RUN_TEST(test_keep_every_is_no_setting);
    RUN_TEST(test_simple_and_fused_attention_are_one_setting);
    RUN_TEST(test_a_coupled_run_is_a_rival_of_its_plain_pe);
    RUN_TEST(test_a_per_layer_run_is_a_rival_of_its_plain_pe);
    RUN_TEST(test_two_runs_of_one_wrapped_pe_and_seed_are_the_same_run_but_a_pe_and_its_wrapped_self_are_not);
    RUN_TEST(test_methods_are_listed_and_tie_broken_by_pe_then_plain_before_wrapped);
    RUN_TEST(test_single_run_plot_has_both_axis_titles_and_shaded_training_lengths);
    RUN_TEST(test_training_lengths_past_the_plot_shade_it_to_its_edge);
    RUN_TEST(test_a_band_is_drawn_within_the_plot_or_not_at_all);
    RUN_TEST(test_accuracy_table_has_a_row_per_length_of_either_split);
    RUN_TEST(test_length_axis_has_about_ten_labels_at_a_round_step);
    RUN_TEST(test_missing_sweep_directory_is_refused);
    RUN_TEST(test_linked_sweeps_are_followed_once);
    RUN_TEST(test_directory_without_runs_is_refused);
    RUN_TEST(test_malformed_results_json_is_refused_with_its_path);
    RUN_TEST(test_a_majority_answer_score_outside_0_to_1_is_refused);
    RUN_TEST(test_unknown_pe_in_a_config_is_refused_with_its_path);
    RUN_TEST(test_the_same_run_twice_is_refused);
    RUN_TEST(test_an_id_accuracy_exactly_at_the_bar_is_learned);
    RUN_TEST(test_learned_uses_the_mean_over_seeds_not_the_best_seed);
    RUN_TEST(test_a_run_exactly_at_the_bar_is_not_named);
    RUN_TEST(test_the_interval_is_the_5th_to_95th_percentile);
    RUN_TEST(test_mrrs_equal_but_for_rounding_share_first_place);
    RUN_TEST(test_an_incomplete_column_is_never_drawn);
    RUN_TEST(test_the_settings_of_a_task_are_drawn_as_tasks_apart);
    RUN_TEST(test_rand_comes_before_abacus_in_a_name);
    RUN_TEST(test_a_method_row_mixes_old_and_new_seeds);
    RUN_TEST(test_the_ood_majority_score_is_read_from_its_own_field);
    RUN_TEST(test_a_family_ends_at_the_first_underscore);
    RUN_TEST(test_an_unfinished_run_labels_no_setting);
    RUN_TEST(test_a_setting_no_pe_learned_is_left_out_of_the_learned_mrr);
    RUN_TEST(test_first_in_gives_a_tie_to_the_method_listed_first);
    RUN_TEST(test_a_task_plot_draws_every_length_and_its_methods_colour);
    RUN_TEST(test_mrr_bars_carry_their_own_values);
    RUN_TEST(test_the_summary_and_table_give_the_tasks_drawn_again);
    RUN_TEST(test_results_of_another_seed_are_refused);
    RUN_TEST(test_a_backslash_keeps_the_next_character);
    RUN_TEST(test_the_remaining_fields_added_later);
    RUN_TEST(test_a_scopes_row_counts_its_dropped_columns);
    RUN_TEST(test_a_wrapped_pe_that_learned_a_task_is_judged_apart_from_its_plain_pe);
    RUN_TEST(test_mrrs_a_ten_thousandth_apart_are_listed_best_first);
    RUN_TEST(test_the_same_columns_drawn_again_give_the_same_draws);
    RUN_TEST(test_the_interval_starts_at_the_5th_percentile_not_the_10th);
    RUN_TEST(test_a_task_plot_line_is_the_mean_over_seeds_and_dots_take_the_methods_colour);
    RUN_TEST(test_mrr_bars_take_their_methods_colour);
    RUN_TEST(test_a_single_all_tied_column_gets_its_row_without_it);
    RUN_TEST(test_the_all_tied_note_counts_ranked_columns_and_names_the_first_listed_method);
    RUN_TEST(test_how_sure_counts_ranked_tasks_and_the_mrr_table_rows_are_families);
    RUN_TEST(test_one_learned_column_is_not_drawn_again_apart);
    RUN_TEST(test_a_task_table_counts_only_its_ranked_columns);
    RUN_TEST(test_runs_below_the_bar_are_named_by_method_then_seed);
    RUN_TEST(test_the_summarys_learned_mrr_with_ties_shared_shares_them);
    RUN_TEST(test_a_majority_answer_score_of_exactly_1_is_read);
    RUN_TEST(test_an_unknown_evaluated_value_is_refused);
    RUN_TEST(test_a_settings_plot_name_keeps_the_dots_of_its_label);
    RUN_TEST(test_the_unlearned_note_counts_every_task);
    RUN_TEST(test_a_task_table_counts_its_all_tied_columns);
    RUN_TEST(test_a_settings_table_ranks_only_its_own_columns);
    RUN_TEST(test_the_summary_counts_no_all_tied_column_among_the_ranked);
    RUN_TEST(test_abacus_comes_before_coupled_in_a_name);
    RUN_TEST(test_the_header_gives_the_presets_and_steps);
    RUN_TEST(test_a_task_plots_legend_has_only_its_methods_and_the_summary_counts_the_plots);
    RUN_TEST(test_how_sure_labels_its_rows_with_ties_shared);
    RUN_TEST(test_the_unlearned_note_gives_the_id_majority_score);
    RUN_TEST(test_a_run_is_named_below_its_tasks_own_bar);
    RUN_TEST(test_the_summary_lists_the_shares_of_first_place_best_first);
    RUN_TEST(test_an_unfinished_run_is_listed_with_its_setting);
    RUN_TEST(test_mrr_plot_without_a_ranked_column_says_so);
    return UNITY_END();
}
