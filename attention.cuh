/*
 attention.cuh: causal attention on the GPU, forward and backward, with the PE's hooks: RoPE on q
 and k, ALiBi's and T5's score bias, T5's table gradient, and counter-based dropout on the
 probabilities (the same masks as model.h draws).

 This is the clear version: it materialises the (T, T) scores of every head, which sequences this
 short afford, and leaves the matrix products to cuBLAS:
   split heads     q, k, v (B, NH, T, HS) from qkv (B, T, 3C)
   scores          s = q k^T                                    one batched GEMM over (b, h)
   softmax         att = softmax_{j<=i}(s + bias), e = dropout(att)      one warp per row
   values          y = e v, merged back to (B, T, C)            one batched GEMM
 The backward runs the same steps in reverse (see attention_backward_gpu). No atomics: T5's table
 gradient is summed per sequence and distance, over the sequences, then per bucket, in a fixed
 order.
*/
#pragma once

#include "kernels.cuh"

// GPU-only buffers of one attention call, reused by every layer (sized for max_B x max_T)
struct AttentionWorkspace {
    float *q, *k, *v, *y;       // (B, NH, T, HS): queries, keys, values, outputs (and their gradients)
    float *dq, *dk, *dv;        // (B, NH, T, HS)
    float *dropped, *ddropped;  // (B, NH, T, T): dropout(att) and its gradient
    float* by_sequence;         // (B, NH, T): the score gradient summed per sequence, head and distance
    float* by_distance;         // (NH, T): the same, summed over the sequences
};

// ----------------------------------------------------------------------------
// heads: (B, T, 3, NH, HS) <-> (B, NH, T, HS)

// q, k, v (B, NH, T, HS) <- qkv (B, T, 3C)
__global__ void split_qkv_kernel(float* q, float* k, float* v, const float* qkv, int B, int T, int NH, int HS) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // q[b,h,t,d]
    if (i >= (size_t)B * NH * T * HS) return;
    int d = i % HS, t = (i / HS) % T, h = (i / HS / T) % NH, b = (int)(i / HS / T / NH), C = NH * HS;
    size_t from = ((size_t)b * T + t) * 3 * C + h * HS + d;
    q[i] = qkv[from];
    k[i] = qkv[from + C];
    v[i] = qkv[from + 2 * C];
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

// out (B, T, C) <- heads (B, NH, T, HS)
__global__ void merge_heads_kernel(float* out, const float* heads, int B, int T, int NH, int HS) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // heads[b,h,t,d]
    if (i >= (size_t)B * NH * T * HS) return;
    int d = i % HS, t = (i / HS) % T, h = (i / HS / T) % NH, b = (int)(i / HS / T / NH);
    out[((size_t)b * T + t) * NH * HS + h * HS + d] = heads[i];
}

// heads (B, NH, T, HS) <- x (B, T, C): the backward of merge_heads
__global__ void split_heads_kernel(float* heads, const float* x, int B, int T, int NH, int HS) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= (size_t)B * NH * T * HS) return;
    int d = i % HS, t = (i / HS) % T, h = (i / HS / T) % NH, b = (int)(i / HS / T / NH);
    heads[i] = x[((size_t)b * T + t) * NH * HS + h * HS + d];
}

// ----------------------------------------------------------------------------
// RoPE: the PE's hook on q and k, in place in qkv (see rotate_qk_forward in model.h)

__global__ void rotate_qk_kernel(float* qkv, PE pe, int B, int T, int C, int NH, int direction) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // (b, t, h)
    if (i >= (size_t)B * T * NH) return;
    int h = i % NH, t = (i / NH) % T, HS = C / NH;
    float* q = qkv + (i / NH) * 3 * C + h * HS;
    pe_rotate(pe, q, t, direction, QUERY);
    pe_rotate(pe, q + C, t, direction, KEY);
}
inline void rotate_qk_forward_gpu(float* qkv, const PE& pe, int B, int T, int C, int NH) {
    if (pe.rot == 0) return;
    rotate_qk_kernel<<<grid_for((size_t)B * T * NH), BLOCK>>>(qkv, pe, B, T, C, NH, +1);
    launchCheck();
}
inline void rotate_qk_backward_gpu(float* dqkv, const PE& pe, int B, int T, int C, int NH) {
    if (pe.rot == 0) return;
    rotate_qk_kernel<<<grid_for((size_t)B * T * NH), BLOCK>>>(dqkv, pe, B, T, C, NH, -1);
    launchCheck();
}

// ----------------------------------------------------------------------------
// softmax with the PE's bias and the causal mask; one warp per row (b, h, i)

// att[j] = softmax over j <= i of (scores[j] + bias(i, j)), 0 for j > i; dropped = dropout(att)
__global__ void attention_softmax_kernel(float* att, float* dropped, const float* scores, const float* pe_table, PE pe, DropoutMask mask,
                                         int B, int NH, int T) {
    size_t row = warp_index();
    if (row >= (size_t)B * NH * T) return;
    int i = row % T, h = (row / T) % NH;
    const float* s = scores + row * T;
    float max = -INFINITY, sum = 0;
    for (int j = lane(); j <= i; j += WARP) max = fmaxf(max, s[j] + pe_score_bias(pe, pe_table, h, i, j));
    max = warp_max(max);
    for (int j = lane(); j <= i; j += WARP) sum += expf(s[j] + pe_score_bias(pe, pe_table, h, i, j) - max);
    sum = warp_sum(sum);
    for (int j = lane(); j < T; j += WARP) {
        float a = j <= i ? expf(s[j] + pe_score_bias(pe, pe_table, h, i, j) - max) / sum : 0.0f;
        att[row * T + j] = a;
        dropped[row * T + j] = a * mask.factor(row * T + j);
    }
}

// forward: e_j = a_j m_j / (1 - p) with a = softmax(s), so
//   da_j = de_j m_j / (1 - p)      ds_j = a_j (da_j - sum_k a_k da_k)      (0 for j > i)
__global__ void attention_softmax_backward_kernel(float* dscores, const float* ddropped, const float* att, DropoutMask mask, int B, int NH, int T) {
    size_t row = warp_index();
    if (row >= (size_t)B * NH * T) return;
    int i = row % T;
    const float *a = att + row * T, *de = ddropped + row * T;
    float sum = 0;
    for (int j = lane(); j <= i; j += WARP) sum += a[j] * de[j] * mask.factor(row * T + j);
    sum = warp_sum(sum);
    for (int j = lane(); j < T; j += WARP) dscores[row * T + j] = j <= i ? a[j] * (de[j] * mask.factor(row * T + j) - sum) : 0.0f;
}

// ----------------------------------------------------------------------------
// the learned bias's gradient: every layer and position with the same (head, distance) reads
// the same table entry, so sum dscores per (sequence, head, distance), then over the sequences,
// then per table row: three fixed-order sums, each with a thread per output

// by_sequence[b][h][d] = sum over i >= d of dscores[b, h, i, i - d]; neighbouring threads take
// neighbouring distances, so a warp reads 32 adjacent scores of one row
__global__ void bias_grad_by_sequence_kernel(float* by_sequence, const float* dscores, int B, int NH, int T) {
    size_t index = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // (b, h, d)
    if (index >= (size_t)B * NH * T) return;
    int d = index % T;
    const float* ds = dscores + index / T * T * T;  // dscores[b, h, :, :]
    float sum = 0;
    for (int i = d; i < T; i++) sum += ds[(size_t)i * T + (i - d)];
    by_sequence[index] = sum;
}

// by_distance[h][d] = sum over b of by_sequence[b][h][d]
__global__ void bias_grad_by_distance_kernel(float* by_distance, const float* by_sequence, int B, int NH, int T) {
    int index = blockIdx.x * blockDim.x + threadIdx.x;  // (h, d)
    if (index >= NH * T) return;
    float sum = 0;
    for (int b = 0; b < B; b++) sum += by_sequence[(size_t)b * NH * T + index];
    by_distance[index] = sum;
}

// dtable[row][h] += sum over distances d whose row is `row` of by_distance[h][d]   (one thread per (row, h))
__global__ void bias_grad_by_row_kernel(float* dtable, const float* by_distance, PE pe, int NH, int T, int rows) {
    int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= rows * NH) return;
    int row = index / NH, h = index % NH;
    float sum = 0;
    for (int d = 0; d < T; d++)
        if (pe_table_row(pe, d) == row) sum += by_distance[h * T + d];
    dtable[index] += sum;
}

inline void pe_bias_backward_gpu(float* dpe_table, const float* dscores, const PE& pe, int B, int T, int NH, AttentionWorkspace* w) {
    int rows = pe_table_rows(pe.kind);
    if (rows == 0) return;
    bias_grad_by_sequence_kernel<<<grid_for((size_t)B * NH * T), BLOCK>>>(w->by_sequence, dscores, B, NH, T);
    launchCheck();
    bias_grad_by_distance_kernel<<<grid_for((size_t)NH * T), BLOCK>>>(w->by_distance, w->by_sequence, B, NH, T);
    launchCheck();
    bias_grad_by_row_kernel<<<grid_for((size_t)rows * NH), BLOCK>>>(dpe_table, w->by_distance, pe, NH, T, rows);
    launchCheck();
}

// ----------------------------------------------------------------------------
// attention, forward and backward (attention_forward / attention_backward of model.h)

// batched over the B * NH heads: C (m, n) = op(A) op(B), each matrix `stride` floats from the last
inline void batched_gemm(cublasHandle_t cublas, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k, const float* a, int lda,
                         long long stride_a, const float* b, int ldb, long long stride_b, float beta, float* c, int ldc, long long stride_c, int batch) {
    const float one = 1;
    cublasCheck(cublas_api().sgemm_strided_batched(cublas, op_a, op_b, m, n, k, &one, a, lda, stride_a, b, ldb, stride_b, &beta, c, ldc, stride_c, batch));
}

// out (B, T, C) and att (B, NH, T, T) from qkv (B, T, 3C), whose q and k the PE has rotated
inline void attention_forward_gpu(cublasHandle_t cublas, float* out, float* att, const float* qkv, const float* pe_table, const PE& pe,
                                  const Dropout& drop, uint32_t drop_key, int B, int T, int C, int NH, AttentionWorkspace* w) {
    int HS = C / NH, heads = B * NH;
    long long head = (long long)T * HS, square = (long long)T * T;
    size_t n_heads = (size_t)heads * head;
    split_qkv_kernel<<<grid_for(n_heads), BLOCK>>>(w->q, w->k, w->v, qkv, B, T, NH, HS);
    launchCheck();
    // scores (T, T) = q k^T: row-major (T, T) is column-major (T, T)^T, so s^T = k q^T
    batched_gemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, HS, w->k, HS, head, w->q, HS, head, 0.0f, w->dropped, T, square, heads);
    // the scores sit in `dropped` only until the softmax reads them row by row into att
    attention_softmax_kernel<<<grid_for((size_t)heads * T * WARP), BLOCK>>>(att, w->dropped, w->dropped, pe_table, pe, DropoutMask(drop, drop_key), B, NH, T);
    launchCheck();
    // y (T, HS) = dropout(att) v
    batched_gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, HS, T, T, w->v, HS, head, w->dropped, T, square, 0.0f, w->y, HS, head, heads);
    merge_heads_kernel<<<grid_for(n_heads), BLOCK>>>(out, w->y, B, T, NH, HS);
    launchCheck();
}

// The forward's steps in reverse, for each head:
//   dy from dout (B, T, C)                       split into heads
//   de = dy v^T,  dv = e^T dy                    e = dropout(att), redrawn from att
//   ds = softmax backward of de                  the score gradient, also the bias's (dscores)
//   dq = ds k,    dk = ds^T q
//   dqkv <- dq, dk, dv                           overwritten, not accumulated
// The caller then adds the bias gradient (pe_bias_backward_gpu) and rotates dq, dk back.
inline void attention_backward_gpu(cublasHandle_t cublas, float* dqkv, float* dscores, const float* dout, const float* qkv, const float* att,
                                   const Dropout& drop, uint32_t drop_key, int B, int T, int C, int NH, AttentionWorkspace* w) {
    int HS = C / NH, heads = B * NH;
    long long head = (long long)T * HS, square = (long long)T * T;
    size_t n_heads = (size_t)heads * head;
    DropoutMask mask(drop, drop_key);
    split_qkv_kernel<<<grid_for(n_heads), BLOCK>>>(w->q, w->k, w->v, qkv, B, T, NH, HS);
    launchCheck();
    split_heads_kernel<<<grid_for(n_heads), BLOCK>>>(w->y, dout, B, T, NH, HS);  // dy
    launchCheck();
    dropout_forward_kernel<<<grid_for((size_t)heads * square), BLOCK>>>(w->dropped, att, mask, (size_t)heads * square);
    launchCheck();
    // de (T, T) = dy v^T;  dv (T, HS) = e^T dy
    batched_gemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, HS, w->v, HS, head, w->y, HS, head, 0.0f, w->ddropped, T, square, heads);
    batched_gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_T, HS, T, T, w->y, HS, head, w->dropped, T, square, 0.0f, w->dv, HS, head, heads);
    attention_softmax_backward_kernel<<<grid_for((size_t)heads * T * WARP), BLOCK>>>(dscores, w->ddropped, att, mask, B, NH, T);
    launchCheck();
    // dq (T, HS) = ds k;  dk (T, HS) = ds^T q
    batched_gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, HS, T, T, w->k, HS, head, dscores, T, square, 0.0f, w->dq, HS, head, heads);
    batched_gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_T, HS, T, T, w->q, HS, head, dscores, T, square, 0.0f, w->dk, HS, head, heads);
    merge_qkv_kernel<<<grid_for(n_heads), BLOCK>>>(dqkv, w->dq, w->dk, w->dv, B, T, NH, HS);
    launchCheck();
}
