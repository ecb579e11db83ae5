// How far step A's loss and gradients are from step B's (step.cpp's files, one PE): the loss's
// relative difference, the gradient's relative L2 distance, and the worst entry's difference as
// a fraction of its tensor's largest entry in B (the measure test_gpu's bf16 experiment used), and
// the largest change of a ReLU input, how many have opposite signs in A and B (each such token drops out of, or joins,
// its hidden unit's row of w1's gradient and column of w2's), and the worst entry again outside
// those rows and columns.
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
    const int B = 4, T = 24;
    ModelConfig config{2, 64, 4, 128, 50, T, find_pe(argv[1]), 0.25f, 0.1f};
    Layout layout = make_layout(config);
    double loss_a, loss_b;
    std::vector<float> a = read_step(argv[2], &loss_a), b = read_step(argv[3], &loss_b);
    if (a.size() != b.size() || a.size() != layout.total + (size_t)config.L * B * T * config.F)
        fail("%s and %s do not hold this model's step", argv[2], argv[3]);
    // the hidden units (layer, unit) with a ReLU input of opposite signs in A and B
    std::vector<std::vector<bool>> flipped(config.L, std::vector<bool>(config.F, false));
    int flips = 0;
    double moved = 0;  // the largest change of a ReLU input
    for (size_t i = 0; i < a.size() - layout.total; i++) {
        size_t at = layout.total + i;
        moved = std::max(moved, std::fabs((double)a[at] - b[at]));
        if ((a[at] > 0) == (b[at] > 0)) continue;
        flips++;
        flipped[i / ((size_t)B * T * config.F)][i % config.F] = true;
    }
    // is entry n of tensor id (layer l) w1's row or w2's column of such a unit?
    auto of_flipped_unit = [&](int id, int l, size_t n) {
        return (id == P_W1 && flipped[l][n / config.C]) || (id == P_W2 && flipped[l][n % config.F]);
    };
    double worst = 0, worst_outside = 0, distance = 0, norm = 0;
    std::string where;
    for (int id = 0; id < NUM_PARAMS; id++)
        for (int l = 0; l < param_copies(config, id); l++) {
            size_t at = layout.at(id, l), n = param_numel(config, id);
            double largest = 0, difference = 0, difference_outside = 0;
            for (size_t i = 0; i < n; i++) {
                double x = a[at + i], y = b[at + i];
                largest = std::max(largest, std::fabs(y));
                difference = std::max(difference, std::fabs(x - y));
                if (!of_flipped_unit(id, l, i)) difference_outside = std::max(difference_outside, std::fabs(x - y));
                distance += (x - y) * (x - y), norm += y * y;
            }
            if (largest == 0) continue;
            if (difference / largest > worst) worst = difference / largest, where = std::string(PARAMS[id].name) + " layer " + std::to_string(l);
            worst_outside = std::max(worst_outside, difference_outside / largest);
        }
    printf("%-6s loss %.1e   gradient L2 %.1e   worst entry %.1e of its tensor's largest (%s)   ReLU inputs: moved %.1e, flipped %d, worst entry outside their units %.1e\n",
           argv[1], std::fabs(loss_a / loss_b - 1), sqrt(distance / norm), worst, where.c_str(), moved, flips, worst_outside);
}
