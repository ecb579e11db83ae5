/*
 dev/attention.cpp: the paper's two analyses of attention, on dumps `./train --load CHECKPOINT
 --dump-attention FILE` wrote (analysis.h has the measures and the file layout).

   dev/attention distance --out DIR REFERENCE.bin LABEL=DUMP.bin [LABEL=DUMP.bin ...] [--paper-jsd]
       §5.2: how far each model's attention is from the reference model's, per example length:
       per layer the closest pair of heads (Jensen-Shannon divergence, natural log, mean over
       query positions), averaged over layers and examples. The paper compared NoPE (the
       reference) with each PE, and with NoPE of another seed. Writes DIR/distance.tsv and
       DIR/distance.svg. --paper-jsd: the paper code's variant, ½KL(m‖p) + ½KL(m‖q).

   dev/attention histogram --out DIR LABEL=DUMP.bin [...] [--min-length N] [--bins N]
       §6.1: where each head's strongest key lies, (t - k*) / (t + 1), over the answer's
       positions of examples longer than N (default 8), in bins of 1/bins (default 20: 0.05);
       keys tied for the strongest share the query's count.
       Writes DIR/histogram.tsv (the fraction of (query, layer, head) in each bin) and
       DIR/histogram.svg.

   dev/attention attends --out DIR LABEL=DUMP.bin [...] [--split valid|test] [--by word|index]
       Where each head looks, by what the model must say next: for every layer and head, over
       the queries that predict the answer's words (of both splits' examples, or of one), the
       mean attention on the keys holding each word, grouped by the word the query predicts
       (--by word, the default) or by that word's index in the answer (--by index: 0 for the
       answer's first word). Writes DIR/attends.tsv (the means of 0.001 and more) and prints,
       per head, the three most attended words for each of the four most frequent answer words,
       or, by index, the most attended word at every index.

   dev/attention span --out DIR LABEL=DUMP.bin [...] [--ranges 21-50,51-100,...] [--edges 0,1,2,11,...]
                      [--keys distance|position]
       Where the query that predicts the answer's first word looks as the examples grow: for
       every layer and head, its mean attention in each bin of keys, by their distance t - k
       (default) or their position k from the first, over the examples whose λ is in each range
       (--ranges; default valid's lengths and test's). --edges: the bins' first distances or
       positions, from 0; default 0, 1, 2, 4, 8, ... up to the longest example. Writes
       DIR/span.tsv and prints a line per head and range.

   dev/attention scores --out DIR LABEL=DUMP.bin [...] [--length N] [--edges ...]
       Layer 0's score of a key by its word and distance, up to a constant, read from the
       probabilities of the query that predicts the answer's first word (analysis.h says why
       that is exact, and for which PEs), in every example or those of length N. Writes each
       (head, word, distance)'s mean over the examples and its spread to DIR/scores.tsv, and
       prints, per head and key word, the best mean in each distance bin (--edges; for a rotary
       PE, the envelope of its fast pairs' turning, where its slow pairs show) and the largest
       spread.

   dev/attention positions --out DIR LABEL=DUMP.bin [...]
       What a CoPE model counts (dumps of --pe cope models): for every layer and head, over the
       queries that predict the answer, the mean gate of the keys holding each word, and the
       word whose count in keys 0..t the head's position of the first key, p_t0, follows best
       (Pearson r and the least-squares line), the same for the count of every token, t + 1
       (a head whose gates open alike on all words), and the largest p_t0 in valid and in
       test; and CoPE's table row by row: its norm and cosine with the row before (rows training never
       read are still zero; rows that flip sign give a head the parity of its count). Writes
       DIR/gates.tsv, DIR/counting.tsv, DIR/table.tsv and DIR/reach.tsv (each head's largest
       p_t0 at each length), and prints a line per head and table.

   dev/attention probe --out DIR LABEL=DUMP.bin [...] [--fit valid|test] [--edges 0,5,10,...]
       Theorem 1 in a trained model: does the residual stream say where each prompt token is,
       and how far past training? For every state (entering each layer, and the last layer's
       output), a least-squares probe of the prompt tokens' positions, fitted to every other
       valid example (--fit test: every other test example) and read on the rest: its mean
       |error| on valid, and on test in and past valid's positions, and its mean prediction in
       each bin of test's positions (--edges; default every 5). Fitted to valid, a code that
       stops at training's positions shows as a prediction that stops growing; fitted to test,
       a small error past them says the positions are there, however coded. Writes
       DIR/probe.tsv (by position) and prints a line per state. Needs dumps of version 3.

 Dumps compared by `distance` must hold the same examples: dump them from runs of one task and
 data seed, with the same --dump-per-length.
*/
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <set>

#include "analysis.h"
#include "dev/tool.h"
#include "report.h"

struct Labelled {
    std::string label;
    AttentionDump dump;
};

// LABEL=FILE
static Labelled read_labelled(const std::string& arg) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) fail("expected LABEL=DUMP.bin, got '%s'", arg.c_str());
    return {arg.substr(0, eq), read_attention_dump(arg.substr(eq + 1))};
}

// the top of a plot's y axis: the largest value rounded up to a multiple of 0.05 (at most 1)
static double axis_top(double largest) { return std::min(1.0, std::max(0.05, ceil(largest / 0.05 - 1e-9) * 0.05)); }

struct AttentionArgs {
    std::string out;
    bool paper_jsd = false;
    int min_length = 8, bins = 20;
    int split = 0;  // --split: the examples of valid (1) or test (2) only; 0: both
    QueryGroup by = BY_WORD;  // --by: attends groups the queries by the word to say, or its index
    std::vector<LengthRange> ranges;  // --ranges: span's lengths; empty: valid's and test's
    std::vector<int> edges;           // --edges: span's and scores' distance bins; empty: 0, 1, 2, 4, 8, ...
    KeyMeasure keys = KEY_DISTANCE;   // --keys: span's bins by distance or by position
    int length = 0;                   // --length: the examples scores reads; 0: all
    int fit = DUMP_VALID;             // --fit: the split probe fits to
    std::vector<std::string> inputs;
};

// a non-negative integer, all of `text`, digits only (as ./train's flags: no space or sign)
static int count_option(const std::string& option, const std::string& text) {
    char* end = nullptr;
    errno = 0;
    long v = strtol(text.c_str(), &end, 10);
    bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || errno || v > INT_MAX) fail("%s expects integers >= 0, got '%s'", option.c_str(), text.c_str());
    return (int)v;
}

static std::vector<std::string> comma_separated(const std::string& text) {
    std::vector<std::string> items;
    size_t start = 0;
    for (size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1) items.push_back(text.substr(start, comma - start));
    items.push_back(text.substr(start));
    return items;
}

// "21-50,51-100": ranges of lengths, each lo <= hi
static std::vector<LengthRange> ranges_option(const std::string& text) {
    std::vector<LengthRange> ranges;
    for (const std::string& item : comma_separated(text)) {
        size_t dash = item.find('-');
        if (dash == std::string::npos) fail("--ranges takes LO-HI,LO-HI,..., got '%s'", item.c_str());
        LengthRange r = {count_option("--ranges", item.substr(0, dash)), count_option("--ranges", item.substr(dash + 1))};
        if (r.lo > r.hi) fail("--ranges: %d-%d is empty", r.lo, r.hi);
        ranges.push_back(r);
    }
    return ranges;
}

// "0,1,2,11": the bins' first distances, from 0, rising
static std::vector<int> edges_option(const std::string& text) {
    std::vector<int> edges;
    for (const std::string& item : comma_separated(text)) {
        edges.push_back(count_option("--edges", item));
        if (edges.size() > 1 && edges.back() <= edges[edges.size() - 2]) fail("--edges must rise, got '%s'", text.c_str());
    }
    if (edges[0] != 0) fail("--edges must start at 0, got '%s'", text.c_str());
    return edges;
}

static int split_option(const std::string& name, const std::string& option = "--split") {
    if (name == "valid") return DUMP_VALID;
    if (name == "test") return DUMP_TEST;
    fail("%s takes valid or test, not '%s'", option.c_str(), name.c_str());
}

static QueryGroup group_option(const std::string& name) {
    if (name == "word") return BY_WORD;
    if (name == "index") return BY_INDEX;
    fail("--by takes word or index, not '%s'", name.c_str());
}

static KeyMeasure keys_option(const std::string& name) {
    if (name == "distance") return KEY_DISTANCE;
    if (name == "position") return KEY_POSITION;
    fail("--keys takes distance or position, not '%s'", name.c_str());
}

// A command and the options it reads besides --out: it refuses the others, which it would ignore
struct AttentionCommand {
    const char* name;
    std::vector<std::string> options;
    void (*run)(const AttentionArgs& a);
};

// every_option: the options of all the commands (ATTENTION_COMMANDS, below)
static AttentionArgs parse_attention_args(int argc, char** argv, const AttentionCommand& command,
                                          const std::vector<std::string>& every_option) {
    AttentionArgs a;
    for (int i = 2; i < argc; i++) {
        std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) fail("%s needs a value", arg.c_str());
            return argv[++i];
        };
        auto among = [&](const std::vector<std::string>& options) { return std::find(options.begin(), options.end(), arg) != options.end(); };
        if (among(every_option) && !among(command.options)) {
            std::string own;
            for (const std::string& o : command.options) own += " " + o;
            fail("%s does not apply to %s (its options: --out%s)", arg.c_str(), command.name, own.c_str());
        }
        if (arg == "--out") a.out = value();
        else if (arg == "--paper-jsd") a.paper_jsd = true;
        else if (arg == "--min-length") a.min_length = count_option(arg, value());
        else if (arg == "--bins") a.bins = count_option(arg, value());
        else if (arg == "--split") a.split = split_option(value());
        else if (arg == "--by") a.by = group_option(value());
        else if (arg == "--ranges") a.ranges = ranges_option(value());
        else if (arg == "--edges") a.edges = edges_option(value());
        else if (arg == "--keys") a.keys = keys_option(value());
        else if (arg == "--length") a.length = count_option(arg, value());
        else if (arg == "--fit") a.fit = split_option(value(), arg);
        else if (arg.rfind("--", 0) == 0)
            fail("unknown option '%s' (valid: --out --paper-jsd --min-length --bins --split --by --ranges --edges --keys --length --fit)",
                 arg.c_str());
        else a.inputs.push_back(arg);
    }
    if (a.out.empty()) fail("--out DIR is required");
    if (a.bins < 1 || a.bins > 1000) fail("--bins %d is out of range [1, 1000]", a.bins);
    std::set<std::string> labels;  // a label names a column or a row: two of one name could not be told apart
    for (const std::string& input : a.inputs)
        if (input.find('=') != std::string::npos && !labels.insert(input.substr(0, input.find('='))).second)
            fail("label '%s' is given twice", input.substr(0, input.find('=')).c_str());
    return a;
}

// the lengths of the reference's in-distribution (valid) examples end here
static int longest_valid_length(const AttentionDump& d) {
    int longest = 0;
    for (const AttentionExample& e : d.examples)
        if (e.split == DUMP_VALID) longest = std::max(longest, e.length);
    return longest;
}

static void distance_command(const AttentionArgs& a) {
    if (a.inputs.size() < 2) fail("distance needs a reference dump and at least one LABEL=DUMP.bin");
    // the reference: LABEL=FILE, or FILE alone (then labelled by its name)
    bool named = a.inputs[0].find('=') != std::string::npos;
    std::string reference_label = named ? a.inputs[0].substr(0, a.inputs[0].find('=')) : a.inputs[0];
    AttentionDump reference = named ? read_labelled(a.inputs[0]).dump : read_attention_dump(a.inputs[0]);
    if (reference.examples.empty()) fail("%s holds no examples to compare", a.inputs[0].c_str());
    std::vector<std::string> labels;
    std::vector<std::map<int, double>> curves;
    for (size_t k = 1; k < a.inputs.size(); k++) {
        Labelled other = read_labelled(a.inputs[k]);
        labels.push_back(other.label);
        curves.push_back(attention_distance(reference, other.dump, a.paper_jsd));
    }
    std::string tsv = "length";
    for (const std::string& l : labels) tsv += "\t" + l;
    tsv += "\n";
    int lo = curves[0].begin()->first, hi = curves[0].rbegin()->first;
    for (const auto& kv : curves[0]) {
        tsv += std::to_string(kv.first);
        for (const auto& curve : curves) tsv += "\t" + format_text("%.6f", curve.at(kv.first));
        tsv += "\n";
    }
    write_text(a.out + "/distance.tsv", tsv);

    SvgPlot plot(lo - 0.5, hi + 0.5, "attention distance from " + reference_label + (a.paper_jsd ? " (paper's JSD variant)" : ""));
    double largest = 0;
    for (const auto& curve : curves)
        for (const auto& kv : curve) largest = std::max(largest, kv.second);
    plot.y_hi = axis_top(largest);
    plot.band(lo - 0.5, longest_valid_length(reference) + 0.5);
    plot.y_grid();
    plot.x_ticks(lo, hi);
    plot.axis_titles("length (λ)", a.paper_jsd ? "½KL(m‖p) + ½KL(m‖q), min over head pairs" : "Jensen-Shannon divergence, min over head pairs");
    std::vector<LegendEntry> legend;
    for (size_t k = 0; k < curves.size(); k++) {
        std::vector<std::pair<double, double>> points;
        for (const auto& kv : curves[k]) points.push_back({kv.first, kv.second});
        plot.line(points, plot_color((int)k));
        legend.push_back({labels[k], plot_color((int)k)});
    }
    legend.push_back({"training lengths", "#000", true});
    if (!a.paper_jsd) legend.push_back({"(ln 2 = 0.69 is the most", nullptr}), legend.push_back({" Jensen-Shannon can be)", nullptr});
    plot.legend(legend);
    write_text(a.out + "/distance.svg", plot.finish());
    printf("wrote %s/distance.tsv and %s/distance.svg\n", a.out.c_str(), a.out.c_str());
}

static void histogram_command(const AttentionArgs& a) {
    if (a.inputs.empty()) fail("histogram needs at least one LABEL=DUMP.bin");
    std::vector<std::string> labels;
    std::vector<std::vector<double>> fractions;
    for (const std::string& input : a.inputs) {
        Labelled l = read_labelled(input);
        std::vector<double> counts = attended_distance_histogram(l.dump, a.min_length, a.bins);
        double total = 0;
        for (double n : counts) total += n;
        if (total == 0) fail("%s has no example longer than %d", input.c_str(), a.min_length);
        std::vector<double> f;
        for (double n : counts) f.push_back(n / total);
        labels.push_back(l.label), fractions.push_back(f);
    }
    std::string tsv = "from\tto";
    for (const std::string& l : labels) tsv += "\t" + l;
    tsv += "\n";
    for (int b = 0; b < a.bins; b++) {
        tsv += format_text("%.3f\t%.3f", (double)b / a.bins, (double)(b + 1) / a.bins);
        for (const auto& f : fractions) tsv += format_text("\t%.6f", f[b]);
        tsv += "\n";
    }
    write_text(a.out + "/histogram.tsv", tsv);

    SvgPlot plot(0, 1, "where the heads look: strongest key's distance over the answer");
    double largest = 0;
    for (const auto& f : fractions) largest = std::max(largest, *std::max_element(f.begin(), f.end()));
    plot.y_hi = axis_top(largest);
    plot.y_grid();
    for (int k = 0; k <= 10; k += 2)
        plot.add("<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%.1f</text>\n", plot.x(k / 10.0), plot.y(0) + 18, k / 10.0);
    plot.axis_titles("(t - k*) / (t + 1): 0 = the query itself, t/(t+1) = the first token", "fraction of (query, layer, head)");
    std::vector<LegendEntry> legend;
    for (size_t k = 0; k < fractions.size(); k++) {
        std::vector<std::pair<double, double>> points;
        for (int b = 0; b < a.bins; b++) points.push_back({(b + 0.5) / a.bins, fractions[k][b]});
        plot.line(points, plot_color((int)k));
        legend.push_back({labels[k], plot_color((int)k)});
    }
    plot.legend(legend);
    write_text(a.out + "/histogram.svg", plot.finish());
    printf("wrote %s/histogram.tsv and %s/histogram.svg\n", a.out.c_str(), a.out.c_str());
}

// a token's word, or #id in a dump without words (version 1)
static std::string word_of(const AttentionDump& d, int token) { return token < (int)d.words.size() ? d.words[token] : "#" + std::to_string(token); }

// a group's mean attention per key word, nonzero means only, largest first (ties by word)
static std::vector<std::pair<int, double>> mean_largest_first(const std::map<int, double>& mass, long queries) {
    std::vector<std::pair<int, double>> mean;
    for (const auto& [word, sum] : mass)
        if (sum != 0) mean.push_back({word, sum / queries});
    std::stable_sort(mean.begin(), mean.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    return mean;
}

// a group of queries as attends.tsv and the printed lines name it: the word to say, or its index
static std::string group_name(const Labelled& l, QueryGroup by, int group) {
    return by == BY_WORD ? word_of(l.dump, group) : format_text("%d", group);
}

// each head of one dump: its lines of attends.tsv, and one printed line with, by word, the three
// most attended words for each of the four most frequent answer words, or, by index, the most
// attended word at every index
static void describe_attends(const Labelled& l, int split, QueryGroup by, std::string* tsv) {
    for (int layer = 0; layer < l.dump.L; layer++)
        for (int head = 0; head < l.dump.NH; head++) {
            AttendsByQuery a = attends_by_query(l.dump, layer, head, split, by);
            // (-queries, group): by word the most frequent first, by index in the answer's order
            std::vector<std::pair<long, int>> groups;
            for (const auto& kv : a.queries) groups.push_back({by == BY_WORD ? -kv.second : 0, kv.first});
            std::sort(groups.begin(), groups.end());
            std::string line = format_text("  layer %d head %d, %s", layer, head, by == BY_WORD ? "when the next word is" : "by the index of the next word:");
            for (size_t k = 0; k < groups.size(); k++) {
                int group = groups[k].second;
                long n = a.queries[group];
                std::vector<std::pair<int, double>> mean = mean_largest_first(a.mass[group], n);
                std::string name = group_name(l, by, group);
                for (const auto& [w, m] : mean)
                    if (m >= 0.001)
                        *tsv += format_text("%s\t%d\t%d\t%s\t%ld\t%s\t%.4f\n", l.label.c_str(), layer, head, name.c_str(), n,
                                            word_of(l.dump, w).c_str(), m);
                if (by == BY_INDEX) {  // a dump whose rows hold no attention at all has no word to name
                    line += format_text("%s %s ", k ? "," : "", name.c_str()) +
                            (mean.empty() ? "-" : format_text("'%s' %.2f", word_of(l.dump, mean[0].first).c_str(), mean[0].second));
                    continue;
                }
                if (k >= 4) continue;
                line += format_text("%s '%s' (%ld):", k ? ";" : "", name.c_str(), n);
                for (size_t i = 0; i < mean.size() && i < 3; i++)
                    line += format_text(" '%s' %.2f", word_of(l.dump, mean[i].first).c_str(), mean[i].second);
            }
            printf("%s%s\n", line.c_str(), by == BY_WORD && groups.size() > 4 ? "; ..." : "");
        }
}

static void attends_command(const AttentionArgs& a) {
    if (a.inputs.empty()) fail("attends needs at least one LABEL=DUMP.bin");
    std::string tsv = format_text("label\tlayer\thead\t%s\tqueries\tword\tmean_attention\n", a.by == BY_WORD ? "answer" : "index");
    for (const std::string& input : a.inputs) {
        Labelled l = read_labelled(input);
        printf("%s:\n", l.label.c_str());
        describe_attends(l, a.split, a.by, &tsv);
    }
    write_text(a.out + "/attends.tsv", tsv);
    printf("wrote %s/attends.tsv\n", a.out.c_str());
}

// each head of one CoPE dump: its lines of gates.tsv, counting.tsv and reach.tsv, and one
// printed line
static void describe_heads(const Labelled& l, std::string* gates, std::string* counting, std::string* reach) {
    for (int layer = 0; layer < l.dump.L; layer++)
        for (int head = 0; head < l.dump.NH; head++) {
            CopeHead c = cope_head(l.dump, layer, head);
            std::vector<int> seen;  // the words its keys held, most open gate first
            for (int w = 0; w < (int)c.keys.size(); w++)
                if (c.keys[w]) seen.push_back(w);
            std::stable_sort(seen.begin(), seen.end(), [&](int x, int y) { return c.mean_gate(x) > c.mean_gate(y); });
            for (int w : seen)
                *gates += format_text("%s\t%d\t%d\t%s\t%ld\t%.4f\n", l.label.c_str(), layer, head, word_of(l.dump, w).c_str(), c.keys[w], c.mean_gate(w));
            // the best word's line, and the token count's, in the table and the printed line
            auto fit = [](const LineFit& f) {
                return f.defined() ? format_text("%.4f\t%.4f\t%.4f", f.r(), f.slope(), f.intercept()) : std::string("-\t-\t-");
            };
            auto line_of = [](const LineFit& f, const std::string& x) {
                return f.defined() ? format_text("p_t0 = %.2f x %s %+.2f (r %.3f)", f.slope(), x.c_str(), f.intercept(), f.r()) : x + ": -";
            };
            LineFit best = c.counted < 0 ? LineFit{} : c.by_word[c.counted];
            std::string counted = c.counted < 0 ? "-" : word_of(l.dump, c.counted);
            *counting += format_text("%s\t%d\t%d\t%s\t%s\t%s\t%.3f\t%.3f\n", l.label.c_str(), layer, head, counted.c_str(), fit(best).c_str(),
                                     fit(c.by_tokens).c_str(), c.p_max[1], c.p_max[2]);
            for (const auto& kv : c.p_max_at_length) *reach += format_text("%s\t%d\t%d\t%d\t%.3f\n", l.label.c_str(), layer, head, kv.first, kv.second);
            std::string line = format_text("  layer %d head %d: %s, %s; up to %.1f in valid, %.1f in test; gates", layer, head,
                                           line_of(best, "count('" + counted + "')").c_str(), line_of(c.by_tokens, "tokens").c_str(), c.p_max[1], c.p_max[2]);
            for (size_t k = 0; k < seen.size() && k < 6; k++) line += format_text(" '%s' %.2f", word_of(l.dump, seen[k]).c_str(), c.mean_gate(seen[k]));
            printf("%s%s\n", line.c_str(), seen.size() > 6 ? " ..." : "");
        }
}

// each table of one CoPE dump: its lines of table.tsv, and a printed line with the rows that
// learned something and the cosine of each with the row before
static void describe_tables(const Labelled& l, std::string* table) {
    for (int copy = 0; copy < l.dump.table_copies; copy++) {
        std::vector<CopeTableRow> rows = cope_table_rows(l.dump, copy);
        int last = -1, learned = 0;  // the last row training moved from zero, and how many it moved
        for (int m = 0; m < (int)rows.size(); m++) {
            *table += format_text("%s\t%d\t%d\t%.4f\t%.4f\n", l.label.c_str(), copy, m, rows[m].norm, rows[m].cos_previous);
            if (rows[m].norm > 0) last = m, learned++;
        }
        std::string name = l.dump.table_copies == 1 ? "the table" : "layer " + std::to_string(copy) + "'s table";
        if (last < 0) {
            printf("  %s: every row still zero\n", name.c_str());
            continue;
        }
        std::string line = format_text("  %s: %d of rows 0-%d learned", name.c_str(), learned, last);
        if (last + 1 < (int)rows.size()) line += format_text(", %d-%d still zero", last + 1, (int)rows.size() - 1);
        line += "; cosine with the row before:";
        for (int m = 1; m <= last; m++) line += format_text(" %.2f", rows[m].cos_previous);
        printf("%s\n", line.c_str());
    }
}

static void positions_command(const AttentionArgs& a) {
    if (a.inputs.empty()) fail("positions needs at least one LABEL=DUMP.bin");
    std::string gates = "label\tlayer\thead\tword\tkeys\tmean_gate\n";
    std::string counting = "label\tlayer\thead\tcounted\tr\tslope\tintercept\ttokens_r\ttokens_slope\ttokens_intercept\tp_max_valid\tp_max_test\n";
    std::string table = "label\ttable\trow\tnorm\tcos_previous\n";
    std::string reach = "label\tlayer\thead\tlength\tp_max\n";
    for (const std::string& input : a.inputs) {
        Labelled l = read_labelled(input);
        require_cope_positions(l.dump, input);  // before its label is printed
        printf("%s:\n", l.label.c_str());
        describe_heads(l, &gates, &counting, &reach);
        describe_tables(l, &table);
    }
    write_text(a.out + "/gates.tsv", gates);
    write_text(a.out + "/counting.tsv", counting);
    write_text(a.out + "/table.tsv", table);
    write_text(a.out + "/reach.tsv", reach);
    printf("wrote %s/gates.tsv, %s/counting.tsv, %s/reach.tsv and %s/table.tsv\n", a.out.c_str(), a.out.c_str(), a.out.c_str(), a.out.c_str());
}

// the bins a command was given, or 0, 1, 2, 4, 8, ... up to the dumps' longest example
static std::vector<int> edges_or_default(const AttentionArgs& a, const std::vector<Labelled>& dumps) {
    if (!a.edges.empty()) return a.edges;
    int longest = 1;
    for (const Labelled& l : dumps)
        for (const AttentionExample& e : l.dump.examples) longest = std::max(longest, e.T);
    std::vector<int> edges = {0};
    for (int d = 1; d < longest; d *= 2) edges.push_back(d);
    return edges;
}

// bin b's distances or positions as a span.tsv column and a printed label: "2-3", "8+" for the last
static std::string bin_name(const std::vector<int>& edges, int b) {
    if (b + 1 == (int)edges.size()) return format_text("%d+", edges[b]);
    return edges[b + 1] - edges[b] == 1 ? format_text("%d", edges[b]) : format_text("%d-%d", edges[b], edges[b + 1] - 1);
}

// the lengths of one split's examples as a range (a split without examples gives none)
static void add_split_range(const AttentionDump& d, int split, std::vector<LengthRange>* ranges) {
    LengthRange r = {INT_MAX, 0};
    for (const AttentionExample& e : d.examples)
        if (e.split == split) r.lo = std::min(r.lo, e.length), r.hi = std::max(r.hi, e.length);
    if (r.lo <= r.hi) ranges->push_back(r);
}

static std::vector<Labelled> read_all(const std::vector<std::string>& inputs) {
    std::vector<Labelled> dumps;
    for (const std::string& input : inputs) dumps.push_back(read_labelled(input));
    return dumps;
}

static void span_command(const AttentionArgs& a) {
    if (a.inputs.empty()) fail("span needs at least one LABEL=DUMP.bin");
    std::vector<Labelled> dumps = read_all(a.inputs);
    std::vector<int> edges = edges_or_default(a, dumps);
    std::string tsv = format_text("label\tlayer\thead\tlengths\texamples\t%s\tmean_attention\n", a.keys == KEY_DISTANCE ? "distances" : "positions");
    for (const Labelled& l : dumps) {
        std::vector<LengthRange> ranges = a.ranges;
        if (ranges.empty()) add_split_range(l.dump, DUMP_VALID, &ranges), add_split_range(l.dump, DUMP_TEST, &ranges);
        AttentionSpan s = attention_span(l.dump, ranges, edges, a.keys);
        printf("%s: mean attention of the answer's first query by the keys' %s\n", l.label.c_str(), a.keys == KEY_DISTANCE ? "distance" : "position");
        for (int layer = 0; layer < s.L; layer++)
            for (int head = 0; head < s.NH; head++)
                for (size_t r = 0; r < ranges.size(); r++) {
                    std::string lengths = format_text("%d-%d", ranges[r].lo, ranges[r].hi);
                    std::string line = format_text("  layer %d head %d, λ %s (%ld):", layer, head, lengths.c_str(), s.examples[r]);
                    if (s.examples[r] == 0) {  // a mean of nothing: said, and no row of span.tsv
                        printf("%s no example of these lengths\n", line.c_str());
                        continue;
                    }
                    for (int b = 0; b < s.bins; b++) {
                        std::string bin = bin_name(edges, b);
                        tsv += format_text("%s\t%d\t%d\t%s\t%ld\t%s\t%.4f\n", l.label.c_str(), layer, head, lengths.c_str(), s.examples[r], bin.c_str(),
                                           s.mean((int)r, layer, head, b));
                        line += format_text(" %s %.2f", bin.c_str(), s.mean((int)r, layer, head, b));
                    }
                    printf("%s\n", line.c_str());
                }
    }
    write_text(a.out + "/span.tsv", tsv);
    printf("wrote %s/span.tsv\n", a.out.c_str());
}

static void scores_command(const AttentionArgs& a) {
    if (a.inputs.empty()) fail("scores needs at least one LABEL=DUMP.bin");
    std::vector<Labelled> dumps = read_all(a.inputs);
    std::vector<int> edges = edges_or_default(a, dumps);
    std::string tsv = "label\thead\tword\tdistance\texamples\tscore\tspread\n";
    for (const Labelled& l : dumps) {
        ScoreCurves curves = layer0_scores(l.dump, a.length);
        if (curves.empty()) fail("%s holds no example%s", l.label.c_str(), a.length ? format_text(" of length %d", a.length).c_str() : "");
        printf("%s: layer 0's best score in each distance bin, relative to the query's own key\n", l.label.c_str());
        std::map<std::pair<int, int>, std::map<int, double>> best;  // (head, word) -> bin -> best mean score
        std::map<int, double> spread;                                // head -> largest spread
        for (const auto& kv : curves) {
            int head = std::get<0>(kv.first), word = std::get<1>(kv.first), distance = std::get<2>(kv.first);
            const ScoreTally& s = kv.second;
            tsv += format_text("%s\t%d\t%s\t%d\t%ld\t%.4f\t%.4f\n", l.label.c_str(), head, word_of(l.dump, word).c_str(), distance, s.points, s.mean(), s.spread());
            auto bin = best[{head, word}].emplace(key_bin(edges, distance), s.mean()).first;
            bin->second = std::max(bin->second, s.mean());
            spread[head] = std::max(spread[head], s.spread());
        }
        for (const auto& kv : best) {
            int head = kv.first.first;
            std::string line = format_text("  head %d, key '%s':", head, word_of(l.dump, kv.first.second).c_str());
            for (const auto& bin : kv.second) line += format_text(" %s %.2f", bin_name(edges, bin.first).c_str(), bin.second);
            printf("%s\n", line.c_str());
        }
        for (const auto& kv : spread) printf("  head %d: points of one word and distance spread by up to %.2g across examples\n", kv.first, kv.second);
    }
    write_text(a.out + "/scores.tsv", tsv);
    printf("wrote %s/scores.tsv\n", a.out.c_str());
}

// the state s of a model of L layers, as the printed lines name it
static std::string state_name(int s, int L) { return s == 0 ? "embedding" : s == L ? "last layer's output" : format_text("after layer %d", s - 1); }

// a mean as printed, "none" where there was nothing to average (SCAN's test prompts, say, are no
// longer than valid's, so none has a position past them)
static std::string mean_or_none(double mean) { return std::isnan(mean) ? "none" : format_text("%.2f", mean); }

static void probe_command(const AttentionArgs& a) {
    if (a.inputs.empty()) fail("probe needs at least one LABEL=DUMP.bin");
    std::string tsv = "label\tstate\tsplit\tposition\ttokens\tmean_prediction\tmean_abs_error\n";
    for (const std::string& input : a.inputs) {
        Labelled l = read_labelled(input);
        const AttentionDump& d = l.dump;
        std::vector<int> edges = a.edges;  // default: every 5 positions up to the longest prompt
        int longest = 0;
        for (const AttentionExample& e : d.examples) longest = std::max(longest, e.prompt_len);
        if (edges.empty())
            for (int p = 0; p == 0 || p < longest; p += 5) edges.push_back(p);
        printf("%s: where each prompt token is, read linearly from the residual stream (fitted to every other %s example)\n", l.label.c_str(),
               a.fit == DUMP_VALID ? "valid" : "test");
        for (int s = 0; s <= d.L; s++) {
            PositionProbe probe = position_probe(d, s, a.fit);
            int seen = probe.longest_valid;
            const char *valid = a.fit == DUMP_VALID ? " (held out)" : "", *test = a.fit == DUMP_TEST ? " (held out)" : "";
            printf("  state %d (%s): |error| valid%s %s; test%s at positions 0-%d %s, past %d %s; mean prediction by test position:", s,
                   state_name(s, d.L).c_str(), valid, mean_or_none(probe.error(DUMP_VALID, 0, INT_MAX)).c_str(), test, seen,
                   mean_or_none(probe.error(DUMP_TEST, 0, seen)).c_str(), seen, mean_or_none(probe.error(DUMP_TEST, seen + 1, INT_MAX)).c_str());
            for (int b = 0; b < (int)edges.size(); b++) {
                ProbeTally bin;
                for (const auto& [t, tally] : probe.by_position[DUMP_TEST])
                    if (key_bin(edges, t) == b) bin.n += tally.n, bin.prediction += tally.prediction;
                if (bin.n) printf(" %s %.1f", bin_name(edges, b).c_str(), bin.prediction / bin.n);
            }
            printf("\n");
            for (int split : {DUMP_VALID, DUMP_TEST})
                for (const auto& [t, tally] : probe.by_position[split])
                    tsv += format_text("%s\t%d\t%s\t%d\t%ld\t%.4f\t%.4f\n", l.label.c_str(), s, split == DUMP_VALID ? "valid" : "test", t, tally.n,
                                       tally.prediction / tally.n, tally.error / tally.n);
        }
    }
    write_text(a.out + "/probe.tsv", tsv);
    printf("wrote %s/probe.tsv\n", a.out.c_str());
}

static const char* const ATTENTION_USAGE =
    "dev/attention distance|histogram|attends|span|scores|positions|probe --out DIR [OPTIONS] [REFERENCE.bin] LABEL=DUMP.bin ...\n"
    "  on dumps of ./train --load MODEL --dump-attention DUMP.bin; OPTIONS: --paper-jsd --min-length N --bins N\n"
    "  --split valid|test --by word|index --ranges --edges --keys --length N --fit valid|test (which command reads\n"
    "  which, and what each writes: dev/attention.cpp's header)";

static const AttentionCommand ATTENTION_COMMANDS[] = {
    {"distance", {"--paper-jsd"}, distance_command},
    {"histogram", {"--min-length", "--bins"}, histogram_command},
    {"attends", {"--split", "--by"}, attends_command},
    {"span", {"--ranges", "--edges", "--keys"}, span_command},
    {"scores", {"--length", "--edges"}, scores_command},
    {"positions", {}, positions_command},
    {"probe", {"--fit", "--edges"}, probe_command},
};

static void attention_main(int argc, char** argv) {
    std::string name = argc > 1 ? argv[1] : "";
    std::vector<std::string> every_option;
    std::string names;
    for (const AttentionCommand& command : ATTENTION_COMMANDS) {
        for (const std::string& option : command.options)
            if (std::find(every_option.begin(), every_option.end(), option) == every_option.end()) every_option.push_back(option);
        names += std::string(names.empty() ? "" : " ") + command.name;
    }
    for (const AttentionCommand& command : ATTENTION_COMMANDS)
        if (name == command.name) {
            AttentionArgs a = parse_attention_args(argc, argv, command, every_option);
            bool made = mkdir(a.out.c_str(), 0755) == 0;
            if (!made && errno != EEXIST) fail("can not create %s: %s", a.out.c_str(), strerror(errno));
            try {
                return command.run(a);
            } catch (const Error&) {  // a command that fails removes the --out it made (rmdir: if still empty)
                if (made) rmdir(a.out.c_str());
                throw;
            }
        }
    fail("unknown command '%s' (valid: %s; --help says more)", name.c_str(), names.c_str());
}

#ifndef TESTING
int main(int argc, char** argv) {
    if (help_asked(argc, argv)) return print_usage(ATTENTION_USAGE, true);
    try {
        attention_main(argc, argv);
    } catch (const Error& e) {
        fprintf(stderr, "dev/attention: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
#endif
