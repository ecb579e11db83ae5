/*
 pe.h: the five positional encodings under test, each defined here and nowhere else.

 The model (model.h) and the CUDA kernels never ask which PE is in use; they call three hooks,
 and a hook does nothing for a PE that does not act there:
   input    pe_input(pe, pos, c)                 added to channel c of the token embedding
   q and k  pe_rotate(pe, x, pos, direction)     rotates one head's query or key vector
   scores   pe_score_bias(pe, table, h, i, j)    added to the score q_i . k_j
            pe_score_bias_backward(...)          accumulates the score's gradient into the bias
                                                 table's gradient (T5's table is learned)
 `pe` is a PE: the kind plus tables of everything computed from positions alone (sinusoids,
 slopes, buckets, angles), made once by make_pe_tables() so the hooks are lookups.

                 input          q and k         scores                          learned
   nope          -              -               -                               -
   ape           sin ‖ cos      -               -                               -
   t5            -              -               table[bucket(i - j)][h]         (32, NH) table
   alibi         -              -               -slope_h * (i - j)              -
   rope          -              rotate pairs    -                               -

 Positions count from 0 at the first real token of a sequence (sequences are right-padded, so
 padding never shifts them). Adding a PE means: a PEKind, a row in PE_NAMES, its tables, and its
 cases in the hooks below.
 All formulas follow the paper's code (reference/paper-protocol.md §6).
*/
#pragma once

#include <cmath>
#include <vector>

#include "common.h"

enum PEKind { PE_NOPE, PE_APE, PE_T5, PE_ALIBI, PE_ROPE, NUM_PES };
static const char* const PE_NAMES[NUM_PES] = {"nope", "ape", "t5", "alibi", "rope"};

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

// ----------------------------------------------------------------------------
// T5 relative bias: one learned scalar per (bucket, head), buckets of the causal distance
// n = i - j >= 0: exact for n < 16, then log-spaced up to distance 128, everything further in
// bucket 31. The table lives once (layer 0 in the paper) and every layer reuses it.

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
// RoPE: rotates the first `rot` dims of each head's q and k in GPT-J's interleaved pairs
// (x_2k, x_2k+1) by the angle pos * theta_k, theta_k = 10000^(-2k / rot); the paper rotates 25%
// of the head (16 of 64 dims). q'_i . k'_j then depends on i - j only.

static const double ROPE_BASE = 10000.0;

// rotated dims of a head: the fraction of HS, rounded down to a whole number of pairs
inline int rope_dims(int HS, float fraction) { return 2 * (int)(fraction * HS / 2); }

HD inline void rope_angle(int pos, int pair, int rot, float* cosine, float* sine) {
    double angle = pos * pow(ROPE_BASE, -2.0 * pair / rot);
    *cosine = (float)cos(angle);
    *sine = (float)sin(angle);
}

// ----------------------------------------------------------------------------
// tables: everything a PE computes from positions alone, tabulated once for positions below
// max_T, so that the hooks are lookups. The CPU keeps them here; the CUDA code copies them.

struct PETables {
    PEKind kind;
    int C, NH, rot, max_T;
    std::vector<float> ape;                 // (max_T, C)       APE
    std::vector<float> slope;               // (NH)             ALiBi
    std::vector<int> bucket;                // (max_T)          T5: bucket of distance 0 .. max_T-1
    std::vector<float> rope_cos, rope_sin;  // (max_T, rot/2)   RoPE
};

// a view of the tables as plain pointers, which a CUDA kernel can take by value
struct PE {
    PEKind kind;
    int C, NH, rot;
    const float* ape;
    const float* slope;
    const int* bucket;
    const float* rope_cos;
    const float* rope_sin;
};

inline PETables make_pe_tables(PEKind kind, int C, int NH, int rot, int max_T) {
    PETables t{kind, C, NH, kind == PE_ROPE ? rot : 0, max_T, {}, {}, {}, {}, {}};
    for (int pos = 0; kind == PE_APE && pos < max_T; pos++)
        for (int c = 0; c < C; c++) t.ape.push_back(ape_value(pos, c, C));
    for (int h = 0; kind == PE_ALIBI && h < NH; h++) t.slope.push_back(alibi_slope(h, NH));
    for (int n = 0; kind == PE_T5 && n < max_T; n++) t.bucket.push_back(t5_bucket(n));
    for (int pos = 0; pos < max_T; pos++)
        for (int k = 0; k < t.rot / 2; k++) {
            float c, s;
            rope_angle(pos, k, t.rot, &c, &s);
            t.rope_cos.push_back(c);
            t.rope_sin.push_back(s);
        }
    return t;
}

inline PE pe_view(const PETables& t) {
    return {t.kind, t.C, t.NH, t.rot, t.ape.data(), t.slope.data(), t.bucket.data(), t.rope_cos.data(), t.rope_sin.data()};
}

// ----------------------------------------------------------------------------
// the hooks

HD inline float pe_input(const PE& pe, int pos, int c) { return pe.kind == PE_APE ? pe.ape[pos * pe.C + c] : 0.0f; }

// Rotates x (one head's q or k; only the first pe.rot values move) for position pos. The
// backward of a rotation is its transpose, the rotation by the opposite angle: direction +1
// forward, -1 backward.
template <typename real>
HD inline void pe_rotate(const PE& pe, real* x, int pos, int direction) {
    for (int k = 0; k < pe.rot / 2; k++) {
        real c = pe.rope_cos[pos * (pe.rot / 2) + k], s = direction * pe.rope_sin[pos * (pe.rot / 2) + k];
        real x0 = x[2 * k], x1 = x[2 * k + 1];
        x[2 * k] = x0 * c - x1 * s;
        x[2 * k + 1] = x0 * s + x1 * c;
    }
}

// rows of the learned bias table, which is (rows, NH); 0 when the PE learns nothing
inline int pe_table_rows(PEKind kind) { return kind == PE_T5 ? T5_NUM_BUCKETS : 0; }

// The table row the bias at distance i - j reads (T5: the distance's bucket). A learned bias
// depends only on the head and the distance, which lets the GPU sum its gradient by distance
// first and by row second, in a fixed order.
HD inline int pe_table_row(const PE& pe, int distance) { return pe.kind == PE_T5 ? pe.bucket[distance] : -1; }

// bias added to the score of query position i and key position j <= i in head h
template <typename real>
HD inline real pe_score_bias(const PE& pe, const real* table, int h, int i, int j) {
    if (pe.kind == PE_T5) return table[pe_table_row(pe, i - j) * pe.NH + h];
    if (pe.kind == PE_ALIBI) return -pe.slope[h] * (real)(i - j);
    return 0;
}

// forward: score += table[row(i - j)][h], so dtable[row(i - j)][h] += dscore
template <typename real>
HD inline void pe_score_bias_backward(const PE& pe, real* dtable, real dscore, int h, int i, int j) {
    if (pe.kind == PE_T5) dtable[pe_table_row(pe, i - j) * pe.NH + h] += dscore;
}

inline PEKind find_pe(const std::string& name) {
    for (int p = 0; p < NUM_PES; p++)
        if (name == PE_NAMES[p]) return (PEKind)p;
    fail("unknown positional encoding '%s' (valid: %s)", name.c_str(), names_of(PE_NAMES).c_str());
}
