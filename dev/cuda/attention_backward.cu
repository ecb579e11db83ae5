/*
 Attention backward with the PE hooks (dropout, softmax, the learned bias's table gradient), every
 version checked against the CPU reference in model.h and timed. Shape as attention_forward.

   make dev/cuda/attention_backward
   ./dev/cuda/attention_backward VERSION [PE] [B T]     (default: 2 t5 64 256; any PE but cope)

 version 1: naive: a thread per query row for the score gradient and dq, a thread per (key, dim)
            for dk and dv, and for T5 a thread per (table row, head) scanning every score
 version 2: batched cuBLAS GEMMs, one warp per softmax row, the scores' gradient summed over the
            sequences into the bias plane's, then into the PE's parameters through a partial
            gradient per query row, a thread per row adding into it in global memory (every bias PE)
 version 3: what ./train runs (attention.cuh): version 2 with a block per query row for the
            partial gradients, each thread adding its share of (head, key) pairs into its own
            copy of the partial in shared memory, the copies then summed in thread order
*/
#include "dev/cuda/common.cuh"
#include "model.cuh"

// ds row and dq_i for query row (b, h, i); see attention_backward in model.h for the formulas
__global__ void scores_backward_kernel1(float* dqkv, float* dscores, const float* dout, const float* qkv, const float* att, DropoutMask mask,
                                        int B, int T, int C, int NH) {
    size_t row = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (row >= (size_t)B * NH * T) return;
    int i = row % T, h = (row / T) % NH, b = (int)(row / T / NH), HS = C / NH;
    const float *a = att + row * T, *d_o = dout + ((size_t)b * T + i) * C + h * HS;
    float* ds = dscores + row * T;
    float sum_a_da = 0;
    for (int j = 0; j <= i; j++) {
        const float* v = qkv + ((size_t)b * T + j) * 3 * C + 2 * C + h * HS;
        float de = 0;
        for (int d = 0; d < HS; d++) de += d_o[d] * v[d];
        ds[j] = de * mask.factor(row * T + j);  // da_j, for now
        sum_a_da += a[j] * ds[j];
    }
    float* dq = dqkv + ((size_t)b * T + i) * 3 * C + h * HS;
    for (int d = 0; d < HS; d++) dq[d] = 0;
    for (int j = 0; j < T; j++) {
        ds[j] = j <= i ? a[j] * (ds[j] - sum_a_da) : 0.0f;
        const float* k = qkv + ((size_t)b * T + j) * 3 * C + C + h * HS;
        for (int d = 0; j <= i && d < HS; d++) dq[d] += ds[j] * k[d];
    }
}

// dk[j][d] = sum_i ds[i][j] q_i[d];  dv[j][d] = sum_i e[i][j] do_i[d]     (a thread per (b, h, j, d))
__global__ void keys_values_backward_kernel1(float* dqkv, const float* dscores, const float* dout, const float* qkv, const float* att,
                                             DropoutMask mask, int B, int T, int C, int NH) {
    int HS = C / NH;
    size_t index = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (index >= (size_t)B * NH * T * HS) return;
    int d = index % HS, j = (index / HS) % T, h = (index / HS / T) % NH, b = (int)(index / HS / T / NH);
    float dk = 0, dv = 0;
    for (int i = j; i < T; i++) {
        size_t at = (((size_t)b * NH + h) * T + i) * T + j;
        dk += dscores[at] * qkv[((size_t)b * T + i) * 3 * C + h * HS + d];
        dv += att[at] * mask.factor(at) * dout[((size_t)b * T + i) * C + h * HS + d];
    }
    dqkv[((size_t)b * T + j) * 3 * C + C + h * HS + d] = dk;
    dqkv[((size_t)b * T + j) * 3 * C + 2 * C + h * HS + d] = dv;
}

// T5: dtable[row][h] += every ds[b, h, i, j] whose distance reads that row
__global__ void t5_table_backward_kernel1(float* dtable, const float* dscores, PE pe, int B, int T, int NH) {
    int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= T5_NUM_BUCKETS * NH) return;
    int row = index / NH, h = index % NH;
    float sum = 0;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j <= i; j++)
                if (pe_table_row(pe, i - j) == row) sum += dscores[(((size_t)b * NH + h) * T + i) * T + j];
    dtable[index] += sum;
}

// version 2's partial gradient of the PE's parameters per (plane, query i): a thread per row,
// adding pe.h's pe_score_bias_backward of every (head, key) pair straight into global memory
__global__ void pe_bias_partials_kernel2(float* partials, const float* dbias, const float* pe_params, PE pe, int planes, int T, int NH,
                                         size_t n_params) {
    size_t row = blockIdx.x * (size_t)blockDim.x + threadIdx.x;  // (p, i)
    if (row >= (size_t)planes * T) return;
    int i = row % T, p = (int)(row / T);
    float* partial = partials + row * n_params;
    for (size_t k = 0; k < n_params; k++) partial[k] = 0;
    for (int h = 0; h < NH; h++) {
        const float* ds = dbias + (((size_t)p * NH + h) * T + i) * T;
        for (int j = 0; j <= i; j++) pe_score_bias_backward(pe, pe_params, partial, ds[j], h, i, j);
    }
}

int main(int argc, char** argv) {
    try {
        Args a = parse_args(argc, argv, 3);
        const int B = a.B, T = a.T, C = 768, NH = 12, HS = C / NH;
        ModelConfig config{1, C, NH, 4, 8, T, a.pe, 0.25f, 0.1f};
        PETables tables = make_pe_tables(a.pe, C, NH, rope_dims(HS, 0.25f), T);
        GpuModel memory;
        PE pe = gpu_pe(&memory, tables);
        AttentionWorkspace w = gpu_attention_workspace(&memory, config, B);
        Dropout drop = {0.1f, 1, 0};
        uint32_t key = drop.key(SITE_ATTN_PROBS, 0);
        const uint32_t* d_key = memory.upload(std::vector<uint32_t>{key});  // the kernels read it on the device
        size_t n_params = pe_param_count(a.pe, C, NH, T);
        bool learned = pe_has_score_bias(a.pe) && n_params > 0;  // T5, KERPLE, FIRE: a gradient for the bias's parameters
        if (a.version == 1 && learned && a.pe != PE_T5) fail("version 1 has a table gradient for T5 alone: run version 2");
        std::vector<float> qkv = random_floats((size_t)B * T * 3 * C, 1, 0.3), table = random_floats(n_params, 2);
        std::vector<float> dout = random_floats((size_t)B * T * C, 3), out((size_t)B * T * C), att((size_t)B * NH * T * T);
        std::vector<float> dqkv(qkv.size(), 0), dscores(att.size()), dtable(table.size(), 0);
        std::vector<float> bias = reference_bias_plane(table, pe_view(tables), T, NH), dbias(bias.size(), 0);
        attention_forward(out.data(), att.data(), qkv.data(), bias.data(), 1, nullptr, drop, key, B, T, C, NH, 0, PRECISION_FP32);
        attention_backward(dqkv.data(), dscores.data(), dout.data(), qkv.data(), att.data(), nullptr, drop, key, B, T, C, NH, PRECISION_FP32);
        pe_bias_plane_backward(dbias.data(), dscores.data(), 1, B, T, NH);
        pe_bias_backward(dtable.data(), dbias.data(), table.data(), nullptr, nullptr, pe_view(tables), 1, T, NH, n_params);

        float *d_qkv = to_device(qkv), *d_att = to_device(att), *d_dout = to_device(dout), *d_dqkv = to_device(dqkv);
        float *d_dscores = to_device(dscores), *d_dtable = to_device(dtable), *d_table = to_device(table), *d_dbias = to_device(dbias);
        cublasHandle_t cublas = cublas_create(PRECISION_FP32, memory.alloc<char>(CUBLAS_WORKSPACE_BYTES));
        DropoutMask mask(drop, d_key);
        auto run = [&] {
            cudaCheck(cudaMemset(d_dtable, 0, dtable.size() * sizeof(float)));
            cudaCheck(cudaMemset(d_dbias, 0, dbias.size() * sizeof(float)));
            if (a.version == 1) {
                scores_backward_kernel1<<<grid_for((size_t)B * NH * T), BLOCK>>>(d_dqkv, d_dscores, d_dout, d_qkv, d_att, mask, B, T, C, NH);
                launchCheck();
                keys_values_backward_kernel1<<<grid_for((size_t)B * T * C), BLOCK>>>(d_dqkv, d_dscores, d_dout, d_qkv, d_att, mask, B, T, C, NH);
                launchCheck();
                if (a.pe == PE_T5) t5_table_backward_kernel1<<<grid_for((size_t)T5_NUM_BUCKETS * NH), BLOCK>>>(d_dtable, d_dscores, pe, B, T, NH);
                launchCheck();
            } else {
                attention_backward_gpu(cublas, d_dqkv, d_dscores, d_dout, d_qkv, d_att, drop, d_key, B, T, C, NH, &w);
                if (pe_has_score_bias(a.pe)) {  // as ./train runs it: ALiBi's planes too, whose gradient reaches no parameter
                    pe_bias_plane_backward_gpu(d_dbias, d_dscores, 1, B, T, NH);
                    if (a.version == 3) pe_bias_backward_gpu(d_dtable, d_dbias, d_table, nullptr, pe, 1, T, NH, n_params, &w);
                    else if (n_params > 0) {
                        pe_bias_partials_kernel2<<<grid_for(T), BLOCK>>>(w.bias_partials, d_dbias, d_table, pe, 1, T, NH, n_params);
                        launchCheck();
                        pe_bias_sum_partials_kernel<<<grid_for(n_params), BLOCK>>>(d_dtable, w.bias_partials, T, n_params);
                        launchCheck();
                    }
                }
            }
        };
        run();
        printf("attention backward, version %d, pe %s, B %d T %d NH %d HS %d\n", a.version, PE_NAMES[a.pe], B, T, NH, HS);
        check("dscores", dscores, d_dscores, 1e-5, 1e-4);
        check("dqkv", dqkv, d_dqkv, 1e-4, 1e-4);
        // the table sums B * T * T / 2 entries: its rounding grows with the square root of that
        if (learned) check("dtable", dtable, d_dtable, 1e-3, 1e-4);
        float ms = time_ms(run);
        double flops = 8.0 * B * NH * T * T * HS;  // four GEMMs of whole squares
        printf("%.3f ms, %.1f TFLOP/s\n", ms, flops / ms / 1e9);
        cublas_api().destroy(cublas);
    } catch (const Error& e) {
        fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
