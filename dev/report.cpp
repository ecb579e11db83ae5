/*
 dev/report.cpp: the sweep report. A sweep is a directory whose subdirectories (at any depth) are
 run directories written by ./train. The report reads them all and writes, into the sweep
 directory, report.md (tables per task, the mean reciprocal rank of the methods and how sure its
 ranking is, below), one SVG per task (accuracy against length, every method overlaid) and
 mrr.svg; it prints a short summary whose last line is the MRR of each method.

 Usage:  make dev/report && ./dev/report sweeps/NAME
 Writes: NAME/report.md, NAME/TASK.svg for each task (TASK-LABEL.svg where a task has several
         settings, see below) and NAME/mrr.svg. Bad input: one error line, exit status 1.
 With TESTING defined there is no main(): test/test_report.cpp includes this file.

 Invariants and choices:
   - A run directory is any directory holding a config.json. It counts only when it also holds
     results.json (the run finished); the others are listed as unfinished and enter no table,
     plot or rank.
   - What the report ranks is a method: a PE, plain or inside the wrappers its run put around it,
     named by the PE and one suffix per wrapper, in this order: "+rand" (config.json's
     "random-positions" is not 0), "+abacus" (config.json's "abacus" is true), "+coupled"
     (config.json's "position-coupling" is true), "+layers" (config.json's "pe-per-layer" is
     true: the PE's learned values once per layer), and "+" and
     results.json's "rope_scaling" where that is not "none" ("rope+pi": an evaluation of a rope
     checkpoint with its angles rescaled, whose config.json is the trained run's own, so only its
     results tell it apart), and "+drawn" where results.json's "eval_positions" is "drawn" (a
     --random-positions model evaluated at drawn positions: "ape+rand+drawn"), and "+window" and
     results.json's "attention_window" where that is not "none" ("alibi+window0:20": evaluated
     with layer 0's queries seeing their 20 latest tokens), and "+latest" or "+stepN" where
     results.json's "evaluated" says the parameters were a run's latest or its step-N snapshot
     rather than its best checkpoint. Runs from before these fields are plain PEs.
   - Wrappers are not settings. A wrapper is what is under test, a rival of the plain PE (does
     fire+rand generalize further than nope?), so it is ranked in the same columns; a setting is
     what the rivals of a column share.
   - Accuracy is recomputed from the exact counts (correct / total), not read from the
     6-decimal "accuracy" fields, so that equal counts are exact ties.
   - MRR as the paper's released notebook computes it: a column is a (task, seed);
     in each column the methods are ranked by overall OOD test accuracy, descending, a tie going
     to the method listed first (pandas rank(method="first")); RR = 1 / rank; a method's MRR is
     the mean of its RR over the columns that have every ranked method, and the others are
     dropped (and counted). The ranked methods are those with a finished run somewhere in the
     sweep, so that a sweep of two PEs still ranks them. They are listed, and tie-broken, in
     PE_NAMES order, each plain PE before its variants, and the variants of one PE in the order
     of their suffixes as strings ("+abacus", "+coupled", "+pi", "+rand", "+rand+abacus").
     The notebook's order was another, the one its results happened to be read in (its saved
     tables: Rotary, ALiBi, T5, APE, No PE), so its ties went to RoPE first and NoPE last, where
     here they go to NoPE first. Neither means anything: every MRR is also given with its ties
     shared (TIES_SHARED), which no order can move.
   - The tie-break biases that MRR: a column where every ranked method has exactly the same OOD
     accuracy (an "all-tied" column, typically a task no PE learned, all at 0.000) still ranks
     the methods 1, 2, 3... in listed order, so nope gains a free 1 and the last of n methods a
     free 1/n. The paper's MRR stays the headline; next to it (report.md and the summary) is the
     MRR over the columns that are not all tied, and each task table says when no method's mean
     ID (valid) accuracy got halfway from what the most common answer, always given, scores
     (results.json's valid_majority_answer, 0 for runs from before it) to 1: 0.5 where the
     answers vary, 0.75 for a yes-or-no question. Then the task was not learned and its ranks
     are noise.
   - Not-all-tied is not enough: in a task no PE learned, one method may get a handful of OOD
     answers right while the rest tie at 0, so that luck and listed order rank it all the same.
     Each scope that holds such a task (the one rule, `learned`, of the note) is therefore
     followed by its MRR over the columns of the tasks some PE learned, and the summary prints
     that MRR too, on the line before the paper's MRR (nothing there when every task was learned).
   - In a task some PE learned, one run may still not learn it (a seed that never leaves its
     loss plateau): under the task's table, the runs whose own ID accuracy is below the same bar
     are named, since their OOD accuracy measures that run's failure, not its method's reach.
     They stay in the table and the MRR, as the paper's protocol counts every seed.
   - Runs are ranked only against runs of the same setting. A run's setting is its config.json
     without task, pe and its wrappers (random-positions, abacus, position-coupling,
     pe-per-layer), seed and parameters (the
     parameter count depends on the PE); its "precision" tf32 counts as fp32 (setting_value says
     why). Where the runs of a task have several settings, each
     setting of the task is a task of its own, "TASK [LABEL]", and the label names the config
     fields, taken greedily in config.json's order, that tell the settings of any one task apart,
     e.g. "copy [model=small]". A column is then (task [label], seed): a `small` copy run is
     never ranked against a `tiny` one.
   - A task's family is its name up to the first underscore: copy_rdc -> copy, sort_multi -> sort.
     The report gives the MRR over all columns, over each family's and over each setting's.
   - Two finished runs of the same task, setting, method and seed are an error, not a silent
     choice (fire and fire+rand of one seed are two methods, not the same run twice).
   - How sure the ranking is, under the MRR table ("How sure"): the ranked columns drawn again
     10,000 times with replacement, each task's seeds alone and then the tasks too, with the
     central 90% of each method's MRR over the draws and the share of draws it leads
     (redraw_columns), by the listed order and with ties shared; the summary prints those
     shares over all the columns. The draws are seeded, so a sweep always gives the same report.
   - Each task table also gives in how many of its ranked columns each method ranks first (the
     MRR's rule, tie-break included), and the OOD per-token accuracy (teacher-forced, <eos>
     counted; results.json's "test_tokens"), "-" for runs from before it.
*/
#include <algorithm>
#include <cctype>
#include <climits>
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
#include "dev/tool.h"
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

// train.cu nests three deep; the reader recurses, so a limit keeps a damaged file from
// overflowing the stack
static const int MAX_JSON_DEPTH = 64;

struct JsonReader {
    const std::string& text;
    const std::string& source;  // the file, for messages
    size_t at = 0;
    int depth = 0;  // the arrays and objects open around the value being read

    int line() const { return 1 + (int)std::count(text.begin(), text.begin() + std::min(at, text.size()), '\n'); }
    [[noreturn]] void error(const char* expected) { fail("%s: malformed JSON at line %d: expected %s", source.c_str(), line(), expected); }
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
        bool nests = at < text.size() && (text[at] == '{' || text[at] == '[');
        if (nests && ++depth > MAX_JSON_DEPTH)
            fail("%s: JSON nested more than %d deep at line %d: not a file of a run", source.c_str(), MAX_JSON_DEPTH, line());
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
        if (nests) depth--;
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
    // in the order of Json::Kind
    static const char* const KIND_NAMES[] = {"a number", "a string", "true or false", "an array", "an object"};
    const Json* j = object.kind == Json::OBJECT ? object.find(key) : nullptr;
    if (!j) fail("%s: no field \"%s\" where one was expected", source.c_str(), key.c_str());
    if (j->kind != kind) fail("%s: field \"%s\" should be %s", source.c_str(), key.c_str(), KIND_NAMES[kind]);
    return *j;
}

// object.key, a number that must be a whole one an int holds
static int int_field(const Json& object, const std::string& key, const std::string& source) {
    const Json& j = field(object, key, Json::NUMBER, source);
    if (!(j.number == floor(j.number) && fabs(j.number) <= INT_MAX))
        fail("%s: field \"%s\" should be a whole number of at most %d, not %s", source.c_str(), key.c_str(), INT_MAX, j.text.c_str());
    return (int)j.number;
}

// object.key, a count: a whole number of at least 0 that a double holds exactly (a token tally may
// pass an int's 2^31, as report.h's Tally allows)
static int64_t count_field(const Json& object, const std::string& key, const std::string& source) {
    const Json& j = field(object, key, Json::NUMBER, source);
    const double exact = 9007199254740992.0;  // 2^53
    if (!(j.number == floor(j.number) && j.number >= 0 && j.number <= exact))
        fail("%s: field \"%s\" should be a count, a whole number from 0 to 2^53, not %s", source.c_str(), key.c_str(), j.text.c_str());
    return (int64_t)j.number;
}

static double fraction_field(const Json& object, const std::string& key, const std::string& source) {
    const Json& j = field(object, key, Json::NUMBER, source);
    if (!(j.number >= 0 && j.number <= 1)) fail("%s: field \"%s\" should be a fraction from 0 to 1, not %s", source.c_str(), key.c_str(), j.text.c_str());
    return j.number;
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

// What the report ranks: a PE, plain or inside the wrappers its run put around it (see the top)
struct Method {
    int pe = 0;            // index into PE_NAMES
    std::string wrappers;  // "" for the plain PE, else a suffix per wrapper: "+rand", "+rand+abacus", "+pi", ...

    std::string name() const { return PE_NAMES[pe] + wrappers; }
    // the listed order, which is also the tie-break: PE_NAMES order, then the plain PE (the empty
    // suffix sorts first), then its variants by suffix
    bool operator<(const Method& o) const { return pe != o.pe ? pe < o.pe : wrappers < o.wrappers; }
    bool operator==(const Method& o) const { return pe == o.pe && wrappers == o.wrappers; }
    bool operator!=(const Method& o) const { return !(*this == o); }
};

struct SweepRun {
    std::string dir;  // relative to the sweep directory
    std::string task, model;
    Method method;
    int steps = 0;
    uint64_t seed = 0;
    std::map<std::string, std::string> setting;  // config fields but those of NOT_SETTING_FIELDS: name -> value as written
    std::string label;                           // the setting's label ("" when a task has one setting)
    bool finished = false;                       // has results.json
    int train_max = 0;
    SplitResult valid, test;
    Tally test_tokens;  // per-token OOD counts; total 0 where results.json is from before them
    double valid_majority = NAN, test_majority = NAN;  // one constant answer's accuracy; NAN where results.json is from before it

    std::string group() const { return group_name(task, label); }
};

// a split of results.json: {"accuracy", "correct", "total", "by_length": [{"length", "correct", "total", "accuracy"}]}
static SplitResult read_split(const Json& split, const std::string& source) {
    SplitResult r;
    r.all.correct = count_field(split, "correct", source);
    r.all.total = count_field(split, "total", source);
    for (const Json& row : field(split, "by_length", Json::ARRAY, source).items) {
        Tally& t = r.by_length[int_field(row, "length", source)];
        t.correct = count_field(row, "correct", source);
        t.total = count_field(row, "total", source);
    }
    return r;
}

// the config fields that are no part of a run's setting: the task (grouped by itself), the method
// (pe and its wrappers: rivals within a column, not settings apart), the seed (the column), the
// parameter count (which the PE implies), the snapshots kept (which change no step) and the
// attention's algorithm (simple or fused: one function, its sums in another order)
static const char* const NOT_SETTING_FIELDS[] = {"task", "pe", "random-positions", "abacus", "position-coupling", "pe-per-layer", "seed", "parameters",
                                                 "keep-every", "attention"};

// Config fields that train.cu gained after runs had been made, each with the value every run
// from before ran with: a config.json without the field is read as having that value, so that a
// sweep finished by a later commit stays one setting.
static const struct {
    const char* name;
    const char* before;
} FIELDS_ADDED_LATER[] = {{"skip-nonfinite", "false"}, {"bos", "false"}, {"scratchpad", "none"}, {"reverse-digits", "false"},
                          {"index-hints", "false"}, {"zero-pad", "false"}, {"cope-max", "0"}, {"sort-pool", "0"}, {"pack", "false"},
                          {"pad-to-multiple", "0"}, {"precision", "fp32"}};

// "precision": tf32 reads as fp32. Runs from before the field computed in one or the other (the
// CPU in fp32, a GPU in tf32 by default) without saying which, so the two must be one setting
// for those runs to be ranked at all; bf16, which rounds every operand to 7 mantissa bits (tf32:
// 10, and only the GPU's), is a setting apart.
static std::string setting_value(const std::string& field, const std::string& value) {
    return field == "precision" && value == "tf32" ? "fp32" : value;
}

static bool is_setting_field(const std::string& name) {
    for (const char* f : NOT_SETTING_FIELDS)
        if (name == f) return false;
    return true;
}

// the suffixes of the wrappers config.json records; runs from before a wrapper's field lack it (off)
static std::string config_wrappers(const Json& config, const std::string& path) {
    std::string wrappers;
    if (config.find("random-positions") && int_field(config, "random-positions", path) != 0) wrappers += "+rand";
    if (config.find("abacus") && field(config, "abacus", Json::BOOLEAN, path).text == "true") wrappers += "+abacus";
    if (config.find("position-coupling") && field(config, "position-coupling", Json::BOOLEAN, path).text == "true") wrappers += "+coupled";
    if (config.find("pe-per-layer") && field(config, "pe-per-layer", Json::BOOLEAN, path).text == "true") wrappers += "+layers";
    return wrappers;
}

static void read_results(SweepRun* run, const std::string& path) {
    Json results = parse_json(read_text(path), path);
    if (field(results, "task", Json::STRING, path).text != run->task ||
        field(results, "pe", Json::STRING, path).text != PE_NAMES[run->method.pe] ||
        field(results, "seed", Json::NUMBER, path).text != std::to_string(run->seed))
        fail("%s: task, pe or seed differ from the run's config.json", path.c_str());
    run->finished = true;
    run->train_max = int_field(results, "train_max", path);
    run->valid = read_split(field(results, "valid", Json::OBJECT, path), path);
    run->test = read_split(field(results, "test", Json::OBJECT, path), path);
    if (results.find("test_tokens")) run->test_tokens = read_split(field(results, "test_tokens", Json::OBJECT, path), path).all;
    if (results.find("valid_majority_answer")) run->valid_majority = fraction_field(results, "valid_majority_answer", path);
    if (results.find("test_majority_answer")) run->test_majority = fraction_field(results, "test_majority_answer", path);
    // an evaluation with RoPE's angles rescaled is a method of its own, though its config.json is
    // the trained run's; results from before the field are unscaled
    std::string scaling = results.find("rope_scaling") ? field(results, "rope_scaling", Json::STRING, path).text : "none";
    if (scaling != "none") run->method.wrappers += "+" + scaling;
    // so is a --random-positions model evaluated at drawn positions (results from before the field: at 0..n-1)
    if (results.find("eval_positions") && field(results, "eval_positions", Json::STRING, path).text == "drawn") run->method.wrappers += "+drawn";
    // and so is an evaluation with a layer's attention windowed ("alibi+window0:20")
    std::string window = results.find("attention_window") ? field(results, "attention_window", Json::STRING, path).text : "none";
    if (window != "none") run->method.wrappers += "+window" + window;
    // and so is an evaluation of other parameters than the best checkpoint's: a run's latest
    // (--load state.bin, "+latest") or a --keep-every snapshot ("+step1000")
    std::string evaluated = results.find("evaluated") ? field(results, "evaluated", Json::STRING, path).text : "best";
    if (evaluated == "latest") run->method.wrappers += "+latest";
    else if (evaluated == "snapshot") run->method.wrappers += "+step" + std::to_string(int_field(results, "evaluated_step", path));
    else if (evaluated != "best") fail("%s: \"evaluated\" is '%s' (valid: best latest snapshot)", path.c_str(), evaluated.c_str());
}

// the run in `dir`; adds the names of its setting's fields that are new to field_order
static SweepRun read_run(const fs::path& sweep, const fs::path& dir, std::vector<std::string>* field_order) {
    std::string path = (dir / "config.json").string();
    Json config = parse_json(read_text(path), path);
    SweepRun run;
    run.dir = dir.lexically_relative(sweep).string();
    run.task = field(config, "task", Json::STRING, path).text;
    std::string pe = field(config, "pe", Json::STRING, path).text;
    try {
        run.method.pe = find_pe(pe);
    } catch (const Error& e) {
        fail("%s: %s", path.c_str(), e.what());
    }
    run.method.wrappers = config_wrappers(config, path);
    run.model = field(config, "model", Json::STRING, path).text;
    run.steps = int_field(config, "steps", path);
    run.seed = strtoull(field(config, "seed", Json::NUMBER, path).text.c_str(), nullptr, 10);
    for (size_t k = 0; k < config.keys.size(); k++)
        if (is_setting_field(config.keys[k])) {
            run.setting[config.keys[k]] = setting_value(config.keys[k], config.items[k].text);
            if (std::find(field_order->begin(), field_order->end(), config.keys[k]) == field_order->end())
                field_order->push_back(config.keys[k]);
        }
    for (const auto& added : FIELDS_ADDED_LATER)
        if (!config.find(added.name)) run.setting[added.name] = added.before;
    if (fs::exists(dir / "results.json")) read_results(&run, (dir / "results.json").string());
    return run;
}

// Labels each run's setting with fields that tell the settings of a task apart, taken greedily
// (not always the fewest): a field is named when two finished runs of one task agree on every
// field named so far but differ in it. Fields follow config.json's order, so `model` comes before what it implies.
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

// DIR and every directory below it that holds a config.json. Links to directories are followed
// (one report over links to several sweeps), each real directory once, reached by the first
// path in name order: a run linked twice counts once, under the same name every time, and a
// link back up the tree cannot loop.
static void find_run_directories(const fs::path& dir, std::set<fs::path>* seen, std::vector<fs::path>* runs) {
    if (!seen->insert(fs::canonical(dir)).second) return;
    if (fs::exists(dir / "config.json")) runs->push_back(dir);
    std::vector<fs::path> children;
    for (const fs::directory_entry& e : fs::directory_iterator(dir))
        if (e.is_directory()) children.push_back(e.path());
    std::sort(children.begin(), children.end());
    for (const fs::path& child : children) find_run_directories(child, seen, runs);
}

static Sweep read_sweep(const std::string& sweep_dir) {
    fs::path sweep(sweep_dir);
    if (!fs::is_directory(sweep))
        fail("sweep directory '%s' %s (give the directory that holds the run directories)", sweep_dir.c_str(),
             fs::exists(sweep) ? "is a file, not a directory" : "does not exist");
    std::vector<fs::path> dirs;
    std::set<fs::path> seen;
    find_run_directories(sweep, &seen, &dirs);
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

// the best mean (over seeds) ID accuracy of any method among one task's runs; -inf when there are none
inline double best_mean_id(const std::vector<const SweepRun*>& runs) {
    std::map<std::string, std::pair<double, int>> id;  // method -> (sum of ID accuracies, seeds)
    for (const SweepRun* r : runs) {
        std::pair<double, int>& sum = id[r->method.name()];
        sum.first += r->valid.all.accuracy(), sum.second++;
    }
    double best = -INFINITY;
    for (const auto& kv : id) best = std::max(best, kv.second.first / kv.second.second);
    return best;
}

// What one constant answer, the most common, scores in distribution or out of it (results.json's
// valid_ or test_majority_answer, the same in every run of a task's data); NAN where the runs are
// from before the field.
inline double majority_of(const std::vector<const SweepRun*>& runs, double SweepRun::*split_majority) {
    double majority = NAN;
    for (const SweepRun* r : runs)
        if (!std::isnan(r->*split_majority)) majority = std::isnan(majority) ? r->*split_majority : std::max(majority, r->*split_majority);
    return majority;
}

// A task counts as learned when some method's mean ID accuracy gets halfway from what the most
// common answer scores to 1: 0.5 where the answers vary (copy), 0.75 for a yes-or-no question
// (parity, LEGO), whose coin-flip 0.5 is no sign of learning; runs that do not record that score
// are held to 0.5. The note under a task's table and the MRR over the tasks some PE learned both
// follow this one rule.
inline double learned_bar(const std::vector<const SweepRun*>& runs) {
    double majority = majority_of(runs, &SweepRun::valid_majority);
    return (1 + (std::isnan(majority) ? 0 : majority)) / 2;
}
inline bool learned(const std::vector<const SweepRun*>& runs) { return best_mean_id(runs) >= learned_bar(runs); }

inline std::string family_of(const std::string& task) { return task.substr(0, task.find('_')); }

// one (task, seed): the OOD test accuracy of each ranked method, in the listed order, NAN where
// the method has no finished run
struct Column {
    std::string task, label;
    uint64_t seed = 0;
    std::vector<double> ood;
};

struct Mrr {
    std::vector<double> of_method;  // by ranked method, in the listed order; NAN when no column was ranked
    int columns = 0, dropped = 0;
    int all_tied = 0;  // of the columns ranked, those where every ranked method has the same accuracy
};

// How a tie is ranked: the paper's way, to the method listed earlier (pandas rank(method="first")
// over rows in the listed order); or shared, each tied method getting the mean of the 1/rank its
// block of ties spans (two tied for first: (1 + 1/2) / 2 each), which no listing order can move.
enum Ties { TIES_LISTED, TIES_SHARED };

// 1 / rank of each method in a complete column: rank 1 is the highest accuracy
inline std::vector<double> reciprocal_ranks(const std::vector<double>& ood, Ties ties = TIES_LISTED) {
    std::vector<double> rr(ood.size());
    for (size_t k = 0; k < ood.size(); k++) {
        int above = 0, before = 0, tied = 0;  // better; tied and listed earlier; tied, itself included
        for (size_t j = 0; j < ood.size(); j++) {
            above += ood[j] > ood[k];
            before += ood[j] == ood[k] && j < k;
            tied += ood[j] == ood[k];
        }
        if (ties == TIES_LISTED) {
            rr[k] = 1.0 / (above + before + 1);
            continue;
        }
        double sum = 0;
        for (int r = above + 1; r <= above + tied; r++) sum += 1.0 / r;
        rr[k] = sum / tied;
    }
    return rr;
}

static bool complete(const Column& c) {
    return std::none_of(c.ood.begin(), c.ood.end(), [](double a) { return std::isnan(a); });
}

// whether a column has every ranked method (at least two of them) at exactly the same OOD
// accuracy, so that its ranks are the tie-break's order alone. Accuracies come from exact counts.
inline bool all_tied(const Column& c) {
    if (c.ood.size() < 2 || !complete(c)) return false;
    return std::all_of(c.ood.begin(), c.ood.end(), [&](double a) { return a == c.ood[0]; });
}

inline Mrr mean_reciprocal_rank(const std::vector<Column>& columns, const std::vector<Method>& ranked, Ties ties = TIES_LISTED) {
    Mrr m;
    m.of_method.assign(ranked.size(), NAN);
    std::vector<double> sum(ranked.size(), 0.0);
    for (const Column& c : columns) {
        if (!complete(c)) {
            m.dropped++;
            continue;
        }
        std::vector<double> rr = reciprocal_ranks(c.ood, ties);
        for (size_t k = 0; k < ranked.size(); k++) sum[k] += rr[k];
        m.columns++;
        m.all_tied += all_tied(c);
    }
    for (size_t k = 0; k < ranked.size() && m.columns > 0; k++) m.of_method[k] = sum[k] / m.columns;
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
inline Mrr mrr_without_all_tied(const std::vector<Column>& columns, const std::vector<Method>& ranked) {
    return mean_reciprocal_rank(columns_where(columns, [](const Column& c) { return !all_tied(c); }), ranked);
}

// the columns of the tasks some PE learned: those whose task [setting] is not in `unlearned`
inline std::vector<Column> columns_of_learned(const std::vector<Column>& columns, const std::set<std::string>& unlearned) {
    return columns_where(columns, [&](const Column& c) { return !unlearned.count(group_name(c.task, c.label)); });
}

// the methods that have a finished run in the sweep, in the listed order (Method::operator<)
static std::vector<Method> ranked_methods(const std::vector<SweepRun>& runs) {
    std::set<Method> finished;
    for (const SweepRun& r : runs)
        if (r.finished) finished.insert(r.method);
    return std::vector<Method>(finished.begin(), finished.end());
}

// a ranked method's place in the list: its entry in a column, its colour in the plots
static size_t place_of(const Method& m, const std::vector<Method>& ranked) {
    return std::find(ranked.begin(), ranked.end(), m) - ranked.begin();
}

static std::vector<Column> columns_of(const std::vector<SweepRun>& runs, const std::vector<Method>& ranked) {
    std::map<std::pair<std::string, uint64_t>, Column> columns;
    std::map<std::string, std::string> dir_of;  // (group, seed, method) -> the run that filled it
    for (const SweepRun& r : runs) {
        if (!r.finished) continue;
        Column& c = columns[{r.group(), r.seed}];
        c.task = r.task, c.label = r.label, c.seed = r.seed;
        c.ood.resize(ranked.size(), NAN);  // NAN until a run of the method fills it
        std::string cell = r.group() + " " + r.method.name() + " " + std::to_string(r.seed);
        if (dir_of.count(cell))
            fail("%s and %s are the same run (%s, seed %llu): remove one of them", dir_of[cell].c_str(), r.dir.c_str(),
                 (r.group() + " " + r.method.name()).c_str(), (unsigned long long)r.seed);
        dir_of[cell] = r.dir;
        c.ood[place_of(r.method, ranked)] = r.test.all.accuracy();
    }
    std::vector<Column> list;
    for (const auto& kv : columns) list.push_back(kv.second);
    return list;
}

// the places of the ranked methods, best first by `score` (ties in listed order)
static std::vector<size_t> best_first(const std::vector<double>& score) {
    std::vector<size_t> order;
    for (size_t k = 0; k < score.size(); k++) order.push_back(k);
    // compared to 1e-9: equal sums of 1/rank taken in another order can differ in their last bit
    auto key = [&](size_t k) { return std::isnan(score[k]) ? LLONG_MIN : std::llround(score[k] * 1e9); };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) > key(b); });
    return order;
}

// "nope 0.683  fire+rand 0.517 ...": the ranked methods, best MRR first (ties in listed order)
static std::string mrr_line(const Mrr& m, const std::vector<Method>& ranked) {
    std::string line;
    for (size_t k : best_first(m.of_method))
        line += format_text("%s%s %.3f", line.empty() ? "" : "  ", ranked[k].name().c_str(), m.of_method[k]);
    return line;
}

// ----------------------------------------------------------------------------
// how sure a ranking is: the columns drawn again

// An MRR is a mean over a few (task, seed) columns, three seeds a task in the paper: would its
// ranking hold with other seeds, or other tasks? A bootstrap answers as far as the columns at
// hand can: draw them again, with replacement, many times, and see how far each method's MRR
// moves and how often each comes first. Two draws: each task's seeds again, the tasks as they
// are (the noise of training alone); or the tasks again, then each drawn task's seeds (which
// tasks a benchmark holds is a draw too). A task keeps its number of seeds, so it weighs what
// it weighs in the MRR. Drawing again from n seeds spreads a mean by sqrt((n - 1) / n) of its
// true spread (0.82 for three), so the intervals are if anything too narrow.
static const int REDRAWS = 10000;
static const uint64_t REDRAW_SEED = 20231110;  // fixed: the same sweep always gives the same report

struct Redrawn {
    std::vector<double> lo, hi;  // by ranked method: the central 90% of its MRR over the draws
    std::vector<double> first;   // by ranked method: the share of draws in which its MRR is highest
};

// The MRR of each method over the complete columns drawn again (tasks too where redraw_tasks),
// ties in a column ranked as `ties` says. A draw that ties methods for first MRR shares that
// draw among them: MRRs are compared within 1e-9, since equal sums of 1/rank taken in another
// order can differ in their last bit.
inline Redrawn redraw_columns(const std::vector<Column>& columns, size_t methods, bool redraw_tasks, Ties ties = TIES_LISTED) {
    std::map<std::string, std::vector<std::vector<double>>> by_task;  // task [label] -> its columns' reciprocal ranks
    for (const Column& c : columns)
        if (complete(c)) by_task[group_name(c.task, c.label)].push_back(reciprocal_ranks(c.ood, ties));
    std::vector<const std::vector<std::vector<double>>*> tasks;
    for (const auto& kv : by_task) tasks.push_back(&kv.second);
    Redrawn r;
    r.first.assign(methods, 0.0);
    std::vector<std::vector<double>> mrr(methods, std::vector<double>(REDRAWS));
    Rng rng = rng_stream(REDRAW_SEED, redraw_tasks);
    for (int d = 0; d < REDRAWS && !tasks.empty(); d++) {
        std::vector<double> sum(methods, 0.0);
        int drawn = 0;
        for (size_t t = 0; t < tasks.size(); t++) {
            const std::vector<std::vector<double>>& seeds = *tasks[redraw_tasks ? rng.below((int)tasks.size()) : t];
            for (size_t s = 0; s < seeds.size(); s++, drawn++) {
                const std::vector<double>& rr = seeds[rng.below((int)seeds.size())];
                for (size_t k = 0; k < methods; k++) sum[k] += rr[k];
            }
        }
        double best = -INFINITY;
        for (size_t k = 0; k < methods; k++) best = std::max(best, mrr[k][d] = sum[k] / drawn);
        std::vector<size_t> leaders;
        for (size_t k = 0; k < methods; k++)
            if (mrr[k][d] >= best - 1e-9) leaders.push_back(k);
        for (size_t k : leaders) r.first[k] += 1.0 / leaders.size() / REDRAWS;
    }
    for (std::vector<double>& of_method : mrr) {
        std::sort(of_method.begin(), of_method.end());
        r.lo.push_back(tasks.empty() ? NAN : of_method[REDRAWS / 20]);
        r.hi.push_back(tasks.empty() ? NAN : of_method[REDRAWS - 1 - REDRAWS / 20]);
    }
    return r;
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

// accuracy against length for every method of one task: the mean over seeds as a line, each seed
// as faint dots; a method has its place's colour in every plot
static std::string group_svg(const std::vector<const SweepRun*>& runs, const std::vector<Method>& ranked, const std::string& title) {
    std::vector<const SplitResult*> splits;
    for (const SweepRun* r : runs) splits.push_back(&r->valid), splits.push_back(&r->test);
    std::pair<int, int> range = length_range(splits);
    SvgPlot plot = accuracy_plot(range.first, range.second, runs[0]->train_max, title);
    std::vector<std::vector<std::pair<double, double>>> means(ranked.size());
    std::vector<int> seeds(ranked.size(), 0);
    for (size_t k = 0; k < ranked.size(); k++) {
        std::map<int, std::pair<double, int>> sum;  // length -> (sum of accuracies, seeds)
        for (const SweepRun* r : runs) {
            if (r->method != ranked[k]) continue;
            seeds[k]++;
            std::vector<std::pair<double, double>> points;
            for (const auto& kv : tallies_by_length(*r)) {
                points.push_back({kv.first, kv.second.accuracy()});
                sum[kv.first].first += kv.second.accuracy(), sum[kv.first].second++;
            }
            plot.dots(points, plot_color(k));
        }
        for (const auto& kv : sum) means[k].push_back({kv.first, kv.second.first / kv.second.second});
    }
    std::vector<LegendEntry> legend;
    for (size_t k = 0; k < ranked.size(); k++) {
        if (!seeds[k]) continue;
        plot.line(means[k], plot_color(k));  // lines over every method's dots
        std::string label = ranked[k].name() + " (" + std::to_string(seeds[k]) + (seeds[k] == 1 ? " seed)" : " seeds)");
        legend.push_back({label, plot_color(k)});
    }
    legend.push_back({"training lengths", "#000", true});
    legend.push_back({"lines: mean over seeds", nullptr});
    legend.push_back({"dots: one seed each", nullptr});
    plot.legend(legend);
    return plot.finish();
}

// MRR of each ranked method as bars, with the value on each bar
static std::string mrr_svg(const Mrr& m, const std::vector<Method>& ranked, const std::string& title) {
    SvgPlot plot(-0.5, std::max<int>(1, ranked.size()) - 0.5, title, false);
    plot.top += 16;  // room for the value above a bar of 1
    plot.y_grid();
    plot.axis_titles("positional encoding (+ wrappers)", "mean reciprocal rank");
    if (m.columns == 0)
        plot.add("<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">no (task, seed) has a finished run of every method</text>\n",
                 (plot.x(plot.x_lo) + plot.x(plot.x_hi)) / 2, plot.y(0.5));
    double bar_width = 0.6 * (plot.x(1) - plot.x(0));
    for (size_t k = 0; k < ranked.size(); k++) {
        plot.add("<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%s</text>\n", plot.x(k), plot.y(0) + 18, ranked[k].name().c_str());
        if (m.columns == 0) continue;
        double value = m.of_method[k];
        plot.add("<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"%s\"/>\n", plot.x(k) - bar_width / 2, plot.y(value),
                 bar_width, plot.y(0) - plot.y(value), plot_color(k));
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

static std::string header_section(const Sweep& s, const std::vector<Method>& ranked) {
    int finished = count_finished(s.runs);
    std::string md = "# Sweep report: " + s.dir + "\n\n";
    md += format_text("- runs: %d found, %d finished, %d unfinished (listed at the end; they count nowhere)\n", (int)s.runs.size(),
                      finished, (int)s.runs.size() - finished);
    md += "- model presets: " + distinct(s.runs, [](const SweepRun& r) { return r.model; }) +
          "; steps: " + distinct(s.runs, [](const SweepRun& r) { return std::to_string(r.steps); }) + "\n";
    std::set<std::string> tasks;
    for (const SweepRun& r : s.runs) tasks.insert(r.task);
    md += "- tasks: " + join_words(Words(tasks.begin(), tasks.end())) + "\n";
    Words names;
    for (const Method& m : ranked) names.push_back(m.name());
    md += "- methods ranked (those with a finished run; a wrapper adds +rand, +abacus, +coupled, +layers, RoPE's +pi, +ntk or +yarn, +drawn, "
          "+windowL:W, +latest or +stepN to its PE's name): " + (names.empty() ? std::string("none") : join_words(names)) + "\n";
    if (s.setting_fields.empty())
        md += "- settings: the runs of each task differ only in method and seed\n";
    else {
        Words pattern;
        for (const std::string& f : s.setting_fields) pattern.push_back(f + "=...");
        md += "- settings: the runs of a task also differ in " + join_words(s.setting_fields) +
              ", so each setting of a task is reported and ranked as a task of its own, `task [" + join_words(pattern) + "]`\n";
    }
    return md + "\n";
}

static std::string mrr_row(const std::string& name, const Mrr& m) {
    std::string row = "| " + name + " |";
    for (double mrr : m.of_method) row += " " + cell(mrr) + " |";
    return row + format_text(" %d | %d |\n", m.columns, m.dropped);
}

// a scope's MRR row; under it, where the scope has all-tied columns, its MRR without them, and
// where it has a task no PE learned, its MRR over the tasks some PE learned; then the rows of
// the scope, and of its learned tasks, with their ties shared
static std::string mrr_rows(const std::string& name, const std::vector<Column>& columns, const std::vector<Method>& ranked,
                            const std::set<std::string>& unlearned) {
    Mrr m = mean_reciprocal_rank(columns, ranked);
    std::string md = mrr_row(name, m), shared = mrr_row(name + ", ties shared", mean_reciprocal_rank(columns, ranked, TIES_SHARED));
    if (m.all_tied > 0)
        md += mrr_row(name + format_text(", without %d all-tied column%s", m.all_tied, m.all_tied == 1 ? "" : "s"),
                      mrr_without_all_tied(columns, ranked));
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
        std::string learned_name = name + ", " + which + format_text(" (%d column%s)", l.columns, l.columns == 1 ? "" : "s");
        md += mrr_row(learned_name, l);
        if (l.columns > 0)
            shared += mrr_row(learned_name + ", ties shared", mean_reciprocal_rank(columns_of_learned(columns, unlearned), ranked, TIES_SHARED));
    }
    return md + shared;
}

// MRR over every column, then over the columns of each task family, and of each setting
static std::string mrr_section(const std::vector<Column>& columns, const std::vector<Method>& ranked, const Mrr& all,
                               const std::set<std::string>& unlearned, int tasks) {
    std::string first_listed = ranked.empty() ? "the first method" : ranked[0].name();
    std::string md = "## Mean reciprocal rank\n\n";
    md += "For every (task, seed) the methods (a PE, plain or with wrappers) are ranked by overall OOD test accuracy (rank 1 is "
          "best; a tie goes to the method listed first, as the paper's notebook ranked, though its order for ties was RoPE, "
          "ALiBi, T5, APE, NoPE); a method's MRR is the mean of 1/rank over the columns that have a finished run of every "
          "method. Each scope's MRR is given again with its ties shared (\"ties shared\": each tied method gets the mean of the "
          "1/rank its block of ties spans), which no listing order can move. " +
          format_text("%d columns ranked, %d dropped for a missing method.\n\n", all.columns, all.dropped);
    md += format_text("%d of the %d ranked columns are all tied (every method at exactly the same OOD accuracy, typically a "
                      "task no PE learned). ",
                      all.all_tied, all.columns) +
          "Such a column ranks the methods in listed order by the tie-break alone, handing " +
          first_listed + " a free 1 and biasing the MRR; the paper's MRR keeps them, and each scope that has any is followed "
          "by its MRR without them. " +
          format_text("%d of the %d tasks %s learned by no PE (no method's mean ID accuracy got halfway from what the most "
                      "common answer, always given, scores to 1: 0.5 where the answers vary, 0.75 for a yes-or-no question; noted "
                      "under the task's table); ",
                      (int)unlearned.size(), tasks, unlearned.size() == 1 ? "was" : "were") +
          "their ranks are noise (a few lucky OOD answers, or listed order, rank methods that all failed), so each scope that has such "
          "a task is followed last by its MRR over only the tasks some PE learned.\n\n";
    md += "| scope |";
    for (const Method& m : ranked) md += " " + m.name() + " |";
    md += " ranked | dropped |\n|---|";
    for (size_t k = 0; k < ranked.size(); k++) md += "---|";
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
    return md + "\n![MRR of each method](mrr.svg)\n\n";
}

static int count_tasks(const std::vector<Column>& columns) {
    std::set<std::string> tasks;
    for (const Column& c : columns)
        if (complete(c)) tasks.insert(group_name(c.task, c.label));
    return (int)tasks.size();
}

// a scope's rows of the redrawn table: one per method, best MRR first
static std::string redrawn_rows(const std::string& scope, const std::vector<Column>& columns, const std::vector<Method>& ranked, Ties ties) {
    Mrr m = mean_reciprocal_rank(columns, ranked, ties);
    Redrawn seeds = redraw_columns(columns, ranked.size(), false, ties), tasks = redraw_columns(columns, ranked.size(), true, ties);
    std::string md, name = format_text("%s (%d columns, %d tasks)%s", scope.c_str(), m.columns, count_tasks(columns),
                                            ties == TIES_SHARED ? ", ties shared" : "");
    for (size_t k : best_first(m.of_method)) {
        md += format_text("| %s | %s | %.3f | %.3f-%.3f | %.2f | %.3f-%.3f | %.2f |\n", name.c_str(), ranked[k].name().c_str(), m.of_method[k],
                          seeds.lo[k], seeds.hi[k], seeds.first[k], tasks.lo[k], tasks.hi[k], tasks.first[k]);
        name = "";  // the scope on its first row only
    }
    return md;
}

// how far the MRR of every column, and of the tasks some PE learned, moves when the columns are
// drawn again (redraw_columns); "" where fewer than two columns are ranked
static std::string redrawn_section(const std::vector<Column>& columns, const std::vector<Method>& ranked, const std::set<std::string>& unlearned) {
    if (mean_reciprocal_rank(columns, ranked).columns < 2) return "";
    std::string md = "### How sure: the columns drawn again\n\n";
    md += format_text("An MRR is a mean over few columns: how far would it move with other seeds, or other tasks? The ranked "
                      "columns of every task, and of the tasks some PE learned, are drawn again %d times with replacement: first each task's seeds, the tasks kept (training's "
                      "noise alone), then the tasks and each drawn task's seeds (which tasks a benchmark holds is a draw too). The "
                      "table gives the central 90%% of a method's MRRs over the draws and the share of draws in which its MRR is the "
                      "highest (a tie for first shared), by the listed order's MRR and then with its ties shared. Drawing again from n seeds narrows the spread of their mean by "
                      "sqrt((n - 1) / n), 0.82 for three, so the true intervals are if anything wider.\n\n",
                      REDRAWS);
    md += "| scope | method | MRR | seeds drawn again: 90% of draws | first in | tasks and seeds drawn again: 90% of draws | first in |\n"
          "|---|---|---|---|---|---|---|\n";
    std::vector<Column> learned_columns = columns_of_learned(columns, unlearned);
    bool learned = !unlearned.empty() && mean_reciprocal_rank(learned_columns, ranked).columns >= 2;
    for (Ties ties : {TIES_LISTED, TIES_SHARED}) {
        md += redrawn_rows("**all**", columns, ranked, ties);
        if (learned) md += redrawn_rows("the tasks some PE learned", learned_columns, ranked, ties);
    }
    return md + "\n";
}

static std::string lengths_of(const std::map<int, Tally>& by_length) {
    return by_length.empty() ? "none" : format_text("%d-%d", by_length.begin()->first, by_length.rbegin()->first);
}

// by ranked method: the complete columns in which it ranks first (the tie-break included)
static std::vector<int> columns_led(const std::vector<Column>& columns, size_t methods) {
    std::vector<int> led(methods, 0);
    for (const Column& c : columns)
        if (complete(c)) {
            std::vector<double> rr = reciprocal_ranks(c.ood);
            for (size_t k = 0; k < methods; k++) led[k] += rr[k] == 1.0;
        }
    return led;
}

// a method's row of a task table, over its seeds; "" where the method has no run in the task.
// `first`: the task's ranked columns in which the method ranks first.
static std::string method_row(const Method& method, const std::vector<const SweepRun*>& runs, double mrr, int first, int columns) {
    double ood = 0, id = 0, lo = INFINITY, hi = -INFINITY, tokens = 0;
    int seeds = 0, seeds_with_tokens = 0;
    for (const SweepRun* r : runs) {
        if (r->method != method) continue;
        double a = r->test.all.accuracy();
        ood += a, id += r->valid.all.accuracy(), lo = std::min(lo, a), hi = std::max(hi, a), seeds++;
        if (r->test_tokens.total > 0) tokens += r->test_tokens.accuracy(), seeds_with_tokens++;
    }
    if (seeds == 0) return "";
    return format_text("| %s | %.3f | %.3f-%.3f | %.3f | %d | %s | %d of %d | %s |\n", method.name().c_str(), ood / seeds, lo, hi,
                       id / seeds, seeds, cell(mrr).c_str(), first, columns, cell(seeds_with_tokens ? tokens / seeds_with_tokens : NAN).c_str());
}

// the runs of a learned task below its bar themselves, by method then seed; "" where there are none
static std::string runs_below_the_bar(std::vector<const SweepRun*> runs) {
    double bar = learned_bar(runs);
    std::sort(runs.begin(), runs.end(),
              [](const SweepRun* a, const SweepRun* b) { return a->method != b->method ? a->method < b->method : a->seed < b->seed; });
    std::string named;
    for (const SweepRun* r : runs)
        if (r->valid.all.accuracy() < bar)
            named += format_text("%s%s seed %llu (%.3f)", named.empty() ? "" : ", ", r->method.name().c_str(), (unsigned long long)r->seed,
                                 r->valid.all.accuracy());
    return named.empty() ? ""
                         : format_text("\nRuns that did not learn this task in distribution themselves (ID accuracy < %.3f): %s. Their OOD "
                                       "accuracy says the run failed, not how far its method reaches.\n",
                                       bar, named.c_str());
}

// one task's table: a row per method, over its seeds; a note under it where no PE learned the
// task, or else on the runs that did not learn it
static std::string group_section(const std::string& group, const std::vector<const SweepRun*>& runs, const std::vector<Method>& ranked,
                                 const std::vector<Column>& of_group, const std::string& svg) {
    Mrr m = mean_reciprocal_rank(of_group, ranked);
    std::string md = "### " + group + "\n\n";
    md += "ID (valid) lengths " + lengths_of(runs[0]->valid.by_length) + ", OOD (test) lengths " + lengths_of(runs[0]->test.by_length) +
          format_text("; seeds with a finished run of every method: %d", m.columns) +
          (m.all_tied ? format_text(", %d of them all tied (every method the same OOD accuracy).\n\n", m.all_tied) : std::string(".\n\n"));
    // per-token accuracy last: exact match is what the MRR ranks; "-" for runs from before it
    md += "| method | OOD test accuracy (mean) | OOD min-max over seeds | ID valid accuracy (mean) | seeds | MRR in this task "
          "| first in (ranked seeds) | OOD per-token accuracy (mean) |\n";
    md += "|---|---|---|---|---|---|---|---|\n";
    std::vector<int> first = columns_led(of_group, ranked.size());
    for (size_t k = 0; k < ranked.size(); k++) md += method_row(ranked[k], runs, m.of_method[k], first[k], m.columns);
    double id_majority = majority_of(runs, &SweepRun::valid_majority), ood_majority = majority_of(runs, &SweepRun::test_majority);
    if (!std::isnan(id_majority) && !std::isnan(ood_majority))
        md += format_text("\nThe most common answer, always given, scores %.3f ID and %.3f OOD.\n", id_majority, ood_majority);
    std::string bar = std::isnan(id_majority) ? "; the runs do not record what the most common answer scores"
                                              : format_text(", halfway from the most common answer's %.3f to 1", id_majority);
    if (!learned(runs))
        md += format_text("\nNo PE learned this task in distribution (best mean ID accuracy %.3f < %.3f%s): its ranks are noise.\n",
                          best_mean_id(runs), learned_bar(runs), bar.c_str());
    else
        md += runs_below_the_bar(runs);
    return md + "\n![" + group + "](" + svg + ")\n\n";
}

static std::string unfinished_section(const std::vector<SweepRun>& runs) {
    std::string md;
    for (const SweepRun& r : runs)
        if (!r.finished) md += "- `" + r.dir + "`: " + r.group() + ", " + r.method.name() + ", seed " + std::to_string(r.seed) + "\n";
    return md.empty() ? "" : "## Unfinished runs (no results.json)\n\n" + md;
}

// Reads the sweep, writes report.md and the SVGs into it; returns the summary for stdout.
static std::string write_report(const std::string& sweep_dir) {
    Sweep s = read_sweep(sweep_dir);
    std::vector<Method> ranked = ranked_methods(s.runs);
    std::vector<Column> columns = columns_of(s.runs, ranked);
    Mrr all = mean_reciprocal_rank(columns, ranked);
    std::map<std::string, std::vector<const SweepRun*>> groups;  // task [label] -> its finished runs
    for (const SweepRun& r : s.runs)
        if (r.finished) groups[r.group()].push_back(&r);
    std::set<std::string> unlearned;  // the tasks [settings] no PE learned in distribution
    for (const auto& g : groups)
        if (!learned(g.second)) unlearned.insert(g.first);

    std::string md = header_section(s, ranked) + mrr_section(columns, ranked, all, unlearned, (int)groups.size()) +
                     redrawn_section(columns, ranked, unlearned) + "## Tasks\n\n";
    for (const auto& g : groups) {
        const std::string& task = g.second[0]->task;
        const std::string& label = g.second[0]->label;
        std::vector<Column> of_group = columns_where(columns, [&](const Column& c) { return c.task == task && c.label == label; });
        std::string svg = svg_name(*g.second[0]);
        write_text((fs::path(sweep_dir) / svg).string(), group_svg(g.second, ranked, g.first + ": accuracy against length"));
        md += group_section(g.first, g.second, ranked, of_group, svg);
    }
    md += unfinished_section(s.runs);
    write_text((fs::path(sweep_dir) / "report.md").string(), md);
    write_text((fs::path(sweep_dir) / "mrr.svg").string(),
               mrr_svg(all, ranked, format_text("MRR of each method over %d (task, seed) columns", all.columns)));

    int finished = count_finished(s.runs);
    std::string summary = format_text("%s: %d runs, %d finished, %d unfinished; %d columns ranked, %d dropped for a missing method\n",
                                      sweep_dir.c_str(), (int)s.runs.size(), finished, (int)s.runs.size() - finished, all.columns,
                                      all.dropped);
    summary += format_text("wrote %s/report.md, mrr.svg and %d task plots\n", sweep_dir.c_str(), (int)groups.size());
    for (Ties ties : {TIES_LISTED, TIES_SHARED}) {
        if (all.columns < 2) break;
        Redrawn redrawn = redraw_columns(columns, ranked.size(), true, ties);
        std::string line;
        for (size_t k : best_first(redrawn.first))
            line += format_text("%s%s %.2f", line.empty() ? "" : "  ", ranked[k].name().c_str(), redrawn.first[k]);
        summary += format_text("first by MRR%s in %d draws of the tasks and their seeds (report.md, \"How sure\"): %s\n",
                               ties == TIES_SHARED ? ", ties shared," : "", REDRAWS, line.c_str());
    }
    // the MRR without the all-tied columns, over the tasks some PE learned, then the paper's MRR as the last line
    if (all.all_tied == 0)
        summary += format_text("all-tied columns: none of %d\n", all.columns);
    else {
        Mrr untied = mrr_without_all_tied(columns, ranked);
        summary += format_text("MRR without the %d all-tied columns, over %d: %s\n", all.all_tied, untied.columns,
                               untied.columns ? mrr_line(untied, ranked).c_str() : "none");
    }
    if (!unlearned.empty()) {
        std::vector<Column> learned_columns = columns_of_learned(columns, unlearned);
        Mrr l = mean_reciprocal_rank(learned_columns, ranked), shared = mean_reciprocal_rank(learned_columns, ranked, TIES_SHARED);
        summary += format_text("MRR over the tasks some PE learned, ties shared (%d columns): %s\n", shared.columns,
                               shared.columns ? mrr_line(shared, ranked).c_str() : "none");
        summary += format_text("MRR over the tasks some PE learned (%d columns): %s\n", l.columns,
                               l.columns ? mrr_line(l, ranked).c_str() : "none");
    }
    Mrr shared = mean_reciprocal_rank(columns, ranked, TIES_SHARED);
    summary += format_text("MRR over %d columns, ties shared: %s\n", shared.columns, shared.columns ? mrr_line(shared, ranked).c_str() : "none");
    return summary + format_text("MRR over %d columns: %s\n", all.columns, all.columns ? mrr_line(all, ranked).c_str() : "none");
}

#ifndef TESTING
int main(int argc, char** argv) {
    const char* usage = "dev/report SWEEP_DIR  (a directory of run directories written by ./train)";
    if (help_asked(argc, argv) || argc != 2) return print_usage(usage, help_asked(argc, argv));
    try {
        printf("%s", write_report(argv[1]).c_str());
    } catch (const std::exception& e) {  // Error from fail(), or a file system error
        fflush(stdout);
        fprintf(stderr, "report: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
#endif
