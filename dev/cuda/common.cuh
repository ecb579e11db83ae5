/*
 common.cuh: what every dev/cuda program shares: random inputs, device copies, a check of a GPU
 result against the CPU reference, and timing with CUDA events.
*/
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "model.h"

// the CPU reference's bias plane (NH, T, T) for one batch at positions 0 .. T-1, as
// model_forward makes it (zeros for a PE without a score bias)
inline std::vector<float> reference_bias_plane(const std::vector<float>& table, const PE& pe, int T, int NH) {
    std::vector<float> bias((size_t)NH * T * T, 0);
    if (pe_has_score_bias(pe.kind)) pe_bias_forward(bias.data(), table.data(), nullptr, nullptr, pe, 1, T, NH, 0);
    return bias;
}

inline std::vector<float> random_floats(size_t n, uint64_t seed, double scale = 1.0) {
    Rng rng = rng_stream(seed, n);
    std::vector<float> x(n);
    for (float& v : x) v = (float)(rng.normal() * scale);
    return x;
}

template <typename T>
T* to_device(const std::vector<T>& host) {
    T* p = nullptr;
    cudaCheck(cudaMalloc(&p, host.size() * sizeof(T)));
    cudaCheck(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    return p;
}

// Compares a device result with the CPU's, |gpu - cpu| <= atol + rtol |cpu| everywhere; prints
// the first mismatches and exits 1 if there are any.
inline void check(const char* name, const std::vector<float>& cpu, const float* device, double atol, double rtol) {
    std::vector<float> gpu(cpu.size());
    cudaCheck(cudaMemcpy(gpu.data(), device, gpu.size() * sizeof(float), cudaMemcpyDeviceToHost));
    size_t bad = 0;
    double worst = 0;
    for (size_t i = 0; i < cpu.size(); i++) {
        double error = std::fabs((double)gpu[i] - cpu[i]), tolerance = atol + rtol * std::fabs(cpu[i]);
        worst = std::max(worst, error / tolerance);
        if (!(error <= tolerance) && bad++ < 5) printf("  %s[%zu]: cpu %.7g gpu %.7g\n", name, i, cpu[i], gpu[i]);
    }
    printf("%-10s %s: %zu of %zu out of tolerance, worst at %.2f of it\n", name, bad ? "MISMATCH" : "ok", bad, cpu.size(), worst);
    if (bad) exit(1);
}

// mean milliseconds of `repeats` calls, after one warm-up call
template <typename F>
float time_ms(F call, int repeats = 20) {
    call();
    cudaEvent_t start, stop;
    cudaCheck(cudaEventCreate(&start));
    cudaCheck(cudaEventCreate(&stop));
    cudaCheck(cudaEventRecord(start));
    for (int i = 0; i < repeats; i++) call();
    cudaCheck(cudaEventRecord(stop));
    cudaCheck(cudaEventSynchronize(stop));
    float ms = 0;
    cudaCheck(cudaEventElapsedTime(&ms, start, stop));
    return ms / repeats;
}

// "./program VERSION [PE] [B T]": the kernel version, the PE, and the shape
struct Args {
    int version = 2, B = 64, T = 256;
    PEKind pe = PE_T5;
};
inline Args parse_args(int argc, char** argv, int versions) {
    Args a;
    if (argc > 1) a.version = atoi(argv[1]);
    if (argc > 2) a.pe = find_pe(argv[2]);
    if (argc > 4) a.B = atoi(argv[3]), a.T = atoi(argv[4]);
    if (a.version < 1 || a.version > versions || a.B < 1 || a.T < 1) {
        fprintf(stderr, "usage: %s VERSION(1-%d) [PE] [B T]\n", argv[0], versions);
        exit(1);
    }
    return a;
}
