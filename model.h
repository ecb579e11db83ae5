/*
 model.h: the model, written out as the CPU reference every GPU kernel is checked against.

 A pre-norm, decoder-only transformer as the paper ran it (T5-base's decoder stack without
 cross-attention, as the paper's released code builds it):
     h = dropout(wte[token] + PE input [+ Abacus row])                     (B, T, C)
     for each layer:  h += dropout(attention(rmsnorm(h)) Wo^T)
                      h += dropout(dropout(relu(rmsnorm(h) W1^T)) W2^T)
     logits = (dropout(rmsnorm(h)) * C^-0.5) wte^T                         tied embedding
 RMSNorm has no mean and no bias (eps 1e-6); attention scores are q.k with no 1/sqrt(HS) (the
 init compensates), plus the PE's bias, causal; nothing has a bias vector.

 Provides: ModelConfig and presets; the parameter table (every tensor's name, shape, init and
 weight decay: init, AdamW, checkpoints and tests walk it, nothing else names tensors); each
 layer's forward and backward, side by side; model_forward / model_backward; AdamW with the
 paper's schedule and clipping; checkpoints.

 Conventions:
   - dims: B batch, T time, C channels, NH heads, HS head size, F feed-forward width, V vocab,
     L layers; pointer comments give shapes
   - forward functions overwrite their outputs; backward functions accumulate (+=) into every
     gradient they write, so the caller zeroes what it starts; the exceptions say so: the
     gradients only they make (attention_backward's dscores, CoPE's dlogits) are overwritten,
     and rotate_qk_backward turns dqkv in place from the rotated q and k's to the unrotated
   - every output element is computed by one thread, summing in a fixed order, so results do
     not depend on the number of threads and runs repeat bit for bit
   - `real` is float in the program and double in the gradient-check test (MODEL_REAL)
*/
#pragma once

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <functional>
#include <string>
#include <vector>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "pe.h"

#ifndef MODEL_REAL
#define MODEL_REAL float
#endif
typedef MODEL_REAL real;

// ----------------------------------------------------------------------------
// configuration

// The matrix products' arithmetic (--precision). fp32: as written. tf32: the GPU's tensor cores
// read fp32 operands to 10 mantissa bits; the CPU computes these in fp32. bf16: every operand of
// a product rounded to bfloat16 (round_to_bf16), the products and their sums in fp32, as tensor
// cores take bf16 operands and accumulate in fp32: the linear layers' weights, activations and
// gradients, and attention's q, k, v, probabilities, output gradient and score gradients. The
// CPU computes that too, so it is the reference for the GPU's (kernels.cuh). Everything else stays fp32:
// the softmax and its statistics, the PE's bias and rotation, CoPE's gates, norms, the loss.
enum Precision { PRECISION_FP32, PRECISION_TF32, PRECISION_BF16 };
static const char* const PRECISION_NAMES[] = {"fp32", "tf32", "bf16"};

inline Precision find_precision(const std::string& name) {
    for (int p = 0; p < (int)(sizeof(PRECISION_NAMES) / sizeof(PRECISION_NAMES[0])); p++)
        if (name == PRECISION_NAMES[p]) return (Precision)p;
    fail("unknown precision '%s' (valid: %s)", name.c_str(), names_of(PRECISION_NAMES).c_str());
}

// How attention is computed (--attention): the same function either way, in a different order of
// sums. simple: the PE's bias made as (T, T) planes first, and the probabilities (B, NH, T, T)
// kept for the backward; fused: flash style, the keys in tiles with an online softmax, each
// score's bias computed where it is used, and only each query row's log-sum-exp kept, from which
// the backward makes the probabilities again: memory O(T) a row, not O(T^2).
enum AttentionKind { ATTENTION_SIMPLE, ATTENTION_FUSED };
static const char* const ATTENTION_NAMES[] = {"simple", "fused"};

struct ModelConfig {
    int L, C, NH, F;         // layers, channels, heads, feed-forward width
    int V;                   // vocabulary
    int max_T;               // longest sequence the PE tables and buffers are made for
    PEKind pe;
    float rope_frac;         // RoPE: fraction of each head's dims that rotate (paper: 0.25)
    float dropout;           // paper: 0.1
    int random_positions = 0;  // --random-positions L: training draws positions from 0 .. L-1
    bool abacus = false;       // --abacus: digits also get their place's row of the Abacus table (pe.h)
    bool position_coupling = false;  // --position-coupling: positions computed from the digits' places (pe.h)
    int cope_max = 0;          // --cope-max P: CoPE's positions clip at P (the paper's p_max); 0: max_T rows (pe.h)
    bool pe_per_layer = false; // --pe-per-layer: each layer its own PE parameters, not one tensor for all
    bool packed = false;       // --pack: training rows hold several sequences, each counting its own positions
    // --attention-window L:W or L-M:W, evaluation only: the queries of layers window_from to
    // window_to see their window latest tokens (themselves included); -1: no layer. :prompt
    // (window_prompt): the prompt's queries alone, the answer's seeing the whole prefix; :sink
    // (window_sink): and the first token of their sequence (the attention sink of StreamingLLM,
    // Xiao et al. 2023); :near (window_near), with a bias PE: that first token biased as the key
    // just before the window is (distance window at positions 0..n-1), not as itself.
    int window_from = -1, window_to = -1, window = 0;
    bool window_prompt = false, window_sink = false, window_near = false;
    Precision precision = PRECISION_FP32;  // --precision: the run's setting, not the model's (no checkpoint holds it)
    AttentionKind attention = ATTENTION_SIMPLE;  // --attention: likewise
    bool windowed(int l) const { return window_from >= 0 && l >= window_from && l <= window_to; }
    // the windowed layers as --attention-window names them: "2", or "0-3"
    std::string window_layers() const {
        return window_from == window_to ? std::to_string(window_from) : std::to_string(window_from) + "-" + std::to_string(window_to);
    }
    int HS() const { return C / NH; }
    // training gives each row its own positions (TokenPlaces), so the bias PEs need a plane per
    // row (bias_planes)
    bool positions_per_row() const { return random_positions > 0 || packed; }
    // positions the PE's tables (and ape_learned's rows) cover; a coupled position is at most
    // the sequence length (a sequence of digits alone), one more than the uncoupled ones. CoPE's
    // positions are counts, which its table covers up to the clip.
    int max_pos() const {
        if (cope_max > 0) return cope_max + 1;
        return std::max(max_T + (position_coupling ? 1 : 0), random_positions);
    }
};

struct Preset {
    const char* name;
    int L, C, NH, F;
};
static const Preset PRESETS[] = {
    {"paper", 12, 768, 12, 3072},  // T5-base's decoder: the paper's model
    {"small", 6, 384, 6, 1536},
    {"tiny", 2, 64, 4, 256},       // trains on a laptop's CPU in minutes
};

static const double RMSNORM_EPS = 1e-6;  // T5 layer_norm_epsilon
static const int MAX_DIM = 1 << 16;      // refuse absurd sizes with a message, not an allocation failure

inline void validate_model_config(const ModelConfig& c) {
    const int dims[] = {c.L, c.C, c.NH, c.F, c.V, c.max_T};
    const char* names[] = {"--layers", "--d-model", "--heads", "--d-ff", "vocabulary", "sequence length"};
    for (int i = 0; i < 6; i++)
        if (dims[i] < 1 || dims[i] > MAX_DIM) fail("%s %d is out of range [1, %d]", names[i], dims[i], MAX_DIM);
    if (c.C % c.NH) fail("--d-model %d is not divisible by --heads %d", c.C, c.NH);
    if (!(c.rope_frac > 0 && c.rope_frac <= 1)) fail("--rope-frac %g is out of range (0, 1]", c.rope_frac);
    if (pe_rotates(c.pe) && rope_dims(c.HS(), c.rope_frac) == 0)
        fail("--rope-frac %g rotates no pair of a %d-dim head", c.rope_frac, c.HS());
    if (c.random_positions < 0 || c.random_positions > MAX_DIM) fail("--random-positions %d is out of range [0, %d]", c.random_positions, MAX_DIM);
    if (c.random_positions > 0 && !pe_reads_positions(c.pe)) fail("--random-positions: %s has no positions to draw", PE_NAMES[c.pe]);
    if (c.position_coupling && !pe_can_couple(c.pe))
        fail("--position-coupling needs a PE that reads each token's position (ape, ape_learned or rope), not %s", PE_NAMES[c.pe]);
    if (c.position_coupling && (c.random_positions > 0 || c.abacus))
        fail("--position-coupling can not be combined with %s: both set where the digits are", c.abacus ? "--abacus" : "--random-positions");
    if (c.packed && (c.abacus || c.position_coupling))
        fail("--pack can not be combined with %s: it reads the digits' places along a row, across the sequences packed in it",
             c.abacus ? "--abacus" : "--position-coupling");
    if (c.window_from >= 0) {
        std::string layers = c.window_layers();
        if (c.window_to >= c.L) fail("--attention-window %s:%d: the model has layers 0 to %d", layers.c_str(), c.window, c.L - 1);
        if (c.window_from > c.window_to) fail("--attention-window %s:%d: the first layer comes first", layers.c_str(), c.window);
        if (c.window < 1) fail("--attention-window %s:%d: a query sees at least itself (W >= 1)", layers.c_str(), c.window);
        if (c.window_near && !c.window_sink) fail("--attention-window %s:%d:near moves the first token kept by :sink: add :sink", layers.c_str(), c.window);
        if (c.window_near && !pe_has_score_bias(c.pe))
            fail("--attention-window ...:near sets the first token's bias, and %s has no bias of distances (t5, alibi, kerple_* and fire have)",
                 PE_NAMES[c.pe]);
    }
    if (c.cope_max < 0 || c.cope_max > MAX_DIM) fail("--cope-max %d is out of range [0, %d]", c.cope_max, MAX_DIM);
    if (c.cope_max > 0 && !pe_has_context_bias(c.pe)) fail("--cope-max clips CoPE's contextual positions: %s has none", PE_NAMES[c.pe]);
    if (c.pe == PE_XPOS && c.max_pos() > XPOS_MAX_POS)
        fail("--pe xpos: this run's positions reach %d, but xPos's scales stay within float's range only below %d (pe.h): keep "
             "--random-positions and the longest sequence at or below %d", c.max_pos() - 1, XPOS_MAX_POS, XPOS_MAX_POS);
    if (c.pe_per_layer && !pe_attention_has_params(c.pe))
        fail("--pe-per-layer gives each layer its own parameters of the PE's attention bias: %s has none", PE_NAMES[c.pe]);
    if (pe_param_count(c.pe, c.C, c.NH, c.max_pos()) > (size_t)INT_MAX) fail("--pe %s: its parameters would not fit one tensor", PE_NAMES[c.pe]);
    if (!(c.dropout >= 0 && c.dropout < 1)) fail("--dropout %g is out of range [0, 1)", c.dropout);
    if (c.attention == ATTENTION_FUSED && pe_has_context_bias(c.pe))
        fail("--attention fused computes each score's bias from the PE alone (pe_score_bias), and %s's comes from the layer's q and k: "
             "use --attention simple", PE_NAMES[c.pe]);
    if (c.attention == ATTENTION_FUSED && c.window_from >= 0)
        fail("--attention-window masks keys through the bias planes that --attention fused does not make: use --attention simple");
}

// ----------------------------------------------------------------------------
// the parameter table

enum ParamId { P_WTE, P_PE_TABLE, P_ABACUS, P_LNF, P_LN1, P_WQ, P_WK, P_WV, P_WO, P_LN2, P_W1, P_W2, NUM_PARAMS };
enum Dim { D_ONE, D_C, D_F, D_V, D_PE, D_ABACUS };

struct ParamSpec {
    const char* name;
    bool per_layer;  // one copy per layer, or one for the whole model
    Dim rows, cols;
    bool decay;      // AdamW weight decay. The paper's HF Trainer exempted every parameter whose
                     // name contains "bias": T5's relative_attention_bias table, not the norms.
                     // The later PEs' tensors and Abacus's table are exempt as T5's is, one rule
                     // for every positional tensor (KERPLE's official code names its two
                     // bias_p and bias_a, which the rule exempts; for the rest it is a choice)
    double (*init_std)(const ModelConfig& c);  // normal(0, std); nullptr: ones (norm weights), or
                                               // for pe_table the PE's own init (pe.h)
};

// Init is HF 4.16's T5 init, as the paper's code ran it; q's smaller std stands in for the missing
// 1/sqrt(HS) in the scores.
static const ParamSpec PARAMS[NUM_PARAMS] = {
    {"wte", false, D_V, D_C, true, [](const ModelConfig&) { return 1.0; }},  // token embedding, tied LM head
    {"pe_table", false, D_ONE, D_PE, false, nullptr},  // the PE's learned parameters (pe.h): all layers', or per layer with --pe-per-layer
    {"abacus", false, D_ABACUS, D_C, false, [](const ModelConfig&) { return 1.0; }},  // no rows without --abacus; std 1 as wte
    {"lnf", false, D_ONE, D_C, true, nullptr},  // final RMSNorm weight
    {"ln1", true, D_ONE, D_C, true, nullptr},
    {"wq", true, D_C, D_C, true, [](const ModelConfig& c) { return 1.0 / sqrt((double)c.C * c.HS()); }},
    {"wk", true, D_C, D_C, true, [](const ModelConfig& c) { return 1.0 / sqrt(c.C); }},
    {"wv", true, D_C, D_C, true, [](const ModelConfig& c) { return 1.0 / sqrt(c.C); }},
    {"wo", true, D_C, D_C, true, [](const ModelConfig& c) { return 1.0 / sqrt(c.C); }},
    {"ln2", true, D_ONE, D_C, true, nullptr},
    {"w1", true, D_F, D_C, true, [](const ModelConfig& c) { return 1.0 / sqrt(c.C); }},
    {"w2", true, D_C, D_F, true, [](const ModelConfig& c) { return 1.0 / sqrt(c.F); }},
};

// one copy per layer (PARAMS' per_layer, or the PE's tensor with --pe-per-layer), or one for the model
inline bool is_per_layer(const ModelConfig& c, int id) { return PARAMS[id].per_layer || (id == P_PE_TABLE && c.pe_per_layer); }
inline int param_copies(const ModelConfig& c, int id) { return is_per_layer(c, id) ? c.L : 1; }

inline int dim_size(const ModelConfig& c, Dim d) {
    switch (d) {
        case D_ONE: return 1;
        case D_C: return c.C;
        case D_F: return c.F;
        case D_V: return c.V;
        case D_ABACUS: return c.abacus ? abacus_rows(c.max_T) : 0;
        default: return (int)pe_param_count(c.pe, c.C, c.NH, c.max_pos());
    }
}

inline size_t param_numel(const ModelConfig& c, int id) { return (size_t)dim_size(c, PARAMS[id].rows) * dim_size(c, PARAMS[id].cols); }

// Where each tensor lives in the one flat parameter array: the model-wide tensors first, in
// table order, then one block per layer holding that layer's tensors in table order. So wq, wk,
// wv of a layer are adjacent and form one (3C, C) matrix: a single matmul computes q, k and v.
struct Layout {
    size_t offset[NUM_PARAMS];  // per-layer tensors: the offset of layer 0's copy
    size_t stride[NUM_PARAMS];  // from one layer's copy to the next: layer_size, or 0 for a model-wide tensor
    size_t layer_size, total;

    size_t at(int id, int layer) const { return offset[id] + layer * stride[id]; }
};

// align: every tensor, and every layer's block, starts at a multiple of this many floats, but
// wk and wv, which follow wq with no gap whatever the alignment: the three are one (3C, C)
// matrix (an aligned wk would leave a gap after wq wherever C * C is not a multiple of align).
// The host packs them (1: checkpoints hold exactly the parameters); the GPU aligns them (model.cuh).
inline Layout make_layout(const ModelConfig& c, size_t align = 1) {
    auto aligned = [&](size_t n) { return (n + align - 1) / align * align; };  // n rounded up to a multiple of align
    Layout layout{};
    size_t next = 0;
    auto place = [&](int id) {
        bool joined_to_wq = id == P_WK || id == P_WV;
        layout.offset[id] = next = joined_to_wq ? next : aligned(next), next += param_numel(c, id);
    };
    for (int id = 0; id < NUM_PARAMS; id++)
        if (!is_per_layer(c, id)) place(id);
    size_t first_layer = next = aligned(next);
    for (int id = 0; id < NUM_PARAMS; id++)
        if (is_per_layer(c, id)) place(id);
    layout.layer_size = aligned(next - first_layer);
    for (int id = 0; id < NUM_PARAMS; id++) layout.stride[id] = is_per_layer(c, id) ? layout.layer_size : 0;
    layout.total = first_layer + c.L * layout.layer_size;
    return layout;
}

// ----------------------------------------------------------------------------
// dropout: counter-based, so no mask is stored and the GPU can draw the same one

// Every dropout site (one tensor of one layer) at one step has a key; element i of the site is
// kept iff hash32(key ^ hash32(i)) >= p * 2^32. Same seed, step, site and index, same decision:
// in forward and backward, on CPU and GPU.
enum DropoutSite { SITE_EMBED, SITE_FINAL, SITE_ATTN_PROBS, SITE_ATTN_OUT, SITE_FFN_HIDDEN, SITE_FFN_OUT };
static const int SITES_PER_LAYER = 4;  // the last four above, once per layer

// the sites numbered 0, 1, ...: the two outside the layers, then each layer's four
inline int dropout_site_index(DropoutSite site, int layer = 0) {
    return site < SITE_ATTN_PROBS ? site : SITE_ATTN_PROBS + layer * SITES_PER_LAYER + (site - SITE_ATTN_PROBS);
}
inline int dropout_sites(int layers) { return SITE_ATTN_PROBS + layers * SITES_PER_LAYER; }

struct Dropout {
    float p;  // probability of dropping; 0 turns dropout off (evaluation)
    uint64_t seed;
    int step;

    uint32_t threshold() const { return (uint32_t)(p * 4294967296.0); }
    real scale() const { return (real)(1.0 / (1.0 - p)); }
    uint32_t key(DropoutSite site, int layer = 0) const {
        return (uint32_t)mix64(seed ^ mix64(((uint64_t)step << 20) + dropout_site_index(site, layer)));
    }
    // every site's key, indexed by dropout_site_index (the GPU reads them from device memory)
    std::vector<uint32_t> keys(int layers) const {
        std::vector<uint32_t> out(dropout_sites(layers));
        for (DropoutSite site : {SITE_EMBED, SITE_FINAL}) out[dropout_site_index(site)] = key(site);
        for (int l = 0; l < layers; l++)
            for (DropoutSite site : {SITE_ATTN_PROBS, SITE_ATTN_OUT, SITE_FFN_HIDDEN, SITE_FFN_OUT}) out[dropout_site_index(site, l)] = key(site, l);
        return out;
    }
};

static const Dropout NO_DROPOUT = {0.0f, 0, 0};

HD inline bool dropout_keeps(uint32_t key, uint32_t index, uint32_t threshold) { return hash32(key ^ hash32(index)) >= threshold; }

// the factor element i is multiplied by: mask / (1 - p), or 1 without dropout
inline real dropout_factor(const Dropout& d, uint32_t key, size_t i) {
    if (d.p == 0) return 1;
    return dropout_keeps(key, (uint32_t)i, d.threshold()) ? d.scale() : 0;
}

// out = inp * mask / (1 - p) * s   (out may be inp)
inline void dropout_forward(real* out, const real* inp, const Dropout& d, uint32_t key, size_t n, real s = 1) {
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) out[i] = inp[i] * dropout_factor(d, key, i) * s;
}

// forward: out = inp * mask / (1 - p) * s, so dinp += dout * mask / (1 - p) * s
inline void dropout_backward(real* dinp, const real* dout, const Dropout& d, uint32_t key, size_t n, real s = 1) {
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) dinp[i] += dout[i] * dropout_factor(d, key, i) * s;
}

// ----------------------------------------------------------------------------
// the layers, forward and backward side by side

// sum_i a[i] * b[i] in DOT_LANES running sums, lane l adding the i = l (mod DOT_LANES) in
// order, then the lanes added pairwise (lane l + w into lane l, for w = DOT_LANES / 2 down to
// 1). A vector unit computes the lanes side by side, yet the order is written here, not left to
// the vectoriser: a `reduction` clause would sum in as many lanes as the instruction set has, so
// a run's bits would change with the CPU (-march=native). Written out, they do not.
static const int DOT_LANES = 8;

inline real dot(const real* a, const real* b, int n) {
    real lane[DOT_LANES] = {};
    int full = n - n % DOT_LANES;
    for (int i = 0; i < full; i += DOT_LANES)
#pragma omp simd
        for (int l = 0; l < DOT_LANES; l++) lane[l] += a[i + l] * b[i + l];
    for (int i = full; i < n; i++) lane[i - full] += a[i] * b[i];
    for (int w = DOT_LANES / 2; w > 0; w /= 2)
        for (int l = 0; l < w; l++) lane[l] += lane[l + w];
    return lane[0];
}

// the position of token (b, t): given (positions, (B, T)) or t
HD inline int position_of(const int* positions, int b, int t, int T) { return positions ? positions[(size_t)b * T + t] : t; }

// the first token of the sequence that token (b, t) belongs to, in its row: given (starts,
// (B, T), where --pack put several sequences in a row) or 0. Attention reads no key before it.
HD inline int sequence_start(const int* starts, int b, int t, int T) { return starts ? starts[(size_t)b * T + t] : 0; }

// out[b,t,:] = wte[tokens[b,t], :] + the PE's input at the token's position, for t >= t0
inline void embedding_forward(real* out,             // (B, T, C)
                              const int* tokens,     // (B, T)
                              const int* positions,  // (B, T), or nullptr: 0 .. T-1
                              const real* wte,       // (V, C)
                              const real* pe_params, // the PE's learned tensor, if it has one
                              const PE& pe, int B, int T, int C, int t0) {
#pragma omp parallel for collapse(2)
    for (int b = 0; b < B; b++)
        for (int t = t0; t < T; t++) {
            real* out_bt = out + ((size_t)b * T + t) * C;             // out[b,t,:]
            const real* row = wte + (size_t)tokens[b * T + t] * C;  // wte[token,:]
            int pos = position_of(positions, b, t, T);
            for (int c = 0; c < C; c++) out_bt[c] = row[c] + pe_input(pe, pe_params, pos, c);
        }
}

// forward: out[b,t,:] = wte[token,:] + the PE's input at pos (a row of ape_learned's table), so
//   dwte[token,:] += dout[b,t,:]          dpe_params[pos,:] += dout[b,t,:]
inline void embedding_backward(real* dwte,            // (V, C)
                               real* dpe_params,      // the PE's learned tensor's gradient
                               const real* dout,      // (B, T, C)
                               const int* tokens,     // (B, T)
                               const int* positions,  // (B, T), or nullptr: 0 .. T-1
                               const PE& pe, int B, int T, int C) {
    // positions may share a token (or a position), so threads split the channels
#pragma omp parallel for
    for (int c = 0; c < C; c++)
        for (size_t bt = 0; bt < (size_t)B * T; bt++) {
            dwte[(size_t)tokens[bt] * C + c] += dout[bt * C + c];
            pe_input_backward(pe, dpe_params, dout[bt * C + c], position_of(positions, (int)(bt / T), (int)(bt % T), T), c);
        }
}

// out[b,t,:] += abacus[row,:] for each digit, row = its place in its number - 1 + offsets[b] (pe.h)
inline void abacus_forward(real* out,                       // (B, T, C)
                           const int* tokens,               // (B, T)
                           const int* offsets,              // (B), or nullptr: 0
                           const real* abacus,              // (abacus_rows, C)
                           const unsigned char* is_digit,   // (V)
                           int B, int T, int C, int t0) {
#pragma omp parallel for collapse(2)
    for (int b = 0; b < B; b++)
        for (int t = t0; t < T; t++) {
            int row = abacus_row(tokens + (size_t)b * T, is_digit, t, offsets ? offsets[b] : 0);
            if (row < 0) continue;
            real* out_bt = out + ((size_t)b * T + t) * C;
            for (int c = 0; c < C; c++) out_bt[c] += abacus[(size_t)row * C + c];
        }
}

// forward: out[b,t,:] += abacus[row,:], so dabacus[row,:] += dout[b,t,:]
inline void abacus_backward(real* dabacus,                  // (abacus_rows, C)
                            const real* dout,               // (B, T, C)
                            const int* tokens,              // (B, T)
                            const int* offsets,             // (B), or nullptr: 0
                            const unsigned char* is_digit,  // (V)
                            int B, int T, int C) {
    std::vector<int> rows((size_t)B * T);  // found once, not once per channel
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) rows[(size_t)b * T + t] = abacus_row(tokens + (size_t)b * T, is_digit, t, offsets ? offsets[b] : 0);
    // digits of many sequences share a row, so threads split the channels
#pragma omp parallel for
    for (int c = 0; c < C; c++)
        for (size_t bt = 0; bt < (size_t)B * T; bt++)
            if (rows[bt] >= 0) dabacus[(size_t)rows[bt] * C + c] += dout[bt * C + c];
}

// out = inp * rstd * weight with rstd = 1 / sqrt(mean(inp^2) + eps), row by row
inline void rmsnorm_forward(real* out,           // (N, C)
                            real* rstd,          // (N)
                            const real* inp,     // (N, C)
                            const real* weight,  // (C)
                            size_t N, int C) {
#pragma omp parallel for
    for (size_t n = 0; n < N; n++) {
        const real* x = inp + n * C;
        real* y = out + n * C;
        real r = (real)(1.0 / sqrt(dot(x, x, C) / C + RMSNORM_EPS));
        for (int c = 0; c < C; c++) y[c] = x[c] * r * weight[c];
        rstd[n] = r;
    }
}

// forward: y_c = w_c x_c r with r = (sum_k x_k^2 / C + eps)^(-1/2), and dr/dx_c = -r^3 x_c / C, so
//   dx_c += r w_c dy_c - (r^3 / C) x_c sum_k dy_k w_k x_k        dw_c += sum_rows dy_c x_c r
inline void rmsnorm_backward(real* dinp,          // (N, C)
                             real* dweight,       // (C)
                             const real* dout,    // (N, C)
                             const real* inp,     // (N, C)
                             const real* weight,  // (C)
                             const real* rstd,    // (N)
                             size_t N, int C) {
#pragma omp parallel for
    for (size_t n = 0; n < N; n++) {
        const real* x = inp + n * C;
        const real* dy = dout + n * C;
        real* dx = dinp + n * C;
        real r = rstd[n], dy_w_x = 0;
        for (int c = 0; c < C; c++) dy_w_x += dy[c] * weight[c] * x[c];
        for (int c = 0; c < C; c++) dx[c] += r * weight[c] * dy[c] - r * r * r / C * x[c] * dy_w_x;
    }
#pragma omp parallel for
    for (int c = 0; c < C; c++)
        for (size_t n = 0; n < N; n++) dweight[c] += dout[n * C + c] * inp[n * C + c] * rstd[n];
}

// All three of a linear layer's matrix products come down to one:
//   out[r][w] += sum_k a(r, k) b[k][w]        b's rows contiguous, a read through two strides
// (so that a and its transpose are the same call). A tile of TILE_ROWS x TILE_COLS outputs keeps
// its sums in registers through the whole k loop, adding k in order as the formula reads: each
// b row loaded serves TILE_ROWS rows, each a value TILE_COLS columns, and the columns are vector
// lanes, so no sum is ever split, and the bits do not depend on the vector width or threads.
static const int TILE_ROWS = 8, TILE_COLS = 16;

struct Strided {  // element (r, k) of a matrix at p[r * row_stride + k * k_stride]
    const real* p;
    size_t row_stride, k_stride;
};

// a full tile of outputs at out (its rows ld_out apart), from a's rows r0.. and the columns of b
// that start at b (its rows ld_b apart), the sums in registers (acc) through the whole k loop
template <int ROWS, int COLS>
inline void product_tile(real* out, size_t ld_out, Strided a, size_t r0, const real* b, size_t ld_b, size_t K) {
    real acc[ROWS][COLS];
    for (int r = 0; r < ROWS; r++)
        for (int w = 0; w < COLS; w++) acc[r][w] = out[r * ld_out + w];
    for (size_t k = 0; k < K; k++) {
        const real* b_k = b + k * ld_b;  // b[k, tile's columns]
        for (int r = 0; r < ROWS; r++) {
            real a_rk = a.p[(r0 + r) * a.row_stride + k * a.k_stride];
#pragma omp simd
            for (int w = 0; w < COLS; w++) acc[r][w] += a_rk * b_k[w];
        }
    }
    for (int r = 0; r < ROWS; r++)
        for (int w = 0; w < COLS; w++) out[r * ld_out + w] = acc[r][w];
}

// a tile the last columns cut to rows x cols: the same sums in the same order, as a plain loop
inline void product_edge(real* out, size_t ld_out, int rows, int cols, Strided a, size_t r0, const real* b, size_t ld_b, size_t K) {
    for (int r = 0; r < rows; r++)
        for (int w = 0; w < cols; w++) {
            real sum = out[r * ld_out + w];
            for (size_t k = 0; k < K; k++) sum += a.p[(r0 + r) * a.row_stride + k * a.k_stride] * b[k * ld_b + w];
            out[r * ld_out + w] = sum;
        }
}

// out[r][w] += sum_k a(r, k) b[k][w] for r < R, w < W, k < K; a thread per tile
inline void matmul_accumulate(real* out,      // (R, W)
                              Strided a,      // (R, K)
                              const real* b,  // (K, W)
                              size_t R, size_t K, size_t W) {
    size_t row_tiles = (R + TILE_ROWS - 1) / TILE_ROWS, col_tiles = (W + TILE_COLS - 1) / TILE_COLS;
#pragma omp parallel for collapse(2)
    for (size_t rt = 0; rt < row_tiles; rt++)
        for (size_t ct = 0; ct < col_tiles; ct++) {
            size_t r0 = rt * TILE_ROWS, w0 = ct * TILE_COLS;
            int rows = (int)std::min((size_t)TILE_ROWS, R - r0), cols = (int)std::min((size_t)TILE_COLS, W - w0);
            real* out_tile = out + r0 * W + w0;  // out[r0, w0]
            if (rows == TILE_ROWS && cols == TILE_COLS) product_tile<TILE_ROWS, TILE_COLS>(out_tile, W, a, r0, b + w0, W, K);
            else if (cols == TILE_COLS)  // the last rows (or the one row of a KV-cache step): still in vector lanes
                for (int r = 0; r < rows; r++) product_tile<1, TILE_COLS>(out_tile + r * W, W, a, r0 + r, b + w0, W, K);
            else product_edge(out_tile, W, rows, cols, a, r0, b + w0, W, K);
        }
}

// x rounded to the nearest bfloat16 (fp32's sign, 8 exponent bits and top 7 mantissa bits), ties
// to even, as CUDA's __float2bfloat16_rn rounds: a value past bf16's largest becomes infinity,
// infinities stay, NaN stays NaN
HD inline float round_to_bf16(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return x;  // NaN: the carry below could turn it into infinity
    bits += 0x7fffu + ((bits >> 16) & 1);  // just under half the dropped bits' range, one more if the kept part is odd: ties to even
    bits &= 0xffff0000u;
    memcpy(&x, &bits, sizeof x);
    return x;
}

// a product's operand as `precision` reads it: x itself, or (bf16) x rounded
inline real operand(real x, Precision precision) { return precision == PRECISION_BF16 ? (real)round_to_bf16((float)x) : x; }

// the same for a tensor: x itself, or (bf16) a rounded copy made in `copy`
inline const real* product_operand(const real* x, size_t n, Precision precision, std::vector<real>* copy) {
    if (precision != PRECISION_BF16) return x;
    copy->resize(n);
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) (*copy)[i] = operand(x[i], precision);
    return copy->data();
}

// out[n][o] = sum_c inp[n][c] weight[o][c]   (out = inp weight^T; weight is stored (OC, C), so
// it is laid out transposed first, for b's rows to run along the outputs); operands as
// `precision` reads them
inline void matmul_forward(real* out,           // (N, OC)
                           const real* inp,     // (N, C)
                           const real* weight,  // (OC, C)
                           size_t N, int C, int OC, Precision precision) {
    std::vector<real> inp_read, weight_read;
    inp = product_operand(inp, N * C, precision, &inp_read);
    weight = product_operand(weight, (size_t)C * OC, precision, &weight_read);
    std::vector<real> weight_t((size_t)C * OC);  // weight^T: (C, OC)
    for (int o = 0; o < OC; o++)
        for (int c = 0; c < C; c++) weight_t[(size_t)c * OC + o] = weight[(size_t)o * C + c];
    std::fill(out, out + N * OC, real(0));
    matmul_accumulate(out, {inp, (size_t)C, 1}, weight_t.data(), N, C, OC);
}

// forward: out[n][o] = sum_c inp[n][c] weight[o][c], so
//   dinp[n][c] += sum_o dout[n][o] weight[o][c]          dweight[o][c] += sum_n dout[n][o] inp[n][c]
// (the second reads dout transposed: its row o is dout's column o); dout too as `precision` reads it
inline void matmul_backward(real* dinp,          // (N, C)
                            real* dweight,       // (OC, C)
                            const real* dout,    // (N, OC)
                            const real* inp,     // (N, C)
                            const real* weight,  // (OC, C)
                            size_t N, int C, int OC, Precision precision) {
    std::vector<real> dout_read, inp_read, weight_read;
    dout = product_operand(dout, N * OC, precision, &dout_read);
    inp = product_operand(inp, N * C, precision, &inp_read);
    weight = product_operand(weight, (size_t)C * OC, precision, &weight_read);
    matmul_accumulate(dinp, {dout, (size_t)OC, 1}, weight, N, OC, C);
    matmul_accumulate(dweight, {dout, 1, (size_t)OC}, inp, OC, N, C);
}

// The PE's hook on queries and keys, in place, for tokens t >= t0. qkv rows are (q | k | v),
// each C wide with the heads side by side.
inline void rotate_qk_forward(real* qkv,             // (B, T, 3C)
                              const int* positions,  // (B, T), or nullptr: 0 .. T-1
                              const PE& pe, int B, int T, int C, int NH, int t0) {
    int HS = C / NH;
#pragma omp parallel for collapse(2)
    for (int b = 0; b < B; b++)
        for (int t = t0; t < T; t++)
            for (int h = 0; h < NH; h++) {
                real* q = qkv + ((size_t)b * T + t) * 3 * C + h * HS;  // q[b,t,h,:]; k[b,t,h,:] is C further
                pe_rotate(pe, q, position_of(positions, b, t, T), +1, QUERY);
                pe_rotate(pe, q + C, position_of(positions, b, t, T), +1, KEY);
            }
}

// forward: q' = s R(pos) q (s = 1 but for xPos), so dq = s R(pos)^T dq' = s R(-pos) dq' (in
// place; likewise for k; v is untouched)
inline void rotate_qk_backward(real* dqkv,            // (B, T, 3C)
                               const int* positions,  // (B, T), or nullptr: 0 .. T-1
                               const PE& pe, int B, int T, int C, int NH) {
    int HS = C / NH;
#pragma omp parallel for collapse(2)
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < NH; h++) {
                real* dq = dqkv + ((size_t)b * T + t) * 3 * C + h * HS;
                pe_rotate(pe, dq, position_of(positions, b, t, T), -1, QUERY);
                pe_rotate(pe, dq + C, position_of(positions, b, t, T), -1, KEY);
            }
}

// The PE's score bias for every (query i, key j <= i) of the batch, for queries i >= t0, made
// once per forward and read by every layer (made again in each with --pe-per-layer): one
// (NH, T, T) plane, or one per row (planes = B) when the rows carry their own positions
// (--random-positions, --pack). Bias PEs only.
inline void pe_bias_forward(real* bias,            // (planes, NH, T, T)
                            const real* pe_params,  // the PE's learned tensor, if it has one
                            const int* positions,   // (B, T) with planes = B, or nullptr with planes = 1
                            const int* starts,      // (B, T) with packed rows (keys before a query's start get no bias), or nullptr
                            const PE& pe, int planes, int T, int NH, int t0) {
#pragma omp parallel for collapse(3)
    for (int p = 0; p < planes; p++)
        for (int h = 0; h < NH; h++)
            for (int i = t0; i < T; i++) {
                real* row = bias + (((size_t)p * NH + h) * T + i) * T;
                for (int j = sequence_start(starts, p, i, T); j <= i; j++)
                    row[j] = pe_score_bias(pe, pe_params, h, position_of(positions, p, i, T), position_of(positions, p, j, T));
            }
}

// The bias planes' gradient, summed over the layers by the model (pe_bias_plane_backward), into
// the PE's parameters. Each plane adds into its own partial gradient, and the partials are
// added in plane order: the same bits for any number of threads.
inline void pe_bias_backward(real* dpe_params,      // the PE's learned tensor's gradient
                             const real* dbias,     // (planes, NH, T, T)
                             const real* pe_params, // the PE's learned tensor (n_params)
                             const int* positions,  // (B, T) with planes = B, or nullptr with planes = 1
                             const int* starts,     // (B, T) with packed rows, or nullptr
                             const PE& pe, int planes, int T, int NH, size_t n_params) {
    if (n_params == 0) return;
    std::vector<std::vector<real>> partial(planes, std::vector<real>(n_params, 0));
#pragma omp parallel for
    for (int p = 0; p < planes; p++)
        for (int h = 0; h < NH; h++)
            for (int i = 0; i < T; i++) {
                const real* row = dbias + (((size_t)p * NH + h) * T + i) * T;
                for (int j = sequence_start(starts, p, i, T); j <= i; j++)
                    pe_score_bias_backward(pe, pe_params, partial[p].data(), row[j], h, position_of(positions, p, i, T), position_of(positions, p, j, T));
            }
    for (int p = 0; p < planes; p++)
        for (size_t k = 0; k < n_params; k++) dpe_params[k] += partial[p][k];
}

// What one CoPE query reads, the two inputs of pe.h's cope_bias_row: its gate logits,
// logits[j] = q_i . k_j for its keys s <= j <= i (s: its sequence's start, h its head; logits
// (T), q (HS), qkv (B, T, 3C))...
inline void cope_gate_logits(real* logits, const real* q, const real* qkv, int b, int h, int s, int i, int T, int C, int NH) {
    int HS = C / NH;
    for (int j = s; j <= i; j++) logits[j] = dot(q, qkv + ((size_t)b * T + j) * 3 * C + C + h * HS, HS);
}
// ...and z[m] = q_i . e_m for the rows m < cope_rows_read(n, npos) its positions over n keys
// can reach (z (npos), table (npos, HS)). Returns that row count.
inline int cope_table_reads(real* z, const real* q, const real* table, int n, int HS, int npos) {
    int rows = cope_rows_read(n, npos);
    for (int m = 0; m < rows; m++) z[m] = dot(q, table + (size_t)m * HS, HS);
    return rows;
}

// CoPE's bias for one layer, made from its own q and k (pe.h: cope_bias_row), for queries i >= t0:
// one plane per row, read by attention_forward as a bias (for the keys of each query's sequence).
inline void cope_bias_forward(real* bias,         // (B, NH, T, T)
                              const real* qkv,    // (B, T, 3C)
                              const real* table,  // (max_pos, HS)
                              const int* starts,  // (B, T), or nullptr: one sequence a row
                              const PE& pe, int B, int T, int C, int NH, int t0) {
    int HS = C / NH, npos = pe.max_pos;
#pragma omp parallel
    {
        std::vector<real> logits(T), z(npos);
#pragma omp for collapse(3)
        for (int b = 0; b < B; b++)
            for (int h = 0; h < NH; h++)
                for (int i = t0; i < T; i++) {
                    const real* q = qkv + ((size_t)b * T + i) * 3 * C + h * HS;
                    int s = sequence_start(starts, b, i, T);
                    cope_gate_logits(logits.data(), q, qkv, b, h, s, i, T, C, NH);
                    cope_table_reads(z.data(), q, table, i - s + 1, HS, npos);
                    cope_bias_row(bias + (((size_t)b * NH + h) * T + i) * T + s, logits.data() + s, z.data(), i - s + 1, npos);
                }
    }
}

// The gates' and the table's part of the gradient (attention_backward has the scores' own
// q . k): from dscores, the gradient of every score and so of every bias,
//   dq_i += sum_j dlogit_ij k_j + sum_m dz_im e_m    dk_j += dlogit_ij q_i    de_m += dz_im q_i
// Each thread owns a (b, h); its table gradient is a partial, and the partials are added in
// order: the same bits for any number of threads.
inline void cope_bias_backward(real* dqkv,           // (B, T, 3C)
                               real* dtable,         // (max_pos, HS)
                               const real* dscores,  // (B, NH, T, T)
                               const real* qkv,      // (B, T, 3C)
                               const real* table,    // (max_pos, HS)
                               const int* starts,    // (B, T), or nullptr: one sequence a row
                               const PE& pe, int B, int T, int C, int NH) {
    int HS = C / NH, npos = pe.max_pos;
    std::vector<std::vector<real>> partial((size_t)B * NH, std::vector<real>((size_t)npos * HS, 0));
#pragma omp parallel
    {
        std::vector<real> logits(T), z(npos), dlogits(T), dz(npos);
#pragma omp for collapse(2)
        for (int b = 0; b < B; b++)
            for (int h = 0; h < NH; h++)
                for (int i = 0; i < T; i++) {
                    const real* q = qkv + ((size_t)b * T + i) * 3 * C + h * HS;
                    real* dq = dqkv + ((size_t)b * T + i) * 3 * C + h * HS;
                    int s = sequence_start(starts, b, i, T);
                    cope_gate_logits(logits.data(), q, qkv, b, h, s, i, T, C, NH);
                    int rows = cope_table_reads(z.data(), q, table, i - s + 1, HS, npos);
                    std::fill(dz.begin(), dz.begin() + rows, 0);
                    cope_bias_row_backward(dlogits.data() + s, dz.data(), dscores + (((size_t)b * NH + h) * T + i) * T + s, logits.data() + s,
                                           z.data(), i - s + 1, npos);
                    for (int j = s; j <= i; j++) {
                        const real* k = qkv + ((size_t)b * T + j) * 3 * C + C + h * HS;
                        real* dk = dqkv + ((size_t)b * T + j) * 3 * C + C + h * HS;
                        for (int d = 0; d < HS; d++) dq[d] += dlogits[j] * k[d], dk[d] += dlogits[j] * q[d];
                    }
                    real* de = partial[(size_t)b * NH + h].data();
                    for (int m = 0; m < rows; m++)
                        for (int d = 0; d < HS; d++) dq[d] += dz[m] * table[(size_t)m * HS + d], de[(size_t)m * HS + d] += dz[m] * q[d];
                }
    }
    for (const std::vector<real>& de : partial)
        for (size_t k = 0; k < de.size(); k++) dtable[k] += de[k];
}

// CoPE's positions p_ij in one layer, for one sequence of T tokens (a batch of 1: what
// --dump-attention feeds), from that layer's q and k after model_forward.
inline void cope_positions(float* positions,  // (NH, T, T): row i over keys 0..i, zero after
                           const real* qkv,    // (1, T, 3C)
                           int T, int C, int NH) {
    int HS = C / NH;
    std::vector<real> logits(T);
    for (int h = 0; h < NH; h++)
        for (int i = 0; i < T; i++) {
            float* row = positions + ((size_t)h * T + i) * T;
            cope_gate_logits(logits.data(), qkv + (size_t)i * 3 * C + h * HS, qkv, 0, h, 0, i, T, C, NH);
            cope_positions_row(row, logits.data(), i + 1);
            std::fill(row + i + 1, row + T, 0.0f);
        }
}

// Causal attention for query positions i >= t0 (the keys and values of positions < t0 must
// already be in qkv), within each query's sequence, which starts at s (0 unless --pack):
//   att[b,h,i,j] = softmax over s <= j <= i of (q_i . k_j + bias[h,i,j]), 0 for other j
//   out[b,i,h,:] = sum_j dropout(att)[b,h,i,j] v_j
// The products' operands (q, k, v and dropout(att)) as `precision` reads them.
inline void attention_forward(real* out,         // (B, T, C)
                              real* att,         // (B, NH, T, T) probabilities before dropout
                              const real* qkv,   // (B, T, 3C)
                              const real* bias,  // (planes, NH, T, T) from pe_bias_forward, or nullptr
                              int planes,        // 1: one plane for every row; B: one each
                              const int* starts, // (B, T), or nullptr: one sequence a row
                              const Dropout& drop, uint32_t drop_key, int B, int T, int C, int NH, int t0, Precision precision) {
    int HS = C / NH;
    std::vector<real> qkv_read;
    qkv = product_operand(qkv, (size_t)B * T * 3 * C, precision, &qkv_read);
#pragma omp parallel for collapse(3)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int i = t0; i < T; i++) {
                const real* q = qkv + ((size_t)b * T + i) * 3 * C + h * HS;  // q[b,i,h,:]
                size_t row = (((size_t)b * NH + h) * T + i) * T;             // att[b,h,i,:]
                real* a = att + row;
                const real* bias_row = bias ? bias + (((size_t)(planes > 1 ? b : 0) * NH + h) * T + i) * T : nullptr;
                int s = sequence_start(starts, b, i, T);
                real max = -INFINITY;
                for (int j = s; j <= i; j++) {
                    const real* k = qkv + ((size_t)b * T + j) * 3 * C + C + h * HS;  // k[b,j,h,:]
                    a[j] = dot(q, k, HS) + (bias_row ? bias_row[j] : 0);
                    max = std::max(max, a[j]);
                }
                real sum = 0;
                for (int j = s; j <= i; j++) sum += a[j] = std::exp(a[j] - max);
                for (int j = s; j <= i; j++) a[j] /= sum;
                for (int j = 0; j < s; j++) a[j] = 0;
                for (int j = i + 1; j < T; j++) a[j] = 0;

                real* o = out + ((size_t)b * T + i) * C + h * HS;  // out[b,i,h,:]
                for (int d = 0; d < HS; d++) o[d] = 0;
                for (int j = s; j <= i; j++) {
                    real e = operand(a[j] * dropout_factor(drop, drop_key, row + j), precision);
                    const real* v = qkv + ((size_t)b * T + j) * 3 * C + 2 * C + h * HS;  // v[b,j,h,:]
                    for (int d = 0; d < HS; d++) o[d] += e * v[d];
                }
            }
}

// forward, for one (b, h, i): s_j = q_i . k_j + bias(i, j);  a = softmax(s);
//   e_j = a_j m_j / (1 - p) with dropout mask m;  o_i = sum_j e_j v_j.  So
//   de_j = do_i . v_j               dv_j += e_j do_i
//   da_j = de_j m_j / (1 - p)
//   ds_j = a_j (da_j - sum_k a_k da_k)                  (softmax)
//   dq_i += sum_j ds_j k_j          dk_j += ds_j q_i     and ds is the gradient of the bias too
// The products' operands (do, q, k, v, e and ds) as `precision` reads them; dscores holds ds as
// computed. Each thread owns one (b, h): the sums into dk_j and dv_j over i run in a fixed order.
inline void attention_backward(real* dqkv,         // (B, T, 3C)
                               real* dscores,      // (B, NH, T, T) overwritten with d loss / d score
                               const real* dout,   // (B, T, C)
                               const real* qkv,    // (B, T, 3C)
                               const real* att,    // (B, NH, T, T)
                               const int* starts,  // (B, T), or nullptr: one sequence a row
                               const Dropout& drop, uint32_t drop_key,
                               int B, int T, int C, int NH, Precision precision) {
    int HS = C / NH;
    std::vector<real> dout_read, qkv_read;
    dout = product_operand(dout, (size_t)B * T * C, precision, &dout_read);
    qkv = product_operand(qkv, (size_t)B * T * 3 * C, precision, &qkv_read);
#pragma omp parallel for collapse(2)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int i = 0; i < T; i++) {
                size_t row = (((size_t)b * NH + h) * T + i) * T;
                const real* a = att + row;
                real* ds = dscores + row;
                const real* d_o = dout + ((size_t)b * T + i) * C + h * HS;
                const real* q = qkv + ((size_t)b * T + i) * 3 * C + h * HS;
                real* dq = dqkv + ((size_t)b * T + i) * 3 * C + h * HS;
                int s = sequence_start(starts, b, i, T);
                real sum_a_da = 0;
                for (int j = s; j <= i; j++) {
                    real factor = dropout_factor(drop, drop_key, row + j);
                    const real* v = qkv + ((size_t)b * T + j) * 3 * C + 2 * C + h * HS;
                    real* dv = dqkv + ((size_t)b * T + j) * 3 * C + 2 * C + h * HS;
                    real e = operand(a[j] * factor, precision);
                    for (int d = 0; d < HS; d++) dv[d] += e * d_o[d];
                    ds[j] = dot(d_o, v, HS) * factor;  // da_j, for now
                    sum_a_da += a[j] * ds[j];
                }
                for (int j = s; j <= i; j++) {
                    ds[j] = a[j] * (ds[j] - sum_a_da);
                    real ds_read = operand(ds[j], precision);
                    const real* k = qkv + ((size_t)b * T + j) * 3 * C + C + h * HS;
                    real* dk = dqkv + ((size_t)b * T + j) * 3 * C + C + h * HS;
                    for (int d = 0; d < HS; d++) {
                        dq[d] += ds_read * k[d];
                        dk[d] += ds_read * q[d];
                    }
                }
                for (int j = 0; j < s; j++) ds[j] = 0;
                for (int j = i + 1; j < T; j++) ds[j] = 0;
            }
}

// forward: every layer's scores add bias[p,h,i,j] (p = b, or 0 for a shared plane), so
//   dbias[p,h,i,j] += sum over the sequences b reading plane p of dscores[b,h,i,j]
// (this call adds one layer's). Each thread owns a (plane, head, row); b runs in order.
inline void pe_bias_plane_backward(real* dbias,          // (planes, NH, T, T)
                                   const real* dscores,  // (B, NH, T, T)
                                   int planes, int B, int T, int NH) {
#pragma omp parallel for collapse(3)
    for (int p = 0; p < planes; p++)
        for (int h = 0; h < NH; h++)
            for (int i = 0; i < T; i++) {
                real* row = dbias + (((size_t)p * NH + h) * T + i) * T;
                for (int b = (planes > 1 ? p : 0); b < (planes > 1 ? p + 1 : B); b++) {
                    const real* ds = dscores + (((size_t)b * NH + h) * T + i) * T;
                    for (int j = 0; j <= i; j++) row[j] += ds[j];
                }
            }
}

// ----------------------------------------------------------------------------
// --attention fused: the same attention, flash style (Dao et al. 2022), in O(T) memory a row

// The keys are read in tiles of ATTENTION_TILE, aligned to multiples of it from position 0, as a
// GPU kernel holds them in shared memory: a tile wholly before a query's sequence or after the
// query is never read, and in the tiles at the ends the keys outside the sequence are skipped.
static const int ATTENTION_TILE = 32;

// q_i . k_j plus the PE's bias for query position pos_i and key position pos_j, computed here
// (attention_forward reads the same value from pe_bias_forward's plane)
inline real fused_score(const real* q, const real* k, int HS, const PE& pe, const real* pe_params, int h, int pos_i, int pos_j) {
    return dot(q, k, HS) + (pe_has_score_bias(pe.kind) ? pe_score_bias(pe, pe_params, h, pos_i, pos_j) : 0);
}

// attention_forward's attention, a query row at a time over its keys' tiles with an online
// softmax. After each tile the row holds m, its largest score so far, l = sum_j exp(s_j - m)
// and o = sum_j exp(s_j - m) dropout_j v_j over the keys read; a tile that raises m to m' first
// scales l and o by exp(m - m'). At the end out = o / l, and lse = m + log l is all the backward
// needs to make a probability again: a_j = exp(s_j - lse). The products' operands (q, k, v, and
// exp(s_j - m) dropout_j as a tile holds it, before the division by l) as `precision` reads them;
// m, l and o stay fp32.
inline void attention_fused_forward(real* out,              // (B, T, C)
                                    real* lse,              // (B, NH, T) each query row's log-sum-exp of its scores
                                    const real* qkv,        // (B, T, 3C)
                                    const real* pe_params,  // the layer's PE tensor, if the PE has one
                                    const PE& pe,
                                    const int* positions,   // (B, T), or nullptr: token t at position t
                                    const int* starts,      // (B, T), or nullptr: one sequence a row
                                    const Dropout& drop, uint32_t drop_key, int B, int T, int C, int NH, int t0, Precision precision) {
    int HS = C / NH;
    std::vector<real> qkv_read;
    qkv = product_operand(qkv, (size_t)B * T * 3 * C, precision, &qkv_read);
#pragma omp parallel for collapse(3)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int i = t0; i < T; i++) {
                const real* q = qkv + ((size_t)b * T + i) * 3 * C + h * HS;  // q[b,i,h,:]
                size_t row = (((size_t)b * NH + h) * T + i) * T;             // where att[b,h,i,:] would be: dropout's index
                real* o = out + ((size_t)b * T + i) * C + h * HS;            // out[b,i,h,:]
                int s = sequence_start(starts, b, i, T), pos_i = position_of(positions, b, i, T);
                real m = -INFINITY, l = 0;
                for (int d = 0; d < HS; d++) o[d] = 0;
                for (int tile = s / ATTENTION_TILE * ATTENTION_TILE; tile <= i; tile += ATTENTION_TILE) {
                    int first = std::max(tile, s), last = std::min(tile + ATTENTION_TILE - 1, i);
                    real scores[ATTENTION_TILE], tile_max = -INFINITY;
                    for (int j = first; j <= last; j++) {
                        const real* k = qkv + ((size_t)b * T + j) * 3 * C + C + h * HS;  // k[b,j,h,:]
                        scores[j - tile] = fused_score(q, k, HS, pe, pe_params, h, pos_i, position_of(positions, b, j, T));
                        tile_max = std::max(tile_max, scores[j - tile]);
                    }
                    real m_next = std::max(m, tile_max), scale = std::exp(m - m_next);  // 0 on the first tile, where m = -inf
                    l *= scale;
                    for (int d = 0; d < HS; d++) o[d] *= scale;
                    for (int j = first; j <= last; j++) {
                        real e = std::exp(scores[j - tile] - m_next);
                        l += e;
                        e = operand(e * dropout_factor(drop, drop_key, row + j), precision);
                        const real* v = qkv + ((size_t)b * T + j) * 3 * C + 2 * C + h * HS;  // v[b,j,h,:]
                        for (int d = 0; d < HS; d++) o[d] += e * v[d];
                    }
                    m = m_next;
                }
                for (int d = 0; d < HS; d++) o[d] /= l;
                lse[((size_t)b * NH + h) * T + i] = m + std::log(l);
            }
}

// attention_backward's formulas with each probability made again, a_j = exp(s_j - lse_i), and
// the softmax's one sum over a row's keys known before any key is read:
//   sum_j a_j da_j = sum_j a_j m_j / (1 - p) do_i . v_j = do_i . o_i   (D; o_i holds the dropout)
// So, key by key:
//   dv_j += a_j m_j / (1 - p) do_i     da_j = do_i . v_j m_j / (1 - p)     ds_j = a_j (da_j - D)
//   dq_i += ds_j k_j     dk_j += ds_j q_i     dparams += ds_j d bias(i, j) / d params   (pe.h)
// The products' operands as attention_backward reads them (D from do as read and o as it is);
// the PE's gradient from ds as computed. Each thread owns one (b, h), as there: the sums into
// dk_j and dv_j over i run in a fixed order, and its PE gradient is a partial, the partials
// added in (b, h) order.
inline void attention_fused_backward(real* dqkv,             // (B, T, 3C)
                                     real* dpe_params,       // the layer's PE tensor's gradient, added to
                                     const real* dout,       // (B, T, C)
                                     const real* qkv,        // (B, T, 3C)
                                     const real* out,        // (B, T, C) the forward's output
                                     const real* lse,        // (B, NH, T)
                                     const real* pe_params,  // the layer's PE tensor, if the PE has one
                                     size_t n_pe_params,     // its size, or 0 when its bias has no parameters
                                     const PE& pe,
                                     const int* positions,   // (B, T), or nullptr: token t at position t
                                     const int* starts,      // (B, T), or nullptr: one sequence a row
                                     const Dropout& drop, uint32_t drop_key, int B, int T, int C, int NH, Precision precision) {
    int HS = C / NH;
    std::vector<real> dout_read, qkv_read;
    dout = product_operand(dout, (size_t)B * T * C, precision, &dout_read);
    qkv = product_operand(qkv, (size_t)B * T * 3 * C, precision, &qkv_read);
    std::vector<std::vector<real>> partial((size_t)B * NH, std::vector<real>(n_pe_params, 0));
#pragma omp parallel for collapse(2)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int i = 0; i < T; i++) {
                size_t row = (((size_t)b * NH + h) * T + i) * T;
                const real* d_o = dout + ((size_t)b * T + i) * C + h * HS;
                const real* q = qkv + ((size_t)b * T + i) * 3 * C + h * HS;
                real* dq = dqkv + ((size_t)b * T + i) * 3 * C + h * HS;
                real* dparams = partial[(size_t)b * NH + h].data();
                int s = sequence_start(starts, b, i, T), pos_i = position_of(positions, b, i, T);
                real row_lse = lse[((size_t)b * NH + h) * T + i];
                real D = dot(d_o, out + ((size_t)b * T + i) * C + h * HS, HS);
                for (int j = s; j <= i; j++) {
                    const real* k = qkv + ((size_t)b * T + j) * 3 * C + C + h * HS;
                    const real* v = k + C;
                    real* dk = dqkv + ((size_t)b * T + j) * 3 * C + C + h * HS;
                    real* dv = dk + C;
                    int pos_j = position_of(positions, b, j, T);
                    real a = std::exp(fused_score(q, k, HS, pe, pe_params, h, pos_i, pos_j) - row_lse);
                    real factor = dropout_factor(drop, drop_key, row + j), e = operand(a * factor, precision);
                    for (int d = 0; d < HS; d++) dv[d] += e * d_o[d];
                    real ds = a * (dot(d_o, v, HS) * factor - D), ds_read = operand(ds, precision);
                    for (int d = 0; d < HS; d++) {
                        dq[d] += ds_read * k[d];
                        dk[d] += ds_read * q[d];
                    }
                    if (n_pe_params) pe_score_bias_backward(pe, pe_params, dparams, ds, h, pos_i, pos_j);
                }
            }
    for (const std::vector<real>& p : partial)
        for (size_t k = 0; k < n_pe_params; k++) dpe_params[k] += p[k];
}

// out = dropout(max(inp, 0)): the feed-forward block's hidden layer
inline void relu_dropout_forward(real* out, const real* inp, const Dropout& d, uint32_t key, size_t n) {
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0 ? inp[i] * dropout_factor(d, key, i) : 0;
}

// forward: out = max(inp, 0) * mask / (1 - p), so dinp += dout * mask / (1 - p) where inp > 0
inline void relu_dropout_backward(real* dinp, const real* dout, const real* inp, const Dropout& d, uint32_t key, size_t n) {
#pragma omp parallel for
    for (size_t i = 0; i < n; i++)
        if (inp[i] > 0) dinp[i] += dout[i] * dropout_factor(d, key, i);
}

// out = a + b: a residual connection
inline void residual_forward(real* out, const real* a, const real* b, size_t n) {
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}
// (its backward passes the gradient to both inputs unchanged; the model does that in place)

// Mean cross-entropy over the rows that have a target (-1: no loss at that position). Rows are
// computed independently, then summed in row order.
inline double crossentropy_forward(const real* logits,  // (N, V)
                                   const int* targets,  // (N)
                                   size_t N, int V) {
    std::vector<double> losses(N, 0.0);
#pragma omp parallel for
    for (size_t n = 0; n < N; n++) {
        if (targets[n] < 0) continue;
        const real* z = logits + n * V;
        double max = *std::max_element(z, z + V), sum = 0;
        for (int v = 0; v < V; v++) sum += exp(z[v] - max);
        losses[n] = log(sum) + max - z[targets[n]];
    }
    double total = 0;
    size_t count = 0;
    for (size_t n = 0; n < N; n++) total += losses[n], count += targets[n] >= 0;
    return count ? total / count : 0.0;
}

// forward: loss = mean over the `count` target rows of -log softmax(z)[target], so
//   dz_v += (softmax(z)_v - [v == target]) / count on target rows
inline void crossentropy_backward(real* dlogits,       // (N, V)
                                  const real* logits,  // (N, V)
                                  const int* targets,  // (N)
                                  size_t N, int V, size_t count) {
#pragma omp parallel for
    for (size_t n = 0; n < N; n++) {
        if (targets[n] < 0) continue;
        const real* z = logits + n * V;
        real* dz = dlogits + n * V;
        double max = *std::max_element(z, z + V), sum = 0;
        for (int v = 0; v < V; v++) sum += exp(z[v] - max);
        for (int v = 0; v < V; v++) dz[v] += (real)((exp(z[v] - max) / sum - (v == targets[n])) / count);
    }
}

// ----------------------------------------------------------------------------
// activations: a table too, each sized for the largest batch the model was made for

enum ActId {
    A_RES_IN, A_LN1, A_LN1_RSTD, A_QKV, A_ATT, A_LSE, A_ATTY, A_RES_MID, A_LN2, A_LN2_RSTD, A_FC, A_FC_ACT,  // per layer
    A_RES_OUT, A_LNF, A_LNF_RSTD, A_HEAD_IN, A_LOGITS, A_BRANCH, A_PE_BIAS,                         // model-wide
    A_D_LOGITS, A_D_HEAD_IN, A_D_RES, A_D_BRANCH, A_D_LN, A_D_FC_ACT, A_D_FC, A_D_ATTY, A_D_QKV,    // backward
    A_D_SCORES, A_D_PE_BIAS, NUM_ACTS
};
enum ActShape { S_BT, S_BTC, S_BT3C, S_BTF, S_BTV, S_BNHTT, S_BNHT, S_BIAS, S_DBIAS };

struct ActSpec {
    const char* name;
    bool per_layer;
    ActShape shape;
};

static const ActSpec ACTS[NUM_ACTS] = {
    {"res_in", true, S_BTC},      // residual stream entering the layer
    {"ln1", true, S_BTC},         {"ln1_rstd", true, S_BT},
    {"qkv", true, S_BT3C},        // q and k (after the PE's rotation) and v, heads side by side
    {"att", true, S_BNHTT},       // attention probabilities, before dropout (--attention simple)
    {"lse", true, S_BNHT},        // each query row's log-sum-exp of its scores (--attention fused, in place of att)
    {"atty", true, S_BTC},        // attention output, heads concatenated, before Wo
    {"res_mid", true, S_BTC},     // residual stream after the attention block
    {"ln2", true, S_BTC},         {"ln2_rstd", true, S_BT},
    {"fc", true, S_BTF},          // W1's output, before ReLU
    {"fc_act", true, S_BTF},      // after ReLU and dropout: W2's input
    {"res_out", false, S_BTC},    // residual stream after the last layer
    {"lnf", false, S_BTC},        {"lnf_rstd", false, S_BT},
    {"head_in", false, S_BTC},    // dropout(lnf) * C^-0.5: the LM head's input
    {"logits", false, S_BTV},
    {"branch", false, S_BTC},     // a block's output before it joins the residual stream
    {"pe_bias", false, S_BIAS},   // the PE's score bias (--attention simple), (planes, NH, T, T): pe_bias_forward (in layer 0, or every layer's
                                  // own with --pe-per-layer), or the layer's cope_bias_forward
    {"d_logits", false, S_BTV},   {"d_head_in", false, S_BTC},
    {"d_res", false, S_BTC},      // gradient of the residual stream, carried down the layers
    {"d_branch", false, S_BTC},   // gradient of a block's output (and of dropout(lnf))
    {"d_ln", false, S_BTC},       // gradient of an RMSNorm's output
    {"d_fc_act", false, S_BTF},   {"d_fc", false, S_BTF},     {"d_atty", false, S_BTC},
    {"d_qkv", false, S_BT3C},     {"d_scores", false, S_BNHTT},
    {"d_pe_bias", false, S_DBIAS},  // the score bias planes' gradient, summed over the layers that share a PE tensor
};

// bias planes: one per row when the rows carry their own positions (drawn, or packed sequences:
// each row has its own distances) or when the bias comes from the row itself (CoPE), else one
// for the batch. planes_for is a batch's count, bias_planes the most any batch needs.
inline int planes_for(const ModelConfig& c, const int* positions, int B) { return positions || pe_has_context_bias(c.pe) ? B : 1; }
inline int bias_planes(const ModelConfig& c, int B) { return c.positions_per_row() || pe_has_context_bias(c.pe) ? B : 1; }

// The (T, T) shapes (probabilities, scores' gradients, bias planes) exist with --attention simple
// only, the log-sum-exps with fused only.
inline size_t act_numel(const ModelConfig& c, ActShape s, int B, int T) {
    size_t BT = (size_t)B * T;
    bool simple = c.attention == ATTENTION_SIMPLE;
    switch (s) {
        case S_BT: return BT;
        case S_BTC: return BT * c.C;
        case S_BT3C: return BT * 3 * c.C;
        case S_BTF: return BT * c.F;
        case S_BTV: return BT * c.V;
        case S_BNHTT: return simple ? BT * c.NH * T : 0;
        case S_BNHT: return simple ? 0 : BT * c.NH;
        case S_BIAS: return simple && (pe_has_score_bias(c.pe) || pe_has_context_bias(c.pe)) ? (size_t)bias_planes(c, B) * c.NH * T * T : 0;
        default: return simple && pe_has_score_bias(c.pe) ? (size_t)bias_planes(c, B) * c.NH * T * T : 0;  // S_DBIAS
    }
}

// ----------------------------------------------------------------------------
// the model

struct Model {
    ModelConfig config;
    Layout layout;
    PETables pe_tables;
    std::vector<real> params, grads, adam_m, adam_v;  // each layout.total long
    int max_B;                                        // activations hold batches up to (max_B, max_T)
    std::vector<real> acts[NUM_ACTS];
    std::vector<unsigned char> is_digit;              // (V) with --abacus or --position-coupling: which tokens are digits, from the task
    std::vector<int> coupled_positions;               // (B, T) with --position-coupling: the last forward's positions
    std::vector<real> window_bias;                    // (B, NH, T, T) with --attention-window: a windowed layer's bias, made anew for each
    // an analysis's edit of the residual stream (B, T, C) entering layer `layer` (L: leaving the
    // last) in model_forward, at t0 = 0 only (dev/place_patch); empty in training and evaluation
    std::function<void(int layer, real* residual)> edit_residual;

    PE pe() const { return pe_view(pe_tables); }  // a view, made on demand so a copied Model stays valid
    real* param(int id, int layer = 0) { return params.data() + layout.at(id, layer); }
    real* grad(int id, int layer = 0) { return grads.data() + layout.at(id, layer); }
    // Per-layer activations sit at a fixed stride (their size at (max_B, max_T)), so a layer's
    // keys and values stay where they are while generation grows T.
    real* act(int id, int layer = 0) { return acts[id].data() + (ACTS[id].per_layer ? layer * (acts[id].size() / config.L) : 0); }
};

static_assert(P_WK == P_WQ + 1 && P_WV == P_WQ + 2, "wq, wk, wv must be adjacent: one (3C, C) matmul reads them");

// Parameters are drawn from `seed`, each tensor of each layer from its own stream (named after
// it), so adding a tensor to the table never changes another's values.
// The bytes model_init allocates: four copies of the parameters (values, gradients, AdamW m and
// v) and the activations of a (max_B, max_T) batch; in double, as absurd sizes overflow size_t.
inline double model_bytes(const ModelConfig& c, int max_B) {
    double bytes = 4.0 * make_layout(c).total * sizeof(real);
    for (int id = 0; id < NUM_ACTS; id++) bytes += (double)act_numel(c, ACTS[id].shape, max_B, c.max_T) * (ACTS[id].per_layer ? c.L : 1) * sizeof(real);
    return bytes;
}

inline void model_init(Model* m, const ModelConfig& c, int max_B, uint64_t seed) {
    validate_model_config(c);
    m->config = c;
    m->layout = make_layout(c);
    m->pe_tables = make_pe_tables(c.pe, c.C, c.NH, rope_dims(c.HS(), c.rope_frac), c.max_pos());
    m->params.assign(m->layout.total, 0);
    m->grads.assign(m->layout.total, 0);
    m->adam_m.assign(m->layout.total, 0);
    m->adam_v.assign(m->layout.total, 0);
    for (int id = 0; id < NUM_PARAMS; id++)
        for (int l = 0; l < param_copies(c, id); l++) {
            real* p = m->param(id, l);
            Rng rng = rng_stream(seed, hash_string(PARAMS[id].name), l);
            if (id == P_PE_TABLE) pe_init_params(c.pe, p, c.C, c.NH, c.max_pos(), &rng);
            else
                for (size_t i = 0; i < param_numel(c, id); i++) p[i] = PARAMS[id].init_std ? (real)(rng.normal() * PARAMS[id].init_std(c)) : 1;
        }
    m->max_B = max_B;
    for (int id = 0; id < NUM_ACTS; id++)
        m->acts[id].assign(act_numel(c, ACTS[id].shape, max_B, c.max_T) * (ACTS[id].per_layer ? c.L : 1), 0);
}

// --position-coupling: every token's position from the digits before it (pe.h), into
// m->coupled_positions (B, T); a sequence starts at its offset (B) when training draws one, else at 0
inline const int* couple_positions(Model* m, const int* tokens, const int* offsets, int B, int T) {
    m->coupled_positions.resize((size_t)B * T);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            m->coupled_positions[(size_t)b * T + t] = coupled_position(tokens + (size_t)b * T, m->is_digit.data(), t, offsets ? offsets[b] : 0);
    return m->coupled_positions.data();
}

// --attention-window: a windowed layer's bias, a plane per row: the PE's bias (or 0) on the
// keys in a query's window, its window latest tokens (with :sink, and its sequence's first),
// and -infinity on the others, which softmax then gives nothing. With :prompt, the answer's
// queries keep every key. A key keeps its distance: the window masks, it does not shift; but
// :near gives the first token outside the window the bias of the key just before the window
// (at distance window where positions are 0..n-1; drawn positions keep their own gaps).
// bias: (planes, NH, T, T) or nullptr; the result (B, NH, T, T), in m.
inline const real* window_bias(Model* m, const real* bias, int planes, const int* starts, const int* prompt_lens, int B, int T) {
    const ModelConfig& c = m->config;
    if (c.window_prompt && !prompt_lens) fail("internal error: --attention-window L:W:prompt without the prompts' lengths");
    m->window_bias.resize((size_t)B * c.NH * T * T);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < c.NH; h++)
            for (int i = 0; i < T; i++) {
                const real* pe_row = bias ? bias + (((size_t)(planes > 1 ? b : 0) * c.NH + h) * T + i) * T : nullptr;
                real* row = m->window_bias.data() + (((size_t)b * c.NH + h) * T + i) * T;
                bool windowed = !c.window_prompt || i < prompt_lens[b];
                int first = sequence_start(starts, b, i, T);
                for (int j = 0; j < T; j++) {
                    bool in_window = !windowed || j > i - c.window, sink = c.window_sink && j == first;
                    int biased_as = sink && !in_window && c.window_near ? i - c.window : j;
                    row[j] = in_window || sink ? (pe_row ? pe_row[biased_as] : 0) : -INFINITY;
                }
            }
    return m->window_bias.data();
}

// Where a batch's tokens sit, when not each row one sequence at positions 0 .. T-1 (the
// default: every pointer nullptr). Training sets them; evaluation the positions it draws
// (--eval-positions drawn) and the prompts' lengths, generation the prompt's length (both read
// only by a window over the prompt).
struct TokenPlaces {
    // (B, T) each token's position: drawn (--random-positions), or counted from its sequence's
    // start (--pack). The model must be made with a bias plane per row for these (bias_planes);
    // a coupled model computes its own (couple_positions).
    const int* positions = nullptr;
    const int* place_offsets = nullptr;  // (B) each sequence's shift of its Abacus places or coupled positions
    const int* starts = nullptr;         // (B, T) where each token's sequence starts in its row (--pack)
    const int* prompt_lens = nullptr;    // (B) each row's prompt, for --attention-window L:W:prompt
};

// Runs the model on tokens (B, T) for positions t0 .. T-1 and returns the mean cross-entropy
// over positions whose target is >= 0 (0 without targets); logits land in act(A_LOGITS).
// t0 > 0 is for generation only (B = 1, no dropout): positions before t0 were computed by earlier
// calls, and their keys and values in act(A_QKV) are the KV cache.
inline double model_forward(Model* m, const int* tokens, const int* targets, int B, int T, const Dropout& drop, int t0 = 0,
                            const TokenPlaces& places = TokenPlaces()) {
    const ModelConfig& c = m->config;
    int C = c.C, NH = c.NH, F = c.F, V = c.V;
    if (B > m->max_B || T > c.max_T || (t0 > 0 && (B != 1 || drop.p > 0)))
        fail("internal error: model_forward(B %d, T %d, t0 %d) does not fit its buffers (%d, %d)", B, T, t0, m->max_B, c.max_T);
    const int *positions = places.positions, *place_offsets = places.place_offsets, *starts = places.starts;
    if (positions && !c.positions_per_row()) fail("internal error: model_forward with given positions, but the model has one bias plane");
    if (m->edit_residual && t0 > 0) fail("internal error: an edit of the residual stream with the KV cache, which would miss the cached rows");
    if ((c.abacus || c.position_coupling) && m->is_digit.size() != (size_t)c.V)
        fail("internal error: an Abacus or coupled model needs its vocabulary's digits");
    if (c.position_coupling) positions = couple_positions(m, tokens, place_offsets, B, T);
    size_t BT = (size_t)B * T, rows = BT - t0, row0 = t0;  // row-wise layers compute rows t0 .. BT-1 (row0: t0 for offsets, in size_t)
    auto A = [&](int id, int l = 0) { return m->act(id, l); };
    int planes = planes_for(c, positions, B);

    embedding_forward(A(A_RES_IN), tokens, positions, m->param(P_WTE), m->param(P_PE_TABLE), m->pe(), B, T, C, t0);
    if (c.abacus) abacus_forward(A(A_RES_IN), tokens, place_offsets, m->param(P_ABACUS), m->is_digit.data(), B, T, C, t0);
    const real* bias = pe_has_score_bias(c.pe) || pe_has_context_bias(c.pe) ? A(A_PE_BIAS) : nullptr;
    dropout_forward(A(A_RES_IN), A(A_RES_IN), drop, drop.key(SITE_EMBED), BT * C);
    for (int l = 0; l < c.L; l++) {
        real* res_in = A(A_RES_IN, l);
        real* res_mid = A(A_RES_MID, l);
        real* res_out = l + 1 < c.L ? A(A_RES_IN, l + 1) : A(A_RES_OUT);
        real* branch = A(A_BRANCH);
        if (m->edit_residual) m->edit_residual(l, res_in);
        // attention block: res_mid = res_in + dropout(attention(rmsnorm(res_in)) Wo^T)
        rmsnorm_forward(A(A_LN1, l) + row0 * C, A(A_LN1_RSTD, l) + t0, res_in + row0 * C, m->param(P_LN1, l), rows, C);
        matmul_forward(A(A_QKV, l) + row0 * 3 * C, A(A_LN1, l) + row0 * C, m->param(P_WQ, l), rows, C, 3 * C, c.precision);
        rotate_qk_forward(A(A_QKV, l), positions, m->pe(), B, T, C, NH, t0);
        if (c.attention == ATTENTION_FUSED) {  // each score's bias made where it is used
            attention_fused_forward(A(A_ATTY, l), A(A_LSE, l), A(A_QKV, l), m->param(P_PE_TABLE, l), m->pe(), positions, starts, drop,
                                    drop.key(SITE_ATTN_PROBS, l), B, T, C, NH, t0, c.precision);
        } else {
            // the bias planes: made once for every layer, or per layer from its own PE parameters
            if (pe_has_score_bias(c.pe) && (l == 0 || c.pe_per_layer))
                pe_bias_forward(A(A_PE_BIAS), m->param(P_PE_TABLE, l), positions, starts, m->pe(), planes, T, NH, t0);
            if (pe_has_context_bias(c.pe)) cope_bias_forward(A(A_PE_BIAS), A(A_QKV, l), m->param(P_PE_TABLE, l), starts, m->pe(), B, T, C, NH, t0);
            if (c.windowed(l))
                attention_forward(A(A_ATTY, l), A(A_ATT, l), A(A_QKV, l), window_bias(m, bias, planes, starts, places.prompt_lens, B, T), B,
                                  starts, drop, drop.key(SITE_ATTN_PROBS, l), B, T, C, NH, t0, c.precision);
            else
                attention_forward(A(A_ATTY, l), A(A_ATT, l), A(A_QKV, l), bias, planes, starts, drop, drop.key(SITE_ATTN_PROBS, l), B, T, C, NH, t0,
                                  c.precision);
        }
        matmul_forward(branch + row0 * C, A(A_ATTY, l) + row0 * C, m->param(P_WO, l), rows, C, C, c.precision);
        dropout_forward(branch, branch, drop, drop.key(SITE_ATTN_OUT, l), BT * C);
        residual_forward(res_mid + row0 * C, res_in + row0 * C, branch + row0 * C, rows * C);
        // feed-forward block: res_out = res_mid + dropout(dropout(relu(rmsnorm(res_mid) W1^T)) W2^T)
        rmsnorm_forward(A(A_LN2, l) + row0 * C, A(A_LN2_RSTD, l) + t0, res_mid + row0 * C, m->param(P_LN2, l), rows, C);
        matmul_forward(A(A_FC, l) + row0 * F, A(A_LN2, l) + row0 * C, m->param(P_W1, l), rows, C, F, c.precision);
        relu_dropout_forward(A(A_FC_ACT, l), A(A_FC, l), drop, drop.key(SITE_FFN_HIDDEN, l), BT * F);
        matmul_forward(branch + row0 * C, A(A_FC_ACT, l) + row0 * F, m->param(P_W2, l), rows, F, C, c.precision);
        dropout_forward(branch, branch, drop, drop.key(SITE_FFN_OUT, l), BT * C);
        residual_forward(res_out + row0 * C, res_mid + row0 * C, branch + row0 * C, rows * C);
    }
    if (m->edit_residual) m->edit_residual(c.L, A(A_RES_OUT));
    // LM head: logits = (dropout(rmsnorm(h)) * C^-0.5) wte^T
    rmsnorm_forward(A(A_LNF) + row0 * C, A(A_LNF_RSTD) + t0, A(A_RES_OUT) + row0 * C, m->param(P_LNF), rows, C);
    dropout_forward(A(A_HEAD_IN), A(A_LNF), drop, drop.key(SITE_FINAL), BT * C, (real)(1.0 / sqrt(C)));
    matmul_forward(A(A_LOGITS) + row0 * V, A(A_HEAD_IN) + row0 * C, m->param(P_WTE), rows, C, V, c.precision);
    return targets ? crossentropy_forward(A(A_LOGITS), targets, BT, V) : 0.0;
}

// The gradient of the last model_forward's loss (same tokens, targets, dropout and places,
// t0 = 0) with respect to every parameter, into m->grads (overwritten). The layers in reverse
// order.
// loss_tokens: what the summed loss is divided by; 0 for the batch's own count of targets (the
// mean, whose value model_forward returns). --sort-pool passes its pool's mean count per batch,
// so that a token weighs the same in a batch of short examples as in one of long ones.
inline void model_backward(Model* m, const int* tokens, const int* targets, int B, int T, const Dropout& drop,
                           const TokenPlaces& places = TokenPlaces(), size_t loss_tokens = 0) {
    const ModelConfig& c = m->config;
    if (c.window_from >= 0) fail("internal error: model_backward with --attention-window, which is evaluation only");
    if (m->edit_residual) fail("internal error: model_backward after an edit of the residual stream, which is analysis only");
    const int *positions = places.positions, *place_offsets = places.place_offsets, *starts = places.starts;
    if (c.position_coupling) positions = m->coupled_positions.data();  // as the forward computed them
    int C = c.C, NH = c.NH, F = c.F, V = c.V;
    size_t BT = (size_t)B * T;
    int planes = planes_for(c, positions, B);
    auto A = [&](int id, int l = 0) { return m->act(id, l); };
    auto zeroed = [&](int id) {
        std::fill(m->acts[id].begin(), m->acts[id].begin() + act_numel(c, ACTS[id].shape, B, T), 0);
        return m->act(id);
    };
    std::fill(m->grads.begin(), m->grads.end(), 0);
    size_t count = 0;
    for (size_t n = 0; n < BT; n++) count += targets[n] >= 0;
    if (count == 0) return;

    // LM head
    crossentropy_backward(zeroed(A_D_LOGITS), A(A_LOGITS), targets, BT, V, loss_tokens ? loss_tokens : count);
    matmul_backward(zeroed(A_D_HEAD_IN), m->grad(P_WTE), A(A_D_LOGITS), A(A_HEAD_IN), m->param(P_WTE), BT, C, V, c.precision);
    dropout_backward(zeroed(A_D_LN), A(A_D_HEAD_IN), drop, drop.key(SITE_FINAL), BT * C, (real)(1.0 / sqrt(C)));
    rmsnorm_backward(zeroed(A_D_RES), m->grad(P_LNF), A(A_D_LN), A(A_RES_OUT), m->param(P_LNF), A(A_LNF_RSTD), BT, C);
    real* dbias = zeroed(A_D_PE_BIAS);  // the layers that read one PE tensor add their parts (nothing without a bias PE)

    // d_res holds d loss / d (residual stream leaving layer l); each block's residual connection
    // passes it on unchanged, and the block's branch adds its own part
    for (int l = c.L - 1; l >= 0; l--) {
        real* res_in = A(A_RES_IN, l);
        real* res_mid = A(A_RES_MID, l);
        // feed-forward block
        dropout_backward(zeroed(A_D_BRANCH), A(A_D_RES), drop, drop.key(SITE_FFN_OUT, l), BT * C);
        matmul_backward(zeroed(A_D_FC_ACT), m->grad(P_W2, l), A(A_D_BRANCH), A(A_FC_ACT, l), m->param(P_W2, l), BT, F, C, c.precision);
        relu_dropout_backward(zeroed(A_D_FC), A(A_D_FC_ACT), A(A_FC, l), drop, drop.key(SITE_FFN_HIDDEN, l), BT * F);
        matmul_backward(zeroed(A_D_LN), m->grad(P_W1, l), A(A_D_FC), A(A_LN2, l), m->param(P_W1, l), BT, C, F, c.precision);
        rmsnorm_backward(A(A_D_RES), m->grad(P_LN2, l), A(A_D_LN), res_mid, m->param(P_LN2, l), A(A_LN2_RSTD, l), BT, C);
        // attention block
        dropout_backward(zeroed(A_D_BRANCH), A(A_D_RES), drop, drop.key(SITE_ATTN_OUT, l), BT * C);
        matmul_backward(zeroed(A_D_ATTY), m->grad(P_WO, l), A(A_D_BRANCH), A(A_ATTY, l), m->param(P_WO, l), BT, C, C, c.precision);
        if (c.attention == ATTENTION_FUSED) {  // the bias's gradient straight into the layer's PE tensor's
            attention_fused_backward(zeroed(A_D_QKV), m->grad(P_PE_TABLE, l), A(A_D_ATTY), A(A_QKV, l), A(A_ATTY, l), A(A_LSE, l),
                                     m->param(P_PE_TABLE, l), pe_has_score_bias(c.pe) ? param_numel(c, P_PE_TABLE) : 0, m->pe(), positions,
                                     starts, drop, drop.key(SITE_ATTN_PROBS, l), B, T, C, NH, c.precision);
        } else {
            attention_backward(zeroed(A_D_QKV), A(A_D_SCORES), A(A_D_ATTY), A(A_QKV, l), A(A_ATT, l), starts, drop,
                               drop.key(SITE_ATTN_PROBS, l), B, T, C, NH, c.precision);
            if (pe_has_score_bias(c.pe)) {
                pe_bias_plane_backward(dbias, A(A_D_SCORES), planes, B, T, NH);
                // the planes' PE tensor, once its last reader is done: layer 0 for all, or each layer's own
                if (l == 0 || c.pe_per_layer) {
                    pe_bias_backward(m->grad(P_PE_TABLE, l), dbias, m->param(P_PE_TABLE, l), positions, starts, m->pe(), planes, T, NH,
                                     param_numel(c, P_PE_TABLE));
                    if (l > 0) dbias = zeroed(A_D_PE_BIAS);
                }
            }
            if (pe_has_context_bias(c.pe))
                cope_bias_backward(A(A_D_QKV), m->grad(P_PE_TABLE, l), A(A_D_SCORES), A(A_QKV, l), m->param(P_PE_TABLE, l), starts, m->pe(), B, T,
                                   C, NH);
        }
        rotate_qk_backward(A(A_D_QKV), positions, m->pe(), B, T, C, NH);
        matmul_backward(zeroed(A_D_LN), m->grad(P_WQ, l), A(A_D_QKV), A(A_LN1, l), m->param(P_WQ, l), BT, C, 3 * C, c.precision);
        rmsnorm_backward(A(A_D_RES), m->grad(P_LN1, l), A(A_D_LN), res_in, m->param(P_LN1, l), A(A_LN1_RSTD, l), BT, C);
    }
    // embedding: res_in[0] = dropout(wte[tokens] + PE input + Abacus rows)
    dropout_backward(zeroed(A_D_BRANCH), A(A_D_RES), drop, drop.key(SITE_EMBED), BT * C);
    embedding_backward(m->grad(P_WTE), m->grad(P_PE_TABLE), A(A_D_BRANCH), tokens, positions, m->pe(), B, T, C);
    if (c.abacus) abacus_backward(m->grad(P_ABACUS), A(A_D_BRANCH), tokens, place_offsets, m->is_digit.data(), B, T, C);
}

// the index of the largest value; the first on a tie, as torch.argmax and greedy decoding do
inline int argmax(const real* x, int n) { return (int)(std::max_element(x, x + n) - x); }

// Greedy decoding with the KV cache: the prompt in one pass, then one position per call, each
// reading the keys and values that earlier calls left in act(A_QKV). Returns the generated
// tokens: up to and including `eos`, or until the sequence fills max_T. prompt_len: how many of
// the tokens given are the task's prompt (-1: all), for a window over the prompt alone.
inline std::vector<int> generate_greedy(Model* m, const std::vector<int>& prompt, int eos, int prompt_len = -1) {
    if (prompt.empty()) fail("internal error: greedy decoding of an empty prompt, which has no last token to predict from");
    std::vector<int> tokens = prompt, generated;
    int V = m->config.V;
    TokenPlaces places;
    if (prompt_len < 0) prompt_len = (int)prompt.size();
    places.prompt_lens = &prompt_len;
    for (int t0 = 0; (int)tokens.size() < m->config.max_T; t0 = (int)tokens.size() - 1) {
        model_forward(m, tokens.data(), nullptr, 1, (int)tokens.size(), NO_DROPOUT, t0, places);
        int next = argmax(m->act(A_LOGITS) + (tokens.size() - 1) * V, V);
        generated.push_back(next);
        if (next == eos) break;
        tokens.push_back(next);
    }
    return generated;
}

// ----------------------------------------------------------------------------
// optimisation: HF transformers 4.16's AdamW, schedule and clipping, as the paper ran them

struct OptimConfig {
    int steps;
    double lr = 3e-5, lr_end = 1e-7;
    double warmup_frac = 0.06;
    double weight_decay = 0.05;
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

// The learning rate of update `step` (0-based): linear warmup from 0 over ceil(6% of the steps),
// then linear decay to lr_end at the end (get_polynomial_decay_schedule_with_warmup, power 1).
// Like HF's, update 0 has learning rate 0.
inline double lr_at(const OptimConfig& o, int step) {
    int warmup = (int)ceil(o.warmup_frac * o.steps);
    if (step < warmup) return o.lr * step / std::max(1, warmup);
    if (step >= o.steps) return o.lr_end;
    double remaining = 1.0 - (double)(step - warmup) / (o.steps - warmup);
    return (o.lr - o.lr_end) * remaining + o.lr_end;
}

// sum of squares in fixed chunks, each summed in order, then the chunks in order: the same
// bits whatever the number of threads
inline double sum_of_squares(const real* x, size_t n) {
    const size_t chunk = 1 << 16;
    std::vector<double> partial((n + chunk - 1) / chunk, 0.0);
#pragma omp parallel for
    for (size_t k = 0; k < partial.size(); k++)
        for (size_t i = k * chunk; i < std::min(n, (k + 1) * chunk); i++) partial[k] += (double)x[i] * x[i];
    double total = 0;
    for (double p : partial) total += p;
    return total;
}

// the gradient's global L2 norm, over every tensor
inline double gradient_norm(const Model& m) { return sqrt(sum_of_squares(m.grads.data(), m.grads.size())); }

// Scales the gradient down to a global L2 norm of max_norm if its norm (gradient_norm) is
// larger (torch's clip_grad_norm_).
inline void clip_gradients(Model* m, double max_norm, double norm) {
    double coef = max_norm / (norm + 1e-6);
    if (coef < 1) {
#pragma omp parallel for
        for (size_t i = 0; i < m->grads.size(); i++) m->grads[i] *= (real)coef;
    }
}

// update t (1-based):  m = b1 m + (1 - b1) g;   v = b2 v + (1 - b2) g^2
//   p -= lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + eps)    (eps outside the bias correction)
//   p -= lr wd p                                               (decoupled decay, after the step)
// A PE's parameters with a range (KERPLE's) are clamped into it first, as the official code
// clamps them before each forward: the update moves a value from its bound (pe.h).
inline void adamw_update(Model* m, const OptimConfig& o, double lr, int t) {
    for (int l = 0; l < param_copies(m->config, P_PE_TABLE); l++) pe_keep_params_in_range(m->pe(), m->param(P_PE_TABLE, l));
    double step_size = lr * sqrt(1 - pow(o.beta2, t)) / (1 - pow(o.beta1, t));
    for (int id = 0; id < NUM_PARAMS; id++)
        for (int l = 0; l < param_copies(m->config, id); l++) {
            size_t start = m->layout.at(id, l), n = param_numel(m->config, id);
            double decay = PARAMS[id].decay ? lr * o.weight_decay : 0;
#pragma omp parallel for
            for (size_t i = start; i < start + n; i++) {
                real g = m->grads[i];
                m->adam_m[i] = (real)(o.beta1 * m->adam_m[i] + (1 - o.beta1) * g);
                m->adam_v[i] = (real)(o.beta2 * m->adam_v[i] + (1 - o.beta2) * g * g);
                real p = m->params[i] - (real)(step_size * m->adam_m[i] / (sqrt((double)m->adam_v[i]) + o.eps));
                m->params[i] = p - (real)(decay * p);
            }
        }
}

// ----------------------------------------------------------------------------
// checkpoints: a header of 256 int32, then float32 tensors in layout order (README: "Checkpoints")

static const int32_t CHECKPOINT_MAGIC = 20261122;
static const int32_t CHECKPOINT_VERSION = 2;  // 2: CRC-32s of the tensors (field 13) and header (255)
enum CheckpointKind { CKPT_MODEL = 1, CKPT_TRAIN_STATE = 2 };  // parameters; or parameters, AdamW m, v
enum HeaderField {
    H_MAGIC, H_VERSION, H_KIND, H_LAYERS, H_D_MODEL, H_HEADS, H_D_FF, H_VOCAB, H_PE, H_ROPE_FRAC, H_DROPOUT,
    H_NUM_PARAMS_LO, H_NUM_PARAMS_HI,  // float32 values per tensor set: layout.total
    H_PAYLOAD_CRC,                     // CRC-32 of every byte after the header
    H_TASK = 16,                       // the task's name, NUL-padded, 32 bytes: fields 16-23
    H_PRESET = 24,                     // the model preset's name, likewise: fields 24-31
    H_RUN = 32,                        // fields 32-254: the run's settings and progress (train.cu)
    H_HEADER_CRC = 255,                // CRC-32 of fields 0-254
    HEADER_FIELDS = 256
};
static const int NAME_BYTES = 32;

typedef std::vector<int32_t> Header;

inline int32_t float_bits(float f) {
    int32_t i;
    memcpy(&i, &f, 4);
    return i;
}
inline float bits_float(int32_t i) {
    float f;
    memcpy(&f, &i, 4);
    return f;
}

inline Header checkpoint_header(const Model& m, CheckpointKind kind, const std::string& task, const std::string& preset) {
    const ModelConfig& c = m.config;
    Header h(HEADER_FIELDS, 0);
    h[H_MAGIC] = CHECKPOINT_MAGIC;
    h[H_VERSION] = CHECKPOINT_VERSION;
    h[H_KIND] = kind;
    h[H_LAYERS] = c.L, h[H_D_MODEL] = c.C, h[H_HEADS] = c.NH, h[H_D_FF] = c.F, h[H_VOCAB] = c.V, h[H_PE] = c.pe;
    h[H_ROPE_FRAC] = float_bits(c.rope_frac);
    h[H_DROPOUT] = float_bits(c.dropout);
    h[H_NUM_PARAMS_LO] = (int32_t)(m.layout.total & 0xffffffffu);
    h[H_NUM_PARAMS_HI] = (int32_t)(m.layout.total >> 32);
    strncpy((char*)&h[H_TASK], task.c_str(), NAME_BYTES - 1);
    strncpy((char*)&h[H_PRESET], preset.c_str(), NAME_BYTES - 1);
    return h;
}

inline std::string header_name(const Header& h, int field) { return std::string((const char*)&h[field], strnlen((const char*)&h[field], NAME_BYTES)); }
inline std::string header_task(const Header& h) { return header_name(h, H_TASK); }
inline std::string header_preset(const Header& h) { return header_name(h, H_PRESET); }

inline size_t header_num_params(const Header& h) { return (size_t)(uint32_t)h[H_NUM_PARAMS_LO] | (size_t)(uint32_t)h[H_NUM_PARAMS_HI] << 32; }
inline uint32_t header_crc(const Header& h) { return crc32_update(0, h.data(), H_HEADER_CRC * sizeof(int32_t)); }

// The tensor sets a checkpoint of this kind holds, in file order (of a Model or a const Model).
template <typename M>
auto checkpoint_sets(M* m, int kind) -> std::vector<decltype(&m->params)> {
    if (kind == CKPT_TRAIN_STATE) return {&m->params, &m->adam_m, &m->adam_v};
    return {&m->params};
}

// "wq of layer 2, element 17": where a flat parameter index lives, for messages about bad values
inline std::string param_location(const Model& m, size_t index) {
    for (int id = 0; id < NUM_PARAMS; id++)
        for (int l = 0; l < param_copies(m.config, id); l++) {
            size_t start = m.layout.at(id, l), n = param_numel(m.config, id);
            if (index < start || index >= start + n) continue;
            std::string layer = is_per_layer(m.config, id) ? " of layer " + std::to_string(l) : "";
            return std::string(PARAMS[id].name) + layer + ", element " + std::to_string(index - start);
        }
    return "index " + std::to_string(index) + " (past the last tensor)";
}

// the first value that is NaN or infinite, or SIZE_MAX if all are finite
inline size_t first_nonfinite(const std::vector<real>& x) {
    for (size_t i = 0; i < x.size(); i++)
        if (!std::isfinite(x[i])) return i;
    return SIZE_MAX;
}

inline bool write_reals(FILE* f, const std::vector<real>& x) {
    std::vector<float> buffer(x.begin(), x.end());
    return fwrite(buffer.data(), sizeof(float), buffer.size(), f) == buffer.size();
}

// fsync(2) by path: a file's bytes, or a directory's entries (a rename), reach the disk before
// the program goes on, so a power cut can not leave a checkpoint that is renamed but empty.
inline bool sync_path(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return false;
    bool synced = fsync(fd) == 0;
    return close(fd) == 0 && synced;
}

inline std::string directory_of(const std::string& path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// Written to PATH.tmp, synced, renamed over PATH, and the directory synced: a crash at any moment
// leaves either the old checkpoint or the new one, whole. A write that fails (a full disk) names
// the file and the reason and leaves no PATH.tmp behind. A PATH that is not a file (a device, a
// pipe) is refused: the rename would put a file in its place.
inline void save_checkpoint(const std::string& path, const Model& m, Header header) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) fail("can not write %s: not a regular file, and a checkpoint is renamed into place", path.c_str());
    std::vector<std::vector<float>> sets;
    uint32_t crc = 0;
    for (const std::vector<real>* set : checkpoint_sets(&m, header[H_KIND])) {
        sets.emplace_back(set->begin(), set->end());
        crc = crc32_update(crc, sets.back().data(), sets.back().size() * sizeof(float));
    }
    header[H_PAYLOAD_CRC] = (int32_t)crc;
    header[H_HEADER_CRC] = (int32_t)header_crc(header);
    std::string tmp = path + ".tmp";
    FILE* f = fopen(tmp.c_str(), "wb");
    if (!f) fail("can not write %s: %s", tmp.c_str(), strerror(errno));
    bool written = fwrite(header.data(), sizeof(int32_t), HEADER_FIELDS, f) == HEADER_FIELDS;
    for (const std::vector<float>& set : sets) written = written && fwrite(set.data(), sizeof(float), set.size(), f) == set.size();
    written = written && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int error = errno;  // why the write failed, if it did
    bool closed = fclose(f) == 0;
    if (written && closed && rename(tmp.c_str(), path.c_str()) == 0 && sync_path(directory_of(path))) return;
    if (written) error = errno;  // the close, the rename or the directory's sync failed
    remove(tmp.c_str());
    fail("can not write %s: %s", path.c_str(), strerror(error));
}

// Reads and checks a header: magic, version, the header's CRC, kind, and that the file holds
// exactly the tensors the header announces (so truncated or padded files are caught before
// anything is loaded). The tensors' CRC is checked as they load.
inline Header read_checkpoint_header(const std::string& path) {
    require_regular_file(path, "a checkpoint file");
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) fail("can not open checkpoint %s: %s", path.c_str(), strerror(errno));
    Header h(HEADER_FIELDS, 0);
    size_t got = fread(h.data(), sizeof(int32_t), HEADER_FIELDS, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    if (got != HEADER_FIELDS) fail("%s is not a checkpoint: shorter than its 1024-byte header", path.c_str());
    if (h[H_MAGIC] != CHECKPOINT_MAGIC) fail("%s is not a checkpoint (magic %d, expected %d)", path.c_str(), h[H_MAGIC], CHECKPOINT_MAGIC);
    if (h[H_VERSION] != CHECKPOINT_VERSION) fail("%s is checkpoint version %d; this build reads version %d", path.c_str(), h[H_VERSION], CHECKPOINT_VERSION);
    if ((uint32_t)h[H_HEADER_CRC] != header_crc(h)) fail("%s is corrupt: its header fails its CRC-32 check (a field was edited or damaged)", path.c_str());
    if (h[H_KIND] != CKPT_MODEL && h[H_KIND] != CKPT_TRAIN_STATE) fail("%s has unknown checkpoint kind %d", path.c_str(), h[H_KIND]);
    size_t sets = h[H_KIND] == CKPT_TRAIN_STATE ? 3 : 1, payload = (size_t)size - HEADER_FIELDS * 4;
    if (header_num_params(h) > payload / (4 * sets) || payload != sets * header_num_params(h) * 4)  // the first test: no overflow in the second
        fail("%s is truncated or corrupt: %ld bytes, its header announces %zu parameters in %zu sets", path.c_str(), size, header_num_params(h), sets);
    return h;
}

// whether PATH is a file that starts as a checkpoint does (whatever the rest of it holds)
inline bool starts_as_checkpoint(const std::string& path) {
    FILE* f = fopen(path.c_str(), "rb");
    int32_t magic = 0;
    bool read = f && fread(&magic, sizeof magic, 1, f) == 1;
    if (f) fclose(f);
    return read && magic == CHECKPOINT_MAGIC;
}

// a model field of a header as a user would write it: the PE by name, RoPE's fraction as a number
inline std::string header_value(int field, int32_t value) {
    char text[32];
    if (field == H_PE && value >= 0 && value < NUM_PES) return PE_NAMES[value];
    if (field == H_ROPE_FRAC) snprintf(text, sizeof text, "%g", bits_float(value));
    else snprintf(text, sizeof text, "%d", value);
    return text;
}

// Loads the tensors of a checkpoint (header already read and checked) into a model made with
// the same configuration; any difference is an error naming the field. The tensors must pass
// their CRC and be finite (a NaN saved by a diverged run is named, tensor and element).
inline void load_checkpoint(const std::string& path, const Header& h, Model* m) {
    Header mine = checkpoint_header(*m, (CheckpointKind)h[H_KIND], header_task(h), header_preset(h));
    const char* names[] = {"layers", "d_model", "heads", "d_ff", "vocabulary", "pe", "rope_frac"};
    for (int field = H_LAYERS; field <= H_ROPE_FRAC; field++)
        if (h[field] != mine[field])
            fail("%s was saved with a different %s (%s) than this model's (%s)", path.c_str(), names[field - H_LAYERS],
                 header_value(field, h[field]).c_str(), header_value(field, mine[field]).c_str());
    if (header_num_params(h) != m->layout.total) fail("%s holds %zu parameters; this model has %zu", path.c_str(), header_num_params(h), m->layout.total);
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) fail("can not open checkpoint %s: %s", path.c_str(), strerror(errno));
    fseek(f, HEADER_FIELDS * 4, SEEK_SET);
    std::vector<float> buffer(m->layout.total);
    uint32_t crc = 0;
    for (std::vector<real>* set : checkpoint_sets(m, h[H_KIND])) {
        if (fread(buffer.data(), sizeof(float), buffer.size(), f) != buffer.size()) {
            fclose(f);
            fail("%s: read failed", path.c_str());
        }
        crc = crc32_update(crc, buffer.data(), buffer.size() * sizeof(float));
        set->assign(buffer.begin(), buffer.end());
    }
    fclose(f);
    if (crc != (uint32_t)h[H_PAYLOAD_CRC]) fail("%s is corrupt: its tensors fail their CRC-32 check (a bit changed on disk)", path.c_str());
    const char* set_names[] = {"parameter", "AdamW first moment", "AdamW second moment"};
    std::vector<std::vector<real>*> sets = checkpoint_sets(m, h[H_KIND]);
    for (size_t s = 0; s < sets.size(); s++) {
        size_t bad = first_nonfinite(*sets[s]);
        if (bad != SIZE_MAX) fail("%s holds a value that is not finite: %s %s", path.c_str(), set_names[s], param_location(*m, bad).c_str());
    }
}
