// Theorem 1 of Kazemnejad et al. (2023), built by hand and checked: a NoPE transformer's first
// layer can write the absolute position of EVERY token into its hidden state, and a later layer
// can use it to attend by relative position. The weights are constructed as in the proof (here
// in this repository's model: pre-norm RMSNorm, no biases, causal softmax attention without
// 1/sqrt(HS), ReLU feed-forward), then model_forward of model.h runs them, in double precision.
//
// Why the proof needs a distinguished first token (<bos>), and what it gives every later token:
//
//   Set W_Q = W_K = 0. Every score is then 0, so causal attention at position t is the plain
//   average over the t + 1 tokens 0..t. Let the value vector be 1 in one coordinate for <bos>
//   and 0 for every other token. The average of that coordinate at position t is then exactly
//   1 / (t + 1): one marker among t + 1 tokens. So every token, not only <bos>, learns its
//   position, by counting how diluted the one marker has become. <bos> is needed because the
//   marker must appear exactly once, at the start, in every sequence: with a task word as the
//   marker, a prompt that repeats the word (copy does) or lacks it would shift the count. The
//   paper's own models had no <bos>; SCAN's and PCFG's prompts begin with "Solve:", which then
//   serves as one, and `--bos` (README) gives every task one.
//
//   The feed-forward layer then turns 1 / (t + 1) into t + 1 (and (t + 1)^2). A ReLU network
//   can compute any function exactly on finitely many inputs by linear interpolation between
//   them, here the points 1/1, 1/2, ..., 1/N: N hidden units recover every position up to N.
//   That is as far as the construction reaches: positions past N are extrapolated, not exact.
//
// Two details of this model: RMSNorm rescales each position's vector by its own factor, and
// nothing has a bias. Both are met by working with ratios. A ReLU layer without biases is
// positively homogeneous (f(s x) = s f(x) for s > 0), so the hidden state at t holds
//     Q = s_t,   P = s_t (t + 1),   P2 = s_t (t + 1)^2
// for some unknown s_t > 0: the position is P / Q, whatever RMSNorm did. The second test's
// relative head scores key j from query t as -lambda K_t K_j ((t + 1) - 1 - (j + 1))^2 with
// positive K's: zero at j = t - 1 and negative everywhere else, so the unknown scales can not
// move the maximum.
#define MODEL_REAL double
#include "model.h"
#include "test/unity.h"

static const int VOCAB = 8;      // <bos> and 7 words
static const int LONGEST = 1000;  // positions 1..1000 recovered: 50 times copy's longest training length
static const double BETA = 1.0;   // the constant coordinate's value (any positive value works)

// the model's coordinates, one meaning each
enum Coordinate {
    TOKEN = 0,               // TOKEN + id: one-hot of the token (id 0 is <bos>)
    CONSTANT = VOCAB,        // BETA in every embedding: what the feed-forward layer measures against
    MARKER,                  // layer 1's attention output: 1 / (t + 1), times the embeddings' RMSNorm scale
    POS_ONE,                 // layer 1's feed-forward output: s_t
    POS,                     //                                 s_t (t + 1)
    POS_SQUARED,             //                                 s_t (t + 1)^2
    PREVIOUS,                // PREVIOUS + id: layer 2's attention output, the one-hot of token t - 1
    WIDTH = PREVIOUS + VOCAB
};
static const int BOS = 0;

// W[out][in] of a parameter tensor (row-major (out, in): a layer computes y = x W^T)
static double& weight(Model* m, int id, int layer, int out, int in) {
    return m->param(id, layer)[(size_t)out * dim_size(m->config, PARAMS[id].cols) + in];
}

// One layer's feed-forward weights that map the ratio r = MARKER / CONSTANT of their input,
// which is s0 / (BETA p) at position p (1-based), to POS_ONE, POS and POS_SQUARED: c, c p, c p^2
// with c the input's CONSTANT coordinate. Hidden unit 0 passes c, unit 1 passes u = MARKER, and
// unit 1 + i is relu(a_i c - u) for the interior knots a_i: the linear interpolation g through
// the points (a_i, f(a_i)), made homogeneous by writing c g(u / c). (Its terms switch on from
// the largest ratio, position 1, down: early positions sum few terms, late ones large values,
// so rounding stays below 1e-9 of the value everywhere.)
static void set_position_feed_forward(Model* m, double s0) {
    std::vector<double> knot(LONGEST);  // ascending: knot[i] is the ratio at position LONGEST - i
    for (int i = 0; i < LONGEST; i++) knot[i] = s0 / (BETA * (LONGEST - i));
    weight(m, P_W1, 0, 0, CONSTANT) = 1;
    weight(m, P_W1, 0, 1, MARKER) = 1;
    for (int i = 1; i < LONGEST - 1; i++) weight(m, P_W1, 0, 1 + i, MARKER) = -1, weight(m, P_W1, 0, 1 + i, CONSTANT) = knot[i];
    weight(m, P_W2, 0, POS_ONE, 0) = 1;
    for (int power = 1; power <= 2; power++) {
        int out = power == 1 ? POS : POS_SQUARED;
        auto f = [&](int i) { return pow(LONGEST - i, power); };  // the value at knot i
        auto slope = [&](int i) { return (f(i + 1) - f(i)) / (knot[i + 1] - knot[i]); };
        // with n = LONGEST - 1, the last knot (position 1):
        // c g(u/c) = (f_n - m_{n-1} a_n) c + m_{n-1} u + sum_i (m_i - m_{i-1}) relu(a_i c - u), exact for u/c <= a_n
        int n = LONGEST - 1;
        weight(m, P_W2, 0, out, 0) = f(n) - slope(n - 1) * knot[n];
        weight(m, P_W2, 0, out, 1) = slope(n - 1);
        for (int i = 1; i < LONGEST - 1; i++) weight(m, P_W2, 0, out, 1 + i) = slope(i) - slope(i - 1);
    }
}

// Layer 1 as in the proof: uniform causal attention whose value marks <bos> alone, then the
// feed-forward layer above. RMSNorm weights are 1, every other weight 0 unless set.
static void build_position_layer(Model* m) {
    for (int id = 0; id < VOCAB; id++) weight(m, P_WTE, 0, id, TOKEN + id) = 1, weight(m, P_WTE, 0, id, CONSTANT) = BETA;
    weight(m, P_WV, 0, MARKER, TOKEN + BOS) = 1;  // W_Q = W_K = 0: all scores 0, attention is the mean
    weight(m, P_WO, 0, MARKER, MARKER) = 1;
    // every embedding has the same norm, so RMSNorm scales them all by s0
    double s0 = 1 / sqrt((BETA * BETA + 1) / WIDTH + RMSNORM_EPS);
    set_position_feed_forward(m, s0);
}

// Layer 2: a head that attends from t to t - 1 using only the positions layer 1 wrote, and
// copies that token's one-hot to PREVIOUS. With (Q, P, P2) = K (1, p, p^2) at each position,
//   query = -lambda (P2 - 2P + Q,  2Q - 2P,  Q)   and   key = (Q, P, P2)
// give q.k = -lambda K_t K_j (p_j - (p_t - 1))^2.
static void build_previous_token_layer(Model* m, double lambda) {
    const int d[3] = {POS_ONE, POS, POS_SQUARED};  // the three coordinates queries and keys use
    weight(m, P_WQ, 1, d[0], POS_SQUARED) = -lambda, weight(m, P_WQ, 1, d[0], POS) = 2 * lambda, weight(m, P_WQ, 1, d[0], POS_ONE) = -lambda;
    weight(m, P_WQ, 1, d[1], POS_ONE) = -2 * lambda, weight(m, P_WQ, 1, d[1], POS) = 2 * lambda;
    weight(m, P_WQ, 1, d[2], POS_ONE) = -lambda;
    for (int k = 0; k < 3; k++) weight(m, P_WK, 1, d[k], d[k]) = 1;
    for (int id = 0; id < VOCAB; id++) weight(m, P_WV, 1, PREVIOUS + id, TOKEN + id) = 1, weight(m, P_WO, 1, PREVIOUS + id, PREVIOUS + id) = 1;
}

// a two-layer NoPE model (one head, width WIDTH) with every weight 0 and RMSNorm weights 1
static void blank_model(Model* m) {
    ModelConfig c{2, WIDTH, 1, LONGEST, VOCAB, LONGEST, PE_NOPE, 0.25f, 0.0f};
    model_init(m, c, 1, 1);
    std::fill(m->params.begin(), m->params.end(), 0);
    for (int l = 0; l < 2; l++)
        for (int id : {P_LN1, P_LN2}) std::fill(m->param(id, l), m->param(id, l) + WIDTH, 1);
}

// <bos>, then LONGEST - 1 words drawn at random (repeats included, as in copy)
static std::vector<int> random_sequence(uint64_t seed) {
    Rng rng{seed};
    std::vector<int> tokens = {BOS};
    while ((int)tokens.size() < LONGEST) tokens.push_back(rng.between(1, VOCAB - 1));
    return tokens;
}

static void test_the_first_layer_recovers_the_position_of_every_token(void) {
    Model m;
    blank_model(&m);
    build_position_layer(&m);
    std::vector<int> tokens = random_sequence(1);
    model_forward(&m, tokens.data(), nullptr, 1, LONGEST, NO_DROPOUT);
    const double* h = m.act(A_RES_IN, 1);  // the hidden state after layer 1
    double worst = 0;
    for (int t = 0; t < LONGEST; t++) {
        const double* x = h + (size_t)t * WIDTH;
        TEST_ASSERT_GREATER_THAN(0, x[POS_ONE]);
        worst = std::max(worst, fabs(x[POS] / x[POS_ONE] - (t + 1)) / (t + 1));
        worst = std::max(worst, fabs(x[POS_SQUARED] / x[POS_ONE] - (double)(t + 1) * (t + 1)) / ((double)(t + 1) * (t + 1)));
    }
    TEST_ASSERT_LESS_THAN(1e-9, worst);  // relative error at every position, for p and p^2
    TEST_MESSAGE("largest relative error of the recovered position over " + std::to_string(LONGEST) + " tokens: " + std::to_string(worst));
}

// the same weights recover positions in any sequence: they depend on <bos> at the start only
static void test_the_recovered_position_does_not_depend_on_the_words(void) {
    Model m;
    blank_model(&m);
    build_position_layer(&m);
    std::vector<double> first;
    for (uint64_t seed : {2, 3}) {
        std::vector<int> tokens = random_sequence(seed);
        if (seed == 3) std::fill(tokens.begin() + 1, tokens.end(), 5);  // one word repeated: copy's worst case
        model_forward(&m, tokens.data(), nullptr, 1, LONGEST, NO_DROPOUT);
        std::vector<double> ratio(LONGEST);
        for (int t = 0; t < LONGEST; t++) ratio[t] = m.act(A_RES_IN, 1)[(size_t)t * WIDTH + POS] / m.act(A_RES_IN, 1)[(size_t)t * WIDTH + POS_ONE];
        if (first.empty()) first = ratio;
        else TEST_ASSERT_TENSOR_CLOSE(1e-9, 1e-12, first.data(), ratio.data(), LONGEST, "positions from another sequence");
    }
}

// Without <bos>, the marker is gone and the construction says nothing: every position reads
// the same value (the interpolation's extension to a ratio of 0, below its grid), whatever its
// place, which is why the proof needs the first token.
static void test_without_bos_the_first_layer_learns_nothing_of_position(void) {
    Model m;
    blank_model(&m);
    build_position_layer(&m);
    std::vector<int> tokens = random_sequence(4);
    tokens[0] = 3;  // a word where <bos> was
    model_forward(&m, tokens.data(), nullptr, 1, LONGEST, NO_DROPOUT);
    const double* first = m.act(A_RES_IN, 1);
    for (int t = 0; t < LONGEST; t++) {
        const double* x = first + (size_t)t * WIDTH;
        TEST_ASSERT_DOUBLE_WITHIN(1e-9, 0.0, x[MARKER]);
        TEST_ASSERT_GREATER_THAN(0, x[POS_ONE]);
        // the position read is position 0's at every t
        TEST_ASSERT_DOUBLE_WITHIN(1e-9 * first[POS] / first[POS_ONE], first[POS] / first[POS_ONE], x[POS] / x[POS_ONE]);
    }
}

// Layer 2 on top: every token attends to the one before it (probability above 0.99, the
// largest score at exactly t - 1 for all 999 positions) and copies it: an induction-style
// "previous token" head, made from absolute positions alone.
static void test_a_later_layer_attends_by_relative_position(void) {
    Model m;
    blank_model(&m);
    build_position_layer(&m);
    build_previous_token_layer(&m, 1e20);
    std::vector<int> tokens = random_sequence(5);
    model_forward(&m, tokens.data(), nullptr, 1, LONGEST, NO_DROPOUT);
    const double* att = m.act(A_ATT, 1);  // (T, T): row t, the query's probabilities over keys 0..t
    const double* out = m.act(A_RES_OUT);
    double weakest = 1;
    for (int t = 1; t < LONGEST; t++) {
        const double* row = att + (size_t)t * LONGEST;
        TEST_ASSERT_EQUAL_INT_MESSAGE(t - 1, std::max_element(row, row + t + 1) - row, ("query " + std::to_string(t)).c_str());
        weakest = std::min(weakest, row[t - 1]);
        const double* copied = out + (size_t)t * WIDTH + PREVIOUS;
        TEST_ASSERT_EQUAL_INT_MESSAGE(tokens[t - 1], std::max_element(copied, copied + VOCAB) - copied, ("copied at " + std::to_string(t)).c_str());
    }
    TEST_ASSERT_GREATER_THAN(0.99, weakest);
    TEST_MESSAGE("smallest attention on t - 1: " + std::to_string(weakest));
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_the_first_layer_recovers_the_position_of_every_token);
    RUN_TEST(test_the_recovered_position_does_not_depend_on_the_words);
    RUN_TEST(test_without_bos_the_first_layer_learns_nothing_of_position);
    RUN_TEST(test_a_later_layer_attends_by_relative_position);
    return UNITY_END();
}
