/*
 dev/place_patch.cpp: does a model fail past training because of where its tokens say they are?
 An intervention on the residual stream, for tasks whose answer begins with words read from the
 prompt's end (reverse): a prompt of training's longest length P keeps its first token and its
 last P - 1 (the donor); the test prompts longer than P end as their donors do, and where the
 donor's answer begins with the same WORDS tokens as theirs, the model predicts those tokens, each
 with the gold before it (as greedy decoding writes them, right or wrong together). Entering each
 layer in turn (and leaving the last), the long example's tokens that the donor holds too (the
 prompt's last P - 1 and the answer's first WORDS - 1) are edited, and the example is counted
 right or wrong:

   none     the long example as it is
   donor    the donor itself, at training's length
   all      each of those tokens' residual stream replaced by the donor token's
   keys     the same but for the queries that predict (the prompt's last token and the answer's)
   probe    each moved along the position probe's direction (least squares from that state to
            the tokens' positions, fitted to valid's examples over the same tokens, as dev/attention
            probe) until the probe reads the token's place in the donor, and nothing else changed
   random   each moved as far as the probe moved it, along a fixed random direction: a control
            for any push of that size
   extend   no donor: every token of the long example but the first moved along the probe's
            direction until the probe reads its own place, as though the code grew past training
            as it grows within it
   extend-random  each moved as far as `extend` moved it, along the random direction

   make dev/place_patch && ./dev/place_patch RUN/model.bin [EXAMPLES [WORDS]]

 EXAMPLES (default 1000): the valid examples the probes are fitted to, and the test examples
 edited (those whose prompt is longer than P). WORDS (default 1): how many of the answer's first
 tokens are counted; on reverse the donor's answer begins as the long one's for up to the donor's
 P - 2 words, and a test example whose donor's answer begins otherwise (most of copy_cmc's and
 sort's) is left out and counted as such. A model that reads the token before the query through
 a code of places, and fails because that code stops growing past training, is mended by `probe`
 where the code is read, and not by `random`; `all` and `keys` say whether what the tokens carry
 decides at all. `probe` gives the donor's places to the last tokens while the earlier ones keep
 theirs, so two tokens may say they stand at one place; `extend` asks the same question with no
 such clash, for every word counted, but with a push as large as the code's shortfall, which can
 break a model that reads no code at all: read it beside such a model's table (on the four-layer
 reverse models it breaks T5's and RoPE's first word; docs/reproduction-cpu.md, "ALiBi's place"
 and "The answer's later words").
*/
#ifndef TESTING  // built as a program: train.cu's code without its main (a test includes train.cu itself)
#define TESTING
#define PLACE_PATCH_MAIN
#include "train.cu"
#endif
#include "dev/tool.h"

enum PatchKind {
    PATCH_NONE, PATCH_DONOR,                                         // no state edited
    PATCH_ALL, PATCH_KEYS, PATCH_PROBE, PATCH_RANDOM,                // toward the donor
    PATCH_EXTEND, PATCH_EXTEND_RANDOM,                               // to each token's own place
    NUM_PATCHES
};
static const char* const PATCH_NAMES[] = {"none", "donor", "all", "keys", "probe", "random", "extend", "extend-random"};
static const PatchKind STATE_EDITS[] = {PATCH_ALL, PATCH_KEYS, PATCH_PROBE, PATCH_RANDOM, PATCH_EXTEND, PATCH_EXTEND_RANDOM};

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

// a probe of the tokens' positions from each state, fitted to valid's first n examples over
// their prompt and the answer's first words - 1 tokens (the tokens an edit moves)
static std::vector<LinearFit> fit_probes(Model* m, const Split& valid, int n, int words) {
    const int C = m->config.C, states = m->config.L + 1;
    std::vector<std::vector<float>> rows(states);
    std::vector<double> positions;
    for (int i = 0; i < std::min(n, valid.size()); i++) {
        int T = std::min(valid.prompt_len[i] + words - 1, valid.example_len(i));
        model_forward(m, valid.example(i), nullptr, 1, T, NO_DROPOUT);
        for (int s = 0; s < states; s++) rows[s].insert(rows[s].end(), stream_state(m, s), stream_state(m, s) + (size_t)T * C);
        for (int t = 0; t < T; t++) positions.push_back(t);
    }
    std::vector<LinearFit> probes;
    for (int s = 0; s < states; s++) {
        std::vector<const float*> pointers;
        for (size_t r = 0; r < positions.size(); r++) pointers.push_back(rows[s].data() + r * C);
        probes.push_back(least_squares(pointers, positions, C));
    }
    return probes;
}

// A long example and its donor (the prompt's first token and last P - 1), each followed by the
// answer's first words - 1 tokens, whose predictions at their last `words` positions are counted;
// and the donor's every state and those predictions.
struct PatchCase {
    std::vector<int> sequence, donor;
    std::vector<int> gold;             // the answer's first `words` tokens
    std::vector<float> donor_states;   // (L + 1, donor.size(), C)
    std::vector<real> donor_logits;    // (words, V) at the donor's last `words` positions
    int words() const { return (int)gold.size(); }
};

// the gold target's tokens (then <eos>) of a prompt, or none where the tokens are not one of the
// task's prompts (a donor cut from a prompt whose first token is not the task's marker)
static std::vector<int> gold_tokens(const Run& r, const std::vector<int>& prompt) {
    const Vocab& vocab = r.data.vocab;
    Words words;
    for (int t : prompt) words.push_back(vocab.words[t]);
    std::vector<int> gold;
    try {
        int length = 0;
        for (const std::string& w : task_answer(find_task(r.config->task), vocab, join_words(words), &length, r.config->data))
            gold.push_back(vocab.id(w));
    } catch (const Error&) {
        return {};
    }
    gold.push_back(EOS_ID);
    return gold;
}

// the last forward's logits at its last `words` positions
static std::vector<real> last_logits(Model* m, int T, int words) {
    const real* rows = m->act(A_LOGITS) + (size_t)(T - words) * m->config.V;
    return std::vector<real>(rows, rows + (size_t)words * m->config.V);
}

// Test example i's case, or false where its donor's answer does not begin with its first `words`
// tokens (nothing then to compare)
static bool patch_case(Run* r, const Split& test, int i, int P, int words, PatchCase* pc) {
    const int* example = test.example(i);
    const int prompt_len = test.prompt_len[i];
    std::vector<int> donor_prompt = {example[0]};
    donor_prompt.insert(donor_prompt.end(), example + prompt_len - (P - 1), example + prompt_len);
    pc->gold.assign(example + prompt_len, example + std::min(prompt_len + words, test.example_len(i)));
    std::vector<int> donor_gold = gold_tokens(*r, donor_prompt);
    if (pc->words() < words || donor_gold.size() < (size_t)words || !std::equal(pc->gold.begin(), pc->gold.end(), donor_gold.begin()))
        return false;
    pc->sequence.assign(example, example + prompt_len + words - 1);
    pc->donor = donor_prompt;
    pc->donor.insert(pc->donor.end(), pc->gold.begin(), pc->gold.end() - 1);
    Model* m = &r->model;
    const int D = (int)pc->donor.size();
    model_forward(m, pc->donor.data(), nullptr, 1, D, NO_DROPOUT);
    pc->donor_states.clear();
    for (int s = 0; s <= m->config.L; s++)
        pc->donor_states.insert(pc->donor_states.end(), stream_state(m, s), stream_state(m, s) + (size_t)D * m->config.C);
    pc->donor_logits = last_logits(m, D, words);
    return true;
}

// x moved along the probe's direction until the probe reads `place` (probe, extend), or as far
// along the random direction (random, extend-random)
static void move_token(PatchKind kind, const LinearFit& probe, const std::vector<float>& direction, real* x, double place) {
    std::vector<float> moved(x, x + probe.w.size());
    double distance = move_to_reading(probe, moved.data(), place);
    bool along_probe = kind == PATCH_PROBE || kind == PATCH_EXTEND;
    for (size_t k = 0; k < moved.size(); k++) x[k] = along_probe ? moved[k] : x[k] + (real)(distance * direction[k]);
}

// The long example's residual stream (T, C) at state s edited by `kind` (every kind but none and donor)
static void edit_places(const PatchCase& pc, PatchKind kind, int s, const LinearFit& probe, const std::vector<float>& direction,
                        real* residual) {
    const int C = (int)probe.w.size(), D = (int)pc.donor.size(), T = (int)pc.sequence.size(), offset = T - D;
    if (kind == PATCH_EXTEND || kind == PATCH_EXTEND_RANDOM) {
        for (int t = 1; t < T; t++) move_token(kind, probe, direction, residual + (size_t)t * C, t);
        return;
    }
    const int first_query = D - pc.words();  // the donor's prompt's last token
    for (int d = 1; d < D; d++) {            // donor token d is the long example's token d + offset
        real* x = residual + (size_t)(d + offset) * C;
        const float* from = pc.donor_states.data() + ((size_t)s * D + d) * C;
        if (kind == PATCH_ALL || (kind == PATCH_KEYS && d < first_query)) std::copy(from, from + C, x);
        if (kind == PATCH_PROBE || kind == PATCH_RANDOM) move_token(kind, probe, direction, x, d);
    }
}

// the logits at the long example's last `words` positions with its stream edited entering layer s
// (L: leaving the last) by `kind` (none: as it is)
static std::vector<real> patched_logits(Model* m, const PatchCase& pc, PatchKind kind, int s, const LinearFit& probe,
                                        const std::vector<float>& direction) {
    const int T = (int)pc.sequence.size();
    if (kind != PATCH_NONE)
        m->edit_residual = [&](int layer, real* residual) {
            if (layer == s) edit_places(pc, kind, s, probe, direction, residual);
        };
    model_forward(m, pc.sequence.data(), nullptr, 1, T, NO_DROPOUT);
    m->edit_residual = nullptr;
    return last_logits(m, T, pc.words());
}

// whether every one of the counted positions' argmax is its gold token
static bool all_right(const std::vector<real>& logits, const std::vector<int>& gold, int V) {
    for (size_t k = 0; k < gold.size(); k++)
        if (argmax(logits.data() + k * V, V) != gold[k]) return false;
    return true;
}

struct PatchCounts {
    int lo = 0, hi = 0;                 // the test lengths counted
    long examples = 0, unmatched = 0;   // compared; left out, their donor's answer beginning otherwise
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

// training's longest prompt, the donors' length (from train itself: a small --valid-size can
// leave valid without training's longest length)
static int donor_length(const Split& train) {
    int P = 0;
    for (int i = 0; i < train.size(); i++) P = std::max(P, train.prompt_len[i]);
    return P;
}

// Edits the test examples whose prompt is longer than training's (of the first n) at every state
// and counts the answer's first `words` tokens right, by ranges of test lengths
static std::vector<PatchCounts> place_patch(Run* r, int n, int words, const std::vector<PatchCounts>& ranges) {
    Model* m = &r->model;
    const Split &valid = valid_split(*r), &test = test_split(*r);
    const int states = m->config.L + 1, V = m->config.V, P = donor_length(train_split(*r));
    std::vector<LinearFit> probes = fit_probes(m, valid, n, words);
    std::vector<float> direction = random_direction(m->config.C);
    std::vector<PatchCounts> counts = ranges;
    for (PatchCounts& c : counts) c.right.assign((size_t)states * NUM_PATCHES, 0);
    PatchCase pc;
    for (int i = 0; i < std::min(n, test.size()); i++) {
        PatchCounts* range = nullptr;
        for (PatchCounts& c : counts)
            if (test.length[i] >= c.lo && test.length[i] <= c.hi) range = &c;
        if (test.prompt_len[i] <= P || !range) continue;
        if (!patch_case(r, test, i, P, words, &pc)) {
            range->unmatched++;
            continue;
        }
        range->examples++;
        range->right[PATCH_DONOR] += all_right(pc.donor_logits, pc.gold, V);
        range->right[PATCH_NONE] += all_right(patched_logits(m, pc, PATCH_NONE, 0, probes[0], direction), pc.gold, V);
        for (int s = 0; s < states; s++)
            for (PatchKind kind : STATE_EDITS)
                range->right[(size_t)s * NUM_PATCHES + kind] += all_right(patched_logits(m, pc, kind, s, probes[s], direction), pc.gold, V);
    }
    return counts;
}

#ifdef PLACE_PATCH_MAIN
static void print_place_patch(const std::string& path, int n, int words) {
    RunConfig c;
    Run r(&c);
    load_run(&r, path);
    const LengthSplit& lengths = r.data.lengths;
    std::vector<PatchCounts> ranges;  // the test lengths in ranges of five
    for (int lo = lengths.train_max + 1; lo <= lengths.test_max; lo += 5)
        ranges.push_back(length_range(lo, std::min(lo + 4, lengths.test_max)));
    std::vector<PatchCounts> counts = place_patch(&r, n, words, ranges);
    long compared = 0, unmatched = 0;
    for (const PatchCounts& range : counts) compared += range.examples, unmatched += range.unmatched;
    if (compared == 0)
        fail("no test example to compare: of the first %d, %ld are longer than training and none has a donor whose answer begins with the same %d tokens",
             n, unmatched, words);
    std::string counted = words == 1 ? "first token" : format_text("first %d tokens (each after the gold before it)", words);
    printf("%s: the answer's %s right, of the test examples longer than training's, edited entering each layer: toward the donor (all, keys, probe, random) or to each token's own place (extend)\n",
           path.c_str(), counted.c_str());
    if (unmatched) printf("(left out: %ld examples whose donor's answer begins otherwise)\n", unmatched);
    printf("%-30s", "state, edit");
    for (const PatchCounts& range : counts)
        printf("  %-20s", format_text("lengths %d-%d (%ld)", range.lo, range.hi, range.examples).c_str());
    printf("\n");
    const int states = r.model.config.L + 1;
    for (int s = -1; s < states; s++)
        for (int kind = 0; kind < NUM_PATCHES; kind++) {
            if ((s < 0) != (kind == PATCH_NONE || kind == PATCH_DONOR)) continue;  // none and donor edit no state
            std::string state = s < 0 ? "-" : s < states - 1 ? "entering layer " + std::to_string(s) : "leaving the last";
            printf("%-16s %-13s", state.c_str(), PATCH_NAMES[kind]);
            for (const PatchCounts& range : counts) {
                long right = range.right[(size_t)std::max(s, 0) * NUM_PATCHES + kind];
                printf("  %-20s", range.examples ? format_text("%.3f", (double)right / range.examples).c_str() : "-");  // "-": no example
            }
            printf("\n");
        }
}

int main(int argc, char** argv) {
    const char* usage = "dev/place_patch MODEL.bin [EXAMPLES [WORDS]]\n"
                        "  a reverse model's longer test prompts patched, layer by layer, with a training-length donor's\n"
                        "  residual stream (EXAMPLES of them, default 1000; the answer's first WORDS, default 1)";
    if (help_asked(argc, argv) || argc < 2 || argc > 4) return print_usage(usage, help_asked(argc, argv));
    try {
        int n = 1000, words = 1;
        if (argc >= 3) parse_value(Flag{"EXAMPLES", FLAG_INT, &n, false, ANY, ""}, argv[2]);
        if (argc == 4) parse_value(Flag{"WORDS", FLAG_INT, &words, false, ANY, ""}, argv[3]);
        if (n < 1) fail("EXAMPLES must be at least 1, not %d", n);
        if (words < 1) fail("WORDS must be at least 1, not %d", words);
        print_place_patch(argv[1], n, words);
    } catch (const Error& e) {
        fprintf(stderr, "dev/place_patch: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
#endif
