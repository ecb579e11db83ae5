/*
 dev/place_patch.cpp: does a model fail past training because of where its tokens say they are?
 An intervention on the residual stream, for tasks whose prompt is a marker and a list (copy,
 reverse, sort, ...): a prompt of training's longest length P keeps its first token and its last
 P - 1 (the donor); the test prompts longer than P end as their donors do, and the model predicts
 the answer's first token at the prompt's last position. Entering each layer in turn (and leaving
 the last), the long prompt's last P - 1 tokens are edited, and the first token is counted right
 or wrong:

   none     the long prompt as it is
   donor    the donor prompt itself, at training's length
   all      each of those tokens' residual stream replaced by the donor token's
   keys     the same but for the last token, the query that predicts
   probe    each moved along the position probe's direction (least squares from that state to
            the prompt tokens' positions, fitted to valid's prompts, as dev/attention probe) until
            the probe reads the token's place in the donor, and nothing else changed
   random   each moved as far as the probe moved it, along a fixed random direction: a control
            for any push of that size

   make dev/place_patch && ./dev/place_patch RUN/model.bin [EXAMPLES]

 EXAMPLES (default 1000): the valid examples the probes are fitted to, and the test examples
 edited (those whose prompt is longer than P). A model that reads the token before the query
 through a code of places, and fails because that code stops growing past training, is mended
 by `probe` where the code is read, and not by `random`; `all` and `keys` say whether what the
 tokens carry decides at all (docs/reproduction-cpu.md, "ALiBi's place").
*/
#ifndef TESTING  // built as a program: train.cu's code without its main (a test includes train.cu itself)
#define TESTING
#define PLACE_PATCH_MAIN
#include "train.cu"
#endif

enum PatchKind { PATCH_NONE, PATCH_DONOR, PATCH_ALL, PATCH_KEYS, PATCH_PROBE, PATCH_RANDOM, NUM_PATCHES };
static const char* const PATCH_NAMES[] = {"none", "donor", "all", "keys", "probe", "random"};

// x moved along the fit's weights until the fit reads `target` there; returns how far it moved
static double move_to_reading(const LinearFit& fit, float* x, double target) {
    double squared = 0;
    for (double w : fit.w) squared += w * w;
    double step = (target - fit.predict(x)) / squared;
    for (size_t k = 0; k < fit.w.size(); k++) x[k] += (float)(step * fit.w[k]);
    return fabs(step) * sqrt(squared);
}

// the residual stream state s (entering layer s; L: leaving the last) of the last forward
static const real* stream_state(Model* m, int s) { return s < m->config.L ? m->act(A_RES_IN, s) : m->act(A_RES_OUT); }

// the last forward's logits at position t
static std::vector<real> logits_at(Model* m, int t) {
    const real* row = m->act(A_LOGITS) + (size_t)t * m->config.V;
    return std::vector<real>(row, row + m->config.V);
}

// a probe of the prompt tokens' positions from each state, fitted to valid's first n prompts
static std::vector<LinearFit> fit_probes(Model* m, const Split& valid, int n) {
    const int C = m->config.C, states = m->config.L + 1;
    std::vector<std::vector<float>> rows(states);
    std::vector<double> positions;
    for (int i = 0; i < std::min(n, valid.size()); i++) {
        int P = valid.prompt_len[i];
        model_forward(m, valid.example(i), nullptr, 1, P, NO_DROPOUT);
        for (int s = 0; s < states; s++) rows[s].insert(rows[s].end(), stream_state(m, s), stream_state(m, s) + (size_t)P * C);
        for (int t = 0; t < P; t++) positions.push_back(t);
    }
    std::vector<LinearFit> probes;
    for (int s = 0; s < states; s++) {
        std::vector<const float*> pointers;
        for (size_t r = 0; r < positions.size(); r++) pointers.push_back(rows[s].data() + r * C);
        probes.push_back(least_squares(pointers, positions, C));
    }
    return probes;
}

// a long prompt, its donor (its first token and last P - 1) and the donor's every state
struct PatchCase {
    std::vector<int> prompt, donor;
    std::vector<float> donor_states;  // (L + 1, P, C)
    std::vector<real> donor_logits;   // (V) at the donor's last position
};

static PatchCase patch_case(Model* m, const int* prompt, int prompt_len, int P) {
    PatchCase pc;
    pc.prompt.assign(prompt, prompt + prompt_len);
    pc.donor = {prompt[0]};
    pc.donor.insert(pc.donor.end(), prompt + prompt_len - (P - 1), prompt + prompt_len);
    model_forward(m, pc.donor.data(), nullptr, 1, P, NO_DROPOUT);
    for (int s = 0; s <= m->config.L; s++)
        pc.donor_states.insert(pc.donor_states.end(), stream_state(m, s), stream_state(m, s) + (size_t)P * m->config.C);
    pc.donor_logits = logits_at(m, P - 1);
    return pc;
}

// the logits at the long prompt's last position with its last P - 1 tokens edited at state s by
// `kind` (all, keys, probe or random; none: as it is)
static std::vector<real> patched_logits(Model* m, const PatchCase& pc, PatchKind kind, int s, const LinearFit& probe,
                                        const std::vector<float>& direction) {
    const int C = m->config.C, P = (int)pc.donor.size(), offset = (int)pc.prompt.size() - P;
    auto edit = [&](int layer, real* residual) {
        if (layer != s) return;
        for (int d = 1; d < P; d++) {  // donor token d is the long prompt's token d + offset
            real* x = residual + (size_t)(d + offset) * C;
            const float* from = pc.donor_states.data() + ((size_t)s * P + d) * C;
            if (kind == PATCH_ALL || (kind == PATCH_KEYS && d < P - 1)) std::copy(from, from + C, x);
            if (kind != PATCH_PROBE && kind != PATCH_RANDOM) continue;
            std::vector<float> moved(x, x + C);
            double distance = move_to_reading(probe, moved.data(), d);
            for (int k = 0; k < C; k++) x[k] = kind == PATCH_PROBE ? moved[k] : x[k] + (real)(distance * direction[k]);
        }
    };
    if (kind != PATCH_NONE) m->edit_residual = edit;
    model_forward(m, pc.prompt.data(), nullptr, 1, (int)pc.prompt.size(), NO_DROPOUT);
    m->edit_residual = nullptr;
    return logits_at(m, (int)pc.prompt.size() - 1);
}

struct PatchCounts {
    int lo = 0, hi = 0;                 // the test lengths counted
    long examples = 0;
    std::vector<long> right;            // [state * NUM_PATCHES + kind]; none and donor at state 0
};

static PatchCounts length_range(int lo, int hi) {
    PatchCounts r;
    r.lo = lo, r.hi = hi;
    return r;
}

// a fixed random unit direction of C channels, the control's
static std::vector<float> random_direction(int C) {
    std::vector<float> direction(C);
    Rng rng{20261127};
    double norm = 0;
    for (float& x : direction) x = (float)rng.normal(), norm += (double)x * x;
    for (float& x : direction) x = (float)(x / sqrt(norm));
    return direction;
}

// Edits the test prompts longer than training's (of the first n test examples) at every state
// and counts the answer's first token right, by ranges of test lengths
static std::vector<PatchCounts> place_patch(Model* m, const Split& valid, const Split& test, int n,
                                            const std::vector<PatchCounts>& ranges) {
    const int states = m->config.L + 1, V = m->config.V;
    int P = 0;  // training's longest prompt
    for (int i = 0; i < valid.size(); i++) P = std::max(P, valid.prompt_len[i]);
    std::vector<LinearFit> probes = fit_probes(m, valid, n);
    std::vector<float> direction = random_direction(m->config.C);
    std::vector<PatchCounts> counts = ranges;
    for (PatchCounts& r : counts) r.right.assign((size_t)states * NUM_PATCHES, 0);
    for (int i = 0; i < std::min(n, test.size()); i++) {
        PatchCounts* range = nullptr;
        for (PatchCounts& r : counts)
            if (test.length[i] >= r.lo && test.length[i] <= r.hi) range = &r;
        if (test.prompt_len[i] <= P || !range) continue;
        int gold = test.example(i)[test.prompt_len[i]];
        PatchCase pc = patch_case(m, test.example(i), test.prompt_len[i], P);
        range->examples++;
        range->right[PATCH_DONOR] += argmax(pc.donor_logits.data(), V) == gold;
        range->right[PATCH_NONE] += argmax(patched_logits(m, pc, PATCH_NONE, 0, probes[0], direction).data(), V) == gold;
        for (int s = 0; s < states; s++)
            for (PatchKind kind : {PATCH_ALL, PATCH_KEYS, PATCH_PROBE, PATCH_RANDOM}) {
                std::vector<real> logits = patched_logits(m, pc, kind, s, probes[s], direction);
                range->right[(size_t)s * NUM_PATCHES + kind] += argmax(logits.data(), V) == gold;
            }
    }
    return counts;
}

#ifdef PLACE_PATCH_MAIN
static void print_place_patch(const std::string& path, int n) {
    RunConfig c;
    Run r(&c);
    load_run(&r, path);
    const LengthSplit& lengths = r.data.lengths;
    std::vector<PatchCounts> ranges;  // the test lengths in ranges of five
    for (int lo = lengths.train_max + 1; lo <= lengths.test_max; lo += 5)
        ranges.push_back(length_range(lo, std::min(lo + 4, lengths.test_max)));
    std::vector<PatchCounts> counts = place_patch(&r.model, valid_split(r), test_split(r), n, ranges);
    printf("%s: the answer's first token right, of the test prompts longer than training's, their last tokens edited as the donor's\n",
           path.c_str());
    printf("%-23s", "state, edit");
    for (const PatchCounts& range : counts)
        printf("  %-20s", format_text("lengths %d-%d (%ld)", range.lo, range.hi, range.examples).c_str());
    printf("\n");
    const int states = r.model.config.L + 1;
    for (int s = -1; s < states; s++)
        for (int kind = 0; kind < NUM_PATCHES; kind++) {
            if ((s < 0) != (kind == PATCH_NONE || kind == PATCH_DONOR)) continue;  // none and donor edit no state
            std::string state = s < 0 ? "-" : s < states - 1 ? "entering layer " + std::to_string(s) : "leaving the last";
            printf("%-16s %-6s", state.c_str(), PATCH_NAMES[kind]);
            for (const PatchCounts& range : counts) {
                long right = range.right[(size_t)std::max(s, 0) * NUM_PATCHES + kind];
                printf("  %-20.3f", range.examples ? (double)right / range.examples : NAN);
            }
            printf("\n");
        }
}

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: dev/place_patch MODEL.bin [EXAMPLES]\n");
        return 1;
    }
    try {
        int n = 1000;
        if (argc == 3) parse_value(Flag{"EXAMPLES", FLAG_INT, &n, false, ANY, ""}, argv[2]);
        if (n < 1) fail("EXAMPLES must be at least 1, not %d", n);
        print_place_patch(argv[1], n);
    } catch (const Error& e) {
        fprintf(stderr, "dev/place_patch: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
#endif
