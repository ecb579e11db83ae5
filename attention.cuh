/*
 attention.cuh: causal attention on the GPU, forward and backward, with the PE's hooks: the
 rotation of q and k (RoPE, xPos), the score bias planes (T5, ALiBi, KERPLE, FIRE) and their
 parameters' gradient, and counter-based dropout on the probabilities (the same masks as model.h
 draws).

 This is the clear version: it materialises the (T, T) scores of every head, which sequences this
 short afford, and leaves the matrix products to cuBLAS:
   split heads     q, k, v (B, NH, T, HS) from qkv (B, T, 3C)
   scores          s = q k^T                                    one batched GEMM over (b, h)
   softmax         att = softmax_{j<=i}(s + bias), e = dropout(att)      one warp per row
   values          y = e v, merged back to (B, T, C)            one batched GEMM
 The backward runs the same steps in reverse (see attention_backward_gpu). With --precision bf16
 the products read bf16 copies of their operands, as the CPU's attention rounds them: q, k, v
 and dropout(att) forward; dy, q, k, v, dropout(att) and the scores' gradient backward; the
 scores, the softmax and the bias stay fp32. As on the CPU, the
 bias comes from planes made once per forward (pe_bias_forward_gpu): one (NH, T, T) plane for the
 batch, or one per row when rows carry their own positions (--random-positions). No atomics: the
 planes' gradient is summed over the sequences and layers in order, and into the PE's parameters
 through per-row partial gradients added in a fixed order.
*/
#pragma once

#include "kernels.cuh"

// GPU-only buffers of one attention call, reused by every layer (sized for max_B x max_T)
struct AttentionWorkspace {
    Precision precision = PRECISION_FP32;
    float *q = nullptr, *k = nullptr, *v = nullptr;  // (B, NH, T, HS): queries, keys, values (fp32 and tf32)
    float *y, *dq, *dk, *dv;                         // (B, NH, T, HS): outputs (and their gradient), and the gradients of q, k, v
    float *dropped, *ddropped;                       // (B, NH, T, T): the scores, then (fp32, tf32) dropout(att) over them; its gradient
    float* bias_partials = nullptr;  // (planes, T, the PE's parameter count): pe_bias_backward_gpu's partial gradients
    // bf16: the products' operands, rounded
    bf16 *q16 = nullptr, *k16 = nullptr, *v16 = nullptr, *dy16 = nullptr;  // (B, NH, T, HS)
    bf16 *dropped16 = nullptr, *ds16 = nullptr;                              // (B, NH, T, T): dropout(att) and ds
};

// ----------------------------------------------------------------------------
// heads: (B, T, 3, NH, HS) <-> (B, NH, T, HS)

// q, k, v (B, NH, T, HS) <- qkv (B, T, 3C), in fp32 or rounded to bf16
template <typename Operand>
__global__ void split_qkv_kernel(Operand* q, Operand* k, Operand* v, const float* qkv, int B, int T, int NH, int HS) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // q[b,h,t,d]
    if (i >= (size_t)B * NH * T * HS) return;
    int d = i % HS, t = (i / HS) % T, h = (i / HS / T) % NH, b = (int)(i / HS / T / NH), C = NH * HS;
    size_t from = ((size_t)b * T + t) * 3 * C + h * HS + d;
    store(q + i, qkv[from]);
    store(k + i, qkv[from + C]);
    store(v + i, qkv[from + 2 * C]);
}

// dqkv (B, T, 3C) <- dq, dk, dv (B, NH, T, HS): the backward of split_qkv (it overwrites)
__global__ void merge_qkv_kernel(float* dqkv, const float* dq, const float* dk, const float* dv, int B, int T, int NH, int HS) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= (size_t)B * NH * T * HS) return;
    int d = i % HS, t = (i / HS) % T, h = (i / HS / T) % NH, b = (int)(i / HS / T / NH), C = NH * HS;
    size_t to = ((size_t)b * T + t) * 3 * C + h * HS + d;
    dqkv[to] = dq[i];
    dqkv[to + C] = dk[i];
    dqkv[to + 2 * C] = dv[i];
}

// out (B, T, C) <- heads (B, NH, T, HS), and out's bf16 twin out16 (or nullptr)
__global__ void merge_heads_kernel(float* out, bf16* out16, const float* heads, int B, int T, int NH, int HS) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // heads[b,h,t,d]
    if (i >= (size_t)B * NH * T * HS) return;
    int d = i % HS, t = (i / HS) % T, h = (i / HS / T) % NH, b = (int)(i / HS / T / NH);
    store_with_twin(out, out16, ((size_t)b * T + t) * NH * HS + h * HS + d, heads[i]);
}

// heads (B, NH, T, HS) <- x (B, T, C), in fp32 or rounded to bf16: the backward of merge_heads
template <typename Operand>
__global__ void split_heads_kernel(Operand* heads, const float* x, int B, int T, int NH, int HS) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= (size_t)B * NH * T * HS) return;
    int d = i % HS, t = (i / HS) % T, h = (i / HS / T) % NH, b = (int)(i / HS / T / NH);
    store(heads + i, x[((size_t)b * T + t) * NH * HS + h * HS + d]);
}

// ----------------------------------------------------------------------------
// RoPE and xPos: the PE's hook on q and k, in place in qkv (see rotate_qk_forward in model.h)

__global__ void rotate_qk_kernel(float* qkv, const int* positions, PE pe, int B, int T, int C, int NH, int direction) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // (b, t, h)
    if (i >= (size_t)B * T * NH) return;
    int h = i % NH, t = (i / NH) % T, b = (int)(i / NH / T), HS = C / NH;
    int pos = position_of(positions, b, t, T);
    float* q = qkv + (i / NH) * 3 * C + h * HS;
    pe_rotate(pe, q, pos, direction, QUERY);
    pe_rotate(pe, q + C, pos, direction, KEY);
}
inline void rotate_qk_forward_gpu(float* qkv, const int* positions, const PE& pe, int B, int T, int C, int NH) {
    if (pe.rot == 0) return;
    rotate_qk_kernel<<<grid_for((size_t)B * T * NH), BLOCK>>>(qkv, positions, pe, B, T, C, NH, +1);
    launchCheck();
}
inline void rotate_qk_backward_gpu(float* dqkv, const int* positions, const PE& pe, int B, int T, int C, int NH) {
    if (pe.rot == 0) return;
    rotate_qk_kernel<<<grid_for((size_t)B * T * NH), BLOCK>>>(dqkv, positions, pe, B, T, C, NH, -1);
    launchCheck();
}

// ----------------------------------------------------------------------------
// the score bias planes (see pe_bias_forward in model.h): a thread per (plane, head, i, j <= i)

__global__ void pe_bias_forward_kernel(float* bias, const float* pe_params, const int* positions, PE pe, int planes, int T, int NH) {
    size_t index = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // bias[p, h, i, j]
    if (index >= (size_t)planes * NH * T * T) return;
    int j = index % T, i = (index / T) % T, h = (index / T / T) % NH, p = (int)(index / T / T / NH);
    if (j <= i) bias[index] = pe_score_bias(pe, pe_params, h, position_of(positions, p, i, T), position_of(positions, p, j, T));
}
inline void pe_bias_forward_gpu(float* bias, const float* pe_params, const int* positions, const PE& pe, int planes, int T, int NH) {
    pe_bias_forward_kernel<<<grid_for((size_t)planes * NH * T * T), BLOCK>>>(bias, pe_params, positions, pe, planes, T, NH);
    launchCheck();
}

// dbias[p,h,i,j] += the sum over the sequences b reading plane p of dscores[b,h,i,j], b in order
__global__ void pe_bias_plane_backward_kernel(float* dbias, const float* dscores, int planes, int B, int T, int NH) {
    size_t index = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // dbias[p, h, i, j]
    if (index >= (size_t)planes * NH * T * T) return;
    size_t in_plane = index % ((size_t)NH * T * T), p = index / ((size_t)NH * T * T);
    float sum = 0;
    for (size_t b = planes > 1 ? p : 0; b < (planes > 1 ? p + 1 : (size_t)B); b++) sum += dscores[b * NH * T * T + in_plane];
    dbias[index] += sum;
}
inline void pe_bias_plane_backward_gpu(float* dbias, const float* dscores, int planes, int B, int T, int NH) {
    pe_bias_plane_backward_kernel<<<grid_for((size_t)planes * NH * T * T), BLOCK>>>(dbias, dscores, planes, B, T, NH);
    launchCheck();
}

// The planes' gradient into the PE's parameters, in two fixed-order sums: each (plane, query i)
// adds pe.h's pe_score_bias_backward of its heads and keys into its own partial gradient, and
// then each parameter sums its partials in order. The partial gradients cost planes x T x
// (parameter count) floats, which keeps every sum free of atomics.
// A block per (plane, i): its threads share out the (head, key) pairs, each adding into its own
// copy of the partial in shared memory, and then the copies are summed in thread order. (A thread
// per (plane, i) adding straight into global memory waited on memory: FIRE's backward adds into
// up to 99 parameters per pair, and the paper's model has up to 12 x 256 pairs per query.)
static const size_t BIAS_PARTIAL_SHARED_BYTES = 48 * 1024;  // the most a block gets without opting in

// threads per block: one copy of the partial each, as many as fit (a multiple of a warp, at most BLOCK)
inline int bias_partial_threads(size_t n_params) {
    size_t fit = BIAS_PARTIAL_SHARED_BYTES / (n_params * sizeof(float));
    if (fit == 0) fail("internal error: a PE with %zu parameters per tensor has no room for its partial gradient in shared memory", n_params);
    return (int)(fit < (size_t)WARP ? fit : std::min<size_t>(fit / WARP * WARP, BLOCK));
}

__global__ void pe_bias_partials_kernel(float* partials, const float* dbias, const float* pe_params, const int* positions, PE pe, int T, int NH,
                                        int n_params) {
    extern __shared__ float copies[];  // (blockDim.x, n_params)
    int i = blockIdx.x % T, p = blockIdx.x / T, threads = blockDim.x;
    float* mine = copies + threadIdx.x * n_params;
    for (int k = 0; k < n_params; k++) mine[k] = 0;
    int pos_i = position_of(positions, p, i, T);
    for (int pair = threadIdx.x; pair < NH * (i + 1); pair += threads) {
        int h = pair / (i + 1), j = pair % (i + 1);
        float ds = dbias[(((size_t)p * NH + h) * T + i) * T + j];
        pe_score_bias_backward(pe, pe_params, mine, ds, h, pos_i, position_of(positions, p, j, T));
    }
    __syncthreads();
    for (int k = threadIdx.x; k < n_params; k += threads) {
        float sum = 0;
        for (int copy = 0; copy < threads; copy++) sum += copies[copy * n_params + k];
        partials[(size_t)blockIdx.x * n_params + k] = sum;
    }
}
__global__ void pe_bias_sum_partials_kernel(float* dpe_params, const float* partials, size_t rows, size_t n_params) {
    size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (k >= n_params) return;
    float sum = 0;
    for (size_t row = 0; row < rows; row++) sum += partials[row * n_params + k];
    dpe_params[k] += sum;
}
inline void pe_bias_backward_gpu(float* dpe_params, const float* dbias, const float* pe_params, const int* positions, const PE& pe, int planes,
                                 int T, int NH, size_t n_params, AttentionWorkspace* w) {
    if (n_params == 0) return;
    int threads = bias_partial_threads(n_params);
    pe_bias_partials_kernel<<<planes * T, threads, threads * n_params * sizeof(float)>>>(w->bias_partials, dbias, pe_params, positions, pe, T, NH,
                                                                                       (int)n_params);
    launchCheck();
    pe_bias_sum_partials_kernel<<<grid_for(n_params), BLOCK>>>(dpe_params, w->bias_partials, (size_t)planes * T, n_params);
    launchCheck();
}

// ----------------------------------------------------------------------------
// softmax with the PE's bias and the causal mask; one warp per row (b, h, i)

// att[j] = softmax over j <= i of (scores[j] + bias[j]), 0 for j > i; dropped = dropout(att),
// as the next product reads it (in fp32 it may overwrite the scores: a lane writes only the
// entries it has read). The row's bias is in plane b (planes = B) or 0 (one plane for the
// batch); none without bias.
template <typename Operand>
__global__ void attention_softmax_kernel(float* att, Operand* dropped, const float* scores, const float* bias, int planes, DropoutMask mask,
                                         int B, int NH, int T) {
    size_t row = warp_index();
    if (row >= (size_t)B * NH * T) return;
    int i = row % T;
    const float* s = scores + row * T;
    const float* bias_row = bias ? bias + (planes > 1 ? row : row % ((size_t)NH * T)) * T : nullptr;
    auto biased = [&](int j) { return bias_row ? s[j] + bias_row[j] : s[j]; };
    float max = -INFINITY, sum = 0;
    for (int j = lane(); j <= i; j += WARP) max = fmaxf(max, biased(j));
    max = warp_max(max);
    for (int j = lane(); j <= i; j += WARP) sum += expf(biased(j) - max);
    sum = warp_sum(sum);
    for (int j = lane(); j < T; j += WARP) {
        float a = j <= i ? expf(biased(j) - max) / sum : 0.0f;
        att[row * T + j] = a;
        store(dropped + row * T + j, a * mask.factor(row * T + j));
    }
}

// forward: e_j = a_j m_j / (1 - p) with a = softmax(s), so
//   da_j = de_j m_j / (1 - p)      ds_j = a_j (da_j - sum_k a_k da_k)      (0 for j > i)
// into dscores, and into ds_read as the products read it (bf16; in fp32 it is dscores itself)
template <typename Operand>
__global__ void attention_softmax_backward_kernel(float* dscores, Operand* ds_read, const float* ddropped, const float* att, DropoutMask mask,
                                                  int B, int NH, int T) {
    size_t row = warp_index();
    if (row >= (size_t)B * NH * T) return;
    int i = row % T;
    const float *a = att + row * T, *de = ddropped + row * T;
    float sum = 0;
    for (int j = lane(); j <= i; j += WARP) sum += a[j] * de[j] * mask.factor(row * T + j);
    sum = warp_sum(sum);
    for (int j = lane(); j < T; j += WARP) {
        float ds = j <= i ? a[j] * (de[j] * mask.factor(row * T + j) - sum) : 0.0f;
        dscores[row * T + j] = ds;
        if ((void*)ds_read != (void*)dscores) store(ds_read + row * T + j, ds);
    }
}

// ----------------------------------------------------------------------------
// attention, forward and backward (attention_forward / attention_backward of model.h)

// batched over the B * NH heads: c (m, n) = op(a) op(b) + beta c, each matrix `stride` elements
// from the last; fp32 operands in the handle's mode (fp32 or tf32), bf16 ones summed in fp32
inline void batched_gemm(cublasHandle_t cublas, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k, const float* a, int lda,
                         long long stride_a, const float* b, int ldb, long long stride_b, float beta, float* c, int ldc, long long stride_c, int batch) {
    const float one = 1;
    cublasCheck(cublas_api().sgemm_strided_batched(cublas, op_a, op_b, m, n, k, &one, a, lda, stride_a, b, ldb, stride_b, &beta, c, ldc, stride_c, batch));
}
inline void batched_gemm(cublasHandle_t cublas, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k, const bf16* a, int lda,
                         long long stride_a, const bf16* b, int ldb, long long stride_b, float beta, float* c, int ldc, long long stride_c, int batch) {
    const float one = 1;
    cublasCheck(cublas_api().gemm_strided_batched_ex(cublas, op_a, op_b, m, n, k, &one, a, CUDA_R_16BF, lda, stride_a, b, CUDA_R_16BF, ldb, stride_b,
                                                     &beta, c, CUDA_R_32F, ldc, stride_c, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// attention_forward_gpu with the products' operands (q, k, v, and dropped: dropout(att)) in
// buffers of their type: the workspace's fp32 ones, or its bf16 ones
template <typename Operand>
inline void attention_forward_with(cublasHandle_t cublas, float* out, bf16* out16, float* att, const float* qkv, const float* bias, int planes,
                                   const Dropout& drop, const uint32_t* drop_key, int B, int T, int C, int NH, AttentionWorkspace* w, Operand* q,
                                   Operand* k, Operand* v, Operand* dropped) {
    int HS = C / NH, heads = B * NH;
    long long head = (long long)T * HS, square = (long long)T * T;
    size_t n_heads = (size_t)heads * head;
    float* scores = w->dropped;
    split_qkv_kernel<<<grid_for(n_heads), BLOCK>>>(q, k, v, qkv, B, T, NH, HS);
    launchCheck();
    // scores (T, T) = q k^T: row-major (T, T) is column-major (T, T)^T, so s^T = k q^T
    batched_gemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, HS, k, HS, head, q, HS, head, 0.0f, scores, T, square, heads);
    attention_softmax_kernel<<<grid_for((size_t)heads * T * WARP), BLOCK>>>(att, dropped, scores, bias, planes, DropoutMask(drop, drop_key), B, NH, T);
    launchCheck();
    // y (T, HS) = dropout(att) v
    batched_gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, HS, T, T, v, HS, head, dropped, T, square, 0.0f, w->y, HS, head, heads);
    merge_heads_kernel<<<grid_for(n_heads), BLOCK>>>(out, out16, w->y, B, T, NH, HS);
    launchCheck();
}

// out (B, T, C), its bf16 twin out16 (or nullptr) and att (B, NH, T, T) from qkv (B, T, 3C),
// whose q and k the PE has rotated, and the bias planes (planes, NH, T, T), or nullptr for a PE
// without a score bias
inline void attention_forward_gpu(cublasHandle_t cublas, float* out, bf16* out16, float* att, const float* qkv, const float* bias, int planes,
                                  const Dropout& drop, const uint32_t* drop_key, int B, int T, int C, int NH, AttentionWorkspace* w) {
    if (w->precision == PRECISION_BF16)
        attention_forward_with(cublas, out, out16, att, qkv, bias, planes, drop, drop_key, B, T, C, NH, w, w->q16, w->k16, w->v16, w->dropped16);
    else
        attention_forward_with(cublas, out, out16, att, qkv, bias, planes, drop, drop_key, B, T, C, NH, w, w->q, w->k, w->v, w->dropped);
}

// attention_backward_gpu with the products' operands (q, k, v, dy, dropped: dropout(att), and
// ds: the scores' gradient as the products read it) in buffers of their type
template <typename Operand>
inline void attention_backward_with(cublasHandle_t cublas, float* dqkv, float* dscores, const float* dout, const float* qkv, const float* att,
                                    const Dropout& drop, const uint32_t* drop_key, int B, int T, int C, int NH, AttentionWorkspace* w, Operand* q,
                                    Operand* k, Operand* v, Operand* dy, Operand* dropped, Operand* ds) {
    int HS = C / NH, heads = B * NH;
    long long head = (long long)T * HS, square = (long long)T * T;
    size_t n_heads = (size_t)heads * head;
    DropoutMask mask(drop, drop_key);
    split_qkv_kernel<<<grid_for(n_heads), BLOCK>>>(q, k, v, qkv, B, T, NH, HS);
    launchCheck();
    split_heads_kernel<<<grid_for(n_heads), BLOCK>>>(dy, dout, B, T, NH, HS);
    launchCheck();
    dropout_forward_kernel<<<grid_for((size_t)heads * square), BLOCK>>>(dropped, (bf16*)nullptr, att, mask, (size_t)heads * square);
    launchCheck();
    // de (T, T) = dy v^T;  dv (T, HS) = e^T dy
    batched_gemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, HS, v, HS, head, dy, HS, head, 0.0f, w->ddropped, T, square, heads);
    batched_gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_T, HS, T, T, dy, HS, head, dropped, T, square, 0.0f, w->dv, HS, head, heads);
    attention_softmax_backward_kernel<<<grid_for((size_t)heads * T * WARP), BLOCK>>>(dscores, ds, w->ddropped, att, mask, B, NH, T);
    launchCheck();
    // dq (T, HS) = ds k;  dk (T, HS) = ds^T q
    batched_gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, HS, T, T, k, HS, head, ds, T, square, 0.0f, w->dq, HS, head, heads);
    batched_gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_T, HS, T, T, q, HS, head, ds, T, square, 0.0f, w->dk, HS, head, heads);
    merge_qkv_kernel<<<grid_for(n_heads), BLOCK>>>(dqkv, w->dq, w->dk, w->dv, B, T, NH, HS);
    launchCheck();
}

// The forward's steps in reverse, for each head:
//   dy from dout (B, T, C)                       split into heads
//   de = dy v^T,  dv = e^T dy                    e = dropout(att), redrawn from att
//   ds = softmax backward of de                  the score gradient, also the bias's (dscores)
//   dq = ds k,    dk = ds^T q
//   dqkv <- dq, dk, dv                           overwritten, not accumulated
// The caller then adds dscores to the bias planes' gradient and rotates dq, dk back.
inline void attention_backward_gpu(cublasHandle_t cublas, float* dqkv, float* dscores, const float* dout, const float* qkv, const float* att,
                                   const Dropout& drop, const uint32_t* drop_key, int B, int T, int C, int NH, AttentionWorkspace* w) {
    if (w->precision == PRECISION_BF16)
        attention_backward_with(cublas, dqkv, dscores, dout, qkv, att, drop, drop_key, B, T, C, NH, w, w->q16, w->k16, w->v16, w->dy16, w->dropped16,
                                w->ds16);
    else
        attention_backward_with(cublas, dqkv, dscores, dout, qkv, att, drop, drop_key, B, T, C, NH, w, w->q, w->k, w->v, w->y, w->dropped, dscores);
}
