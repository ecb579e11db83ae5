/*
 Attention forward with the PE hooks (bias, causal mask, softmax, dropout), every version checked
 against the CPU reference in model.h and timed. The shape is the paper model's attention (12
 heads of 64) on a batch of B sequences of T tokens.

   make dev/cuda/attention_forward
   ./dev/cuda/attention_forward VERSION [PE] [B T]      (default: 2 t5 64 256; any PE but cope)

 version 1: one thread per query row (b, h, i), the CPU's loop as it stands
 version 2: what ./train runs (attention.cuh): heads split apart, q k^T and att v as batched
            cuBLAS GEMMs, one warp per softmax row reading the bias plane (made once per step for
            every layer, so not timed here)
 version 3: fused, flash style, fp32 without tensor cores: a warp per query row reads q, k and v
            straight from qkv and writes its head's slice of out, with keys in tiles through
            shared memory and an online softmax, so no (T, T) matrix exists; the bias computed
            where it is used, by pe.h's pe_score_bias. A first step to issue 11's fused kernel:
            its arithmetic, not yet its speed (no tensor cores, no register tiles: 1.17 ms
            against version 2's 0.76 at 64 x 256 on an H200, 0.078 against 0.097 at 64 x 48)
 version 4: version 3's algorithm in bf16 on the tensor cores (WMMA, 16 x 16 x 16 tiles): a
            warp per 16 query rows, q k^T and p v as tile products, checked against the CPU's
            fused bf16 attention (the same key tiles of ATTENTION_TILE, the same roundings) and
            timed beside version 2 in bf16. Its arithmetic holds for every PE (an H200,
            2026-11-28), its speed not yet: 0.875 ms against version 2's 0.474 in bf16 at 64 x
            256, 0.098 against 0.079 at 64 x 48 (k and v rounded again for every 32 queries,
            the softmax on two lanes a row, the partial outputs through shared memory)
*/
#include <mma.h>

#include "dev/cuda/common.cuh"
#include "model.cuh"

// version 1: a thread computes a whole query row: scores, softmax, then the weighted values
__global__ void attention_forward_kernel1(float* out, float* att, const float* qkv, const float* table, PE pe, DropoutMask mask,
                                          int B, int T, int C, int NH) {
    size_t row = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // (b, h, i)
    if (row >= (size_t)B * NH * T) return;
    int i = row % T, h = (row / T) % NH, b = (int)(row / T / NH), HS = C / NH;
    const float* q = qkv + ((size_t)b * T + i) * 3 * C + h * HS;
    float* a = att + row * T;
    float max = -INFINITY, sum = 0;
    for (int j = 0; j <= i; j++) {
        const float* k = qkv + ((size_t)b * T + j) * 3 * C + C + h * HS;
        float s = 0;
        for (int d = 0; d < HS; d++) s += q[d] * k[d];
        a[j] = s + pe_score_bias(pe, table, h, i, j);
        max = fmaxf(max, a[j]);
    }
    for (int j = 0; j <= i; j++) sum += a[j] = expf(a[j] - max);
    for (int j = 0; j < T; j++) a[j] = j <= i ? a[j] / sum : 0.0f;
    float* o = out + ((size_t)b * T + i) * C + h * HS;
    for (int d = 0; d < HS; d++) o[d] = 0;
    for (int j = 0; j <= i; j++) {
        float e = a[j] * mask.factor(row * T + j);
        const float* v = qkv + ((size_t)b * T + j) * 3 * C + 2 * C + h * HS;
        for (int d = 0; d < HS; d++) o[d] += e * v[d];
    }
}

// version 3. The row keeps a running max m of its scores and a running sum l of exp(s - m), and
// rescales its partial output by exp(m_old - m) whenever m grows (online softmax), so the
// output is sum_j exp(s_j - m) dropout_j v_j / l once every key is seen. Dropout multiplies a
// probability where it weighs v_j, never in l: dropout(softmax(s)), as the CPU computes it. Each
// row's log-sum-exp, m + log l, goes to lse (B, NH, T): what a fused backward needs to recompute
// the probabilities.
static const int ROWS3 = 8;  // query rows per block: a warp each
template <int HS>
__global__ void attention_forward_kernel3(float* out, float* lse, const float* qkv, const float* table, const int* positions, PE pe,
                                          DropoutMask mask, int B, int T, int NH) {
    constexpr int TILE = WARP, PER_LANE = (HS + WARP - 1) / WARP;  // a key per lane; output dims d = lane + WARP r
    __shared__ float q_s[ROWS3][HS];
    __shared__ float k_s[TILE][HS + 1];  // + 1: lane j reads row j, and the rows then start in different banks
    __shared__ float v_s[TILE][HS];
    int bh = blockIdx.y, b = bh / NH, h = bh % NH, C = NH * HS;
    int first = blockIdx.x * ROWS3, i = first + threadIdx.x / WARP, lane = threadIdx.x % WARP;  // i: this warp's query
    for (int x = threadIdx.x; x < ROWS3 * HS; x += blockDim.x) {
        int r = x / HS, d = x % HS;
        q_s[r][d] = first + r < T ? qkv[((size_t)b * T + first + r) * 3 * C + h * HS + d] : 0.0f;
    }
    size_t row = (size_t)bh * T + i;  // (b, h, i), as the dropout mask counts
    int pos_i = i < T ? position_of(positions, b, i, T) : 0;
    float m = -INFINITY, l = 0, acc[PER_LANE] = {};
    int last = min(first + ROWS3, T) - 1;  // the block's last query: later keys are masked for every row
    for (int start = 0; start <= last; start += TILE) {
        __syncthreads();  // every warp is done with the previous tile
        for (int x = threadIdx.x; x < TILE * HS; x += blockDim.x) {
            int jj = x / HS, d = x % HS, j = start + jj;
            const float* k = qkv + ((size_t)b * T + j) * 3 * C + C + h * HS + d;
            k_s[jj][d] = j < T ? k[0] : 0.0f;
            v_s[jj][d] = j < T ? k[C] : 0.0f;
        }
        __syncthreads();
        if (i >= T || start > i) continue;  // a whole warp: its row is past T, or the tile is past its query
        int j = start + lane;
        float s = -INFINITY;  // a masked key (j > i) adds nothing
        if (j <= i) {
            s = 0;
            for (int d = 0; d < HS; d++) s += q_s[i - first][d] * k_s[lane][d];
            s += pe_score_bias(pe, table, h, pos_i, position_of(positions, b, j, T));
        }
        float m_new = fmaxf(m, warp_max(s));  // finite: key `start` <= i is in every tile the row reads
        float p = j <= i ? expf(s - m_new) : 0.0f, rescale = expf(m - m_new);  // exp(-inf) = 0 at the first tile
        l = l * rescale + warp_sum(p);
        float weight = j <= i ? p * mask.factor(row * T + j) : 0.0f;
        for (int r = 0; r < PER_LANE; r++) acc[r] *= rescale;
        for (int jj = 0; jj < TILE; jj++) {
            float w = __shfl_sync(0xffffffff, weight, jj);
            for (int r = 0; r < PER_LANE; r++)
                if (lane + WARP * r < HS) acc[r] += w * v_s[jj][lane + WARP * r];
        }
        m = m_new;
    }
    if (i >= T) return;
    for (int r = 0; r < PER_LANE; r++)
        if (lane + WARP * r < HS) out[((size_t)b * T + i) * C + h * HS + lane + WARP * r] = acc[r] / l;
    if (lane == 0) lse[row] = m + logf(l);
}

// version 4. A block holds Q4_WARPS x 16 query rows of one (b, h) in shared memory, rounded to
// bf16, and walks the keys in tiles of ATTENTION_TILE (32, as the CPU's fused attention reads
// them), each tile's k and v rounded into shared memory. Each warp owns 16 rows: the tensor cores
// make its (16, 32) scores from q and the tile's k; two lanes a row then add the bias, update the
// row's running max m and sum l (online softmax, as version 3) and write p = exp(s - m) dropout,
// rounded to bf16 as the CPU rounds it, before the division by l; the row's partial output (16,
// 64), kept in fp32 in shared memory, is scaled by exp(m_old - m) and gets p v from the tensor
// cores. WMMA's accumulator layout is opaque, hence the partial output in shared memory rather
// than in registers: the rows are scaled there, where a lane knows which row it holds.
namespace wmma = nvcuda::wmma;
static const int Q4_WARPS = 2, Q4_ROWS = 16 * Q4_WARPS;  // query rows per block: 16 a warp
template <int HS>
__global__ void attention_forward_kernel4(float* out, float* lse, const float* qkv, const float* table, const int* positions, PE pe,
                                          DropoutMask mask, int B, int T, int NH) {
    constexpr int TILE = ATTENTION_TILE, PAD = 8;                    // pads keep wmma's rows 32-byte aligned and off one bank
    __shared__ __align__(32) bf16 q_s[Q4_ROWS][HS + PAD];            // the block's queries
    __shared__ __align__(32) bf16 k_s[TILE][HS + PAD], v_s[TILE][HS + PAD];
    __shared__ __align__(32) float s_s[Q4_WARPS][16][TILE + 4];      // a warp's scores
    __shared__ __align__(32) bf16 p_s[Q4_WARPS][16][TILE + PAD];     // its rows' exp(s - m) dropout, rounded
    __shared__ __align__(32) float o_s[Q4_WARPS][16][HS];            // its rows' partial outputs
    int bh = blockIdx.y, b = bh / NH, h = bh % NH, C = NH * HS, warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    int first = blockIdx.x * Q4_ROWS, last = min(first + Q4_ROWS, T) - 1;  // the block's queries
    for (int x = threadIdx.x; x < Q4_ROWS * HS; x += blockDim.x) {
        int r = x / HS, d = x % HS;
        q_s[r][d] = __float2bfloat16_rn(first + r < T ? qkv[((size_t)b * T + first + r) * 3 * C + h * HS + d] : 0.0f);
    }
    for (int x = lane; x < 16 * HS; x += WARP) o_s[warp][x / HS][x % HS] = 0;
    // two lanes a row: lane 2r + half holds row r's statistics and reads keys half * TILE / 2 on
    int r = lane / 2, half = lane % 2, i = first + 16 * warp + r;
    int pos_i = i < T ? position_of(positions, b, i, T) : 0;
    size_t row = (size_t)bh * T + i;  // (b, h, i), as the dropout mask counts
    float m = -INFINITY, l = 0;
    int warp_last = min(first + 16 * warp + 15, T - 1);  // the warp's last query
    for (int start = 0; start <= last; start += TILE) {
        __syncthreads();  // every warp is done with the previous tile
        for (int x = threadIdx.x; x < TILE * HS; x += blockDim.x) {
            int jj = x / HS, d = x % HS, j = start + jj;
            const float* k = qkv + ((size_t)b * T + j) * 3 * C + C + h * HS + d;
            k_s[jj][d] = __float2bfloat16_rn(j < T ? k[0] : 0.0f);
            v_s[jj][d] = __float2bfloat16_rn(j < T ? k[C] : 0.0f);
        }
        __syncthreads();
        if (first + 16 * warp > T - 1 || start > warp_last) continue;  // the whole warp: no row here reads this tile
        // scores (16, TILE) = q (16, HS) k^T (HS, TILE): k_s is k^T stored by columns
        for (int n = 0; n < TILE; n += 16) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::fill_fragment(acc, 0.0f);
            for (int d = 0; d < HS; d += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> qa;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> kb;
                wmma::load_matrix_sync(qa, &q_s[16 * warp][d], HS + PAD);
                wmma::load_matrix_sync(kb, &k_s[n][d], HS + PAD);
                wmma::mma_sync(acc, qa, kb, acc);
            }
            wmma::store_matrix_sync(&s_s[warp][0][n], acc, TILE + 4, wmma::mem_row_major);
        }
        __syncwarp();
        // the softmax's update, two lanes a row, each over half the tile's keys
        float tile_max = -INFINITY, s_j[TILE / 2];
        for (int jj = 0; jj < TILE / 2; jj++) {
            int j = start + half * TILE / 2 + jj;
            s_j[jj] = -INFINITY;  // a masked key (j > i, or a row past T) adds nothing
            if (i < T && j <= i) s_j[jj] = s_s[warp][r][j - start] + pe_score_bias(pe, table, h, pos_i, position_of(positions, b, j, T));
            tile_max = fmaxf(tile_max, s_j[jj]);
        }
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffff, tile_max, 1));
        float m_next = fmaxf(m, tile_max);
        // exp(m - m_next): 0 on a row's first tile (m = -inf); 1 where the tile adds nothing to the row
        float scale = m_next == -INFINITY ? 1.0f : expf(m - m_next), sum = 0;
        for (int jj = 0; jj < TILE / 2; jj++) {
            int j = start + half * TILE / 2 + jj;
            float e = s_j[jj] == -INFINITY ? 0.0f : expf(s_j[jj] - m_next);
            sum += e;
            p_s[warp][r][j - start] = __float2bfloat16_rn(e * mask.factor(row * T + j));
        }
        l = l * scale + sum + __shfl_xor_sync(0xffffffff, sum, 1);
        m = m_next;
        for (int d = half * HS / 2; d < (half + 1) * HS / 2; d++) o_s[warp][r][d] *= scale;
        __syncwarp();
        // o (16, HS) += p (16, TILE) v (TILE, HS)
        for (int n = 0; n < HS; n += 16) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::load_matrix_sync(acc, &o_s[warp][0][n], HS, wmma::mem_row_major);
            for (int k = 0; k < TILE; k += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> pa;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> vb;
                wmma::load_matrix_sync(pa, &p_s[warp][0][k], TILE + PAD);
                wmma::load_matrix_sync(vb, &v_s[k][n], HS + PAD);
                wmma::mma_sync(acc, pa, vb, acc);
            }
            wmma::store_matrix_sync(&o_s[warp][0][n], acc, HS, wmma::mem_row_major);
        }
        __syncwarp();
    }
    if (i >= T) return;
    for (int d = half * HS / 2; d < (half + 1) * HS / 2; d++) out[((size_t)b * T + i) * C + h * HS + d] = o_s[warp][r][d] / l;
    if (half == 0) lse[row] = m + logf(l);
}

// the CPU's log-sum-exp of every row's biased scores, (B, NH, T), for version 3's lse
static std::vector<float> reference_lse(const std::vector<float>& qkv, const std::vector<float>& bias, int B, int T, int C, int NH) {
    int HS = C / NH;
    std::vector<float> lse((size_t)B * NH * T);
#pragma omp parallel for
    for (size_t row = 0; row < lse.size(); row++) {
        int i = row % T, h = (row / T) % NH, b = (int)(row / T / NH);
        std::vector<double> s(i + 1);
        double max = -INFINITY, sum = 0;
        for (int j = 0; j <= i; j++) {
            const float *q = &qkv[((size_t)b * T + i) * 3 * C + h * HS], *k = &qkv[((size_t)b * T + j) * 3 * C + C + h * HS];
            double dot = 0;
            for (int d = 0; d < HS; d++) dot += (double)q[d] * k[d];
            s[j] = dot + bias[((size_t)h * T + i) * T + j];
            max = std::max(max, s[j]);
        }
        for (int j = 0; j <= i; j++) sum += exp(s[j] - max);
        lse[row] = (float)(max + log(sum));
    }
    return lse;
}

int main(int argc, char** argv) {
    try {
        Args a = parse_args(argc, argv, 4);
        const int B = a.B, T = a.T, C = 768, NH = 12, HS = C / NH;
        ModelConfig config{1, C, NH, 4, 8, T, a.pe, 0.25f, 0.1f};
        PETables tables = make_pe_tables(a.pe, C, NH, rope_dims(HS, 0.25f), T);
        GpuModel memory;  // owns the device buffers
        PE pe = gpu_pe(&memory, tables);
        AttentionWorkspace w = gpu_attention_workspace(&memory, config, B);
        Dropout drop = {0.1f, 1, 0};
        uint32_t key = drop.key(SITE_ATTN_PROBS, 0);
        const uint32_t* d_key = memory.upload(std::vector<uint32_t>{key});  // the kernels read it on the device
        // inputs scaled so that unscaled q.k scores are O(1), as a trained model's are
        std::vector<float> qkv = random_floats((size_t)B * T * 3 * C, 1, 0.3), table = random_floats(pe_param_count(a.pe, C, NH, T), 2);
        std::vector<float> out((size_t)B * T * C), att((size_t)B * NH * T * T);
        std::vector<float> bias = reference_bias_plane(table, pe_view(tables), T, NH), lse((size_t)B * NH * T);
        bool fused_bf16 = a.version == 4;  // checked against the CPU's fused bf16 attention, the rest against its simple fp32
        if (fused_bf16)
            attention_fused_forward(out.data(), lse.data(), qkv.data(), table.data(), pe_view(tables), nullptr, nullptr, drop, key, B, T, C, NH, 0,
                                    PRECISION_BF16);
        else
            attention_forward(out.data(), att.data(), qkv.data(), bias.data(), 1, nullptr, drop, key, B, T, C, NH, 0, PRECISION_FP32);

        float *d_qkv = to_device(qkv), *d_table = to_device(table), *d_out = to_device(out), *d_att = to_device(att), *d_bias = to_device(bias);
        float* d_lse = to_device(std::vector<float>((size_t)B * NH * T, 0));
        cudaCheck(cudaMemset(d_out, 0, out.size() * sizeof(float)));
        cudaCheck(cudaMemset(d_att, 0, att.size() * sizeof(float)));
        cublasHandle_t cublas = cublas_create(PRECISION_FP32, memory.alloc<char>(CUBLAS_WORKSPACE_BYTES));
        auto run = [&] {
            if (a.version == 1) {
                attention_forward_kernel1<<<grid_for((size_t)B * NH * T), BLOCK>>>(d_out, d_att, d_qkv, d_table, pe, DropoutMask(drop, d_key), B, T, C, NH);
                launchCheck();
            } else if (a.version == 3) {
                dim3 grid((T + ROWS3 - 1) / ROWS3, B * NH);
                attention_forward_kernel3<64><<<grid, ROWS3 * WARP>>>(d_out, d_lse, d_qkv, d_table, nullptr, pe, DropoutMask(drop, d_key), B, T, NH);
                launchCheck();
            } else if (a.version == 4) {
                dim3 grid((T + Q4_ROWS - 1) / Q4_ROWS, B * NH);
                attention_forward_kernel4<64><<<grid, Q4_WARPS * WARP>>>(d_out, d_lse, d_qkv, d_table, nullptr, pe, DropoutMask(drop, d_key), B, T,
                                                                         NH);
                launchCheck();
            } else {
                attention_forward_gpu(cublas, d_out, nullptr, d_att, d_qkv, pe_has_score_bias(a.pe) ? d_bias : nullptr, 1, drop, d_key, B, T, C, NH,
                                      &w);
            }
        };
        if (pe_has_score_bias(a.pe)) pe_bias_forward_gpu(d_bias, d_table, nullptr, pe, 1, T, NH);
        run();
        printf("attention forward, version %d, pe %s, B %d T %d NH %d HS %d\n", a.version, PE_NAMES[a.pe], B, T, NH, HS);
        if (a.version < 3) check("att", att, d_att, 1e-5, 1e-4);  // fp32 sums in another order (see test_gpu.cu)
        if (fused_bf16) {
            // a probability within rounding of a bf16 boundary rounds the other way on the other
            // device (test_gpu.cu's BF16_ATTENTION_FRACTION); the log-sum-exps are fp32 sums of
            // exact products of bf16 operands in another order, by tensor cores whose sums need
            // not round to nearest (test_gpu.cu's BF16_KERNEL_ATOL)
            double largest = 0;
            for (float x : out) largest = std::max(largest, (double)std::fabs(x));
            check("out", out, d_out, 4e-3 * largest, 0);
            check("lse", lse, d_lse, 1e-4, 1e-4);
        } else {
            check("out", out, d_out, 1e-5, 1e-4);
        }
        if (a.version == 3) check("lse", reference_lse(qkv, bias, B, T, C, NH), d_lse, 1e-5, 1e-5);
        double flops = 4.0 * B * NH * T * T * HS;  // q k^T and att v, whole squares
        float ms = time_ms(run);
        printf("%.3f ms, %.1f TFLOP/s\n", ms, flops / ms / 1e9);
        if (fused_bf16) {  // what it replaces: version 2 with bf16 operands, as ./train --precision bf16 runs it
            ModelConfig config16 = config;
            config16.precision = PRECISION_BF16;
            AttentionWorkspace w16 = gpu_attention_workspace(&memory, config16, B);
            cublasHandle_t cublas16 = cublas_create(PRECISION_BF16, memory.alloc<char>(CUBLAS_WORKSPACE_BYTES));
            float ms2 = time_ms([&] {
                attention_forward_gpu(cublas16, d_out, nullptr, d_att, d_qkv, pe_has_score_bias(a.pe) ? d_bias : nullptr, 1, drop, d_key, B, T, C,
                                      NH, &w16);
            });
            printf("version 2 in bf16: %.3f ms, %.1f TFLOP/s\n", ms2, flops / ms2 / 1e9);
            cublas_api().destroy(cublas16);
        }
        cublas_api().destroy(cublas);
    } catch (const Error& e) {
        fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
