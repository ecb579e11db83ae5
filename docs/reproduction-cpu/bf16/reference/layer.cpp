// One attention layer alone, forward and backward, in bf16 (model.h's rules) on fixed inputs:
// what a GPU kernel would be held to against the CPU layer, given the same inputs. Built with
// its sums in float and in double, the two differ only in the sums' order, and in the rounded
// operands made from sums (the probabilities and the scores' gradients) that a sum's last bit
// carries across a bf16 rounding boundary. 8 sequences of 80 tokens (three key tiles), 4 heads
// of 16, dropout 0.1, q, k, v drawn with standard deviation 2 (peaked rows, as a trained model's).
//   layer run PE ATTENTION OUT.bin     out (B, T, C), then dqkv (B, T, 3C), as float
//   layer compare A.bin B.bin          the worst difference of each, as a fraction of B's largest
#include <cstdio>

#include "model.h"

static const int B = 8, T = 80, C = 64, NH = 4;

static std::vector<float> read_floats(const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f) fail("can not read %s", path);
    std::vector<float> v;
    for (float x; fread(&x, sizeof x, 1, f) == 1;) v.push_back(x);
    fclose(f);
    if (v.size() != (size_t)B * T * C + (size_t)B * T * 3 * C) fail("%s does not hold one layer's out and dqkv", path);
    return v;
}

static double worst_fraction(const float* a, const float* b, size_t n) {
    double largest = 0, difference = 0;
    for (size_t i = 0; i < n; i++) {
        largest = std::max(largest, std::fabs((double)b[i]));
        difference = std::max(difference, std::fabs((double)a[i] - b[i]));
    }
    return difference / largest;
}

static int compare(const char* path_a, const char* path_b) {
    std::vector<float> a = read_floats(path_a), b = read_floats(path_b);
    size_t n_out = (size_t)B * T * C;
    printf("out %.1e   dqkv %.1e\n", worst_fraction(a.data(), b.data(), n_out), worst_fraction(a.data() + n_out, b.data() + n_out, a.size() - n_out));
    return 0;
}

static int run(const char* pe_name, const std::string& attention, const char* path) {
    if (attention != "simple" && attention != "fused") fail("unknown attention '%s' (valid: simple fused)", attention.c_str());
    PEKind kind = find_pe(pe_name);
    if (pe_rotates(kind) || pe_has_context_bias(kind)) fail("%s: this program feeds q and k as they are; use a bias PE or nope", pe_name);
    PETables tables = make_pe_tables(kind, C, NH, 0, T);
    PE pe = pe_view(tables);
    Rng rng = rng_stream(7, 3);
    auto draw = [&](size_t n, double scale) {
        std::vector<real> v(n);
        for (real& x : v) x = (real)(float)(scale * rng.normal());  // the same floats in either build
        return v;
    };
    std::vector<real> qkv = draw((size_t)B * T * 3 * C, 2.0), dout = draw((size_t)B * T * C, 1.0);
    std::vector<real> params(pe_param_count(kind, C, NH, T));
    Rng init = rng_stream(7, 4);
    pe_init_params(kind, params.data(), C, NH, T, &init);
    Dropout drop = {0.1f, 11, 3};
    uint32_t key = drop.key(SITE_ATTN_PROBS, 0);
    std::vector<real> out((size_t)B * T * C), dqkv(qkv.size(), 0), dparams(params.size(), 0);
    if (attention == "fused") {
        std::vector<real> lse((size_t)B * NH * T);
        attention_fused_forward(out.data(), lse.data(), qkv.data(), params.data(), pe, nullptr, nullptr, drop, key, B, T, C, NH, 0, PRECISION_BF16);
        attention_fused_backward(dqkv.data(), dparams.data(), dout.data(), qkv.data(), out.data(), lse.data(), params.data(), params.size(), pe,
                                 nullptr, nullptr, drop, key, B, T, C, NH, PRECISION_BF16);
    } else {
        std::vector<real> bias((size_t)NH * T * T), att((size_t)B * NH * T * T), dscores(att.size());
        pe_bias_forward(bias.data(), params.data(), nullptr, nullptr, pe, 1, T, NH, 0);
        attention_forward(out.data(), att.data(), qkv.data(), pe_has_score_bias(kind) ? bias.data() : nullptr, 1, nullptr, drop, key, B, T, C,
                          NH, 0, PRECISION_BF16);
        attention_backward(dqkv.data(), dscores.data(), dout.data(), qkv.data(), att.data(), nullptr, drop, key, B, T, C, NH, PRECISION_BF16);
    }
    FILE* f = fopen(path, "wb");
    if (!f) fail("can not write %s", path);
    for (const std::vector<real>* v : {&out, &dqkv})
        for (real x : *v) {
            float y = (float)x;
            fwrite(&y, sizeof y, 1, f);
        }
    return fclose(f) == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
    if (argc == 5 && std::string(argv[1]) == "run") return run(argv[2], argv[3], argv[4]);
    if (argc == 4 && std::string(argv[1]) == "compare") return compare(argv[2], argv[3]);
    fail("usage: layer run PE ATTENTION OUT.bin | layer compare A.bin B.bin");
}
