/*
 pe.h: the positional encodings under test, each defined here and nowhere else.

 The model (model.h) and the CUDA kernels never ask which PE is in use; they call five hooks,
 and a hook does nothing for a PE that does not act there (the context hook, which needs the
 layer's q and k, is called only where pe_has_context_bias says a PE has one):
   input    pe_input(pe, params, pos, c)            added to channel c of the token embedding
   q and k  pe_rotate(pe, x, pos, direction, qk)    rotates (and xPos scales) one head's q or k
   scores   pe_score_bias(pe, params, h, i, j)      added to the score q_i . k_j (i, j positions)
   context  cope_bias_row(bias, logits, z, n, npos) added to the scores of one query, from its
                                                    q . k and q . table (CoPE: not from positions)
   learned  pe_init_params / *_backward             the PE's own parameters: made, and their
                                                    gradient taken, here
 `pe` is a PE: the kind plus tables of everything computed from positions alone (sinusoids,
 slopes, buckets, angles), made once by make_pe_tables() so the hooks are lookups. `params` is
 the PE's learned tensor (the `pe_table` row of model.h's parameter table): one flat array
 whose length and layout each PE defines below, shared by every layer, or with --pe-per-layer
 one such array for each layer (for the PEs whose learned values act in attention).

                 input          q and k             scores                        learned
   nope          -              -                   -                             -
   ape           sin ‖ cos      -                   -                             -
   t5            -              -                   table[bucket(i - j)][h]       (32, NH) table
   alibi         -              -                   -slope_h (i - j)              -
   rope          -              rotate pairs        -                             -
   ape_learned   table[pos]     -                   -                             (max_pos, C)
   xpos          -              rotate and scale    -                             -
   kerple_log    -              -                   -r1_h log(1 + r2_h (i - j))   (2, NH)
   kerple_power  -              -                   -r1_h (i - j)^r2_h            (2, NH)
   fire          -              -                   mlp_h(psi(i-j) / psi(max(L,i)))  MLP, c, L
   cope          -              -                   q_i . e(sum_{t=j..i} gate_it)  (max_pos, HS)

 Positions count from 0 at the first real token of a sequence (sequences are right-padded, so
 padding never shifts them), unless training draws them at random (--random-positions). Every
 table covers positions 0 .. max_pos-1. Adding a PE means: a PEKind, a row in PE_NAMES, its
 tables or parameters, and its cases in the hooks below.
 The paper's five follow the paper's released code; the later ones follow their papers, with
 the choices noted at each.
*/
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "common.h"

enum PEKind { PE_NOPE, PE_APE, PE_T5, PE_ALIBI, PE_ROPE, PE_APE_LEARNED, PE_XPOS, PE_KERPLE_LOG, PE_KERPLE_POWER, PE_FIRE, PE_COPE, NUM_PES };
static const char* const PE_NAMES[NUM_PES] = {"nope", "ape", "t5", "alibi", "rope", "ape_learned", "xpos", "kerple_log", "kerple_power", "fire", "cope"};
static const int NUM_PAPER_PES = 5;  // the paper's five come first

inline bool pe_rotates(PEKind k) { return k == PE_ROPE || k == PE_XPOS; }
inline bool pe_has_score_bias(PEKind k) { return k == PE_T5 || k == PE_ALIBI || k == PE_KERPLE_LOG || k == PE_KERPLE_POWER || k == PE_FIRE; }
inline bool pe_has_context_bias(PEKind k) { return k == PE_COPE; }
inline bool pe_reads_positions(PEKind k) { return k != PE_NOPE && k != PE_COPE; }
// learned values that shape the attention scores: what --pe-per-layer gives each layer a copy of
inline bool pe_attention_has_params(PEKind k) { return k == PE_T5 || k == PE_KERPLE_LOG || k == PE_KERPLE_POWER || k == PE_FIRE || k == PE_COPE; }

// ----------------------------------------------------------------------------
// APE: fixed sinusoids added to the input, the sin half and the cos half concatenated (not
// interleaved): p[pos][c] = sin(pos * w_c) for c < C/2, cos(pos * w_(c - C/2)) after, with
// w_k = 10000^(-2k / C).

static const double APE_BASE = 10000.0;

HD inline float ape_value(int pos, int c, int C) {
    int half = C / 2, k = c < half ? c : c - half;
    double angle = pos * pow(APE_BASE, -2.0 * k / C);
    return (float)(c < half ? sin(angle) : cos(angle));
}

// Learned APE (GPT-2's wpe): a free (max_pos, C) table added to the input. Rows of positions no
// training sequence reached keep their initial values, which is what such a table does in
// practice. Drawn with std 1/sqrt(2), the root mean square of the sinusoids it replaces.
static const double APE_LEARNED_STD = 0.7071067811865476;

// ----------------------------------------------------------------------------
// T5 relative bias: one learned scalar per (bucket, head), buckets of the causal distance
// n = i - j >= 0: exact for n < 16, then buckets 16-30 log-spaced over 16-112, and bucket 31
// from 113 on (HF's max_distance 128 is where the log scale would reach bucket 32). The table
// lives once (layer 0 in the paper) and every layer reuses it.

static const int T5_NUM_BUCKETS = 32;   // HF T5 relative_attention_num_buckets
static const int T5_MAX_DISTANCE = 128;  // HF 4.16 relative_attention_max_distance

HD inline int t5_bucket(int distance) {
    const int exact = T5_NUM_BUCKETS / 2;
    if (distance < exact) return distance;
    // 16 + floor(ln(n/16) / ln(128/16) * 16); in double, so no bucket boundary is ever rounded
    // across (the only integer boundaries are n = 16 and n = 128, where the value is exact)
    int bucket = exact + (int)(log((double)distance / exact) / log((double)T5_MAX_DISTANCE / exact) * (T5_NUM_BUCKETS - exact));
    return bucket < T5_NUM_BUCKETS - 1 ? bucket : T5_NUM_BUCKETS - 1;
}

// ----------------------------------------------------------------------------
// ALiBi: bias -slope_h * (i - j), fixed. Slopes (Press et al. 2022): with P the largest power of
// two <= NH, head h < P gets 2^(-8(h+1)/P); the other NH - P heads get every other slope of the
// 2P-head sequence, starting from its first: 2^(-8(2k+1)/(2P)). 12 heads: 2^-1 .. 2^-8, then
// 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.

HD inline float alibi_slope(int h, int NH) {
    int P = 1;
    while (2 * P <= NH) P *= 2;
    double exponent = h < P ? 8.0 * (h + 1) / P : 8.0 * (2 * (h - P) + 1) / (2 * P);
    return (float)pow(2.0, -exponent);
}

// ----------------------------------------------------------------------------
// KERPLE (Chi et al. 2022): a learned, conditionally positive definite kernel of the distance,
// two positive scalars per head: log  -r1 log(1 + r2 n),  power  -r1 n^r2 with r2 <= 2.
// Row 0 of the (2, NH) parameters is r1, row 1 is r2, drawn uniformly as the official code
// draws them: the log variant's r1 from (0, 2) and r2 from (0, 1), the power variant's the other
// way round. As in the official code, one pair per head serves every layer (--pe-per-layer: a
// pair per layer).
// The official code keeps each value at least 0.01 (and power's r2 at most 2) by clamping the
// stored value in place before each forward, outside autograd: the gradient reaches a value at
// its bound, and the update moves it from there. So here: every read clamps (kerple_read), the
// gradient is taken at the value read, and before each update the stored values are clamped
// (pe_keep_params_in_range, from model.h's adamw_update). A clamp at the read alone would pass no
// gradient to a value past its bound, which then never came back (so it was until 2026-11-28).

static const double KERPLE_MIN = 0.01, KERPLE_MAX_POWER = 2.0;

HD inline double kerple_read(PEKind k, int row, double value) {
    return value < KERPLE_MIN ? KERPLE_MIN : k == PE_KERPLE_POWER && row == 1 && value > KERPLE_MAX_POWER ? KERPLE_MAX_POWER : value;
}

// ----------------------------------------------------------------------------
// FIRE (Li et al. 2024): bias_h(i, j) = mlp_h(u), u = psi(i - j) / psi(max(L, i)),
// psi(x) = log(c x + 1); the MLP is 1 -> 32 -> NH with a ReLU. c > 0 and the threshold L are
// learned: c = |c'|, L = |m| * 512 with m starting at 1 (the reference code's L_multiplier over
// its initial 512). The normalised distance u stays in [0, 1] at any length: longer inputs are
// squeezed into the trained range ("progressive interpolation") once i passes L. One MLP serves
// every layer, as T5's table does (--pe-per-layer: one per layer). Init as torch's nn.Linear
// (uniform, +-1/sqrt(fan_in)). The reference code adds 1e-6 to psi's denominator; here nothing,
// so the denominator is 0 only at c' = 0 exactly, which a step's non-finite gradient then stops.
// Parameters, flat: w1 (32) | b1 (32) | w2 (NH, 32) | b2 (NH) | c' | m. b2 (the output layer's
// bias, as nn.Linear has one) adds the same to every score of a head's row, which the softmax
// cancels: it changes nothing the model computes, and its gradient is 0 but for rounding.

static const int FIRE_HIDDEN = 32;
static const double FIRE_C_INIT = 0.1, FIRE_L_UNIT = 512.0;

struct FireLayout {
    int w1, b1, w2, b2, c, m, total;
};
HD inline FireLayout fire_layout(int NH) {
    const int H = FIRE_HIDDEN;
    return {0, H, 2 * H, 2 * H + NH * H, 2 * H + NH * H + NH, 2 * H + NH * H + NH + 1, 2 * H + NH * H + NH + 2};
}

// u and its derivatives by c and by L (0 where max(L, i) is i)
struct FireInput {
    double u, du_dc, du_dL;
};
template <typename real>
HD inline FireInput fire_normalised_distance(const real* params, int NH, int i, int j) {
    FireLayout at = fire_layout(NH);
    double c = fabs((double)params[at.c]), L = fabs((double)params[at.m]) * FIRE_L_UNIT;
    int n = i - j;
    if (n == 0) return {0, 0, 0};  // psi(0) = 0 (and i may be 0, where psi(max(L, i)) can be too)
    double M = L > i ? L : i, num = log(c * n + 1), den = log(c * M + 1);
    double dnum_dc = n / (c * n + 1), dden_dc = M / (c * M + 1);
    return {num / den, (dnum_dc * den - num * dden_dc) / (den * den), L > i ? -num * (c / (c * L + 1)) / (den * den) : 0};
}

// ----------------------------------------------------------------------------
// CoPE (Golovneva et al. 2024): contextual positions, counted in the keys a query finds relevant
// rather than in tokens. Query i gates each key j <= i, g_ij = sigmoid(q_i . k_j), and key j's
// position as seen from i is the number of gates open from j up to i: p_ij = sum_{t=j..i} g_it.
// The score gains q_i . e(p_ij), e a learned (max_pos, HS) table interpolated linearly between
// rows floor(p) and floor(p) + 1, p clamped to max_pos - 1: by default max_pos = max_T, a row
// for every count up to max_T - 1 (a count past it, which needs nearly every gate of a longest
// sequence open, reads the last row), or with --cope-max P the paper's clip at p_max = P
// (max_pos = P + 1), so that counts longer than training's read the rows training made. Since
// p only sums gates, a model can count words, digits or sentences as easily as tokens, and no
// table row past the counts it saw in training need ever be read. As the paper: zero init, one table for all
// heads, gates from the plain score q . k (this model's scores are not scaled by 1/sqrt(HS)).
// Unlike the paper, which gives each layer a table, one table serves every layer, as T5's and
// FIRE's do, unless --pe-per-layer gives each layer its own.

template <typename real>
HD inline double cope_gate(real logit) { return 1 / (1 + exp(-(double)logit)); }

// where position p reads the table: rows f and f + 1 with weights 1 - w and w (f + 1 = npos: row
// f alone, and p no longer moves the bias)
struct CopeRead {
    int f;
    double w;
    bool clamped;
};
HD inline CopeRead cope_read(double p, int npos) {
    if (p >= npos - 1) return {npos - 1, 0, true};
    int f = (int)p;
    return {f, p - f, false};
}

// The rows of the table a query over n keys can read: its positions p <= n read rows up to
// floor(p) + 1, so rows m < min(npos, n + 2).
HD inline int cope_rows_read(int n, int npos) { return n + 2 < npos ? n + 2 : npos; }

// One query's bias over keys j < n (n = i + 1), from logits[j] = q_i . k_j and z[m] = q_i . e_m
// for the rows m < cope_rows_read(n, npos).
template <typename real>
inline void cope_bias_row(real* bias, const real* logits, const real* z, int n, int npos) {
    double p = 0;
    for (int j = n - 1; j >= 0; j--) {
        p += cope_gate(logits[j]);
        if (std::isnan(p)) {  // a forward that overflowed (q or k NaN): say so, rather than read row (int)NaN
            bias[j] = (real)NAN;
            continue;
        }
        CopeRead at = cope_read(p, npos);
        bias[j] = (real)(at.clamped ? z[at.f] : (1 - at.w) * z[at.f] + at.w * z[at.f + 1]);
    }
}

// forward: bias_j = (1 - w_j) z[f_j] + w_j z[f_j + 1], p_j = sum_{t=j..n-1} g_t, g_t = sigmoid(logit_t), so
//   dz[f_j] += (1 - w_j) dbias_j    dz[f_j + 1] += w_j dbias_j
//   dp_j = dbias_j (z[f_j + 1] - z[f_j])  (0 where clamped)
//   dg_t = sum_{j <= t} dp_j             dlogit_t = dg_t g_t (1 - g_t)
// dlogits (overwritten) is the gates' part only: the score's own q . k is attention's.
template <typename real>
inline void cope_bias_row_backward(real* dlogits, real* dz, const real* dbias, const real* logits, const real* z, int n, int npos) {
    double p = 0;
    for (int j = n - 1; j >= 0; j--) {  // dp_j into dlogits[j], for now
        p += cope_gate(logits[j]);
        if (std::isnan(p)) {  // as in the forward: the gradient is NaN, and the step is not taken
            dlogits[j] = (real)NAN;
            continue;
        }
        CopeRead at = cope_read(p, npos);
        if (at.clamped) {
            dz[at.f] += dbias[j];
            dlogits[j] = 0;
            continue;
        }
        dz[at.f] += (real)((1 - at.w) * dbias[j]);
        dz[at.f + 1] += (real)(at.w * dbias[j]);
        dlogits[j] = dbias[j] * (z[at.f + 1] - z[at.f]);
    }
    double dg = 0;
    for (int t = 0; t < n; t++) {
        dg += dlogits[t];
        double g = cope_gate(logits[t]);
        dlogits[t] = (real)(dg * g * (1 - g));
    }
}

// The positions themselves, p_j = sum_{t=j..n-1} g_t for keys j < n, as cope_bias_row counts
// them: what --dump-attention writes beside the attention, to see what a model counts.
template <typename real>
inline void cope_positions_row(float* positions, const real* logits, int n) {
    double p = 0;
    for (int j = n - 1; j >= 0; j--) positions[j] = (float)(p += cope_gate(logits[j]));
}

// ----------------------------------------------------------------------------
// RoPE: rotates the first `rot` dims of each head's q and k in GPT-J's interleaved pairs
// (x_2k, x_2k+1) by the angle pos * theta_k, theta_k = 10000^(-2k / rot); the paper rotates 25%
// of the head (16 of 64 dims). q'_i . k'_j then depends on i - j only.
//
// xPos (Sun et al. 2022) rotates the same pairs and also scales pair k of the query at i by
// zeta_k^(i/512) and of the key at j by zeta_k^(-j/512), zeta_k = (2k/rot + 0.4) / 1.4, so the
// score of pair k carries zeta_k^((i-j)/512) < 1: a decay with distance. It rotates the same
// fraction of the head as RoPE (--rope-frac), so the two differ by the decay alone. The scales
// are tabulated in float without the reference code's centring, which keeps them within
// float's normal range up to position ~35,700 (pair 0: zeta = 0.4/1.4, whose zeta^(p/512)
// falls below 2^-126 there, and the key's 1/zeta^(p/512) overflows soon after): XPOS_MAX_POS,
// which validate_model_config enforces (--random-positions is what could pass it).

static const double ROPE_BASE = 10000.0;
static const double XPOS_GAMMA = 0.4, XPOS_SCALE_BASE = 512.0;
static const int XPOS_MAX_POS = 32768;

// rotated dims of a head: the fraction of HS, rounded down to a whole number of pairs
inline int rope_dims(int HS, float fraction) { return 2 * (int)(fraction * HS / 2); }

// Evaluation-time RoPE scaling, for sequences longer than training's (--rope-scaling): with
// s = (evaluated length) / (longest training sequence) > 1,
//   pi    position interpolation (Chen et al. 2023): theta_k / s
//   ntk   NTK-aware: the base becomes 10000 * s^(rot / (rot - 2))
//   yarn  (Peng et al. 2023): theta_k / s for the pairs whose wavelength is long against the
//         training length, theta_k for the short ones, a linear ramp between (r_k = L / lambda_k
//         from 1 to 32); and the rotated dims of q and k multiplied by 0.1 ln s + 1
// None is fine-tuned afterwards here: they are tried as pure evaluation-time changes.
enum RopeScalingKind { ROPE_UNSCALED, ROPE_PI, ROPE_NTK, ROPE_YARN, NUM_ROPE_SCALINGS };
static const char* const ROPE_SCALING_NAMES[NUM_ROPE_SCALINGS] = {"none", "pi", "ntk", "yarn"};
static const double YARN_ALPHA = 1.0, YARN_BETA = 32.0;

struct RopeScaling {
    int kind = ROPE_UNSCALED;
    double factor = 1.0;  // s
    int train_len = 0;    // L: the longest training sequence, in tokens
};

inline double rope_frequency(int pair, int rot, const RopeScaling& s) {
    double theta = pow(ROPE_BASE, -2.0 * pair / rot);
    if (s.kind == ROPE_PI) return theta / s.factor;
    if (s.kind == ROPE_NTK) return pair == 0 ? theta : pow(ROPE_BASE * pow(s.factor, rot / (rot - 2.0)), -2.0 * pair / rot);
    if (s.kind == ROPE_YARN) {
        double r = s.train_len * theta / (2 * M_PI);  // L / wavelength
        double ramp = std::min(1.0, std::max(0.0, (r - YARN_ALPHA) / (YARN_BETA - YARN_ALPHA)));
        return (1 - ramp) * theta / s.factor + ramp * theta;
    }
    return theta;
}
inline double rope_magnitude(const RopeScaling& s) { return s.kind == ROPE_YARN ? 0.1 * log(s.factor) + 1 : 1.0; }

// ----------------------------------------------------------------------------
// tables: everything a PE computes from positions alone, tabulated once for positions below
// max_pos, so that the hooks are lookups. The CPU keeps them here; the CUDA code copies them.

struct PETables {
    PEKind kind;
    int C, NH, rot, max_pos;
    std::vector<float> ape;                 // (max_pos, C)       APE
    std::vector<float> slope;               // (NH)               ALiBi
    std::vector<int> bucket;                // (max_pos)          T5: bucket of distance 0 .. max_pos-1
    std::vector<float> rope_cos, rope_sin;  // (max_pos, rot/2)   RoPE, xPos
    std::vector<float> xpos_scale;          // (max_pos, rot/2)   xPos: zeta_k^(pos / 512)
};

// a view of the tables as plain pointers, which a CUDA kernel can take by value
struct PE {
    PEKind kind;
    int C, NH, rot, max_pos;
    const float* ape;
    const float* slope;
    const int* bucket;
    const float* rope_cos;
    const float* rope_sin;
    const float* xpos_scale;
};

inline PETables make_pe_tables(PEKind kind, int C, int NH, int rot, int max_pos, const RopeScaling& scaling = RopeScaling()) {
    PETables t{kind, C, NH, pe_rotates(kind) ? rot : 0, max_pos, {}, {}, {}, {}, {}, {}};
    for (int pos = 0; kind == PE_APE && pos < max_pos; pos++)
        for (int c = 0; c < C; c++) t.ape.push_back(ape_value(pos, c, C));
    for (int h = 0; kind == PE_ALIBI && h < NH; h++) t.slope.push_back(alibi_slope(h, NH));
    for (int n = 0; kind == PE_T5 && n < max_pos; n++) t.bucket.push_back(t5_bucket(n));
    double magnitude = rope_magnitude(scaling);
    for (int pos = 0; pos < max_pos; pos++)
        for (int k = 0; k < t.rot / 2; k++) {
            double angle = pos * rope_frequency(k, t.rot, scaling);
            t.rope_cos.push_back((float)(magnitude * cos(angle)));
            t.rope_sin.push_back((float)(magnitude * sin(angle)));
            double zeta = (2.0 * k / t.rot + XPOS_GAMMA) / (1 + XPOS_GAMMA);
            if (kind == PE_XPOS) t.xpos_scale.push_back((float)pow(zeta, pos / XPOS_SCALE_BASE));
        }
    return t;
}

inline PE pe_view(const PETables& t) {
    return {t.kind, t.C, t.NH, t.rot, t.max_pos, t.ape.data(), t.slope.data(), t.bucket.data(), t.rope_cos.data(), t.rope_sin.data(),
            t.xpos_scale.empty() ? nullptr : t.xpos_scale.data()};
}

// ----------------------------------------------------------------------------
// the learned parameters: their count, and their initial values

inline size_t pe_param_count(PEKind kind, int C, int NH, int max_pos) {
    switch (kind) {
        case PE_T5: return (size_t)T5_NUM_BUCKETS * NH;
        case PE_APE_LEARNED: return (size_t)max_pos * C;
        case PE_KERPLE_LOG: case PE_KERPLE_POWER: return 2 * (size_t)NH;
        case PE_FIRE: return fire_layout(NH).total;
        case PE_COPE: return (size_t)max_pos * (C / NH);
        default: return 0;
    }
}

// The PEs whose learned tensor is a table with one row per position-like index (ape_learned:
// the position; t5: the bucket of the distance; cope: the contextual position), each row of
// pe_param_count / rows values: how many rows. 0 for the PEs whose parameters are not such a
// table. dev/table_extend edits these rows.
inline int pe_position_rows(PEKind kind, int max_pos) {
    switch (kind) {
        case PE_T5: return T5_NUM_BUCKETS;
        case PE_APE_LEARNED: case PE_COPE: return max_pos;
        default: return 0;
    }
}

template <typename real>
inline void pe_init_params(PEKind kind, real* p, int C, int NH, int max_pos, Rng* rng) {
    size_t n = pe_param_count(kind, C, NH, max_pos);
    auto uniform = [&](size_t from, size_t to, double lo, double hi) {
        for (size_t i = from; i < to; i++) p[i] = (real)(lo + (hi - lo) * rng->uniform());
    };
    if (kind == PE_T5)  // HF T5's init of relative_attention_bias: normal, std d_model^-0.5
        for (size_t i = 0; i < n; i++) p[i] = (real)(rng->normal() * (1.0 / sqrt(C)));
    if (kind == PE_APE_LEARNED)
        for (size_t i = 0; i < n; i++) p[i] = (real)(rng->normal() * APE_LEARNED_STD);
    if (kind == PE_KERPLE_LOG || kind == PE_KERPLE_POWER) {
        bool log_kernel = kind == PE_KERPLE_LOG;
        uniform(0, NH, 0, log_kernel ? 2 : 1);       // r1
        uniform(NH, 2 * NH, 0, log_kernel ? 1 : 2);  // r2
    }
    if (kind == PE_COPE)  // the paper's init: every contextual position starts with no bias
        for (size_t i = 0; i < n; i++) p[i] = 0;
    if (kind == PE_FIRE) {
        FireLayout at = fire_layout(NH);
        double first = 1.0, second = 1.0 / sqrt((double)FIRE_HIDDEN);  // 1 / sqrt(fan_in) of each Linear
        uniform(at.w1, at.b1, -first, first);
        uniform(at.b1, at.w2, -first, first);
        uniform(at.w2, at.b2, -second, second);
        uniform(at.b2, at.c, -second, second);
        p[at.c] = (real)FIRE_C_INIT;
        p[at.m] = 1;
    }
}

// a PE's parameters (one copy: a layer's with --pe-per-layer) clamped into their range where
// its formula has one (KERPLE's: its section says why); the others are left as they are
template <typename real>
inline void pe_keep_params_in_range(const PE& pe, real* params) {
    if (pe.kind != PE_KERPLE_LOG && pe.kind != PE_KERPLE_POWER) return;
    for (int row = 0; row < 2; row++)
        for (int h = 0; h < pe.NH; h++) params[row * pe.NH + h] = (real)kerple_read(pe.kind, row, params[row * pe.NH + h]);
}

// ----------------------------------------------------------------------------
// A digit's place in its number: 1, 2, ... counted from the first digit of its run of digit
// tokens; 0 for a token that is not a digit. With --reverse-digits numbers are written units
// first, so the place is the significance plus one, and the units of both operands and of the
// answer share place 1. It looks only backwards, so a decoded answer's places need no lookahead.
HD inline int digit_place(const int* tokens, const unsigned char* is_digit, int t) {
    if (!is_digit[tokens[t]]) return 0;
    int place = 1;
    while (place <= t && is_digit[tokens[t - place]]) place++;
    return place;
}

// Abacus (McLeish et al. 2024), a wrapper over any PE for tasks written in digits (--abacus): a
// learned (abacus_rows, C) table whose row for a digit's place is added to that digit's input,
// on top of the PE's own, so the model need not count positions to line up equal places.
// Training shifts the places of each sequence by one offset drawn from 0 .. ABACUS_MAX_OFFSET-1
// (the paper's k = 100), so that the rows of places longer than any training number are trained
// too; evaluation shifts nothing. Tokens that are not digits get no row.

static const int ABACUS_MAX_OFFSET = 100;

// a place is at most max_T, so the rows read are 0 .. ABACUS_MAX_OFFSET - 2 + max_T: the table's
// last row is never read (kept: every Abacus checkpoint holds it)
inline int abacus_rows(int max_T) { return ABACUS_MAX_OFFSET + max_T; }

// the row of the Abacus table that token t of `tokens` reads, or -1 for a token that is not a digit
HD inline int abacus_row(const int* tokens, const unsigned char* is_digit, int t, int offset) {
    int place = digit_place(tokens, is_digit, t);
    return place ? offset + place - 1 : -1;
}

// Position coupling (Cho et al. 2024, --position-coupling), a wrapper over a PE that reads
// positions (ape, ape_learned, rope): tokens that belong together share one position. On
// addition written units first, every digit's position is start + its place, so the digits of
// equal significance in both operands and in the answer share one; every other token has
// position `start`. Training draws each sequence's start so that its largest position stays
// below max_pos, which trains the positions of places longer than any training number;
// evaluation starts at 0. The paper also zero-pads the operands to one length and the answer to
// one more digit, which --zero-pad does (tasks.h).
HD inline int coupled_position(const int* tokens, const unsigned char* is_digit, int t, int start) {
    return start + digit_place(tokens, is_digit, t);
}

// the PEs coupling can wrap: those that read a token's position by itself (an input table, or
// RoPE's rotation). Coupled positions put an operand's digit after the answer's, j > i, which
// the biases of i - j (made for j <= i) and xPos's decay (which then grows) are not made for.
inline bool pe_can_couple(PEKind k) { return k == PE_APE || k == PE_APE_LEARNED || k == PE_ROPE; }

// ----------------------------------------------------------------------------
// the hooks

template <typename real>
HD inline real pe_input(const PE& pe, const real* params, int pos, int c) {
    if (pe.kind == PE_APE) return pe.ape[(size_t)pos * pe.C + c];
    if (pe.kind == PE_APE_LEARNED) return params[(size_t)pos * pe.C + c];
    return 0;
}

// forward: input[pos][c] = params[pos][c] (ape_learned), so dparams[pos][c] += dinput
template <typename real>
HD inline void pe_input_backward(const PE& pe, real* dparams, real dinput, int pos, int c) {
    if (pe.kind == PE_APE_LEARNED) dparams[(size_t)pos * pe.C + c] += dinput;
}

enum QK { QUERY, KEY };

// Rotates x (one head's q or k; only the first pe.rot values move) for position pos, and for
// xPos scales pair k by zeta_k^(+-pos/512) (+ for a query, - for a key). The backward of
// x' = s R x is dx = s R^T dx', and R^T is the rotation by the opposite angle: direction +1
// forward, -1 backward.
template <typename real>
HD inline void pe_rotate(const PE& pe, real* x, int pos, int direction, QK qk) {
    for (int k = 0; k < pe.rot / 2; k++) {
        int at = pos * (pe.rot / 2) + k;
        real c = pe.rope_cos[at], s = direction * pe.rope_sin[at];
        real scale = !pe.xpos_scale ? (real)1 : qk == QUERY ? (real)pe.xpos_scale[at] : (real)(1 / pe.xpos_scale[at]);
        real x0 = x[2 * k], x1 = x[2 * k + 1];
        x[2 * k] = scale * (x0 * c - x1 * s);
        x[2 * k + 1] = scale * (x0 * s + x1 * c);
    }
}

// T5: the row of the (32, NH) table that a distance reads
HD inline int pe_table_row(const PE& pe, int distance) { return pe.bucket[distance]; }

template <typename real>
HD inline real fire_hidden(const real* params, const FireLayout& at, int k, double u) {
    return (real)(params[at.w1 + k] * u + params[at.b1 + k]);
}

// bias added to the score of query position i and key position j <= i in head h
template <typename real>
HD inline real pe_score_bias(const PE& pe, const real* params, int h, int i, int j) {
    int n = i - j, NH = pe.NH;
    if (pe.kind == PE_T5) return params[pe_table_row(pe, n) * NH + h];
    if (pe.kind == PE_ALIBI) return -pe.slope[h] * (real)n;
    if (pe.kind == PE_KERPLE_LOG || pe.kind == PE_KERPLE_POWER) {
        double r1 = kerple_read(pe.kind, 0, params[h]), r2 = kerple_read(pe.kind, 1, params[NH + h]);
        return (real)(pe.kind == PE_KERPLE_LOG ? -r1 * log(1 + r2 * n) : -r1 * pow((double)n, r2));
    }
    if (pe.kind == PE_FIRE) {
        FireLayout at = fire_layout(NH);
        double u = fire_normalised_distance(params, NH, i, j).u;
        real out = params[at.b2 + h];
        for (int k = 0; k < FIRE_HIDDEN; k++) {
            real hidden = fire_hidden(params, at, k, u);
            if (hidden > 0) out += params[at.w2 + h * FIRE_HIDDEN + k] * hidden;
        }
        return out;
    }
    return 0;
}

// The gradient of one score's bias: dparams += dscore * d bias / d params (the chain rule
// through each formula above; KERPLE's at the values read, clamped, as the official code's)
template <typename real>
HD inline void pe_score_bias_backward(const PE& pe, const real* params, real* dparams, real dscore, int h, int i, int j) {
    int n = i - j, NH = pe.NH;
    if (pe.kind == PE_T5) dparams[pe_table_row(pe, n) * NH + h] += dscore;
    if (pe.kind == PE_KERPLE_LOG || pe.kind == PE_KERPLE_POWER) {
        double r1 = kerple_read(pe.kind, 0, params[h]), r2 = kerple_read(pe.kind, 1, params[NH + h]);
        double d_r1, d_r2;  // of the bias
        if (pe.kind == PE_KERPLE_LOG) d_r1 = -log(1 + r2 * n), d_r2 = -r1 * n / (1 + r2 * n);
        else d_r1 = -pow((double)n, r2), d_r2 = n > 0 ? -r1 * pow((double)n, r2) * log((double)n) : 0;
        dparams[h] += (real)(dscore * d_r1);
        dparams[NH + h] += (real)(dscore * d_r2);
    }
    if (pe.kind == PE_FIRE) {
        FireLayout at = fire_layout(NH);
        FireInput in = fire_normalised_distance(params, NH, i, j);
        dparams[at.b2 + h] += dscore;
        double du = 0;  // d bias / du
        for (int k = 0; k < FIRE_HIDDEN; k++) {
            real hidden = fire_hidden(params, at, k, in.u);
            if (hidden <= 0) continue;  // the ReLU passes nothing back
            real w2 = params[at.w2 + h * FIRE_HIDDEN + k];
            dparams[at.w2 + h * FIRE_HIDDEN + k] += dscore * hidden;
            dparams[at.w1 + k] += (real)(dscore * w2 * in.u);
            dparams[at.b1 + k] += dscore * w2;
            du += (double)w2 * params[at.w1 + k];
        }
        // c = |c'|, L = |m| * 512
        double sign_c = params[at.c] < 0 ? -1 : 1, sign_m = params[at.m] < 0 ? -1 : 1;
        dparams[at.c] += (real)(dscore * du * in.du_dc * sign_c);
        dparams[at.m] += (real)(dscore * du * in.du_dL * FIRE_L_UNIT * sign_m);
    }
}

inline PEKind find_pe(const std::string& name) {
    for (int p = 0; p < NUM_PES; p++)
        if (name == PE_NAMES[p]) return (PEKind)p;
    fail("unknown positional encoding '%s' (valid: %s)", name.c_str(), names_of(PE_NAMES).c_str());
}
