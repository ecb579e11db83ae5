// Tests of analysis.h and --dump-attention: the divergences against hand computations, the §5.2
// distance and the §6.1 histogram on hand-built attention patterns with known answers, the
// dump's layout, and a dump from a real (tiny) trained model read back; and of the dev/ tools
// that edit a trained model or its residual stream.
#define TESTING
#include "train.cu"
#include "dev/attention.cpp"
#include "dev/table_extend.cpp"
#include "dev/t5_table.cpp"
#include "dev/place_patch.cpp"
#include "dev/head_ablate.cpp"
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

// dev/attention with these arguments (after the program's name); returns what it printed
static std::string run_attention(std::vector<const char*> args) {
    args.insert(args.begin(), "attention");
    Capture out;
    attention_main((int)args.size(), (char**)args.data());
    return out.text();
}

// dev/attention COMMAND on dump d, written to a fresh directory; returns what it printed
static std::string run_attention_dump(const AttentionDump& d, const char* command) {
    std::string dir = unity_temp_dir(), input = "d=" + dir + "/d.bin", out = dir + "/out";
    write_attention_dump(dir + "/d.bin", d);
    return run_attention({command, "--out", out.c_str(), input.c_str()});
}

static std::string text_of(const std::string& path) {
    std::ifstream f(path);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

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

// The paper's variant, ½ KL(m‖p) + ½ KL(m‖q), is infinite as soon as either row gives nothing
// to a key the other gives something (m > 0 there), whichever of the two it is; the textbook
// divergence stays finite: for p = (1, 0), q = (½, ½), m = (¾, ¼), ½ ln(4/3) + ¼ ln(2/3) + ¼ ln 2
static void test_the_papers_divergence_is_infinite_where_one_row_alone_gives_a_key_nothing(void) {
    const float p[] = {1, 0}, q[] = {0.5f, 0.5f};
    TEST_ASSERT_FALSE(std::isfinite(js_divergence(p, q, 2, true)));
    TEST_ASSERT_FALSE(std::isfinite(js_divergence(q, p, 2, true)));
    const double textbook = 0.5 * log(4.0 / 3) + 0.25 * log(2.0 / 3) + 0.25 * log(2.0);
    TEST_ASSERT_DOUBLE_WITHIN(1e-7, textbook, js_divergence(p, q, 2, false));
    TEST_ASSERT_DOUBLE_WITHIN(1e-7, textbook, js_divergence(q, p, 2, false));
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

// The §5.2 distance's rule where the tests above, one example a length and the same pattern in
// every layer, can not see it: layer l of A against layer l of B alone; every pair of heads,
// whichever model holds the closer one; the mean over a length's examples. And keys both rows
// give nothing add nothing in the paper's variant (torch's KLDivLoss with a zero target).
static void test_attention_distance_pairs_layers_and_heads_and_averages_examples(void) {
    const float p[] = {0.5f, 0.5f, 0}, q[] = {0.9f, 0.1f, 0};
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, js_divergence(p, q, 2, true), js_divergence(p, q, 3, true));
    const double one_layer_apart = 7 * std::log(2.0) / 8;  // self against first on 7 of 8 rows
    AttentionExample self2 = one_hot_example(8, 2, 1, 4, 9, to_self), first2 = one_hot_example(8, 2, 1, 4, 9, to_first);
    AttentionExample a = self2, b = first2;  // A: self then first, by layer; B: first then self
    std::copy(first2.probs.begin() + 64, first2.probs.end(), a.probs.begin() + 64);
    std::copy(self2.probs.begin() + 64, self2.probs.end(), b.probs.begin() + 64);
    AttentionDump da, db;
    da.L = db.L = 2, da.NH = db.NH = 1;
    da.examples = {a}, db.examples = {b};
    TEST_ASSERT_DOUBLE_WITHIN(1e-7, one_layer_apart, attention_distance(da, db, false)[9]);
    AttentionExample two_heads = one_hot_example(8, 1, 2, 4, 9, to_first), self1 = one_hot_example(8, 1, 1, 4, 9, to_self);
    std::copy(self1.probs.begin(), self1.probs.end(), two_heads.probs.begin() + 64);  // A: head 0 on the first token, head 1 on itself
    da.L = db.L = 1, da.NH = 2, db.NH = 1;
    da.examples = {two_heads}, db.examples = {self1};
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.0, attention_distance(da, db, false)[9]);
    da.NH = 1;
    da.examples = {self1, self1}, db.examples = {self1, one_hot_example(8, 1, 1, 4, 9, to_first)};
    TEST_ASSERT_DOUBLE_WITHIN(1e-7, one_layer_apart / 2, attention_distance(da, db, false)[9]);
}

// The §5.2 distance pairs the two dumps' examples one by one, layer by layer: dumps of other
// numbers of examples (whichever holds more) or of layers are refused, not compared in part
static void test_attention_distance_refuses_dumps_of_other_examples_or_layers(void) {
    AttentionDump a, b;
    a.L = b.L = 1, a.NH = b.NH = 1;
    a.examples = {one_hot_example(4, 1, 1, 2, 3, to_self)};
    b.examples = {a.examples[0], a.examples[0]};
    TEST_ASSERT_THROWS_WITH(attention_distance(a, b, false), "the two dumps hold different layers or examples");
    TEST_ASSERT_THROWS_WITH(attention_distance(b, a, false), "the two dumps hold different layers or examples");
    b.examples.pop_back(), b.L = 2;
    TEST_ASSERT_THROWS_WITH(attention_distance(a, b, false), "the two dumps hold different layers or examples");
    b.L = 1;
    TEST_ASSERT_DOUBLE_WITHIN(0, 0.0, attention_distance(a, b, false)[3]);
}

// Previous-token attention over the output region t = 4..7 of an 8-token example: distances
// 1/(t+1) = 0.2, 0.167, 0.143, 0.125 fall in bins 4, 3, 2, 2 of 20 (width 0.05); self-attention
// puts all of them at 0. Examples not longer than min_length are left out.
static void test_attended_distance_histogram_of_known_patterns(void) {
    AttentionDump d;
    d.L = 1, d.NH = 1;
    d.examples.push_back(one_hot_example(8, 1, 1, 4, 9, to_previous));
    std::vector<double> h = attended_distance_histogram(d, 8, 20);
    std::vector<double> expected(20, 0);
    expected[4] = 1, expected[3] = 1, expected[2] = 2;
    TEST_ASSERT_MESSAGE(h == expected, "previous-token histogram");
    d.examples[0] = one_hot_example(8, 1, 1, 4, 9, to_self);
    TEST_ASSERT_DOUBLE_WITHIN(0, 4, attended_distance_histogram(d, 8, 20)[0]);
    TEST_ASSERT_DOUBLE_WITHIN(0, 0, attended_distance_histogram(d, 9, 20)[0]);  // λ = 9 is not > 9
    // a distance on a bin's lower edge is in that bin: query 99 looking 29 back, 29 / 100, at
    // 100 bins is in bin 29 (0.29 * 100 in doubles is 28.999...)
    d.examples[0] = one_hot_example(100, 1, 1, 99, 200, [](int t) { return t == 99 ? 70 : t; });
    std::vector<double> edge = attended_distance_histogram(d, 8, 100);
    TEST_ASSERT_DOUBLE_WITHIN(0, 1, edge[29]);
    TEST_ASSERT_DOUBLE_WITHIN(0, 0, edge[28]);
    // keys tied for the largest probability share the query: query 4 of a 5-token example
    // spreading evenly over keys 0..4 puts 1/5 at each distance 0, 1/5, .., 4/5 (bins 0, 4, .., 16)
    d.examples[0] = one_hot_example(5, 1, 1, 4, 9, to_self);
    std::fill(d.examples[0].probs.begin() + 4 * 5, d.examples[0].probs.end(), 0.2f);
    std::vector<double> shared = attended_distance_histogram(d, 8, 20);
    for (int b = 0; b < 20; b++) TEST_ASSERT_DOUBLE_WITHIN(1e-12, b % 4 == 0 ? 0.2 : 0.0, shared[b]);
}

static void test_a_dump_reads_back_and_a_damaged_one_is_refused(void) {
    AttentionDump d;
    d.L = 2, d.NH = 3;
    d.examples.push_back(one_hot_example(5, 2, 3, 2, 4, to_previous));
    d.examples.push_back(one_hot_example(3, 2, 3, 1, 2, to_self));
    d.C = 2;
    for (AttentionExample& e : d.examples)
        for (int k = 0; k < (d.L + 1) * e.T * d.C; k++) e.states.push_back(0.5f * k - 3);
    std::string path = unity_temp_dir() + "/attention.bin";
    write_attention_dump(path, d);
    AttentionDump back = read_attention_dump(path);
    TEST_ASSERT_EQUAL_INT(3, back.NH);
    TEST_ASSERT_EQUAL_INT(2, back.C);
    TEST_ASSERT_MESSAGE(back.examples[0].states == d.examples[0].states && back.examples[1].states == d.examples[1].states, "the states");
    TEST_ASSERT_EQUAL_INT(2, back.examples.size());
    TEST_ASSERT_MESSAGE(back.examples[0].probs == d.examples[0].probs && back.examples[1].tokens == d.examples[1].tokens, "round trip");
    TEST_ASSERT_EQUAL_INT(4, back.examples[0].length);
    TEST_ASSERT_EQUAL_INT(1, back.examples[1].prompt_len);
    FILE* padded = fopen(path.c_str(), "ab");  // bytes past the last example: not a dump as written
    fputs("garbage", padded);
    fclose(padded);
    TEST_ASSERT_THROWS_WITH(read_attention_dump(path), "has 7 bytes after its last example: not a dump as written");
    TEST_ASSERT_EQUAL_INT(0, truncate(path.c_str(), 100));
    TEST_ASSERT_THROWS_WITH(read_attention_dump(path), "is truncated");
    TEST_ASSERT_THROWS_WITH(read_attention_dump(directory_of(path)), "is a directory, not an attention dump");
    AttentionDump odd_split = d;  // a split the analyses index arrays by: 1 valid, 2 test, nothing else
    odd_split.examples[0].split = 3;
    write_attention_dump(path, odd_split);
    TEST_ASSERT_THROWS_WITH(read_attention_dump(path), "example 0 has an impossible size or split");
    // written whole, by way of FILE.tmp, which is gone after; a path that is not a file is written
    // as it is (a full disk named by its error; /dev/null stays a device, not a file renamed over it)
    TEST_ASSERT_FALSE(access((path + ".tmp").c_str(), F_OK) == 0);
    TEST_ASSERT_THROWS_WITH(write_attention_dump("/dev/full", d), "can not write /dev/full: No space left on device");
    write_attention_dump("/dev/null", d);
    struct stat null_device;
    TEST_ASSERT_TRUE(stat("/dev/null", &null_device) == 0 && S_ISCHR(null_device.st_mode));
    TEST_ASSERT_THROWS_WITH(write_attention_dump("/nonexistent/dump.bin", d), "can not write /nonexistent/dump.bin: No such file or directory");
    // sizes that ask for 2^58 bytes of probabilities: refused as truncated, before any allocation
    FILE* f = fopen(path.c_str(), "wb");
    std::vector<int32_t> huge = {ATTENTION_DUMP_MAGIC, ATTENTION_DUMP_VERSION, 4096, 4096, 1, 0, 0, 0, SPLIT_TEST, 0, 1, 0, 65536};
    huge.resize(huge.size() + 65536, 0);  // the tokens
    fwrite(huge.data(), 4, huge.size(), f);
    fclose(f);
    TEST_ASSERT_THROWS_WITH(read_attention_dump(path), "is truncated");
}

// version 2 keeps the words and CoPE's positions and table; a version 1 dump (none) still reads, and a
// version 2 one (no residual stream)
static void test_a_dump_keeps_its_words_and_positions_and_version_1_still_reads(void) {
    AttentionDump d;
    d.L = 1, d.NH = 2, d.has_positions = true, d.words = {"<pad>", "<eos>", "a", "b", "c", "d", "e"};
    d.table_copies = 1, d.table_rows = 3, d.table_width = 2, d.table = {0.5f, -1, 2, 0, 0, 3};
    d.examples.push_back(one_hot_example(5, 1, 2, 2, 3, to_self));
    for (size_t k = 0; k < d.examples[0].probs.size(); k++) d.examples[0].positions.push_back(0.25f * k);
    std::string dir = unity_temp_dir();
    write_attention_dump(dir + "/v2.bin", d);
    AttentionDump back = read_attention_dump(dir + "/v2.bin");
    TEST_ASSERT_MESSAGE(back.has_positions && back.words == d.words, "header");
    TEST_ASSERT_MESSAGE(back.table_rows == 3 && back.table_width == 2 && back.table == d.table, "table");
    TEST_ASSERT_MESSAGE(back.examples[0].positions == d.examples[0].positions && back.examples[0].probs == d.examples[0].probs, "tensors");
    // version 1: magic, 1, L, NH, examples; then the example without positions
    const AttentionExample& e = d.examples[0];
    FILE* f = fopen((dir + "/v1.bin").c_str(), "wb");
    std::vector<int32_t> ints = {ATTENTION_DUMP_MAGIC, 1, 1, 2, 1, e.split, e.index, e.length, e.prompt_len, e.T};
    ints.insert(ints.end(), e.tokens.begin(), e.tokens.end());
    fwrite(ints.data(), 4, ints.size(), f);
    fwrite(e.probs.data(), 4, e.probs.size(), f);
    fclose(f);
    AttentionDump v1 = read_attention_dump(dir + "/v1.bin");
    TEST_ASSERT_MESSAGE(!v1.has_positions && v1.words.empty() && v1.examples[0].probs == e.probs && v1.examples[0].tokens == e.tokens, "version 1");
    // version 2: the header's words and has_positions, no C, no states
    f = fopen((dir + "/v2-no-states.bin").c_str(), "wb");
    ints = {ATTENTION_DUMP_MAGIC, 2, 1, 2, 1, 0, 0, e.split, e.index, e.length, e.prompt_len, e.T};
    ints.insert(ints.end(), e.tokens.begin(), e.tokens.end());
    fwrite(ints.data(), 4, ints.size(), f);
    fwrite(e.probs.data(), 4, e.probs.size(), f);
    fclose(f);
    AttentionDump v2 = read_attention_dump(dir + "/v2-no-states.bin");
    TEST_ASSERT_MESSAGE(v2.C == 0 && v2.examples[0].states.empty() && v2.examples[0].probs == e.probs, "version 2");
    TEST_ASSERT_THROWS_WITH(cope_head(v1, 0, 0), "the dump holds no CoPE positions");
    // a token past the words is refused, not read out of bounds
    d.words.resize(4);
    write_attention_dump(dir + "/bad.bin", d);
    TEST_ASSERT_THROWS_WITH(read_attention_dump(dir + "/bad.bin"), "example 0 has token 4, not a word");
    // without words, a token the analyses could not keep a count for (nor add 1 to, as INT_MAX)
    d.words.clear(), d.has_positions = false;
    d.examples[0].tokens[1] = MAX_DUMP_WORDS;
    write_attention_dump(dir + "/bad.bin", d);
    TEST_ASSERT_THROWS_WITH(read_attention_dump(dir + "/bad.bin"), "example 0 has token 65536, not a word");
    d.examples[0].tokens[1] = MAX_DUMP_WORDS - 1;
    write_attention_dump(dir + "/bad.bin", d);
    AttentionDump largest = read_attention_dump(dir + "/bad.bin");
    TEST_ASSERT_EQUAL_INT(MAX_DUMP_WORDS, dump_vocab_size(largest));
    // the mean attention by word keeps an entry per word its keys hold, not per possible word
    AttendsByQuery by_index = attends_by_query(largest, 0, 0, 0, BY_INDEX);
    TEST_ASSERT_FALSE(by_index.mass.empty());
    for (const auto& [group, mass] : by_index.mass) TEST_ASSERT_TRUE(mass.size() <= largest.examples[0].tokens.size());
}

// Each field the reader bounds, one past its bound (or at 0 where it must be at least 1), in a
// dump otherwise whole: refused with the message of that field, never read on (a field let
// through would read as a truncated file, or as a dump, and the analyses index arrays by it).
// The header is version 3's: magic, version, L, NH, examples, words, has_positions, C.
static void test_a_dump_with_an_impossible_field_is_refused_by_name(void) {
    const int32_t M = ATTENTION_DUMP_MAGIC, V = ATTENTION_DUMP_VERSION;
    const char *header = "has an impossible header", *example = "example 0 has an impossible size or split";
    struct {
        std::vector<int32_t> ints;
        std::string error;
    } bad[] = {
        {{M, 0, 1, 1, 0, 0, 0, 0}, "is not an attention dump of version 1 to 3"},
        {{M, V + 1, 1, 1, 0, 0, 0, 0}, "is not an attention dump of version 1 to 3"},
        {{M, V, 0, 1, 0, 0, 0, 0}, header},
        {{M, V, 1, 0, 0, 0, 0, 0}, header},
        {{M, V, 4097, 1, 0, 0, 0, 0}, header},
        {{M, V, 1, 4097, 0, 0, 0, 0}, header},
        {{M, V, 1, 1, -1, 0, 0, 0}, header},
        {{M, V, 1, 1, 0, -1, 0, 0}, header},
        {{M, V, 1, 1, 0, MAX_DUMP_WORDS + 1, 0, 0}, header},
        {{M, V, 1, 1, 0, 0, 2, 0}, header},
        {{M, V, 1, 1, 0, 0, -1, 0}, header},
        {{M, V, 1, 1, 0, 0, 0, -1}, header},
        {{M, V, 1, 1, 0, 0, 0, 65537}, header},
        {{M, V, 1, 1, 0, 1, 0, 0, 4097}, "word 0 has an impossible size"},
        {{M, V, 1, 1, 0, 1, 0, 0, -1}, "word 0 has an impossible size"},
        {{M, V, 1, 1, 0, 0, 1, 0, 2, 1, 1}, "has an impossible CoPE table"},  // more copies than layers
        {{M, V, 1, 1, 0, 0, 1, 0, 0, 1, 1}, "has an impossible CoPE table"},
        {{M, V, 1, 1, 0, 0, 1, 0, 1, 0, 1}, "has an impossible CoPE table"},
        {{M, V, 1, 1, 0, 0, 1, 0, 1, 1, 0}, "has an impossible CoPE table"},
        {{M, V, 1, 1, 0, 0, 1, 0, 1, 65537, 1}, "has an impossible CoPE table"},
        {{M, V, 1, 1, 1, 0, 0, 0, DUMP_TEST, 0, 1, 3, 2}, example},  // a prompt longer than the example
        {{M, V, 1, 1, 1, 0, 0, 0, DUMP_TEST, 0, 1, -1, 2}, example},
        {{M, V, 1, 1, 1, 0, 0, 0, DUMP_TEST, 0, 1, 0, 0}, example},  // no token at all
        {{M, V, 1, 1, 1, 0, 0, 0, DUMP_TEST, 0, 1, 0, 65537}, example},
        {{M, V, 1, 1, 1, 0, 0, 0, -1, 0, 1, 0, 1}, example},
        {{M, V, 1, 1, 1, 0, 0, 0, DUMP_TEST, 0, 1, 0, 1, -1}, "example 0 has token -1, not a word"},
    };
    std::string path = unity_temp_dir() + "/bad.bin";
    for (const auto& b : bad) {
        FILE* f = fopen(path.c_str(), "wb");
        fwrite(b.ints.data(), 4, b.ints.size(), f);
        fclose(f);
        TEST_ASSERT_THROWS_WITH(read_attention_dump(path), b.error);
    }
    // and a dump at the lower bounds reads: one layer, head, table row and token, the token's prompt
    // the whole example
    std::vector<int32_t> whole = {M, V, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, DUMP_TEST, 0, 1, 1, 1, 0};
    const float one = 1;
    FILE* f = fopen(path.c_str(), "wb");
    fwrite(whole.data(), 4, whole.size(), f);  // table: one copy of one row of width 1, its value 0
    fwrite(&one, 4, 1, f);                     // the probability
    fwrite(&one, 4, 1, f);                     // CoPE's position
    fclose(f);
    AttentionDump d = read_attention_dump(path);
    TEST_ASSERT_TRUE(d.has_positions && d.examples.size() == 1 && d.examples[0].T == 1 && d.examples[0].prompt_len == 1 && d.examples[0].probs[0] == 1);
}

// An example with no prompt (prompt_len 0, which the reader takes): no query predicts its first
// token, so the answer's queries start at t = 0, never before the first row, and run to T - 3
static void test_an_empty_prompt_starts_the_answer_queries_at_the_first_token(void) {
    AttentionDump d;
    d.L = 1, d.NH = 1;
    d.examples.push_back(one_hot_example(5, 1, 1, 0, 4, to_first));
    TEST_ASSERT_EQUAL_INT(0, first_answer_query(d.examples[0]));
    AttendsByQuery by_index = attends_by_query(d, 0, 0, 0, BY_INDEX);
    TEST_ASSERT_EQUAL_INT(3, by_index.queries.size());  // answer words 0, 1, 2: queries t = 0, 1, 2
    for (int group = 0; group < 3; group++) {
        TEST_ASSERT_EQUAL_INT(1, by_index.queries[group]);
        TEST_ASSERT_DOUBLE_WITHIN(0, 1.0, by_index.mass[group][2]);  // all of it on the first token, word 2
    }
}

// attends_by_query on two hand-built examples of tokens 2..9 (the answer's queries t = 3, 4, 5
// predict tokens 6, 7, 8, the answer's words 0, 1, 2): a valid one whose head looks at the first
// key, a test one whose head looks at the query itself, grouped by word and by index; and
// dev/attention attends, with --split and without, by word and by index: its tsv and the line
// it prints per head
static void test_attends_by_query_groups_by_the_predicted_word_or_its_index(void) {
    AttentionDump d;
    d.L = 1, d.NH = 1, d.words = {"<pad>", "<eos>", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9"};
    d.examples.push_back(one_hot_example(8, 1, 1, 4, 4, to_first));
    d.examples.push_back(one_hot_example(8, 1, 1, 4, 4, to_self));
    d.examples[0].split = SPLIT_VALID;
    AttendsByQuery both = attends_by_query(d, 0, 0, 0, BY_WORD), valid = attends_by_query(d, 0, 0, SPLIT_VALID, BY_WORD);
    TEST_ASSERT_EQUAL_INT(3, both.queries.size());
    TEST_ASSERT_EQUAL_INT(2, both.queries[6]);
    TEST_ASSERT_EQUAL_INT(1, valid.queries[6]);
    TEST_ASSERT_DOUBLE_WITHIN(0, 1.0, both.mass[6][2]);  // the valid example's query 3 on key 0, token 2
    TEST_ASSERT_DOUBLE_WITHIN(0, 1.0, both.mass[6][5]);  // the test example's query 3 on itself, token 5
    TEST_ASSERT_DOUBLE_WITHIN(0, 0.0, valid.mass[6][5]);
    TEST_ASSERT_DOUBLE_WITHIN(0, 1.0, valid.mass[8][2]);
    AttendsByQuery by_index = attends_by_query(d, 0, 0, 0, BY_INDEX);
    TEST_ASSERT_EQUAL_INT(3, by_index.queries.size());
    TEST_ASSERT_EQUAL_INT(2, by_index.queries[0]);
    TEST_ASSERT_DOUBLE_WITHIN(0, 1.0, by_index.mass[0][2]);  // query 3 is the answer's word 0
    TEST_ASSERT_DOUBLE_WITHIN(0, 1.0, by_index.mass[2][7]);  // query 5 on itself, token 7
    TEST_ASSERT_DOUBLE_WITHIN(0, 0.0, by_index.mass[2][5]);

    std::string dir = unity_temp_dir();
    write_attention_dump(dir + "/d.bin", d);
    std::string out = dir + "/out", in = "x=" + dir + "/d.bin";
    std::string printed = run_attention({"attends", "--out", out.c_str(), "--split", "test", in.c_str()});
    TEST_ASSERT_EQUAL_STRING("label\tlayer\thead\tanswer\tqueries\tword\tmean_attention\nx\t0\t0\tw6\t1\tw5\t1.0000\n"
                             "x\t0\t0\tw7\t1\tw6\t1.0000\nx\t0\t0\tw8\t1\tw7\t1.0000\n",
                             text_of(out + "/attends.tsv").c_str());
    TEST_ASSERT_EQUAL_STRING(("x:\n  layer 0 head 0, when the next word is 'w6' (1): 'w5' 1.00; 'w7' (1): 'w6' 1.00; 'w8' (1): 'w7' 1.00\n"
                              "wrote " + out + "/attends.tsv\n").c_str(),
                             printed.c_str());
    printed = run_attention({"attends", "--out", out.c_str(), "--split", "test", "--by", "index", in.c_str()});
    TEST_ASSERT_EQUAL_STRING(("x:\n  layer 0 head 0, by the index of the next word: 0 'w5' 1.00, 1 'w6' 1.00, 2 'w7' 1.00\n"
                              "wrote " + out + "/attends.tsv\n").c_str(),
                             printed.c_str());
    run_attention({"attends", "--out", out.c_str(), "--by", "index", in.c_str()});
    // an option another command reads is refused by name, not ignored
    TEST_ASSERT_THROWS_WITH(run_attention({"attends", "--out", out.c_str(), "--bins", "5", in.c_str()}),
                            "--bins does not apply to attends (its options: --out --split --by)");
    TEST_ASSERT_EQUAL_STRING("label\tlayer\thead\tindex\tqueries\tword\tmean_attention\nx\t0\t0\t0\t2\tw2\t0.5000\nx\t0\t0\t0\t2\tw5\t0.5000\n"
                             "x\t0\t0\t1\t2\tw2\t0.5000\nx\t0\t0\t1\t2\tw6\t0.5000\nx\t0\t0\t2\t2\tw2\t0.5000\nx\t0\t0\t2\t2\tw7\t0.5000\n",
                             text_of(out + "/attends.tsv").c_str());
    const char* bad[] = {"attention", "attends", "--out", out.c_str(), "--split", "train", in.c_str()};
    TEST_ASSERT_THROWS_WITH(attention_main(7, (char**)bad), "--split takes valid or test, not 'train'");
    const char* bad_group[] = {"attention", "attends", "--out", out.c_str(), "--by", "length", in.c_str()};
    TEST_ASSERT_THROWS_WITH(attention_main(7, (char**)bad_group), "--by takes word or index, not 'length'");
}

// dev/attention attends' printed line and tsv when there is more to show than fits: five examples
// of 11 tokens 2..12 whose prompts are 5..9 long make the answer's queries predict w11 five times,
// w10 four, w9 three, w8 twice and w7 once, and every such query puts 0.5, 0.25, 0.2, 0.0045 and
// 0.0005 on keys 0-4 (w2-w6). The line names the four most frequent words, most frequent first,
// then "...", each with its three most attended words, largest first; the tsv keeps the means of
// 0.001 and more (w5's 0.0045, not w6's 0.0005).
static void test_attends_prints_the_most_frequent_answer_words_and_their_most_attended_keys(void) {
    AttentionDump d;
    d.L = 1, d.NH = 1, d.words = {"<pad>", "<eos>"};
    for (int w = 2; w <= 12; w++) d.words.push_back("w" + std::to_string(w));
    for (int prompt_len = 5; prompt_len <= 9; prompt_len++) {
        AttentionExample e = one_hot_example(11, 1, 1, prompt_len, 9, to_self);
        for (int t = first_answer_query(e); t <= last_answer_query(e); t++) {
            float* row = &e.probs[(size_t)t * 11];
            std::fill(row, row + 11, 0.0f);
            row[0] = 0.5f, row[1] = 0.25f, row[2] = 0.2f, row[3] = 0.0045f, row[4] = 0.0005f;
        }
        d.examples.push_back(e);
    }
    std::string dir = unity_temp_dir();
    write_attention_dump(dir + "/d.bin", d);
    std::string out = dir + "/out", in = "x=" + dir + "/d.bin";
    std::string printed = run_attention({"attends", "--out", out.c_str(), in.c_str()});
    const char* keys = "'w2' 0.50 'w3' 0.25 'w4' 0.20";
    std::string line = format_text("  layer 0 head 0, when the next word is 'w11' (5): %s; 'w10' (4): %s; 'w9' (3): %s; 'w8' (2): %s; ...\n",
                                   keys, keys, keys, keys);
    TEST_ASSERT_MESSAGE(printed.find(line) != std::string::npos, printed.c_str());
    std::string tsv = text_of(out + "/attends.tsv");
    TEST_ASSERT_MESSAGE(tsv.find("x\t0\t0\tw11\t5\tw5\t0.0045\n") != std::string::npos, tsv.c_str());
    TEST_ASSERT_MESSAGE(tsv.find("\tw6\t") == std::string::npos, tsv.c_str());
}

// attention_span on hand-built examples of 8 tokens whose answer's first query is t = 3: one
// looking at the first key (distance 3, position 0), one at itself (distance 0, position 3), one
// splitting its mass 0.25 / 0.75 between keys 1 and 2 (distances 2 and 1); and dev/attention
// span's tsv, by distance and by position, and its refusals
static void test_attention_span_bins_the_first_query_by_distance_or_position(void) {
    AttentionDump d;
    d.L = 1, d.NH = 1;
    d.examples.push_back(one_hot_example(8, 1, 1, 4, 9, to_first));
    d.examples.push_back(one_hot_example(8, 1, 1, 4, 9, to_self));
    d.examples.push_back(one_hot_example(8, 1, 1, 4, 12, to_self));
    float* row = &d.examples[2].probs[3 * 8];
    row[3] = 0, row[1] = 0.25f, row[2] = 0.75f;
    std::vector<LengthRange> ranges = {{9, 9}, {10, 12}, {13, 20}};
    std::vector<int> edges = {0, 1, 2, 4};  // bins 0, 1, 2-3, 4+
    AttentionSpan by_distance = attention_span(d, ranges, edges, KEY_DISTANCE);
    TEST_ASSERT_EQUAL_INT(2, by_distance.examples[0]);
    TEST_ASSERT_EQUAL_INT(1, by_distance.examples[1]);
    TEST_ASSERT_EQUAL_INT(0, by_distance.examples[2]);
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.5, by_distance.mean(0, 0, 0, 0));  // itself, in one of the two
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.5, by_distance.mean(0, 0, 0, 2));  // the first key, 3 back
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.75, by_distance.mean(1, 0, 0, 1));
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.25, by_distance.mean(1, 0, 0, 2));
    TEST_ASSERT_TRUE(std::isnan(by_distance.mean(2, 0, 0, 0)));  // no example: a mean of nothing
    AttentionSpan by_position = attention_span(d, ranges, edges, KEY_POSITION);
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.5, by_position.mean(0, 0, 0, 0));  // the first key
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.5, by_position.mean(0, 0, 0, 2));  // itself, at position 3
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.25, by_position.mean(1, 0, 0, 1));
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.75, by_position.mean(1, 0, 0, 2));

    std::string dir = unity_temp_dir();
    write_attention_dump(dir + "/d.bin", d);
    std::string out = dir + "/out", in = "x=" + dir + "/d.bin";
    std::string printed = run_attention({"span", "--out", out.c_str(), "--ranges", "9-9,10-12,13-20", "--edges", "0,1,2,4", in.c_str()});
    TEST_ASSERT_MESSAGE(printed.find("layer 0 head 0, λ 13-20 (0): no example of these lengths\n") != std::string::npos, printed.c_str());
    TEST_ASSERT_EQUAL_STRING("label\tlayer\thead\tlengths\texamples\tdistances\tmean_attention\n"
                             "x\t0\t0\t9-9\t2\t0\t0.5000\nx\t0\t0\t9-9\t2\t1\t0.0000\nx\t0\t0\t9-9\t2\t2-3\t0.5000\nx\t0\t0\t9-9\t2\t4+\t0.0000\n"
                             "x\t0\t0\t10-12\t1\t0\t0.0000\nx\t0\t0\t10-12\t1\t1\t0.7500\nx\t0\t0\t10-12\t1\t2-3\t0.2500\nx\t0\t0\t10-12\t1\t4+\t0.0000\n",
                             text_of(out + "/span.tsv").c_str());
    // by default: the test split's lengths as one range (the dump has no valid examples), and
    // bins doubling up to the longest example (0, 1, 2-3, 4-7: T = 8)
    printed = run_attention({"span", "--out", out.c_str(), "--keys", "position", in.c_str()});
    TEST_ASSERT_EQUAL_STRING(("x: mean attention of the answer's first query by the keys' position\n"
                              "  layer 0 head 0, λ 9-12 (3): 0 0.33 1 0.08 2-3 0.58 4+ 0.00\nwrote " + out + "/span.tsv\n").c_str(),
                             printed.c_str());
    struct {
        const char *option, *value, *error;
    } bad[] = {
        {"--edges", "1,2", "--edges must start at 0, got '1,2'"},
        {"--edges", "0,2,2", "--edges must rise, got '0,2,2'"},
        {"--edges", "0,x", "--edges expects integers >= 0, got 'x'"},
        {"--edges", "0, 1", "--edges expects integers >= 0, got ' 1'"},
        {"--ranges", "12-9", "--ranges: 12-9 is empty"},
        {"--ranges", "9", "--ranges takes LO-HI,LO-HI,..., got '9'"},
        {"--keys", "index", "--keys takes distance or position, not 'index'"},
    };
    for (const auto& b : bad) {
        const char* argv[] = {"attention", "span", "--out", out.c_str(), b.option, b.value, in.c_str()};
        TEST_ASSERT_THROWS_WITH(attention_main(7, (char**)argv), b.error);
    }
    // by default with a valid example too: valid's lengths (5 alone) and test's (9-12) as two ranges
    d.examples[0].split = SPLIT_VALID, d.examples[0].length = 5;
    write_attention_dump(dir + "/d.bin", d);
    printed = run_attention({"span", "--out", out.c_str(), in.c_str()});
    TEST_ASSERT_MESSAGE(printed.find("  layer 0 head 0, λ 5-5 (1): 0 0.00 1 0.00 2-3 1.00 4+ 0.00\n"
                                     "  layer 0 head 0, λ 9-12 (2): 0 0.50 1 0.38 2-3 0.12 4+ 0.00\n") != std::string::npos,
                        printed.c_str());
}

// CoPE examples over words x, y, z whose head opens its gates on y alone: position p_tj is the
// count of y in keys j..t, so p_t0 follows count(y) with slope 1, intercept 0 and r = 1
static AttentionExample counting_example(int split, const std::vector<int>& tokens, int prompt_len) {
    AttentionExample e;
    e.split = split, e.length = (int)tokens.size() - 1, e.prompt_len = prompt_len, e.T = (int)tokens.size(), e.tokens = tokens;
    int T = e.T;
    e.probs.assign((size_t)T * T, 0);
    e.positions.assign((size_t)T * T, 0);
    for (int t = 0; t < T; t++) {
        float p = 0;
        for (int j = t; j >= 0; j--) e.positions[(size_t)t * T + j] = p += tokens[j] == 1 ? 1.0f : 0.0f;
    }
    return e;
}

static void test_cope_head_finds_the_counted_word(void) {
    AttentionDump d;
    d.L = 1, d.NH = 1, d.has_positions = true, d.words = {"x", "y", "z"};
    // a table whose row 1 is row 2 negated and halved, and row 3 never trained (zero)
    d.table_copies = 1, d.table_rows = 4, d.table_width = 2, d.table = {3, 4, 1, 0, -2, 0, 0, 0};
    // the queries that predict the answer: t = prompt_len - 1 .. T - 3 (the last two tokens are
    // the answer's last word and <eos>); the y after them are never counted
    d.examples.push_back(counting_example(1, {0, 1, 1, 2, 0, 1, 1}, 3));  // queries t = 2, 3, 4: counts 2, 2, 2
    d.examples.push_back(counting_example(2, {1, 0, 0, 2, 1, 1, 0}, 2));  // t = 1 .. 4: counts 1, 1, 1, 2
    d.examples.push_back(counting_example(2, {2, 0, 0, 0, 0, 1, 1}, 4));  // t = 3, 4: counts 0, 0
    d.examples.back().length = 5;                                          // the others are 6
    CopeHead c = cope_head(d, 0, 0);
    TEST_ASSERT_EQUAL_INT(1, c.counted);
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 1.0, c.by_word[1].r());
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 1.0, c.by_word[1].slope());
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 0.0, c.by_word[1].intercept());
    // against t + 1 the same nine points, (3, 2) (4, 2) (5, 2) (2, 1) (3, 1) (4, 1) (5, 2) (4, 0)
    // (5, 0), fit badly: n Σxy - Σx Σy = 2, n Σx² - (Σx)² = 80, n Σy² - (Σy)² = 50
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 2 / sqrt(80.0 * 50), c.by_tokens.r());
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 2 / 80.0, c.by_tokens.slope());
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, (11 - 35 * 2 / 80.0) / 9, c.by_tokens.intercept());
    TEST_ASSERT_DOUBLE_WITHIN(0, 2.0, c.p_max[1]);
    TEST_ASSERT_DOUBLE_WITHIN(0, 2.0, c.p_max[2]);
    TEST_ASSERT_EQUAL_INT(2, c.p_max_at_length.size());
    TEST_ASSERT_DOUBLE_WITHIN(0, 0.0, c.p_max_at_length[5]);
    TEST_ASSERT_DOUBLE_WITHIN(0, 2.0, c.p_max_at_length[6]);
    TEST_ASSERT_DOUBLE_WITHIN(0, 1.0, c.mean_gate(1));
    TEST_ASSERT_DOUBLE_WITHIN(0, 0.0, c.mean_gate(0));
    // keys of y: 2 + 2 + 2 (t = 2, 3, 4 of the first), 1 + 1 + 1 + 2 (second), none (third)
    TEST_ASSERT_EQUAL_INT(11, c.keys[1]);
    TEST_ASSERT_EQUAL_INT(3 + 4 + 5 + 2 + 3 + 4 + 5 + 4 + 5, c.keys[0] + c.keys[1] + c.keys[2]);

    // dev/attention positions: the same numbers in its tables
    std::string dir = unity_temp_dir();
    write_attention_dump(dir + "/cope.bin", d);
    std::string out = dir + "/out", in = "counts-y=" + dir + "/cope.bin";
    std::string printed = run_attention({"positions", "--out", out.c_str(), in.c_str()});
    TEST_ASSERT_EQUAL_STRING("label\tlayer\thead\tcounted\tr\tslope\tintercept\ttokens_r\ttokens_slope\ttokens_intercept\tp_max_valid\tp_max_test\n"
                             "counts-y\t0\t0\ty\t1.0000\t1.0000\t0.0000\t0.0316\t0.0250\t1.1250\t2.000\t2.000\n",
                             text_of(out + "/counting.tsv").c_str());
    TEST_ASSERT_EQUAL_STRING("label\tlayer\thead\tword\tkeys\tmean_gate\ncounts-y\t0\t0\ty\t11\t1.0000\n"
                             "counts-y\t0\t0\tx\t18\t0.0000\ncounts-y\t0\t0\tz\t6\t0.0000\n",
                             text_of(out + "/gates.tsv").c_str());
    // the table: norms 5, 1, 2, 0; cosines (3, 4) . (1, 0) / 5 = 0.6, then -1, then 0 beside a zero row
    TEST_ASSERT_EQUAL_STRING("label\ttable\trow\tnorm\tcos_previous\ncounts-y\t0\t0\t5.0000\t0.0000\ncounts-y\t0\t1\t1.0000\t0.6000\n"
                             "counts-y\t0\t2\t2.0000\t-1.0000\ncounts-y\t0\t3\t0.0000\t0.0000\n",
                             text_of(out + "/table.tsv").c_str());
    TEST_ASSERT_EQUAL_STRING("label\tlayer\thead\tlength\tp_max\ncounts-y\t0\t0\t5\t0.000\ncounts-y\t0\t0\t6\t2.000\n",
                             text_of(out + "/reach.tsv").c_str());
    // and in the lines it printed: the head's fits, reach and gates, and the table's rows 0-2
    // learned (row 3 still zero) with the cosines of rows 1 and 2
    TEST_ASSERT_EQUAL_STRING(("counts-y:\n  layer 0 head 0: p_t0 = 1.00 x count('y') +0.00 (r 1.000), p_t0 = 0.03 x tokens +1.12 (r 0.032); "
                              "up to 2.0 in valid, 2.0 in test; gates 'y' 1.00 'x' 0.00 'z' 0.00\n"
                              "  the table: 3 of rows 0-2 learned, 3-3 still zero; cosine with the row before: 0.60 -1.00\n"
                              "wrote " + out + "/gates.tsv, " + out + "/counting.tsv, " + out + "/reach.tsv and " + out + "/table.tsv\n").c_str(),
                             printed.c_str());
    // a test example whose head counts three y (queries t = 0 .. 4: 1, 2, 3, 3, 3): the largest
    // p_t0 in test grows to 3, in valid it stays 2
    d.examples.push_back(counting_example(2, {1, 1, 1, 0, 0, 0, 0}, 1));
    write_attention_dump(dir + "/cope.bin", d);
    printed = run_attention({"positions", "--out", out.c_str(), in.c_str()});
    TEST_ASSERT_MESSAGE(printed.find("; up to 2.0 in valid, 3.0 in test; gates") != std::string::npos, printed.c_str());
    std::string counting = text_of(out + "/counting.tsv");
    TEST_ASSERT_MESSAGE(counting.find("\t2.000\t3.000\n") != std::string::npos, counting.c_str());
}

// dev/attention on two hand-built dumps: the tables hold the values the measures give
static void test_dev_attention_writes_the_tables_and_plots(void) {
    std::string dir = unity_temp_dir();
    AttentionDump self, first;
    self.L = first.L = 1, self.NH = first.NH = 1;
    for (int length : {9, 10}) {
        self.examples.push_back(one_hot_example(8, 1, 1, 4, length, to_self));
        first.examples.push_back(one_hot_example(8, 1, 1, 4, length, to_first));
    }
    write_attention_dump(dir + "/self.bin", self);
    write_attention_dump(dir + "/first.bin", first);
    std::string out = dir + "/out", a = dir + "/self.bin", b = "first=" + dir + "/first.bin", c = "self=" + dir + "/self.bin";
    run_attention({"distance", "--out", out.c_str(), a.c_str(), b.c_str(), c.c_str()});
    std::string text = text_of(out + "/distance.tsv");
    // self against first-token attention: 7 of 8 rows differ by ln 2, so 7 ln 2 / 8 = 0.606504
    TEST_ASSERT_EQUAL_STRING("length\tfirst\tself\n9\t0.606504\t0.000000\n10\t0.606504\t0.000000\n", text);
    // distance.svg: its y axis ends at the largest distance rounded up to 0.05 (0.65), and with the
    // examples of length 9 valid, its band of training lengths spans λ 9 of the x axis's 9-10
    TEST_ASSERT_MESSAGE(text_of(out + "/distance.svg").find("text-anchor=\"end\">0.65</text>") != std::string::npos, "the y axis's top");
    self.examples[0].split = first.examples[0].split = DUMP_VALID;
    write_attention_dump(dir + "/self.bin", self);
    write_attention_dump(dir + "/first.bin", first);
    run_attention({"distance", "--out", out.c_str(), a.c_str(), b.c_str()});
    SvgPlot scale(8.5, 10.5, "");
    std::string band = format_text("<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\"", scale.x(8.5), scale.y(scale.y_hi), scale.x(9.5) - scale.x(8.5),
                                   scale.y(0) - scale.y(scale.y_hi));
    TEST_ASSERT_MESSAGE(text_of(out + "/distance.svg").find(band) != std::string::npos, band.c_str());
    run_attention({"histogram", "--out", out.c_str(), "--bins", "4", b.c_str(), c.c_str()});
    text = text_of(out + "/histogram.tsv");
    // first-token attention from t = 4..7: (t - 0) / (t + 1) = 0.8 .. 0.875, all in the last bin
    TEST_ASSERT_EQUAL_STRING("from\tto\tfirst\tself\n0.000\t0.250\t0.000000\t1.000000\n0.250\t0.500\t0.000000\t0.000000\n"
                             "0.500\t0.750\t0.000000\t0.000000\n0.750\t1.000\t1.000000\t0.000000\n",
                             text);
    TEST_ASSERT_MESSAGE(access((out + "/distance.svg").c_str(), R_OK) == 0 && access((out + "/histogram.svg").c_str(), R_OK) == 0, "plots");
    const char* bad[] = {"attention", "distance", "--out", out.c_str(), a.c_str(), "no-label.bin"};
    TEST_ASSERT_THROWS_WITH(attention_main(6, (char**)bad), "expected LABEL=DUMP.bin, got 'no-label.bin'");
    // a dump of no examples has no lengths to plot a distance over
    self.examples.clear();
    write_attention_dump(dir + "/empty.bin", self);
    std::string empty = dir + "/empty.bin", labelled = "empty=" + empty;
    const char* none[] = {"attention", "distance", "--out", out.c_str(), empty.c_str(), labelled.c_str()};
    TEST_ASSERT_THROWS_WITH(attention_main(6, (char**)none), "empty.bin holds no examples to compare");
    // refused, where a table would otherwise come out that misleads: a column without a label, two
    // columns of one label, a number past int's range (not read modulo 2^32, as 8 here), and a
    // histogram of no example; a --out the refused command made is removed
    std::string unnamed = "=" + dir + "/first.bin", never = dir + "/never";
    const char* no_label[] = {"attention", "histogram", "--out", out.c_str(), unnamed.c_str()};
    TEST_ASSERT_THROWS_WITH(attention_main(5, (char**)no_label), ("expected LABEL=DUMP.bin, got '" + unnamed + "'").c_str());
    const char* twice[] = {"attention", "histogram", "--out", out.c_str(), b.c_str(), b.c_str()};
    TEST_ASSERT_THROWS_WITH(attention_main(6, (char**)twice), "label 'first' is given twice");
    const char* past_int[] = {"attention", "histogram", "--out", out.c_str(), "--min-length", "4294967304", b.c_str()};
    TEST_ASSERT_THROWS_WITH(attention_main(7, (char**)past_int), "--min-length expects integers >= 0, got '4294967304'");
    const char* too_long[] = {"attention", "histogram", "--out", never.c_str(), "--min-length", "10", b.c_str()};
    TEST_ASSERT_THROWS_WITH(attention_main(7, (char**)too_long), "has no example longer than 10");
    TEST_ASSERT_FALSE(access(never.c_str(), F_OK) == 0);
    // --bins from 1 to 1000: a row of histogram.tsv each, and no more
    run_attention({"histogram", "--out", out.c_str(), "--bins", "1000", b.c_str()});
    text = text_of(out + "/histogram.tsv");
    TEST_ASSERT_EQUAL_INT(1 + 1000, std::count(text.begin(), text.end(), '\n'));
    const char* too_many[] = {"attention", "histogram", "--out", out.c_str(), "--bins", "1001", b.c_str()};
    TEST_ASSERT_THROWS_WITH(attention_main(7, (char**)too_many), "--bins 1001 is out of range [1, 1000]");
}

// dev/attention scores on two hand-built examples of one word, w2, whose first answer query (t = 3)
// spreads 0.1, 0.2, 0.3, 0.4 and 0.1, 0.2, 0.1, 0.4 over keys 0-3: the scores ln(p_k / p_3) at
// distances 3, 2, 1, 0 are ln ¼, ln ½, ln ¾, 0 and ln ¼, ln ½, ln ¼, 0, so their means are -1.39,
// -0.69, -0.84 and 0, and distance 1's points spread by ln 3 = 1.0986. In bins 0, 1, 2+ the line
// names each bin's best mean (2+: -0.69, not -1.39), and the head's largest spread (distance 1's,
// not the last distance's 0).
static void test_dev_attention_scores_prints_each_bins_best_mean_and_the_largest_spread(void) {
    AttentionDump d;
    d.L = 1, d.NH = 1, d.words = {"<pad>", "<eos>", "w2"};
    for (float third : {0.3f, 0.1f}) {
        AttentionExample e = one_hot_example(6, 1, 1, 4, 5, to_self);
        std::fill(e.tokens.begin(), e.tokens.end(), 2);
        float* row = &e.probs[3 * 6];
        row[0] = 0.1f, row[1] = 0.2f, row[2] = third, row[3] = 0.4f;
        d.examples.push_back(e);
    }
    std::string dir = unity_temp_dir();
    write_attention_dump(dir + "/d.bin", d);
    std::string out = dir + "/out", in = "x=" + dir + "/d.bin";
    std::string printed = run_attention({"scores", "--out", out.c_str(), "--edges", "0,1,2", in.c_str()});
    TEST_ASSERT_EQUAL_STRING(("x: layer 0's best score in each distance bin, relative to the query's own key\n"
                              "  head 0, key 'w2': 0 0.00 1 -0.84 2+ -0.69\n"
                              "  head 0: points of one word and distance spread by up to 1.1 across examples\n"
                              "wrote " + out + "/scores.tsv\n").c_str(),
                             printed.c_str());
    std::string tsv = text_of(out + "/scores.tsv");
    TEST_ASSERT_MESSAGE(tsv.find("x\t0\tw2\t1\t2\t-0.8370\t1.0986\n") != std::string::npos, tsv.c_str());
}

// layer0_scores: each key of the first answer query's row (t = 3 here) gives the point
// ln p_k - ln p_t at distance t - k, under its word, except a key whose probability is below
// FLT_MIN (a subnormal, which no longer holds its score, or 0): FLT_MIN itself still counts
static void test_layer0_scores_take_no_point_from_a_probability_below_flt_min(void) {
    AttentionDump d;
    d.L = 1, d.NH = 1;
    AttentionExample e = one_hot_example(6, 1, 1, 4, 5, to_self);  // tokens 2..7
    float* row = &e.probs[3 * 6];
    row[0] = 1e-40f, row[1] = 0.25f, row[2] = FLT_MIN, row[3] = 0.5f;
    d.examples.push_back(e);
    ScoreCurves curves = layer0_scores(d, 0);
    TEST_ASSERT_EQUAL_INT(3, curves.size());
    TEST_ASSERT_EQUAL_INT(0, curves.count(std::make_tuple(0, 2, 3)));
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, log(0.5), curves[std::make_tuple(0, 3, 2)].mean());
    TEST_ASSERT_DOUBLE_WITHIN(1e-9, log((double)FLT_MIN) - log(0.5), curves[std::make_tuple(0, 4, 1)].mean());
    TEST_ASSERT_DOUBLE_WITHIN(0, 0.0, curves[std::make_tuple(0, 5, 0)].mean());
    row = &d.examples[0].probs[3 * 6];
    row[3] = 1e-40f;  // the query's own key below FLT_MIN: nothing to measure the others by
    TEST_ASSERT_EQUAL_INT(0, layer0_scores(d, 0).size());
}

// least_squares recovers a linear law exactly (to rounding) from rows with a constant feature,
// which only the ridge keeps solvable, and a feature of noise
static void test_least_squares_recovers_a_linear_law(void) {
    Rng rng{7};
    std::vector<std::vector<float>> xs;
    std::vector<double> ys;
    for (int i = 0; i < 200; i++) {
        xs.push_back({(float)rng.normal(), 1.0f, (float)rng.normal()});
        ys.push_back(3.0 - 2.0 * xs.back()[0] + 0.5 * xs.back()[2]);
    }
    std::vector<const float*> rows;
    for (const auto& x : xs) rows.push_back(x.data());
    LinearFit fit = least_squares(rows, ys, 3);
    TEST_ASSERT_DOUBLE_WITHIN(1e-4, -2.0, fit.w[0]);
    TEST_ASSERT_DOUBLE_WITHIN(1e-4, 0.5, fit.w[2]);
    float x[3] = {10, 1, -4};  // far from the rows: a line extends
    TEST_ASSERT_DOUBLE_WITHIN(1e-3, 3.0 - 20.0 - 2.0, fit.predict(x));
}

// least_squares where no feature varies (every row the same): the ridge's floor (the features'
// variance is 0) keeps the system solvable, and the fit is the targets' mean, with no weight
static void test_least_squares_of_features_that_never_vary_predicts_the_mean(void) {
    const float x[2] = {1, 2};
    std::vector<const float*> rows(4, x);
    LinearFit fit = least_squares(rows, {1, 2, 3, 6}, 2);
    TEST_ASSERT_DOUBLE_WITHIN(1e-9, 0.0, fit.w[0]);
    TEST_ASSERT_DOUBLE_WITHIN(1e-9, 0.0, fit.w[1]);
    TEST_ASSERT_DOUBLE_WITHIN(1e-9, 3.0, fit.predict(x));
}

// CoPE's table row by row: a zero row has no direction, so its cosine with the row before is
// 0, and so is the next row's with it (the rule "0 where either is zero"), never 0 / 0
static void test_cope_table_rows_give_a_zero_row_no_cosine(void) {
    AttentionDump d;
    d.L = 1, d.table_copies = 1, d.table_rows = 4, d.table_width = 2, d.table = {0, 0, 3, 4, 0, 0, 6, 8};
    std::vector<CopeTableRow> rows = cope_table_rows(d, 0);
    const double norms[] = {0, 5, 0, 10};
    for (int m = 0; m < 4; m++) {
        TEST_ASSERT_DOUBLE_WITHIN(1e-12, norms[m], rows[m].norm);
        TEST_ASSERT_DOUBLE_WITHIN(0, 0.0, rows[m].cos_previous);
    }
}

// position_probe on hand-built states: state 0 holds the position itself (beside noise), so the
// probe reads it at every test position, past the fitted ones too; state 1 a code that stops
// at 9, so past position 9 the probe's prediction stops with it, and no probe fitted to test
// finds the positions there. A dump without states is refused.
static void test_the_position_probe_reads_a_code_as_far_as_it_goes(void) {
    AttentionDump d;
    d.L = 1, d.NH = 1, d.C = 2;
    Rng rng{8};
    for (int i = 0; i < 20; i++)
        for (int split : {DUMP_VALID, DUMP_TEST}) {
            int prompt_len = split == DUMP_VALID ? 4 + i % 7 : 20;  // fitted: positions 0-9
            AttentionExample e = one_hot_example(prompt_len + 2, 1, 1, prompt_len, prompt_len, to_self);
            e.split = split;
            for (int s = 0; s < 2; s++)
                for (int t = 0; t < e.T; t++) e.states.insert(e.states.end(), {(float)(s == 0 ? t : std::min(t, 9)), (float)rng.normal()});
            d.examples.push_back(e);
        }
    PositionProbe exact = position_probe(d, 0), stopped = position_probe(d, 1);
    TEST_ASSERT_EQUAL_INT(9, exact.longest_valid);
    long held_out = 0;  // valid's errors are those of the examples not fitted: 1, 3, ..., 19
    for (const auto& [t, tally] : exact.by_position[DUMP_VALID]) held_out += tally.n;
    TEST_ASSERT_EQUAL_INT(5 + 7 + 9 + 4 + 6 + 8 + 10 + 5 + 7 + 9, held_out);
    TEST_ASSERT_EQUAL_INT(10, exact.by_position[DUMP_VALID].at(0).n);
    TEST_ASSERT_EQUAL_INT(4 + 6 + 8 + 10 + 5 + 7 + 9 + 4 + 6 + 8, exact.fitted);  // the prompts of valid examples 0, 2, ..., 18
    TEST_ASSERT_DOUBLE_WITHIN(1e-3, 0, exact.error(DUMP_VALID, 0, 9));
    TEST_ASSERT_DOUBLE_WITHIN(1e-3, 0, exact.error(DUMP_TEST, 10, 19));
    TEST_ASSERT_DOUBLE_WITHIN(1e-3, 0, stopped.error(DUMP_TEST, 0, 9));
    const ProbeTally& last = stopped.by_position[DUMP_TEST].at(19);
    TEST_ASSERT_EQUAL_INT(20, last.n);
    TEST_ASSERT_DOUBLE_WITHIN(1e-3, 9.0, last.prediction / last.n);
    TEST_ASSERT_DOUBLE_WITHIN(1e-3, 5.5, stopped.error(DUMP_TEST, 10, 19));  // the mean of 1..10
    TEST_ASSERT_TRUE(std::isnan(stopped.error(DUMP_VALID, 10, 19)));         // valid has no position past 9
    std::string out = run_attention_dump(d, "probe");
    TEST_ASSERT_MESSAGE(out.find("state 1 (last layer's output): |error| valid (held out) 0.00; test at positions 0-9 0.00, past 9 5.50") != std::string::npos,
                        out.c_str());
    // the mean prediction in each bin of test positions (every 5 up to the longest prompt, 20):
    // state 0's grows with the positions, state 1's stops at 9; and probe.tsv's by position
    TEST_ASSERT_MESSAGE(out.find("mean prediction by test position: 0-4 2.0 5-9 7.0 10-14 12.0 15+ 17.0\n  state 1") != std::string::npos,
                        out.c_str());
    TEST_ASSERT_MESSAGE(out.find("past 9 5.50; mean prediction by test position: 0-4 2.0 5-9 7.0 10-14 9.0 15+ 9.0\n") != std::string::npos,
                        out.c_str());
    std::string written = out.substr(out.rfind("wrote ") + 6), tsv = text_of(written.substr(0, written.size() - 1));
    const char* last_position = "d\t1\ttest\t19\t20\t";  // state 1, test position 19: 20 tokens
    size_t at = tsv.find(last_position);
    double prediction = 0, error = 0;
    TEST_ASSERT_TRUE(at != std::string::npos && sscanf(tsv.c_str() + at + strlen(last_position), "%lf\t%lf", &prediction, &error) == 2);
    TEST_ASSERT_DOUBLE_WITHIN(1e-3, 9.0, prediction);
    TEST_ASSERT_DOUBLE_WITHIN(1e-3, 10.0, error);
    AttentionDump no_longer = d;  // test prompts no longer than valid's: no position past them to average over
    for (size_t i = 1; i < no_longer.examples.size(); i += 2) no_longer.examples[i] = d.examples[i - 1], no_longer.examples[i].split = DUMP_TEST;
    out = run_attention_dump(no_longer, "probe");
    TEST_ASSERT_MESSAGE(out.find("past 9 none; mean prediction") != std::string::npos, out.c_str());
    // with two layers, the state between them is named by the layer it leaves
    AttentionDump two_layers = d;
    two_layers.L = 2;
    for (AttentionExample& e : two_layers.examples) {
        e.probs = one_hot_example(e.T, 2, 1, e.prompt_len, e.length, to_self).probs;
        std::vector<float> last(e.states.begin() + (size_t)e.T * d.C, e.states.end());
        e.states.insert(e.states.end(), last.begin(), last.end());
    }
    out = run_attention_dump(two_layers, "probe");
    TEST_ASSERT_MESSAGE(out.find("  state 1 (after layer 0): ") != std::string::npos && out.find("  state 2 (last layer's output): ") != std::string::npos,
                        out.c_str());
    // fitted to test: the position is in state 0 at every test position; state 1 holds none past 9,
    // so however a line reads it, positions 10-19 get one prediction, wrong by 2.5 on average at best
    TEST_ASSERT_DOUBLE_WITHIN(1e-3, 0, position_probe(d, 0, DUMP_TEST).error(DUMP_TEST, 10, 19));
    TEST_ASSERT_TRUE(position_probe(d, 1, DUMP_TEST).error(DUMP_TEST, 10, 19) >= 2.5 - 1e-9);
    // three fitted prompt tokens for two weights and a bias: any positions would fit, so the
    // probe refuses
    AttentionDump few = d;
    few.examples.resize(2);  // valid example 0 (4 prompt tokens) and a test one
    few.examples[0].prompt_len = 3;
    TEST_ASSERT_THROWS_WITH(position_probe(few, 0), "the probe fits 2 weights and a bias to 3 prompt tokens: too few");
    d.C = 0;
    TEST_ASSERT_THROWS_WITH(position_probe(d, 0), "the dump holds no residual stream (it was written before version 3)");
}

// ----------------------------------------------------------------------------
// a real model

// a tiny copy_cmc run of `pe` (4 steps, or `steps` at lr 1e-2: one that answers some; test
// lengths up to test_max) in dir/run: its model.bin
static std::string tiny_trained_model(const std::string& dir, const char* pe, bool pe_per_layer = false, int random_positions = 0,
                                      const char* task = "copy_cmc", int steps = 4, int test_max = 8) {
    RunConfig c;
    c.task = task, c.pe = pe, c.pe_per_layer = pe_per_layer, c.random_positions = random_positions;
    c.layers = 2, c.d_model = 16, c.heads = 2, c.d_ff = 32, c.steps = steps, c.eval_every = steps / 2, c.batch = 8;
    if (steps > 4) c.lr = 1e-2;
    c.data.train_size = 64, c.data.valid_size = 30, c.data.test_size = 30, c.data.train_max = 5, c.data.test_max = test_max;
    c.out = dir + "/run";
    Run r(&c);
    Silence quiet;
    prepare_run(&r);
    train(&r, INT_MAX);
    return c.out + "/model.bin";
}

// ./train --load MODEL --dump-attention DUMP --dump-per-length 2 [--eval-positions drawn], read back
static AttentionDump dump_attention_of(const std::string& model, const std::string& dump, bool drawn = false) {
    const char* argv[] = {"train", "--load", model.c_str(), "--dump-attention", dump.c_str(), "--dump-per-length", "2", "--eval-positions", "drawn"};
    {
        Silence quiet;
        run(drawn ? 9 : 7, (char**)argv);
    }
    return read_attention_dump(dump);
}

// --dump-attention on a tiny trained run: up to N examples of every length of valid and test,
// rows that are distributions over keys 0..t, probabilities equal to a fresh forward pass, and
// two heatmaps with the words on the axes
static void test_dump_attention_of_a_trained_model(void) {
    std::string dir = unity_temp_dir();
    std::string model = tiny_trained_model(dir, "alibi");
    AttentionDump d = dump_attention_of(model, dir + "/att.bin");
    TEST_ASSERT_EQUAL_INT(2, d.L);
    TEST_ASSERT_EQUAL_INT(2, d.NH);
    TEST_ASSERT_FALSE(d.has_positions);  // ALiBi has no contextual positions
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
                    for (int j = t + 1; j < e.T; j++) TEST_ASSERT_DOUBLE_WITHIN(0, 0, row[j]);
                }
    // the probabilities are the model's: a fresh forward of the first example gives them again
    RunConfig again;
    Run r(&again);
    {
        Silence quiet;
        load_run(&r, model);
    }
    TEST_ASSERT_MESSAGE(d.words == r.data.vocab.words, "the task's words");
    const AttentionExample& e = d.examples[0];
    model_forward(&r.model, e.tokens.data(), nullptr, 1, e.T, NO_DROPOUT);
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, r.model.act(A_ATT, 1), e.probs.data() + (size_t)d.NH * e.T * e.T, (size_t)d.NH * e.T * e.T, "layer 1");
    // and so is the residual stream: entering layer 1, and leaving the last
    TEST_ASSERT_EQUAL_INT(16, d.C);
    TEST_ASSERT_EQUAL_INT((d.L + 1) * e.T * d.C, e.states.size());
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, r.model.act(A_RES_IN, 1), e.state(d.C, 1, 0), (size_t)e.T * d.C, "entering layer 1");
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, r.model.act(A_RES_OUT), e.state(d.C, 2, 0), (size_t)e.T * d.C, "the last layer's output");
    std::string text = text_of(dir + "/att.bin.test.svg");
    TEST_ASSERT_MESSAGE(text.find("layer 1, head 1") != std::string::npos && text.find(">Copy:</text>") != std::string::npos, "heatmap");
    // a dump never replaces the model read, a file of its run, or any other checkpoint
    std::string before = text_of(model), copy = dir + "/copy.bin";
    write_text(copy, before);
    for (const std::string& out : {model, dir + "/run/results.json", dir + "/run/state.bin", copy}) {
        const char* argv[] = {"train", "--load", model.c_str(), "--dump-attention", out.c_str()};
        TEST_ASSERT_THROWS_WITH(run(5, (char**)argv), "would replace a run's file: write the dump to a file of its own");
    }
    TEST_ASSERT_MESSAGE(text_of(model) == before, "the model read is as it was");
}

// --dump-attention --eval-positions drawn on a --random-positions model: each example's
// probabilities are those of a forward at the positions evaluation draws for it (a function of
// seed, split and example), not those at 0..n-1
static void test_dump_attention_at_drawn_positions(void) {
    std::string dir = unity_temp_dir();
    std::string model = tiny_trained_model(dir, "t5", false, 64);
    AttentionDump d = dump_attention_of(model, dir + "/att.bin", true);
    RunConfig again;
    Run r(&again);
    {
        Silence quiet;
        load_run(&r, model);
    }
    size_t checked = 0;
    for (const AttentionExample& e : d.examples) {
        if (e.T < 4) continue;
        const Split& split = r.data.splits[e.split];
        Batch batch;
        fill_batch(&batch, split, {e.index});
        draw_eval_positions(&batch, 64, r.config->seed, SPLIT_NAMES[e.split], {e.index});
        size_t plane = (size_t)d.NH * e.T * e.T;
        model_forward(&r.model, e.tokens.data(), nullptr, 1, e.T, NO_DROPOUT, 0, batch.places());
        TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, r.model.act(A_ATT, 1), e.probs.data() + plane, plane, "layer 1 at drawn positions");
        model_forward(&r.model, e.tokens.data(), nullptr, 1, e.T, NO_DROPOUT);
        TEST_ASSERT_MESSAGE(std::vector<float>(r.model.act(A_ATT, 1), r.model.act(A_ATT, 1) + plane) !=
                                std::vector<float>(e.probs.begin() + plane, e.probs.begin() + 2 * plane),
                            "the dump's attention is the one at 0..n-1");
        checked++;
    }
    TEST_ASSERT_GREATER_THAN(5, checked);
}

// layer0_scores on tiny trained models: with RoPE every point of one (head, word, distance) is the
// same score whatever the example, as analysis.h derives (float32: 1e-4), and each equals the
// score a fresh forward gives, q·k relative to the query's own key; with APE, which adds the
// position to the embedding, the premise fails and the points of one distance disagree.
static void test_layer0_scores_are_one_curve_for_a_relative_pe_and_not_for_ape(void) {
    std::string dir = unity_temp_dir();
    std::string model = tiny_trained_model(dir, "rope");
    AttentionDump d = dump_attention_of(model, dir + "/att.bin");
    ScoreCurves curves = layer0_scores(d, 0);
    int repeated = 0;
    for (const auto& kv : curves)
        if (kv.second.points > 1) {
            repeated++;
            TEST_ASSERT_DOUBLE_WITHIN(1e-4, 0.0, kv.second.spread());
        }
    TEST_ASSERT_MESSAGE(repeated > 10, "word and distance pairs seen in several examples");
    // the scores themselves, from the first example's q and k (RoPE applied) in a fresh forward
    RunConfig again;
    Run r(&again);
    {
        Silence quiet;
        load_run(&r, model);
    }
    const AttentionExample& e = d.examples[0];
    ScoreCurves one = layer0_scores(d, e.length);
    model_forward(&r.model, e.tokens.data(), nullptr, 1, e.T, NO_DROPOUT);
    int C = r.model.config.C, HS = C / d.NH, t = first_answer_query(e);
    auto score = [&](int h, int k) {
        const real* q = r.model.act(A_QKV, 0) + (size_t)t * 3 * C + h * HS;
        const real* key = r.model.act(A_QKV, 0) + (size_t)k * 3 * C + C + h * HS;
        double s = 0;
        for (int x = 0; x < HS; x++) s += q[x] * key[x];
        return s;  // model.h's scores have no 1/√hs: wq's init carries it
    };
    int checked = 0;
    for (int h = 0; h < d.NH; h++)
        for (int k = 0; k <= t; k++) {
            auto it = one.find({h, e.tokens[k], t - k});
            if (it == one.end()) continue;
            TEST_ASSERT_DOUBLE_WITHIN(1e-3, score(h, k) - score(h, t), it->second.mean());
            checked++;
        }
    TEST_ASSERT_EQUAL_INT(2 * (t + 1), checked);

    std::string ape = tiny_trained_model(dir + "/ape", "ape");
    double widest = 0;
    for (const auto& kv : layer0_scores(dump_attention_of(ape, dir + "/ape.bin"), 0)) widest = std::max(widest, kv.second.spread());
    TEST_ASSERT_MESSAGE(widest > 1e-2, "APE's points of one word and distance differ between examples");
}

// A CoPE model's dump holds its table (or each layer's) and its positions: p_tj = sum_{k=j..t}
// sigmoid(q_t . k_k), computed here from a fresh forward's q and k, for every layer, head, query
// and key of a valid and a test example (float storage: 1e-5 relative)
static void check_cope_dump(bool pe_per_layer) {
    std::string dir = unity_temp_dir();
    std::string model = tiny_trained_model(dir, "cope", pe_per_layer);
    AttentionDump d = dump_attention_of(model, dir + "/att.bin");
    TEST_ASSERT_TRUE(d.has_positions);
    RunConfig again;
    Run r(&again);
    {
        Silence quiet;
        load_run(&r, model);
    }
    TEST_ASSERT_EQUAL_INT(pe_per_layer ? d.L : 1, d.table_copies);
    TEST_ASSERT_EQUAL_INT(r.model.pe().max_pos, d.table_rows);
    for (int l = 0; l < d.table_copies; l++) {
        TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, r.model.param(P_PE_TABLE, l), d.table_row(l, 0), (size_t)d.table_rows * d.table_width, "table");
        TEST_ASSERT_MESSAGE(cope_table_rows(d, l)[1].norm > 0, "four steps trained the table's first rows");
    }
    int C = r.model.config.C, HS = C / d.NH;
    for (const AttentionExample* e : {&d.examples.front(), &d.examples.back()}) {
        model_forward(&r.model, e->tokens.data(), nullptr, 1, e->T, NO_DROPOUT);
        for (int l = 0; l < d.L; l++)
            for (int h = 0; h < d.NH; h++)
                for (int t = 0; t < e->T; t++) {
                    const real* q = r.model.act(A_QKV, l) + (size_t)t * 3 * C + h * HS;
                    const float* row = e->position_row(d.NH, l, h, t);
                    double p = 0;
                    for (int j = t; j >= 0; j--) {
                        const real* k = r.model.act(A_QKV, l) + (size_t)j * 3 * C + C + h * HS;
                        double qk = 0;
                        for (int x = 0; x < HS; x++) qk += q[x] * k[x];
                        p += 1 / (1 + exp(-qk));
                        TEST_ASSERT_DOUBLE_WITHIN(1e-5 * p, p, row[j]);
                    }
                    for (int j = t + 1; j < e->T; j++) TEST_ASSERT_DOUBLE_WITHIN(0, 0, row[j]);
                }
    }
    TEST_ASSERT_EQUAL_INT(2, d.examples.back().split);
}

static void test_dump_attention_of_a_cope_model_holds_its_table_and_positions(void) { check_cope_dump(false); }
static void test_dump_attention_of_a_per_layer_cope_model_holds_each_table(void) { check_cope_dump(true); }

// dev/table_extend: from row 3 on every row of the PE's table (each layer's with
// --pe-per-layer) repeats rows 1 and 2, the rest of the model is untouched, and the checkpoint
// loads
static void check_table_extend(const char* pe, bool pe_per_layer) {
    std::string dir = unity_temp_dir();
    std::string model = tiny_trained_model(dir, pe, pe_per_layer), extended = dir + "/extended.bin", said;
    {
        Capture out;
        table_extend(model, 3, 2, extended);
        said = out.text();
    }
    RunConfig c0, c1;
    Run before(&c0), after(&c1);
    {
        Silence quiet;
        load_run(&before, model);
        load_run(&after, extended);
    }
    const Model &m0 = before.model, &m1 = after.model;
    const ModelConfig& c = m1.config;
    int rows = pe_position_rows(c.pe, c.max_pos()), copies = param_copies(c, P_PE_TABLE);
    size_t width = param_numel(c, P_PE_TABLE) / rows;
    size_t expected_width = c.pe == PE_T5 ? c.NH : c.pe == PE_COPE ? c.HS() : c.C;  // pe.h's table of PEs
    TEST_ASSERT_EQUAL_INT((int)expected_width, (int)width);
    TEST_ASSERT_EQUAL_INT(c.pe == PE_T5 ? T5_NUM_BUCKETS : c.max_pos(), rows);
    TEST_ASSERT_EQUAL_INT(pe_per_layer ? 2 : 1, copies);
    for (int copy = 0; copy < copies; copy++) {
        const real* t0 = before.model.param(P_PE_TABLE, copy);
        const real* t1 = after.model.param(P_PE_TABLE, copy);
        TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, t0, t1, 3 * width, "rows 0-2 as trained");
        for (int row = 3; row < rows; row++) {
            int source = 1 + (row - 3) % 2;  // rows 1, 2, 1, 2, ...
            TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, t0 + source * width, t1 + row * width, width, "an extended row");
        }
        bool differ = false;
        for (size_t x = 0; x < width; x++) differ = differ || t0[width + x] != t0[2 * width + x];
        TEST_ASSERT_MESSAGE(differ, "rows 1 and 2 differ, so which one a row repeats shows");
    }
    // every other parameter as it was (the layout puts each copy of the table where it will)
    auto in_table = [&](size_t k) {
        for (int copy = 0; copy < copies; copy++)
            if (k >= m0.layout.at(P_PE_TABLE, copy) && k < m0.layout.at(P_PE_TABLE, copy) + rows * width) return true;
        return false;
    };
    for (size_t k = 0; k < m0.params.size(); k++)
        if (!in_table(k)) TEST_ASSERT_MESSAGE(m0.params[k] == m1.params[k], "a parameter outside the table changed");
    // the line it printed names the rows written and the rows they repeat; from the last row on,
    // one row repeats one row
    TEST_ASSERT_MESSAGE(said.find(format_text("wrote %s: rows 3-%d of the table repeat rows 1-2\n", extended.c_str(), rows - 1)) != std::string::npos,
                        said.c_str());
    {
        Capture out;
        table_extend(model, rows - 1, 2, extended);
        said = out.text();
    }
    TEST_ASSERT_MESSAGE(said.find(format_text("wrote %s: row %d of the table repeat row %d\n", extended.c_str(), rows - 1, rows - 3)) != std::string::npos,
                        said.c_str());
    Silence quiet;
    TEST_ASSERT_THROWS_WITH(table_extend(model, 1, 2, extended), "FROM 1 and PERIOD 2 must satisfy 1 <= PERIOD <= FROM");
    TEST_ASSERT_THROWS_WITH(table_extend(model, 3, 2, model), "is the model read: write the edited model to a file of its own");
    TEST_ASSERT_THROWS_WITH(table_extend(model, 3, 0, extended), "FROM 3 and PERIOD 0 must satisfy 1 <= PERIOD <= FROM");
    TEST_ASSERT_THROWS_WITH(table_extend(model, rows, 2, extended), "the table's rows");
    TEST_ASSERT_THROWS_WITH(table_extend(dir + "/run/state.bin", 3, 2, extended), "holds a training state: give a run's model.bin");
}

static void test_table_extend_repeats_the_rows_before_in_cope(void) { check_table_extend("cope", false); }
static void test_table_extend_repeats_the_rows_before_in_every_layer(void) { check_table_extend("cope", true); }
static void test_table_extend_repeats_the_buckets_before_in_t5(void) { check_table_extend("t5", false); }
static void test_table_extend_repeats_the_positions_before_in_ape_learned(void) { check_table_extend("ape_learned", false); }

static void test_table_extend_refuses_a_model_without_a_table(void) {
    std::string dir = unity_temp_dir();
    std::string model = tiny_trained_model(dir, "alibi");
    Silence quiet;
    TEST_ASSERT_THROWS_WITH(table_extend(model, 3, 2, dir + "/x.bin"),
                            "is a --pe alibi model: only ape_learned, t5 and cope learn a table of rows by position to extend");
}

// a run loaded from its model.bin, quietly
static void load_quietly(Run* r, const std::string& model) {
    Silence quiet;
    load_run(r, model);
}

// the logits of MODEL on a fixed sequence with head HEAD of layer LAYER's values (its rows of
// wv) replaced by random numbers, or as they are for HEAD < 0
static std::vector<real> logits_with_values_scrambled(const std::string& model, int layer, int head) {
    RunConfig c;
    Run r(&c);
    load_quietly(&r, model);
    Model& m = r.model;
    std::vector<int> tokens = {1, 5, 9, 13, 17, 21};
    int C = m.config.C, HS = m.config.HS(), T = (int)tokens.size();
    if (head >= 0) {
        Rng rng{11};
        real* wv = m.param(P_WV, layer);  // (C out, C in): out dims [head * HS, (head + 1) * HS) are the head's values
        for (size_t k = (size_t)head * HS * C; k < (size_t)(head + 1) * HS * C; k++) wv[k] = (real)rng.normal();
    }
    model_forward(&m, tokens.data(), nullptr, 1, T, NO_DROPOUT);
    return std::vector<real>(m.act(A_LOGITS), m.act(A_LOGITS) + (size_t)T * m.config.V);
}

// dev/head_ablate: the heads named write nothing (their columns of wo zero, every other
// parameter as trained), so the model's logits no longer depend on what they attend to or carry
// (their values scrambled: the same bits), while a head not named still counts; bad lists refused
static void test_head_ablate_silences_the_heads_named_and_no_other(void) {
    std::string dir = unity_temp_dir();
    std::string model = tiny_trained_model(dir, "rope"), ablated = dir + "/ablated.bin";
    {
        Silence quiet;
        head_ablate(model, "1:0", ablated);
    }
    RunConfig c0, c1;
    Run before(&c0), after(&c1);
    load_quietly(&before, model);
    load_quietly(&after, ablated);
    const Model &m0 = before.model, &m1 = after.model;
    int C = m1.config.C, HS = m1.config.HS();
    TEST_ASSERT_EQUAL_INT(2, m1.config.NH);
    size_t wo = m0.layout.at(P_WO, 1);
    for (size_t k = 0; k < m0.params.size(); k++) {
        bool head_column = k >= wo && k < wo + (size_t)C * C && (int)((k - wo) % C) < HS;  // wo[o][c] with c in head 0's dims
        if (head_column) TEST_ASSERT_MESSAGE(m1.params[k] == 0 && m0.params[k] != 0, "a column of head 1:0 in wo is not zeroed");
        else TEST_ASSERT_MESSAGE(m0.params[k] == m1.params[k], "a parameter outside head 1:0's columns of wo changed");
    }
    std::vector<real> as_is = logits_with_values_scrambled(ablated, 1, -1);
    std::vector<real> ablated_scrambled = logits_with_values_scrambled(ablated, 1, 0);
    TEST_ASSERT_MESSAGE(as_is == ablated_scrambled, "the ablated head's values still reach the logits");
    TEST_ASSERT_MESSAGE(as_is != logits_with_values_scrambled(ablated, 1, 1), "the other head's values do not reach the logits");
    TEST_ASSERT_MESSAGE(logits_with_values_scrambled(model, 1, -1) != logits_with_values_scrambled(model, 1, 0),
                        "before the ablation, head 1:0's values do not reach the logits");
    {
        Silence quiet;
        head_ablate(model, "0:1,1:0", ablated);
    }
    RunConfig c2;
    Run both(&c2);
    load_quietly(&both, ablated);
    TEST_ASSERT_TRUE(both.model.param(P_WO, 0)[HS] == 0);          // wo[0][HS]: head 1's first dim, layer 0
    TEST_ASSERT_TRUE(both.model.param(P_WO, 0)[0] != 0);           // wo[0][0]: head 0's, not named in layer 0
    TEST_ASSERT_TRUE(both.model.param(P_WO, 1)[C + HS - 1] == 0);  // wo[1][HS - 1]: head 0's last dim, layer 1

    Silence quiet;  // each refused checkpoint is loaded, and says so, before the refusal
    TEST_ASSERT_THROWS_WITH(head_ablate(model, "1:0", model), "is the model read: write the edited model to a file of its own");
    TEST_ASSERT_THROWS_WITH(head_ablate(model, "2:0", ablated), "layer 2: the model's layers are 0-1");
    TEST_ASSERT_THROWS_WITH(head_ablate(model, "1:2", ablated), "head 2: the model's heads are 0-1");
    TEST_ASSERT_THROWS_WITH(head_ablate(model, "1:0,1:0", ablated), "head 1:0 is named twice");
    TEST_ASSERT_THROWS_WITH(head_ablate(model, "1", ablated), "'1' is not LAYER:HEAD");
    TEST_ASSERT_THROWS_WITH(head_ablate(model, "1:x", ablated), "HEAD expects an integer in [0, 2147483647], got 'x'");
    TEST_ASSERT_THROWS_WITH(head_ablate(model, "-1:0", ablated), "LAYER expects an integer in [0, 2147483647], got '-1'");
    TEST_ASSERT_THROWS_WITH(head_ablate(model, "", ablated), "no head named");
    TEST_ASSERT_THROWS_WITH(head_ablate(model, "1:0,", ablated), "'1:0,' ends with a comma");
    // an OUT that is not a file (here a pipe) is refused, not replaced by the file renamed over it
    std::string pipe = dir + "/pipe";
    TEST_ASSERT_EQUAL_INT(0, mkfifo(pipe.c_str(), 0600));
    TEST_ASSERT_THROWS_WITH(head_ablate(model, "1:0", pipe), "not a regular file, and a checkpoint is renamed into place");
    struct stat st;
    TEST_ASSERT_TRUE(stat(pipe.c_str(), &st) == 0 && S_ISFIFO(st.st_mode));
    TEST_ASSERT_THROWS_WITH(head_ablate(dir + "/run/state.bin", "1:0", ablated), "holds a training state: give a run's model.bin");
}

// dev/head_ablate --zero-query: the head named keeps its output but loses its query (its rows of
// wq zero, every other parameter as trained), so a RoPE head attends evenly over the prefix, 1 /
// (i + 1) to each key, while the other head of its layer still chooses where to look
static void test_head_ablate_zero_query_spreads_a_rope_heads_attention_evenly(void) {
    std::string dir = unity_temp_dir();
    std::string model = tiny_trained_model(dir, "rope"), ablated = dir + "/no-query.bin";
    std::string said;
    {
        Capture out;
        head_ablate(model, "1:0", ablated, ABLATE_QUERY);
        said = out.text();
    }
    TEST_ASSERT_MESSAGE(said.find("wrote " + ablated + ": heads 1:0 have no query (their rows of wq are zero)\n") != std::string::npos, said.c_str());
    RunConfig c0, c1;
    Run before(&c0), after(&c1);
    load_quietly(&before, model);
    load_quietly(&after, ablated);
    Model &m0 = before.model, &m1 = after.model;
    int C = m1.config.C, HS = m1.config.HS(), NH = m1.config.NH;
    size_t wq = m0.layout.at(P_WQ, 1);
    for (size_t k = 0; k < m0.params.size(); k++) {
        bool head_row = k >= wq && k < wq + (size_t)HS * C;  // wq[o][c] with o in head 0's dims
        if (head_row) TEST_ASSERT_MESSAGE(m1.params[k] == 0, "a row of head 1:0 in wq is not zeroed");
        else TEST_ASSERT_MESSAGE(m0.params[k] == m1.params[k], "a parameter outside head 1:0's rows of wq changed");
    }
    std::vector<int> tokens = {1, 5, 9, 13, 17, 21};
    int T = (int)tokens.size();
    double off_even[2] = {0, 0};  // each head's largest distance from even attention
    for (Model* m : {&m0, &m1}) {
        model_forward(m, tokens.data(), nullptr, 1, T, NO_DROPOUT);
        for (int h = 0; h < NH; h++) {
            const real* att = m->act(A_ATT, 1) + (size_t)h * T * T;
            double off = 0;
            for (int i = 0; i < T; i++)
                for (int j = 0; j <= i; j++) off = std::max(off, std::fabs(att[i * T + j] - 1.0 / (i + 1)));
            if (m == &m1) off_even[h] = off;
            else if (h == 0) TEST_ASSERT_GREATER_THAN(1e-3, off);  // it chose before the edit
        }
    }
    TEST_ASSERT_LESS_THAN(1e-6, off_even[0]);
    TEST_ASSERT_GREATER_THAN(1e-3, off_even[1]);
}

// dev/place_patch's edits on a tiny trained ALiBi model of reverse, counting the answer's first
// three tokens, keep the identities they must. Entering layer 0 the stream is the words'
// embedding alone (ALiBi adds nothing there) and the donor's the same, so `all` changes no logit;
// leaving the last layer, only the queries' own states make their logits, so `all` gives the
// donor's and `keys` (every query left as it is) the long example's; entering layer 1, where the
// long example's tokens have seen more, `all` changes them. Each edit moves the tokens it names,
// as far as it says.
static void test_place_patch_edits_keep_their_identities(void) {
    std::string dir = unity_temp_dir();
    RunConfig c;
    Run r(&c);
    load_quietly(&r, tiny_trained_model(dir, "alibi", false, 0, "reverse"));
    Model* m = &r.model;
    const Split &valid = valid_split(r), &test = test_split(r);
    const int L = m->config.L, V = m->config.V, P = donor_length(train_split(r)), words = 3;
    int i = 0;
    while (test.prompt_len[i] <= P) i++;
    PatchCase pc;
    TEST_ASSERT_TRUE(patch_case(&r, test, i, P, words, &pc));
    TEST_ASSERT_EQUAL_INT(P + words - 1, pc.donor.size());
    TEST_ASSERT_EQUAL_INT(test.prompt_len[i] + words - 1, pc.sequence.size());
    TEST_ASSERT_EQUAL_INT(pc.sequence[0], pc.donor[0]);
    for (int d = 1; d < (int)pc.donor.size(); d++)  // the donor ends as the long example does
        TEST_ASSERT_EQUAL_INT(pc.sequence[pc.sequence.size() - pc.donor.size() + d], pc.donor[d]);
    std::vector<LinearFit> probes = fit_probes(m, valid, 30, words);
    std::vector<float> direction = random_direction(m->config.C);
    auto logits = [&](PatchKind kind, int s) { return patched_logits(m, pc, kind, s, probes[s], direction); };
    std::vector<real> none = logits(PATCH_NONE, 0);
    TEST_ASSERT_EQUAL_INT(words * V, none.size());
    TEST_ASSERT_MESSAGE(none != pc.donor_logits, "the donor predicts as the long example does, so the identities prove little");
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, none.data(), logits(PATCH_ALL, 0).data(), words * V, "all, entering layer 0");
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, pc.donor_logits.data(), logits(PATCH_ALL, L).data(), words * V, "all, leaving the last layer");
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, none.data(), logits(PATCH_KEYS, L).data(), words * V, "keys, leaving the last layer");
    TEST_ASSERT_MESSAGE(logits(PATCH_ALL, 1) != none, "all, entering layer 1, changed nothing");
    TEST_ASSERT_MESSAGE(logits(PATCH_PROBE, 1) != none && logits(PATCH_RANDOM, 1) != none, "probe and random changed nothing");
    TEST_ASSERT_MESSAGE(logits(PATCH_EXTEND, 1) != none && logits(PATCH_EXTEND_RANDOM, 1) != none, "extend changed nothing");
    // each edit moves the tokens it names, and those only: probe and extend until the probe reads
    // the donor's place and the token's own, random and extend-random as far along the direction
    const int C = m->config.C, T = (int)pc.sequence.size(), offset = T - (int)pc.donor.size();
    model_forward(m, pc.sequence.data(), nullptr, 1, T, NO_DROPOUT);
    const std::vector<real> stream(stream_state(m, 1), stream_state(m, 1) + (size_t)T * C);
    for (PatchKind kind : {PATCH_PROBE, PATCH_RANDOM, PATCH_EXTEND, PATCH_EXTEND_RANDOM}) {
        std::vector<real> edited = stream;
        edit_places(pc, kind, 1, probes[1], direction, edited.data());
        bool extending = kind == PATCH_EXTEND || kind == PATCH_EXTEND_RANDOM;
        for (int t = 0; t < T; t++) {
            const real *before = stream.data() + (size_t)t * C, *after = edited.data() + (size_t)t * C;
            int place = extending ? t : t - offset;  // the reading the edit aims at
            if (place < 1) {
                TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, before, after, C, "a token the edit does not name");
                continue;
            }
            std::vector<float> aimed(before, before + C);
            double distance = move_to_reading(probes[1], aimed.data(), place), moved = 0;
            for (int k = 0; k < C; k++) moved += (double)(after[k] - before[k]) * (after[k] - before[k]);
            TEST_ASSERT_DOUBLE_WITHIN(1e-4 * (1 + distance), distance, sqrt(moved));
            if (kind == PATCH_PROBE || kind == PATCH_EXTEND) TEST_ASSERT_DOUBLE_WITHIN(1e-3, place, probes[1].predict(after));
        }
    }
    // the probes are fitted to the positions, from 0, of valid's first 30 examples' prompt and
    // first words - 1 answer tokens: over those tokens each state's probe reads their mean
    // position exactly, as a least-squares line with an intercept does over what it was fitted to
    std::vector<double> residual(L + 1, 0);
    long fitted = 0;
    for (int k = 0; k < 30; k++) {
        int n = std::min(valid.prompt_len[k] + words - 1, valid.example_len(k));
        model_forward(m, valid.example(k), nullptr, 1, n, NO_DROPOUT);
        for (int s = 0; s <= L; s++)
            for (int t = 0; t < n; t++) residual[s] += probes[s].predict(stream_state(m, s) + (size_t)t * C) - t;
        fitted += n;
    }
    for (int s = 0; s <= L; s++) TEST_ASSERT_DOUBLE_WITHIN(1e-6, 0.0, residual[s] / fitted);
}

// whether the model's greedy decoding writes the gold tokens[from .. from + words) of a sequence,
// by a forward pass over it alone
static bool writes_gold(Model* m, const std::vector<int>& tokens, int from, int words) {
    model_forward(m, tokens.data(), nullptr, 1, from + words - 1, NO_DROPOUT);
    for (int t = from; t < from + words; t++)
        if (argmax(m->act(A_LOGITS) + (size_t)(t - 1) * m->config.V, m->config.V) != tokens[t]) return false;
    return true;
}

// dev/place_patch's counts of the long examples as they are and of their donors, recounted here
// from the splits' tokens: on reverse every long example is compared (its donor's answer begins
// with its answer's first words), on copy only those whose first word is the donor's first
static void test_place_patch_counts_the_examples_it_compares(void) {
    std::string dir = unity_temp_dir();
    // reverse: every donor shares the answer's first words; copy_cmc: almost none does (its random
    // words); copy, trained 100 steps: every donor does, and the model answers some right
    const struct { const char* task; int steps; } cases[] = {{"reverse", 4}, {"copy_cmc", 4}, {"copy", 100}};
    for (const auto& [task, steps] : cases) {
        bool reversing = strcmp(task, "reverse") == 0;
        RunConfig c;
        Run r(&c);
        load_quietly(&r, tiny_trained_model(dir + "/" + task, "alibi", false, 0, task, steps));
        const Split& test = test_split(r);
        const int P = donor_length(train_split(r));
        for (int words : {1, 3}) {
            if (!reversing && words > 1) continue;  // a copy donor's later words match the long ones' by chance only
            PatchCounts range = place_patch(&r, test.size(), words, {length_range(6, 8)})[0];
            const int L = r.model.config.L;
            const std::vector<LinearFit> probes = fit_probes(&r.model, valid_split(r), test.size(), words);
            const std::vector<float> direction = random_direction(r.model.config.C);
            long compared = 0, left_out = 0, as_is = 0, donor = 0, probed = 0;  // probed: `probe` leaving the last layer
            for (int k = 0; k < test.size(); k++) {
                const int* e = test.example(k);
                int n = test.prompt_len[k];
                if (n <= P) continue;
                std::vector<int> tokens(e, e + test.example_len(k)), cut = {e[0]};
                cut.insert(cut.end(), e + n - (P - 1), e + n);
                bool shares = true;  // the donor's answer's word w: its words reversed, or as they are
                for (int w = 0; w < words; w++) shares = shares && (reversing ? cut[P - 2 - w] : cut[1 + w]) == tokens[n + w];
                if (!shares) {
                    left_out++;
                    continue;
                }
                cut.insert(cut.end(), tokens.begin() + n, tokens.begin() + n + words);
                compared++, as_is += writes_gold(&r.model, tokens, n, words), donor += writes_gold(&r.model, cut, P, words);
                PatchCase pc;
                TEST_ASSERT_TRUE(patch_case(&r, test, k, P, words, &pc));
                probed += all_right(patched_logits(&r.model, pc, PATCH_PROBE, L, probes[L], direction), pc.gold, r.model.config.V);
            }
            TEST_ASSERT_EQUAL_INT(compared, range.examples);
            TEST_ASSERT_EQUAL_INT(left_out, range.unmatched);
            TEST_ASSERT_EQUAL_INT(as_is, range.right[PATCH_NONE]);
            TEST_ASSERT_EQUAL_INT(donor, range.right[PATCH_DONOR]);
            // and the edits counted at their states: those whose effect an ALiBi model fixes (`all`
            // entering layer 0 changes no logit, leaving the last layer it gives the donor's, and
            // `keys` there the example's own), and `probe` leaving the last layer with that state's probe
            const size_t last = (size_t)L * NUM_PATCHES;
            TEST_ASSERT_EQUAL_INT(as_is, range.right[PATCH_ALL]);
            TEST_ASSERT_EQUAL_INT(donor, range.right[last + PATCH_ALL]);
            TEST_ASSERT_EQUAL_INT(as_is, range.right[last + PATCH_KEYS]);
            TEST_ASSERT_EQUAL_INT(probed, range.right[last + PATCH_PROBE]);
            if (reversing) TEST_ASSERT_TRUE(left_out == 0 && compared > 0);
            if (strcmp(task, "copy_cmc") == 0) TEST_ASSERT_TRUE(left_out > 0);
            if (strcmp(task, "copy") == 0) TEST_ASSERT_TRUE(0 < as_is && as_is < compared && donor > 0);  // counts that can be wrong
        }
    }
}

// dev/place_patch's donors are as long as training's longest prompt, read from train: valid left
// without that length (as a small --valid-size can leave it) changes the probes fitted to it, not
// the donors, so not the counts of the examples compared, as they are and of their donors
static void test_place_patch_takes_the_donors_length_from_train_not_valid(void) {
    std::string dir = unity_temp_dir();
    RunConfig c;
    Run r(&c);
    load_quietly(&r, tiny_trained_model(dir, "alibi", false, 0, "copy", 100));
    const int P = donor_length(train_split(r)), n = test_split(r).size();
    const PatchCounts with_longest = place_patch(&r, n, 1, {length_range(6, 8)})[0];
    const Split& valid = valid_split(r);
    Split shorter;  // valid's examples but those of training's longest prompt
    for (int i = 0; i < valid.size(); i++)
        if (valid.prompt_len[i] < P) {
            shorter.tokens.insert(shorter.tokens.end(), valid.example(i), valid.example(i) + valid.example_len(i));
            shorter.start.push_back(shorter.tokens.size());
            shorter.prompt_len.push_back(valid.prompt_len[i]);
            shorter.length.push_back(valid.length[i]);
        }
    TEST_ASSERT_TRUE(shorter.size() > 0 && shorter.size() < valid.size());
    r.data.splits[SPLIT_VALID] = shorter;
    const PatchCounts without = place_patch(&r, n, 1, {length_range(6, 8)})[0];
    TEST_ASSERT_EQUAL_INT(with_longest.examples, without.examples);
    TEST_ASSERT_EQUAL_INT(with_longest.unmatched, without.unmatched);
    TEST_ASSERT_EQUAL_INT(with_longest.right[PATCH_NONE], without.right[PATCH_NONE]);
    TEST_ASSERT_EQUAL_INT(with_longest.right[PATCH_DONOR], without.right[PATCH_DONOR]);
}

// dev/t5_table: the buckets of distances 0..49 when training reached 0..41 (copy's default
// lengths: 43 tokens): T5's exact buckets, then bucket 23 (40-45) partly reached, 24 cut at 49
static void test_t5_table_says_which_buckets_training_reached(void) {
    std::vector<BucketRow> rows = bucket_rows(49, 41);
    TEST_ASSERT_EQUAL_INT(25, rows.size());
    for (int b = 0; b < 16; b++) {
        TEST_ASSERT_EQUAL_INT(b, rows[b].lo);
        TEST_ASSERT_EQUAL_INT(b, rows[b].hi);
        TEST_ASSERT_EQUAL_INT(REACHED_ALL, rows[b].reach);
    }
    const int expected[][4] = {{16, 16, 18, REACHED_ALL}, {22, 35, 39, REACHED_ALL}, {23, 40, 45, REACHED_PARTLY}, {24, 46, 49, REACHED_NEVER}};
    for (const auto& e : expected) {
        const BucketRow& row = rows[e[0]];
        TEST_ASSERT_EQUAL_INT(e[0], row.bucket);
        TEST_ASSERT_EQUAL_INT(e[1], row.lo);
        TEST_ASSERT_EQUAL_INT(e[2], row.hi);
        TEST_ASSERT_EQUAL_INT(e[3], row.reach);
    }
    // at the edges: a bucket whose last distance is the last trained is reached in all, one whose
    // first distance is, partly
    TEST_ASSERT_EQUAL_INT(REACHED_ALL, bucket_rows(49, 39)[22].reach);
    TEST_ASSERT_EQUAL_INT(REACHED_PARTLY, bucket_rows(49, 40)[23].reach);
}

// dev/t5_table prints each head's bias of each bucket as the checkpoint holds it, and with
// --pe-per-layer each layer's own table under its heading (the layers' tables differ, so a table
// printed in another's place, or a head's column from another's, would show); test lengths up to
// 20 reach the buckets past the exact ones, which cover several distances each
static void test_t5_table_prints_each_layers_bias_by_bucket_and_head(void) {
    std::string dir = unity_temp_dir();
    std::string model = tiny_trained_model(dir, "t5", true, 0, "copy_cmc", 4, 20), text;
    {
        Capture out;
        print_table(model);
        text = out.text();
    }
    RunConfig c;
    Run r(&c);
    load_quietly(&r, model);
    const int farthest = test_split(r).max_example_len() - 2;  // the farthest a test query that predicts looks
    const int NH = r.model.config.NH, buckets = t5_bucket(farthest) + 1;
    TEST_ASSERT_GREATER_THAN(T5_NUM_BUCKETS / 2 + 1, buckets);
    TEST_ASSERT_MESSAGE(!std::equal(r.model.param(P_PE_TABLE, 0), r.model.param(P_PE_TABLE, 0) + buckets * NH, r.model.param(P_PE_TABLE, 1)),
                        "the layers' tables are alike, so one printed for the other would not show");
    for (int l = 0; l < r.model.config.L; l++) {
        size_t at = text.find(format_text("layer %d's table:\n", l));
        TEST_ASSERT_MESSAGE(at != std::string::npos, text.c_str());
        std::istringstream lines(text.substr(at));
        std::string line;
        std::getline(lines, line), std::getline(lines, line);  // the heading, then the columns'
        const real* table = r.model.param(P_PE_TABLE, l);     // (buckets, NH)
        for (int b = 0; b < buckets; b++) {
            std::getline(lines, line);
            TEST_ASSERT_EQUAL_INT(b, atoi(line.c_str()));  // a row per bucket, in order, the last one's distances cut at the farthest
            if (b == buckets - 1) TEST_ASSERT_MESSAGE(line.find(format_text("-%-5d ", farthest)) != std::string::npos, line.c_str());
            std::istringstream biases(line.substr(line.find('|') + 1));
            for (int h = 0; h < NH; h++) {
                double printed = NAN;
                biases >> printed;
                TEST_ASSERT_DOUBLE_WITHIN(5e-4 + 1e-9, table[b * NH + h], printed);
            }
        }
    }
}

// t5_table's premise: fill_batch gives the last token, <eos>, no target, and causal attention
// carries nothing from it to an earlier query, so in a batch of T-token examples the bias of
// distance T-1 (seen only by <eos>'s query) gets no gradient, and T-2's does
static void test_no_gradient_reaches_the_distance_only_eos_looks_at(void) {
    std::string dir = unity_temp_dir();
    RunConfig config;
    Run r(&config);
    {
        Silence quiet;
        load_run(&r, tiny_trained_model(dir, "t5"));
    }
    const Split& train = train_split(r);
    int T = train.max_example_len();
    TEST_ASSERT_TRUE(T - 1 < 16);  // T5's exact buckets: distance d in bucket d
    std::vector<int> longest;
    for (int i = 0; i < train.size() && (int)longest.size() < r.model.max_B; i++)
        if (train.example_len(i) == T) longest.push_back(i);
    Batch batch;
    fill_batch(&batch, train, longest);
    std::fill(r.model.grads.begin(), r.model.grads.end(), 0.0f);
    model_forward(&r.model, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, NO_DROPOUT);
    model_backward(&r.model, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, NO_DROPOUT);
    const real* table = r.model.grad(P_PE_TABLE);  // (buckets, NH)
    double seen_by_eos_only = 0, last_predicting = 0;
    for (int h = 0; h < r.model.config.NH; h++) {
        seen_by_eos_only += std::fabs(table[(T - 1) * r.model.config.NH + h]);
        last_predicting += std::fabs(table[(T - 2) * r.model.config.NH + h]);
    }
    TEST_ASSERT_TRUE(seen_by_eos_only == 0.0);  // exactly: no term of any loss reads it
    TEST_ASSERT_TRUE(last_predicting > 1e-6);
}

// a run trained on lengths of its own (copy_cmc 2-5, test 6-8, not the task's defaults) is
// tabled with its own longest sequences, and a model of another PE is refused
static void test_t5_table_reads_the_run_lengths_from_the_checkpoint(void) {
    std::string dir = unity_temp_dir();
    std::string model = tiny_trained_model(dir, "t5");
    DataConfig own, defaults;
    own.train_size = 64, own.valid_size = 30, own.test_size = 30, own.train_max = 5, own.test_max = 8;  // tiny_trained_model's
    Dataset data = make_dataset(find_task("copy_cmc"), own), usual = make_dataset(find_task("copy_cmc"), defaults);
    int train_len = data.splits[SPLIT_TRAIN].max_example_len(), test_len = data.splits[SPLIT_TEST].max_example_len();
    TEST_ASSERT_TRUE(usual.splits[SPLIT_TRAIN].max_example_len() != train_len);  // so the defaults would show
    std::string text;
    {
        Capture out;
        print_table(model);
        text = out.text();
    }
    char line[128];
    snprintf(line, sizeof line, "training sequences up to %d tokens (distances 0-%d), test up to %d\n", train_len, train_len - 2, test_len);
    TEST_ASSERT_MESSAGE(text.find(line) != std::string::npos, text.c_str());
    TEST_ASSERT_EQUAL_INT(t5_bucket(test_len - 2) + 1, std::count(text.begin(), text.end(), '|') - 1);  // a row per bucket, and the heading
    TEST_ASSERT_MESSAGE(text.find(" never |") != std::string::npos, text.c_str());  // test lengths past training's

    // positions drawn from 0..63 in training: every distance of the test lengths was trained
    std::string drawn = tiny_trained_model(dir + "/drawn", "t5", false, 64);
    {
        Capture out;
        print_table(drawn);
        text = out.text();
    }
    snprintf(line, sizeof line, "training sequences up to %d tokens (distances 0-62, positions drawn), test up to %d\n", train_len, test_len);
    TEST_ASSERT_MESSAGE(text.find(line) != std::string::npos, text.c_str());
    TEST_ASSERT_MESSAGE(text.find(" never |") == std::string::npos && text.find(" partly |") == std::string::npos, text.c_str());
    std::string alibi = tiny_trained_model(dir + "/alibi", "alibi");
    Silence quiet;
    TEST_ASSERT_THROWS_WITH(print_table(alibi), "is a --pe alibi checkpoint, not --pe t5");
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_divergences_match_hand_computations);
    RUN_TEST(test_the_papers_divergence_is_infinite_where_one_row_alone_gives_a_key_nothing);
    RUN_TEST(test_head_distance_of_two_known_patterns);
    RUN_TEST(test_attention_distance_takes_the_closest_heads_per_layer);
    RUN_TEST(test_attention_distance_pairs_layers_and_heads_and_averages_examples);
    RUN_TEST(test_attention_distance_refuses_dumps_of_other_examples_or_layers);
    RUN_TEST(test_attended_distance_histogram_of_known_patterns);
    RUN_TEST(test_a_dump_reads_back_and_a_damaged_one_is_refused);
    RUN_TEST(test_a_dump_keeps_its_words_and_positions_and_version_1_still_reads);
    RUN_TEST(test_a_dump_with_an_impossible_field_is_refused_by_name);
    RUN_TEST(test_an_empty_prompt_starts_the_answer_queries_at_the_first_token);
    RUN_TEST(test_attends_by_query_groups_by_the_predicted_word_or_its_index);
    RUN_TEST(test_attends_prints_the_most_frequent_answer_words_and_their_most_attended_keys);
    RUN_TEST(test_attention_span_bins_the_first_query_by_distance_or_position);
    RUN_TEST(test_cope_head_finds_the_counted_word);
    RUN_TEST(test_least_squares_recovers_a_linear_law);
    RUN_TEST(test_least_squares_of_features_that_never_vary_predicts_the_mean);
    RUN_TEST(test_cope_table_rows_give_a_zero_row_no_cosine);
    RUN_TEST(test_the_position_probe_reads_a_code_as_far_as_it_goes);
    RUN_TEST(test_dev_attention_writes_the_tables_and_plots);
    RUN_TEST(test_dev_attention_scores_prints_each_bins_best_mean_and_the_largest_spread);
    RUN_TEST(test_layer0_scores_take_no_point_from_a_probability_below_flt_min);
    RUN_TEST(test_dump_attention_of_a_trained_model);
    RUN_TEST(test_dump_attention_at_drawn_positions);
    RUN_TEST(test_layer0_scores_are_one_curve_for_a_relative_pe_and_not_for_ape);
    RUN_TEST(test_dump_attention_of_a_cope_model_holds_its_table_and_positions);
    RUN_TEST(test_dump_attention_of_a_per_layer_cope_model_holds_each_table);
    RUN_TEST(test_table_extend_repeats_the_rows_before_in_cope);
    RUN_TEST(test_table_extend_repeats_the_rows_before_in_every_layer);
    RUN_TEST(test_table_extend_repeats_the_buckets_before_in_t5);
    RUN_TEST(test_table_extend_repeats_the_positions_before_in_ape_learned);
    RUN_TEST(test_table_extend_refuses_a_model_without_a_table);
    RUN_TEST(test_head_ablate_silences_the_heads_named_and_no_other);
    RUN_TEST(test_head_ablate_zero_query_spreads_a_rope_heads_attention_evenly);
    RUN_TEST(test_t5_table_says_which_buckets_training_reached);
    RUN_TEST(test_no_gradient_reaches_the_distance_only_eos_looks_at);
    RUN_TEST(test_t5_table_reads_the_run_lengths_from_the_checkpoint);
    RUN_TEST(test_t5_table_prints_each_layers_bias_by_bucket_and_head);
    RUN_TEST(test_place_patch_edits_keep_their_identities);
    RUN_TEST(test_place_patch_counts_the_examples_it_compares);
    RUN_TEST(test_place_patch_takes_the_donors_length_from_train_not_valid);
    return UNITY_END();
}
