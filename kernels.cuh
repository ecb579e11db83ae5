/*
 kernels.cuh: the model's layers on the GPU. A launcher has the name of its CPU function in
 model.h with a _gpu suffix and computes the same thing, its arguments in the same order with
 these added: the bf16 twin beside each tensor a product reads (`store_with_twin`), dropout's
 key in device memory beside the Dropout, and where the CPU returns a sum, the device memory it
 is left in. Three launchers join CPU functions: residual_dropout_forward_gpu (dropout_forward,
 then residual_forward), gradient_norm_gpu (model.h's gradient_norm) and adamw_gpu
 (clip_gradients, then adamw_update). test/test_gpu.cu checks every one against its CPU
 counterpart. Attention is in attention.cuh.

 Conventions, as on the CPU: forward launchers overwrite their outputs, backward ones accumulate
 (+=). No kernel uses atomics: every sum runs in a fixed order (a warp's butterfly, a block's
 tree, or a loop), so a run repeats bit for bit on the same GPU.

 Every kernel, copy and cuBLAS call runs on the calling thread's default stream (make compiles
 with --default-stream per-thread, and cublas_create gives cuBLAS that stream): a CUDA graph can
 capture it, where it cannot capture the legacy default stream. So that a captured training step
 can be replayed, no launcher of the step reads anything from the host: the step's scalars (the
 dropout keys, the loss's divisor, AdamW's step size) are read from device memory, and its loss
 and gradient norm are left there.
*/
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <initializer_list>

#include "model.h"

// ----------------------------------------------------------------------------
// checking every CUDA and cuBLAS call

#define cudaCheck(call) cuda_check((call), #call, __FILE__, __LINE__)
inline void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
    if (status != cudaSuccess) fail("CUDA error '%s' in %s (%s:%d)", cudaGetErrorString(status), call, file, line);
}

#define cublasCheck(call) cublas_check((call), #call, __FILE__, __LINE__)
inline void cublas_check(cublasStatus_t status, const char* call, const char* file, int line) {
    if (status != CUBLAS_STATUS_SUCCESS) fail("cuBLAS error %d in %s (%s:%d)", (int)status, call, file, line);
}

// ----------------------------------------------------------------------------
// cuBLAS, opened when the first handle is made rather than linked. A process that links libcublas
// spends about half a second in libcublasLt's static initialisers before main, which every CPU run
// and every refused flag would pay for nothing (the tests start ./train hundreds of times).

// cublasGemmEx and cublasGemmStridedBatchedEx as the library exports them (cublas_api.h also
// declares C++ overloads of each, so decltype cannot name them)
typedef cublasStatus_t (*GemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n, int k, const void* alpha, const void* a,
                                 cudaDataType, int lda, const void* b, cudaDataType, int ldb, const void* beta, void* c, cudaDataType, int ldc,
                                 cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*GemmStridedBatchedEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n, int k, const void* alpha,
                                               const void* a, cudaDataType, int lda, long long stride_a, const void* b, cudaDataType, int ldb,
                                               long long stride_b, const void* beta, void* c, cudaDataType, int ldc, long long stride_c, int batch,
                                               cublasComputeType_t, cublasGemmAlgo_t);

// the cuBLAS functions this project calls, typed by their declarations in cublas_v2.h
struct CublasApi {
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    decltype(&cublasSetMathMode) set_math_mode;
    decltype(&cublasSetStream_v2) set_stream;
    decltype(&cublasSetWorkspace_v2) set_workspace;
    decltype(&cublasSgemm_v2) sgemm;
    decltype(&cublasSgemmStridedBatched) sgemm_strided_batched;
    GemmEx gemm_ex;  // bf16 operands
    GemmStridedBatchedEx gemm_strided_batched_ex;
};

template <typename Function>
void load_cublas_function(void* library, const std::string& library_name, const char* name, Function& function) {
    function = reinterpret_cast<Function>(dlsym(library, name));
    if (!function) fail("%s has no %s: it is not the cuBLAS %d this program was built with", library_name.c_str(), name, CUBLAS_VER_MAJOR);
}

// the functions, loaded on the first call; the library stays open until the process ends
inline const CublasApi& cublas_api() {
    static const CublasApi api = [] {
        std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
        void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!library) fail("cannot open cuBLAS, which the GPU path needs: %s", dlerror());
        CublasApi loaded;
        load_cublas_function(library, name, "cublasCreate_v2", loaded.create);
        load_cublas_function(library, name, "cublasDestroy_v2", loaded.destroy);
        load_cublas_function(library, name, "cublasSetMathMode", loaded.set_math_mode);
        load_cublas_function(library, name, "cublasSetStream_v2", loaded.set_stream);
        load_cublas_function(library, name, "cublasSetWorkspace_v2", loaded.set_workspace);
        load_cublas_function(library, name, "cublasSgemm_v2", loaded.sgemm);
        load_cublas_function(library, name, "cublasSgemmStridedBatched", loaded.sgemm_strided_batched);
        load_cublas_function(library, name, "cublasGemmEx", loaded.gemm_ex);
        load_cublas_function(library, name, "cublasGemmStridedBatchedEx", loaded.gemm_strided_batched_ex);
        return loaded;
    }();
    return api;
}

// cuBLAS's workspace on Hopper, as its documentation recommends (32 MiB)
static const size_t CUBLAS_WORKSPACE_BYTES = (size_t)32 << 20;

// A cuBLAS handle whose fp32 matmuls run at the given precision (model.h's Precision: tf32 on
// the tensor cores, else fp32; bf16's products take bf16 operands, which the tensor cores
// multiply whatever the mode) on this thread's default stream, with `workspace`
// (CUBLAS_WORKSPACE_BYTES of device memory) as its workspace: given, not allocated by cuBLAS
// while a graph is being captured. Release it with cublas_api().destroy.
inline cublasHandle_t cublas_create(Precision precision, void* workspace) {
    cublasHandle_t handle = nullptr;
    cublasCheck(cublas_api().create(&handle));
    cublasCheck(cublas_api().set_math_mode(handle, precision == PRECISION_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    cublasCheck(cublas_api().set_stream(handle, cudaStreamPerThread));
    cublasCheck(cublas_api().set_workspace(handle, workspace, CUBLAS_WORKSPACE_BYTES));  // after set_stream, which resets it
    return handle;
}

// after every launch: a bad launch configuration is reported where it happened
#define launchCheck() cudaCheck(cudaGetLastError())

// whether this machine has a CUDA device (no driver counts as none)
inline bool gpu_present() {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

static const int BLOCK = 256;
static const int WARP = 32;
inline unsigned grid_for(size_t threads) { return (unsigned)((threads + BLOCK - 1) / BLOCK); }

// sum and max over a warp by butterfly: every lane ends with the same value, in a fixed order
__device__ inline float warp_sum(float x) {
    for (int offset = WARP / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffff, x, offset);
    return x;
}
__device__ inline float warp_max(float x) {
    for (int offset = WARP / 2; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffff, x, offset));
    return x;
}

// the sum of one block's values, one per thread, by a tree in a fixed order; every thread gets
// it. Once per kernel: its shared array is reused without a barrier before the first write.
__device__ inline double block_sum(double x) {
    __shared__ double shared[BLOCK];
    shared[threadIdx.x] = x;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
        __syncthreads();
    }
    return shared[0];
}

// the global index of this thread's warp, and its lane
__device__ inline size_t warp_index() { return (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / WARP; }
__device__ inline int lane() { return threadIdx.x % WARP; }

// The multiplier of dropout element i: mask / (1 - p), times an extra scale (dropout_forward's s). The
// site's key is read from device memory, where the host writes each step's keys before the
// step, so a captured step draws new masks when replayed; without dropout it is not read.
struct DropoutMask {
    const uint32_t* key;  // in device memory; may be nullptr when d.p == 0
    uint32_t threshold;
    float kept;  // what a kept element is multiplied by

    DropoutMask(const Dropout& d, const uint32_t* site_key, float scale = 1.0f)
        : key(site_key), threshold(d.threshold()), kept(d.p == 0 ? scale : (float)d.scale() * scale) {}
    __device__ float factor(size_t i) const { return threshold == 0 || dropout_keeps(*key, (uint32_t)i, threshold) ? kept : 0.0f; }
};

// ----------------------------------------------------------------------------
// bf16 operands (--precision bf16). A product reads its operands rounded to bfloat16, as the
// CPU's operand() rounds them, and sums in fp32. A tensor that a product reads has a bf16 twin,
// its values rounded, which the kernel making the tensor writes as it makes them (the launchers'
// `out16`-style arguments; nullptr in fp32 and tf32, and where no product reads the tensor).
// Where nothing but products reads a tensor, the twin is all there is: the fp32 tensor's pointer
// is nullptr and its kernel writes the twin alone (model.cuh's BF16_TWINS); a gradient that is
// kept so starts from 0, as the backward's zeroed buffers do. The weights' twin is made again by
// every update (adamw_kernel, gpu_upload). Writing a twin costs its 2 bytes an element; rounding
// the finished tensor in a pass of its own cost 6 (4 read, 2 written), 18% of a bf16 step.

typedef __nv_bfloat16 bf16;

// x stored as a product will read it: an fp32 as it is, a bf16 rounded to nearest, ties to
// even (model.h's round_to_bf16)
__device__ inline void store(float* at, float x) { *at = x; }
__device__ inline void store(bf16* at, float x) { *at = __float2bfloat16_rn(x); }

// out[i] = x where the tensor is kept in fp32, and its twin out16[i] = x rounded where it has one
// (each pointer may be nullptr)
__device__ inline void store_with_twin(float* out, bf16* out16, size_t i, float x) {
    if (out) out[i] = x;
    if (out16) store(out16 + i, x);
}
// a gradient's value before a kernel adds into it: 0 for one kept in bf16 alone (d is nullptr)
__device__ inline float gradient_so_far(const float* d, size_t i) { return d ? d[i] : 0.0f; }

__global__ void round_to_bf16_kernel(bf16* out, const float* inp, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) store(out + i, inp[i]);
}
// out (n bf16) <- inp (n floats) rounded, for a tensor whose maker writes no twin (the uploaded
// parameters, and qkv's gradient: model.cuh says why); returns out, for the product that reads it
inline const bf16* round_to_bf16_gpu(bf16* out, const float* inp, size_t n) {
    round_to_bf16_kernel<<<grid_for(n), BLOCK>>>(out, inp, n);
    launchCheck();
    return out;
}

// ----------------------------------------------------------------------------
// dropout, ReLU, residual

// out (in fp32, or rounded to bf16 for a product that reads it) and its twin out16 (or nullptr)
template <typename Out>
__global__ void dropout_forward_kernel(Out* out, bf16* out16, const float* inp, DropoutMask mask, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = inp[i] * mask.factor(i);
    if (out) store(out + i, x);
    if (out16) store(out16 + i, x);
}
inline void dropout_forward_gpu(float* out, bf16* out16, const float* inp, const Dropout& d, const uint32_t* key, size_t n, float s = 1) {
    dropout_forward_kernel<<<grid_for(n), BLOCK>>>(out, out16, inp, DropoutMask(d, key, s), n);
    launchCheck();
}

__global__ void dropout_backward_kernel(float* dinp, bf16* dinp16, const float* dout, DropoutMask mask, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) store_with_twin(dinp, dinp16, i, gradient_so_far(dinp, i) + dout[i] * mask.factor(i));
}
inline void dropout_backward_gpu(float* dinp, bf16* dinp16, const float* dout, const Dropout& d, const uint32_t* key, size_t n, float s = 1) {
    dropout_backward_kernel<<<grid_for(n), BLOCK>>>(dinp, dinp16, dout, DropoutMask(d, key, s), n);
    launchCheck();
}

__global__ void relu_dropout_forward_kernel(float* out, bf16* out16, const float* inp, DropoutMask mask, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) store_with_twin(out, out16, i, inp[i] > 0 ? inp[i] * mask.factor(i) : 0.0f);
}
inline void relu_dropout_forward_gpu(float* out, bf16* out16, const float* inp, const Dropout& d, const uint32_t* key, size_t n) {
    relu_dropout_forward_kernel<<<grid_for(n), BLOCK>>>(out, out16, inp, DropoutMask(d, key), n);
    launchCheck();
}

// (every element's twin is written, the ones ReLU stops too)
__global__ void relu_dropout_backward_kernel(float* dinp, bf16* dinp16, const float* dout, const float* inp, DropoutMask mask, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float dx = gradient_so_far(dinp, i);
    if (inp[i] > 0) dx += dout[i] * mask.factor(i);
    store_with_twin(dinp, dinp16, i, dx);
}
inline void relu_dropout_backward_gpu(float* dinp, bf16* dinp16, const float* dout, const float* inp, const Dropout& d, const uint32_t* key,
                                      size_t n) {
    relu_dropout_backward_kernel<<<grid_for(n), BLOCK>>>(dinp, dinp16, dout, inp, DropoutMask(d, key), n);
    launchCheck();
}

// out = res + dropout(branch): a block's output joining the residual stream, model.h's
// dropout_forward and residual_forward in one pass over memory instead of three. Both roundings
// are kept (no fused multiply-add), so the sum is the two steps' to the bit. Its backward needs
// no kernel of its own: d_res passes on unchanged, and dropout_backward_gpu gives the branch's
// gradient (model.cuh).
__global__ void residual_dropout_forward_kernel(float* out, const float* res, const float* branch, DropoutMask mask, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = __fadd_rn(res[i], __fmul_rn(branch[i], mask.factor(i)));
}
inline void residual_dropout_forward_gpu(float* out, const float* res, const float* branch, const Dropout& d, const uint32_t* key, size_t n) {
    residual_dropout_forward_kernel<<<grid_for(n), BLOCK>>>(out, res, branch, DropoutMask(d, key), n);
    launchCheck();
}

// ----------------------------------------------------------------------------
// embedding

__global__ void embedding_forward_kernel(float* out, const int* tokens, const int* positions, const float* wte, const float* pe_params, PE pe,
                                         int B, int T, int C) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // out[b,t,c]
    if (i >= (size_t)B * T * C) return;
    int c = (int)(i % C);
    size_t bt = i / C;
    out[i] = wte[(size_t)tokens[bt] * C + c] + pe_input(pe, pe_params, position_of(positions, (int)(bt / T), (int)(bt % T), T), c);
}
inline void embedding_forward_gpu(float* out, const int* tokens, const int* positions, const float* wte, const float* pe_params, const PE& pe,
                                  int B, int T, int C) {
    embedding_forward_kernel<<<grid_for((size_t)B * T * C), BLOCK>>>(out, tokens, positions, wte, pe_params, pe, B, T, C);
    launchCheck();
}

// One block of BLOCK threads per table row (rows[bt]: the row position bt reads, -1 for none),
// so no two blocks add into the same row. A chunk of BLOCK positions at a time, the block lists
// those that read its row, in order (a warp's by ballot, the warps' one after another), and each
// thread adds their gradients into its channels in that order: every element is the CPU's sum,
// term for term. (A thread scanning every position for each of its channels read rows[] C / BLOCK
// times over, one position after another: 1.8 ms a step at 64 x 256 on an H200.) The token
// embedding's rows are the tokens; the Abacus table's, the digits' places.
__global__ void table_backward_kernel(float* dtable, const float* dout, const int* rows, int BT, int C) {
    __shared__ int readers[BLOCK];             // the chunk's positions that read this row, in order
    __shared__ int warp_counts[BLOCK / WARP];  // how many each warp found
    int row = blockIdx.x, w = threadIdx.x / WARP, l = threadIdx.x % WARP;
    float* d = dtable + (size_t)row * C;
    for (int first = 0; first < BT; first += BLOCK) {
        int bt = first + threadIdx.x;
        bool reads = bt < BT && rows[bt] == row;
        unsigned found = __ballot_sync(0xffffffffu, reads);
        if (l == 0) warp_counts[w] = __popc(found);
        __syncthreads();
        int at = __popc(found & ((1u << l) - 1)), n = 0;  // this position's place in the list, and the list's length
        for (int k = 0; k < BLOCK / WARP; k++) at += k < w ? warp_counts[k] : 0, n += warp_counts[k];
        if (reads) readers[at] = bt;
        __syncthreads();
        for (int c = threadIdx.x; c < C && n > 0; c += BLOCK) {
            float sum = d[c];
            for (int k = 0; k < n; k++) sum += dout[(size_t)readers[k] * C + c];
            d[c] = sum;
        }
        __syncthreads();  // the list is read before the next chunk writes it
    }
}
// ...and for a PE with an input table (ape_learned), one block per position, each thread
// scanning every token for its channels (pe.h's pe_input_backward, in order): the scan the
// token table's lists replaced, kept here as it goes through pe.h's hook for the table's row
// dtable[pos] += the gradients of the tokens at pos
__global__ void pe_input_backward_kernel(float* dpe_params, const float* dout, const int* positions, PE pe, int B, int T, int C) {
    int pos = blockIdx.x;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        for (int bt = 0; bt < B * T; bt++)
            if (position_of(positions, bt / T, bt % T, T) == pos) pe_input_backward(pe, dpe_params, dout[(size_t)bt * C + c], pos, c);
}
inline void embedding_backward_gpu(float* dwte, float* dpe_params, const float* dout, const int* tokens, const int* positions, const PE& pe,
                                   int B, int T, int C, int V) {
    table_backward_kernel<<<V, BLOCK>>>(dwte, dout, tokens, B * T, C);
    launchCheck();
    if (pe.kind != PE_APE_LEARNED) return;  // the only PE whose input is learned
    pe_input_backward_kernel<<<pe.max_pos, BLOCK>>>(dpe_params, dout, positions, pe, B, T, C);
    launchCheck();
}

// ----------------------------------------------------------------------------
// the wrappers that place digits (pe.h): Abacus rows and coupled positions, a thread per token

// rows[b,t] = the Abacus row token t of sequence b reads (-1 for a token that is not a digit)
__global__ void abacus_rows_kernel(int* rows, const int* tokens, const int* offsets, const unsigned char* is_digit, int B, int T) {
    size_t bt = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (bt >= (size_t)B * T) return;
    int b = (int)(bt / T);
    rows[bt] = abacus_row(tokens + (size_t)b * T, is_digit, (int)(bt % T), offsets ? offsets[b] : 0);
}
// out[b,t,:] += abacus[rows[b,t],:] for each digit (abacus_forward in model.h)
__global__ void abacus_forward_kernel(float* out, const int* rows, const float* abacus, size_t BT, int C) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // out[bt, c]
    if (i >= BT * C) return;
    int row = rows[i / C];
    if (row >= 0) out[i] += abacus[(size_t)row * C + i % C];
}
// rows (B, T) is written for abacus_backward_gpu, which reads the forward's
inline void abacus_forward_gpu(float* out, int* rows, const int* tokens, const int* offsets, const float* abacus, const unsigned char* is_digit,
                               int B, int T, int C) {
    abacus_rows_kernel<<<grid_for((size_t)B * T), BLOCK>>>(rows, tokens, offsets, is_digit, B, T);
    launchCheck();
    abacus_forward_kernel<<<grid_for((size_t)B * T * C), BLOCK>>>(out, rows, abacus, (size_t)B * T, C);
    launchCheck();
}
// forward: out[b,t,:] += abacus[row,:], so dabacus[row,:] += dout[b,t,:]: a block per row
inline void abacus_backward_gpu(float* dabacus, const float* dout, const int* rows, int B, int T, int C, int n_rows) {
    table_backward_kernel<<<n_rows, BLOCK>>>(dabacus, dout, rows, B * T, C);
    launchCheck();
}

// positions[b,t] = token t's coupled position, its sequence starting at offsets[b] (or 0)
__global__ void couple_positions_kernel(int* positions, const int* tokens, const int* offsets, const unsigned char* is_digit, int B, int T) {
    size_t bt = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (bt >= (size_t)B * T) return;
    int b = (int)(bt / T);
    positions[bt] = coupled_position(tokens + (size_t)b * T, is_digit, (int)(bt % T), offsets ? offsets[b] : 0);
}
inline void couple_positions_gpu(int* positions, const int* tokens, const int* offsets, const unsigned char* is_digit, int B, int T) {
    couple_positions_kernel<<<grid_for((size_t)B * T), BLOCK>>>(positions, tokens, offsets, is_digit, B, T);
    launchCheck();
}

// ----------------------------------------------------------------------------
// RMSNorm: one warp per row

__global__ void rmsnorm_forward_kernel(float* out, bf16* out16, float* rstd, const float* inp, const float* weight, size_t N, int C) {
    size_t n = warp_index();
    if (n >= N) return;
    const float* x = inp + n * C;
    float sum = 0;
    for (int c = lane(); c < C; c += WARP) sum += x[c] * x[c];
    float r = 1.0f / sqrtf(warp_sum(sum) / C + (float)RMSNORM_EPS);
    for (int c = lane(); c < C; c += WARP) store_with_twin(out, out16, n * C + c, x[c] * r * weight[c]);
    if (lane() == 0) rstd[n] = r;
}
inline void rmsnorm_forward_gpu(float* out, bf16* out16, float* rstd, const float* inp, const float* weight, size_t N, int C) {
    rmsnorm_forward_kernel<<<grid_for(N * WARP), BLOCK>>>(out, out16, rstd, inp, weight, N, C);
    launchCheck();
}

// dx_c += r w_c dy_c - (r^3 / C) x_c sum_k dy_k w_k x_k   (see rmsnorm_backward in model.h)
__global__ void rmsnorm_backward_input_kernel(float* dinp, const float* dout, const float* inp, const float* weight, const float* rstd, size_t N, int C) {
    size_t n = warp_index();
    if (n >= N) return;
    const float *x = inp + n * C, *dy = dout + n * C;
    float sum = 0;
    for (int c = lane(); c < C; c += WARP) sum += dy[c] * weight[c] * x[c];
    float r = rstd[n], dy_w_x = warp_sum(sum);
    for (int c = lane(); c < C; c += WARP) dinp[n * C + c] += r * weight[c] * dy[c] - r * r * r / C * x[c] * dy_w_x;
}

// dw_c += sum over rows of dy_c x_c r, in two fixed-order steps: each block sums a chunk of
// rows into partials[chunk][c], then one thread per channel sums the chunks in order
static const int ROWS_PER_CHUNK = 64;

__global__ void rmsnorm_weight_partials_kernel(float* partials, const float* dout, const float* inp, const float* rstd, size_t N, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    size_t first = (size_t)blockIdx.y * ROWS_PER_CHUNK;
    if (c >= C) return;
    float sum = 0;
    for (size_t n = first; n < first + ROWS_PER_CHUNK && n < N; n++) sum += dout[n * C + c] * inp[n * C + c] * rstd[n];
    partials[(size_t)blockIdx.y * C + c] = sum;
}

__global__ void sum_partials_kernel(float* out, const float* partials, int chunks, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float sum = 0;
    for (int k = 0; k < chunks; k++) sum += partials[(size_t)k * C + c];
    out[c] += sum;
}

// `partials` holds ceil(N / ROWS_PER_CHUNK) * C floats
inline void rmsnorm_backward_gpu(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight, const float* rstd,
                                 size_t N, int C, float* partials) {
    rmsnorm_backward_input_kernel<<<grid_for(N * WARP), BLOCK>>>(dinp, dout, inp, weight, rstd, N, C);
    launchCheck();
    int chunks = (int)((N + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK);
    rmsnorm_weight_partials_kernel<<<dim3(grid_for(C), chunks), BLOCK>>>(partials, dout, inp, rstd, N, C);
    launchCheck();
    sum_partials_kernel<<<grid_for(C), BLOCK>>>(dweight, partials, chunks, C);
    launchCheck();
}

// ----------------------------------------------------------------------------
// matmul by cuBLAS. Row-major X (r, c) is column-major X^T, so out = inp weight^T becomes
// out^T = weight inp^T in cuBLAS's terms. beta = 1 in the backward: it accumulates.

// c (m, n) = op(a) op(b) + beta c, column-major, c in fp32: fp32 operands in the handle's mode
// (fp32 or tf32), bf16 operands with their products summed in fp32
inline void gemm(cublasHandle_t cublas, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k, const float* a, int lda, const float* b,
                 int ldb, float beta, float* c, int ldc) {
    const float one = 1;
    cublasCheck(cublas_api().sgemm(cublas, op_a, op_b, m, n, k, &one, a, lda, b, ldb, &beta, c, ldc));
}
inline void gemm(cublasHandle_t cublas, cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k, const bf16* a, int lda, const bf16* b,
                 int ldb, float beta, float* c, int ldc) {
    const float one = 1;
    cublasCheck(cublas_api().gemm_ex(cublas, op_a, op_b, m, n, k, &one, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &beta, c, CUDA_R_32F, ldc,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// A product reads all its operands' twins (bf16) or none (fp32, tf32): one missing would be
// read at address 0
inline void require_all_or_no_twins(std::initializer_list<const bf16*> twins) {
    bool some = false, all = true;
    for (const bf16* twin : twins) some |= twin != nullptr, all &= twin != nullptr;
    if (some && !all) fail("internal error: a bf16 product's operand has no bf16 twin");
}

// out (N, OC) = inp (N, C) weight^T; in bf16 of their twins inp16 and weight16, which are
// nullptr in fp32 and tf32
inline void matmul_forward_gpu(cublasHandle_t cublas, float* out, const float* inp, const bf16* inp16, const float* weight, const bf16* weight16,
                               size_t N, int C, int OC) {
    require_all_or_no_twins({inp16, weight16});
    if (inp16)
        gemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, OC, (int)N, C, weight16, C, inp16, C, 0, out, OC);
    else
        gemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, OC, (int)N, C, weight, C, inp, C, 0, out, OC);
}

// dinp (N, C) += dout (N, OC) weight (OC, C);  dweight (OC, C) += dout^T (OC, N) inp (N, C);
// in bf16 of the twins dout16, inp16 and weight16 (nullptr in fp32 and tf32)
inline void matmul_backward_gpu(cublasHandle_t cublas, float* dinp, float* dweight, const float* dout, const bf16* dout16, const float* inp,
                                const bf16* inp16, const float* weight, const bf16* weight16, size_t N, int C, int OC) {
    require_all_or_no_twins({dout16, inp16, weight16});
    if (dout16) {
        gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, C, (int)N, OC, weight16, C, dout16, OC, 1, dinp, C);
        gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_T, C, OC, (int)N, inp16, C, dout16, OC, 1, dweight, C);
    } else {
        gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, C, (int)N, OC, weight, C, dout, OC, 1, dinp, C);
        gemm(cublas, CUBLAS_OP_N, CUBLAS_OP_T, C, OC, (int)N, inp, C, dout, OC, 1, dweight, C);
    }
}

// ----------------------------------------------------------------------------
// cross-entropy: one warp per row; rows without a target (-1) have no loss

// the largest of a row's V logits and the sum of exp(z - max), computed by a warp
__device__ inline void softmax_stats(const float* z, int V, float* max, float* sum) {
    float m = -INFINITY, s = 0;
    for (int v = lane(); v < V; v += WARP) m = fmaxf(m, z[v]);
    m = warp_max(m);
    for (int v = lane(); v < V; v += WARP) s += expf(z[v] - m);
    *max = m, *sum = warp_sum(s);
}

__global__ void crossentropy_forward_kernel(float* losses, const float* logits, const int* targets, size_t N, int V) {
    size_t n = warp_index();
    if (n >= N) return;
    const float* z = logits + n * V;
    float max, sum;
    softmax_stats(z, V, &max, &sum);
    if (lane() == 0) losses[n] = targets[n] < 0 ? 0.0f : logf(sum) + max - z[targets[n]];
}

// one block: the sum of n floats, each thread's strided sum in double, then block_sum
__global__ void sum_kernel(double* out, const float* x, size_t n) {
    double sum = 0;
    for (size_t i = threadIdx.x; i < n; i += BLOCK) sum += x[i];
    sum = block_sum(sum);
    if (threadIdx.x == 0) *out = sum;
}

// The per-row losses and, in device memory, their sum (the host divides it by the count of
// target rows when it reads it, after the step: the mean, as crossentropy_forward returns).
inline void crossentropy_forward_gpu(const float* logits, const int* targets, size_t N, int V, float* losses, double* loss_sum) {
    crossentropy_forward_kernel<<<grid_for(N * WARP), BLOCK>>>(losses, logits, targets, N, V);
    launchCheck();
    sum_kernel<<<1, BLOCK>>>(loss_sum, losses, N);
    launchCheck();
}

// (a row without a target adds nothing, and its twin is written all the same)
__global__ void crossentropy_backward_kernel(float* dlogits, bf16* dlogits16, const float* logits, const int* targets, size_t N, int V,
                                             const float* inverse_count) {
    size_t n = warp_index();
    if (n >= N) return;
    size_t row = n * V;
    if (targets[n] < 0) {
        if (dlogits16)
            for (int v = lane(); v < V; v += WARP) store(dlogits16 + row + v, gradient_so_far(dlogits, row + v));
        return;
    }
    const float* z = logits + row;
    float max, sum;
    softmax_stats(z, V, &max, &sum);
    for (int v = lane(); v < V; v += WARP) {
        float dz = (expf(z[v] - max) / sum - (v == targets[n])) * *inverse_count;
        store_with_twin(dlogits, dlogits16, row + v, gradient_so_far(dlogits, row + v) + dz);
    }
}
// inverse_count: 1 / crossentropy_backward's count, in device memory (it changes from batch to batch)
inline void crossentropy_backward_gpu(float* dlogits, bf16* dlogits16, const float* logits, const int* targets, size_t N, int V,
                                      const float* inverse_count) {
    crossentropy_backward_kernel<<<grid_for(N * WARP), BLOCK>>>(dlogits, dlogits16, logits, targets, N, V, inverse_count);
    launchCheck();
}

// ----------------------------------------------------------------------------
// optimisation: the global gradient norm, clipping, AdamW

// What a training step reads from device memory rather than from its kernels' arguments, so that
// a captured step replays with each step's values: the host writes them before the step.
struct StepInputs {
    float inverse_count;       // 1 / the tokens the loss's gradient averages over
    double max_norm;           // the gradient norm clipping keeps to
    double step_size;          // AdamW's lr sqrt(1 - beta2^t) / (1 - beta1^t)
    double decay;              // lr * weight decay: the share of a decaying weight taken off
    double beta1, beta2, eps;  // AdamW's, as OptimConfig has them
};

// What the step leaves in device memory for the host to read once it has finished.
struct StepResults {
    double loss_sum;  // the per-row losses, summed
    double norm;      // the gradient norm before clipping
};

static const int NORM_CHUNK = 1 << 16;  // elements per block of the sum of squares

// each block: the sum of squares of one chunk, threads' strided sums then block_sum, in double
__global__ void sum_of_squares_kernel(double* partials, const float* x, size_t n) {
    size_t first = (size_t)blockIdx.x * NORM_CHUNK;
    double sum = 0;
    for (size_t i = first + threadIdx.x; i < first + NORM_CHUNK && i < n; i += BLOCK) sum += (double)x[i] * x[i];
    sum = block_sum(sum);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// one block: the norm, the square root of the chunks' sums added in a fixed order
__global__ void gradient_norm_kernel(StepResults* results, const double* partials, int chunks) {
    double sum = 0;
    for (int i = threadIdx.x; i < chunks; i += BLOCK) sum += partials[i];
    sum = block_sum(sum);
    if (threadIdx.x == 0) results->norm = sqrt(sum);
}

// the gradients' norm, before clipping, into results->norm (model.h's gradient_norm). `partials` holds n / NORM_CHUNK + 1 doubles.
inline void gradient_norm_gpu(const float* grads, size_t n, double* partials, StepResults* results) {
    int chunks = (int)((n + NORM_CHUNK - 1) / NORM_CHUNK);
    sum_of_squares_kernel<<<chunks, BLOCK>>>(partials, grads, n);
    launchCheck();
    gradient_norm_kernel<<<1, BLOCK>>>(results, partials, chunks);
    launchCheck();
}

// clip_gradients, then adamw_update, of model.h over every tensor at once (the flat buffer), in
// double like the CPU. Each gradient is clipped as it is read: times max_norm / (norm + 1e-6)
// where that is below 1, the CPU's rounding, while the gradients in memory stay as the backward
// left them (a pass of its own over them cost 0.27 ms a step on an H200). decays[i]: whether
// element i's tensor decays. A step whose loss or gradient norm (as the last forward and
// gradient_norm_gpu left them) is not finite changes nothing, as on the host.
__global__ void adamw_kernel(float* params, bf16* params16, const float* grads, float* m, float* v, const unsigned char* decays, size_t n,
                             const StepInputs* in, const StepResults* results) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n || !isfinite(results->loss_sum) || !isfinite(results->norm)) return;
    float g = grads[i];
    double clip = in->max_norm / (results->norm + 1e-6);
    if (clip < 1) g *= (float)clip;
    m[i] = (float)(in->beta1 * m[i] + (1 - in->beta1) * g);
    v[i] = (float)(in->beta2 * v[i] + (1 - in->beta2) * g * g);
    float p = params[i] - (float)(in->step_size * m[i] / (sqrt((double)v[i]) + in->eps));
    double decay = decays[i] ? in->decay : 0.0;
    params[i] = p - (float)(decay * p);
    if (params16) store(params16 + i, params[i]);
}
// params16: the parameters' bf16 copy, made again from the updated ones (nullptr: none)
inline void adamw_gpu(float* params, bf16* params16, const float* grads, float* m, float* v, const unsigned char* decays, size_t n,
                      const StepInputs* in, const StepResults* results) {
    adamw_kernel<<<grid_for(n), BLOCK>>>(params, params16, grads, m, v, decays, n, in, results);
    launchCheck();
}
