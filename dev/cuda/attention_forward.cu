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
*/
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

int main(int argc, char** argv) {
    try {
        Args a = parse_args(argc, argv, 2);
        const int B = a.B, T = a.T, C = 768, NH = 12, HS = C / NH;
        ModelConfig config{1, C, NH, 4, 8, T, a.pe, 0.25f, 0.1f};
        PETables tables = make_pe_tables(a.pe, C, NH, rope_dims(HS, 0.25f), T);
        GpuModel memory;  // owns the device buffers
        PE pe = gpu_pe(&memory, tables);
        AttentionWorkspace w = gpu_attention_workspace(&memory, config, B);
        Dropout drop = {0.1f, 1, 0};
        uint32_t key = drop.key(SITE_ATTN_PROBS, 0);
        // inputs scaled so that unscaled q.k scores are O(1), as a trained model's are
        std::vector<float> qkv = random_floats((size_t)B * T * 3 * C, 1, 0.3), table = random_floats(pe_param_count(a.pe, C, NH, T), 2);
        std::vector<float> out((size_t)B * T * C), att((size_t)B * NH * T * T);
        std::vector<float> bias = reference_bias_plane(table, pe_view(tables), T, NH);
        attention_forward(out.data(), att.data(), qkv.data(), bias.data(), 1, nullptr, drop, key, B, T, C, NH, 0);

        float *d_qkv = to_device(qkv), *d_table = to_device(table), *d_out = to_device(out), *d_att = to_device(att), *d_bias = to_device(bias);
        cudaCheck(cudaMemset(d_out, 0, out.size() * sizeof(float)));
        cudaCheck(cudaMemset(d_att, 0, att.size() * sizeof(float)));
        cublasHandle_t cublas = cublas_create(PRECISION_FP32);
        auto run = [&] {
            if (a.version == 1) {
                attention_forward_kernel1<<<grid_for((size_t)B * NH * T), BLOCK>>>(d_out, d_att, d_qkv, d_table, pe, DropoutMask(drop, key), B, T, C, NH);
                launchCheck();
            } else {
                attention_forward_gpu(cublas, d_out, d_att, d_qkv, pe_has_score_bias(a.pe) ? d_bias : nullptr, 1, drop, key, B, T, C, NH, &w);
            }
        };
        if (pe_has_score_bias(a.pe)) pe_bias_forward_gpu(d_bias, d_table, nullptr, pe, 1, T, NH);
        run();
        printf("attention forward, version %d, pe %s, B %d T %d NH %d HS %d\n", a.version, PE_NAMES[a.pe], B, T, NH, HS);
        check("att", att, d_att, 1e-5, 1e-4);  // fp32 sums in another order (see test_gpu.cu)
        check("out", out, d_out, 1e-5, 1e-4);
        float ms = time_ms(run);
        double flops = 4.0 * B * NH * T * T * HS;  // q k^T and att v, whole squares
        printf("%.3f ms, %.1f TFLOP/s\n", ms, flops / ms / 1e9);
        cublas_api().destroy(cublas);
    } catch (const Error& e) {
        fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
