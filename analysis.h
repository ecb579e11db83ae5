/*
 analysis.h: what a trained model attends to, and the paper's two measures of it.

 Provides:
   - AttentionDump: the attention probabilities of chosen examples, every layer and head (and
     for CoPE the positions each key sits at), with the file layout `./train --load FILE
     --dump-attention OUT` writes and the dev/ tools read (README, "Analyses")
   - attention_heatmaps_svg(): one example's heads as heatmaps, layers in rows, heads in columns
   - the §5.2 distance between two models' attention on the same examples: per layer, the
     smallest divergence over head pairs, averaged per example length (Jensen-Shannon by
     default; the paper code's variant on request)
   - the §6.1 attended-distance histogram: where each head's strongest key lies, relative to
     the query, over the answer's positions
   - where each head looks, by the word the model must say next
   - where the answer's first query looks, by distance (or place) and example length; and layer
     0's scores against distance, read from its probabilities
   - what CoPE counts: each head's mean gate per key word, and how closely its position of the
     first key follows the count of one word, or of every token, over the queries that predict
     the answer; and its table row by row (which rows training left at zero, and where the rows
     alternate)
   - where a token is, as the residual stream says: a linear probe of each prompt token's
     position from the state entering each layer, fitted on in-distribution examples and read
     past them (Theorem 1 asks whether a model writes the position; the probe, how far it does)

 Attention here is post-softmax probabilities, teacher-forced on the gold sequence (prompt,
 target, <eos>), without dropout. Row t of a head holds keys 0..t (causal); the rest is 0. The
 residual stream is the model's activations on that pass, before each layer's norm.
*/
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>
#include <sys/stat.h>

#include "common.h"
#include "report.h"

// ----------------------------------------------------------------------------
// the dump

static const int32_t ATTENTION_DUMP_MAGIC = 20261124;
// 2 added the words and CoPE's positions and table, 3 the residual stream; 1 and 2 still read
static const int32_t ATTENTION_DUMP_VERSION = 3;
// the most words a dump's vocabulary may have, and a dump without words the largest token + 1:
// a model's own bound on its vocabulary (MAX_DIM in model.h), since some analyses keep a count
// or a sum per word
static const int32_t MAX_DUMP_WORDS = 1 << 16;

// an example's split, as SplitKind (tasks.h, which the dev/ tools do not include) numbers it
static const int DUMP_VALID = 1, DUMP_TEST = 2;

struct AttentionExample {
    int split = 0;       // DUMP_VALID or DUMP_TEST
    int index = 0;       // the example's index in its split
    int length = 0;      // λ
    int prompt_len = 0;  // tokens before the target: the answer's first token is at prompt_len
    int T = 0;           // tokens: prompt, target, <eos>
    std::vector<int> tokens;
    std::vector<float> probs;      // (L, NH, T, T)
    std::vector<float> positions;  // (L, NH, T, T): CoPE's p_tj, where query t sees key j; empty for other PEs
    std::vector<float> states;     // (L + 1, T, C): the residual stream entering each layer, then leaving the last; empty without

    const float* row(int NH, int layer, int head, int t) const { return probs.data() + (((size_t)layer * NH + head) * T + t) * T; }
    const float* position_row(int NH, int layer, int head, int t) const {
        return positions.data() + (((size_t)layer * NH + head) * T + t) * T;
    }
    // token t's residual stream where state s is: 0 entering layer 0 (the embedding), s after layer s - 1
    const float* state(int C, int s, int t) const { return states.data() + ((size_t)s * T + t) * C; }
};

struct AttentionDump {
    int L = 0, NH = 0;
    int C = 0;                   // the residual stream's width, where every example holds its states (version 3); 0: none
    bool has_positions = false;  // every example holds CoPE's positions, and the dump CoPE's table
    Words words;                 // token id -> word (empty in a version 1 dump)
    // CoPE's table e, the rows the positions read: one for every layer, or one per layer (--pe-per-layer)
    int table_copies = 0, table_rows = 0, table_width = 0;
    std::vector<float> table;  // (copies, rows, width)
    std::vector<AttentionExample> examples;

    const float* table_row(int copy, int row) const { return table.data() + ((size_t)copy * table_rows + row) * table_width; }
};

// Layout, little-endian: int32 magic, version, L, NH, number of examples, number of words,
// has_positions (0 or 1), C (0: no states); each word as int32 byte count and its bytes; with
// has_positions, int32 table copies, rows, width and the table's copies·rows·width float32;
// then per example int32 split, index, λ, prompt_len, T, T tokens, L·NH·T·T float32
// probabilities, with has_positions L·NH·T·T float32 positions, and with C > 0 (L + 1)·T·C
// float32 states. (Version 2 had no C nor states; version 1 no words, positions or table either,
// nor the header fields that count them.)
// Written whole or not at all (FILE.tmp, then renamed over FILE): a dump that exists is complete,
// so a script may keep one and use it again. A path that is not a file (/dev/null, a pipe) is
// written as it is: a rename would put a file in its place.
inline void write_attention_dump(const std::string& path, const AttentionDump& d) {
    struct stat st;
    bool special = stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
    std::string tmp = special ? path : path + ".tmp";
    FILE* f = fopen(tmp.c_str(), "wb");
    if (!f) fail("can not write %s: %s", path.c_str(), strerror(errno));
    auto ints = [&](std::vector<int32_t> v) { return fwrite(v.data(), 4, v.size(), f) == v.size(); };
    auto floats = [&](const std::vector<float>& v) { return fwrite(v.data(), 4, v.size(), f) == v.size(); };
    bool written = ints({ATTENTION_DUMP_MAGIC, ATTENTION_DUMP_VERSION, d.L, d.NH, (int32_t)d.examples.size(), (int32_t)d.words.size(), d.has_positions,
                         d.C});
    for (const std::string& w : d.words) written = written && ints({(int32_t)w.size()}) && fwrite(w.data(), 1, w.size(), f) == w.size();
    if (d.has_positions) written = written && ints({d.table_copies, d.table_rows, d.table_width}) && floats(d.table);
    for (const AttentionExample& e : d.examples)
        written = written && ints({e.split, e.index, e.length, e.prompt_len, e.T}) && ints(std::vector<int32_t>(e.tokens.begin(), e.tokens.end())) &&
                  floats(e.probs) && (!d.has_positions || floats(e.positions)) && (d.C == 0 || floats(e.states));
    written = written && fflush(f) == 0;
    int error = errno;
    if (fclose(f) != 0 || !written || (!special && rename(tmp.c_str(), path.c_str()) != 0)) {
        error = written ? errno : error;
        if (!special) remove(tmp.c_str());
        fail("can not write %s: %s", path.c_str(), strerror(error));
    }
}

inline AttentionDump read_attention_dump(const std::string& path) {
    require_regular_file(path, "an attention dump");
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) fail("can not open %s: %s", path.c_str(), strerror(errno));
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    // a damaged size field could ask for more memory than there is: nothing is allocated for
    // more bytes than the file has left
    auto need = [&](size_t bytes) {
        if (bytes > (size_t)(size - ftell(f))) fclose(f), fail("%s is truncated", path.c_str());
    };
    auto ints = [&](size_t n) {
        need(4 * n);
        std::vector<int32_t> v(n);
        if (fread(v.data(), 4, n, f) != n) fclose(f), fail("%s is truncated", path.c_str());
        return v;
    };
    auto floats = [&](size_t n) {
        need(4 * n);
        std::vector<float> v(n);
        if (fread(v.data(), 4, n, f) != n) fclose(f), fail("%s is truncated", path.c_str());
        return v;
    };
    std::vector<int32_t> h = ints(5);
    if (h[0] != ATTENTION_DUMP_MAGIC || h[1] < 1 || h[1] > ATTENTION_DUMP_VERSION)
        fclose(f), fail("%s is not an attention dump of version 1 to %d", path.c_str(), ATTENTION_DUMP_VERSION);
    std::vector<int32_t> more = h[1] >= 2 ? ints(2) : std::vector<int32_t>{0, 0};  // words, has_positions
    AttentionDump d;
    d.L = h[2], d.NH = h[3], d.has_positions = more[1] == 1, d.C = h[1] >= 3 ? ints(1)[0] : 0;
    if (d.L < 1 || d.NH < 1 || d.L > 4096 || d.NH > 4096 || h[4] < 0 || more[0] < 0 || more[0] > MAX_DUMP_WORDS || more[1] < 0 || more[1] > 1 ||
        d.C < 0 || d.C > 65536)
        fclose(f), fail("%s has an impossible header", path.c_str());
    for (int i = 0; i < more[0]; i++) {
        int32_t bytes = ints(1)[0];
        if (bytes < 0 || bytes > 4096) fclose(f), fail("%s: word %d has an impossible size", path.c_str(), i);
        need(bytes);
        std::string w(bytes, '\0');
        if (fread(&w[0], 1, bytes, f) != (size_t)bytes) fclose(f), fail("%s is truncated", path.c_str());
        d.words.push_back(w);
    }
    if (d.has_positions) {
        std::vector<int32_t> shape = ints(3);
        d.table_copies = shape[0], d.table_rows = shape[1], d.table_width = shape[2];
        if (d.table_copies < 1 || d.table_copies > d.L || d.table_rows < 1 || d.table_rows > 65536 || d.table_width < 1 || d.table_width > 65536)
            fclose(f), fail("%s has an impossible CoPE table", path.c_str());
        d.table = floats((size_t)d.table_copies * d.table_rows * d.table_width);
    }
    for (int i = 0; i < h[4]; i++) {
        std::vector<int32_t> e = ints(5);
        AttentionExample x;
        x.split = e[0], x.index = e[1], x.length = e[2], x.prompt_len = e[3], x.T = e[4];
        if (x.T < 1 || x.T > 65536 || x.prompt_len < 0 || x.prompt_len > x.T || x.split < 0 || x.split > 2)
            fclose(f), fail("%s: example %d has an impossible size or split", path.c_str(), i);
        std::vector<int32_t> tokens = ints(x.T);
        x.tokens.assign(tokens.begin(), tokens.end());
        int words = d.words.empty() ? MAX_DUMP_WORDS : (int)d.words.size();
        for (int token : x.tokens)
            if (token < 0 || token >= words) fclose(f), fail("%s: example %d has token %d, not a word", path.c_str(), i, token);
        x.probs = floats((size_t)d.L * d.NH * x.T * x.T);
        if (d.has_positions) x.positions = floats(x.probs.size());
        if (d.C > 0) x.states = floats((size_t)(d.L + 1) * x.T * d.C);
        d.examples.push_back(std::move(x));
    }
    long end = ftell(f);
    fclose(f);
    if (end != size) fail("%s has %ld bytes after its last example: not a dump as written", path.c_str(), size - end);
    return d;
}

// ----------------------------------------------------------------------------
// heatmaps

// One example's attention: a grid of heatmaps, a row of heads per layer; each has queries down
// and keys across, white 0 to black 1. Examples of up to 48 tokens get their words on both axes.
inline std::string attention_heatmaps_svg(const AttentionExample& e, int L, int NH, const std::vector<std::string>& words, const std::string& title) {
    bool labelled = e.T <= 48;
    double cell = std::max(2.0, std::min(10.0, 400.0 / e.T)), side = cell * e.T, margin = labelled ? 70 : 24, gap = 16;
    double width = NH * (side + margin + gap), height = 30 + L * (side + margin + gap);
    std::string s;
    char buf[512];
    snprintf(buf, sizeof(buf), "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\">\n", width, height);
    s += buf;
    s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"8\" y=\"18\" font-size=\"13\">" + xml_escape(title) + "</text>\n";
    for (int l = 0; l < L; l++)
        for (int h = 0; h < NH; h++) {
            double x0 = h * (side + margin + gap) + margin, y0 = 30 + l * (side + margin + gap) + margin;
            snprintf(buf, sizeof(buf), "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">layer %d, head %d</text>\n", x0, y0 - (labelled ? 56 : 6), l, h);
            s += buf;
            for (int t = 0; t < e.T; t++)
                for (int j = 0; j <= t; j++) {
                    int shade = (int)lround(255 * (1 - std::min(1.0f, e.row(NH, l, h, t)[j])));
                    if (shade == 255) continue;  // white on white
                    snprintf(buf, sizeof(buf), "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"rgb(%d,%d,%d)\"/>\n", x0 + j * cell,
                             y0 + t * cell, cell, cell, shade, shade, shade);
                    s += buf;
                }
            snprintf(buf, sizeof(buf), "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n", x0, y0, side, side);
            s += buf;
            if (!labelled) continue;
            for (int t = 0; t < e.T; t++) {
                std::string w = xml_escape(t < (int)words.size() ? words[t] : "?");
                snprintf(buf, sizeof(buf), "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"end\">%s</text>\n", x0 - 2, y0 + (t + 0.8) * cell,
                         cell * 0.9, w.c_str());
                s += buf;
                snprintf(buf, sizeof(buf), "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" font-size=\"%.1f\">%s</text>\n", x0 + (t + 0.8) * cell,
                         y0 - 2, cell * 0.9, w.c_str());
                s += buf;
            }
        }
    return s + "</svg>\n";
}

// ----------------------------------------------------------------------------
// §5.2: how far apart two models' attention patterns are

// Divergence between two distributions p and q over n keys, natural log. Textbook Jensen-Shannon:
// ½ KL(p‖m) + ½ KL(q‖m) with m = (p + q) / 2; bounded by ln 2. The paper's code computed
// ½ KL(m‖p) + ½ KL(m‖q) instead (torch's KLDivLoss argument order): `paper_variant`.
inline double js_divergence(const float* p, const float* q, int n, bool paper_variant) {
    double total = 0;
    for (int k = 0; k < n; k++) {
        double a = p[k], b = q[k], m = (a + b) / 2;
        if (m <= 0) continue;
        if (!paper_variant) total += (a > 0 ? a * log(a / m) : 0) + (b > 0 ? b * log(b / m) : 0);
        else total += (a > 0 ? m * log(m / a) : INFINITY) + (b > 0 ? m * log(m / b) : INFINITY);
    }
    return total / 2;
}

// D_AT of two heads on one example: the mean over query positions t of the divergence of their
// rows, each restricted to keys 0..t
inline double head_distance(const AttentionExample& a, int NH_a, int layer_a, int head_a, const AttentionExample& b, int NH_b, int layer_b,
                            int head_b, bool paper_variant) {
    double total = 0;
    for (int t = 0; t < a.T; t++) total += js_divergence(a.row(NH_a, layer_a, head_a, t), b.row(NH_b, layer_b, head_b, t), t + 1, paper_variant);
    return total / a.T;
}

// The distance between two models on the same examples, per example length: for each example
// and layer, the smallest D_AT over all pairs (head of a, head of b); then the mean over layers
// and over the examples of that length. The paper's code paired only heads i < j of the two
// models (66 of 144 pairs with 12 heads); this pairs all, as its text says.
inline std::map<int, double> attention_distance(const AttentionDump& a, const AttentionDump& b, bool paper_variant) {
    if (a.L != b.L || a.examples.size() != b.examples.size()) fail("the two dumps hold different layers or examples");
    std::map<int, double> sum;
    std::map<int, int> count;
    for (size_t e = 0; e < a.examples.size(); e++) {
        const AttentionExample &x = a.examples[e], &y = b.examples[e];
        if (x.tokens != y.tokens) fail("example %zu differs between the dumps: were they dumped from the same run's data?", e);
        for (int l = 0; l < a.L; l++) {
            double best = INFINITY;
            for (int i = 0; i < a.NH; i++)
                for (int j = 0; j < b.NH; j++) best = std::min(best, head_distance(x, a.NH, l, i, y, b.NH, l, j, paper_variant));
            sum[x.length] += best, count[x.length]++;
        }
    }
    for (auto& kv : sum) kv.second /= count[kv.first];
    return sum;
}

// ----------------------------------------------------------------------------
// §6.1: where the heads look

// For every query t in the output region (the target's tokens and <eos>: t >= prompt_len, as
// the paper's §6.1 took the output's positions) of the examples longer than min_length, in
// every layer and head: the key k* with the largest probability (the key with the largest
// score, PE bias included: softmax keeps the order) and its normalised distance
// (t - k*) / (t + 1), counted in `bins` bins of equal width over [0, 1]. Keys tied for the
// largest probability share their query's count equally: ties are exact wherever scores
// depend on tokens alone (NoPE's first layer over a word the prompt repeats), and an argmax
// would hand each to the farthest key.
inline std::vector<double> attended_distance_histogram(const AttentionDump& d, int min_length, int bins) {
    std::vector<double> histogram(bins, 0.0);
    for (const AttentionExample& e : d.examples) {
        if (e.length <= min_length) continue;
        for (int t = e.prompt_len; t < e.T; t++)
            for (int l = 0; l < d.L; l++)
                for (int h = 0; h < d.NH; h++) {
                    const float* row = e.row(d.NH, l, h, t);
                    float largest = *std::max_element(row, row + t + 1);
                    long tied = std::count(row, row + t + 1, largest);
                    for (int k = 0; k <= t; k++)
                        // bin floor((t - k) / (t + 1) * bins) in integers: in floating point a distance
                        // on a bin's lower edge (0.29 at t = 99) could round into the bin below
                        if (row[k] == largest) histogram[std::min(bins - 1, (int)((long long)(t - k) * bins / (t + 1)))] += 1.0 / tied;
                }
    }
    return histogram;
}

// ----------------------------------------------------------------------------
// where the heads look when the model must say a given word, or the answer's k-th

// The queries that predict the answer's words: t = prompt_len - 1 .. T - 3, each predicting the
// gold token at t + 1 (the one before <eos> is left out: what a head does there need not be
// the answer's computation, and with one-word answers it would be half the queries).
inline int first_answer_query(const AttentionExample& e) { return std::max(0, e.prompt_len - 1); }
inline int last_answer_query(const AttentionExample& e) { return e.T - 3; }

// the number of words a dump's tokens come from: its vocabulary, or enough for its largest token
inline int dump_vocab_size(const AttentionDump& d) {
    int V = (int)d.words.size();
    for (const AttentionExample& e : d.examples) V = std::max(V, *std::max_element(e.tokens.begin(), e.tokens.end()) + 1);
    return V;
}

// What groups the answer's queries: the word each must predict, or the index in the answer of
// that word (0: the answer's first). A head whose mass moves with the word carries it; one whose
// mass moves with the index, whatever the words, counts how far into the answer the model is.
enum QueryGroup { BY_WORD, BY_INDEX };

// One head's attention over those queries (of the examples of one split, or of all: split 0),
// grouped by word or by index: for each group, how many queries, and the attention mass on the
// keys holding each word, summed (divide by the queries for the mean). Only the words a group's
// keys hold get an entry, so the tables grow with the dump, not with its vocabulary.
struct AttendsByQuery {
    std::map<int, long> queries;                   // group -> queries in it
    std::map<int, std::map<int, double>> mass;     // group -> key word -> summed probability
};

inline AttendsByQuery attends_by_query(const AttentionDump& d, int layer, int head, int split, QueryGroup by) {
    AttendsByQuery a;
    for (const AttentionExample& e : d.examples) {
        if (split && e.split != split) continue;
        for (int t = first_answer_query(e); t <= last_answer_query(e); t++) {
            int group = by == BY_WORD ? e.tokens[t + 1] : t - first_answer_query(e);
            std::map<int, double>& mass = a.mass[group];
            a.queries[group]++;
            const float* row = e.row(d.NH, layer, head, t);
            for (int j = 0; j <= t; j++) mass[e.tokens[j]] += row[j];
        }
    }
    return a;
}

// ----------------------------------------------------------------------------
// where the answer's first query looks as the examples grow

// the example lengths lo..hi
struct LengthRange {
    int lo, hi;
    bool holds(int length) const { return lo <= length && length <= hi; }
};

// Bins given by their rising edges, edges[0] = 0: bin b holds the keys whose distance t - k from
// the query (or, counted from the first key, position k) is in edges[b] .. edges[b + 1] - 1, the
// last bin everything from its edge on.
enum KeyMeasure { KEY_DISTANCE, KEY_POSITION };

inline int key_bin(const std::vector<int>& edges, int value) {
    return (int)(std::upper_bound(edges.begin(), edges.end(), value) - edges.begin()) - 1;
}

// In every layer and head, the attention mass of the query that predicts the answer's first word
// (first_answer_query) in each bin of keys, summed over the examples whose λ is in each range. A
// head that read a key at some distance (or place) in training and spreads its mass elsewhere as
// the examples grow has lost what it read; where the mass goes says what took it.
struct AttentionSpan {
    int L = 0, NH = 0, bins = 0;
    std::vector<long> examples;  // range -> examples in it
    std::vector<double> mass;    // (range, L, NH, bin), summed over the range's examples

    double mean(int range, int layer, int head, int bin) const {
        return examples[range] ? mass[(((size_t)range * L + layer) * NH + head) * bins + bin] / examples[range] : NAN;
    }
};

inline AttentionSpan attention_span(const AttentionDump& d, const std::vector<LengthRange>& ranges, const std::vector<int>& edges, KeyMeasure measure) {
    AttentionSpan s;
    s.L = d.L, s.NH = d.NH, s.bins = (int)edges.size();
    s.examples.assign(ranges.size(), 0);
    s.mass.assign(ranges.size() * d.L * d.NH * s.bins, 0);
    for (const AttentionExample& e : d.examples)
        for (size_t r = 0; r < ranges.size(); r++) {
            if (!ranges[r].holds(e.length)) continue;
            s.examples[r]++;
            int t = first_answer_query(e);
            for (int l = 0; l < d.L; l++)
                for (int h = 0; h < d.NH; h++) {
                    const float* row = e.row(d.NH, l, h, t);
                    double* mass = &s.mass[((r * d.L + l) * d.NH + h) * s.bins];
                    for (int k = 0; k <= t; k++) mass[key_bin(edges, measure == KEY_DISTANCE ? t - k : k)] += row[k];
                }
        }
    return s;
}

// ----------------------------------------------------------------------------
// layer 0's scores against distance, read from its probabilities

// Layer 0's queries and keys are functions of their tokens alone where the PE adds nothing to the
// embeddings (every PE but ape, ape_learned and Abacus), and its bias or rotation a function of
// the distance t - k alone (every PE but CoPE, whose positions count gates, and FIRE past its
// threshold L, whose distances are then scaled by the query's position; and no model under
// --position-coupling or dumped with --eval-positions drawn, whose positions are not the tokens'). Then within one row p_k = exp(s_k) / Z, and
//     log p_k - log p_t = s(word_k, t - k) - s(word_t, 0):
// the score a key of that word gets at that distance, PE bias included, up to a constant that
// is the query word's own: exact, and read from the probabilities alone. Taken from the query
// that predicts the answer's first word, whose word is the same in every example of most tasks
// ([SEP]), the points of every example lie on one curve per head and key word; how far the points
// of one (word, distance) spread across examples checks that premise (float32 probabilities
// leave about 1e-5). A probability below FLT_MIN, the smallest float with all its digits, gives
// no point (one that underflowed to a subnormal or to 0 no longer holds its score).
struct ScoreTally {
    long points = 0;
    double sum = 0, lowest = INFINITY, highest = -INFINITY;

    void add(double score) { points++, sum += score, lowest = std::min(lowest, score), highest = std::max(highest, score); }
    double mean() const { return sum / points; }
    double spread() const { return highest - lowest; }
};

// (head, key word, distance) -> the points of the examples of length `length` (0: of every length)
typedef std::map<std::tuple<int, int, int>, ScoreTally> ScoreCurves;

inline ScoreCurves layer0_scores(const AttentionDump& d, int length) {
    ScoreCurves curves;
    for (const AttentionExample& e : d.examples) {
        if (length && e.length != length) continue;
        int t = first_answer_query(e);
        for (int h = 0; h < d.NH; h++) {
            const float* row = e.row(d.NH, 0, h, t);
            for (int k = 0; k <= t; k++)
                if (row[k] >= FLT_MIN && row[t] >= FLT_MIN) curves[{h, e.tokens[k], t - k}].add(log((double)row[k]) - log((double)row[t]));
        }
    }
    return curves;
}

// ----------------------------------------------------------------------------
// what CoPE counts

// The least-squares line of y on x and Pearson's r, from points added one at a time
struct LineFit {
    double n = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;

    void add(double x, double y) { n++, sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y; }
    // a line needs x to vary, and r needs y to as well
    bool defined() const { return n * sxx - sx * sx > 0 && n * syy - sy * sy > 0; }
    double r() const { return (n * sxy - sx * sy) / sqrt((n * sxx - sx * sx) * (n * syy - sy * sy)); }
    double slope() const { return (n * sxy - sx * sy) / (n * sxx - sx * sx); }
    double intercept() const { return (sy - slope() * sx) / n; }
};

// One head of a CoPE model over the queries that predict the answer's words (first_answer_query
// to last_answer_query). Key j's gate is the step
// its position takes, g_tj = p_tj - p_t,j+1 (p_t,t+1 = 0), so a head that counts a word opens its
// gates on that word alone, and its position of the first key, p_t0, is that word's count in keys
// 0..t; a head whose gates open alike on every word counts tokens, p_t0 following t + 1.
struct CopeHead {
    std::vector<double> gate_sum;  // token id -> the gates of its keys, summed
    std::vector<long> keys;        // token id -> how many (query, key) pairs hold it
    std::vector<LineFit> by_word;  // token id -> p_t0 against that word's count in keys 0..t
    LineFit by_tokens;             // p_t0 against t + 1, the count of every key
    int counted = -1;              // the word whose count p_t0 follows best (largest r; -1: no count varies)
    double p_max[3] = {0, 0, 0};   // the largest p_t0 in each split (index 1 valid, 2 test)
    std::map<int, double> p_max_at_length;  // λ -> the largest p_t0 over the examples of that length

    double mean_gate(int token) const { return keys[token] ? gate_sum[token] / keys[token] : 0; }
};

// CoPE's analyses read a dump's positions: one without them is refused, named as `name`
inline void require_cope_positions(const AttentionDump& d, const std::string& name = "the dump") {
    if (!d.has_positions) fail("%s holds no CoPE positions (it was not dumped from a --pe cope model)", name.c_str());
}

inline CopeHead cope_head(const AttentionDump& d, int layer, int head) {
    require_cope_positions(d);
    int V = dump_vocab_size(d);
    CopeHead c;
    c.gate_sum.assign(V, 0), c.keys.assign(V, 0), c.by_word.assign(V, LineFit{});
    for (const AttentionExample& e : d.examples)
        for (int t = first_answer_query(e); t <= last_answer_query(e); t++) {
            const float* p = e.position_row(d.NH, layer, head, t);
            std::vector<int> count(V, 0);
            for (int j = 0; j <= t; j++) {
                c.gate_sum[e.tokens[j]] += p[j] - (j < t ? p[j + 1] : 0.0f);
                c.keys[e.tokens[j]]++;
                count[e.tokens[j]]++;
            }
            for (int w = 0; w < V; w++) c.by_word[w].add(count[w], p[0]);
            c.by_tokens.add(t + 1, p[0]);
            c.p_max[e.split] = std::max(c.p_max[e.split], (double)p[0]);
            c.p_max_at_length[e.length] = std::max(c.p_max_at_length[e.length], (double)p[0]);
        }
    for (int w = 0; w < V; w++)  // a count (or a position) that never varies says nothing
        if (c.by_word[w].defined() && (c.counted < 0 || c.by_word[w].r() > c.by_word[c.counted].r())) c.counted = w;
    return c;
}

// CoPE's table row by row: each row's norm, and its cosine with the row before (0 where either
// is zero). A row training never read keeps its zero init exactly, since AdamW's decay of a zero
// is zero; rows whose sign flips from one to the next give a head that reads them the parity
// of what it counts.
struct CopeTableRow {
    double norm = 0, cos_previous = 0;
};

inline std::vector<CopeTableRow> cope_table_rows(const AttentionDump& d, int copy) {
    std::vector<CopeTableRow> rows(d.table_rows);
    for (int m = 0; m < d.table_rows; m++) {
        const float* e = d.table_row(copy, m);
        double dot_previous = 0, square = 0;
        for (int x = 0; x < d.table_width; x++) square += (double)e[x] * e[x];
        rows[m].norm = sqrt(square);
        if (m == 0) continue;
        const float* before = d.table_row(copy, m - 1);
        for (int x = 0; x < d.table_width; x++) dot_previous += (double)e[x] * before[x];
        if (rows[m].norm > 0 && rows[m - 1].norm > 0) rows[m].cos_previous = dot_previous / (rows[m].norm * rows[m - 1].norm);
    }
    return rows;
}

// ----------------------------------------------------------------------------
// where a token is: a linear probe of the residual stream

// y ≈ w·x + b by least squares over rows of d features, with a ridge of 1e-6 of the features'
// mean variance: enough to keep a feature that never varies from making the system singular,
// far too little to bend the fit. Solved by Cholesky on the centred normal equations.
struct LinearFit {
    std::vector<double> w;
    double b = 0;

    double predict(const float* x) const {
        double y = b;
        for (size_t k = 0; k < w.size(); k++) y += w[k] * x[k];
        return y;
    }
};

inline LinearFit least_squares(const std::vector<const float*>& rows, const std::vector<double>& targets, int d) {
    size_t n = rows.size();
    if (n == 0 || targets.size() != n) fail("internal error: least_squares of %zu rows and %zu targets", n, targets.size());
    std::vector<double> mean_x(d, 0), A((size_t)d * d, 0), rhs(d, 0);
    double mean_y = 0;
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < d; k++) mean_x[k] += rows[i][k] / (double)n;
        mean_y += targets[i] / n;
    }
    std::vector<double> x(d);
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < d; k++) x[k] = rows[i][k] - mean_x[k];
        for (int j = 0; j < d; j++) {
            rhs[j] += x[j] * (targets[i] - mean_y);
            for (int k = 0; k <= j; k++) A[(size_t)j * d + k] += x[j] * x[k];
        }
    }
    double trace = 0;
    for (int k = 0; k < d; k++) trace += A[(size_t)k * d + k];
    double ridge = std::max(1e-6 * trace / d, 1e-12);
    for (int k = 0; k < d; k++) A[(size_t)k * d + k] += ridge;
    // A = G Gᵀ (G lower, kept in A's lower triangle), then G z = rhs and Gᵀ w = z
    for (int j = 0; j < d; j++) {
        for (int k = 0; k < j; k++) {
            double sum = A[(size_t)j * d + k];
            for (int m = 0; m < k; m++) sum -= A[(size_t)j * d + m] * A[(size_t)k * d + m];
            A[(size_t)j * d + k] = sum / A[(size_t)k * d + k];
        }
        double pivot = A[(size_t)j * d + j];
        for (int m = 0; m < j; m++) pivot -= A[(size_t)j * d + m] * A[(size_t)j * d + m];
        if (!(pivot > 0)) fail("the probe's features are not finite");
        A[(size_t)j * d + j] = sqrt(pivot);
    }
    LinearFit fit;
    fit.w = rhs;
    for (int j = 0; j < d; j++) {
        for (int k = 0; k < j; k++) fit.w[j] -= A[(size_t)j * d + k] * fit.w[k];
        fit.w[j] /= A[(size_t)j * d + j];
    }
    for (int j = d - 1; j >= 0; j--) {
        for (int k = j + 1; k < d; k++) fit.w[j] -= A[(size_t)k * d + j] * fit.w[k];
        fit.w[j] /= A[(size_t)j * d + j];
    }
    fit.b = mean_y;
    for (int k = 0; k < d; k++) fit.b -= fit.w[k] * mean_x[k];
    return fit;
}

// A probe of the prompt tokens' positions from one state of the residual stream: fitted to
// every other example of one split (the first, third, ...), read on the examples between them
// (held out) and on the other split, by the token's position. Fitted to valid it asks whether
// the code of positions training made reads on past them; fitted to test, whether the
// positions past training are in the state at all, however coded.
struct ProbeTally {
    long n = 0;
    double prediction = 0, error = 0;  // sums of the prediction and of its |error|
};

struct PositionProbe {
    LinearFit fit;
    long fitted = 0;            // tokens fitted
    int longest_valid = -1;     // the last position of valid's prompts: training's positions end there
    std::map<int, ProbeTally> by_position[3];  // [DUMP_VALID], [DUMP_TEST]: each token read, not fitted

    // the mean |error| over the split's positions in [lo, hi] (NaN where there are none)
    double error(int split, int lo, int hi) const {
        ProbeTally sum;
        for (const auto& [t, tally] : by_position[split])
            if (t >= lo && t <= hi) sum.n += tally.n, sum.error += tally.error;
        return sum.n ? sum.error / sum.n : NAN;
    }
};

inline PositionProbe position_probe(const AttentionDump& d, int state, int fit_split = DUMP_VALID) {
    if (d.C == 0) fail("the dump holds no residual stream (it was written before version 3)");
    if (state < 0 || state > d.L) fail("internal error: state %d of a model of %d layers", state, d.L);
    PositionProbe probe;
    std::vector<const float*> rows;
    std::vector<double> positions;
    std::vector<const AttentionExample*> read;  // the examples not fitted
    int seen = 0;
    for (const AttentionExample& e : d.examples) {
        if (e.split == DUMP_VALID) probe.longest_valid = std::max(probe.longest_valid, e.prompt_len - 1);
        if (e.split == fit_split && seen++ % 2 == 0)
            for (int t = 0; t < e.prompt_len; t++) rows.push_back(e.state(d.C, state, t)), positions.push_back(t);
        else if (e.split == DUMP_VALID || e.split == DUMP_TEST) read.push_back(&e);
    }
    if (rows.size() < 2) fail("the probe needs %s examples to fit: the dump has %d", fit_split == DUMP_VALID ? "valid" : "test", seen);
    // no more equations than unknowns (C weights and a bias): least squares would fit any
    // positions exactly, and its errors on the rest would read as a finding
    if ((int)rows.size() <= d.C + 1)
        fail("the probe fits %d weights and a bias to %zu prompt tokens: too few (a larger --dump-per-length)", d.C, rows.size());
    probe.fit = least_squares(rows, positions, d.C);
    probe.fitted = (long)rows.size();
    for (const AttentionExample* e : read)
        for (int t = 0; t < e->prompt_len; t++) {
            double y = probe.fit.predict(e->state(d.C, state, t));
            ProbeTally& tally = probe.by_position[e->split][t];
            tally.n++, tally.prediction += y, tally.error += fabs(y - t);
        }
    return probe;
}
