/*
 dev/report.cpp: the sweep report. A sweep is a directory whose subdirectories (at any depth) are
 run directories written by ./train. The report reads them all and writes, into the sweep
 directory, report.md (tables per task and the mean reciprocal rank of the PEs), one SVG per task
 (accuracy against length, every PE overlaid) and mrr.svg; it prints a short summary whose last
 line is the MRR of each PE.

 Usage:  make dev/report && ./dev/report sweeps/NAME
 Writes: NAME/report.md, NAME/TASK.svg for each task (TASK-LABEL.svg where a task has several
         settings, see below) and NAME/mrr.svg. Bad input: one error line, exit status 1.
 With TESTING defined there is no main(): test/test_report.cpp includes this file.

 Invariants and choices:
   - A run directory is any directory holding a config.json. It counts only when it also holds
     results.json (the run finished); the others are listed as unfinished and enter no table,
     plot or rank.
   - Accuracy is recomputed from the exact counts (correct / total), not read from the
     6-decimal "accuracy" fields, so that equal counts are exact ties.
   - MRR as the paper computes it (reference/paper-protocol.md §7): a column is a (task, seed);
     in each column the PEs are ranked by overall OOD test accuracy, descending, a tie going to
     the PE that comes first in PE_NAMES (pandas rank(method="first")); RR = 1 / rank; a PE's MRR
     is the mean of its RR over the columns that have every ranked PE, and the others are
     dropped (and counted). The ranked PEs are those with a finished run somewhere in the sweep:
     all of PE_NAMES in a full sweep, so that a sweep of two PEs still ranks them.
   - The tie-break biases that MRR: a column where every ranked PE has exactly the same OOD
     accuracy (an "all-tied" column, typically a task no PE learned, all at 0.000) still ranks
     the PEs 1, 2, 3... in PE_NAMES order, so nope gains a free 1 and the last PE a free 1/5.
     The paper's MRR stays the headline; next to it (report.md and the summary) is the MRR over
     the columns that are not all tied, and each task table says when no PE reached 0.5 mean ID
     (valid) accuracy, i.e. the task was not learned and its ranks are noise.
   - Not-all-tied is not enough: in a task no PE learned, one PE may get a handful of OOD answers
     right while the rest tie at 0, so that luck and PE order rank it all the same. Each scope that
     holds such a task (the one rule, NOT_LEARNED_ID, of the note) is therefore followed by its
     MRR over the columns of the tasks some PE learned, and the summary prints that MRR too, on
     the line before the paper's MRR (nothing there when every task was learned).
   - Runs are ranked only against runs of the same setting. A run's setting is its config.json
     without task, pe, seed and parameters (the parameter count depends on the PE). Where the
     runs of a task have several settings, each setting of the task is a task of its own,
     "TASK [LABEL]", and the label names the fewest config fields (taken in config.json's order)
     that tell the settings of any one task apart, e.g. "copy [model=small]". A column is then
     (task [label], seed): a `small` copy run is never ranked against a `tiny` one.
   - A task's family is its name up to the first underscore: copy_rdc -> copy, sort_multi -> sort.
     The report gives the MRR over all columns, over each family's and over each setting's.
   - Two finished runs of the same task, setting, PE and seed are an error, not a silent choice.
*/
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common.h"
#include "pe.h"
#include "report.h"

namespace fs = std::filesystem;

// ----------------------------------------------------------------------------
// a JSON reader for what train.cu writes: objects, arrays, strings (which it never escapes;
// a backslash here just keeps the next character) and numbers

struct Json {
    enum Kind { NUMBER, STRING, BOOLEAN, ARRAY, OBJECT } kind = NUMBER;
    std::string text;               // a string's value, or a number as written (seeds need all 64 bits)
    double number = 0;
    std::vector<std::string> keys;  // an object's keys, in order, naming items
    std::vector<Json> items;        // an array's elements or an object's values

    const Json* find(const std::string& key) const {
        for (size_t k = 0; k < keys.size(); k++)
            if (keys[k] == key) return &items[k];
        return nullptr;
    }
};

struct JsonReader {
    const std::string& text;
    const std::string& source;  // the file, for messages
    size_t at = 0;

    [[noreturn]] void error(const char* expected) {
        int line = 1 + (int)std::count(text.begin(), text.begin() + std::min(at, text.size()), '\n');
        fail("%s: malformed JSON at line %d: expected %s", source.c_str(), line, expected);
    }
    void skip_space() {
        while (at < text.size() && isspace((unsigned char)text[at])) at++;
    }
    bool take(char ch) {
        skip_space();
        if (at < text.size() && text[at] == ch) return at++, true;
        return false;
    }
    std::string string() {
        if (!take('"')) error("a string");
        std::string s;
        while (at < text.size() && text[at] != '"') {
            if (text[at] == '\\') at++;
            if (at < text.size()) s += text[at++];
        }
        if (!take('"')) error("the end of a string");
        return s;
    }
    Json number() {
        skip_space();
        size_t start = at;
        while (at < text.size() && text[at] && strchr("+-0123456789.eE", text[at])) at++;
        Json j;
        j.text = text.substr(start, at - start);
        char* end = nullptr;
        j.number = strtod(j.text.c_str(), &end);
        if (j.text.empty() || *end != '\0') at = start, error("a value (object, array, string, number, true or false)");
        return j;
    }
    // a list of items between open and close, separated by commas
    template <typename Item>
    void list(char open, char close, Item item) {
        take(open);
        if (take(close)) return;
        do item();
        while (take(','));
        if (!take(close)) error(close == '}' ? "',' or '}'" : "',' or ']'");
    }
    Json value() {
        skip_space();
        Json j;
        if (at < text.size() && text[at] == '{') {
            j.kind = Json::OBJECT;
            list('{', '}', [&] {
                j.keys.push_back(string());
                if (!take(':')) error("':'");
                j.items.push_back(value());
            });
        } else if (at < text.size() && text[at] == '[') {
            j.kind = Json::ARRAY;
            list('[', ']', [&] { j.items.push_back(value()); });
        } else if (at < text.size() && text[at] == '"') {
            j.kind = Json::STRING;
            j.text = string();
        } else if (text.compare(at, 4, "true") == 0 || text.compare(at, 5, "false") == 0) {
            j.kind = Json::BOOLEAN;
            j.text = text[at] == 't' ? "true" : "false";
            at += j.text.size();
        } else {
            j = number();
        }
        return j;
    }
};

inline Json parse_json(const std::string& text, const std::string& source) {
    JsonReader reader{text, source};
    Json j = reader.value();
    reader.skip_space();
    if (reader.at != text.size()) reader.error("the end of the file");
    return j;
}

// object.key, which must be there and be of the given kind
static const Json& field(const Json& object, const std::string& key, Json::Kind kind, const std::string& source) {
    static const char* const KIND_NAMES[] = {"a number", "a string", "an array", "an object"};
    const Json* j = object.kind == Json::OBJECT ? object.find(key) : nullptr;
    if (!j) fail("%s: no field \"%s\" where one was expected", source.c_str(), key.c_str());
    if (j->kind != kind) fail("%s: field \"%s\" should be %s", source.c_str(), key.c_str(), KIND_NAMES[kind]);
    return *j;
}

static int int_field(const Json& object, const std::string& key, const std::string& source) {
    return (int)field(object, key, Json::NUMBER, source).number;
}

static std::string read_text(const std::string& path) {
    std::ifstream f(path);
    if (!f) fail("can not read %s", path.c_str());
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// ----------------------------------------------------------------------------
// the runs of a sweep

// what the report calls a task: the task, and its setting's label where it has several
inline std::string group_name(const std::string& task, const std::string& label) {
    return label.empty() ? task : task + " [" + label + "]";
}

struct SweepRun {
    std::string dir;  // relative to the sweep directory
    std::string task, pe, model;
    int pe_index = 0, steps = 0;
    uint64_t seed = 0;
    std::map<std::string, std::string> setting;  // config fields but task, pe, seed, parameters: name -> value as written
    std::string label;                           // the setting's label ("" when a task has one setting)
    bool finished = false;                       // has results.json
    int train_max = 0;
    SplitResult valid, test;

    std::string group() const { return group_name(task, label); }
};

// a split of results.json: {"accuracy", "correct", "total", "by_length": [{"length", "correct", "total", "accuracy"}]}
static SplitResult read_split(const Json& split, const std::string& source) {
    SplitResult r;
    r.all.correct = int_field(split, "correct", source);
    r.all.total = int_field(split, "total", source);
    for (const Json& row : field(split, "by_length", Json::ARRAY, source).items) {
        Tally& t = r.by_length[int_field(row, "length", source)];
        t.correct = int_field(row, "correct", source);
        t.total = int_field(row, "total", source);
    }
    return r;
}

static void read_results(SweepRun* run, const std::string& path) {
    Json results = parse_json(read_text(path), path);
    if (field(results, "task", Json::STRING, path).text != run->task || field(results, "pe", Json::STRING, path).text != run->pe ||
        field(results, "seed", Json::NUMBER, path).text != std::to_string(run->seed))
        fail("%s: task, pe or seed differ from the run's config.json", path.c_str());
    run->finished = true;
    run->train_max = int_field(results, "train_max", path);
    run->valid = read_split(field(results, "valid", Json::OBJECT, path), path);
    run->test = read_split(field(results, "test", Json::OBJECT, path), path);
}

// the run in `dir`; adds the names of its setting's fields that are new to field_order
static SweepRun read_run(const fs::path& sweep, const fs::path& dir, std::vector<std::string>* field_order) {
    std::string path = (dir / "config.json").string();
    Json config = parse_json(read_text(path), path);
    SweepRun run;
    run.dir = dir.lexically_relative(sweep).string();
    run.task = field(config, "task", Json::STRING, path).text;
    run.pe = field(config, "pe", Json::STRING, path).text;
    try {
        run.pe_index = find_pe(run.pe);
    } catch (const Error& e) {
        fail("%s: %s", path.c_str(), e.what());
    }
    run.model = field(config, "model", Json::STRING, path).text;
    run.steps = int_field(config, "steps", path);
    run.seed = strtoull(field(config, "seed", Json::NUMBER, path).text.c_str(), nullptr, 10);
    for (size_t k = 0; k < config.keys.size(); k++)
        if (config.keys[k] != "task" && config.keys[k] != "pe" && config.keys[k] != "seed" && config.keys[k] != "parameters") {
            run.setting[config.keys[k]] = config.items[k].text;
            if (std::find(field_order->begin(), field_order->end(), config.keys[k]) == field_order->end())
                field_order->push_back(config.keys[k]);
        }
    if (fs::exists(dir / "results.json")) read_results(&run, (dir / "results.json").string());
    return run;
}

// Labels each run's setting with the fewest fields that tell the settings of a task apart:
// a field is named when two finished runs of one task agree on every field named so far but
// differ in it. Fields follow config.json's order, so `model` comes before what it implies.
static std::vector<std::string> label_settings(std::vector<SweepRun>* runs, const std::vector<std::string>& field_order) {
    std::vector<std::string> named;
    auto value = [](const SweepRun& r, const std::string& name) {
        auto it = r.setting.find(name);
        return it == r.setting.end() ? std::string("(none)") : it->second;
    };
    for (const std::string& name : field_order) {
        std::map<std::string, std::string> seen;  // task and named fields -> this field's value
        bool tells_apart = false;
        for (const SweepRun& r : *runs) {
            if (!r.finished) continue;
            std::string key = r.task;
            for (const std::string& n : named) key += "\n" + value(r, n);
            auto it = seen.insert({key, value(r, name)}).first;
            tells_apart |= it->second != value(r, name);
        }
        if (tells_apart) named.push_back(name);
    }
    for (SweepRun& r : *runs) {
        Words parts;
        for (const std::string& n : named) parts.push_back(n + "=" + value(r, n));
        r.label = join_words(parts);
    }
    return named;
}

struct Sweep {
    std::string dir;
    std::vector<SweepRun> runs;              // in the order of their directories' names
    std::vector<std::string> setting_fields;  // the config fields the settings' labels name
};

static Sweep read_sweep(const std::string& sweep_dir) {
    fs::path sweep(sweep_dir);
    if (!fs::is_directory(sweep))
        fail("sweep directory '%s' does not exist (give the directory that holds the run directories)", sweep_dir.c_str());
    std::vector<fs::path> dirs;
    if (fs::exists(sweep / "config.json")) dirs.push_back(sweep);
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(sweep))
        if (e.is_directory() && fs::exists(e.path() / "config.json")) dirs.push_back(e.path());
    if (dirs.empty()) fail("no run directories (directories with a config.json) under '%s'", sweep_dir.c_str());
    std::sort(dirs.begin(), dirs.end());
    Sweep s{sweep_dir, {}, {}};
    std::vector<std::string> field_order;  // config.json's order
    for (const fs::path& dir : dirs) s.runs.push_back(read_run(sweep, dir, &field_order));
    s.setting_fields = label_settings(&s.runs, field_order);
    return s;
}

// ----------------------------------------------------------------------------
// mean reciprocal rank

// below this mean ID (valid) accuracy for every PE, a task counts as not learned at all: the note
// under its table, and the MRR over the tasks some PE learned, both follow this one rule
static const double NOT_LEARNED_ID = 0.5;

// the best mean (over seeds) ID accuracy of any PE among one task's runs; -inf when there are none
inline double best_mean_id(const std::vector<const SweepRun*>& runs) {
    double best = -INFINITY;
    for (int p = 0; p < NUM_PES; p++) {
        double id = 0;
        int seeds = 0;
        for (const SweepRun* r : runs)
            if (r->pe_index == p) id += r->valid.all.accuracy(), seeds++;
        if (seeds) best = std::max(best, id / seeds);
    }
    return best;
}

inline bool learned(const std::vector<const SweepRun*>& runs) { return best_mean_id(runs) >= NOT_LEARNED_ID; }

inline std::string family_of(const std::string& task) { return task.substr(0, task.find('_')); }

// one (task, seed): the OOD test accuracy of each PE, NAN where the PE has no finished run
struct Column {
    std::string task, label;
    uint64_t seed = 0;
    std::vector<double> ood = std::vector<double>(NUM_PES, NAN);
};

struct Mrr {
    std::vector<double> of_pe = std::vector<double>(NUM_PES, NAN);  // NAN for PEs not ranked
    int columns = 0, dropped = 0;
    int all_tied = 0;  // of the columns ranked, those where every ranked PE has the same accuracy
};

// 1 / rank of each ranked PE in a complete column: rank 1 is the highest accuracy, and a tie
// goes to the PE earlier in PE_NAMES (pandas rank(method="first") over rows in PE order)
inline std::vector<double> reciprocal_ranks(const std::vector<double>& ood, const std::vector<bool>& ranked) {
    std::vector<double> rr(NUM_PES, NAN);
    for (int p = 0; p < NUM_PES; p++) {
        if (!ranked[p]) continue;
        int rank = 1;
        for (int q = 0; q < NUM_PES; q++)
            if (ranked[q] && (ood[q] > ood[p] || (ood[q] == ood[p] && q < p))) rank++;
        rr[p] = 1.0 / rank;
    }
    return rr;
}

// whether a column has every ranked PE (at least two of them) at exactly the same OOD accuracy,
// so that its ranks are the tie-break's PE order alone. Accuracies come from exact counts.
inline bool all_tied(const Column& c, const std::vector<bool>& ranked) {
    int first = -1, count = 0;
    for (int p = 0; p < NUM_PES; p++) {
        if (!ranked[p]) continue;
        if (std::isnan(c.ood[p])) return false;
        if (first < 0) first = p;
        if (c.ood[p] != c.ood[first]) return false;
        count++;
    }
    return count >= 2;
}

inline Mrr mean_reciprocal_rank(const std::vector<Column>& columns, const std::vector<bool>& ranked) {
    Mrr m;
    std::vector<double> sum(NUM_PES, 0.0);
    for (const Column& c : columns) {
        bool complete = true;
        for (int p = 0; p < NUM_PES; p++) complete &= !ranked[p] || !std::isnan(c.ood[p]);
        if (!complete) {
            m.dropped++;
            continue;
        }
        std::vector<double> rr = reciprocal_ranks(c.ood, ranked);
        for (int p = 0; p < NUM_PES; p++)
            if (ranked[p]) sum[p] += rr[p];
        m.columns++;
        m.all_tied += all_tied(c, ranked);
    }
    for (int p = 0; p < NUM_PES; p++)
        if (ranked[p] && m.columns > 0) m.of_pe[p] = sum[p] / m.columns;
    return m;
}

// the columns that `keep` accepts
template <typename Keep>
std::vector<Column> columns_where(const std::vector<Column>& columns, Keep keep) {
    std::vector<Column> kept;
    for (const Column& c : columns)
        if (keep(c)) kept.push_back(c);
    return kept;
}

// the MRR over the columns that are not all tied (the tie-break decides nothing there)
inline Mrr mrr_without_all_tied(const std::vector<Column>& columns, const std::vector<bool>& ranked) {
    return mean_reciprocal_rank(columns_where(columns, [&](const Column& c) { return !all_tied(c, ranked); }), ranked);
}

// the columns of the tasks some PE learned: those whose task [setting] is not in `unlearned`
inline std::vector<Column> columns_of_learned(const std::vector<Column>& columns, const std::set<std::string>& unlearned) {
    return columns_where(columns, [&](const Column& c) { return !unlearned.count(group_name(c.task, c.label)); });
}

static std::vector<Column> columns_of(const std::vector<SweepRun>& runs) {
    std::map<std::pair<std::string, uint64_t>, Column> columns;
    std::map<std::string, std::string> dir_of;  // (group, seed, pe) -> the run that filled it
    for (const SweepRun& r : runs) {
        if (!r.finished) continue;
        Column& c = columns[{r.group(), r.seed}];
        c.task = r.task, c.label = r.label, c.seed = r.seed;
        std::string cell = r.group() + " " + r.pe + " " + std::to_string(r.seed);
        if (dir_of.count(cell))
            fail("%s and %s are the same run (%s, seed %llu): remove one of them", dir_of[cell].c_str(), r.dir.c_str(),
                 (r.group() + " " + r.pe).c_str(), (unsigned long long)r.seed);
        dir_of[cell] = r.dir;
        c.ood[r.pe_index] = r.test.all.accuracy();
    }
    std::vector<Column> list;
    for (const auto& kv : columns) list.push_back(kv.second);
    return list;
}

// the PEs that have a finished run in the sweep
static std::vector<bool> ranked_pes(const std::vector<SweepRun>& runs) {
    std::vector<bool> ranked(NUM_PES, false);
    for (const SweepRun& r : runs) ranked[r.pe_index] = ranked[r.pe_index] || r.finished;
    return ranked;
}

// "nope 0.683  t5 0.517 ...": the ranked PEs, best MRR first (ties in PE order)
static std::string mrr_line(const Mrr& m, const std::vector<bool>& ranked) {
    std::vector<int> order;
    for (int p = 0; p < NUM_PES; p++)
        if (ranked[p]) order.push_back(p);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return m.of_pe[a] > m.of_pe[b]; });
    std::string line;
    char buf[64];
    for (int p : order) {
        snprintf(buf, sizeof(buf), "%s%s %.3f", line.empty() ? "" : "  ", PE_NAMES[p], m.of_pe[p]);
        line += buf;
    }
    return line;
}

// ----------------------------------------------------------------------------
// plots

// a group's SVG file name: the task, and the setting's label with only safe characters
static std::string svg_name(const SweepRun& r) {
    std::string name = r.label.empty() ? r.task : r.task + "-" + r.label;
    for (char& ch : name)
        if (!isalnum((unsigned char)ch) && ch != '_' && ch != '-' && ch != '.') ch = '-';
    return name + ".svg";
}

// a run's exact matches at each length, valid (ID) and test (OOD) together
static std::map<int, Tally> tallies_by_length(const SweepRun& r) {
    std::map<int, Tally> t = r.valid.by_length;
    for (const auto& kv : r.test.by_length) t[kv.first].correct += kv.second.correct, t[kv.first].total += kv.second.total;
    return t;
}

// accuracy against length for every PE of one task: the mean over seeds as a line, each seed as faint dots
static std::string group_svg(const std::vector<const SweepRun*>& runs, const std::string& title) {
    std::vector<const SplitResult*> splits;
    for (const SweepRun* r : runs) splits.push_back(&r->valid), splits.push_back(&r->test);
    std::pair<int, int> range = length_range(splits);
    SvgPlot plot = accuracy_plot(range.first, range.second, runs[0]->train_max, title);
    std::vector<std::vector<std::pair<double, double>>> means(NUM_PES);
    std::vector<int> seeds(NUM_PES, 0);
    for (int p = 0; p < NUM_PES; p++) {
        std::map<int, std::pair<double, int>> sum;  // length -> (sum of accuracies, seeds)
        for (const SweepRun* r : runs) {
            if (r->pe_index != p) continue;
            seeds[p]++;
            std::vector<std::pair<double, double>> points;
            for (const auto& kv : tallies_by_length(*r)) {
                points.push_back({kv.first, kv.second.accuracy()});
                sum[kv.first].first += kv.second.accuracy(), sum[kv.first].second++;
            }
            plot.dots(points, plot_color(p));
        }
        for (const auto& kv : sum) means[p].push_back({kv.first, kv.second.first / kv.second.second});
    }
    std::vector<LegendEntry> legend;
    for (int p = 0; p < NUM_PES; p++) {
        if (!seeds[p]) continue;
        plot.line(means[p], plot_color(p));  // lines over every PE's dots
        std::string label = std::string(PE_NAMES[p]) + " (" + std::to_string(seeds[p]) + (seeds[p] == 1 ? " seed)" : " seeds)");
        legend.push_back({label, plot_color(p)});
    }
    legend.push_back({"training lengths", "#000", true});
    legend.push_back({"lines: mean over seeds", nullptr});
    legend.push_back({"dots: one seed each", nullptr});
    plot.legend(legend);
    return plot.finish();
}

// MRR of each ranked PE as bars, with the value on each bar
static std::string mrr_svg(const Mrr& m, const std::vector<bool>& ranked, const std::string& title) {
    std::vector<int> pes;
    for (int p = 0; p < NUM_PES; p++)
        if (ranked[p]) pes.push_back(p);
    SvgPlot plot(-0.5, std::max<int>(1, pes.size()) - 0.5, title, false);
    plot.top += 16;  // room for the value above a bar of 1
    plot.y_grid();
    plot.axis_titles("positional encoding", "mean reciprocal rank");
    if (m.columns == 0)
        plot.add("<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">no (task, seed) has a finished run of every PE</text>\n",
                 (plot.x(plot.x_lo) + plot.x(plot.x_hi)) / 2, plot.y(0.5));
    double bar_width = 0.6 * (plot.x(1) - plot.x(0));
    for (size_t k = 0; k < pes.size(); k++) {
        int p = pes[k];
        plot.add("<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%s</text>\n", plot.x(k), plot.y(0) + 18, PE_NAMES[p]);
        if (m.columns == 0) continue;
        double value = m.of_pe[p];
        plot.add("<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"%s\"/>\n", plot.x(k) - bar_width / 2, plot.y(value),
                 bar_width, plot.y(0) - plot.y(value), plot_color(p));
        plot.add("<text x=\"%g\" y=\"%g\" text-anchor=\"middle\" font-weight=\"bold\">%.3f</text>\n", plot.x(k), plot.y(value) - 6, value);
    }
    return plot.finish();
}

// ----------------------------------------------------------------------------
// report.md

static std::string cell(double v) { return std::isnan(v) ? "-" : format_text("%.3f", v); }

// the distinct values of something about the runs, in order of first appearance: "tiny, small"
template <typename Get>
std::string distinct(const std::vector<SweepRun>& runs, Get get) {
    std::vector<std::string> seen;
    for (const SweepRun& r : runs)
        if (std::find(seen.begin(), seen.end(), get(r)) == seen.end()) seen.push_back(get(r));
    std::string list;
    for (const std::string& v : seen) list += (list.empty() ? "" : ", ") + v;
    return list;
}

static int count_finished(const std::vector<SweepRun>& runs) {
    return (int)std::count_if(runs.begin(), runs.end(), [](const SweepRun& r) { return r.finished; });
}

static std::string header_section(const Sweep& s, const std::vector<bool>& ranked) {
    int finished = count_finished(s.runs);
    std::string md = "# Sweep report: " + s.dir + "\n\n";
    md += format_text("- runs: %d found, %d finished, %d unfinished (listed at the end; they count nowhere)\n", (int)s.runs.size(),
                      finished, (int)s.runs.size() - finished);
    md += "- model presets: " + distinct(s.runs, [](const SweepRun& r) { return r.model; }) +
          "; steps: " + distinct(s.runs, [](const SweepRun& r) { return std::to_string(r.steps); }) + "\n";
    std::set<std::string> tasks;
    for (const SweepRun& r : s.runs) tasks.insert(r.task);
    md += "- tasks: " + join_words(Words(tasks.begin(), tasks.end())) + "\n";
    Words pes;
    for (int p = 0; p < NUM_PES; p++)
        if (ranked[p]) pes.push_back(PE_NAMES[p]);
    md += "- PEs ranked (those with a finished run): " + (pes.empty() ? std::string("none") : join_words(pes)) + "\n";
    if (s.setting_fields.empty())
        md += "- settings: the runs of each task differ only in PE and seed\n";
    else {
        Words pattern;
        for (const std::string& f : s.setting_fields) pattern.push_back(f + "=...");
        md += "- settings: the runs of a task also differ in " + join_words(s.setting_fields) +
              ", so each setting of a task is reported and ranked as a task of its own, `task [" + join_words(pattern) + "]`\n";
    }
    return md + "\n";
}

static std::string mrr_row(const std::string& name, const Mrr& m, const std::vector<bool>& ranked) {
    std::string row = "| " + name + " |";
    for (int p = 0; p < NUM_PES; p++)
        if (ranked[p]) row += " " + cell(m.of_pe[p]) + " |";
    return row + format_text(" %d | %d |\n", m.columns, m.dropped);
}

// a scope's MRR row; under it, where the scope has all-tied columns, its MRR without them, and
// where it has a task no PE learned, its MRR over the tasks some PE learned
static std::string mrr_rows(const std::string& name, const std::vector<Column>& columns, const std::vector<bool>& ranked,
                            const std::set<std::string>& unlearned) {
    Mrr m = mean_reciprocal_rank(columns, ranked);
    std::string md = mrr_row(name, m, ranked);
    if (m.all_tied > 0)
        md += mrr_row(name + format_text(", without %d all-tied column%s", m.all_tied, m.all_tied == 1 ? "" : "s"),
                      mrr_without_all_tied(columns, ranked), ranked);
    std::set<std::string> tasks, learned_tasks;
    for (const Column& c : columns) {
        std::string group = group_name(c.task, c.label);
        tasks.insert(group);
        if (!unlearned.count(group)) learned_tasks.insert(group);
    }
    if (learned_tasks.size() < tasks.size()) {
        Mrr l = mean_reciprocal_rank(columns_of_learned(columns, unlearned), ranked);
        int n = (int)learned_tasks.size();
        std::string which = n == 0   ? std::string("only the tasks some PE learned: none")
                            : n == 1 ? std::string("only the task some PE learned")
                                     : format_text("only the %d tasks some PE learned", n);
        md += mrr_row(name + ", " + which + format_text(" (%d column%s)", l.columns, l.columns == 1 ? "" : "s"), l, ranked);
    }
    return md;
}

// MRR over every column, then over the columns of each task family, and of each setting
static std::string mrr_section(const std::vector<Column>& columns, const std::vector<bool>& ranked, const Mrr& all,
                               const std::set<std::string>& unlearned, int tasks) {
    std::string first_listed = "the first PE";
    for (int p = NUM_PES - 1; p >= 0; p--)
        if (ranked[p]) first_listed = PE_NAMES[p];
    std::string md = "## Mean reciprocal rank\n\n";
    md += "For every (task, seed) the PEs are ranked by overall OOD test accuracy (rank 1 is best; a tie goes to the PE listed "
          "first); a PE's MRR is the mean of 1/rank over the columns that have a finished run of every PE. " +
          format_text("%d columns ranked, %d dropped for a missing PE.\n\n", all.columns, all.dropped);
    md += format_text("%d of the %d ranked columns are all tied (every PE at exactly the same OOD accuracy, typically a task "
                      "no PE learned). ",
                      all.all_tied, all.columns) +
          "Such a column ranks the PEs in listed order by the tie-break alone, handing " +
          first_listed + " a free 1 and biasing the MRR; the paper's MRR keeps them, and each scope that has any is followed "
          "by its MRR without them. " +
          format_text("%d of the %d tasks %s learned by no PE (best mean ID accuracy < %.1f, noted under the task's table); ",
                      (int)unlearned.size(), tasks, unlearned.size() == 1 ? "was" : "were", NOT_LEARNED_ID) +
          "their ranks are noise (a few lucky OOD answers, or PE order, rank PEs that all failed), so each scope that has such "
          "a task is followed last by its MRR over only the tasks some PE learned.\n\n";
    md += "| scope |";
    for (int p = 0; p < NUM_PES; p++)
        if (ranked[p]) md += std::string(" ") + PE_NAMES[p] + " |";
    md += " ranked | dropped |\n|---|";
    for (int p = 0; p < NUM_PES; p++)
        if (ranked[p]) md += "---|";
    md += "---|---|\n" + mrr_rows("**all**", columns, ranked, unlearned);
    std::set<std::string> families, labels;
    for (const Column& c : columns) families.insert(family_of(c.task)), labels.insert(c.label);
    for (const std::string& f : families) {
        std::vector<Column> of_family = columns_where(columns, [&](const Column& c) { return family_of(c.task) == f; });
        md += mrr_rows("family " + f, of_family, ranked, unlearned);
    }
    if (labels.size() > 1)
        for (const std::string& l : labels) {
            std::vector<Column> of_setting = columns_where(columns, [&](const Column& c) { return c.label == l; });
            md += mrr_rows("setting " + l, of_setting, ranked, unlearned);
        }
    return md + "\n![MRR of each PE](mrr.svg)\n\n";
}

static std::string lengths_of(const std::map<int, Tally>& by_length) {
    return by_length.empty() ? "none" : format_text("%d-%d", by_length.begin()->first, by_length.rbegin()->first);
}

// one task's table: a row per PE, over its seeds; a note under it where no PE learned the task
static std::string group_section(const std::string& group, const std::vector<const SweepRun*>& runs, const Mrr& m, const std::string& svg) {
    std::string md = "### " + group + "\n\n";
    md += "ID (valid) lengths " + lengths_of(runs[0]->valid.by_length) + ", OOD (test) lengths " + lengths_of(runs[0]->test.by_length) +
          format_text("; seeds with a finished run of every PE: %d", m.columns) +
          (m.all_tied ? format_text(", %d of them all tied (every PE the same OOD accuracy).\n\n", m.all_tied) : std::string(".\n\n"));
    md += "| PE | OOD test accuracy (mean) | OOD min-max over seeds | ID valid accuracy (mean) | seeds | MRR in this task |\n";
    md += "|---|---|---|---|---|---|\n";
    for (int p = 0; p < NUM_PES; p++) {
        double ood = 0, id = 0, lo = INFINITY, hi = -INFINITY;
        int seeds = 0;
        for (const SweepRun* r : runs) {
            if (r->pe_index != p) continue;
            double a = r->test.all.accuracy();
            ood += a, id += r->valid.all.accuracy(), lo = std::min(lo, a), hi = std::max(hi, a), seeds++;
        }
        if (seeds == 0) continue;
        md += format_text("| %s | %.3f | %.3f-%.3f | %.3f | %d | %s |\n", PE_NAMES[p], ood / seeds, lo, hi, id / seeds, seeds,
                          cell(m.of_pe[p]).c_str());
    }
    if (!learned(runs))
        md += format_text("\nNo PE learned this task in distribution (best mean ID accuracy %.3f < %.1f): its ranks are noise.\n",
                          best_mean_id(runs), NOT_LEARNED_ID);
    return md + "\n![" + group + "](" + svg + ")\n\n";
}

static std::string unfinished_section(const std::vector<SweepRun>& runs) {
    std::string md;
    for (const SweepRun& r : runs)
        if (!r.finished) md += "- `" + r.dir + "`: " + r.group() + ", " + r.pe + ", seed " + std::to_string(r.seed) + "\n";
    return md.empty() ? "" : "## Unfinished runs (no results.json)\n\n" + md;
}

// Reads the sweep, writes report.md and the SVGs into it; returns the summary for stdout.
static std::string write_report(const std::string& sweep_dir) {
    Sweep s = read_sweep(sweep_dir);
    std::vector<bool> ranked = ranked_pes(s.runs);
    std::vector<Column> columns = columns_of(s.runs);
    Mrr all = mean_reciprocal_rank(columns, ranked);
    std::map<std::string, std::vector<const SweepRun*>> groups;  // task [label] -> its finished runs
    for (const SweepRun& r : s.runs)
        if (r.finished) groups[r.group()].push_back(&r);
    std::set<std::string> unlearned;  // the tasks [settings] no PE learned in distribution
    for (const auto& g : groups)
        if (!learned(g.second)) unlearned.insert(g.first);

    std::string md = header_section(s, ranked) + mrr_section(columns, ranked, all, unlearned, (int)groups.size()) + "## Tasks\n\n";
    for (const auto& g : groups) {
        const std::string& task = g.second[0]->task;
        const std::string& label = g.second[0]->label;
        std::vector<Column> of_group = columns_where(columns, [&](const Column& c) { return c.task == task && c.label == label; });
        Mrr m = mean_reciprocal_rank(of_group, ranked);
        std::string svg = svg_name(*g.second[0]);
        write_text((fs::path(sweep_dir) / svg).string(), group_svg(g.second, g.first + ": accuracy against length"));
        md += group_section(g.first, g.second, m, svg);
    }
    md += unfinished_section(s.runs);
    write_text((fs::path(sweep_dir) / "report.md").string(), md);
    write_text((fs::path(sweep_dir) / "mrr.svg").string(),
               mrr_svg(all, ranked, format_text("MRR of each PE over %d (task, seed) columns", all.columns)));

    int finished = count_finished(s.runs);
    std::string summary = format_text("%s: %d runs, %d finished, %d unfinished; %d columns ranked, %d dropped for a missing PE\n",
                                      sweep_dir.c_str(), (int)s.runs.size(), finished, (int)s.runs.size() - finished, all.columns,
                                      all.dropped);
    summary += format_text("wrote %s/report.md, mrr.svg and %d task plots\n", sweep_dir.c_str(), (int)groups.size());
    // the MRR without the all-tied columns, over the tasks some PE learned, then the paper's MRR as the last line
    if (all.all_tied == 0)
        summary += format_text("all-tied columns: none of %d\n", all.columns);
    else {
        Mrr untied = mrr_without_all_tied(columns, ranked);
        summary += format_text("MRR without the %d all-tied columns, over %d: %s\n", all.all_tied, untied.columns,
                               untied.columns ? mrr_line(untied, ranked).c_str() : "none");
    }
    if (!unlearned.empty()) {
        Mrr l = mean_reciprocal_rank(columns_of_learned(columns, unlearned), ranked);
        summary += format_text("MRR over the tasks some PE learned (%d columns): %s\n", l.columns,
                               l.columns ? mrr_line(l, ranked).c_str() : "none");
    }
    return summary + format_text("MRR over %d columns: %s\n", all.columns, all.columns ? mrr_line(all, ranked).c_str() : "none");
}

#ifndef TESTING
int main(int argc, char** argv) {
    const char* usage = "usage: dev/report SWEEP_DIR  (a directory of run directories written by ./train)";
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return printf("%s\n", usage), 0;
    try {
        if (argc != 2) fail("%s", usage);
        printf("%s", write_report(argv[1]).c_str());
    } catch (const std::exception& e) {  // Error from fail(), or a file system error
        fflush(stdout);
        fprintf(stderr, "report: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
#endif
