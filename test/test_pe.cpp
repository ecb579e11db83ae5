// Tests of pe.h: each positional encoding's defining identities and the paper's constants.
#include "pe.h"
#include "test/unity.h"

// float tables and float arithmetic: relative agreement to a few ulps of 2^-24 per operation
static const double FLOAT_RTOL = 1e-5;

static float rotated_score(const PE& pe, const std::vector<float>& q, const std::vector<float>& k, int i, int j) {
    std::vector<float> qi = q, kj = k;
    pe_rotate(pe, qi.data(), i, +1);
    pe_rotate(pe, kj.data(), j, +1);
    float s = 0;
    for (size_t d = 0; d < q.size(); d++) s += qi[d] * kj[d];
    return s;
}

static std::vector<float> random_floats(int n, uint64_t seed) {
    Rng rng = rng_stream(seed, 0);
    std::vector<float> x(n);
    for (float& v : x) v = (float)rng.normal();
    return x;
}

static void test_rope_score_depends_only_on_distance(void) {
    const int HS = 64, max_T = 200;
    for (float fraction : {0.25f, 1.0f}) {
        PETables tables = make_pe_tables(PE_ROPE, HS, 1, rope_dims(HS, fraction), max_T);
        PE pe = pe_view(tables);
        std::vector<float> q = random_floats(HS, 1), k = random_floats(HS, 2);
        for (int distance : {0, 1, 7, 50})
            for (int shift : {1, 13, 120}) {
                float a = rotated_score(pe, q, k, distance + 3, 3), b = rotated_score(pe, q, k, distance + 3 + shift, 3 + shift);
                TEST_ASSERT_DOUBLE_WITHIN(FLOAT_RTOL * 64, a, b);  // scores are sums of 64 O(1) products
            }
        // and it does depend on the distance
        TEST_ASSERT_MESSAGE(std::fabs(rotated_score(pe, q, k, 10, 3) - rotated_score(pe, q, k, 10, 4)) > 1e-3, "RoPE ignored the distance");
    }
}

static void test_rope_rotates_the_first_quarter_in_interleaved_pairs(void) {
    const int HS = 64;
    TEST_ASSERT_EQUAL_INT(16, rope_dims(HS, 0.25f));  // the paper's 16 of 64
    PETables tables = make_pe_tables(PE_ROPE, HS, 1, rope_dims(HS, 0.25f), 10);
    std::vector<float> x = random_floats(HS, 3), y = x;
    pe_rotate(pe_view(tables), y.data(), 5, +1);
    for (int d = 16; d < HS; d++) TEST_ASSERT_EQUAL_FLOAT(x[d], y[d]);
    for (int k = 0; k < 8; k++) {
        double angle = 5 * pow(10000.0, -2.0 * k / 16);  // theta_k = 10000^(-2k / rotated dims)
        TEST_ASSERT_DOUBLE_WITHIN(1e-5, x[2 * k] * cos(angle) - x[2 * k + 1] * sin(angle), y[2 * k]);
        TEST_ASSERT_DOUBLE_WITHIN(1e-5, x[2 * k] * sin(angle) + x[2 * k + 1] * cos(angle), y[2 * k + 1]);
    }
    pe_rotate(pe_view(tables), y.data(), 5, -1);  // the backward rotation undoes it
    TEST_ASSERT_TENSOR_CLOSE(1e-6, FLOAT_RTOL, x.data(), y.data(), HS, "rotated back");
}

static void test_alibi_slopes_for_8_and_12_heads(void) {
    for (int h = 0; h < 8; h++) TEST_ASSERT_EQUAL_FLOAT(pow(2.0, -(h + 1)), alibi_slope(h, 8));
    const double twelve[12] = {-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5};  // paper-protocol §6
    for (int h = 0; h < 12; h++) TEST_ASSERT_EQUAL_FLOAT(pow(2.0, twelve[h]), alibi_slope(h, 12));
    const double four[4] = {-2, -4, -6, -8};
    for (int h = 0; h < 4; h++) TEST_ASSERT_EQUAL_FLOAT(pow(2.0, four[h]), alibi_slope(h, 4));
}

static void test_alibi_bias_is_minus_slope_times_distance(void) {
    PETables tables = make_pe_tables(PE_ALIBI, 64, 12, 0, 50);
    PE pe = pe_view(tables);
    for (int h : {0, 7, 11})
        for (int i : {0, 9, 40})
            for (int j = 0; j <= i; j += 3) TEST_ASSERT_EQUAL_FLOAT(-alibi_slope(h, 12) * (i - j), pe_score_bias<float>(pe, nullptr, h, i, j));
}

static void test_t5_buckets_at_known_distances(void) {
    const int distance[] = {0, 1, 15, 16, 31, 127, 128, 1000};
    const int bucket[] = {0, 1, 15, 16, 21, 31, 31, 31};
    for (int k = 0; k < 8; k++) TEST_ASSERT_EQUAL_INT_MESSAGE(bucket[k], t5_bucket(distance[k]), std::to_string(distance[k]).c_str());
    // reference/perf-notes.md §3: the first distance of buckets 17..31 in HF's causal T5
    const int start[] = {19, 21, 24, 27, 31, 35, 40, 46, 52, 59, 67, 77, 87, 99, 113};
    for (int b = 17; b <= 31; b++) {
        TEST_ASSERT_EQUAL_INT(b, t5_bucket(start[b - 17]));
        TEST_ASSERT_EQUAL_INT(b - 1, t5_bucket(start[b - 17] - 1));
    }
}

static void test_t5_bias_reads_the_table_by_bucket_and_head(void) {
    const int NH = 3;
    PETables tables = make_pe_tables(PE_T5, 48, NH, 0, 300);
    PE pe = pe_view(tables);
    std::vector<float> table = random_floats(T5_NUM_BUCKETS * NH, 4);
    TEST_ASSERT_EQUAL_FLOAT(table[5 * NH + 2], pe_score_bias(pe, table.data(), 2, 9, 4));
    TEST_ASSERT_EQUAL_FLOAT(table[31 * NH + 1], pe_score_bias(pe, table.data(), 1, 299, 0));
    std::vector<float> dtable(table.size(), 0);
    pe_score_bias_backward(pe, dtable.data(), 2.5f, 2, 40, 9);  // distance 31: bucket 21
    TEST_ASSERT_EQUAL_FLOAT(2.5f, dtable[21 * NH + 2]);
}

static void test_ape_table_concatenates_sin_and_cos_halves(void) {
    const int C = 768;
    for (int pos : {0, 1, 37})
        for (int k : {0, 1, 100, 383}) {
            double angle = pos * pow(10000.0, -2.0 * k / C);  // w_k = 10000^(-2k / 768)
            TEST_ASSERT_DOUBLE_WITHIN(1e-6, sin(angle), ape_value(pos, k, C));
            TEST_ASSERT_DOUBLE_WITHIN(1e-6, cos(angle), ape_value(pos, k + C / 2, C));
        }
    PETables tables = make_pe_tables(PE_APE, C, 12, 0, 40);
    TEST_ASSERT_EQUAL_FLOAT(ape_value(37, 5, C), pe_input(pe_view(tables), 37, 5));
}

static void test_each_hook_does_nothing_for_the_other_pes(void) {
    const int C = 32, NH = 4, T = 20;
    std::vector<float> table = random_floats(T5_NUM_BUCKETS * NH, 5);
    for (int p = 0; p < NUM_PES; p++) {
        PETables tables = make_pe_tables((PEKind)p, C, NH, 4, T);
        PE pe = pe_view(tables);
        std::vector<float> x = random_floats(C / NH, 6), y = x;
        pe_rotate(pe, y.data(), 7, +1);
        TEST_ASSERT_EQUAL_INT_MESSAGE(p == PE_ROPE, x != y, PE_NAMES[p]);
        TEST_ASSERT_EQUAL_INT_MESSAGE(p == PE_APE, pe_input(pe, 7, 3) != 0, PE_NAMES[p]);
        bool biased = pe_score_bias(pe, table.data(), 1, 9, 2) != 0;
        TEST_ASSERT_EQUAL_INT_MESSAGE(p == PE_T5 || p == PE_ALIBI, biased, PE_NAMES[p]);
        TEST_ASSERT_EQUAL_INT_MESSAGE(p == PE_T5 ? T5_NUM_BUCKETS : 0, pe_table_rows((PEKind)p), PE_NAMES[p]);
    }
}

static void test_unknown_pe_is_refused_with_the_valid_ones_listed(void) {
    TEST_ASSERT_EQUAL_INT(PE_ALIBI, find_pe("alibi"));
    TEST_ASSERT_THROWS_WITH(find_pe("xpos"), "unknown positional encoding 'xpos' (valid: nope ape t5 alibi rope)");
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_rope_score_depends_only_on_distance);
    RUN_TEST(test_rope_rotates_the_first_quarter_in_interleaved_pairs);
    RUN_TEST(test_alibi_slopes_for_8_and_12_heads);
    RUN_TEST(test_alibi_bias_is_minus_slope_times_distance);
    RUN_TEST(test_t5_buckets_at_known_distances);
    RUN_TEST(test_t5_bias_reads_the_table_by_bucket_and_head);
    RUN_TEST(test_ape_table_concatenates_sin_and_cos_halves);
    RUN_TEST(test_each_hook_does_nothing_for_the_other_pes);
    RUN_TEST(test_unknown_pe_is_refused_with_the_valid_ones_listed);
    return UNITY_END();
}
