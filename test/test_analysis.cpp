// Tests of analysis.h and --dump-attention: the divergences against hand computations, the §5.2
// distance and the §6.1 histogram on hand-built attention patterns with known answers, the
// dump's layout, and a dump from a real (tiny) trained model read back.
#define TESTING
#include "train.cu"
#include "dev/attention.cpp"
#include "test/unity.h"

// ----------------------------------------------------------------------------
// hand-built patterns

// one example of T tokens whose every head attends with `rule(t)`: the key each query looks at
static AttentionExample one_hot_example(int T, int L, int NH, int prompt_len, int length, int (*rule)(int t)) {
    AttentionExample e;
    e.split = SPLIT_TEST, e.length = length, e.prompt_len = prompt_len, e.T = T;
    for (int t = 0; t < T; t++) e.tokens.push_back(2 + t);
    e.probs.assign((size_t)L * NH * T * T, 0);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < NH; h++)
            for (int t = 0; t < T; t++) e.probs[(((size_t)l * NH + h) * T + t) * T + rule(t)] = 1;
    return e;
}
static int to_self(int t) { return t; }
static int to_first(int t) { return (void)t, 0; }
static int to_previous(int t) { return std::max(0, t - 1); }

static void test_divergences_match_hand_computations(void) {
    const float p[] = {0.8f, 0.2f}, q[] = {0.4f, 0.6f};
    // by hand (natural log): m = (0.6, 0.4); ½ KL(p‖m) + ½ KL(q‖m) and ½ KL(m‖p) + ½ KL(m‖q)
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, 0.0863046, js_divergence(p, q, 2, false));
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, 0.0928713, js_divergence(p, q, 2, true));
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.0, js_divergence(p, p, 2, false));
    const float a[] = {1, 0}, b[] = {0, 1};
    TEST_ASSERT_DOUBLE_WITHIN(1e-7, log(2.0), js_divergence(a, b, 2, false));  // the textbook bound, for disjoint supports
    TEST_ASSERT_FALSE(std::isfinite(js_divergence(a, b, 2, true)));            // the paper's variant has none
}

// self against first-token attention: rows agree at t = 0 only, so D_AT = (T - 1) ln 2 / T
static void test_head_distance_of_two_known_patterns(void) {
    AttentionExample self = one_hot_example(4, 1, 1, 2, 3, to_self), first = one_hot_example(4, 1, 1, 2, 3, to_first);
    TEST_ASSERT_DOUBLE_WITHIN(1e-7, 3 * log(2.0) / 4, head_distance(self, 1, 0, 0, first, 1, 0, 0, false));
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.0, head_distance(self, 1, 0, 0, self, 1, 0, 0, false));
}

// The distance takes the best-matching pair of heads per layer: B's second head copies A's,
// so layer by layer the minimum is 0 even though B's first head differs everywhere.
static void test_attention_distance_takes_the_closest_heads_per_layer(void) {
    AttentionDump a, b;
    a.L = b.L = 2, a.NH = 1, b.NH = 2;
    for (int length : {3, 5}) {
        a.examples.push_back(one_hot_example(6, 2, 1, 2, length, to_previous));
        AttentionExample two = one_hot_example(6, 2, 2, 2, length, to_first);  // head 0: first token
        AttentionExample copy = one_hot_example(6, 2, 1, 2, length, to_previous);
        for (int l = 0; l < 2; l++) std::copy(copy.row(1, l, 0, 0), copy.row(1, l, 0, 0) + 36, &two.probs[((size_t)l * 2 + 1) * 36]);
        b.examples.push_back(two);
    }
    std::map<int, double> d = attention_distance(a, b, false);
    TEST_ASSERT_EQUAL_INT(2, d.size());
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.0, d[3]);
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.0, d[5]);
    // and with only the differing head, per layer D_AT(previous, first): rows differ for t >= 2
    b.NH = 1;
    for (AttentionExample& e : b.examples) e = one_hot_example(6, 2, 1, 2, e.length, to_first);
    TEST_ASSERT_DOUBLE_WITHIN(1e-7, 4 * log(2.0) / 6, attention_distance(a, b, false)[3]);
    b.examples[0].tokens[0] = 99;
    TEST_ASSERT_THROWS_WITH(attention_distance(a, b, false), "example 0 differs between the dumps");
}

// Previous-token attention over the output region t = 4..7 of an 8-token example: distances
// 1/(t+1) = 0.2, 0.167, 0.143, 0.125 fall in bins 4, 3, 2, 2 of 20 (width 0.05); self-attention
// puts all of them at 0. Examples not longer than min_length are left out.
static void test_attended_distance_histogram_of_known_patterns(void) {
    AttentionDump d;
    d.L = 1, d.NH = 1;
    d.examples.push_back(one_hot_example(8, 1, 1, 4, 9, to_previous));
    std::vector<long> h = attended_distance_histogram(d, 8, 20);
    std::vector<long> expected(20, 0);
    expected[4] = 1, expected[3] = 1, expected[2] = 2;
    TEST_ASSERT_MESSAGE(h == expected, "previous-token histogram");
    d.examples[0] = one_hot_example(8, 1, 1, 4, 9, to_self);
    TEST_ASSERT_EQUAL_INT(4, attended_distance_histogram(d, 8, 20)[0]);
    TEST_ASSERT_EQUAL_INT(0, attended_distance_histogram(d, 9, 20)[0]);  // λ = 9 is not > 9
}

static void test_a_dump_reads_back_and_a_damaged_one_is_refused(void) {
    AttentionDump d;
    d.L = 2, d.NH = 3;
    d.examples.push_back(one_hot_example(5, 2, 3, 2, 4, to_previous));
    d.examples.push_back(one_hot_example(3, 2, 3, 1, 2, to_self));
    char pattern[] = "/tmp/test_analysis_XXXXXX";
    std::string path = std::string(mkdtemp(pattern)) + "/attention.bin";
    write_attention_dump(path, d);
    AttentionDump back = read_attention_dump(path);
    TEST_ASSERT_EQUAL_INT(3, back.NH);
    TEST_ASSERT_EQUAL_INT(2, back.examples.size());
    TEST_ASSERT_MESSAGE(back.examples[0].probs == d.examples[0].probs && back.examples[1].tokens == d.examples[1].tokens, "round trip");
    TEST_ASSERT_EQUAL_INT(4, back.examples[0].length);
    TEST_ASSERT_EQUAL_INT(1, back.examples[1].prompt_len);
    TEST_ASSERT_EQUAL_INT(0, truncate(path.c_str(), 100));
    TEST_ASSERT_THROWS_WITH(read_attention_dump(path), "is truncated");
    TEST_ASSERT_THROWS_WITH(write_attention_dump("/dev/full", d), "can not write /dev/full: No space left on device");
}

// dev/attention on two hand-built dumps: the tables hold the values the measures give
static void test_dev_attention_writes_the_tables_and_plots(void) {
    char pattern[] = "/tmp/test_analysis_XXXXXX";
    std::string dir = mkdtemp(pattern);
    AttentionDump self, first;
    self.L = first.L = 1, self.NH = first.NH = 1;
    for (int length : {9, 10}) {
        self.examples.push_back(one_hot_example(8, 1, 1, 4, length, to_self));
        first.examples.push_back(one_hot_example(8, 1, 1, 4, length, to_first));
    }
    write_attention_dump(dir + "/self.bin", self);
    write_attention_dump(dir + "/first.bin", first);
    std::string out = dir + "/out", a = dir + "/self.bin", b = "first=" + dir + "/first.bin", c = "self=" + dir + "/self.bin";
    const char* distance[] = {"attention", "distance", "--out", out.c_str(), a.c_str(), b.c_str(), c.c_str()};
    {
        Silence quiet;
        attention_main(7, (char**)distance);
    }
    std::ifstream tsv(out + "/distance.tsv");
    std::string text((std::istreambuf_iterator<char>(tsv)), std::istreambuf_iterator<char>());
    // self against first-token attention: 7 of 8 rows differ by ln 2, so 7 ln 2 / 8 = 0.606504
    TEST_ASSERT_EQUAL_STRING("length\tfirst\tself\n9\t0.606504\t0.000000\n10\t0.606504\t0.000000\n", text);
    const char* histogram[] = {"attention", "histogram", "--out", out.c_str(), "--bins", "4", b.c_str(), c.c_str()};
    {
        Silence quiet;
        attention_main(8, (char**)histogram);
    }
    std::ifstream h(out + "/histogram.tsv");
    text.assign((std::istreambuf_iterator<char>(h)), std::istreambuf_iterator<char>());
    // first-token attention from t = 4..7: (t - 0) / (t + 1) = 0.8 .. 0.875, all in the last bin
    TEST_ASSERT_EQUAL_STRING("from\tto\tfirst\tself\n0.000\t0.250\t0.000000\t1.000000\n0.250\t0.500\t0.000000\t0.000000\n"
                             "0.500\t0.750\t0.000000\t0.000000\n0.750\t1.000\t1.000000\t0.000000\n",
                             text);
    TEST_ASSERT_MESSAGE(access((out + "/distance.svg").c_str(), R_OK) == 0 && access((out + "/histogram.svg").c_str(), R_OK) == 0, "plots");
    const char* bad[] = {"attention", "distance", "--out", out.c_str(), a.c_str(), "no-label.bin"};
    TEST_ASSERT_THROWS_WITH(attention_main(6, (char**)bad), "expected LABEL=DUMP.bin, got 'no-label.bin'");
}

// ----------------------------------------------------------------------------
// a real model

// --dump-attention on a tiny trained run: up to N examples of every length of valid and test,
// rows that are distributions over keys 0..t, probabilities equal to a fresh forward pass, and
// two heatmaps with the words on the axes
static void test_dump_attention_of_a_trained_model(void) {
    char pattern[] = "/tmp/test_analysis_XXXXXX";
    std::string dir = mkdtemp(pattern);
    RunConfig c;
    c.task = "copy_cmc", c.pe = "alibi";
    c.layers = 2, c.d_model = 16, c.heads = 2, c.d_ff = 32, c.steps = 4, c.eval_every = 2, c.batch = 8;
    c.data.train_size = 64, c.data.valid_size = 30, c.data.test_size = 30, c.data.train_max = 5, c.data.test_max = 8;
    c.out = dir + "/run";
    {
        Run r(&c);
        Silence quiet;
        prepare_run(&r);
        train(&r, INT_MAX);
    }
    RunConfig load;
    load.load = c.out + "/model.bin", load.dump_attention = dir + "/att.bin", load.dump_per_length = 2;
    const char* argv[] = {"train", "--load", load.load.c_str(), "--dump-attention", load.dump_attention.c_str(), "--dump-per-length", "2"};
    {
        Silence quiet;
        run(7, (char**)argv);
    }
    AttentionDump d = read_attention_dump(load.dump_attention);
    TEST_ASSERT_EQUAL_INT(2, d.L);
    TEST_ASSERT_EQUAL_INT(2, d.NH);
    std::map<std::pair<int, int>, int> per_length;
    for (const AttentionExample& e : d.examples) per_length[{e.split, e.length}]++;
    for (const auto& kv : per_length) TEST_ASSERT_LESS_THAN(3, kv.second);
    TEST_ASSERT_EQUAL_INT(4 + 3, per_length.size());  // valid lengths 2-5, test 6-8
    for (const AttentionExample& e : d.examples)
        for (int l = 0; l < d.L; l++)
            for (int h = 0; h < d.NH; h++)
                for (int t = 0; t < e.T; t++) {
                    const float* row = e.row(d.NH, l, h, t);
                    double sum = 0;
                    for (int j = 0; j <= t; j++) sum += row[j];
                    TEST_ASSERT_DOUBLE_WITHIN(1e-5, 1.0, sum);
                    for (int j = t + 1; j < e.T; j++) TEST_ASSERT_EQUAL_INT(0, row[j]);
                }
    // the probabilities are the model's: a fresh forward of the first example gives them again
    Header h = read_checkpoint_header(load.load);
    RunConfig again;
    Run r(&again);
    r.progress = restore_run(h, &again);
    again.model = header_preset(h);
    resolve_config(&again);
    {
        Silence quiet;
        build(&r);
    }
    load_checkpoint(load.load, h, &r.model);
    const AttentionExample& e = d.examples[0];
    model_forward(&r.model, e.tokens.data(), nullptr, 1, e.T, NO_DROPOUT);
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, r.model.act(A_ATT, 1), e.probs.data() + (size_t)d.NH * e.T * e.T, (size_t)d.NH * e.T * e.T, "layer 1");
    std::ifstream svg(load.dump_attention + ".test.svg");
    std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
    TEST_ASSERT_MESSAGE(text.find("layer 1, head 1") != std::string::npos && text.find(">Copy:</text>") != std::string::npos, "heatmap");
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_divergences_match_hand_computations);
    RUN_TEST(test_head_distance_of_two_known_patterns);
    RUN_TEST(test_attention_distance_takes_the_closest_heads_per_layer);
    RUN_TEST(test_attended_distance_histogram_of_known_patterns);
    RUN_TEST(test_a_dump_reads_back_and_a_damaged_one_is_refused);
    RUN_TEST(test_dev_attention_writes_the_tables_and_plots);
    RUN_TEST(test_dump_attention_of_a_trained_model);
    return UNITY_END();
}
