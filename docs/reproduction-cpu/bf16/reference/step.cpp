// One training step's loss, gradients and its ReLUs' inputs (as float) for the model and batch of test_gpu's
// SmallSetup (2 layers of 64, 4 heads, d_ff 128, vocabulary 50, 4 x 24 random tokens, loss on
// the second half, dropout 0.1, model seed 18), with ./train's model.h at the given --precision
// and --attention, its sums in `real` (float, or double with -DMODEL_REAL=double). run.sh builds
// and compares them.
//   step PE PRECISION ATTENTION OUT.bin
#include <cstdio>

#include "model.h"

int main(int argc, char** argv) {
    if (argc != 5) fail("usage: step PE PRECISION ATTENTION OUT.bin");
    const int B = 4, T = 24;
    ModelConfig config{2, 64, 4, 128, 50, T, find_pe(argv[1]), 0.25f, 0.1f};
    config.precision = find_precision(argv[2]);
    std::string attention = argv[3];
    if (attention != "simple" && attention != "fused") fail("unknown attention '%s' (valid: simple fused)", argv[3]);
    config.attention = attention == "fused" ? ATTENTION_FUSED : ATTENTION_SIMPLE;
    Model m;
    model_init(&m, config, B, 18);
    std::vector<int> tokens, targets;
    Rng rng = rng_stream(18, 1);
    for (int i = 0; i < B * T; i++) tokens.push_back(rng.between(2, 49));
    for (int i = 0; i < B * T; i++) targets.push_back(i % T >= T / 2 && i % T < T - 1 ? tokens[i + 1] : -1);
    Dropout drop = {0.1f, 19, 2};
    double loss = model_forward(&m, tokens.data(), targets.data(), B, T, drop);
    model_backward(&m, tokens.data(), targets.data(), B, T, drop);
    FILE* f = fopen(argv[4], "wb");
    if (!f) fail("can not write %s", argv[4]);
    fwrite(&loss, sizeof loss, 1, f);
    auto write = [&](const real* v, size_t n) {
        for (size_t i = 0; i < n; i++) {
            float x = (float)v[i];
            fwrite(&x, sizeof x, 1, f);
        }
    };
    write(m.grads.data(), m.grads.size());
    for (int l = 0; l < config.L; l++) write(m.act(A_FC, l), (size_t)B * T * config.F);  // the ReLUs' inputs
    return fclose(f) == 0 ? 0 : 1;
}
