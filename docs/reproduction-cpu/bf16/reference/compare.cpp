// How far step A's loss and gradients are from step B's (step.cpp's files, one PE): the loss's
// relative difference, the gradient's relative L2 distance, and the worst entry's difference as
// a fraction of its tensor's largest entry in B (the measure test_gpu's bf16 experiment used), and
// how many ReLU inputs have opposite signs in A and B (each such token drops out of, or joins, a
// row of w1's gradient).
//   compare PE A.bin B.bin
#include <cstdio>

#include "model.h"

static std::vector<float> read_step(const char* path, double* loss) {  // the gradients, then the ReLUs' inputs
    FILE* f = fopen(path, "rb");
    if (!f || fread(loss, sizeof *loss, 1, f) != 1) fail("can not read %s", path);
    std::vector<float> grads;
    for (float x; fread(&x, sizeof x, 1, f) == 1;) grads.push_back(x);
    fclose(f);
    return grads;
}

int main(int argc, char** argv) {
    if (argc != 4) fail("usage: compare PE A.bin B.bin");
    ModelConfig config{2, 64, 4, 128, 50, 24, find_pe(argv[1]), 0.25f, 0.1f};
    Layout layout = make_layout(config);
    double loss_a, loss_b;
    std::vector<float> a = read_step(argv[2], &loss_a), b = read_step(argv[3], &loss_b);
    double worst = 0, distance = 0, norm = 0;
    std::string where;
    for (int id = 0; id < NUM_PARAMS; id++)
        for (int l = 0; l < param_copies(config, id); l++) {
            size_t at = layout.at(id, l), n = param_numel(config, id);
            double largest = 0, difference = 0;
            for (size_t i = at; i < at + n; i++) {
                largest = std::max(largest, std::fabs((double)b[i]));
                difference = std::max(difference, std::fabs((double)a[i] - b[i]));
                distance += ((double)a[i] - b[i]) * ((double)a[i] - b[i]), norm += (double)b[i] * b[i];
            }
            if (largest > 0 && difference / largest > worst) worst = difference / largest, where = std::string(PARAMS[id].name) + " layer " + std::to_string(l);
        }
    if (a.size() != b.size() || a.size() <= layout.total) fail("%s and %s do not hold the same step's tensors", argv[2], argv[3]);
    int flips = 0;
    for (size_t i = layout.total; i < a.size(); i++) flips += (a[i] > 0) != (b[i] > 0);
    printf("%-6s loss %.1e   gradient L2 %.1e   worst entry %.1e of its tensor's largest (%s)   ReLU flips %d\n", argv[1],
           std::fabs(loss_a / loss_b - 1), sqrt(distance / norm), worst, where.c_str(), flips);
}
