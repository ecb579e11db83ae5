// Tests of pe.h: each positional encoding's defining identities, the paper's constants, and the
// later PEs' formulas at hand-computed points.
#include <cfloat>

#include "pe.h"
#include "test/unity.h"

// float tables and float arithmetic: relative agreement to a few ulps of 2^-24 per operation
static const double FLOAT_RTOL = 1e-5;

static float rotated_score(const PE& pe, const std::vector<float>& q, const std::vector<float>& k, int i, int j) {
    std::vector<float> qi = q, kj = k;
    pe_rotate(pe, qi.data(), i, +1, QUERY);
    pe_rotate(pe, kj.data(), j, +1, KEY);
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
    pe_rotate(pe_view(tables), y.data(), 5, +1, QUERY);
    for (int d = 16; d < HS; d++) TEST_ASSERT_EQUAL_FLOAT(x[d], y[d]);
    for (int k = 0; k < 8; k++) {
        double angle = 5 * pow(10000.0, -2.0 * k / 16);  // theta_k = 10000^(-2k / rotated dims)
        TEST_ASSERT_DOUBLE_WITHIN(1e-5, x[2 * k] * cos(angle) - x[2 * k + 1] * sin(angle), y[2 * k]);
        TEST_ASSERT_DOUBLE_WITHIN(1e-5, x[2 * k] * sin(angle) + x[2 * k + 1] * cos(angle), y[2 * k + 1]);
    }
    pe_rotate(pe_view(tables), y.data(), 5, -1, QUERY);  // the backward rotation undoes it
    TEST_ASSERT_TENSOR_CLOSE(1e-6, FLOAT_RTOL, x.data(), y.data(), HS, "rotated back");
}

// --rope-frac rounds the rotated dims down to whole pairs, the unit RoPE rotates: an odd count
// would also change every pair's angle, theta_k = 10000^(-2k / rot)
static void test_rope_dims_round_down_to_whole_pairs(void) {
    TEST_ASSERT_EQUAL_INT(4, rope_dims(10, 0.5f));   // 5 dims: 2 pairs
    TEST_ASSERT_EQUAL_INT(18, rope_dims(64, 0.3f));  // 19.2 dims: 9 pairs
    TEST_ASSERT_EQUAL_INT(0, rope_dims(64, 0.02f));  // 1.28 dims: no pair
    TEST_ASSERT_EQUAL_INT(64, rope_dims(64, 1.0f));
}

static void test_alibi_slopes_for_4_8_and_12_heads(void) {
    for (int h = 0; h < 8; h++) TEST_ASSERT_EQUAL_FLOAT(pow(2.0, -(h + 1)), alibi_slope(h, 8));
    const double twelve[12] = {-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5};  // the paper's code's slopes for 12 heads
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
    // the first distance of buckets 17..31 in HF's causal T5
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
    pe_score_bias_backward(pe, table.data(), dtable.data(), 2.5f, 2, 40, 9);  // distance 31: bucket 21
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
    TEST_ASSERT_EQUAL_FLOAT(ape_value(37, 5, C), pe_input<float>(pe_view(tables), nullptr, 37, 5));
}

// ape_learned reads row pos of its (max_pos, C) table, and its gradient lands there
static void test_learned_ape_reads_its_table_by_position(void) {
    const int C = 6, max_pos = 9;
    PETables tables = make_pe_tables(PE_APE_LEARNED, C, 2, 0, max_pos);
    TEST_ASSERT_EQUAL_INT(max_pos * C, pe_param_count(PE_APE_LEARNED, C, 2, max_pos));
    std::vector<float> table = random_floats(max_pos * C, 7), dtable(table.size(), 0);
    TEST_ASSERT_EQUAL_FLOAT(table[7 * C + 4], pe_input(pe_view(tables), table.data(), 7, 4));
    pe_input_backward(pe_view(tables), dtable.data(), 1.5f, 7, 4);
    TEST_ASSERT_EQUAL_FLOAT(1.5f, dtable[7 * C + 4]);
}

// xPos: the score of pair k is RoPE's times zeta_k^((i - j) / 512), so it still depends on the
// distance alone, and decays with it
static void test_xpos_score_is_ropes_times_a_decay_in_the_distance(void) {
    const int HS = 16, rot = 16;
    PETables rope = make_pe_tables(PE_ROPE, HS, 1, rot, 600), xpos = make_pe_tables(PE_XPOS, HS, 1, rot, 600);
    for (int k : {0, 3, 7}) {
        std::vector<float> q(HS, 0), key(HS, 0);  // only pair k is non-zero
        q[2 * k] = 0.8f, q[2 * k + 1] = -0.3f, key[2 * k] = 0.5f, key[2 * k + 1] = 1.1f;
        double zeta = (2.0 * k / rot + 0.4) / 1.4;
        for (int i : {5, 300, 599})
            for (int j : {0, 5, 250}) {
                if (j > i) continue;
                double expected = rotated_score(pe_view(rope), q, key, i, j) * pow(zeta, (i - j) / 512.0);
                TEST_ASSERT_DOUBLE_WITHIN(1e-5 + FLOAT_RTOL * std::fabs(expected) * 8, expected, rotated_score(pe_view(xpos), q, key, i, j));
            }
    }
    std::vector<float> q = random_floats(HS, 8), key = random_floats(HS, 9);  // every pair
    TEST_ASSERT_DOUBLE_WITHIN(1e-4, rotated_score(pe_view(xpos), q, key, 40, 10), rotated_score(pe_view(xpos), q, key, 530, 500));
}

// xPos's scale table at hand-computed points, with fewer rotated dims (8) than the width (64, 4
// heads of 16): zeta_k = (2k / rot + 0.4) / 1.4 counts pairs within the rotated dims, and the
// query's scale at position p is zeta_k^(p / 512): 1 at p = 0, zeta_k itself at p = 512
static void test_xpos_scales_are_zeta_to_the_position_over_512(void) {
    const int C = 64, NH = 4, rot = 8;
    PETables xpos = make_pe_tables(PE_XPOS, C, NH, rot, 1100);
    const double zeta[rot / 2] = {0.4 / 1.4, 0.65 / 1.4, 0.9 / 1.4, 1.15 / 1.4};
    for (int pos : {0, 512, 1024})
        for (int k = 0; k < rot / 2; k++)
            TEST_ASSERT_DOUBLE_WITHIN(FLOAT_RTOL, pow(zeta[k], pos / 512.0), xpos.xpos_scale[pos * rot / 2 + k]);
}

// xPos's scales, tabulated in float, stay normal and their inverses finite over every position
// below XPOS_MAX_POS, which validate_model_config admits; a few thousand further they would not
static void test_xpos_scales_stay_in_floats_range_up_to_its_bound(void) {
    int HS = 16, rot = rope_dims(HS, 0.5f);
    PETables xpos = make_pe_tables(PE_XPOS, HS, 1, rot, XPOS_MAX_POS);
    for (float scale : xpos.xpos_scale) TEST_ASSERT(scale >= FLT_MIN && std::isfinite(1 / scale));
    double zeta0 = XPOS_GAMMA / (1 + XPOS_GAMMA);  // pair 0 decays fastest
    TEST_ASSERT((float)pow(zeta0, 36000 / XPOS_SCALE_BASE) < FLT_MIN);  // test_flags: the bound refused past it
}

// KERPLE's two kernels at hand-computed points, and its clamps: read, the gradient taken at the
// value read, and the stored values clamped in place (before each update, as the official code)
static void test_kerple_bias_at_known_points_and_clamps(void) {
    const int NH = 2;
    PETables log_tables = make_pe_tables(PE_KERPLE_LOG, 8, NH, 0, 50), power_tables = make_pe_tables(PE_KERPLE_POWER, 8, NH, 0, 50);
    const float params[2 * NH] = {1.5f, 0.001f, 0.5f, 3.0f};  // r1 of heads 0 and 1, then r2 of both
    // log, head 0: -1.5 ln(1 + 0.5 * 7); head 1: r1 clamped to 0.01, r2 = 3
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, -1.5 * log(1 + 0.5 * 7), pe_score_bias(pe_view(log_tables), params, 0, 9, 2));
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, -0.01 * log(1 + 3.0 * 7), pe_score_bias(pe_view(log_tables), params, 1, 9, 2));
    // power, head 0: -1.5 * 7^0.5; head 1: r2 clamped to 2
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, -1.5 * sqrt(7.0), pe_score_bias(pe_view(power_tables), params, 0, 9, 2));
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, -0.01 * 49.0, pe_score_bias(pe_view(power_tables), params, 1, 9, 2));
    TEST_ASSERT_EQUAL_FLOAT(0.0f, pe_score_bias(pe_view(power_tables), params, 0, 4, 4));  // distance 0: no bias
    // a clamped value's gradient is the bias's derivative at its bound: power, head 1, reads
    // r1 = 0.01 and r2 = 2: d/dr1 = -7^2, d/dr2 = -r1 7^2 ln 7 (a clamp at the read alone gave 0)
    std::vector<float> dparams(2 * NH, 0);
    pe_score_bias_backward(pe_view(power_tables), params, dparams.data(), 1.0f, 1, 9, 2);
    TEST_ASSERT_DOUBLE_WITHIN(1e-4, -49.0, dparams[1]);
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, -0.01 * 49.0 * log(7.0), dparams[NH + 1]);
    pe_score_bias_backward(pe_view(power_tables), params, dparams.data(), 1.0f, 0, 9, 2);
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, -sqrt(7.0), dparams[0]);
    // the stored values clamped in place: r2's upper bound is power's alone; other PEs untouched
    for (PETables* tables : {&log_tables, &power_tables}) {
        std::vector<float> kept(params, params + 2 * NH);
        pe_keep_params_in_range(pe_view(*tables), kept.data());
        float r2_of_head_1 = tables == &power_tables ? 2.0f : 3.0f;
        TEST_ASSERT(kept == std::vector<float>({1.5f, 0.01f, 0.5f, r2_of_head_1}));
    }
    PETables t5 = make_pe_tables(PE_T5, 8, NH, 0, 50);
    std::vector<float> table(params, params + 2 * NH);
    pe_keep_params_in_range(pe_view(t5), table.data());
    TEST_ASSERT(table == std::vector<float>(params, params + 2 * NH));
}

// KERPLE's one upper bound is power's r2 <= 2: r1 may grow past 2 (the official code bounds it
// below alone), in the bias read and in the stored values
static void test_kerple_power_bounds_r2_alone_above(void) {
    PETables power_tables = make_pe_tables(PE_KERPLE_POWER, 8, 1, 0, 50);
    const float params[2] = {3.0f, 1.5f};  // r1, r2 of the one head
    double expected = -3.0 * pow(7.0, 1.5);
    TEST_ASSERT_DOUBLE_WITHIN(FLOAT_RTOL * std::fabs(expected), expected, pe_score_bias(pe_view(power_tables), params, 0, 9, 2));
    std::vector<float> kept(params, params + 2);
    pe_keep_params_in_range(pe_view(power_tables), kept.data());
    TEST_ASSERT(kept == std::vector<float>({3.0f, 1.5f}));
}

// FIRE: u = ln(c n + 1) / ln(c max(L, i) + 1), in [0, 1], fed to the MLP; a query past L is
// normalised by its own position, so the longest distance always maps to u = 1 exactly
static void test_fire_normalises_the_log_distance_and_runs_its_mlp(void) {
    const int NH = 3;
    FireLayout at = fire_layout(NH);
    TEST_ASSERT_EQUAL_INT(2 * FIRE_HIDDEN + NH * FIRE_HIDDEN + NH + 2, pe_param_count(PE_FIRE, 16, NH, 100));
    std::vector<float> params = random_floats(at.total, 10);
    params[at.c] = -0.2f;  // c = |c'| = 0.2
    params[at.m] = 0.0625f;  // L = 32
    double c = std::fabs((double)params[at.c]);  // 0.2 as a float
    TEST_ASSERT_DOUBLE_WITHIN(1e-9, log(c * 7 + 1) / log(c * 32 + 1), fire_normalised_distance(params.data(), NH, 9, 2).u);
    TEST_ASSERT_DOUBLE_WITHIN(1e-9, log(c * 50 + 1) / log(c * 90 + 1), fire_normalised_distance(params.data(), NH, 90, 40).u);
    TEST_ASSERT_DOUBLE_WITHIN(1e-9, 1.0, fire_normalised_distance(params.data(), NH, 90, 0).u);
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 0.0, fire_normalised_distance(params.data(), NH, 0, 0).u);
    double u = fire_normalised_distance(params.data(), NH, 90, 40).u, expected = params[at.b2 + 2];
    for (int k = 0; k < FIRE_HIDDEN; k++) expected += params[at.w2 + 2 * FIRE_HIDDEN + k] * std::max(0.0, params[at.w1 + k] * u + params[at.b1 + k]);
    PETables tables = make_pe_tables(PE_FIRE, 16, NH, 0, 100);
    TEST_ASSERT_DOUBLE_WITHIN(1e-5, expected, pe_score_bias(pe_view(tables), params.data(), 2, 90, 40));
}

// FIRE at distance 0 is u = 0, its bias the MLP's at 0, even where the denominator psi(max(L, i))
// is 0 too: a query at position 0 once L has shrunk to 0 (m = 0) would otherwise divide 0 by 0
static void test_fire_distance_zero_is_zero_where_l_and_i_are_zero(void) {
    const int NH = 1;
    FireLayout at = fire_layout(NH);
    std::vector<float> params = random_floats(at.total, 12);
    params[at.c] = 0.1f, params[at.m] = 0;  // L = 0
    FireInput in = fire_normalised_distance(params.data(), NH, 0, 0);
    TEST_ASSERT_TRUE(in.u == 0 && in.du_dc == 0 && in.du_dL == 0);
    double expected = params[at.b2];
    for (int k = 0; k < FIRE_HIDDEN; k++) expected += params[at.w2 + k] * std::max(0.0f, params[at.b1 + k]);
    PETables tables = make_pe_tables(PE_FIRE, 16, NH, 0, 10);
    TEST_ASSERT_DOUBLE_WITHIN(1e-5, expected, pe_score_bias(pe_view(tables), params.data(), 0, 0, 0));
}

// FIRE's gradient reaches c' and m through c = |c'| and L = |m| 512: where both are negative it
// is minus the derivative by c, and minus 512 times the one by L. In head 1 of 2, one hidden unit
// passes u alone (w1 = 1, b1 = 0, w2 = 1; the others shut, b1 = -1), so the bias is b2[1] + u, and
// du/dc and du/dL are central differences of u = ln(7c + 1) / ln(cL + 1) written out here, in
// double; b2's gradient is head 1's alone.
static void test_fire_gradient_passes_the_signs_of_negative_c_and_m(void) {
    const int NH = 2, h = 1;
    FireLayout at = fire_layout(NH);
    std::vector<float> params(at.total, 0), dparams(at.total, 0);
    for (int k = 1; k < FIRE_HIDDEN; k++) params[at.b1 + k] = -1;
    params[at.w1] = 1, params[at.w2 + h * FIRE_HIDDEN] = 1;
    params[at.c] = -0.2f, params[at.m] = -0.0625f;  // c = 0.2, L = 32
    PETables tables = make_pe_tables(PE_FIRE, 16, NH, 0, 100);
    pe_score_bias_backward(pe_view(tables), params.data(), dparams.data(), 1.0f, h, 9, 2);  // n = 7, i = 9 < L
    auto u = [](double c, double L) { return log(7 * c + 1) / log(c * L + 1); };
    double c = std::fabs((double)params[at.c]), L = 32, step = 1e-6;
    double du_dc = (u(c + step, L) - u(c - step, L)) / (2 * step), du_dL = (u(c, L + step) - u(c, L - step)) / (2 * step);
    TEST_ASSERT_DOUBLE_WITHIN(1e-5, -du_dc, dparams[at.c]);
    TEST_ASSERT_DOUBLE_WITHIN(1e-5, -512 * du_dL, dparams[at.m]);
    TEST_ASSERT_EQUAL_FLOAT(0.0f, dparams[at.b2]);
    TEST_ASSERT_EQUAL_FLOAT(1.0f, dparams[at.b2 + h]);
}

// The learned PEs' parameter counts, as the table at the top of pe.h has them: T5 (32, NH),
// KERPLE (2, NH), CoPE (max_pos, HS), a row of one head's width for each contextual position;
// and the rows dev/table_extend edits: T5's 32 buckets, a row a position for the others, none
// for KERPLE's (2, NH), whose rows are not positions
static void test_learned_pe_parameter_counts_and_position_rows(void) {
    const int C = 48, NH = 3, max_pos = 9;  // HS = 16
    TEST_ASSERT_EQUAL_INT(32 * 3, pe_param_count(PE_T5, C, NH, max_pos));
    TEST_ASSERT_EQUAL_INT(2 * 3, pe_param_count(PE_KERPLE_LOG, C, NH, max_pos));
    TEST_ASSERT_EQUAL_INT(2 * 3, pe_param_count(PE_KERPLE_POWER, C, NH, max_pos));
    TEST_ASSERT_EQUAL_INT(9 * 16, pe_param_count(PE_COPE, C, NH, max_pos));
    TEST_ASSERT_EQUAL_INT(32, pe_position_rows(PE_T5, max_pos));
    TEST_ASSERT_EQUAL_INT(9, pe_position_rows(PE_APE_LEARNED, max_pos));
    TEST_ASSERT_EQUAL_INT(9, pe_position_rows(PE_COPE, max_pos));
    TEST_ASSERT_EQUAL_INT(0, pe_position_rows(PE_KERPLE_LOG, max_pos));
}

// The mean square of n normal draws of std s is s^2 within about sqrt(2 / n) s^2 (one standard
// deviation): at n >= 8,000, 5% of s^2 is over 3 of them, and a std 5% off moves it 10%.
static const double INIT_MEAN_SQUARE_RTOL = 0.05;

// The learned PEs start where their papers start (T5's table as HF's T5: normal, std d_model^-0.5)
static void test_learned_pes_initialise_as_their_papers(void) {
    const int C = 16, NH = 256, max_pos = 600;  // NH and max_pos only make the tables large
    for (PEKind kind : {PE_KERPLE_LOG, PE_KERPLE_POWER, PE_FIRE, PE_APE_LEARNED, PE_T5, PE_COPE}) {
        std::vector<float> p(pe_param_count(kind, C, NH, max_pos));
        Rng rng = rng_stream(11, kind);
        pe_init_params(kind, p.data(), C, NH, max_pos, &rng);
        if (kind == PE_KERPLE_LOG || kind == PE_KERPLE_POWER) {
            double r1_max = kind == PE_KERPLE_LOG ? 2 : 1;  // log: r1 ~ U(0, 2), r2 ~ U(0, 1); power the other way
            double mean[2] = {0, 0}, largest[2] = {0, 0};
            for (int h = 0; h < NH; h++) {
                TEST_ASSERT_TRUE(p[h] >= 0 && p[h] < r1_max);
                TEST_ASSERT_TRUE(p[NH + h] >= 0 && p[NH + h] < 3 - r1_max);
                for (int r = 0; r < 2; r++) mean[r] += p[r * NH + h] / NH, largest[r] = std::max(largest[r], (double)p[r * NH + h]);
            }
            // uniform over the whole range, not a part of it: 256 draws put the mean within 0.06 of
            // the range from its middle (3.3 standard deviations) and the largest within 3% of its
            // top (all 256 below would have a chance of 0.97^256, 4 in 10,000)
            for (int r = 0; r < 2; r++) {
                double top = r == 0 ? r1_max : 3 - r1_max;
                TEST_ASSERT_DOUBLE_WITHIN(0.06 * top, top / 2, mean[r]);
                TEST_ASSERT_TRUE(largest[r] > 0.97 * top);
            }
        }
        if (kind == PE_FIRE) {
            TEST_ASSERT_EQUAL_FLOAT(0.1f, p[fire_layout(NH).c]);
            TEST_ASSERT_EQUAL_FLOAT(1.0f, p[fire_layout(NH).m]);  // L = 512
            FireLayout at = fire_layout(NH);  // torch's nn.Linear: uniform within 1/sqrt(fan_in), fan_in 1 then 32
            for (int k = at.w1; k < at.w2; k++) TEST_ASSERT_TRUE(fabs(p[k]) <= 1);
            for (int k = at.w2; k < at.c; k++) TEST_ASSERT_TRUE(fabs(p[k]) <= 1 / sqrt(32.0));
            // each of w1, b1, w2, b2 spread over its whole range, both signs: its smallest below minus
            // half its bound and its largest above half (w1's 32 draws all above: (3/4)^32, 1e-4)
            const int block[5] = {at.w1, at.b1, at.w2, at.b2, at.c};
            for (int b = 0; b < 4; b++) {
                double bound = b < 2 ? 1 : 1 / sqrt(32.0);
                auto range = std::minmax_element(p.begin() + block[b], p.begin() + block[b + 1]);
                TEST_ASSERT_TRUE(*range.first < -bound / 2 && *range.second > bound / 2);
            }
        }
        if (kind == PE_COPE)  // no bias at any contextual position
            for (float v : p) TEST_ASSERT_EQUAL_FLOAT(0.0f, v);
        if (kind == PE_APE_LEARNED || kind == PE_T5) {
            double sum_squares = 0;
            for (float v : p) sum_squares += (double)v * v;
            TEST_ASSERT_TRUE(p.size() >= 8000);
            double target = kind == PE_APE_LEARNED ? 0.5 : 1.0 / C;  // std 1/sqrt(2), and d_model^-0.5
            TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(INIT_MEAN_SQUARE_RTOL * target, target, sum_squares / p.size(), PE_NAMES[kind]);
        }
    }
}

// RoPE scaling: PI at position p s is plain RoPE at p; NTK raises the base; YaRN leaves the
// fast pairs alone, interpolates the slow ones like PI, and scales q and k by 0.1 ln s + 1
static void test_rope_scalings_change_the_angles_as_their_papers(void) {
    const int rot = 16, train_len = 40;
    const double s = 4;
    auto angle = [&](int kind, int pair, int pos) { return pos * rope_frequency(pair, rot, RopeScaling{kind, s, train_len}); };
    for (int pair : {0, 3, 7}) {
        TEST_ASSERT_DOUBLE_WITHIN(1e-12, angle(ROPE_UNSCALED, pair, 25), angle(ROPE_PI, pair, 100));
        double ntk_base = 10000 * pow(s, rot / (rot - 2.0));
        TEST_ASSERT_DOUBLE_WITHIN(1e-12, 100 * pow(ntk_base, -2.0 * pair / rot), angle(ROPE_NTK, pair, 100));
    }
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, angle(ROPE_UNSCALED, 0, 100), angle(ROPE_NTK, 0, 100));  // NTK keeps the fastest pair
    // YaRN at L = 40: pair 0 has wavelength 2 pi, r = 6.4: a 5.4 / 31 share of it is interpolated
    double ramp = (40 / (2 * M_PI) - 1) / 31;
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 100 * ((1 - ramp) / s + ramp), angle(ROPE_YARN, 0, 100));
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, angle(ROPE_PI, 7, 100), angle(ROPE_YARN, 7, 100));  // r < 1: wholly interpolated
    // r > 32: wholly left alone, the ramp held at 1 (pair 0 at L = 1000, r = 159: theta_0 = 1)
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, 100.0, 100 * rope_frequency(0, rot, RopeScaling{ROPE_YARN, s, 1000}));
    PETables yarn = make_pe_tables(PE_ROPE, 64, 4, rot, 50, RopeScaling{ROPE_YARN, s, train_len});
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, 0.1 * log(s) + 1, hypot(yarn.rope_cos[10 * rot / 2 + 3], yarn.rope_sin[10 * rot / 2 + 3]));
    for (int kind : {ROPE_PI, ROPE_NTK}) {  // the magnitude is YaRN's alone: PI and NTK only turn q and k
        PETables scaled = make_pe_tables(PE_ROPE, 64, 4, rot, 50, RopeScaling{kind, s, train_len});
        TEST_ASSERT_DOUBLE_WITHIN(1e-6, 1.0, hypot(scaled.rope_cos[10 * rot / 2 + 3], scaled.rope_sin[10 * rot / 2 + 3]));
    }
}

static void test_each_hook_does_nothing_for_the_other_pes(void) {
    const int C = 32, NH = 4, T = 20;
    for (int p = 0; p < NUM_PES; p++) {
        PEKind kind = (PEKind)p;
        PETables tables = make_pe_tables(kind, C, NH, 4, T);
        PE pe = pe_view(tables);
        std::vector<float> params = random_floats((int)pe_param_count(kind, C, NH, T), 5);
        std::vector<float> x = random_floats(C / NH, 6), y = x;
        pe_rotate(pe, y.data(), 7, +1, KEY);
        TEST_ASSERT_EQUAL_INT_MESSAGE(kind == PE_ROPE || kind == PE_XPOS, x != y, PE_NAMES[p]);
        TEST_ASSERT_EQUAL_INT_MESSAGE(pe_rotates(kind), x != y, PE_NAMES[p]);
        TEST_ASSERT_EQUAL_INT_MESSAGE(kind == PE_APE || kind == PE_APE_LEARNED, pe_input(pe, params.data(), 7, 3) != 0, PE_NAMES[p]);
        bool biased = pe_score_bias(pe, params.data(), 1, 9, 2) != 0;
        TEST_ASSERT_EQUAL_INT_MESSAGE(pe_has_score_bias(kind), biased, PE_NAMES[p]);
        bool learns = kind == PE_T5 || kind == PE_APE_LEARNED || kind == PE_KERPLE_LOG || kind == PE_KERPLE_POWER || kind == PE_FIRE || kind == PE_COPE;
        TEST_ASSERT_EQUAL_INT_MESSAGE(learns, pe_param_count(kind, C, NH, T) > 0, PE_NAMES[p]);
        // --pe-per-layer copies the learned values that act in attention: all but ape_learned's
        TEST_ASSERT_EQUAL_INT_MESSAGE(learns && kind != PE_APE_LEARNED, pe_attention_has_params(kind), PE_NAMES[p]);
        // position coupling wraps the PEs that read a token's own position: not xPos, whose decay grows for j > i
        TEST_ASSERT_EQUAL_INT_MESSAGE(kind == PE_APE || kind == PE_APE_LEARNED || kind == PE_ROPE, pe_can_couple(kind), PE_NAMES[p]);
        TEST_ASSERT_EQUAL_INT_MESSAGE(kind == PE_COPE, pe_has_context_bias(kind), PE_NAMES[p]);
        TEST_ASSERT_EQUAL_INT_MESSAGE(kind != PE_NOPE && kind != PE_COPE, pe_reads_positions(kind), PE_NAMES[p]);
    }
}

// CoPE by hand: with every logit 0 each gate is 1/2, so from the last key back the positions are
// 1/2, 1, 3/2, ... and the bias interpolates z between rows; past npos - 1 it stays on the last row.
static void test_cope_counts_open_gates_and_interpolates_the_table(void) {
    const float logits[4] = {0, 0, 0, 0}, z[5] = {1, 3, 7, 15, 31};
    float bias[4];
    cope_bias_row(bias, logits, z, 3, 5);
    TEST_ASSERT_EQUAL_FLOAT(0.5f * 3 + 0.5f * 7, bias[0]);  // p = 3/2
    TEST_ASSERT_EQUAL_FLOAT(3, bias[1]);                    // p = 1
    TEST_ASSERT_EQUAL_FLOAT(0.5f * 1 + 0.5f * 3, bias[2]);  // p = 1/2
    cope_bias_row(bias, logits, z, 4, 2);                   // p = 2, 3/2, 1, 1/2 with rows 0 and 1 only
    const float clamped[4] = {3, 3, 3, 2};
    for (int j = 0; j < 4; j++) TEST_ASSERT_EQUAL_FLOAT(clamped[j], bias[j]);
    const float gates_shut[3] = {-40, -40, 40};  // only the key at i opens: the others count 1
    cope_bias_row(bias, gates_shut, z, 3, 5);
    for (int j = 0; j < 3; j++) TEST_ASSERT_FLOAT_WITHIN(1e-6, 3, bias[j]);
    // a NaN logit (a forward that overflowed) makes its key's count and every earlier key's NaN:
    // their biases and gate gradients are NaN (no read of row (int)NaN), the later keys' biases
    // as before (their gate gradients sum over the earlier keys' too, so they are NaN as well)
    const float overflowed[4] = {0, NAN, 0, 0};
    float dlogits[4], dz[5] = {0, 0, 0, 0, 0};
    const float dbias[4] = {1, 1, 1, 1};
    cope_bias_row(bias, overflowed, z, 4, 5);
    cope_bias_row_backward(dlogits, dz, dbias, overflowed, z, 4, 5);
    for (int j = 0; j < 2; j++) TEST_ASSERT_MESSAGE(std::isnan(bias[j]) && std::isnan(dlogits[j]), "NaN count");
    TEST_ASSERT_EQUAL_FLOAT(3, bias[2]);                    // p = 1
    TEST_ASSERT_EQUAL_FLOAT(0.5f * 1 + 0.5f * 3, bias[3]);  // p = 1/2
}

// A count exactly on the last row, p = npos - 1, is clamped: it reads that row alone and its gate
// gradient is 0 (the bias no longer moves with p), not the slope toward a row past the table. Gates
// of 1/2 count 1/2, 1, 3/2, 2 from the last key back; with npos = 2 only the last key's bias moves
// with its count, by z1 - z0 = 2, and its count holds its own gate alone: that gate's gradient is
// 2 (1/2)(1/2) = 1/2, the others' 0. Row 0 gets the last key's 1/2, row 1 its 1/2 and the three
// clamped keys' 1 each. z[2], past the table, is there to show that nothing reads it.
static void test_cope_count_on_the_last_row_is_clamped_in_the_backward(void) {
    const float logits[4] = {0, 0, 0, 0}, z[3] = {1, 3, 1000}, dbias[4] = {1, 1, 1, 1};
    float dlogits[4], dz[3] = {0, 0, 0};
    cope_bias_row_backward(dlogits, dz, dbias, logits, z, 4, 2);
    const float expected_dlogits[4] = {0, 0, 0, 0.5f}, expected_dz[3] = {0.5f, 3.5f, 0};
    for (int j = 0; j < 4; j++) TEST_ASSERT_EQUAL_FLOAT(expected_dlogits[j], dlogits[j]);
    for (int m = 0; m < 3; m++) TEST_ASSERT_EQUAL_FLOAT(expected_dz[m], dz[m]);
}

// The model computes z only for the rows below cope_rows_read, so no read may pass them. With every
// gate open (sigmoid(40) is 1 in double) the first of n keys counts p = n exactly, and reads row n
// and row n + 1 (weighted 0): the bound is n + 2. Past it z holds NaN here, which a read would show.
static void test_cope_reads_no_row_past_cope_rows_read(void) {
    const int n = 3, npos = 8;
    const float logits[n] = {40, 40, 40};
    std::vector<float> z(npos, NAN);
    for (int m = 0; m < cope_rows_read(n, npos); m++) z[m] = (float)(m * m);
    float bias[n];
    cope_bias_row(bias, logits, z.data(), n, npos);
    for (int j = 0; j < n; j++) TEST_ASSERT_EQUAL_FLOAT((n - j) * (n - j), bias[j]);  // p = n - j: row n - j
    TEST_ASSERT_EQUAL_INT(npos, cope_rows_read(7, npos));  // never past the table
}

// The positions --dump-attention writes are the counts the bias reads: each key's from its own
// gate to the query's, so the query's own key counts its gate alone
static void test_cope_positions_count_from_each_key_to_the_query(void) {
    const float logits[3] = {0, 40, -40};  // gates 1/2, 1 and 0, to double precision
    float positions[3] = {NAN, NAN, NAN};  // each written, the query's own key's too
    cope_positions_row(positions, logits, 3);
    const float expected[3] = {1.5f, 1, 0};
    for (int j = 0; j < 3; j++) TEST_ASSERT_FLOAT_WITHIN(1e-6, expected[j], positions[j]);
}

static void test_unknown_pe_is_refused_with_the_valid_ones_listed(void) {
    TEST_ASSERT_EQUAL_INT(PE_ALIBI, find_pe("alibi"));
    TEST_ASSERT_EQUAL_INT(PE_FIRE, find_pe("fire"));
    TEST_ASSERT_EQUAL_INT(PE_COPE, find_pe("cope"));
    TEST_ASSERT_THROWS_WITH(find_pe("cape"), "unknown positional encoding 'cape' (valid: nope ape t5 alibi rope ape_learned xpos kerple_log kerple_power fire cope)");
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_rope_score_depends_only_on_distance);
    RUN_TEST(test_rope_rotates_the_first_quarter_in_interleaved_pairs);
    RUN_TEST(test_rope_dims_round_down_to_whole_pairs);
    RUN_TEST(test_cope_counts_open_gates_and_interpolates_the_table);
    RUN_TEST(test_cope_count_on_the_last_row_is_clamped_in_the_backward);
    RUN_TEST(test_cope_reads_no_row_past_cope_rows_read);
    RUN_TEST(test_cope_positions_count_from_each_key_to_the_query);
    RUN_TEST(test_alibi_slopes_for_4_8_and_12_heads);
    RUN_TEST(test_alibi_bias_is_minus_slope_times_distance);
    RUN_TEST(test_t5_buckets_at_known_distances);
    RUN_TEST(test_t5_bias_reads_the_table_by_bucket_and_head);
    RUN_TEST(test_ape_table_concatenates_sin_and_cos_halves);
    RUN_TEST(test_learned_ape_reads_its_table_by_position);
    RUN_TEST(test_xpos_score_is_ropes_times_a_decay_in_the_distance);
    RUN_TEST(test_xpos_scales_are_zeta_to_the_position_over_512);
    RUN_TEST(test_xpos_scales_stay_in_floats_range_up_to_its_bound);
    RUN_TEST(test_kerple_bias_at_known_points_and_clamps);
    RUN_TEST(test_kerple_power_bounds_r2_alone_above);
    RUN_TEST(test_fire_normalises_the_log_distance_and_runs_its_mlp);
    RUN_TEST(test_fire_distance_zero_is_zero_where_l_and_i_are_zero);
    RUN_TEST(test_fire_gradient_passes_the_signs_of_negative_c_and_m);
    RUN_TEST(test_learned_pe_parameter_counts_and_position_rows);
    RUN_TEST(test_learned_pes_initialise_as_their_papers);
    RUN_TEST(test_rope_scalings_change_the_angles_as_their_papers);
    RUN_TEST(test_each_hook_does_nothing_for_the_other_pes);
    RUN_TEST(test_unknown_pe_is_refused_with_the_valid_ones_listed);
    return UNITY_END();
}
