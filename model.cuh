/*
 model.cuh: the model on the GPU. It holds device copies of the parameters, gradients, AdamW state
 and activations, laid out by the same tables as model.h (PARAMS, ACTS; each tensor aligned for
 cuBLAS), and runs model.h's model_forward, model_backward, gradient_norm, clip_gradients and
 adamw_update step for step (the last two as one kernel) with the kernels of kernels.cuh and
 attention.cuh. The host Model stays the source of
 truth for configuration, layout and checkpoints; gpu_upload and gpu_download move the state
 between the two.
*/
#pragma once

#include <chrono>
#include <map>
#include <tuple>

#include "attention.cuh"
#include "kernels.cuh"

// What a captured training step is specific to: its kernels' sizes and the pointers and
// constants they were launched with. Everything else it reads (the batch, the dropout keys,
// StepInputs) is copied into the same buffers before each replay.
struct StepShape {
    int B, T;
    bool positions, offsets;  // whether the batch has positions and place offsets of its own
    float dropout;            // p: the masks' threshold and scale are kernel arguments
    bool operator<(const StepShape& o) const { return std::tie(B, T, positions, offsets, dropout) < std::tie(o.B, o.T, o.positions, o.offsets, o.dropout); }
};

// With --precision bf16, the activations a product reads, each kept as a bf16 twin that the kernel
// making it writes (kernels.cuh says why), and nothing else reads: so in bf16 their fp32 buffers
// are not made (act() is nullptr) and their kernels write the twins alone. qkv's gradient has no
// twin: attention's backward writes it and RoPE's then rotates it in place, so it is rounded into
// bf16_scratch before its product. (fc stays fp32: ReLU's backward reads its sign, which a
// subnormal rounded to 0 would lose; d_branch's last use, the embedding's gradient, is in d_ln.)
static const ActId BF16_TWINS[] = {A_LN1, A_ATTY, A_LN2, A_FC_ACT, A_HEAD_IN, A_D_LOGITS, A_D_BRANCH, A_D_FC};

// whether activation id is kept in bf16 alone at this precision
inline bool bf16_alone(int id, Precision precision) {
    return precision == PRECISION_BF16 && std::find(std::begin(BF16_TWINS), std::end(BF16_TWINS), id) != std::end(BF16_TWINS);
}

struct GpuModel {
    ModelConfig config;
    Layout layout;
    int max_B;
    bool graphs = true;                       // training steps captured in CUDA graphs (--cuda-graphs)
    float *params, *grads, *adam_m, *adam_v;  // each layout.total long
    bf16* params16 = nullptr;                 // bf16: the parameters' twin, laid out as params (made again by every update)
    bf16* acts16[NUM_ACTS] = {};              // bf16: the twins of BF16_TWINS, laid out as acts would be; nullptr for the rest
    bf16* bf16_scratch = nullptr;             // bf16: (max_B, max_T, 3C) qkv's gradient rounded for its product, once RoPE has rotated it
    unsigned char* decays;                    // (layout.total) whether each element's tensor has weight decay
    float* acts[NUM_ACTS] = {};               // as the host Model's, one per row of ACTS; nullptr where bf16 keeps the twin alone
    AttentionWorkspace attention;
    float* weight_partials;                   // (chunks of ROWS_PER_CHUNK rows, C) RMSNorm weight-gradient partial sums
    double* norm_partials;                    // (layout.total / NORM_CHUNK + 1) gradient-norm partial sums
    float* losses;                            // (B, T) per-position losses
    int *tokens, *targets;                    // (B, T) the batch
    size_t target_count = 0;                  // the batch's rows with a target
    int* positions;                           // (B, T) the batch's positions, when it has its own (drawn or coupled)
    const int* batch_positions = nullptr;     // positions, or nullptr where the batch's are 0 .. T-1
    int* place_offsets;                       // (B) each sequence's shift of its Abacus places or coupled positions
    const int* batch_offsets = nullptr;       // place_offsets, or nullptr where the batch has none
    int* abacus_rows;                         // (B, T) with --abacus: the Abacus row each token of the last forward read
    unsigned char* is_digit = nullptr;        // (V) with --abacus or --position-coupling: which tokens are digits
    uint32_t* dropout_keys;                   // (dropout_sites(L)) the step's key of each dropout site
    StepInputs inputs;                        // the host's copy of what the step reads from device memory
    StepInputs* step_inputs;                  // the device's
    StepResults* step_results;                // the loss's sum and the gradient norm, left by the step
    std::map<StepShape, cudaGraphExec_t> captured;  // a training step's graph per shape
    double capture_seconds = 0;                     // spent capturing and instantiating them
    PE pe;                                    // the PE's tables, in device memory
    cublasHandle_t cublas = nullptr;
    std::vector<void*> allocations;

    GpuModel() = default;
    GpuModel(const GpuModel&) = delete;
    GpuModel& operator=(const GpuModel&) = delete;
    ~GpuModel() {
        // unchecked: fail() throws, and a destructor must not
        for (auto& shape_graph : captured) cudaGraphExecDestroy(shape_graph.second);
        if (cublas) cublas_api().destroy(cublas);  // before its workspace is freed
        for (void* p : allocations) cudaFree(p);
    }

    template <typename T>
    T* alloc(size_t n) {
        T* p = nullptr;
        if (n == 0) return p;
        cudaError_t status = cudaMalloc(&p, n * sizeof(T));
        if (status == cudaErrorMemoryAllocation) fail("out of GPU memory: the model or batch is too large for this GPU");
        cudaCheck(status);
        allocations.push_back(p);
        return p;
    }
    template <typename T>
    T* upload(const std::vector<T>& host) {
        T* p = alloc<T>(host.size());
        if (p) cudaCheck(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
        return p;
    }

    float* param(int id, int layer = 0) { return params + layout.at(id, layer); }
    float* grad(int id, int layer = 0) { return grads + layout.at(id, layer); }
    float* act(int id, int layer = 0) { return acts[id] ? acts[id] + act_offset(id, layer) : nullptr; }
    // a tensor's bf16 twin, which products read in place of it; nullptr where it has none
    bf16* param16(int id, int layer = 0) { return params16 ? params16 + layout.at(id, layer) : nullptr; }
    bf16* act16(int id, int layer = 0) { return acts16[id] ? acts16[id] + act_offset(id, layer) : nullptr; }
    size_t act_offset(int id, int layer) const { return ACTS[id].per_layer ? layer * act_numel(config, ACTS[id].shape, max_B, config.max_T) : 0; }
    // an activation buffer's length, its layers' copies included
    size_t act_buffer_numel(int id) const { return act_numel(config, ACTS[id].shape, max_B, config.max_T) * (ACTS[id].per_layer ? config.L : 1); }
    size_t bf16_scratch_numel() const { return act_buffer_numel(A_D_QKV); }
};

// The GPU's tensors start at multiples of 32 floats (128 bytes), where the host packs them (wk
// and wv follow wq unaligned: make_layout). cuBLAS's fastest kernels need their matrices
// 16-byte aligned, and a PE tensor of odd size
// (FIRE's 462 floats) would otherwise shift every weight after it off that, which cost FIRE
// a third of its TF32 throughput (the weights' GEMMs fell back to slower kernels).
static const size_t GPU_TENSOR_ALIGN = 32;

// every tensor of a flat set from one layout into another (the host's and the GPU's)
inline void relayout(float* to, const Layout& to_layout, const float* from, const Layout& from_layout, const ModelConfig& c) {
    for (int id = 0; id < NUM_PARAMS; id++)
        for (int l = 0; l < param_copies(c, id); l++)
            std::copy_n(from + from_layout.at(id, l), param_numel(c, id), to + to_layout.at(id, l));
}

// host -> device and device -> host of one tensor set (the padding between the GPU's tensors stays 0)
inline void gpu_upload_set(float* device, const GpuModel& g, const std::vector<float>& host, const Layout& host_layout) {
    std::vector<float> staged(g.layout.total, 0);
    relayout(staged.data(), g.layout, host.data(), host_layout, g.config);
    cudaCheck(cudaMemcpy(device, staged.data(), staged.size() * sizeof(float), cudaMemcpyHostToDevice));
}
inline void gpu_download_set(std::vector<float>* host, const Layout& host_layout, const float* device, const GpuModel& g) {
    std::vector<float> staged(g.layout.total);
    cudaCheck(cudaMemcpy(staged.data(), device, staged.size() * sizeof(float), cudaMemcpyDeviceToHost));
    relayout(host->data(), host_layout, staged.data(), g.layout, g.config);
}

// host -> device and device -> host: parameters and AdamW state
inline void gpu_upload(GpuModel* g, const Model& m) {
    gpu_upload_set(g->params, *g, m.params, m.layout);
    if (g->params16) round_to_bf16_gpu(g->params16, g->params, g->layout.total);
    gpu_upload_set(g->adam_m, *g, m.adam_m, m.layout);
    gpu_upload_set(g->adam_v, *g, m.adam_v, m.layout);
}
inline void gpu_download(Model* m, const GpuModel& g) {
    gpu_download_set(&m->params, m->layout, g.params, g);
    gpu_download_set(&m->adam_m, m->layout, g.adam_m, g);
    gpu_download_set(&m->adam_v, m->layout, g.adam_v, g);
}

// free memory on the current GPU, in bytes
inline double gpu_free_bytes() {
    size_t free = 0, total = 0;
    cudaCheck(cudaMemGetInfo(&free, &total));
    return (double)free;
}

// the gradients of the last backward into the host model (for the non-finite diagnostic)
inline void gpu_download_grads(Model* m, const GpuModel& g) {
    gpu_download_set(&m->grads, m->layout, g.grads, g);
}

// the PE's tables copied to the GPU (owned by g), as a PE the kernels take
inline PE gpu_pe(GpuModel* g, const PETables& t) {
    if (pe_has_context_bias(t.kind)) fail("--pe %s has no GPU kernels yet: run it with --device cpu", PE_NAMES[t.kind]);
    PE pe = pe_view(t);  // kind and sizes; every table pointer is replaced by its device copy
    pe.ape = g->upload(t.ape), pe.slope = g->upload(t.slope), pe.bucket = g->upload(t.bucket);
    pe.rope_cos = g->upload(t.rope_cos), pe.rope_sin = g->upload(t.rope_sin), pe.xpos_scale = g->upload(t.xpos_scale);
    return pe;
}

// RoPE's angles again (--rope-scaling rescales them for each evaluated length): the host's
// tables, copied over the device's, which are the same size
inline void gpu_update_rope_tables(GpuModel* g, const PETables& t) {
    size_t bytes = t.rope_cos.size() * sizeof(float);
    cudaCheck(cudaMemcpy((float*)g->pe.rope_cos, t.rope_cos.data(), bytes, cudaMemcpyHostToDevice));
    cudaCheck(cudaMemcpy((float*)g->pe.rope_sin, t.rope_sin.data(), bytes, cudaMemcpyHostToDevice));
}

// buffers for attention calls of up to (max_B, c.max_T), owned by g
inline AttentionWorkspace gpu_attention_workspace(GpuModel* g, const ModelConfig& c, int max_B) {
    AttentionWorkspace w;
    size_t heads = (size_t)max_B * c.max_T * c.C, squares = act_numel(c, S_BNHTT, max_B, c.max_T);
    w.precision = c.precision;
    if (c.precision == PRECISION_BF16) {
        w.q16 = g->alloc<bf16>(heads), w.k16 = g->alloc<bf16>(heads), w.v16 = g->alloc<bf16>(heads), w.dy16 = g->alloc<bf16>(heads);
        w.dropped16 = g->alloc<bf16>(squares), w.ds16 = g->alloc<bf16>(squares);
    } else {
        w.q = g->alloc<float>(heads), w.k = g->alloc<float>(heads), w.v = g->alloc<float>(heads);
    }
    w.y = g->alloc<float>(heads), w.dq = g->alloc<float>(heads), w.dk = g->alloc<float>(heads), w.dv = g->alloc<float>(heads);
    w.dropped = g->alloc<float>(squares), w.ddropped = g->alloc<float>(squares);
    if (pe_has_score_bias(c.pe)) w.bias_partials = g->alloc<float>((size_t)bias_planes(c, max_B) * c.max_T * param_numel(c, P_PE_TABLE));
    return w;
}

// A GPU copy of the host model (its parameters and AdamW state included), with activations for
// batches of up to max_B sequences (the host model's own may be smaller: it need not train).
inline void gpu_init(GpuModel* g, const Model& m, int max_B, Precision precision) {
    const ModelConfig& c = m.config;
    if (c.attention == ATTENTION_FUSED) fail("internal error: a GPU model asked for fused attention, which the GPU path does not have yet");
    if ((precision == PRECISION_BF16) != (c.precision == PRECISION_BF16)) fail("internal error: a GPU model's precision is not its configuration's");
    g->config = c, g->layout = make_layout(c, GPU_TENSOR_ALIGN), g->max_B = max_B;
    size_t BT = (size_t)max_B * c.max_T, total = g->layout.total;
    g->params = g->alloc<float>(total);
    g->grads = g->alloc<float>(total);
    g->adam_m = g->alloc<float>(total);
    g->adam_v = g->alloc<float>(total);
    std::vector<unsigned char> decays(total, 0);
    for (int id = 0; id < NUM_PARAMS; id++)
        for (int l = 0; l < param_copies(c, id); l++) std::fill_n(decays.begin() + g->layout.at(id, l), param_numel(c, id), PARAMS[id].decay);
    g->decays = g->upload(decays);
    for (int id = 0; id < NUM_ACTS; id++)
        if (!bf16_alone(id, precision)) g->acts[id] = g->alloc<float>(g->act_buffer_numel(id));
    if (precision == PRECISION_BF16) {
        g->params16 = g->alloc<bf16>(total);
        for (ActId id : BF16_TWINS) g->acts16[id] = g->alloc<bf16>(g->act_buffer_numel(id));
        g->bf16_scratch = g->alloc<bf16>(g->bf16_scratch_numel());
    }
    g->attention = gpu_attention_workspace(g, c, max_B);
    g->weight_partials = g->alloc<float>((BT + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK * c.C);
    g->norm_partials = g->alloc<double>(total / NORM_CHUNK + 1);
    g->losses = g->alloc<float>(BT);
    g->tokens = g->alloc<int>(BT);
    g->targets = g->alloc<int>(BT);
    g->positions = g->alloc<int>(BT);
    g->place_offsets = g->alloc<int>(max_B);
    g->abacus_rows = g->alloc<int>(BT);
    if (c.abacus || c.position_coupling) {
        if (m.is_digit.size() != (size_t)c.V) fail("internal error: an Abacus or coupled model needs its vocabulary's digits");
        g->is_digit = g->upload(m.is_digit);
    }
    g->dropout_keys = g->upload(std::vector<uint32_t>(dropout_sites(c.L), 0));
    g->inputs = StepInputs();
    g->step_inputs = g->upload(std::vector<StepInputs>{g->inputs});
    g->step_results = g->upload(std::vector<StepResults>{StepResults()});
    g->pe = gpu_pe(g, m.pe_tables);
    g->cublas = cublas_create(precision, g->alloc<char>(CUBLAS_WORKSPACE_BYTES));
    gpu_upload(g, m);
}

// the host's copy of the step's inputs into device memory
inline void gpu_write_inputs(GpuModel* g) {
    cudaCheck(cudaMemcpy(g->step_inputs, &g->inputs, sizeof(StepInputs), cudaMemcpyHostToDevice));
}

// What a forward reads from the host, copied to the GPU before its kernels run: the tokens, the
// targets (or none), the places (as model_forward's; rows packed with several sequences have no
// GPU kernels) and the dropout keys of drop's step.
inline void gpu_stage_batch(GpuModel* g, const std::vector<int>& tokens, const std::vector<int>* targets, int B, int T, const Dropout& drop,
                            const TokenPlaces& places) {
    const ModelConfig& c = g->config;
    size_t BT = (size_t)B * T;
    if (B > g->max_B || T > c.max_T) fail("internal error: a GPU batch of (B %d, T %d) does not fit its buffers", B, T);
    if (places.positions && !c.positions_per_row()) fail("internal error: a GPU batch with given positions, but the model has one bias plane");
    if (places.starts) fail("internal error: a GPU batch of packed rows, which have no GPU kernels");
    cudaCheck(cudaMemcpy(g->tokens, tokens.data(), BT * sizeof(int), cudaMemcpyHostToDevice));
    g->target_count = 0;
    if (targets) {
        for (size_t n = 0; n < BT; n++) g->target_count += (*targets)[n] >= 0;
        cudaCheck(cudaMemcpy(g->targets, targets->data(), BT * sizeof(int), cudaMemcpyHostToDevice));
    }
    g->batch_positions = nullptr;
    if (places.positions) {
        cudaCheck(cudaMemcpy(g->positions, places.positions, BT * sizeof(int), cudaMemcpyHostToDevice));
        g->batch_positions = g->positions;
    }
    if (c.position_coupling) g->batch_positions = g->positions;  // computed there by the forward
    g->batch_offsets = nullptr;
    if (places.place_offsets) {
        cudaCheck(cudaMemcpy(g->place_offsets, places.place_offsets, B * sizeof(int), cudaMemcpyHostToDevice));
        g->batch_offsets = g->place_offsets;
    }
    if (drop.p > 0) {
        std::vector<uint32_t> keys = drop.keys(c.L);
        cudaCheck(cudaMemcpy(g->dropout_keys, keys.data(), keys.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
    }
}

// the device's key of a dropout site (the step's, as gpu_stage_batch wrote them)
inline const uint32_t* gpu_site_key(GpuModel* g, DropoutSite site, int layer = 0) { return g->dropout_keys + dropout_site_index(site, layer); }

// model_forward's kernels (t0 = 0) on the staged batch; with targets, the loss's sum into
// step_results. Nothing here reads the host, so a graph can capture it.
inline void gpu_forward_kernels(GpuModel* g, int B, int T, bool with_targets, const Dropout& drop) {
    const ModelConfig& c = g->config;
    int C = c.C, NH = c.NH, F = c.F, V = c.V;
    size_t BT = (size_t)B * T;
    const int* pos = g->batch_positions;
    const int* offsets = g->batch_offsets;
    auto A = [&](int id, int l = 0) { return g->act(id, l); };
    auto A16 = [&](int id, int l = 0) { return g->act16(id, l); };
    auto W16 = [&](int id, int l = 0) { return g->param16(id, l); };
    auto key = [&](DropoutSite site, int l = 0) { return gpu_site_key(g, site, l); };
    cublasHandle_t cublas = g->cublas;
    int planes = planes_for(c, pos, B);
    const float* bias = pe_has_score_bias(c.pe) ? A(A_PE_BIAS) : nullptr;

    if (c.position_coupling) couple_positions_gpu(g->positions, g->tokens, offsets, g->is_digit, B, T);
    embedding_forward_gpu(A(A_RES_IN), g->tokens, pos, g->param(P_WTE), g->param(P_PE_TABLE), g->pe, B, T, C);
    if (c.abacus) abacus_forward_gpu(A(A_RES_IN), g->abacus_rows, g->tokens, offsets, g->param(P_ABACUS), g->is_digit, B, T, C);
    dropout_forward_gpu(A(A_RES_IN), nullptr, A(A_RES_IN), drop, key(SITE_EMBED), BT * C);
    for (int l = 0; l < c.L; l++) {
        float* res_in = A(A_RES_IN, l);
        float* res_mid = A(A_RES_MID, l);
        float* res_out = l + 1 < c.L ? A(A_RES_IN, l + 1) : A(A_RES_OUT);
        float* branch = A(A_BRANCH);
        rmsnorm_forward_gpu(A(A_LN1, l), A16(A_LN1, l), A(A_LN1_RSTD, l), res_in, g->param(P_LN1, l), BT, C);
        matmul_forward_gpu(cublas, A(A_QKV, l), A(A_LN1, l), A16(A_LN1, l), g->param(P_WQ, l), W16(P_WQ, l), BT, C, 3 * C);
        rotate_qk_forward_gpu(A(A_QKV, l), pos, g->pe, B, T, C, NH);
        // the bias planes: made once for every layer, or per layer from its own PE parameters
        if (bias && (l == 0 || c.pe_per_layer)) pe_bias_forward_gpu(A(A_PE_BIAS), g->param(P_PE_TABLE, l), pos, g->pe, planes, T, NH);
        attention_forward_gpu(cublas, A(A_ATTY, l), A16(A_ATTY, l), A(A_ATT, l), A(A_QKV, l), bias, planes, drop, key(SITE_ATTN_PROBS, l), B, T,
                              C, NH, &g->attention);
        matmul_forward_gpu(cublas, branch, A(A_ATTY, l), A16(A_ATTY, l), g->param(P_WO, l), W16(P_WO, l), BT, C, C);
        residual_dropout_forward_gpu(res_mid, res_in, branch, drop, key(SITE_ATTN_OUT, l), BT * C);
        rmsnorm_forward_gpu(A(A_LN2, l), A16(A_LN2, l), A(A_LN2_RSTD, l), res_mid, g->param(P_LN2, l), BT, C);
        matmul_forward_gpu(cublas, A(A_FC, l), A(A_LN2, l), A16(A_LN2, l), g->param(P_W1, l), W16(P_W1, l), BT, C, F);
        relu_dropout_forward_gpu(A(A_FC_ACT, l), A16(A_FC_ACT, l), A(A_FC, l), drop, key(SITE_FFN_HIDDEN, l), BT * F);
        matmul_forward_gpu(cublas, branch, A(A_FC_ACT, l), A16(A_FC_ACT, l), g->param(P_W2, l), W16(P_W2, l), BT, F, C);
        residual_dropout_forward_gpu(res_out, res_mid, branch, drop, key(SITE_FFN_OUT, l), BT * C);
    }
    rmsnorm_forward_gpu(A(A_LNF), nullptr, A(A_LNF_RSTD), A(A_RES_OUT), g->param(P_LNF), BT, C);
    dropout_forward_gpu(A(A_HEAD_IN), A16(A_HEAD_IN), A(A_LNF), drop, key(SITE_FINAL), BT * C, (float)(1.0 / sqrt(C)));
    matmul_forward_gpu(cublas, A(A_LOGITS), A(A_HEAD_IN), A16(A_HEAD_IN), g->param(P_WTE), W16(P_WTE), BT, C, V);
    if (with_targets) crossentropy_forward_gpu(A(A_LOGITS), g->targets, BT, V, g->losses, &g->step_results->loss_sum);
}

// what the last step left on the device, read once it has finished
inline StepResults gpu_results(GpuModel* g) {
    StepResults r;
    cudaCheck(cudaMemcpy(&r, g->step_results, sizeof(StepResults), cudaMemcpyDeviceToHost));
    return r;
}

// the mean loss over the batch's target rows, from the sum the forward left in r (0 without targets)
inline double gpu_mean_loss(const GpuModel& g, const StepResults& r) { return g.target_count ? r.loss_sum / g.target_count : 0.0; }

// model_forward on the GPU (t0 = 0): tokens, targets and places are the host batch's; returns the loss
inline double gpu_forward(GpuModel* g, const std::vector<int>& tokens, const std::vector<int>* targets, int B, int T, const Dropout& drop,
                          const TokenPlaces& places = TokenPlaces()) {
    gpu_stage_batch(g, tokens, targets, B, T, drop, places);
    gpu_forward_kernels(g, B, T, targets != nullptr, drop);
    return targets ? gpu_mean_loss(*g, gpu_results(g)) : 0.0;
}

// model_backward's kernels, the gradient of the last forward's loss into g->grads (the loss's
// divisor read from step_inputs). Nothing here reads the host, so a graph can capture it.
inline void gpu_backward_kernels(GpuModel* g, int B, int T, const Dropout& drop) {
    const ModelConfig& c = g->config;
    int C = c.C, NH = c.NH, F = c.F, V = c.V;
    size_t BT = (size_t)B * T;
    auto A = [&](int id, int l = 0) { return g->act(id, l); };
    auto A16 = [&](int id, int l = 0) { return g->act16(id, l); };
    auto W16 = [&](int id, int l = 0) { return g->param16(id, l); };
    auto key = [&](DropoutSite site, int l = 0) { return gpu_site_key(g, site, l); };
    auto zeroed = [&](int id) {  // (a gradient kept in bf16 alone has no fp32 buffer: its kernel starts it from 0)
        if (g->act(id)) cudaCheck(cudaMemsetAsync(g->act(id), 0, act_numel(c, ACTS[id].shape, B, T) * sizeof(float), cudaStreamPerThread));
        return g->act(id);
    };
    cublasHandle_t cublas = g->cublas;
    const int* pos = g->batch_positions;  // as the forward had them
    int planes = planes_for(c, pos, B);
    cudaCheck(cudaMemsetAsync(g->grads, 0, g->layout.total * sizeof(float), cudaStreamPerThread));

    crossentropy_backward_gpu(zeroed(A_D_LOGITS), A16(A_D_LOGITS), A(A_LOGITS), g->targets, BT, V, &g->step_inputs->inverse_count);
    matmul_backward_gpu(cublas, zeroed(A_D_HEAD_IN), g->grad(P_WTE), A(A_D_LOGITS), A16(A_D_LOGITS), A(A_HEAD_IN), A16(A_HEAD_IN), g->param(P_WTE),
                        W16(P_WTE), BT, C, V);
    dropout_backward_gpu(zeroed(A_D_LN), nullptr, A(A_D_HEAD_IN), drop, key(SITE_FINAL), BT * C, (float)(1.0 / sqrt(C)));
    rmsnorm_backward_gpu(zeroed(A_D_RES), g->grad(P_LNF), A(A_D_LN), A(A_RES_OUT), g->param(P_LNF), A(A_LNF_RSTD), BT, C, g->weight_partials);
    float* dbias = pe_has_score_bias(c.pe) ? zeroed(A_D_PE_BIAS) : nullptr;  // the layers that read one PE tensor add their parts
    for (int l = c.L - 1; l >= 0; l--) {
        // feed-forward block
        dropout_backward_gpu(zeroed(A_D_BRANCH), A16(A_D_BRANCH), A(A_D_RES), drop, key(SITE_FFN_OUT, l), BT * C);
        matmul_backward_gpu(cublas, zeroed(A_D_FC_ACT), g->grad(P_W2, l), A(A_D_BRANCH), A16(A_D_BRANCH), A(A_FC_ACT, l), A16(A_FC_ACT, l),
                            g->param(P_W2, l), W16(P_W2, l), BT, F, C);
        relu_dropout_backward_gpu(zeroed(A_D_FC), A16(A_D_FC), A(A_D_FC_ACT), A(A_FC, l), drop, key(SITE_FFN_HIDDEN, l), BT * F);
        matmul_backward_gpu(cublas, zeroed(A_D_LN), g->grad(P_W1, l), A(A_D_FC), A16(A_D_FC), A(A_LN2, l), A16(A_LN2, l), g->param(P_W1, l),
                            W16(P_W1, l), BT, C, F);
        rmsnorm_backward_gpu(A(A_D_RES), g->grad(P_LN2, l), A(A_D_LN), A(A_RES_MID, l), g->param(P_LN2, l), A(A_LN2_RSTD, l), BT, C, g->weight_partials);
        // attention block
        dropout_backward_gpu(zeroed(A_D_BRANCH), A16(A_D_BRANCH), A(A_D_RES), drop, key(SITE_ATTN_OUT, l), BT * C);
        matmul_backward_gpu(cublas, zeroed(A_D_ATTY), g->grad(P_WO, l), A(A_D_BRANCH), A16(A_D_BRANCH), A(A_ATTY, l), A16(A_ATTY, l),
                            g->param(P_WO, l), W16(P_WO, l), BT, C, C);
        attention_backward_gpu(cublas, A(A_D_QKV), A(A_D_SCORES), A(A_D_ATTY), A(A_QKV, l), A(A_ATT, l), drop, key(SITE_ATTN_PROBS, l), B, T, C, NH,
                               &g->attention);
        if (pe_has_score_bias(c.pe)) {
            pe_bias_plane_backward_gpu(dbias, A(A_D_SCORES), planes, B, T, NH);
            // the planes' PE tensor, once its last reader is done: layer 0 for all, or each layer's own
            if (l == 0 || c.pe_per_layer) {
                pe_bias_backward_gpu(g->grad(P_PE_TABLE, l), dbias, g->param(P_PE_TABLE, l), pos, g->pe, planes, T, NH, param_numel(c, P_PE_TABLE),
                                     &g->attention);
                if (l > 0) dbias = zeroed(A_D_PE_BIAS);
            }
        }
        rotate_qk_backward_gpu(A(A_D_QKV), pos, g->pe, B, T, C, NH);
        const bf16* dqkv16 = g->bf16_scratch ? round_to_bf16_gpu(g->bf16_scratch, A(A_D_QKV), BT * 3 * C) : nullptr;
        matmul_backward_gpu(cublas, zeroed(A_D_LN), g->grad(P_WQ, l), A(A_D_QKV), dqkv16, A(A_LN1, l), A16(A_LN1, l), g->param(P_WQ, l),
                            W16(P_WQ, l), BT, C, 3 * C);
        rmsnorm_backward_gpu(A(A_D_RES), g->grad(P_LN1, l), A(A_D_LN), A(A_RES_IN, l), g->param(P_LN1, l), A(A_LN1_RSTD, l), BT, C, g->weight_partials);
    }
    // the embedding's gradient in d_ln, which is free by now (model.h's d_branch: bf16 keeps that as a twin alone)
    dropout_backward_gpu(zeroed(A_D_LN), nullptr, A(A_D_RES), drop, key(SITE_EMBED), BT * C);
    embedding_backward_gpu(g->grad(P_WTE), g->grad(P_PE_TABLE), A(A_D_LN), g->tokens, pos, g->pe, B, T, C, V);
    if (c.abacus) abacus_backward_gpu(g->grad(P_ABACUS), A(A_D_LN), g->abacus_rows, B, T, C, abacus_rows(c.max_T));
}

// the loss's divisor for the last staged batch: loss_tokens as model_backward's (0 for the count of targets)
inline void gpu_set_loss_tokens(GpuModel* g, size_t loss_tokens) {
    size_t count = loss_tokens ? loss_tokens : g->target_count;
    g->inputs.inverse_count = count ? 1.0f / count : 0.0f;
}

// model_backward on the GPU: the gradient of the last gpu_forward's loss, into g->grads
inline void gpu_backward(GpuModel* g, int B, int T, const Dropout& drop, size_t loss_tokens = 0) {
    gpu_set_loss_tokens(g, loss_tokens);
    gpu_write_inputs(g);
    gpu_backward_kernels(g, B, T, drop);
}

// AdamW's inputs for update t (1-based) at learning rate lr, as adamw_update has them
inline void gpu_set_adamw_inputs(GpuModel* g, const OptimConfig& o, double lr, int t) {
    g->inputs.step_size = lr * sqrt(1 - pow(o.beta2, t)) / (1 - pow(o.beta1, t));
    g->inputs.decay = lr * o.weight_decay;
    g->inputs.beta1 = o.beta1, g->inputs.beta2 = o.beta2, g->inputs.eps = o.eps;
}

// clipping's and AdamW's kernels: the norm into step_results, then the update with the gradients
// clipped as it reads them, which does nothing when the loss or the norm is not finite
inline void gpu_update_kernels(GpuModel* g) {
    size_t n = g->layout.total;
    gradient_norm_gpu(g->grads, n, g->norm_partials, g->step_results);
    adamw_gpu(g->params, g->params16, g->grads, g->adam_m, g->adam_v, g->decays, n, g->step_inputs, g->step_results);
}

// gradient_norm, clip_gradients (to max_norm) and adamw_update of model.h on the GPU, over
// every tensor at once (gpu_update_kernels), for the tests; returns the gradient norm before
// clipping. Training runs them inside gpu_train_step.
inline double gpu_clip_and_update(GpuModel* g, double max_norm, const OptimConfig& o, double lr, int t) {
    g->inputs.max_norm = max_norm;
    gpu_set_adamw_inputs(g, o, lr, t);
    gpu_write_inputs(g);
    gpu_update_kernels(g);
    return gpu_results(g).norm;
}

// Runs `kernels` (a step's launches on this thread's stream) as the graph captured for `shape`:
// one launch instead of hundreds. A shape's first step runs kernel by kernel, so that every
// kernel is loaded and cuBLAS has chosen its algorithms before the capture, which records the
// same launches for the shape's later steps without running them.
template <typename Kernels>
inline void gpu_run_captured(GpuModel* g, const StepShape& shape, Kernels kernels) {
    auto found = g->captured.find(shape);
    if (found != g->captured.end()) {
        cudaCheck(cudaGraphLaunch(found->second, cudaStreamPerThread));
        return;
    }
    kernels();
    auto start = std::chrono::steady_clock::now();
    cudaGraph_t graph;
    cudaCheck(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeGlobal));
    kernels();
    cudaCheck(cudaStreamEndCapture(cudaStreamPerThread, &graph));
    cudaGraphExec_t exec;
    cudaCheck(cudaGraphInstantiate(&exec, graph, 0));
    cudaCheck(cudaGraphDestroy(graph));
    g->captured.emplace(shape, exec);
    g->capture_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One training step on the GPU: forward with the batch's targets, backward (the loss divided by
// loss_tokens, as model_backward's), clipping to max_norm and AdamW's update t (1-based) at
// learning rate lr, which leaves the parameters and AdamW state as they were when the loss or the
// gradient norm is not finite. Sets both. With g->graphs the kernels run as the graph of the
// batch's shape; the host waits for the GPU once, to read the loss and the norm.
inline void gpu_train_step(GpuModel* g, const std::vector<int>& tokens, const std::vector<int>& targets, int B, int T, const Dropout& drop,
                           const TokenPlaces& places, size_t loss_tokens, const OptimConfig& o, double lr, int t, double max_norm, double* loss,
                           double* norm) {
    gpu_stage_batch(g, tokens, &targets, B, T, drop, places);
    gpu_set_loss_tokens(g, loss_tokens);
    gpu_set_adamw_inputs(g, o, lr, t);
    g->inputs.max_norm = max_norm;
    gpu_write_inputs(g);
    auto kernels = [&] {
        gpu_forward_kernels(g, B, T, true, drop);
        gpu_backward_kernels(g, B, T, drop);
        gpu_update_kernels(g);
    };
    if (g->graphs)
        gpu_run_captured(g, StepShape{B, T, g->batch_positions != nullptr, g->batch_offsets != nullptr, drop.p}, kernels);
    else
        kernels();
    StepResults r = gpu_results(g);
    *loss = gpu_mean_loss(*g, r);
    *norm = r.norm;
}

// the logits of the last forward, (B, T, V), copied to the host
inline void gpu_logits(GpuModel* g, int B, int T, std::vector<float>* out) {
    out->resize((size_t)B * T * g->config.V);
    cudaCheck(cudaMemcpy(out->data(), g->act(A_LOGITS), out->size() * sizeof(float), cudaMemcpyDeviceToHost));
}

// the name of device 0 and, given `peak`, there the dense peak in TFLOP/s of products in
// `precision` for the GPUs this project measures on (0 for other GPUs)
inline std::string gpu_name(Precision precision = PRECISION_FP32, double* peak = nullptr) {
    cudaDeviceProp props;
    cudaCheck(cudaGetDeviceProperties(&props, 0));
    std::string name = props.name;
    bool hopper = name.find("H100") != std::string::npos || name.find("H200") != std::string::npos;
    // the H100 SXM datasheet (the H200's are the same): FP32 without tensor cores; TF32 and BF16 tensor cores, dense
    const double hopper_peaks[] = {66.9, 494.7, 989.4};
    if (peak) *peak = hopper ? hopper_peaks[precision] : 0;
    return name;
}
