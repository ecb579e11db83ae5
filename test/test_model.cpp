// Tests of model.h in double precision (the same source, with real = double): every layer's
// backward and the whole model's gradient against central finite differences, for every PE,
// with dropout off and on (the counter-based masks are fixed for a given seed and step);
// results independent of the thread count; causality; padding; KV-cache generation.
#define MODEL_REAL double
#include <omp.h>

#include <cfloat>
#include <set>

#include "model.h"
#include "test/unity.h"

// Central differences in double: truncation error ~ eps^2 |f'''| ~ 1e-12 and rounding
// ~ 1e-16 / eps ~ 1e-11 for the O(1) values here, so these tolerances leave a margin of 100 or
// more, while a missing or wrong term of a gradient is off by 1e-3 or more.
static const double FD_EPS = 1e-5;
static const double FD_ATOL = 1e-8;
static const double FD_RTOL = 1e-6;

// The same double arithmetic with its sums taken in another order (a layer's gradients summed
// apart, padding's rows, fused attention's key tiles): each term rounds by ~1e-16 and a sum
// holds at most ~1e4 of them, so 1e-12 is far above what reordering does, and far below a
// term left out or counted twice.
static const double REORDERED_ATOL = 1e-12;
static const double REORDERED_RTOL = 1e-9;

static std::vector<double> random_vector(size_t n, uint64_t seed, double scale = 1.0) {
    Rng rng = rng_stream(seed, n);
    std::vector<double> x(n);
    for (double& v : x) v = rng.normal() * scale;
    return x;
}

// d loss / d x_i for every element, by central differences (x is restored). `five_point`: the
// fourth-order stencil (truncation ~ eps^4 |f'''''|), for a loss whose higher derivatives are
// large, as FIRE's with its threshold near 0.01 (each derivative by m gains a factor ~1/m).
template <typename Loss>
static std::vector<double> numeric_gradient(std::vector<double>& x, Loss loss, bool five_point = false) {
    std::vector<double> g(x.size());
    auto at = [&](size_t i, double value) {
        x[i] = value;
        return loss();
    };
    for (size_t i = 0; i < x.size(); i++) {
        double saved = x[i], h = FD_EPS;
        double central = (at(i, saved + h) - at(i, saved - h)) / (2 * h);
        g[i] = five_point ? (4 * central - (at(i, saved + 2 * h) - at(i, saved - 2 * h)) / (4 * h)) / 3 : central;
        x[i] = saved;
    }
    return g;
}

static double weighted_sum(const std::vector<double>& out, const std::vector<double>& weights) {
    double s = 0;
    for (size_t i = 0; i < out.size(); i++) s += out[i] * weights[i];
    return s;
}

static const int PAD_ID = 0;         // tasks.h's padding token
static const int EOS_SENTINEL = -2;  // a token generation can never produce: it runs to max_T

static const Dropout TEST_DROPOUT = {0.3f, 77, 5};  // large p: many dropped elements in small tensors

// ----------------------------------------------------------------------------
// each layer: loss = sum(dout * layer(inputs)); the backward's input gradients against numeric ones

static void test_rmsnorm_backward_matches_finite_differences(void) {
    const int N = 5, C = 7;
    std::vector<double> x = random_vector(N * C, 1), w = random_vector(C, 2), dout = random_vector(N * C, 3);
    std::vector<double> out(N * C), rstd(N), dx(N * C, 0), dw(C, 0);
    auto loss = [&] { rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C); return weighted_sum(out, dout); };
    loss();
    rmsnorm_backward(dx.data(), dw.data(), dout.data(), x.data(), w.data(), rstd.data(), N, C);
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(x, loss).data(), dx.data(), N * C, "dx");
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(w, loss).data(), dw.data(), C, "dweight");
}

// sizes that cut matmul_accumulate's tiles: each of the three products has full tiles and
// tiles cut by the edge, in rows and in columns
static const int MM_N = 2 * TILE_ROWS + 3, MM_C = TILE_COLS + 5, MM_OC = 2 * TILE_COLS + 5;

static void test_matmul_forward_matches_the_formula(void) {
    const int N = MM_N, C = MM_C, OC = MM_OC;
    std::vector<double> x = random_vector(N * C, 4), w = random_vector(OC * C, 5), out(N * OC);
    matmul_forward(out.data(), x.data(), w.data(), N, C, OC, PRECISION_FP32);
    std::vector<double> expected(N * OC, 0);
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++)
            for (int c = 0; c < C; c++) expected[n * OC + o] += x[n * C + c] * w[o * C + c];
    // the same sums in the same order (and no fused multiply-add: the Makefile says why), in
    // full tiles and at the edges alike: the same bits
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, expected.data(), out.data(), N * OC, "out");
}

// matmul_backward adds into its gradients (model.h's convention: the caller zeroes what it
// starts): from gradients already holding values, each ends as its value plus the formula's
// sum, added in k order after it, in full tiles and cut ones alike: the same bits
static void test_matmul_backward_adds_into_its_gradients(void) {
    const int N = MM_N, C = MM_C, OC = MM_OC;
    std::vector<double> x = random_vector(N * C, 4), w = random_vector(OC * C, 5), dout = random_vector(N * OC, 6);
    std::vector<double> dx_before = random_vector(N * C, 7), dw_before = random_vector(OC * C, 8);
    std::vector<double> dx = dx_before, dw = dw_before, expected_dx = dx_before, expected_dw = dw_before;
    matmul_backward(dx.data(), dw.data(), dout.data(), x.data(), w.data(), N, C, OC, PRECISION_FP32);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int o = 0; o < OC; o++) expected_dx[n * C + c] += dout[n * OC + o] * w[o * C + c];
    for (int o = 0; o < OC; o++)
        for (int c = 0; c < C; c++)
            for (int n = 0; n < N; n++) expected_dw[o * C + c] += dout[n * OC + o] * x[n * C + c];
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, expected_dx.data(), dx.data(), N * C, "dx");
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, expected_dw.data(), dw.data(), OC * C, "dweight");
}

// dot's order of sums, which fixes its bits: DOT_LANES running sums, lane l adding the
// i = l (mod DOT_LANES), the tail past the last full group too, then the lanes added pairwise.
// Here lane 1 holds 2^60, which swallows the 1 of i = 17 (its spacing is 256), and lane 3
// -2^60; lane 0 gets the 1 of i = 16. Pairwise: lane 0 + lane 2 = 1, lane 1 + lane 3 = 0, so
// 1, where a plain running sum gives 2 and a tail summed into one lane 2 as well.
static void test_dot_sums_in_lanes_added_pairwise(void) {
    const int n = 2 * DOT_LANES + 2;
    std::vector<double> a(n, 0), b(n, 1);
    a[1] = std::ldexp(1.0, 60), a[3] = -std::ldexp(1.0, 60), a[2 * DOT_LANES] = 1, a[2 * DOT_LANES + 1] = 1;
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 1.0, dot(a.data(), b.data(), n));
}

// ----------------------------------------------------------------------------
// constants a gradient check can not see (a forward and its backward changed alike stay
// consistent): each against a hand computation

// RMSNorm's epsilon is T5's 1e-6, which shows where mean(x^2) is of its size
static void test_rmsnorm_adds_t5s_epsilon_to_the_mean_square(void) {
    const int C = 4;
    real x[C] = {1e-3, -1e-3, 1e-3, -1e-3}, w[C] = {1, 1, 1, 1}, y[C], rstd;
    rmsnorm_forward(y, &rstd, x, w, 1, C);
    double expected = 1 / std::sqrt(1e-6 + 1e-6);  // mean(x^2) = 1e-6
    TEST_ASSERT_DOUBLE_WITHIN(1e-5 * expected, expected, rstd);
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, 1e-3 * expected, y[0]);
}

// inverted dropout: a kept element is x / (1 - p), a dropped one 0, and about 1 - p are kept
static void test_dropout_scales_what_it_keeps_by_one_over_one_minus_p(void) {
    Dropout d = {0.25f, 11, 3};
    const size_t n = 4096;
    std::vector<real> x(n, 1.0), y(n);
    dropout_forward(y.data(), x.data(), d, d.key(SITE_EMBED), n);
    size_t kept = 0, other = 0;
    for (real v : y) kept += v != 0, other += v != 0 && std::fabs(v - 4.0 / 3) > 1e-6;
    TEST_ASSERT_EQUAL_INT(0, other);
    TEST_ASSERT_DOUBLE_WITHIN(0.03, 0.75, (double)kept / n);
}

// the LM head: logits = rmsnorm(h) wte^T / sqrt(C), the weights tied to the embedding's
static void test_logits_are_the_final_norm_times_the_tied_embedding_over_sqrt_c(void) {
    ModelConfig c{1, 8, 2, 16, 5, 6, PE_NOPE, 0.25f, 0.0f};
    Model m;
    model_init(&m, c, 1, 3);
    int tokens[6] = {1, 2, 3, 4, 0, 1};
    model_forward(&m, tokens, nullptr, 1, 6, NO_DROPOUT);
    for (int t = 0; t < 6; t++)
        for (int v = 0; v < c.V; v++) {
            double s = 0;
            for (int k = 0; k < c.C; k++) s += (double)m.act(A_LNF)[t * c.C + k] * m.param(P_WTE)[v * c.C + k];
            TEST_ASSERT_DOUBLE_WITHIN(1e-5, s / std::sqrt((double)c.C), m.act(A_LOGITS)[t * c.V + v]);
        }
}

// the softmax subtracts each row's largest score: scores near 750 (exp overflows past 709 in
// double, 88 in float) give the weights exp(s - 780) would, not NaN
static void test_attention_softmax_stays_finite_for_large_scores(void) {
    const int B = 1, T = 3, C = 1, NH = 1;
    std::vector<real> qkv = {30, 25, 1, 30, 26, 2, 30, 25.5, 3};  // q, k, v of each token: scores 750, 780, 765 for query 2
    std::vector<real> out(T * C), att(T * T);
    attention_forward(out.data(), att.data(), qkv.data(), nullptr, 1, nullptr, NO_DROPOUT, 0, B, T, C, NH, 0, PRECISION_FP32);
    double e0 = std::exp(-30.0), e1 = 1, e2 = std::exp(-15.0);
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, (e0 * 1 + e1 * 2 + e2 * 3) / (e0 + e1 + e2), out[2]);
}

// and near -750 (exp underflows to 0 past -745 in double, -104 in float): weights exp(s - max)
// again, not 0 / 0, as a max starting anywhere but -infinity (at 0, say) would give
static void test_attention_softmax_stays_finite_for_large_negative_scores(void) {
    const int B = 1, T = 3, C = 1, NH = 1;
    std::vector<real> qkv = {30, -25, 1, 30, -26, 2, 30, -25.5, 3};  // scores -750, -780, -765 for query 2
    std::vector<real> out(T * C), att(T * T);
    attention_forward(out.data(), att.data(), qkv.data(), nullptr, 1, nullptr, NO_DROPOUT, 0, B, T, C, NH, 0, PRECISION_FP32);
    double e0 = 1, e1 = std::exp(-30.0), e2 = std::exp(-15.0);
    TEST_ASSERT_DOUBLE_WITHIN(1e-6, (e0 * 1 + e1 * 2 + e2 * 3) / (e0 + e1 + e2), out[2]);
}

static void test_matmul_backward_matches_finite_differences(void) {
    const int N = MM_N, C = MM_C, OC = MM_OC;
    std::vector<double> x = random_vector(N * C, 4), w = random_vector(OC * C, 5), dout = random_vector(N * OC, 6);
    std::vector<double> out(N * OC), dx(N * C, 0), dw(OC * C, 0);
    auto loss = [&] { matmul_forward(out.data(), x.data(), w.data(), N, C, OC, PRECISION_FP32); return weighted_sum(out, dout); };
    loss();
    matmul_backward(dx.data(), dw.data(), dout.data(), x.data(), w.data(), N, C, OC, PRECISION_FP32);
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(x, loss).data(), dx.data(), N * C, "dx");
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(w, loss).data(), dw.data(), OC * C, "dweight");
}

// --precision bf16's rounding, on values whose bits say which way each must go
static void test_round_to_bf16_rounds_to_nearest_even(void) {
    auto bf16 = [](double x) { return (double)round_to_bf16((float)x); };
    const double ulp = std::ldexp(1.0, -7);  // bf16's spacing in [1, 2): 7 mantissa bits
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 1.0, bf16(1.0));
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 1.0, bf16(1 + ulp / 2));  // a tie: to the even 1.0
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 1 + 2 * ulp, bf16(1 + 1.5 * ulp));  // a tie: to the even 1 + 2 ulp
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 1 + ulp, bf16(1 + ulp / 2 + std::ldexp(1.0, -20)));  // past the tie: up
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 1.0, bf16(1 + ulp / 2 - std::ldexp(1.0, -20)));  // short of it: down
    TEST_ASSERT_DOUBLE_WITHIN(0.0, -(1 + ulp), bf16(-(1 + 0.75 * ulp)));  // the sign is kept
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 2.0, bf16(2 - ulp / 8));  // rounding up carries into the exponent
    TEST_ASSERT_DOUBLE_WITHIN(0.0, std::ldexp(1.0, -130), bf16(std::ldexp(1.0, -130)));  // a subnormal bf16 holds exactly
    TEST_ASSERT_DOUBLE_WITHIN(0.0, 0.0, bf16(std::ldexp(1.0, -149)));  // fp32's smallest: under half of bf16's
    TEST_ASSERT_TRUE(std::isinf(bf16(FLT_MAX)) && bf16(FLT_MAX) > 0);  // past bf16's largest: infinity
    TEST_ASSERT_TRUE(std::isinf(bf16(-INFINITY)) && bf16(-INFINITY) < 0);
    TEST_ASSERT_TRUE(std::isnan(bf16(NAN)));
    float payload;  // a NaN whose payload lies in the bits rounding drops (rounded as a number: infinity)
    uint32_t bits = 0x7f800001u;
    memcpy(&payload, &bits, sizeof bits);
    TEST_ASSERT_TRUE(std::isnan(round_to_bf16(payload)));
}

// bf16 products read every operand rounded and nothing else: the same bits as fp32 products of
// operands rounded beforehand, and not those of the operands as they are
static void test_bf16_products_read_every_operand_rounded(void) {
    const int N = MM_N, C = MM_C, OC = MM_OC;
    std::vector<double> x = random_vector(N * C, 4), w = random_vector(OC * C, 5), dout = random_vector(N * OC, 6);
    auto rounded = [](std::vector<double> v) {
        for (double& e : v) e = round_to_bf16((float)e);
        return v;
    };
    std::vector<double> rx = rounded(x), rw = rounded(w), rdout = rounded(dout);
    std::vector<double> out(N * OC), expected(N * OC), exact(N * OC);
    matmul_forward(out.data(), x.data(), w.data(), N, C, OC, PRECISION_BF16);
    matmul_forward(expected.data(), rx.data(), rw.data(), N, C, OC, PRECISION_FP32);
    matmul_forward(exact.data(), x.data(), w.data(), N, C, OC, PRECISION_FP32);
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, expected.data(), out.data(), N * OC, "out");
    TEST_ASSERT_FALSE(out == exact);
    std::vector<double> dx(N * C, 0), dw(OC * C, 0), expected_dx(N * C, 0), expected_dw(OC * C, 0);
    matmul_backward(dx.data(), dw.data(), dout.data(), x.data(), w.data(), N, C, OC, PRECISION_BF16);
    matmul_backward(expected_dx.data(), expected_dw.data(), rdout.data(), rx.data(), rw.data(), N, C, OC, PRECISION_FP32);
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, expected_dx.data(), dx.data(), N * C, "dx");
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, expected_dw.data(), dw.data(), OC * C, "dweight");
}

static void test_embedding_backward_matches_finite_differences(void) {
    const int B = 2, T = 4, C = 6, V = 5;
    const int tokens[B * T] = {1, 3, 3, 0, 4, 1, 1, 2};  // repeated tokens: their gradients add
    const int positions[B * T] = {0, 5, 2, 7, 1, 1, 3, 6};  // drawn positions, one repeated: its gradients add
    for (PEKind kind : {PE_APE, PE_APE_LEARNED}) {
        const int max_pos = 8;
        PETables tables = make_pe_tables(kind, C, 1, 0, max_pos);
        std::vector<double> wte = random_vector(V * C, 7), dout = random_vector(B * T * C, 8), out(B * T * C), dwte(V * C, 0);
        std::vector<double> table = random_vector(pe_param_count(kind, C, 1, max_pos), 9), dtable(table.size(), 0);
        auto loss = [&] {
            embedding_forward(out.data(), tokens, positions, wte.data(), table.data(), pe_view(tables), B, T, C, 0);
            return weighted_sum(out, dout);
        };
        loss();
        embedding_backward(dwte.data(), dtable.data(), dout.data(), tokens, positions, pe_view(tables), B, T, C);
        TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(wte, loss).data(), dwte.data(), V * C, PE_NAMES[kind]);
        if (kind == PE_APE_LEARNED)  // the sinusoids learn nothing
            TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(table, loss).data(), dtable.data(), table.size(), PE_NAMES[kind]);
    }
}

// Abacus (pe.h): rows by each digit's place plus its sequence's offset; digits in runs of 1-3
// and a row that two sequences share, whose gradients add
static void test_abacus_backward_matches_finite_differences(void) {
    const int B = 2, T = 5, C = 3, V = 6, max_T = 5;
    const unsigned char is_digit[V] = {0, 0, 1, 1, 1, 0};
    const int tokens[B * T] = {2, 3, 5, 4, 2, 0, 4, 4, 4, 5};
    const int offsets[B] = {1, 0};  // sequence 0's place 1 and sequence 1's place 2 share row 1
    std::vector<double> table = random_vector(abacus_rows(max_T) * C, 9), dtable(table.size(), 0);
    std::vector<double> base = random_vector(B * T * C, 10), dout = random_vector(B * T * C, 11), out(B * T * C);
    auto loss = [&] {
        out = base;
        abacus_forward(out.data(), tokens, offsets, table.data(), is_digit, B, T, C, 0);
        return weighted_sum(out, dout);
    };
    loss();
    abacus_backward(dtable.data(), dout.data(), tokens, offsets, is_digit, B, T, C);
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(table, loss).data(), dtable.data(), table.size(), "abacus");
    auto at = [&](int b, int t, int c) { return ((size_t)b * T + t) * C + c; };
    for (int c = 0; c < C; c++) {
        TEST_ASSERT_MESSAGE(out[at(0, 0, c)] == base[at(0, 0, c)] + table[1 * C + c], "place 1 + offset 1: row 1");
        TEST_ASSERT_MESSAGE(out[at(0, 2, c)] == base[at(0, 2, c)], "not a digit: no row");
        TEST_ASSERT_MESSAGE(out[at(1, 3, c)] == base[at(1, 3, c)] + table[2 * C + c], "place 3 + offset 0: row 2");
    }
}

static void test_dropout_and_relu_dropout_backward_match_finite_differences(void) {
    const size_t n = 40;
    std::vector<double> x = random_vector(n, 9), dout = random_vector(n, 10), out(n), dx(n, 0), dx_relu(n, 0);
    uint32_t key = TEST_DROPOUT.key(SITE_FFN_HIDDEN, 1);
    auto scaled = [&] { dropout_forward(out.data(), x.data(), TEST_DROPOUT, key, n, 0.5); return weighted_sum(out, dout); };
    auto relu = [&] { relu_dropout_forward(out.data(), x.data(), TEST_DROPOUT, key, n); return weighted_sum(out, dout); };
    dropout_backward(dx.data(), dout.data(), TEST_DROPOUT, key, n, 0.5);
    relu_dropout_backward(dx_relu.data(), dout.data(), x.data(), TEST_DROPOUT, key, n);
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(x, scaled).data(), dx.data(), n, "dropout dx");
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(x, relu).data(), dx_relu.data(), n, "relu_dropout dx");
    int dropped = 0;
    relu();
    for (size_t i = 0; i < n; i++) dropped += x[i] > 0 && out[i] == 0;
    TEST_ASSERT_GREATER_THAN(0, dropped);  // the mask really drops something here
}

// The keys the GPU reads from device memory, one per site: each site's own key, at the index
// dropout_site_index gives it, and no two sites alike
static void test_dropout_keys_list_every_site_once(void) {
    const int layers = 3;
    std::vector<uint32_t> keys = TEST_DROPOUT.keys(layers);
    TEST_ASSERT_EQUAL_INT(dropout_sites(layers), (int)keys.size());
    for (DropoutSite site : {SITE_EMBED, SITE_FINAL}) TEST_ASSERT_TRUE(TEST_DROPOUT.key(site) == keys[dropout_site_index(site)]);
    for (int l = 0; l < layers; l++)
        for (DropoutSite site : {SITE_ATTN_PROBS, SITE_ATTN_OUT, SITE_FFN_HIDDEN, SITE_FFN_OUT})
            TEST_ASSERT_TRUE(TEST_DROPOUT.key(site, l) == keys[dropout_site_index(site, l)]);
    TEST_ASSERT_EQUAL_INT((int)keys.size(), (int)std::set<uint32_t>(keys.begin(), keys.end()).size());
}

// sum_of_squares, the gradient norm's (clipping's), sums in chunks of 2^16 values, one thread
// each: over two chunks and 3 values more, every value counts (squares of integers: exact sums)
static void test_sum_of_squares_counts_every_value_of_every_chunk(void) {
    const size_t n = 2 * 65536 + 3;
    std::vector<double> x(n);
    double expected = 0;
    for (size_t i = 0; i < n; i++) x[i] = (double)(i % 5) - 2, expected += x[i] * x[i];
    TEST_ASSERT_DOUBLE_WITHIN(0.0, expected, sum_of_squares(x.data(), n));
}

static void test_crossentropy_backward_matches_finite_differences(void) {
    const int N = 5, V = 7;
    const int targets[N] = {3, -1, 0, 6, -1};
    std::vector<double> z = random_vector(N * V, 11, 2.0), dz(N * V, 0);
    auto loss = [&] { return crossentropy_forward(z.data(), targets, N, V); };
    crossentropy_backward(dz.data(), z.data(), targets, N, V, 3);
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(z, loss).data(), dz.data(), N * V, "dlogits");
}

// the cross-entropy subtracts each row's largest logit: logits near 1000 (exp overflows past 709)
// give the loss log(1 + e^-1 + e^-2) + 1 of target 1 and the softmax's gradient, not infinity
static void test_crossentropy_stays_finite_for_large_logits(void) {
    const int V = 3;
    const int target = 1;
    std::vector<double> z = {1000, 999, 998}, dz(V, 0);
    double sum = 1 + std::exp(-1.0) + std::exp(-2.0);
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, std::log(sum) + 1, crossentropy_forward(z.data(), &target, 1, V));
    crossentropy_backward(dz.data(), z.data(), &target, 1, V, 1);
    const double expected[V] = {1 / sum, std::exp(-1.0) / sum - 1, std::exp(-2.0) / sum};
    TEST_ASSERT_TENSOR_CLOSE(1e-12, 1e-12, expected, dz.data(), V, "dlogits");
}

// RoPE and xPos (whose scales make the backward more than the inverse rotation), at positions
// 0 .. T-1 and at drawn ones
static void test_rotation_backward_matches_finite_differences(void) {
    const int B = 2, T = 5, C = 16, NH = 2;
    const int drawn[B * T] = {0, 3, 9, 17, 30, 2, 4, 5, 21, 28};
    for (PEKind kind : {PE_ROPE, PE_XPOS})
        for (const int* positions : {(const int*)nullptr, drawn}) {
            PETables tables = make_pe_tables(kind, C, NH, rope_dims(C / NH, 0.5f), 32);
            std::vector<double> qkv = random_vector(B * T * 3 * C, 12), dout = random_vector(B * T * 3 * C, 13), out;
            auto loss = [&] {
                out = qkv;
                rotate_qk_forward(out.data(), positions, pe_view(tables), B, T, C, NH, 0);
                return weighted_sum(out, dout);
            };
            std::vector<double> dqkv = dout;
            rotate_qk_backward(dqkv.data(), positions, pe_view(tables), B, T, C, NH);
            TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(qkv, loss).data(), dqkv.data(), qkv.size(), PE_NAMES[kind]);
        }
}

// The PE's parameters as its init makes them, nudged so no value sits at a kink. (KERPLE's
// values stay inside their clamps: past one, the gradient is taken at the bound, as the
// official code's, not the loss's derivative in the stored value; test_pe checks it there.)
static std::vector<double> pe_params_for_test(PEKind kind, int C, int NH, int max_pos, uint64_t seed) {
    std::vector<double> p(pe_param_count(kind, C, NH, max_pos));
    Rng rng = rng_stream(seed, kind);
    pe_init_params(kind, p.data(), C, NH, max_pos, &rng);
    if (kind == PE_FIRE) p[fire_layout(NH).m] = 0.01;  // L = 5.12: queries past it normalise by psi(i)
    if (kind == PE_COPE) p = random_vector(p.size(), seed);  // its zero init would hide the gates' gradient
    return p;
}

// CoPE's row by itself, where its positions pass the table's last row too (npos = 3): the
// gradients of the logits (through the gates) and of z
static void test_cope_row_backward_matches_finite_differences(void) {
    const int n = 6, npos = 3;
    std::vector<double> logits = random_vector(n, 40), z = random_vector(npos, 41), dbias = random_vector(n, 42), bias(n);
    logits[5] = 3, logits[4] = 2;  // two gates nearly open: the positions of the first keys pass row 2
    auto loss = [&] {
        cope_bias_row(bias.data(), logits.data(), z.data(), n, npos);
        return weighted_sum(bias, dbias);
    };
    loss();
    TEST_ASSERT_MESSAGE(bias[0] == z[npos - 1], "the first key's position is past the last row");
    std::vector<double> dlogits(n), dz(npos, 0);
    cope_bias_row_backward(dlogits.data(), dz.data(), dbias.data(), logits.data(), z.data(), n, npos);
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(logits, loss).data(), dlogits.data(), n, "dlogits");
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(z, loss).data(), dz.data(), npos, "dz");
}

// attention with each PE's bias plane, and the plane's gradient into the PE's parameters;
// dropout on and off; positions 0 .. T-1 (one shared plane), drawn (a plane per sequence), and
// packed rows (each row two sequences, counting from their own starts, attending within).
// CoPE's planes, one per sequence, come from q and k themselves.
static void test_attention_backward_matches_finite_differences_for_every_pe(void) {
    const int B = 2, T = 5, C = 8, NH = 2, max_pos = 40;
    const int drawn[B * T] = {1, 4, 9, 20, 33, 0, 2, 3, 11, 39};
    const int packed[B * T] = {0, 1, 2, 0, 1, 0, 1, 0, 1, 2}, starts[B * T] = {0, 0, 0, 3, 3, 0, 0, 2, 2, 2};
    struct Layout {
        const int *positions, *starts;
        const char* name;
    };
    for (int p = 0; p < NUM_PES; p++)
        for (const Dropout& drop : {NO_DROPOUT, TEST_DROPOUT})
            for (Layout layout : {Layout{nullptr, nullptr, ""}, Layout{drawn, nullptr, ", drawn positions"}, Layout{packed, starts, ", packed"}}) {
                const int* positions = layout.positions;
                PETables tables = make_pe_tables((PEKind)p, C, NH, 0, max_pos);
                PE pe = pe_view(tables);
                bool context = pe_has_context_bias((PEKind)p);
                int planes = positions || context ? B : 1;
                uint32_t key = drop.key(SITE_ATTN_PROBS, 0);
                std::vector<double> qkv = random_vector(B * T * 3 * C, 14), params = pe_params_for_test((PEKind)p, C, NH, max_pos, 15);
                std::vector<double> dout = random_vector(B * T * C, 16), out(B * T * C), att(B * NH * T * T), bias(planes * NH * T * T);
                auto loss = [&] {
                    pe_bias_forward(bias.data(), params.data(), positions, layout.starts, pe, planes, T, NH, 0);
                    if (context) cope_bias_forward(bias.data(), qkv.data(), params.data(), layout.starts, pe, B, T, C, NH, 0);
                    attention_forward(out.data(), att.data(), qkv.data(), bias.data(), planes, layout.starts, drop, key, B, T, C, NH, 0,
                                      PRECISION_FP32);
                    return weighted_sum(out, dout);
                };
                loss();
                std::vector<double> dqkv(qkv.size(), 0), dscores(att.size()), dbias(bias.size(), 0), dparams(params.size(), 0);
                attention_backward(dqkv.data(), dscores.data(), dout.data(), qkv.data(), att.data(), layout.starts, drop, key, B, T, C, NH,
                                   PRECISION_FP32);
                pe_bias_plane_backward(dbias.data(), dscores.data(), planes, B, T, NH);
                pe_bias_backward(dparams.data(), dbias.data(), params.data(), positions, layout.starts, pe, planes, T, NH, params.size());
                if (context)
                    cope_bias_backward(dqkv.data(), dparams.data(), dscores.data(), qkv.data(), params.data(), layout.starts, pe, B, T, C, NH);
                std::string label = std::string(PE_NAMES[p]) + (drop.p > 0 ? " with dropout" : "") + layout.name;
                TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(qkv, loss).data(), dqkv.data(), qkv.size(), (label + ": dqkv").c_str());
                if (!params.empty())
                    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(params, loss, true).data(), dparams.data(), params.size(),
                                             (label + ": dparams").c_str());
            }
}

// Each (step, site, layer) draws its own mask, and a mask drops a fraction p of its elements.
static void test_dropout_masks_are_fresh_per_step_site_and_layer_and_drop_p(void) {
    const size_t n = 100000;
    const Dropout at_step_3 = {0.1f, 5, 3}, at_step_4 = {0.1f, 5, 4};
    const uint32_t keys[] = {at_step_3.key(SITE_ATTN_OUT, 0), at_step_4.key(SITE_ATTN_OUT, 0), at_step_3.key(SITE_FFN_OUT, 0),
                             at_step_3.key(SITE_ATTN_OUT, 1), at_step_3.key(SITE_EMBED)};
    std::vector<std::vector<bool>> masks;
    for (uint32_t key : keys) {
        std::vector<bool> mask(n);
        size_t dropped = 0;
        for (size_t i = 0; i < n; i++) dropped += !(mask[i] = dropout_keeps(key, (uint32_t)i, at_step_3.threshold()));
        // binomial(100,000, 0.1): standard deviation 95; 5 of them
        TEST_ASSERT_DOUBLE_WITHIN(5 * 95.0, 10000, dropped);
        for (const std::vector<bool>& other : masks) TEST_ASSERT_MESSAGE(other != mask, "two sites or steps share a mask");
        masks.push_back(mask);
    }
}

// ----------------------------------------------------------------------------
// the whole model

static ModelConfig tiny_config(PEKind pe, float dropout, int L = 2) {
    // HS = 8 so that RoPE's 25% is one pair, as in the paper's 16 of 64
    return ModelConfig{L, 16, 2, 24, 11, 8, pe, 0.25f, dropout};
}

// model_init, and for CoPE tables of random values (one per layer with --pe-per-layer): its
// zero init would leave its bias, and the gates' gradient, out of every test
static void init_for_test(Model* m, const ModelConfig& c, int B, uint64_t seed) {
    model_init(m, c, B, seed);
    if (!pe_has_context_bias(c.pe)) return;
    size_t n = param_numel(c, P_PE_TABLE);
    for (int l = 0; l < param_copies(c, P_PE_TABLE); l++) {
        std::vector<double> table = random_vector(n, seed + l);
        std::copy(table.begin(), table.end(), m->param(P_PE_TABLE, l));
    }
}

// two sequences, the second shorter and right-padded; targets on the latter part only
struct TinyBatch {
    static const int B = 2, T = 7;
    int tokens[B * T] = {3, 4, 5, 6, 7, 8, 9, 2, 10, 5, 5, 1, PAD_ID, PAD_ID};
    int targets[B * T] = {-1, -1, -1, 7, 8, 9, 1, -1, -1, 5, 1, -1, -1, -1};
};

static void test_model_gradient_matches_finite_differences_for_every_pe(void) {
    TinyBatch batch;
    for (int p = 0; p < NUM_PES; p++)
        for (float dropout : {0.0f, 0.3f}) {
            Model m;
            init_for_test(&m, tiny_config((PEKind)p, dropout), TinyBatch::B, 42);
            Dropout drop = {dropout, 1234, 17};
            auto loss = [&] { return model_forward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, drop); };
            loss();
            model_backward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, drop);
            std::vector<double> numeric = numeric_gradient(m.params, loss);
            for (int id = 0; id < NUM_PARAMS; id++)
                for (int l = 0; l < param_copies(m.config, id); l++) {
                    size_t at = m.layout.at(id, l), n = param_numel(m.config, id);
                    if (n == 0) continue;
                    std::string label = std::string(PE_NAMES[p]) + (dropout > 0 ? " dropout " : " ") + PARAMS[id].name + " layer " + std::to_string(l);
                    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric.data() + at, m.grads.data() + at, n, label.c_str());
                }
        }
}

// --pe-per-layer, for every PE with learned values in attention: each layer's tensor gets its
// own gradient (three layers, dropout on)
static void test_model_gradient_matches_finite_differences_with_pe_per_layer(void) {
    TinyBatch batch;
    for (int p = 0; p < NUM_PES; p++) {
        if (!pe_attention_has_params((PEKind)p)) continue;
        ModelConfig c = tiny_config((PEKind)p, 0.3f, 3);
        c.pe_per_layer = true;
        Model m;
        init_for_test(&m, c, TinyBatch::B, 42);
        TEST_ASSERT_EQUAL_INT_MESSAGE(3, param_copies(c, P_PE_TABLE), PE_NAMES[p]);
        Dropout drop = {0.3f, 1234, 17};
        auto loss = [&] { return model_forward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, drop); };
        loss();
        model_backward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, drop);
        std::vector<double> numeric = numeric_gradient(m.params, loss);
        for (int l = 0; l < c.L; l++) {
            size_t at = m.layout.at(P_PE_TABLE, l), n = param_numel(c, P_PE_TABLE);
            std::string label = std::string(PE_NAMES[p]) + " pe_table of layer " + std::to_string(l);
            TEST_ASSERT_MESSAGE(std::any_of(m.grads.begin() + at, m.grads.begin() + at + n, [](double g) { return g != 0; }), label.c_str());
        }
        TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric.data(), m.grads.data(), m.params.size(), PE_NAMES[p]);
    }
}

// A per-layer model whose layers all hold the shared model's PE tensor is that model: the same
// loss, and its layers' gradients sum to the shared tensor's. Changing one layer's tensor then
// changes the loss: each layer reads its own.
static void test_pe_per_layer_with_equal_tensors_is_the_shared_model(void) {
    TinyBatch batch;
    for (int p = 0; p < NUM_PES; p++) {
        if (!pe_attention_has_params((PEKind)p)) continue;
        ModelConfig shared_config = tiny_config((PEKind)p, 0.0f, 3), per_layer_config = shared_config;
        per_layer_config.pe_per_layer = true;
        Model shared, per_layer;
        init_for_test(&shared, shared_config, TinyBatch::B, 42);
        init_for_test(&per_layer, per_layer_config, TinyBatch::B, 43);
        size_t n = param_numel(shared_config, P_PE_TABLE);
        for (int id = 0; id < NUM_PARAMS; id++)
            for (int l = 0; l < param_copies(per_layer_config, id); l++)
                std::copy_n(shared.param(id, is_per_layer(shared_config, id) ? l : 0), param_numel(shared_config, id), per_layer.param(id, l));
        auto loss = [&](Model* m) { return model_forward(m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, NO_DROPOUT); };
        TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(1e-12, loss(&shared), loss(&per_layer), PE_NAMES[p]);
        model_backward(&shared, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, NO_DROPOUT);
        model_backward(&per_layer, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, NO_DROPOUT);
        std::vector<double> summed(n, 0);
        for (int l = 0; l < per_layer_config.L; l++)
            for (size_t i = 0; i < n; i++) summed[i] += per_layer.grad(P_PE_TABLE, l)[i];
        TEST_ASSERT_TENSOR_CLOSE(REORDERED_ATOL, REORDERED_RTOL, shared.grad(P_PE_TABLE), summed.data(), n, PE_NAMES[p]);
        double before = loss(&per_layer);
        std::vector<double> change = random_vector(n, 99, 0.5);  // not one constant: the softmax ignores a shift of a whole row
        for (size_t i = 0; i < n; i++) per_layer.param(P_PE_TABLE, 1)[i] += change[i];
        TEST_ASSERT_MESSAGE(std::fabs(loss(&per_layer) - before) > 1e-6, PE_NAMES[p]);
    }
}

// Three sequences (6, 3 and 2 tokens) padded to one row each, and packed as --pack lays them:
// the first alone in row 0, the other two end to end in row 1 with one token of padding.
struct PackedBatch {
    static const int B = 3, T = 6, ROWS = 2;
    int padded_tokens[B * T] = {3, 4, 5, 6, 7, 8, 9, 2, 10, PAD_ID, PAD_ID, PAD_ID, 5, 6, PAD_ID, PAD_ID, PAD_ID, PAD_ID};
    int padded_targets[B * T] = {-1, -1, 6, 7, 8, 1, -1, 10, 1, -1, -1, -1, 6, 1, -1, -1, -1, -1};
    int drawn[B * T] = {0, 2, 3, 5, 8, 9, 1, 4, 7, 7, 7, 7, 3, 6, 6, 6, 6, 6};  // --random-positions' draw, padding any
    int row_of[B] = {0, 1, 1}, offset[B] = {0, 0, 3}, length[B] = {6, 3, 2};
    int tokens[ROWS * T], targets[ROWS * T], counted[ROWS * T], carried[ROWS * T], starts[ROWS * T];

    PackedBatch() {
        for (int t = 0; t < ROWS * T; t++) tokens[t] = PAD_ID, targets[t] = -1, counted[t] = carried[t] = 0, starts[t] = 5;  // row 1's padding
        for (int b = 0; b < B; b++)
            for (int t = 0; t < length[b]; t++) {
                int to = row_of[b] * T + offset[b] + t;
                tokens[to] = padded_tokens[b * T + t], targets[to] = padded_targets[b * T + t];
                counted[to] = t, carried[to] = drawn[b * T + t], starts[to] = offset[b];
            }
    }
};

// --pack: the packed rows give every real token the logits the padded batch gives it, the same
// loss and the same gradient of every parameter (summed in another order: equal to rounding),
// for every PE, with positions counted from each sequence's start or carried from a draw.
static void test_packed_rows_compute_what_the_padded_batch_computes(void) {
    PackedBatch batch;
    const int B = PackedBatch::B, T = PackedBatch::T, ROWS = PackedBatch::ROWS;
    for (int p = 0; p < NUM_PES; p++)
        for (bool drawn : {false, true}) {
            if (drawn && !pe_reads_positions((PEKind)p)) continue;
            ModelConfig c = tiny_config((PEKind)p, 0.0f);
            c.packed = true, c.random_positions = drawn ? 16 : 0;
            Model m;
            init_for_test(&m, c, B, 42);
            std::string label = std::string(PE_NAMES[p]) + (drawn ? ", drawn positions" : "");
            double padded_loss = model_forward(&m, batch.padded_tokens, batch.padded_targets, B, T, NO_DROPOUT, 0, {drawn ? batch.drawn : nullptr});
            std::vector<double> padded_logits(m.act(A_LOGITS), m.act(A_LOGITS) + B * T * c.V);
            model_backward(&m, batch.padded_tokens, batch.padded_targets, B, T, NO_DROPOUT, {drawn ? batch.drawn : nullptr});
            std::vector<double> padded_grads = m.grads;
            TokenPlaces packed = {drawn ? batch.carried : batch.counted, nullptr, batch.starts};
            TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(1e-12, padded_loss, model_forward(&m, batch.tokens, batch.targets, ROWS, T, NO_DROPOUT, 0, packed),
                                              label.c_str());
            for (int b = 0; b < B; b++)
                for (int t = 0; t < batch.length[b]; t++) {
                    const double* got = m.act(A_LOGITS) + ((size_t)batch.row_of[b] * T + batch.offset[b] + t) * c.V;
                    TEST_ASSERT_TENSOR_CLOSE(REORDERED_ATOL, REORDERED_RTOL, padded_logits.data() + ((size_t)b * T + t) * c.V, got, c.V, label.c_str());
                }
            model_backward(&m, batch.tokens, batch.targets, ROWS, T, NO_DROPOUT, packed);
            TEST_ASSERT_TENSOR_CLOSE(REORDERED_ATOL, REORDERED_RTOL, padded_grads.data(), m.grads.data(), m.grads.size(), label.c_str());
        }
}

// and their gradient matches finite differences with dropout on (whose masks follow the layout)
static void test_model_gradient_matches_finite_differences_with_packed_rows(void) {
    PackedBatch batch;
    for (PEKind pe : {PE_T5, PE_FIRE, PE_ROPE, PE_COPE}) {
        ModelConfig c = tiny_config(pe, 0.3f);
        c.packed = true;
        Model m;
        init_for_test(&m, c, PackedBatch::ROWS, 42);
        Dropout drop = {0.3f, 1234, 17};
        TokenPlaces packed = {batch.counted, nullptr, batch.starts};
        auto loss = [&] { return model_forward(&m, batch.tokens, batch.targets, PackedBatch::ROWS, PackedBatch::T, drop, 0, packed); };
        loss();
        model_backward(&m, batch.tokens, batch.targets, PackedBatch::ROWS, PackedBatch::T, drop, packed);
        std::vector<double> numeric = numeric_gradient(m.params, loss);
        TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric.data(), m.grads.data(), m.params.size(), PE_NAMES[pe]);
    }
}

// --abacus over two PEs (one with no input of its own, one with), with training's per-sequence
// offsets: every tensor's gradient, the Abacus table's included
static void test_model_gradient_matches_finite_differences_with_abacus(void) {
    TinyBatch batch;
    const int offsets[TinyBatch::B] = {4, 0};
    for (PEKind pe : {PE_NOPE, PE_APE_LEARNED}) {
        ModelConfig c = tiny_config(pe, 0.3f);
        c.abacus = true;
        Model m;
        model_init(&m, c, TinyBatch::B, 42);
        m.is_digit.assign(c.V, 0);
        for (int digit : {5, 6, 7}) m.is_digit[digit] = 1;  // a run of 3 and one of 2 in TinyBatch
        Dropout drop = {0.3f, 1234, 17};
        auto loss = [&] { return model_forward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, drop, 0, {nullptr, offsets}); };
        loss();
        model_backward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, drop, {nullptr, offsets});
        std::vector<double> numeric = numeric_gradient(m.params, loss);
        TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric.data(), m.grads.data(), m.params.size(), PE_NAMES[pe]);
        size_t at = m.layout.at(P_ABACUS, 0), n = param_numel(c, P_ABACUS);
        TEST_ASSERT_EQUAL_INT(abacus_rows(c.max_T) * c.C, n);
        TEST_ASSERT_MESSAGE(std::any_of(m.grads.begin() + at, m.grads.begin() + at + n, [](double g) { return g != 0; }), "no Abacus gradient");
    }
}

// a TinyBatch model of `pe` under --position-coupling, whose digits are tokens 5, 6 and 7
static Model coupled_model(PEKind pe, float dropout) {
    ModelConfig c = tiny_config(pe, dropout);
    c.position_coupling = true;
    Model m;
    model_init(&m, c, TinyBatch::B, 42);
    m.is_digit.assign(c.V, 0);
    for (int digit : {5, 6, 7}) m.is_digit[digit] = 1;
    return m;
}

// --position-coupling over the PEs it wraps, with training's per-sequence starts: the gradient
// through the coupled positions; and the positions are coupled (the loss differs from the same
// parameters at positions 0 .. T-1)
static void test_model_gradient_matches_finite_differences_with_position_coupling(void) {
    TinyBatch batch;
    const int starts[TinyBatch::B] = {3, 0};
    for (PEKind pe : {PE_APE, PE_APE_LEARNED, PE_ROPE}) {
        Model m = coupled_model(pe, 0.3f);
        Dropout drop = {0.3f, 1234, 17};
        auto loss = [&] { return model_forward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, drop, 0, {nullptr, starts}); };
        double coupled = loss();
        model_backward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, drop, {nullptr, starts});
        std::vector<double> numeric = numeric_gradient(m.params, loss);
        TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric.data(), m.grads.data(), m.params.size(), PE_NAMES[pe]);
        m.config.position_coupling = false;
        TEST_ASSERT_MESSAGE(loss() != coupled, PE_NAMES[pe]);
    }
}

// --position-coupling's positions, written out by hand for TinyBatch with digits 5, 6 and 7:
// each token at its sequence's start (training's draw: 3 for row 0, 0 for row 1) plus its place
// in its run of digits (1, 2, ...; 0 for a token that is not a digit)
static void test_position_coupling_starts_each_row_at_its_offset(void) {
    TinyBatch batch;
    const int starts[TinyBatch::B] = {3, 0};
    const int expected[TinyBatch::B * TinyBatch::T] = {3, 3, 4, 5, 6, 3, 3,   // 3 4 [5 6 7] 8 9
                                                       0, 0, 1, 2, 0, 0, 0};  // 2 10 [5 5] 1 PAD PAD
    Model m = coupled_model(PE_APE_LEARNED, 0.0f);
    model_forward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, NO_DROPOUT, 0, {nullptr, starts});
    for (int i = 0; i < TinyBatch::B * TinyBatch::T; i++) TEST_ASSERT_EQUAL_INT(expected[i], m.coupled_positions[i]);
}

// --cope-max P clips CoPE's positions at P: the model with a (P + 1, HS) table has the loss of
// the model with the default rows (one per count below max_T) whose rows from P on all equal row P (so the clip, and
// nothing else, differs), and not that of one whose rows past P are its own (so some position
// in the batch did pass P); and its gradient through the clip matches finite differences.
static void test_cope_max_clips_positions_at_its_last_row(void) {
    TinyBatch batch;
    const int P = 2;
    ModelConfig c = tiny_config(PE_COPE, 0.0f);
    c.cope_max = P;
    Model clipped, full;
    init_for_test(&clipped, c, TinyBatch::B, 42);
    init_for_test(&full, tiny_config(PE_COPE, 0.0f), TinyBatch::B, 43);
    const int HS = c.HS(), full_rows = full.config.max_pos();
    TEST_ASSERT_EQUAL_INT((P + 1) * HS, param_numel(c, P_PE_TABLE));
    TEST_ASSERT_GREATER_THAN(P + 1, full_rows);
    for (int id = 0; id < NUM_PARAMS; id++)  // every other tensor alike
        for (int l = 0; id != P_PE_TABLE && l < param_copies(c, id); l++)
            std::copy_n(clipped.param(id, l), param_numel(c, id), full.param(id, l));
    Dropout none = {0, 1, 0};
    auto loss = [&](Model* m) { return model_forward(m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, none); };
    double own_rows = loss(&full);  // full's rows past P: its own random values
    for (int row = 0; row < full_rows; row++)
        std::copy_n(clipped.param(P_PE_TABLE) + std::min(row, P) * HS, HS, full.param(P_PE_TABLE) + row * HS);
    double clipped_loss = loss(&clipped);
    TEST_ASSERT_DOUBLE_WITHIN(1e-12, clipped_loss, loss(&full));
    TEST_ASSERT_MESSAGE(std::fabs(own_rows - clipped_loss) > 1e-6, "no position passed the clip");
    model_backward(&clipped, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, none);
    std::vector<double> numeric = numeric_gradient(clipped.params, [&] { return loss(&clipped); });
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric.data(), clipped.grads.data(), clipped.params.size(), "cope --cope-max 2");
}

// model_backward's loss_tokens divides the summed loss by another count than the batch's own
// (--sort-pool's pools): given twice the batch's count, every gradient is exactly half.
static void test_loss_tokens_divides_the_summed_loss(void) {
    TinyBatch batch;
    Model m;
    init_for_test(&m, tiny_config(PE_T5, 0.0f), TinyBatch::B, 42);
    Dropout none = {0, 1, 0};
    size_t count = std::count_if(batch.targets, batch.targets + TinyBatch::B * TinyBatch::T, [](int t) { return t >= 0; });
    model_forward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, none);
    model_backward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, none);
    std::vector<double> mean = m.grads;
    model_backward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, none, {}, 2 * count);
    TEST_ASSERT_MESSAGE(std::any_of(mean.begin(), mean.end(), [](double g) { return g != 0; }), "no gradient");
    for (size_t i = 0; i < mean.size(); i++) TEST_ASSERT_MESSAGE(2 * m.grads[i] == mean[i], "not half the mean's gradient");
}

// --precision tf32 is the GPU's setting alone: the CPU computes its products in fp32, so a tf32
// model's loss, logits and gradient are an fp32 model's, bit for bit, in either attention (T5's
// bias, dropout on: every product, attention's too, reads its operands as they are)
static void test_tf32_computes_what_fp32_computes_on_the_cpu(void) {
    TinyBatch batch;
    const int B = TinyBatch::B, T = TinyBatch::T;
    Dropout drop = {0.3f, 1234, 17};
    for (AttentionKind attention : {ATTENTION_SIMPLE, ATTENTION_FUSED}) {
        ModelConfig c = tiny_config(PE_T5, 0.3f);
        c.attention = attention;
        Model fp32, tf32;
        init_for_test(&fp32, c, B, 42);
        c.precision = PRECISION_TF32;
        init_for_test(&tf32, c, B, 42);
        double loss = model_forward(&fp32, batch.tokens, batch.targets, B, T, drop);
        TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(0.0, loss, model_forward(&tf32, batch.tokens, batch.targets, B, T, drop), ATTENTION_NAMES[attention]);
        TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, fp32.act(A_LOGITS), tf32.act(A_LOGITS), (size_t)B * T * c.V, ATTENTION_NAMES[attention]);
        model_backward(&fp32, batch.tokens, batch.targets, B, T, drop);
        model_backward(&tf32, batch.tokens, batch.targets, B, T, drop);
        TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, fp32.grads.data(), tf32.grads.data(), fp32.grads.size(), ATTENTION_NAMES[attention]);
    }
}

// The T5 table is shared by every layer: its gradient is the sum of each layer's contribution,
// so a three-layer model's analytic gradient must match the numeric one, which perturbs the
// table in all layers at once; and it must differ from the last layer's part alone.
static void test_t5_bias_grad_sums_over_layers(void) {
    TinyBatch batch;
    Model m;
    model_init(&m, tiny_config(PE_T5, 0.0f, 3), TinyBatch::B, 7);
    auto loss = [&] { return model_forward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, NO_DROPOUT); };
    loss();
    model_backward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, NO_DROPOUT);
    size_t at = m.layout.at(P_PE_TABLE, 0), n = param_numel(m.config, P_PE_TABLE);
    std::vector<double> table(m.params.begin() + at, m.params.begin() + at + n), analytic(m.grads.begin() + at, m.grads.begin() + at + n);
    auto table_loss = [&] { std::copy(table.begin(), table.end(), m.params.begin() + at); return loss(); };
    TEST_ASSERT_TENSOR_CLOSE(FD_ATOL, FD_RTOL, numeric_gradient(table, table_loss).data(), analytic.data(), n, "dtable");
    // layer 0's part alone (the backward runs the layers last to first, so the dscores scratch
    // still holds layer 0's) is not the whole gradient: the other layers add theirs
    const int B = TinyBatch::B, T = TinyBatch::T, NH = m.config.NH;
    std::vector<double> layer0(n, 0), dbias0(NH * T * T, 0);
    pe_bias_plane_backward(dbias0.data(), m.act(A_D_SCORES), 1, B, T, NH);
    pe_bias_backward(layer0.data(), dbias0.data(), m.param(P_PE_TABLE), nullptr, nullptr, m.pe(), 1, T, NH, n);
    double difference = 0;
    for (size_t i = 0; i < n; i++) difference = std::max(difference, std::fabs(layer0[i] - analytic[i]));
    TEST_ASSERT_GREATER_THAN(1e-6, difference);
}

// (with either attention: the fused one's T5 table gradient is summed from partials, too)
// The PEs whose gradient sums run in partials over threads (T5's one bias plane, and a plane per
// row with drawn positions; FIRE's and KERPLE's MLP and kernel; CoPE's gates and table), in
// both attentions, compute the same bits on 1 and 3 threads.
static void test_results_do_not_depend_on_the_number_of_threads(void) {
    TinyBatch batch;
    const int drawn_positions[TinyBatch::B * TinyBatch::T] = {0, 2, 3, 7, 9, 12, 15, 1, 4, 5, 6, 10, 11, 13};
    for (PEKind pe : {PE_T5, PE_FIRE, PE_KERPLE_LOG, PE_COPE})
        for (AttentionKind attention : {ATTENTION_SIMPLE, ATTENTION_FUSED})
            for (bool drawn : {false, true}) {
                if ((attention == ATTENTION_FUSED && pe_has_context_bias(pe)) || (drawn && !pe_reads_positions(pe))) continue;
                std::vector<double> grads[2], logits[2];
                int threads_before = omp_get_max_threads();
                for (int run = 0; run < 2; run++) {
                    omp_set_num_threads(run == 0 ? 1 : 3);
                    ModelConfig c = tiny_config(pe, 0.1f);
                    c.attention = attention, c.random_positions = drawn ? 16 : 0;
                    Model m;
                    init_for_test(&m, c, TinyBatch::B, 3);
                    Dropout drop = {0.1f, 9, 2};
                    TokenPlaces places = {drawn ? drawn_positions : nullptr};
                    model_forward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, drop, 0, places);
                    model_backward(&m, batch.tokens, batch.targets, TinyBatch::B, TinyBatch::T, drop, places);
                    grads[run] = m.grads;
                    logits[run].assign(m.act(A_LOGITS), m.act(A_LOGITS) + TinyBatch::B * TinyBatch::T * m.config.V);
                }
                omp_set_num_threads(threads_before);
                std::string which = std::string(" differ between 1 and 3 threads: ") + PE_NAMES[pe] + ", " + ATTENTION_NAMES[attention] +
                                    " attention" + (drawn ? ", drawn positions" : "");
                TEST_ASSERT_MESSAGE(grads[0] == grads[1], ("gradients" + which).c_str());
                TEST_ASSERT_MESSAGE(logits[0] == logits[1], ("logits" + which).c_str());
            }
}

// changing token t never changes a logit at a position before t
static void test_changing_a_token_never_changes_earlier_logits(void) {
    for (int p = 0; p < NUM_PES; p++) {
        Model m;
        init_for_test(&m, tiny_config((PEKind)p, 0.0f), 1, 5);
        int tokens[8] = {3, 4, 5, 6, 7, 8, 9, 10};
        const int T = 8, V = m.config.V;
        model_forward(&m, tokens, nullptr, 1, T, NO_DROPOUT);
        std::vector<double> before(m.act(A_LOGITS), m.act(A_LOGITS) + T * V);
        for (int t = 1; t < T; t++) {
            int changed[8];
            std::copy(tokens, tokens + T, changed);
            changed[t] = 2;
            model_forward(&m, changed, nullptr, 1, T, NO_DROPOUT);
            const double* after = m.act(A_LOGITS);
            for (int i = 0; i < t * V; i++) TEST_ASSERT_MESSAGE(after[i] == before[i], PE_NAMES[p]);
            bool later_changed = false;
            for (int i = t * V; i < T * V; i++) later_changed |= after[i] != before[i];
            TEST_ASSERT_MESSAGE(later_changed, "a token changed nothing, so the test proves nothing");
        }
    }
}

// A sequence's logits are the same alone and right-padded in a batch, whatever the padding
// holds; so is the loss.
static void test_padding_never_changes_real_logits_or_the_loss(void) {
    for (int p = 0; p < NUM_PES; p++) {
        Model m;
        init_for_test(&m, tiny_config((PEKind)p, 0.0f), 2, 6);
        const int V = m.config.V, T = 8, len = 5;
        int alone[len] = {3, 4, 5, 6, 7}, targets_alone[len] = {-1, -1, 5, 6, 7};
        double loss_alone = model_forward(&m, alone, targets_alone, 1, len, NO_DROPOUT);
        std::vector<double> logits_alone(m.act(A_LOGITS), m.act(A_LOGITS) + len * V);
        for (int filler : {PAD_ID, 9}) {
            int tokens[2 * T], targets[2 * T];
            for (int t = 0; t < T; t++) {
                tokens[t] = t < len ? alone[t] : filler;
                targets[t] = t < len ? targets_alone[t] : -1;
                tokens[T + t] = 2 + t % 5, targets[T + t] = -1;
            }
            double loss = model_forward(&m, tokens, targets, 2, T, NO_DROPOUT);
            TEST_ASSERT_MESSAGE(loss == loss_alone, PE_NAMES[p]);
            TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, logits_alone.data(), m.act(A_LOGITS), len * V, PE_NAMES[p]);
        }
    }
}

// --attention-window L:W: the windowed layer's query sees its W latest tokens as a sequence
// that began there. So with one layer and a PE of distances alone, position i's logits are
// those of the last token of tokens[i-W+1 .. i] run alone (to rounding: RoPE and xPos rotate by
// other angles there, from tables of floats), and the first W positions' those of no window, exactly. With two layers
// a window on the second leaves the first alone; a window as long as the sequence changes nothing.
static void test_a_windowed_layer_sees_its_latest_tokens_as_a_sequence(void) {
    const int T = 8, W = 3;
    int tokens[T] = {3, 4, 5, 9, 2, 7, 7, 10};
    for (PEKind pe : {PE_NOPE, PE_T5, PE_ALIBI, PE_ROPE, PE_XPOS, PE_KERPLE_LOG, PE_KERPLE_POWER, PE_COPE}) {
        ModelConfig c = tiny_config(pe, 0.0f, 1);
        Model whole, windowed;
        init_for_test(&whole, c, 1, 9);
        c.window_from = c.window_to = 0, c.window = W;
        init_for_test(&windowed, c, 1, 9);
        const int V = c.V;
        model_forward(&whole, tokens, nullptr, 1, T, NO_DROPOUT);
        model_forward(&windowed, tokens, nullptr, 1, T, NO_DROPOUT);
        const double *all = whole.act(A_LOGITS), *seen = windowed.act(A_LOGITS);
        TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, all, seen, W * V, PE_NAMES[pe]);
        bool changed = false;
        for (int i = W; i < T; i++) {
            for (int v = 0; v < V; v++) changed |= seen[i * V + v] != all[i * V + v];
            model_forward(&whole, tokens + i - W + 1, nullptr, 1, W, NO_DROPOUT);
            double tolerance = pe_rotates(pe) ? 1e-6 : 1e-12;  // (their tables hold floats: the angles' rounding)
            TEST_ASSERT_TENSOR_CLOSE(tolerance, tolerance, whole.act(A_LOGITS) + (W - 1) * V, windowed.act(A_LOGITS) + i * V, V, PE_NAMES[pe]);
        }
        TEST_ASSERT_MESSAGE(changed, "the window changed no logit, so the test proves nothing");
    }
    // two layers, the second windowed: the first attends as without a window, the second within it
    ModelConfig c = tiny_config(PE_ALIBI, 0.0f);
    Model whole, windowed;
    init_for_test(&whole, c, 1, 10);
    c.window_from = c.window_to = 1, c.window = W;
    init_for_test(&windowed, c, 1, 10);
    model_forward(&whole, tokens, nullptr, 1, T, NO_DROPOUT);
    model_forward(&windowed, tokens, nullptr, 1, T, NO_DROPOUT);
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, whole.act(A_ATT, 0), windowed.act(A_ATT, 0), c.NH * T * T, "layer 0");
    for (int h = 0; h < c.NH; h++)
        for (int i = 0; i < T; i++) {
            const double* row = windowed.act(A_ATT, 1) + (h * T + i) * T;
            double sum = 0;
            for (int j = 0; j <= i; j++) {
                if (j <= i - W) TEST_ASSERT_TRUE(row[j] == 0);
                else TEST_ASSERT_TRUE(row[j] > 0);
                sum += row[j];
            }
            TEST_ASSERT_DOUBLE_WITHIN(1e-12, 1.0, sum);
        }
    // a window as long as the sequence changes nothing
    c.window_from = c.window_to = 0, c.window = T;
    init_for_test(&windowed, c, 1, 10);
    model_forward(&windowed, tokens, nullptr, 1, T, NO_DROPOUT);
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, whole.act(A_LOGITS), windowed.act(A_LOGITS), T * c.V, "a window of T");
}

// L-M:W windows layers L to M alike: with both layers of a model windowed to W tokens, the
// last position reads tokens[T-2W+1 .. T-1] (its own window, and each of those tokens'
// windows below it) and nothing earlier; with the second layer's window alone the first layer
// still brings it the whole prefix.
static void test_windowed_layers_bound_what_a_position_reads(void) {
    const int T = 8, W = 2, reach = 2 * W - 1;
    const int tokens[T] = {3, 4, 5, 9, 2, 7, 7, 10};
    for (PEKind pe : {PE_NOPE, PE_ALIBI, PE_ROPE}) {
        for (int from : {0, 1}) {
            ModelConfig c = tiny_config(pe, 0.0f);
            c.window_from = from, c.window_to = 1, c.window = W;
            Model m;
            init_for_test(&m, c, 1, 12);
            const int V = c.V;
            model_forward(&m, tokens, nullptr, 1, T, NO_DROPOUT);
            std::vector<double> before(m.act(A_LOGITS) + (T - 1) * V, m.act(A_LOGITS) + T * V);
            for (int t = 0; t < T; t++) {
                int changed[T];
                std::copy(tokens, tokens + T, changed);
                changed[t] = tokens[t] == 6 ? 8 : 6;
                model_forward(&m, changed, nullptr, 1, T, NO_DROPOUT);
                const double* after = m.act(A_LOGITS) + (T - 1) * V;
                bool differs = false;
                for (int v = 0; v < V; v++) differs |= after[v] != before[v];
                bool read = from == 1 || t >= T - reach;
                std::string what = std::string(PE_NAMES[pe]) + ", layers " + std::to_string(from) + "-1 windowed: token " + std::to_string(t) +
                                   (read ? " did not change" : " changed") + " the last position's logits";
                TEST_ASSERT_MESSAGE(differs == read, what.c_str());
            }
        }
    }
}

// :sink keeps the sequence's first token in every window: with NoPE, which reads no distance,
// a one-layer model's position i then computes what the first token followed by the window's
// latest W - 1 tokens compute alone. With two layers, the second windowed, its probabilities
// are 0 outside the window and the first key, positive inside, and sum to 1.
static void test_a_window_with_a_sink_keeps_the_first_token(void) {
    const int T = 8, W = 3;
    int tokens[T] = {3, 4, 5, 9, 2, 7, 7, 10};
    ModelConfig c = tiny_config(PE_NOPE, 0.0f, 1);
    Model alone, windowed;
    init_for_test(&alone, c, 1, 13);
    c.window_from = c.window_to = 0, c.window = W, c.window_sink = true;
    init_for_test(&windowed, c, 1, 13);
    model_forward(&windowed, tokens, nullptr, 1, T, NO_DROPOUT);
    const int V = c.V;
    for (int i = W; i < T; i++) {
        int seen[W + 1] = {tokens[0]};
        std::copy(tokens + i - W + 1, tokens + i + 1, seen + 1);
        model_forward(&alone, seen, nullptr, 1, W + 1, NO_DROPOUT);
        TEST_ASSERT_TENSOR_CLOSE(1e-12, 1e-12, alone.act(A_LOGITS) + W * V, windowed.act(A_LOGITS) + i * V, V, "nope");
    }
    ModelConfig two = tiny_config(PE_ALIBI, 0.0f);
    two.window_from = two.window_to = 1, two.window = W, two.window_sink = true;
    Model m;
    init_for_test(&m, two, 1, 14);
    model_forward(&m, tokens, nullptr, 1, T, NO_DROPOUT);
    for (int h = 0; h < two.NH; h++)
        for (int i = 0; i < T; i++) {
            const double* row = m.act(A_ATT, 1) + (h * T + i) * T;
            double sum = 0;
            for (int j = 0; j <= i; j++) {
                if (j > 0 && j <= i - W) TEST_ASSERT_TRUE(row[j] == 0);
                else TEST_ASSERT_TRUE(row[j] > 0);
                sum += row[j];
            }
            TEST_ASSERT_DOUBLE_WITHIN(1e-12, 1.0, sum);
        }
}

// :sink:near biases the kept first token as though it stood just before the window, at
// distance W: with a PE whose bias reads the distance alone, a one-layer model's position i then
// computes what the first token followed by the window's W latest tokens compute alone (there
// the first token is W back). Without :near it keeps its own distance, and other logits.
static void test_a_near_sink_is_biased_as_just_before_the_window(void) {
    const int T = 8, W = 3;
    int tokens[T] = {3, 4, 5, 9, 2, 7, 7, 10};
    for (PEKind pe : {PE_ALIBI, PE_T5, PE_KERPLE_LOG, PE_KERPLE_POWER}) {
        ModelConfig c = tiny_config(pe, 0.0f, 1);
        Model alone, near, far;
        init_for_test(&alone, c, 1, 15);
        c.window_from = c.window_to = 0, c.window = W, c.window_sink = true;
        init_for_test(&far, c, 1, 15);
        c.window_near = true;
        init_for_test(&near, c, 1, 15);
        model_forward(&near, tokens, nullptr, 1, T, NO_DROPOUT);
        model_forward(&far, tokens, nullptr, 1, T, NO_DROPOUT);
        const int V = c.V;
        bool moved = false;
        for (int i = W; i < T; i++) {
            int seen[W + 1] = {tokens[0]};
            std::copy(tokens + i - W + 1, tokens + i + 1, seen + 1);
            model_forward(&alone, seen, nullptr, 1, W + 1, NO_DROPOUT);
            TEST_ASSERT_TENSOR_CLOSE(1e-12, 1e-12, alone.act(A_LOGITS) + W * V, near.act(A_LOGITS) + i * V, V, PE_NAMES[pe]);
            for (int v = 0; v < V; v++) moved |= near.act(A_LOGITS)[i * V + v] != far.act(A_LOGITS)[i * V + v];
        }
        TEST_ASSERT_MESSAGE(moved, "the first token's distance changed no logit, so the test proves nothing");
    }
}

// L:W:prompt windows the prompt's queries alone: in a one-layer model the prompt's logits are
// the windowed model's and the answer's the whole model's, exactly; and greedy decoding with
// the KV cache, told the prompt's length, computes what a full forward told it computes.
static void test_a_prompt_window_windows_the_prompts_queries_alone(void) {
    const int T = 8, W = 2;
    int tokens[T] = {3, 4, 5, 9, 2, 7, 7, 10}, prompt_len = 5;
    ModelConfig c = tiny_config(PE_T5, 0.0f, 1);
    Model whole, windowed, prompt_windowed;
    init_for_test(&whole, c, 1, 11);
    c.window_from = c.window_to = 0, c.window = W;
    init_for_test(&windowed, c, 1, 11);
    c.window_prompt = true;
    init_for_test(&prompt_windowed, c, 1, 11);
    TokenPlaces places;
    places.prompt_lens = &prompt_len;
    model_forward(&whole, tokens, nullptr, 1, T, NO_DROPOUT);
    model_forward(&windowed, tokens, nullptr, 1, T, NO_DROPOUT);
    model_forward(&prompt_windowed, tokens, nullptr, 1, T, NO_DROPOUT, 0, places);
    const int V = c.V, answer = T - prompt_len;
    const double* logits = prompt_windowed.act(A_LOGITS);
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, windowed.act(A_LOGITS), logits, prompt_len * V, "the prompt's queries");
    TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, whole.act(A_LOGITS) + prompt_len * V, logits + prompt_len * V, answer * V, "the answer's");
    bool changed = false;
    for (int i = 0; i < prompt_len * V; i++) changed |= logits[i] != whole.act(A_LOGITS)[i];
    TEST_ASSERT_MESSAGE(changed, "the window changed no logit of the prompt, so the test proves nothing");

    ModelConfig two = tiny_config(PE_ALIBI, 0.1f);
    two.window_from = two.window_to = 1, two.window = W, two.window_prompt = true;
    Model m;
    init_for_test(&m, two, 1, 12);
    model_forward(&m, tokens, nullptr, 1, T, NO_DROPOUT, 0, places);
    std::vector<int> generated = generate_greedy(&m, std::vector<int>(tokens, tokens + prompt_len), EOS_SENTINEL);
    std::vector<int> all(tokens, tokens + prompt_len);
    all.insert(all.end(), generated.begin(), generated.end());
    model_forward(&m, all.data(), nullptr, 1, T, NO_DROPOUT, 0, places);
    for (int t = prompt_len - 1; t + 1 < T; t++) TEST_ASSERT_EQUAL_INT(all[t + 1], argmax(m.act(A_LOGITS) + t * V, V));
}

// greedy decoding's argmax takes the first of equal largest logits, as torch.argmax does
static void test_argmax_takes_the_first_of_equal_largest_values(void) {
    const real x[5] = {1, 3, -2, 3, 2};
    TEST_ASSERT_EQUAL_INT(1, argmax(x, 5));
}

// Incremental positions (t0 > 0, the KV cache) compute what a full forward computes: row for
// row the same arithmetic, so the same bits. Then greedy generation, which is built on them,
// picks at every step the token a full pass over its output picks.
static void check_kv_cache_matches_full_forward(Model* m, const char* label) {
    const int T = m->config.max_T, V = m->config.V, prompt = 3;
    int tokens[8] = {3, 4, 5, 9, 2, 7, 7, 10};
    model_forward(m, tokens, nullptr, 1, T, NO_DROPOUT);
    std::vector<double> full(m->act(A_LOGITS), m->act(A_LOGITS) + T * V);
    model_forward(m, tokens, nullptr, 1, prompt, NO_DROPOUT);
    for (int t = prompt; t <= T; t++) {
        int first = t == prompt ? 0 : t - 1;  // rows this call computed
        TEST_ASSERT_TENSOR_CLOSE(0.0, 0.0, full.data() + first * V, m->act(A_LOGITS) + first * V, (t - first) * V, label);
        if (t < T) model_forward(m, tokens, nullptr, 1, t + 1, NO_DROPOUT, t);
    }

    std::vector<int> all(tokens, tokens + prompt);
    std::vector<int> generated = generate_greedy(m, all, EOS_SENTINEL);
    all.insert(all.end(), generated.begin(), generated.end());
    TEST_ASSERT_EQUAL_INT(T, all.size());  // never hit the sentinel: filled max_T
    model_forward(m, all.data(), nullptr, 1, T, NO_DROPOUT);
    for (int t = prompt - 1; t + 1 < T; t++) TEST_ASSERT_EQUAL_INT_MESSAGE(all[t + 1], argmax(m->act(A_LOGITS) + t * V, V), label);
}

// for every PE, for PE tensors per layer, and for coupled positions, which each call computes
// from the tokens so far
static void test_kv_cache_forward_matches_full_forward(void) {
    for (int p = 0; p < NUM_PES; p++) {
        Model m;
        init_for_test(&m, tiny_config((PEKind)p, 0.1f), 1, 8);
        check_kv_cache_matches_full_forward(&m, PE_NAMES[p]);
    }
    for (PEKind pe : {PE_T5, PE_COPE}) {
        ModelConfig c = tiny_config(pe, 0.1f);
        c.pe_per_layer = true;
        Model m;
        init_for_test(&m, c, 1, 8);
        check_kv_cache_matches_full_forward(&m, (std::string(PE_NAMES[pe]) + " per layer").c_str());
    }
    for (PEKind pe : {PE_APE_LEARNED, PE_ROPE}) {
        ModelConfig c = tiny_config(pe, 0.1f);
        c.position_coupling = true;
        Model m;
        init_for_test(&m, c, 1, 8);
        m.is_digit.assign(c.V, 0);
        for (int digit : {4, 5, 7}) m.is_digit[digit] = 1;
        check_kv_cache_matches_full_forward(&m, (std::string(PE_NAMES[pe]) + "+coupled").c_str());
    }
}

// --precision bf16 decodes with the KV cache as it computes a full pass, in either attention:
// each row's products read the same rounded operands
static void test_kv_cache_forward_matches_full_forward_in_bf16(void) {
    for (AttentionKind attention : {ATTENTION_SIMPLE, ATTENTION_FUSED})
        for (PEKind pe : {PE_NOPE, PE_T5, PE_ROPE}) {
            ModelConfig c = tiny_config(pe, 0.1f);
            c.precision = PRECISION_BF16;
            c.attention = attention;
            Model m;
            init_for_test(&m, c, 1, 8);
            check_kv_cache_matches_full_forward(&m, (std::string(PE_NAMES[pe]) + " bf16 " + ATTENTION_NAMES[attention]).c_str());
        }
}

// ----------------------------------------------------------------------------
// --attention fused

// Rows long enough for several key tiles (ATTENTION_TILE = 32): two rows of 75 random tokens,
// the second padded after 71, with targets on most real tokens. Packed, the second row holds
// sequences starting at 0, 29, 31, 33 and 45: mid-tile, so that some tiles are partly before a
// query's sequence and the last sequence never reads tile 0, and on either side of the tile
// boundary at 32 (one starting at tile 0's last token, one a token into tile 1); drawn positions
// climb by 1 to 3.
struct LongBatch {
    static const int B = 2, T = 75, REAL = 71;
    int tokens[B * T], targets[B * T], counted[B * T], drawn[B * T], starts[B * T];

    LongBatch() {
        Rng rng = rng_stream(5, 6);
        for (int b = 0; b < B; b++)
            for (int t = 0, position = 0; t < T; t++) {
                int at = b * T + t;
                bool real = b == 0 || t < REAL;
                tokens[at] = real ? rng.between(1, 10) : PAD_ID;
                targets[at] = real && rng.below(4) ? rng.between(1, 10) : -1;
                starts[at] = b == 0 ? 0 : t >= REAL ? REAL : t >= 45 ? 45 : t >= 33 ? 33 : t >= 31 ? 31 : t >= 29 ? 29 : 0;
                counted[at] = t - starts[at];
                drawn[at] = position += rng.between(1, 3);
            }
    }
};

// the configuration for LongBatch: tiny_config's model with room for its rows
static ModelConfig long_config(PEKind pe, int L = 2) {
    ModelConfig c = tiny_config(pe, 0.3f, L);
    c.max_T = LongBatch::T;
    return c;
}

// The same model computed with --attention simple and fused: the loss, every logit and every
// parameter's gradient equal to rounding (in double here; the order of the sums differs), and
// the fused model holds none of the (T, T) tensors, only a log-sum-exp a query.
static void check_fused_attention_is_simple_attention(ModelConfig c, const TokenPlaces& places, const std::string& label) {
    LongBatch batch;
    const int B = LongBatch::B, T = LongBatch::T;
    Dropout drop = {0.3f, 1234, 17};
    Model simple, fused;
    init_for_test(&simple, c, B, 42);
    c.attention = ATTENTION_FUSED;
    init_for_test(&fused, c, B, 42);
    double loss = model_forward(&simple, batch.tokens, batch.targets, B, T, drop, 0, places);
    TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(1e-12, loss, model_forward(&fused, batch.tokens, batch.targets, B, T, drop, 0, places), label.c_str());
    TEST_ASSERT_TENSOR_CLOSE(1e-12, 1e-10, simple.act(A_LOGITS), fused.act(A_LOGITS), (size_t)B * T * c.V, label.c_str());
    model_backward(&simple, batch.tokens, batch.targets, B, T, drop, places);
    model_backward(&fused, batch.tokens, batch.targets, B, T, drop, places);
    TEST_ASSERT_TENSOR_CLOSE(REORDERED_ATOL, REORDERED_RTOL, simple.grads.data(), fused.grads.data(), simple.grads.size(), label.c_str());
    for (int id : {A_ATT, A_D_SCORES, A_PE_BIAS, A_D_PE_BIAS}) TEST_ASSERT_EQUAL_INT_MESSAGE(0, fused.acts[id].size(), ACTS[id].name);
    TEST_ASSERT_EQUAL_INT_MESSAGE((size_t)c.L * B * c.NH * T, fused.acts[A_LSE].size(), label.c_str());
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, simple.acts[A_LSE].size(), label.c_str());
}

// for every PE whose bias depends on positions alone (dropout on): rows one sequence each,
// packed rows, drawn positions, and T5 and FIRE with a tensor per layer
static void test_fused_attention_computes_what_simple_attention_computes(void) {
    LongBatch batch;
    for (int p = 0; p < NUM_PES; p++) {
        PEKind pe = (PEKind)p;
        if (pe_has_context_bias(pe)) continue;  // CoPE: fused attention refuses it (test_flags)
        check_fused_attention_is_simple_attention(long_config(pe), TokenPlaces(), PE_NAMES[p]);
        ModelConfig packed = long_config(pe);
        packed.packed = true;
        check_fused_attention_is_simple_attention(packed, {batch.counted, nullptr, batch.starts}, std::string(PE_NAMES[p]) + ", packed");
        if (!pe_reads_positions(pe)) continue;
        ModelConfig drawn = long_config(pe);
        drawn.random_positions = 3 * LongBatch::T + 1;
        check_fused_attention_is_simple_attention(drawn, {batch.drawn}, std::string(PE_NAMES[p]) + ", drawn positions");
    }
    for (PEKind pe : {PE_T5, PE_FIRE}) {
        ModelConfig c = long_config(pe, 3);
        c.pe_per_layer = true;
        check_fused_attention_is_simple_attention(c, TokenPlaces(), std::string(PE_NAMES[pe]) + " per layer");
    }
}

// What fused attention does not compute: a bias from the layer's q and k (CoPE), and the
// windows, which mask through the bias planes
static void test_fused_attention_refuses_what_it_does_not_compute(void) {
    ModelConfig cope = tiny_config(PE_COPE, 0.0f), windowed = tiny_config(PE_T5, 0.0f);
    cope.attention = windowed.attention = ATTENTION_FUSED;
    windowed.window_from = windowed.window_to = 0, windowed.window = 2;
    TEST_ASSERT_THROWS_WITH(validate_model_config(cope), "--attention fused computes each score's bias from the PE alone");
    TEST_ASSERT_THROWS_WITH(validate_model_config(windowed), "--attention-window masks keys through the bias planes");
    windowed.attention = ATTENTION_SIMPLE;
    validate_model_config(windowed);
}

// Decoding with the KV cache in fused attention: each call's rows are computed as a full pass
// computes them, so the same bits
static void test_kv_cache_forward_matches_full_forward_with_fused_attention(void) {
    for (PEKind pe : {PE_NOPE, PE_T5, PE_ALIBI, PE_ROPE, PE_FIRE}) {
        ModelConfig c = tiny_config(pe, 0.1f);
        c.attention = ATTENTION_FUSED;
        Model m;
        init_for_test(&m, c, 1, 8);
        check_kv_cache_matches_full_forward(&m, (std::string(PE_NAMES[pe]) + " fused").c_str());
    }
}

// ----------------------------------------------------------------------------
// attention in bf16

// Attention with --precision bf16 written out in plain loops, one query row at a time, from the
// rules in model.h: r() rounds a product's operand to bf16. Scores r(q_i) . r(k_j) + bias(i, j)
// and their softmax a_j in full precision; out_i = sum_j r(a_j m_j) r(v_j) (m_j: dropout's
// factor). fused: a flash kernel's tile holds exp(s_j - M_t), M_t the largest score of the
// tiles read so far, so that is what is rounded, and the sum is scaled by exp(M_t - M) and
// divided by l = sum_j exp(s_j - M) at the end. Backward: da_j = r(do_i) . r(v_j) m_j,
// D = sum_j a_j da_j (fused: r(do_i) . out_i), ds_j = a_j (da_j - D); dv_j += r(a_j m_j) r(do_i),
// dq_i += r(ds_j) r(k_j), dk_j += r(ds_j) r(q_i), and the PE's parameters from ds_j itself.
struct Bf16Attention {
    std::vector<double> out, dqkv, dparams;
};

static Bf16Attention bf16_attention_written_out(const std::vector<double>& qkv, const std::vector<double>& dout,
                                                const std::vector<double>& params, const PE& pe, const Dropout& drop, uint32_t key, int B,
                                                int T, int C, int NH, bool fused) {
    const int HS = C / NH;
    auto r = [](double x) { return (double)round_to_bf16((float)x); };
    auto q = [&](int b, int t, int h, int d) { return r(qkv[((size_t)b * T + t) * 3 * C + h * HS + d]); };
    auto k = [&](int b, int t, int h, int d) { return r(qkv[((size_t)b * T + t) * 3 * C + C + h * HS + d]); };
    auto v = [&](int b, int t, int h, int d) { return r(qkv[((size_t)b * T + t) * 3 * C + 2 * C + h * HS + d]); };
    auto d_o = [&](int b, int t, int h, int d) { return r(dout[((size_t)b * T + t) * C + h * HS + d]); };
    Bf16Attention got{std::vector<double>(B * T * C, 0), std::vector<double>(qkv.size(), 0), std::vector<double>(params.size(), 0)};
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int i = 0; i < T; i++) {
                std::vector<double> s(i + 1), a(i + 1), factor(i + 1), tile_max(i + 1);
                double M = -INFINITY, l = 0;
                for (int j = 0; j <= i; j++) {
                    s[j] = pe_has_score_bias(pe.kind) ? pe_score_bias(pe, params.data(), h, i, j) : 0;
                    for (int d = 0; d < HS; d++) s[j] += q(b, i, h, d) * k(b, j, h, d);
                    M = std::max(M, s[j]);
                    tile_max[j] = M;  // the largest score up to j, which the tile's end sets for all its keys
                    factor[j] = dropout_factor(drop, key, (((size_t)b * NH + h) * T + i) * T + j);
                }
                for (int j = 0; j <= i; j++) {
                    int tile_end = std::min(i, (j / ATTENTION_TILE + 1) * ATTENTION_TILE - 1);
                    tile_max[j] = tile_max[tile_end];
                }
                for (int j = 0; j <= i; j++) l += std::exp(s[j] - M);
                for (int j = 0; j <= i; j++) a[j] = std::exp(s[j] - M) / l;
                double* o = &got.out[((size_t)b * T + i) * C + h * HS];
                for (int j = 0; j <= i; j++) {
                    double e = fused ? r(std::exp(s[j] - tile_max[j]) * factor[j]) * std::exp(tile_max[j] - M) / l : r(a[j] * factor[j]);
                    for (int d = 0; d < HS; d++) o[d] += e * v(b, j, h, d);
                }
                std::vector<double> da(i + 1, 0);
                double D = 0;
                for (int j = 0; j <= i; j++) {
                    for (int d = 0; d < HS; d++) da[j] += d_o(b, i, h, d) * v(b, j, h, d);
                    da[j] *= factor[j];
                    if (!fused) D += a[j] * da[j];
                }
                if (fused)
                    for (int d = 0; d < HS; d++) D += d_o(b, i, h, d) * o[d];
                for (int j = 0; j <= i; j++) {
                    double ds = a[j] * (da[j] - D);
                    for (int d = 0; d < HS; d++) {
                        got.dqkv[((size_t)b * T + j) * 3 * C + 2 * C + h * HS + d] += r(a[j] * factor[j]) * d_o(b, i, h, d);
                        got.dqkv[((size_t)b * T + i) * 3 * C + h * HS + d] += r(ds) * k(b, j, h, d);
                        got.dqkv[((size_t)b * T + j) * 3 * C + C + h * HS + d] += r(ds) * q(b, i, h, d);
                    }
                    if (!params.empty()) pe_score_bias_backward(pe, params.data(), got.dparams.data(), ds, h, i, j);
                }
            }
    return got;
}

// Both attentions in bf16 compute what the rules above write out (T5's bias, dropout on, rows of
// two key tiles), and the rules are not idle here: fp32 differs from them, and so do simple and
// fused from each other, by the probabilities' rounding
static void test_bf16_attention_rounds_each_products_operands(void) {
    const int B = 2, T = ATTENTION_TILE + 9, C = 8, NH = 2, max_pos = T;
    PETables tables = make_pe_tables(PE_T5, C, NH, 0, max_pos);
    PE pe = pe_view(tables);
    uint32_t key = TEST_DROPOUT.key(SITE_ATTN_PROBS, 0);
    std::vector<double> qkv = random_vector(B * T * 3 * C, 60, 2.0), dout = random_vector(B * T * C, 61);
    std::vector<double> params = pe_params_for_test(PE_T5, C, NH, max_pos, 62);
    auto simple = [&](Precision precision) {
        std::vector<double> bias(NH * T * T), att(B * NH * T * T), dscores(att.size()), dbias(bias.size(), 0);
        Bf16Attention got{std::vector<double>(B * T * C), std::vector<double>(qkv.size(), 0), std::vector<double>(params.size(), 0)};
        pe_bias_forward(bias.data(), params.data(), nullptr, nullptr, pe, 1, T, NH, 0);
        attention_forward(got.out.data(), att.data(), qkv.data(), bias.data(), 1, nullptr, TEST_DROPOUT, key, B, T, C, NH, 0, precision);
        attention_backward(got.dqkv.data(), dscores.data(), dout.data(), qkv.data(), att.data(), nullptr, TEST_DROPOUT, key, B, T, C, NH,
                           precision);
        pe_bias_plane_backward(dbias.data(), dscores.data(), 1, B, T, NH);
        pe_bias_backward(got.dparams.data(), dbias.data(), params.data(), nullptr, nullptr, pe, 1, T, NH, params.size());
        return got;
    };
    auto fused = [&](Precision precision) {
        std::vector<double> lse(B * NH * T);
        Bf16Attention got{std::vector<double>(B * T * C), std::vector<double>(qkv.size(), 0), std::vector<double>(params.size(), 0)};
        attention_fused_forward(got.out.data(), lse.data(), qkv.data(), params.data(), pe, nullptr, nullptr, TEST_DROPOUT, key, B, T, C, NH, 0,
                                precision);
        attention_fused_backward(got.dqkv.data(), got.dparams.data(), dout.data(), qkv.data(), got.out.data(), lse.data(), params.data(),
                                 params.size(), pe, nullptr, nullptr, TEST_DROPOUT, key, B, T, C, NH, precision);
        return got;
    };
    auto largest_gap = [](const std::vector<double>& x, const std::vector<double>& y) {
        double gap = 0;
        for (size_t n = 0; n < x.size(); n++) gap = std::max(gap, std::fabs(x[n] - y[n]));
        return gap;
    };
    for (bool is_fused : {false, true}) {
        const char* name = is_fused ? "fused" : "simple";
        Bf16Attention want = bf16_attention_written_out(qkv, dout, params, pe, TEST_DROPOUT, key, B, T, C, NH, is_fused);
        Bf16Attention got = is_fused ? fused(PRECISION_BF16) : simple(PRECISION_BF16);
        Bf16Attention fp32 = is_fused ? fused(PRECISION_FP32) : simple(PRECISION_FP32);
        TEST_ASSERT_TENSOR_CLOSE(1e-13, 1e-11, want.out.data(), got.out.data(), want.out.size(), (std::string(name) + ": out").c_str());
        TEST_ASSERT_TENSOR_CLOSE(1e-13, 1e-11, want.dqkv.data(), got.dqkv.data(), want.dqkv.size(), (std::string(name) + ": dqkv").c_str());
        TEST_ASSERT_TENSOR_CLOSE(1e-13, 1e-11, want.dparams.data(), got.dparams.data(), want.dparams.size(),
                                 (std::string(name) + ": dparams").c_str());
        TEST_ASSERT_MESSAGE(largest_gap(want.out, fp32.out) > 1e-4, name);
        TEST_ASSERT_MESSAGE(largest_gap(want.dqkv, fp32.dqkv) > 1e-4, name);
    }
    Bf16Attention simple_rules = bf16_attention_written_out(qkv, dout, params, pe, TEST_DROPOUT, key, B, T, C, NH, false);
    Bf16Attention fused_rules = bf16_attention_written_out(qkv, dout, params, pe, TEST_DROPOUT, key, B, T, C, NH, true);
    TEST_ASSERT_TRUE(largest_gap(simple_rules.out, fused_rules.out) > 1e-6);
    TEST_ASSERT_TRUE(largest_gap(simple_rules.dqkv, fused_rules.dqkv) > 1e-6);
}

// The GPU's layout (model.cuh) starts every tensor at a multiple of 32 floats, where the host's
// packs them: with FIRE's odd-sized tensor shared or per layer, and C = 20 (C * C = 400, not a
// multiple of 32) and C = 10 (neither C * C = 100 nor 2 C * C = 200 is: an aligned wk or wv
// would each leave a gap), every copy of every tensor sits at such a multiple but wk and wv,
// which follow wq with no gap (one (3C, C) matrix, which one product reads), no two overlap,
// and the packed layout has no gap (checkpoints hold exactly the parameters). F = 90: w2, each
// layer's last tensor, ends off a multiple of 32 (C = 20 and 10), so the layer's block is padded
static void test_aligned_layouts_align_every_tensor_and_packed_ones_leave_no_gap(void) {
    for (int C : {48, 20, 10})
        for (bool per_layer : {false, true}) {
            ModelConfig c{3, C, C % 4 ? 2 : 4, 90, 19, 20, PE_FIRE, 0.25f, 0.0f};
            c.pe_per_layer = per_layer;
            TEST_ASSERT(param_numel(c, P_PE_TABLE) % 32 != 0);  // the case that needs the padding
            for (size_t align : {(size_t)1, (size_t)32}) {
                Layout layout = make_layout(c, align);
                for (int l = 0; l < c.L; l++) {
                    TEST_ASSERT(layout.at(P_WK, l) == layout.at(P_WQ, l) + (size_t)C * C);
                    TEST_ASSERT(layout.at(P_WV, l) == layout.at(P_WK, l) + (size_t)C * C);
                }
                std::vector<std::pair<size_t, size_t>> spans;  // [start, end) of every copy of every tensor
                size_t numel = 0;
                for (int id = 0; id < NUM_PARAMS; id++)
                    for (int l = 0; l < param_copies(c, id); l++) {
                        size_t at = layout.at(id, l), n = param_numel(c, id);
                        if (n == 0) continue;
                        if (id != P_WK && id != P_WV) TEST_ASSERT(at % align == 0);
                        spans.push_back({at, at + n});
                        numel += n;
                    }
                std::sort(spans.begin(), spans.end());
                for (size_t k = 1; k < spans.size(); k++) TEST_ASSERT(spans[k - 1].second <= spans[k].first);
                TEST_ASSERT(spans.back().second <= layout.total);
                if (align == 1) TEST_ASSERT(layout.total == numel);
                else TEST_ASSERT(layout.total > numel);
            }
        }
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_rmsnorm_backward_matches_finite_differences);
    RUN_TEST(test_matmul_forward_matches_the_formula);
    RUN_TEST(test_matmul_backward_adds_into_its_gradients);
    RUN_TEST(test_dot_sums_in_lanes_added_pairwise);
    RUN_TEST(test_rmsnorm_adds_t5s_epsilon_to_the_mean_square);
    RUN_TEST(test_dropout_scales_what_it_keeps_by_one_over_one_minus_p);
    RUN_TEST(test_logits_are_the_final_norm_times_the_tied_embedding_over_sqrt_c);
    RUN_TEST(test_attention_softmax_stays_finite_for_large_scores);
    RUN_TEST(test_attention_softmax_stays_finite_for_large_negative_scores);
    RUN_TEST(test_matmul_backward_matches_finite_differences);
    RUN_TEST(test_round_to_bf16_rounds_to_nearest_even);
    RUN_TEST(test_bf16_products_read_every_operand_rounded);
    RUN_TEST(test_embedding_backward_matches_finite_differences);
    RUN_TEST(test_abacus_backward_matches_finite_differences);
    RUN_TEST(test_dropout_and_relu_dropout_backward_match_finite_differences);
    RUN_TEST(test_dropout_keys_list_every_site_once);
    RUN_TEST(test_crossentropy_backward_matches_finite_differences);
    RUN_TEST(test_crossentropy_stays_finite_for_large_logits);
    RUN_TEST(test_sum_of_squares_counts_every_value_of_every_chunk);
    RUN_TEST(test_rotation_backward_matches_finite_differences);
    RUN_TEST(test_cope_row_backward_matches_finite_differences);
    RUN_TEST(test_attention_backward_matches_finite_differences_for_every_pe);
    RUN_TEST(test_dropout_masks_are_fresh_per_step_site_and_layer_and_drop_p);
    RUN_TEST(test_model_gradient_matches_finite_differences_for_every_pe);
    RUN_TEST(test_model_gradient_matches_finite_differences_with_pe_per_layer);
    RUN_TEST(test_pe_per_layer_with_equal_tensors_is_the_shared_model);
    RUN_TEST(test_packed_rows_compute_what_the_padded_batch_computes);
    RUN_TEST(test_model_gradient_matches_finite_differences_with_packed_rows);
    RUN_TEST(test_model_gradient_matches_finite_differences_with_abacus);
    RUN_TEST(test_model_gradient_matches_finite_differences_with_position_coupling);
    RUN_TEST(test_position_coupling_starts_each_row_at_its_offset);
    RUN_TEST(test_cope_max_clips_positions_at_its_last_row);
    RUN_TEST(test_loss_tokens_divides_the_summed_loss);
    RUN_TEST(test_tf32_computes_what_fp32_computes_on_the_cpu);
    RUN_TEST(test_t5_bias_grad_sums_over_layers);
    RUN_TEST(test_aligned_layouts_align_every_tensor_and_packed_ones_leave_no_gap);
    RUN_TEST(test_results_do_not_depend_on_the_number_of_threads);
    RUN_TEST(test_changing_a_token_never_changes_earlier_logits);
    RUN_TEST(test_padding_never_changes_real_logits_or_the_loss);
    RUN_TEST(test_a_windowed_layer_sees_its_latest_tokens_as_a_sequence);
    RUN_TEST(test_windowed_layers_bound_what_a_position_reads);
    RUN_TEST(test_a_window_with_a_sink_keeps_the_first_token);
    RUN_TEST(test_a_near_sink_is_biased_as_just_before_the_window);
    RUN_TEST(test_a_prompt_window_windows_the_prompts_queries_alone);
    RUN_TEST(test_argmax_takes_the_first_of_equal_largest_values);
    RUN_TEST(test_kv_cache_forward_matches_full_forward);
    RUN_TEST(test_kv_cache_forward_matches_full_forward_in_bf16);
    RUN_TEST(test_fused_attention_computes_what_simple_attention_computes);
    RUN_TEST(test_fused_attention_refuses_what_it_does_not_compute);
    RUN_TEST(test_kv_cache_forward_matches_full_forward_with_fused_attention);
    RUN_TEST(test_bf16_attention_rounds_each_products_operands);
    return UNITY_END();
}
