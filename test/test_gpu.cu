// GPU tests: every kernel against its CPU counterpart in model.h on random, non-zero inputs (the
// products and attention in bf16 too, against the CPU's bf16, and each bf16 twin a kernel writes
// against its tensor's rounding; TF32 shown to round); the whole training step (loss and every
// gradient) against the CPU for every PE but CoPE with dropout on, in fp32 and in bf16, at drawn
// positions, with a PE tensor per layer, with Abacus rows or coupled positions, and at odd
// widths, 12 heads and a batch smaller than its buffers; the bf16 copy of the weights kept by
// every update; RoPE's scaled angles; twenty steps (all but the first replayed from a CUDA graph)
// that must track the CPU; runs that repeat bit for bit; captured steps that repeat uncaptured
// ones bit for bit (TF32 and bf16), with every input of a step new (tokens, positions, the loss's
// divisor), and a non-finite one, or a non-finite loss alone, that changes nothing; a GPU
// checkpoint read back on the CPU. Built only when nvcc is present; without a CUDA device every
// test reports IGNORED.
#define TESTING
#include "train.cu"
#include "test/unity.h"

#define REQUIRE_GPU()                                                   \
    do {                                                                \
        if (!gpu_present()) TEST_IGNORE_MESSAGE("no CUDA device");      \
    } while (0)

// Kernels in fp32 do the CPU's arithmetic with sums in another order: with unit-scale inputs and
// at most a few hundred terms, rounding (2^-24 per operation, growing like the square root of the
// number of terms) stays below 1e-6; 1e-5 leaves a margin of ten.
static const double KERNEL_ATOL = 1e-5, KERNEL_RTOL = 1e-5;
// TF32 rounds each matrix-product input to 10 mantissa bits (2^-11 = 5e-4 relative): a sum of 64
// unit products is off by about 5e-4 * 8 = 4e-3.
static const double TF32_ATOL = 2e-2, TF32_RTOL = 1e-2;
// bf16 products: operands rounded to 8 significant bits multiply exactly in fp32, so what differs
// from the CPU's bf16 is the order of the fp32 sums, and the tensor cores' accumulation, which
// need not round to nearest: 1e-4. (fp32 products of the same inputs differ by about 1e-2.)
static const double BF16_KERNEL_ATOL = 1e-4, BF16_KERNEL_RTOL = 1e-4;
// Attention in bf16 rounds values the two devices compute in a different order (the
// probabilities, the scores' gradient): one that lies within rounding of a bf16 boundary rounds
// the other way, 2^-8 apart, so outputs are held within 4e-3 of the tensor's largest entry
// (docs/speed.md, "The CPU's bf16": one attention layer in float against double moved 1.1e-3).
static const double BF16_ATTENTION_FRACTION = 4e-3;
// A whole bf16 step compounds that through the layers: within 1e-2 of each gradient tensor's
// largest entry while the two devices' ReLU inputs agree in sign. One that flips passes or stops
// a unit's whole gradient, which moved a step as far as bf16 is from fp32 (0.13-0.26 there).
static const double BF16_STEP_FRACTION = 1e-2, BF16_FLIPPED_STEP_FRACTION = 0.3;
// The whole model compounds those differences through two layers, a loss and back; gradients are
// compared per tensor, within a fraction of the tensor's largest entry.
static const double MODEL_RTOL = 1e-3, MODEL_ATOL_FRACTION = 1e-4;
// twenty updates later, the CPU's and the GPU's losses still agree to this relative difference
static const double TRACK_RTOL = 1e-3;

// a device copy of a host vector, freed at the end of the test
template <typename T>
struct Device {
    T* ptr = nullptr;
    size_t n;
    explicit Device(const std::vector<T>& host) : n(host.size()) {
        cudaCheck(cudaMalloc(&ptr, n * sizeof(T)));
        cudaCheck(cudaMemcpy(ptr, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    }
    Device(const Device&) = delete;  // one owner frees the memory
    ~Device() { cudaFree(ptr); }     // unchecked: fail() throws, and a destructor must not
    std::vector<T> host() const {
        std::vector<T> out(n);
        cudaCheck(cudaMemcpy(out.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost));
        return out;
    }
};

struct Cublas {
    Device<char> workspace{std::vector<char>(CUBLAS_WORKSPACE_BYTES)};
    cublasHandle_t handle;
    explicit Cublas(Precision p) : handle(cublas_create(p, workspace.ptr)) {}
    ~Cublas() { cublas_api().destroy(handle); }  // unchecked, as ~Device
};

static std::vector<float> random_floats(size_t n, uint64_t seed, double scale = 1.0) {
    Rng rng = rng_stream(seed, n);
    std::vector<float> x(n);
    for (float& v : x) v = (float)(rng.normal() * scale);
    return x;
}

static const Dropout TEST_DROPOUT = {0.1f, 99, 4};

// whether two tensor sets hold the same bits (NaNs included)
static bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// the largest difference between two tensors; infinite where either holds a NaN (which
// std::max would pass over)
static double largest_difference(const float* a, const float* b, size_t n) {
    double largest = 0;
    for (size_t i = 0; i < n; i++) {
        double d = std::fabs((double)a[i] - b[i]);
        if (std::isnan(d)) return INFINITY;
        largest = std::max(largest, d);
    }
    return largest;
}

// a device buffer of n bf16 NaNs (all bits set): an element its kernel does not write stays NaN
static Device<bf16> poisoned_bf16(size_t n) {
    __nv_bfloat16_raw all_ones;
    all_ones.x = 0xffff;
    return Device<bf16>(std::vector<bf16>(n, bf16(all_ones)));
}

// every element of a bf16 twin is its tensor's element rounded (model.h's round_to_bf16)
static void check_twin(const Device<float>& x, const Device<bf16>& x16, const char* name) {
    std::vector<float> values = x.host();
    std::vector<bf16> twin = x16.host();
    TEST_ASSERT_MESSAGE(values.size() == twin.size(), name);
    for (size_t i = 0; i < values.size(); i++)
        if (!(__bfloat162float(twin[i]) == round_to_bf16(values[i])))
            TEST_FAIL_MESSAGE((std::string(name) + ": twin element " + std::to_string(i) + " is not its tensor's element rounded").c_str());
}

// ----------------------------------------------------------------------------
// kernels

// cuBLAS is opened at run time, not linked (kernels.cuh): it must open, and have every function
// the GPU path calls (cublas_api fails, and with it the test, on any it lacks), on any machine
// with the toolkit, a GPU or not
static void test_cublas_opens_with_every_function(void) {
    const CublasApi& api = cublas_api();
    // a real call through the loaded pointer: a handle where there is a device, a clean refusal where not
    cublasHandle_t handle = nullptr;
    cublasStatus_t status = api.create(&handle);
    TEST_ASSERT_EQUAL_INT(gpu_present(), status == CUBLAS_STATUS_SUCCESS);
    if (status == CUBLAS_STATUS_SUCCESS) TEST_ASSERT_EQUAL_INT(CUBLAS_STATUS_SUCCESS, api.destroy(handle));
}

// sorted positions drawn from 0 .. max_pos-1 for each of B rows of T tokens: training's own draw
// (batches.h), at step `seed`
static std::vector<int> drawn_positions(int B, int T, int max_pos, uint64_t seed) {
    Batch batch;
    batch.B = B, batch.T = T, batch.lengths.assign(B, T);
    draw_positions(&batch, max_pos, 1, (int)seed);
    return batch.positions;
}

// APE's sinusoids at 0 .. T-1, and ape_learned's table at drawn positions, with its gradient; in
// a batch of one chunk of table_backward_kernel's BLOCK positions and in one of three (5 x 120, as
// a paper copy batch spans eleven)
static void test_embedding_matches_cpu(void) {
    REQUIRE_GPU();
    const int C = 40, V = 11;
    struct { int B, T; } shapes[] = {{3, 9}, {5, 120}};
    for (auto shape : shapes)
        for (PEKind kind : {PE_APE, PE_APE_LEARNED}) {
            const int B = shape.B, T = shape.T, max_pos = T + 11;
            PETables tables = make_pe_tables(kind, C, 1, 0, max_pos);
            GpuModel memory;
            PE pe = gpu_pe(&memory, tables);
            Rng rng = rng_stream(1, 0);
            std::vector<int> tokens(B * T), positions = drawn_positions(B, T, max_pos, 2);
            for (int& t : tokens) t = rng.below(V);  // repeated tokens: their gradients add up
            for (int b = 1; b < B; b++) positions[b * T] = positions[0];  // a position shared by rows: its gradients add up too
            const int* at = kind == PE_APE ? nullptr : positions.data();
            size_t n_table = pe_param_count(kind, C, 1, max_pos);
            std::vector<float> wte = random_floats(V * C, 2), dout = random_floats(B * T * C, 3), out(B * T * C), dwte = random_floats(V * C, 4);
            std::vector<float> table = random_floats(std::max<size_t>(n_table, 1), 5), dtable = random_floats(std::max<size_t>(n_table, 1), 6);
            Device<int> d_tokens(tokens), d_positions(positions);
            Device<float> d_wte(wte), d_dout(dout), d_out(out), d_dwte(dwte), d_table(table), d_dtable(dtable);
            const int* d_at = at ? d_positions.ptr : nullptr;
            embedding_forward(out.data(), tokens.data(), at, wte.data(), table.data(), pe_view(tables), B, T, C, 0);
            embedding_backward(dwte.data(), dtable.data(), dout.data(), tokens.data(), at, pe_view(tables), B, T, C);
            embedding_forward_gpu(d_out.ptr, d_tokens.ptr, d_at, d_wte.ptr, d_table.ptr, pe, B, T, C);
            embedding_backward_gpu(d_dwte.ptr, d_dtable.ptr, d_dout.ptr, d_tokens.ptr, d_at, pe, B, T, C, V);
            std::string name = std::string(PE_NAMES[kind]) + " at " + std::to_string(B) + " x " + std::to_string(T);
            TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, out.data(), d_out.host().data(), out.size(), (name + ": embedding out").c_str());
            TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, dwte.data(), d_dwte.host().data(), dwte.size(), (name + ": dwte").c_str());
            TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, dtable.data(), d_dtable.host().data(), dtable.size(), (name + ": dtable").c_str());
        }
}

static void test_rmsnorm_matches_cpu(void) {
    REQUIRE_GPU();
    const int N = 100, C = 40;  // neither a multiple of the 64-row chunks nor of the 32-lane warps
    std::vector<float> x = random_floats(N * C, 5), w = random_floats(C, 6), dout = random_floats(N * C, 7);
    std::vector<float> out(N * C), rstd(N), dx = random_floats(N * C, 8), dw = random_floats(C, 9);
    Device<float> d_x(x), d_w(w), d_dout(dout), d_out(out), d_rstd(rstd), d_dx(dx), d_dw(dw), partials{std::vector<float>(2 * C)};
    Device<bf16> d_out16 = poisoned_bf16(out.size());
    rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C);
    rmsnorm_backward(dx.data(), dw.data(), dout.data(), x.data(), w.data(), rstd.data(), N, C);
    rmsnorm_forward_gpu(d_out.ptr, d_out16.ptr, d_rstd.ptr, d_x.ptr, d_w.ptr, N, C);
    rmsnorm_backward_gpu(d_dx.ptr, d_dw.ptr, d_dout.ptr, d_x.ptr, d_w.ptr, d_rstd.ptr, N, C, partials.ptr);
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, out.data(), d_out.host().data(), out.size(), "rmsnorm out");
    check_twin(d_out, d_out16, "rmsnorm out");
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, rstd.data(), d_rstd.host().data(), rstd.size(), "rstd");
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, dx.data(), d_dx.host().data(), dx.size(), "dx");
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, dw.data(), d_dw.host().data(), dw.size(), "dweight");
}

static void test_matmul_matches_cpu_in_fp32_and_tf32(void) {
    REQUIRE_GPU();
    const int N = 50, C = 64, OC = 48;
    for (Precision p : {PRECISION_FP32, PRECISION_TF32}) {
        double atol = p == PRECISION_FP32 ? KERNEL_ATOL : TF32_ATOL, rtol = p == PRECISION_FP32 ? KERNEL_RTOL : TF32_RTOL;
        std::vector<float> x = random_floats(N * C, 10), w = random_floats(OC * C, 11), dout = random_floats(N * OC, 12);
        std::vector<float> out(N * OC), dx = random_floats(N * C, 13), dw = random_floats(OC * C, 14);
        Device<float> d_x(x), d_w(w), d_dout(dout), d_out(out), d_dx(dx), d_dw(dw);
        Cublas cublas(p);
        matmul_forward(out.data(), x.data(), w.data(), N, C, OC, PRECISION_FP32);  // the CPU's exact fp32, for both
        matmul_backward(dx.data(), dw.data(), dout.data(), x.data(), w.data(), N, C, OC, PRECISION_FP32);
        matmul_forward_gpu(cublas.handle, d_out.ptr, d_x.ptr, nullptr, d_w.ptr, nullptr, N, C, OC);
        matmul_backward_gpu(cublas.handle, d_dx.ptr, d_dw.ptr, d_dout.ptr, nullptr, d_x.ptr, nullptr, d_w.ptr, nullptr, N, C, OC);
        std::string name = PRECISION_NAMES[p];
        TEST_ASSERT_TENSOR_CLOSE(atol, rtol, out.data(), d_out.host().data(), out.size(), (name + " out").c_str());
        TEST_ASSERT_TENSOR_CLOSE(atol, rtol, dx.data(), d_dx.host().data(), dx.size(), (name + " dx").c_str());
        TEST_ASSERT_TENSOR_CLOSE(atol, rtol, dw.data(), d_dw.host().data(), dw.size(), (name + " dweight").c_str());
    }
}

// TF32 is on where asked for (the test above would pass exact products): at a product of the
// paper model's size (256 positions of 768 channels by a 768 x 768 weight), TF32's operands
// rounded to 11 significant bits move outputs about 1e-2 from the CPU's fp32 (4e-2 at most, in a
// CPU emulation), while fp32 sums in another order differ by 2e-4 at most. 2e-3 lies between.
static const double TF32_SEEN = 2e-3;
static void test_tf32_rounds_what_fp32_does_not(void) {
    REQUIRE_GPU();
    const int N = 256, C = 768, OC = 768;
    std::vector<float> x = random_floats(N * C, 15), w = random_floats(OC * C, 16), out(N * OC);
    matmul_forward(out.data(), x.data(), w.data(), N, C, OC, PRECISION_FP32);
    Device<float> d_x(x), d_w(w);
    double largest[2];
    for (Precision p : {PRECISION_FP32, PRECISION_TF32}) {
        Device<float> d_out(std::vector<float>(out.size(), 1e3f));  // far from every output: one not written fails
        Cublas cublas(p);
        matmul_forward_gpu(cublas.handle, d_out.ptr, d_x.ptr, nullptr, d_w.ptr, nullptr, N, C, OC);
        largest[p == PRECISION_TF32] = largest_difference(out.data(), d_out.host().data(), out.size());
    }
    printf("the largest difference of 256 x 768 outputs from the CPU's fp32: %.2g in fp32, %.2g in TF32\n", largest[0], largest[1]);
    TEST_ASSERT_LESS_THAN(TF32_SEEN, largest[0]);
    TEST_ASSERT_GREATER_THAN(TF32_SEEN, largest[1]);
}

// device memory for `n` bf16, freed at the end of the test
static Device<bf16> bf16_buffer(size_t n) { return Device<bf16>(std::vector<bf16>(n, __float2bfloat16(0.0f))); }

// bf16: the operands' twins rounded on the GPU, against the CPU's bf16; and not what fp32
// products give
static void test_matmul_matches_cpu_in_bf16(void) {
    REQUIRE_GPU();
    const int N = 50, C = 64, OC = 48;
    std::vector<float> x = random_floats(N * C, 10), w = random_floats(OC * C, 11), dout = random_floats(N * OC, 12);
    std::vector<float> out(N * OC), fp32_out(N * OC), dx = random_floats(N * C, 13), dw = random_floats(OC * C, 14);
    Device<float> d_x(x), d_w(w), d_dout(dout), d_out(out), d_dx(dx), d_dw(dw);
    Device<bf16> w16 = bf16_buffer(w.size()), x16 = bf16_buffer(x.size()), dout16 = bf16_buffer(dout.size());
    round_to_bf16_gpu(w16.ptr, d_w.ptr, w.size());
    round_to_bf16_gpu(x16.ptr, d_x.ptr, x.size());
    round_to_bf16_gpu(dout16.ptr, d_dout.ptr, dout.size());
    Cublas cublas(PRECISION_BF16);
    matmul_forward(out.data(), x.data(), w.data(), N, C, OC, PRECISION_BF16);
    matmul_forward(fp32_out.data(), x.data(), w.data(), N, C, OC, PRECISION_FP32);
    matmul_backward(dx.data(), dw.data(), dout.data(), x.data(), w.data(), N, C, OC, PRECISION_BF16);
    matmul_forward_gpu(cublas.handle, d_out.ptr, d_x.ptr, x16.ptr, d_w.ptr, w16.ptr, N, C, OC);
    matmul_backward_gpu(cublas.handle, d_dx.ptr, d_dw.ptr, d_dout.ptr, dout16.ptr, d_x.ptr, x16.ptr, d_w.ptr, w16.ptr, N, C, OC);
    std::vector<float> gpu_out = d_out.host();
    TEST_ASSERT_TENSOR_CLOSE(BF16_KERNEL_ATOL, BF16_KERNEL_RTOL, out.data(), gpu_out.data(), out.size(), "bf16 out");
    TEST_ASSERT_TENSOR_CLOSE(BF16_KERNEL_ATOL, BF16_KERNEL_RTOL, dx.data(), d_dx.host().data(), dx.size(), "bf16 dx");
    TEST_ASSERT_TENSOR_CLOSE(BF16_KERNEL_ATOL, BF16_KERNEL_RTOL, dw.data(), d_dw.host().data(), dw.size(), "bf16 dweight");
    TEST_ASSERT_GREATER_THAN(100 * BF16_KERNEL_ATOL, largest_difference(fp32_out.data(), gpu_out.data(), out.size()));
}

// each with its bf16 twin written; the residual joined by the dropped branch in one kernel, to
// the bit of model.h's two steps
static void test_dropout_relu_and_residual_match_cpu(void) {
    REQUIRE_GPU();
    const size_t n = 5000;
    uint32_t key = TEST_DROPOUT.key(SITE_FFN_HIDDEN, 2);
    std::vector<float> x = random_floats(n, 15), y = random_floats(n, 16), dout = random_floats(n, 17);
    std::vector<float> out(n), relu(n), dropped(n), sum(n), dx = random_floats(n, 18), dx_relu = random_floats(n, 19);
    Device<float> d_x(x), d_y(y), d_dout(dout), d_out(out), d_relu(relu), d_sum(sum), d_dx(dx), d_dx_relu(dx_relu);
    Device<bf16> d_out16 = poisoned_bf16(n), d_relu16 = poisoned_bf16(n), d_dx16 = poisoned_bf16(n), d_dx_relu16 = poisoned_bf16(n);
    Device<uint32_t> d_key{std::vector<uint32_t>{key}};  // the GPU reads the site's key from device memory
    dropout_forward(out.data(), x.data(), TEST_DROPOUT, key, n, 0.5f);
    dropout_backward(dx.data(), dout.data(), TEST_DROPOUT, key, n, 0.5f);
    relu_dropout_forward(relu.data(), x.data(), TEST_DROPOUT, key, n);
    relu_dropout_backward(dx_relu.data(), dout.data(), x.data(), TEST_DROPOUT, key, n);
    dropout_forward(dropped.data(), y.data(), TEST_DROPOUT, key, n);
    residual_forward(sum.data(), x.data(), dropped.data(), n);
    dropout_forward_gpu(d_out.ptr, d_out16.ptr, d_x.ptr, TEST_DROPOUT, d_key.ptr, n, 0.5f);
    dropout_backward_gpu(d_dx.ptr, d_dx16.ptr, d_dout.ptr, TEST_DROPOUT, d_key.ptr, n, 0.5f);
    relu_dropout_forward_gpu(d_relu.ptr, d_relu16.ptr, d_x.ptr, TEST_DROPOUT, d_key.ptr, n);
    relu_dropout_backward_gpu(d_dx_relu.ptr, d_dx_relu16.ptr, d_dout.ptr, d_x.ptr, TEST_DROPOUT, d_key.ptr, n);
    residual_dropout_forward_gpu(d_sum.ptr, d_x.ptr, d_y.ptr, TEST_DROPOUT, d_key.ptr, n);
    // the masks are integer hashes: the same elements are dropped on both devices
    std::vector<float> gpu_out = d_out.host();
    for (size_t i = 0; i < n; i++) TEST_ASSERT_EQUAL_INT(out[i] == 0, gpu_out[i] == 0);
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, out.data(), gpu_out.data(), n, "dropout out");
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, dx.data(), d_dx.host().data(), n, "dropout dx");
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, relu.data(), d_relu.host().data(), n, "relu_dropout out");
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, dx_relu.data(), d_dx_relu.host().data(), n, "relu_dropout dx");
    TEST_ASSERT_MESSAGE(same_bits(sum, d_sum.host()), "residual joined by the dropped branch: not model.h's bits");
    check_twin(d_out, d_out16, "dropout out");
    check_twin(d_dx, d_dx16, "dropout dx");
    check_twin(d_relu, d_relu16, "relu_dropout out");
    check_twin(d_dx_relu, d_dx_relu16, "relu_dropout dx");
}

static void test_crossentropy_matches_cpu(void) {
    REQUIRE_GPU();
    const int N = 20, V = 37;
    std::vector<int> targets(N);
    for (int n = 0; n < N; n++) targets[n] = n % 3 == 0 ? -1 : (n * 7) % V;
    std::vector<float> z = random_floats(N * V, 20, 3.0), dz = random_floats(N * V, 21);
    Device<float> d_z(z), d_dz(dz), d_losses{std::vector<float>(N)};
    Device<bf16> d_dz16 = poisoned_bf16(dz.size());
    Device<int> d_targets(targets);
    Device<double> d_loss_sum{std::vector<double>(1)};
    double loss = crossentropy_forward(z.data(), targets.data(), N, V);
    size_t count = 0;
    for (int t : targets) count += t >= 0;
    crossentropy_backward(dz.data(), z.data(), targets.data(), N, V, count);
    Device<float> d_inverse_count{std::vector<float>{1.0f / count}};
    crossentropy_forward_gpu(d_z.ptr, d_targets.ptr, N, V, d_losses.ptr, d_loss_sum.ptr);
    crossentropy_backward_gpu(d_dz.ptr, d_dz16.ptr, d_z.ptr, d_targets.ptr, N, V, d_inverse_count.ptr);
    double gpu_loss = d_loss_sum.host()[0] / count;  // the mean, as the host takes it from the sum
    TEST_ASSERT_DOUBLE_WITHIN(KERNEL_RTOL * loss, loss, gpu_loss);
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, dz.data(), d_dz.host().data(), dz.size(), "dlogits");
    check_twin(d_dz, d_dz16, "dlogits (rows without a target too)");
}

// the PEs with GPU kernels: every one but CoPE, whose bias is read from each layer's q and k
static bool on_gpu(int p) { return !pe_has_context_bias((PEKind)p); }

// attention's results for one PE with dropout on: the rotated qkv, the probabilities, the
// output, the scores' gradient, dqkv and the PE parameters' gradient
struct AttentionResults {
    std::vector<float> qkv, att, out, dscores, dqkv, dtable;
};

// Attention in `precision` with PE `kind` on both devices, from the same random inputs: the
// CPU's as model_forward / model_backward compose it, and the GPU's kernels. With one bias plane
// at positions 0 .. T-1, or a plane per row at drawn positions (--random-positions).
static void attention_on_both(PEKind kind, bool drawn, Precision precision, AttentionResults* cpu, AttentionResults* gpu) {
    const int B = 2, T = 37, C = 48, NH = 3, max_pos = 80;  // T above one warp's 32 lanes
    Cublas cublas(precision);
    ModelConfig config{1, C, NH, 8, 8, T, kind, 0.5f, TEST_DROPOUT.p};
    config.random_positions = drawn ? max_pos : 0;
    config.precision = precision;
    int planes = drawn ? B : 1;
    PETables tables = make_pe_tables(kind, C, NH, rope_dims(C / NH, 0.5f), config.max_pos());
    GpuModel memory;
    PE pe = gpu_pe(&memory, tables);
    AttentionWorkspace w = gpu_attention_workspace(&memory, config, B);
    uint32_t key = TEST_DROPOUT.key(SITE_ATTN_PROBS, 1);
    Device<uint32_t> d_key{std::vector<uint32_t>{key}};
    size_t n_params = pe_param_count(kind, C, NH, config.max_pos());
    std::vector<float> table = random_floats(std::max<size_t>(n_params, 1), 23);
    if (kind == PE_FIRE) table[fire_layout(NH).m] = 0.05f;  // L = 25.6: the later queries take the branch past L
    std::vector<int> positions = drawn_positions(B, T, max_pos, 26);
    const int* at = drawn ? positions.data() : nullptr;
    std::vector<float> dout = random_floats(B * T * C, 24);
    AttentionResults& r = *cpu;
    r.qkv = random_floats(B * T * 3 * C, 22);
    r.out.assign(B * T * C, 0), r.att.assign(B * NH * T * T, 0), r.dqkv.assign(r.qkv.size(), 0), r.dscores.assign(r.att.size(), 0);
    r.dtable = random_floats(table.size(), 25);
    std::vector<float> bias((size_t)planes * NH * T * T, 0), dbias(bias.size(), 0);
    Device<float> d_qkv(r.qkv), d_table(table), d_dout(dout), d_out(r.out), d_att(r.att), d_dqkv(r.dqkv), d_dscores(r.dscores), d_dtable(r.dtable);
    Device<float> d_bias(bias), d_dbias(dbias);
    Device<bf16> d_out16 = poisoned_bf16(r.out.size());  // in bf16, the output's twin, which Wo's product reads
    bf16* out16 = precision == PRECISION_BF16 ? d_out16.ptr : nullptr;
    Device<int> d_positions(positions);
    const int* d_at = drawn ? d_positions.ptr : nullptr;

    bool biased = pe_has_score_bias(kind);
    if (biased) pe_bias_forward(bias.data(), table.data(), at, nullptr, pe_view(tables), planes, T, NH, 0);
    rotate_qk_forward(r.qkv.data(), at, pe_view(tables), B, T, C, NH, 0);
    attention_forward(r.out.data(), r.att.data(), r.qkv.data(), bias.data(), planes, nullptr, TEST_DROPOUT, key, B, T, C, NH, 0, precision);
    attention_backward(r.dqkv.data(), r.dscores.data(), dout.data(), r.qkv.data(), r.att.data(), nullptr, TEST_DROPOUT, key, B, T, C, NH, precision);
    pe_bias_plane_backward(dbias.data(), r.dscores.data(), planes, B, T, NH);
    pe_bias_backward(r.dtable.data(), dbias.data(), table.data(), at, nullptr, pe_view(tables), planes, T, NH, n_params);
    rotate_qk_backward(r.dqkv.data(), at, pe_view(tables), B, T, C, NH);

    if (biased) pe_bias_forward_gpu(d_bias.ptr, d_table.ptr, d_at, pe, planes, T, NH);
    rotate_qk_forward_gpu(d_qkv.ptr, d_at, pe, B, T, C, NH);
    attention_forward_gpu(cublas.handle, d_out.ptr, out16, d_att.ptr, d_qkv.ptr, biased ? d_bias.ptr : nullptr, planes, TEST_DROPOUT, d_key.ptr, B, T,
                          C, NH, &w);
    if (out16) check_twin(d_out, d_out16, "attention out");
    attention_backward_gpu(cublas.handle, d_dqkv.ptr, d_dscores.ptr, d_dout.ptr, d_qkv.ptr, d_att.ptr, TEST_DROPOUT, d_key.ptr, B, T, C, NH, &w);
    if (biased) {
        pe_bias_plane_backward_gpu(d_dbias.ptr, d_dscores.ptr, planes, B, T, NH);
        pe_bias_backward_gpu(d_dtable.ptr, d_dbias.ptr, d_table.ptr, d_at, pe, planes, T, NH, n_params, &w);
    }
    rotate_qk_backward_gpu(d_dqkv.ptr, d_at, pe, B, T, C, NH);
    *gpu = {d_qkv.host(), d_att.host(), d_out.host(), d_dscores.host(), d_dqkv.host(), d_dtable.host()};
}

// the largest magnitude in a tensor, at least `floor`
static double largest_entry(const std::vector<float>& x, double floor = 0) {
    for (float v : x) floor = std::max(floor, std::fabs((double)v));
    return floor;
}

// Attention with each PE (the rotation of RoPE and xPos, every bias PE's planes and their
// parameters' gradient), dropout on, at positions 0 .. T-1 and drawn
static void test_attention_matches_cpu_for_every_pe(void) {
    REQUIRE_GPU();
    for (int p = 0; p < NUM_PES; p++)
        for (bool drawn : {false, true}) {
            if (!on_gpu(p)) continue;
            AttentionResults cpu, gpu;
            attention_on_both((PEKind)p, drawn, PRECISION_FP32, &cpu, &gpu);
            std::string name = std::string(PE_NAMES[p]) + (drawn ? " (drawn positions)" : "");
            TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, cpu.qkv.data(), gpu.qkv.data(), cpu.qkv.size(), (name + ": rotated qkv").c_str());
            TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, cpu.att.data(), gpu.att.data(), cpu.att.size(), (name + ": att").c_str());
            TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, cpu.out.data(), gpu.out.data(), cpu.out.size(), (name + ": out").c_str());
            TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, cpu.dscores.data(), gpu.dscores.data(), cpu.dscores.size(), (name + ": dscores").c_str());
            TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, cpu.dqkv.data(), gpu.dqkv.data(), cpu.dqkv.size(), (name + ": dqkv").c_str());
            // the parameters' gradient sums up to planes x NH x T^2 / 2 terms as large as the PE
            // makes them (KERPLE-power's n^r2 log n reaches 10^4 here): its rounding is relative
            // to the largest entry, as the model test's is
            TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL * largest_entry(cpu.dtable, 1), KERNEL_RTOL, cpu.dtable.data(), gpu.dtable.data(), cpu.dtable.size(),
                                     (name + ": dtable").c_str());
        }
}

// Attention in bf16 against the CPU's bf16 attention, every PE, dropout on. The scores and
// the softmax are fp32 on both, and so are the scores' gradient and the PE's from it, but each
// is a sum of bf16 products taken in another order: held within BF16_KERNEL_ATOL. The output
// and dqkv come from rounded probabilities and score gradients: held within
// BF16_ATTENTION_FRACTION of their largest entries, and shown to be bf16's: at least four times
// closer to the CPU's bf16 than to its fp32.
static void test_attention_matches_cpu_in_bf16(void) {
    REQUIRE_GPU();
    for (int p = 0; p < NUM_PES; p++) {
        if (!on_gpu(p)) continue;
        AttentionResults cpu, gpu, cpu_fp32, gpu_fp32;
        attention_on_both((PEKind)p, false, PRECISION_BF16, &cpu, &gpu);
        attention_on_both((PEKind)p, false, PRECISION_FP32, &cpu_fp32, &gpu_fp32);
        std::string name = std::string(PE_NAMES[p]) + " bf16";
        TEST_ASSERT_TENSOR_CLOSE(BF16_KERNEL_ATOL, BF16_KERNEL_RTOL, cpu.att.data(), gpu.att.data(), cpu.att.size(), (name + ": att").c_str());
        TEST_ASSERT_TENSOR_CLOSE(BF16_KERNEL_ATOL, BF16_KERNEL_RTOL, cpu.dscores.data(), gpu.dscores.data(), cpu.dscores.size(), (name + ": dscores").c_str());
        TEST_ASSERT_TENSOR_CLOSE(BF16_KERNEL_ATOL * largest_entry(cpu.dtable, 1), BF16_KERNEL_RTOL, cpu.dtable.data(), gpu.dtable.data(),
                                 cpu.dtable.size(), (name + ": dtable").c_str());
        for (auto tensor : {&AttentionResults::out, &AttentionResults::dqkv}) {
            const std::vector<float>&ref = cpu.*tensor, &got = gpu.*tensor, &fp32 = cpu_fp32.*tensor;
            std::string what = name + (tensor == &AttentionResults::out ? ": out" : ": dqkv");
            TEST_ASSERT_TENSOR_CLOSE(BF16_ATTENTION_FRACTION * largest_entry(ref), 0, ref.data(), got.data(), ref.size(), what.c_str());
            double to_bf16 = largest_difference(ref.data(), got.data(), ref.size()), to_fp32 = largest_difference(fp32.data(), got.data(), ref.size());
            TEST_ASSERT_MESSAGE(to_fp32 > 4 * to_bf16, (what + ": no closer to the CPU's bf16 than to its fp32").c_str());
        }
    }
}

// a small model on random tokens; answers (targets) on the second half of every sequence
struct SmallSetup {
    static const int B = 4, T = 24;
    std::vector<int> tokens, targets;
    Model cpu;

    SmallSetup(PEKind pe, float dropout, uint64_t seed) : SmallSetup(ModelConfig{2, 64, 4, 128, 50, T, pe, 0.25f, dropout}, seed) {}
    SmallSetup(const ModelConfig& config, uint64_t seed) {
        model_init(&cpu, config, B, seed);
        Rng rng = rng_stream(seed, 1);
        for (int i = 0; i < B * T; i++) tokens.push_back(rng.between(2, 49));
        for (int i = 0; i < B * T; i++) targets.push_back(i % T >= T / 2 && i % T < T - 1 ? tokens[i + 1] : -1);
    }
};

// The first tensor (in checkpoint order) of `gpu` that is not within atol_fraction of its largest
// entry in `reference` plus rtol of each entry, described; "" when every one is
static std::string compare_per_tensor(const Model& cpu, const std::vector<float>& reference, const std::vector<float>& gpu, const char* what,
                                      double atol_fraction = MODEL_ATOL_FRACTION, double rtol = MODEL_RTOL) {
    for (int id = 0; id < NUM_PARAMS; id++)
        for (int l = 0; l < param_copies(cpu.config, id); l++) {
            size_t at = cpu.layout.at(id, l), n = param_numel(cpu.config, id);
            if (n == 0) continue;
            double largest = 0;
            for (size_t i = at; i < at + n; i++) largest = std::max(largest, std::fabs((double)reference[i]));
            std::string label = std::string(what) + " " + PARAMS[id].name + " layer " + std::to_string(l);
            std::string problem = unity_tensor_mismatch(atol_fraction * largest, rtol, reference.data() + at, gpu.data() + at, n, label.c_str());
            if (!problem.empty()) return problem;
        }
    return "";
}

static void test_adamw_and_clipping_match_cpu(void) {
    REQUIRE_GPU();
    SmallSetup s(PE_T5, 0.0f, 3);
    Rng rng = rng_stream(4, 0);
    for (float& g : s.cpu.grads) g = (float)(rng.normal() * 0.1);
    for (float& m : s.cpu.adam_m) m = (float)(rng.normal() * 0.01);
    for (float& v : s.cpu.adam_v) v = (float)(rng.uniform() * 1e-4);
    GpuModel g;
    gpu_init(&g, s.cpu, SmallSetup::B, PRECISION_FP32);
    gpu_upload_set(g.grads, g, s.cpu.grads, s.cpu.layout);
    OptimConfig o;
    o.steps = 100;
    double norm = gradient_norm(s.cpu);
    clip_gradients(&s.cpu, 1.0, norm);
    adamw_update(&s.cpu, o, 1e-3, 7);
    double gpu_norm = gpu_clip_and_update(&g, 1.0, o, 1e-3, 7);
    TEST_ASSERT_GREATER_THAN(1.0, norm);  // large enough to be clipped
    // the same float squares summed in double in another order: far inside 1e-6, and a chunk
    // left out or summed twice would be far outside it
    TEST_ASSERT_DOUBLE_WITHIN(1e-6 * norm, norm, gpu_norm);
    Model back = s.cpu;
    gpu_download(&back, g);
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, s.cpu.params.data(), back.params.data(), back.params.size(), "params");
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, s.cpu.adam_m.data(), back.adam_m.data(), back.adam_m.size(), "adam m");
    TEST_ASSERT_TENSOR_CLOSE(KERNEL_ATOL, KERNEL_RTOL, s.cpu.adam_v.data(), back.adam_v.data(), back.adam_v.size(), "adam v");
}

// ----------------------------------------------------------------------------
// the whole model

// the GPU's gradients, in the host model's layout
static std::vector<float> gpu_grads(const GpuModel& g, const Model& cpu) {
    std::vector<float> out(cpu.layout.total);
    gpu_download_set(&out, cpu.layout, g.grads, g);
    return out;
}

// Every activation buffer and its bf16 twin, the bf16 scratch, and attention's workspace (but
// bias_partials, every entry of which pe_bias_backward_gpu writes before it sums them), filled
// with NaNs (all bits set, in fp32 and in bf16): a step that reads a value it did not write first then carries a NaN into its loss or
// gradients
static void poison_activations(GpuModel* g) {
    const ModelConfig& c = g->config;
    auto poison = [](void* buffer, size_t bytes) {
        if (buffer) cudaCheck(cudaMemset(buffer, 0xff, bytes));
    };
    for (int id = 0; id < NUM_ACTS; id++) {
        poison(g->acts[id], g->act_buffer_numel(id) * sizeof(float));
        poison(g->acts16[id], g->act_buffer_numel(id) * sizeof(bf16));
    }
    poison(g->bf16_scratch, g->bf16_scratch_numel() * sizeof(bf16));
    AttentionWorkspace& w = g->attention;  // as gpu_attention_workspace sizes it
    size_t heads = (size_t)g->max_B * c.max_T * c.C, squares = act_numel(c, S_BNHTT, g->max_B, c.max_T);
    for (float* buffer : {w.q, w.k, w.v, w.y, w.dq, w.dk, w.dv}) poison(buffer, heads * sizeof(float));
    for (float* buffer : {w.dropped, w.ddropped}) poison(buffer, squares * sizeof(float));
    for (bf16* buffer : {w.q16, w.k16, w.v16, w.dy16}) poison(buffer, heads * sizeof(bf16));
    for (bf16* buffer : {w.dropped16, w.ds16}) poison(buffer, squares * sizeof(bf16));
}

// the loss and every gradient of one training step on both devices, with the batch's places; the
// GPU's buffers made for max_B sequences of the model's max_T
static void check_training_step(SmallSetup* s, const TokenPlaces& places, const std::string& name, int max_B = SmallSetup::B) {
    GpuModel g;
    gpu_init(&g, s->cpu, max_B, PRECISION_FP32);
    poison_activations(&g);
    Dropout drop = {0.1f, 11, 3};
    double loss = model_forward(&s->cpu, s->tokens.data(), s->targets.data(), SmallSetup::B, SmallSetup::T, drop, 0, places);
    model_backward(&s->cpu, s->tokens.data(), s->targets.data(), SmallSetup::B, SmallSetup::T, drop, places);
    double gpu_loss = gpu_forward(&g, s->tokens, &s->targets, SmallSetup::B, SmallSetup::T, drop, places);
    gpu_backward(&g, SmallSetup::B, SmallSetup::T, drop);
    TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(MODEL_RTOL * loss, loss, gpu_loss, name.c_str());
    std::string problem = compare_per_tensor(s->cpu, s->cpu.grads, gpu_grads(g, s->cpu), name.c_str());
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
}

static void test_training_step_matches_cpu_for_every_pe(void) {
    REQUIRE_GPU();
    for (int p = 0; p < NUM_PES; p++) {
        if (!on_gpu(p)) continue;
        SmallSetup s((PEKind)p, 0.1f, 5);
        check_training_step(&s, TokenPlaces(), PE_NAMES[p]);
    }
}

// Shapes the tests above do not reach, each a step for every PE it concerns: a model of 20
// channels in 4 heads of 5 (no dimension a multiple of 8, and an odd head); FIRE and T5 at the
// paper's 12 heads, where FIRE's 462 parameters leave room for 26 copies of its partial gradient
// in shared memory, a block narrower than a warp (bias_partial_threads); and a 4 x 24 batch in
// buffers made for 6 x 40, where training's buffers fit its longest batch and most are shorter
// (a kernel striding by the buffers' shape, not the batch's, fails it).
static void test_training_step_matches_cpu_at_other_shapes(void) {
    REQUIRE_GPU();
    for (int p = 0; p < NUM_PES; p++) {
        if (!on_gpu(p)) continue;
        SmallSetup narrow(ModelConfig{2, 20, 4, 40, 50, SmallSetup::T, (PEKind)p, 0.5f, 0.1f}, 17);  // RoPE rotates one pair of 5
        check_training_step(&narrow, TokenPlaces(), std::string(PE_NAMES[p]) + " at 20 channels in 4 heads");
        SmallSetup larger_buffers(ModelConfig{2, 64, 4, 128, 50, 40, (PEKind)p, 0.25f, 0.1f}, 18);
        check_training_step(&larger_buffers, TokenPlaces(), std::string(PE_NAMES[p]) + " in buffers of 6 x 40", 6);
    }
    for (PEKind p : {PE_FIRE, PE_T5}) {
        SmallSetup heads(ModelConfig{2, 48, 12, 96, 50, SmallSetup::T, p, 0.25f, 0.1f}, 19);
        check_training_step(&heads, TokenPlaces(), std::string(PE_NAMES[p]) + " in 12 heads");
    }
}

// The ReLU inputs (every layer's A_FC) whose sign differs between the CPU's last forward and the GPU's
static int relu_flips(Model& cpu, GpuModel* g, int B, int T) {
    const ModelConfig& c = cpu.config;
    size_t n = (size_t)B * T * c.F;
    int flips = 0;
    std::vector<float> gpu(n);
    for (int l = 0; l < c.L; l++) {
        cudaCheck(cudaMemcpy(gpu.data(), g->act(A_FC, l), n * sizeof(float), cudaMemcpyDeviceToHost));
        const real* host = cpu.act(A_FC, l);
        for (size_t i = 0; i < n; i++) flips += (host[i] > 0) != (gpu[i] > 0);
    }
    return flips;
}

// A bf16 step for every PE but CoPE, dropout on, against the CPU's bf16 step: the loss as fp32's
// is held, every gradient within BF16_STEP_FRACTION of its tensor's largest entry where the two
// devices' ReLU inputs agree in sign, and within BF16_FLIPPED_STEP_FRACTION where some do not
// (said in the output).
static void test_training_step_matches_cpu_in_bf16(void) {
    REQUIRE_GPU();
    for (int p = 0; p < NUM_PES; p++) {
        if (!on_gpu(p)) continue;
        ModelConfig config{2, 64, 4, 128, 50, SmallSetup::T, (PEKind)p, 0.25f, 0.1f};
        config.precision = PRECISION_BF16;
        SmallSetup s(config, 5);
        GpuModel g;
        gpu_init(&g, s.cpu, SmallSetup::B, PRECISION_BF16);
        poison_activations(&g);
        Dropout drop = {0.1f, 11, 3};
        std::string name = std::string(PE_NAMES[p]) + " bf16";
        double loss = model_forward(&s.cpu, s.tokens.data(), s.targets.data(), SmallSetup::B, SmallSetup::T, drop);
        model_backward(&s.cpu, s.tokens.data(), s.targets.data(), SmallSetup::B, SmallSetup::T, drop);
        double gpu_loss = gpu_forward(&g, s.tokens, &s.targets, SmallSetup::B, SmallSetup::T, drop);
        gpu_backward(&g, SmallSetup::B, SmallSetup::T, drop);
        TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(MODEL_RTOL * loss, loss, gpu_loss, name.c_str());
        int flips = relu_flips(s.cpu, &g, SmallSetup::B, SmallSetup::T);
        if (flips > 0) printf("%s: %d ReLU inputs differ in sign between the devices: gradients held within %g of their largest entries\n",
                              name.c_str(), flips, BF16_FLIPPED_STEP_FRACTION);
        std::string problem = compare_per_tensor(s.cpu, s.cpu.grads, gpu_grads(g, s.cpu), name.c_str(),
                                                 flips ? BF16_FLIPPED_STEP_FRACTION : BF16_STEP_FRACTION, 0);
        TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
    }
}

// the GPU's fp32 parameters (its own layout), and how many of its bf16 copies are not their rounding
static size_t stale_bf16_copies(const GpuModel& g, std::vector<float>* params) {
    size_t n = g.layout.total, stale = 0;
    std::vector<bf16> copy(n);
    params->resize(n);
    cudaCheck(cudaMemcpy(params->data(), g.params, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaCheck(cudaMemcpy(copy.data(), g.params16, n * sizeof(bf16), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) stale += __bfloat162float(copy[i]) != round_to_bf16((*params)[i]);
    return stale;
}

// the GPU's bf16 copy of the parameters, each rounded from the fp32 one: after the upload, and
// after an update that changed them
static void test_bf16_weights_follow_every_update(void) {
    REQUIRE_GPU();
    ModelConfig config{2, 64, 4, 128, 50, SmallSetup::T, PE_T5, 0.25f, 0.1f};
    config.precision = PRECISION_BF16;
    SmallSetup s(config, 3);
    Rng rng = rng_stream(4, 0);
    for (float& grad : s.cpu.grads) grad = (float)(rng.normal() * 0.1);
    GpuModel g;
    gpu_init(&g, s.cpu, SmallSetup::B, PRECISION_BF16);
    gpu_upload_set(g.grads, g, s.cpu.grads, s.cpu.layout);
    std::vector<float> before, after;
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, (int)stale_bf16_copies(g, &before), "stale bf16 copies after the upload");
    OptimConfig o;
    o.steps = 10;
    gpu_clip_and_update(&g, 1.0, o, 1e-2, 1);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, (int)stale_bf16_copies(g, &after), "stale bf16 copies after an update");
    TEST_ASSERT_MESSAGE(after != before, "the update changed no parameter");
}

// --random-positions (a bias plane per row) and --pe-per-layer (a PE tensor per layer), each
// with the PEs they change most: an input table, the rotations, and biases of every kind
static void test_training_step_matches_cpu_with_drawn_positions_and_per_layer_pes(void) {
    REQUIRE_GPU();
    const int max_pos = 64;
    std::vector<int> positions = drawn_positions(SmallSetup::B, SmallSetup::T, max_pos, 27);
    TokenPlaces drawn;
    drawn.positions = positions.data();
    for (int p = 0; p < NUM_PES; p++) {
        if (!on_gpu(p) || !pe_reads_positions((PEKind)p)) continue;
        ModelConfig config{2, 64, 4, 128, 50, SmallSetup::T, (PEKind)p, 0.25f, 0.1f};
        config.random_positions = max_pos;
        SmallSetup s(config, 5);
        check_training_step(&s, drawn, std::string(PE_NAMES[p]) + " (drawn positions)");
    }
    for (int p = 0; p < NUM_PES; p++) {
        if (!on_gpu(p) || !pe_attention_has_params((PEKind)p)) continue;
        ModelConfig config{2, 64, 4, 128, 50, SmallSetup::T, (PEKind)p, 0.25f, 0.1f};
        config.pe_per_layer = true;
        SmallSetup s(config, 6);
        check_training_step(&s, TokenPlaces(), std::string(PE_NAMES[p]) + " (per layer)");
    }
}

// --abacus and --position-coupling: digits (a third of the tokens here) read the Abacus row of
// their place, or take positions coupled by it, each sequence shifted as training draws it; over
// the PEs coupling can wrap (Abacus wraps any)
static void test_training_step_matches_cpu_with_digit_places(void) {
    REQUIRE_GPU();
    for (bool coupled : {false, true})
        for (PEKind p : {PE_APE, PE_APE_LEARNED, PE_ROPE}) {
            ModelConfig config{2, 64, 4, 128, 50, SmallSetup::T, p, 0.25f, 0.1f};
            (coupled ? config.position_coupling : config.abacus) = true;
            SmallSetup s(config, 10);
            s.cpu.is_digit.assign(config.V, 0);
            for (int v = 2; v < 18; v++) s.cpu.is_digit[v] = 1;
            Batch batch;
            batch.B = SmallSetup::B, batch.T = SmallSetup::T, batch.tokens = s.tokens, batch.lengths.assign(batch.B, batch.T);
            draw_place_offsets(&batch, s.cpu, 31, 4);
            TEST_ASSERT(*std::max_element(batch.place_offsets.begin(), batch.place_offsets.end()) > 0);  // shifted
            std::string name = std::string(coupled ? "coupled " : "Abacus over ") + PE_NAMES[p];
            check_training_step(&s, batch.places(), name);
            if (coupled) continue;
            // the Abacus table has a gradient to compare: some of its rows were read
            double largest = 0;
            for (size_t i = 0; i < param_numel(config, P_ABACUS); i++)
                largest = std::max(largest, std::fabs((double)s.cpu.grad(P_ABACUS)[i]));
            TEST_ASSERT_MESSAGE(largest > 0, (name + ": no Abacus row was read").c_str());
        }
}

// --rope-scaling: evaluation rescales the host's angles and copies them to the GPU, whose
// logits must then be those of the CPU with the same angles (and differ from unscaled ones)
static void test_scaled_rope_tables_reach_the_gpu(void) {
    REQUIRE_GPU();
    SmallSetup s(PE_ROPE, 0.0f, 9);
    GpuModel g;
    gpu_init(&g, s.cpu, SmallSetup::B, PRECISION_FP32);
    std::vector<float> plain, scaled;
    gpu_forward(&g, s.tokens, nullptr, SmallSetup::B, SmallSetup::T, NO_DROPOUT);
    gpu_logits(&g, SmallSetup::B, SmallSetup::T, &plain);
    const ModelConfig& c = s.cpu.config;
    RopeScaling yarn{ROPE_YARN, 2.0, SmallSetup::T / 2};
    s.cpu.pe_tables = make_pe_tables(c.pe, c.C, c.NH, rope_dims(c.HS(), c.rope_frac), c.max_pos(), yarn);
    gpu_update_rope_tables(&g, s.cpu.pe_tables);
    model_forward(&s.cpu, s.tokens.data(), nullptr, SmallSetup::B, SmallSetup::T, NO_DROPOUT);
    gpu_forward(&g, s.tokens, nullptr, SmallSetup::B, SmallSetup::T, NO_DROPOUT);
    gpu_logits(&g, SmallSetup::B, SmallSetup::T, &scaled);
    double largest = 0;
    for (float z : scaled) largest = std::max(largest, std::fabs((double)z));
    TEST_ASSERT_TENSOR_CLOSE(MODEL_ATOL_FRACTION * largest, MODEL_RTOL, s.cpu.act(A_LOGITS), scaled.data(), scaled.size(), "scaled logits");
    TEST_ASSERT_MESSAGE(plain != scaled, "scaling RoPE's angles did not change the GPU's logits");
}

static OptimConfig test_optim(int steps, double lr) {
    OptimConfig o;
    o.steps = steps, o.lr = lr;
    return o;
}

// one training step on the GPU as ./train runs it (captured in a graph when g->graphs), at
// update `step` of `o` with dropout 0.1; sets the loss and the gradient norm
static void gpu_step(GpuModel* g, const std::vector<int>& tokens, const std::vector<int>& targets, int B, int T, const OptimConfig& o, int step,
                     uint64_t seed, double* loss, double* norm) {
    Dropout drop = {0.1f, seed, step};
    gpu_train_step(g, tokens, targets, B, T, drop, TokenPlaces(), 0, o, lr_at(o, step), step + 1, 1.0, loss, norm);
}

// one update on each device; returns the CPU's loss and sets the GPU's
static double step_both(SmallSetup* s, GpuModel* g, int step, double* gpu_loss) {
    OptimConfig o = test_optim(20, 3e-3);
    Dropout drop = {0.1f, 12, step};
    double loss = model_forward(&s->cpu, s->tokens.data(), s->targets.data(), SmallSetup::B, SmallSetup::T, drop);
    model_backward(&s->cpu, s->tokens.data(), s->targets.data(), SmallSetup::B, SmallSetup::T, drop);
    clip_gradients(&s->cpu, 1.0, gradient_norm(s->cpu));
    adamw_update(&s->cpu, o, lr_at(o, step), step + 1);
    double norm;
    gpu_step(g, s->tokens, s->targets, SmallSetup::B, SmallSetup::T, o, step, 12, gpu_loss, &norm);
    return loss;
}

static void test_twenty_steps_on_gpu_track_the_cpu(void) {
    REQUIRE_GPU();
    SmallSetup s(PE_ROPE, 0.1f, 6);
    GpuModel g;
    gpu_init(&g, s.cpu, SmallSetup::B, PRECISION_FP32);
    double first = 0, last = 0;
    for (int step = 0; step < 20; step++) {
        double gpu_loss, loss = step_both(&s, &g, step, &gpu_loss);
        TEST_ASSERT_DOUBLE_WITHIN(TRACK_RTOL * loss, loss, gpu_loss);
        if (step == 0) first = loss;
        last = loss;
    }
    TEST_ASSERT_LESS_THAN(first, last);  // they tracked a run that learned, not one that stood still
}

// (in TF32, and in bf16 with its rounded copies)
static void test_gpu_runs_repeat_bit_for_bit(void) {
    REQUIRE_GPU();
    for (Precision precision : {PRECISION_TF32, PRECISION_BF16}) {
        std::vector<float> params[2];
        std::vector<double> losses[2];
        for (int run = 0; run < 2; run++) {
            SmallSetup s(PE_T5, 0.1f, 7);
            s.cpu.config.precision = precision;
            GpuModel g;
            gpu_init(&g, s.cpu, SmallSetup::B, precision);
            OptimConfig o = test_optim(5, 1e-3);
            for (int step = 0; step < 5; step++) {
                double loss, norm;
                gpu_step(&g, s.tokens, s.targets, SmallSetup::B, SmallSetup::T, o, step, 13, &loss, &norm);
                losses[run].push_back(loss);
            }
            gpu_download(&s.cpu, g);
            params[run] = s.cpu.params;
        }
        std::string name = PRECISION_NAMES[precision];
        TEST_ASSERT_MESSAGE(losses[0] == losses[1], (name + ": losses differ between two identical GPU runs").c_str());
        TEST_ASSERT_MESSAGE(params[0] == params[1], (name + ": parameters differ between two identical GPU runs").c_str());
    }
}

// the first `columns` tokens of every row of a (B, T) batch
static std::vector<int> first_columns(const std::vector<int>& rows, int T, int columns) {
    std::vector<int> out;
    for (size_t start = 0; start < rows.size(); start += T) out.insert(out.end(), rows.begin() + start, rows.begin() + start + columns);
    return out;
}

// A step replayed from its graph computes what the same kernels launched one by one compute,
// bit for bit: batches of two shapes in turn (a graph each, captured once and replayed with
// new tokens, targets, dropout keys and learning rates) against the same steps uncaptured, in
// TF32 and in bf16.
static void test_captured_steps_repeat_uncaptured_ones_bit_for_bit(void) {
    REQUIRE_GPU();
    const int B = SmallSetup::B, T = SmallSetup::T, SHORT = T - 7, STEPS = 6;
    for (Precision precision : {PRECISION_TF32, PRECISION_BF16}) {
        std::vector<float> params[2];
        std::vector<double> losses[2], norms[2];
        size_t graphs[2];
        for (bool captured : {false, true}) {
            SmallSetup s(PE_T5, 0.1f, 14);
            s.cpu.config.precision = precision;
            std::vector<int> short_tokens = first_columns(s.tokens, T, SHORT), short_targets = first_columns(s.targets, T, SHORT);
            GpuModel g;
            gpu_init(&g, s.cpu, B, precision);
            g.graphs = captured;
            OptimConfig o = test_optim(STEPS, 3e-3);
            for (int step = 0; step < STEPS; step++) {
                double loss, norm;
                if (step % 2 == 0) gpu_step(&g, s.tokens, s.targets, B, T, o, step, 15, &loss, &norm);
                else gpu_step(&g, short_tokens, short_targets, B, SHORT, o, step, 15, &loss, &norm);
                losses[captured].push_back(loss), norms[captured].push_back(norm);
            }
            gpu_download(&s.cpu, g);
            params[captured] = s.cpu.params;
            graphs[captured] = g.captured.size();
        }
        std::string name = PRECISION_NAMES[precision];
        TEST_ASSERT_EQUAL_INT(0, (int)graphs[0]);
        TEST_ASSERT_EQUAL_INT(2, (int)graphs[1]);  // one per shape, replayed after
        TEST_ASSERT_MESSAGE(losses[0][0] != losses[0][2] && losses[0][2] != losses[0][4], (name + ": the steps did not learn: nothing was compared").c_str());
        TEST_ASSERT_MESSAGE(losses[0] == losses[1], (name + ": a captured step's loss differs from the uncaptured one's").c_str());
        TEST_ASSERT_MESSAGE(norms[0] == norms[1], (name + ": a captured step's gradient norm differs from the uncaptured one's").c_str());
        TEST_ASSERT_MESSAGE(params[0] == params[1], (name + ": captured steps left other parameters than uncaptured ones").c_str());
    }
}

// a batch of B rows of T random tokens from `seed`, with answers (targets) on a span that starts
// at a drawn place in each row: batches of one shape that differ in their tokens and in which
// rows are answers
static void random_batch(int B, int T, int V, uint64_t seed, std::vector<int>* tokens, std::vector<int>* targets) {
    Rng rng = rng_stream(seed, 2);
    tokens->assign(B * T, 0), targets->assign(B * T, -1);
    for (int& t : *tokens) t = rng.between(2, V - 1);
    for (int b = 0; b < B; b++)
        for (int t = rng.between(1, T - 2); t < T - 1; t++) (*targets)[b * T + t] = (*tokens)[b * T + t + 1];
}

// Captured steps that replay with all a step's host inputs new each time: the tokens and which of
// them are answers, the positions drawn anew (T5 with a bias plane per row), the loss divided by
// 7, 8, 9 and 10 tokens in turn (--sort-pool's divisor), the learning rate and the dropout keys.
// Bit for bit the steps uncaptured (a graph that kept any input of its first step fails), and both
// tracking the CPU's, the gradient norms too (a divisor read once, or never, fails: AdamW and
// clipping would hide it from the losses).
static void test_captured_steps_take_every_new_input(void) {
    REQUIRE_GPU();
    const int B = SmallSetup::B, T = SmallSetup::T, STEPS = 6, max_pos = 64;
    ModelConfig config{2, 64, 4, 128, 50, T, PE_T5, 0.25f, 0.1f};
    config.random_positions = max_pos;
    std::vector<double> losses[2], norms[2];
    std::vector<float> params[2];
    for (bool captured : {false, true}) {
        SmallSetup s(config, 20);
        GpuModel g;
        gpu_init(&g, s.cpu, B, PRECISION_FP32);
        g.graphs = captured;
        OptimConfig o = test_optim(STEPS, 3e-3);
        for (int step = 0; step < STEPS; step++) {
            std::vector<int> tokens, targets, positions = drawn_positions(B, T, max_pos, 40 + step);
            random_batch(B, T, config.V, 30 + step, &tokens, &targets);
            TokenPlaces places;
            places.positions = positions.data();
            size_t divisor = 7 + step % 4;
            Dropout drop = {0.1f, 21, step};
            double lr = lr_at(o, step), loss, norm;
            gpu_train_step(&g, tokens, targets, B, T, drop, places, divisor, o, lr, step + 1, 1.0, &loss, &norm);
            losses[captured].push_back(loss), norms[captured].push_back(norm);
            if (captured) continue;
            double cpu_loss = model_forward(&s.cpu, tokens.data(), targets.data(), B, T, drop, 0, places);
            model_backward(&s.cpu, tokens.data(), targets.data(), B, T, drop, places, divisor);
            double cpu_norm = gradient_norm(s.cpu);
            clip_gradients(&s.cpu, 1.0, cpu_norm);
            adamw_update(&s.cpu, o, lr, step + 1);
            std::string at = "step " + std::to_string(step);
            TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(TRACK_RTOL * cpu_loss, cpu_loss, loss, (at + ": loss").c_str());
            TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(TRACK_RTOL * cpu_norm, cpu_norm, norm, (at + ": gradient norm").c_str());
        }
        gpu_download(&s.cpu, g);
        params[captured] = s.cpu.params;
        TEST_ASSERT_EQUAL_INT(captured ? 1 : 0, (int)g.captured.size());  // one shape: captured once, replayed five times
    }
    TEST_ASSERT_MESSAGE(losses[0] == losses[1], "a replayed step's loss differs from the uncaptured one's");
    TEST_ASSERT_MESSAGE(norms[0] == norms[1], "a replayed step's gradient norm differs from the uncaptured one's");
    TEST_ASSERT_MESSAGE(params[0] == params[1], "replayed steps left other parameters than uncaptured ones");
}

// The update decides on the loss as well as on the norm: a step whose loss alone is not finite
// (its gradients all finite) changes nothing, and the same step with a finite loss does.
static void test_a_non_finite_loss_alone_stops_the_update(void) {
    REQUIRE_GPU();
    SmallSetup s(PE_ALIBI, 0.1f, 22);
    Rng rng = rng_stream(23, 0);
    for (float& grad : s.cpu.grads) grad = (float)(rng.normal() * 0.1);
    GpuModel g;
    gpu_init(&g, s.cpu, SmallSetup::B, PRECISION_FP32);
    OptimConfig o = test_optim(5, 3e-3);
    Model before = s.cpu;
    gpu_download(&before, g);
    for (double loss_sum : {(double)NAN, 1.0}) {
        gpu_upload_set(g.grads, g, s.cpu.grads, s.cpu.layout);
        StepResults r = {loss_sum, 0.0};  // as a forward leaves the loss's sum
        cudaCheck(cudaMemcpy(g.step_results, &r, sizeof(StepResults), cudaMemcpyHostToDevice));
        double norm = gpu_clip_and_update(&g, 1.0, o, 1e-3, 1);
        TEST_ASSERT(std::isfinite(norm) && norm > 0);
        Model after = before;
        gpu_download(&after, g);
        bool unchanged = same_bits(before.params, after.params) && same_bits(before.adam_m, after.adam_m) && same_bits(before.adam_v, after.adam_v);
        if (std::isnan(loss_sum)) TEST_ASSERT_MESSAGE(unchanged, "a NaN loss with finite gradients changed the parameters or AdamW's state");
        else TEST_ASSERT_MESSAGE(!unchanged, "a finite loss with finite gradients changed nothing");
    }
}

// A replayed step whose loss is not finite leaves the parameters and AdamW state as they were:
// the update decides on the device, from the loss and the norm the step itself computed.
static void test_a_non_finite_replayed_step_changes_nothing(void) {
    REQUIRE_GPU();
    SmallSetup s(PE_ALIBI, 0.1f, 16);
    GpuModel g;
    gpu_init(&g, s.cpu, SmallSetup::B, PRECISION_FP32);
    OptimConfig o = test_optim(5, 3e-3);
    double loss, norm;
    gpu_step(&g, s.tokens, s.targets, SmallSetup::B, SmallSetup::T, o, 0, 17, &loss, &norm);  // captures the shape's graph
    TEST_ASSERT(std::isfinite(loss) && std::isfinite(norm));
    Model poisoned = s.cpu;
    gpu_download(&poisoned, g);
    poisoned.param(P_LNF)[0] = NAN;  // every logit, and so the loss, becomes NaN
    gpu_upload(&g, poisoned);
    gpu_step(&g, s.tokens, s.targets, SmallSetup::B, SmallSetup::T, o, 1, 17, &loss, &norm);
    TEST_ASSERT_EQUAL_INT(1, (int)g.captured.size());  // replayed, not captured again
    TEST_ASSERT_FALSE(std::isfinite(loss));
    Model after = poisoned;
    gpu_download(&after, g);
    TEST_ASSERT_MESSAGE(same_bits(poisoned.params, after.params), "a non-finite step changed the parameters");
    TEST_ASSERT_MESSAGE(same_bits(poisoned.adam_m, after.adam_m) && same_bits(poisoned.adam_v, after.adam_v), "a non-finite step changed AdamW's state");
}

// a checkpoint written from the GPU loads on the CPU and gives the GPU's logits
static void test_a_gpu_checkpoint_reads_back_on_the_cpu(void) {
    REQUIRE_GPU();
    SmallSetup s(PE_ALIBI, 0.1f, 8);
    GpuModel g;
    gpu_init(&g, s.cpu, SmallSetup::B, PRECISION_FP32);
    double gpu_loss;
    for (int step = 0; step < 3; step++) step_both(&s, &g, step, &gpu_loss);
    Model trained = s.cpu;
    gpu_download(&trained, g);
    std::string path = unity_temp_dir() + "/model.bin";
    save_checkpoint(path, trained, checkpoint_header(trained, CKPT_MODEL, "copy", "small-test"));
    Model loaded;
    model_init(&loaded, trained.config, SmallSetup::B, 1);
    load_checkpoint(path, read_checkpoint_header(path), &loaded);
    model_forward(&loaded, s.tokens.data(), nullptr, SmallSetup::B, SmallSetup::T, NO_DROPOUT);
    gpu_forward(&g, s.tokens, nullptr, SmallSetup::B, SmallSetup::T, NO_DROPOUT);
    std::vector<float> logits;
    gpu_logits(&g, SmallSetup::B, SmallSetup::T, &logits);
    double largest = 0;
    for (float z : logits) largest = std::max(largest, std::fabs((double)z));
    TEST_ASSERT_TENSOR_CLOSE(MODEL_ATOL_FRACTION * largest, MODEL_RTOL, loaded.act(A_LOGITS), logits.data(), logits.size(), "logits");
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_cublas_opens_with_every_function);
    RUN_TEST(test_embedding_matches_cpu);
    RUN_TEST(test_rmsnorm_matches_cpu);
    RUN_TEST(test_matmul_matches_cpu_in_fp32_and_tf32);
    RUN_TEST(test_tf32_rounds_what_fp32_does_not);
    RUN_TEST(test_matmul_matches_cpu_in_bf16);
    RUN_TEST(test_dropout_relu_and_residual_match_cpu);
    RUN_TEST(test_crossentropy_matches_cpu);
    RUN_TEST(test_attention_matches_cpu_for_every_pe);
    RUN_TEST(test_attention_matches_cpu_in_bf16);
    RUN_TEST(test_adamw_and_clipping_match_cpu);
    RUN_TEST(test_training_step_matches_cpu_for_every_pe);
    RUN_TEST(test_training_step_matches_cpu_at_other_shapes);
    RUN_TEST(test_training_step_matches_cpu_in_bf16);
    RUN_TEST(test_bf16_weights_follow_every_update);
    RUN_TEST(test_training_step_matches_cpu_with_drawn_positions_and_per_layer_pes);
    RUN_TEST(test_training_step_matches_cpu_with_digit_places);
    RUN_TEST(test_scaled_rope_tables_reach_the_gpu);
    RUN_TEST(test_twenty_steps_on_gpu_track_the_cpu);
    RUN_TEST(test_gpu_runs_repeat_bit_for_bit);
    RUN_TEST(test_captured_steps_repeat_uncaptured_ones_bit_for_bit);
    RUN_TEST(test_captured_steps_take_every_new_input);
    RUN_TEST(test_a_non_finite_replayed_step_changes_nothing);
    RUN_TEST(test_a_non_finite_loss_alone_stops_the_update);
    RUN_TEST(test_a_gpu_checkpoint_reads_back_on_the_cpu);
    return UNITY_END();
}
