/*
 train.cu: the program. Command line, data, and the modes that look at a task:
   ./train --task T --show N [--split train|valid|test]   print N examples: prompt<TAB>target
   ./train --task T --answer                              read prompts on stdin, print gold targets
   ./train --task T --stats                               split sizes, lengths, tokens per example
   ./train --help                                         tasks, PEs and every flag

 Every flag is one row of the flag table below (name, type, where it goes, help), so parsing,
 validation and --help can not disagree. Any error a user can cause ends as one line on stderr,
 "train: error: ...", and exit status 1.
*/
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common.h"
#include "tasks.h"

// ----------------------------------------------------------------------------
// configuration and the flag table

struct RunConfig {
    std::string task = "copy";
    DataConfig data;
    // modes
    bool help = false;
    int show = 0;
    std::string split = "train";
    bool answer = false;
    bool stats = false;
};

enum FlagType { FLAG_INT, FLAG_U64, FLAG_STRING, FLAG_SWITCH };

struct Flag {
    const char* name;
    FlagType type;
    void* value;
    const char* help;
};

static std::vector<Flag> flag_table(RunConfig* c) {
    return {
        {"--task", FLAG_STRING, &c->task, "task variant (see the list above)"},
        {"--data-seed", FLAG_U64, &c->data.seed, "seed of the data; the paper's is 9842497"},
        {"--train-size", FLAG_INT, &c->data.train_size, "training examples, spread evenly over train lengths"},
        {"--valid-size", FLAG_INT, &c->data.valid_size, "in-distribution validation examples"},
        {"--test-size", FLAG_INT, &c->data.test_size, "out-of-distribution test examples"},
        {"--train-max", FLAG_INT, &c->data.train_max, "longest training length (default: the task's)"},
        {"--test-max", FLAG_INT, &c->data.test_max, "longest test length (default: the task's)"},
        {"--show", FLAG_INT, &c->show, "print N examples of --split as prompt<TAB>target and exit"},
        {"--split", FLAG_STRING, &c->split, "split for --show: train, valid or test"},
        {"--answer", FLAG_SWITCH, &c->answer, "read prompts from stdin, print each gold target"},
        {"--stats", FLAG_SWITCH, &c->stats, "print split sizes and examples per length, then exit"},
        {"--help", FLAG_SWITCH, &c->help, "print this help"},
    };
}

static std::string flag_names(const std::vector<Flag>& flags) {
    std::string names;
    for (const Flag& f : flags) names += (names.empty() ? "" : " ") + std::string(f.name);
    return names;
}

static long long parse_integer(const char* flag, const char* text, long long lo, long long hi) {
    errno = 0;
    char* end = nullptr;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        fail("%s expects an integer in [%lld, %lld], got '%s'", flag, lo, hi, text);
    return v;
}

static void parse_flags(int argc, char** argv, RunConfig* c) {
    std::vector<Flag> flags = flag_table(c);
    for (int i = 1; i < argc; i++) {
        const Flag* flag = nullptr;
        for (const Flag& f : flags)
            if (strcmp(argv[i], f.name) == 0) flag = &f;
        if (!flag) fail("unknown flag '%s' (valid: %s)", argv[i], flag_names(flags).c_str());
        if (flag->type == FLAG_SWITCH) {
            *(bool*)flag->value = true;
            continue;
        }
        if (i + 1 >= argc) fail("%s needs a value", flag->name);
        const char* text = argv[++i];
        switch (flag->type) {
            case FLAG_INT: *(int*)flag->value = (int)parse_integer(flag->name, text, 0, INT_MAX); break;
            case FLAG_U64: *(uint64_t*)flag->value = (uint64_t)parse_integer(flag->name, text, 0, LLONG_MAX); break;
            default: *(std::string*)flag->value = text; break;
        }
    }
}

static void print_help(RunConfig* c) {
    printf("usage: ./train [flags]\n\ntasks (--task):\n");
    for (const Task& t : TASKS) printf("  %-14s %s\n", t.name, t.description);
    printf("\nflags:\n");
    for (const Flag& f : flag_table(c)) printf("  %-14s %s\n", f.name, f.help);
}

static SplitKind find_split(const std::string& name) {
    for (int k = 0; k < NUM_SPLITS; k++)
        if (name == SPLIT_NAMES[k]) return (SplitKind)k;
    fail("unknown split '%s' (valid: train valid test)", name.c_str());
}

// ----------------------------------------------------------------------------
// modes that look at a task

static void show_examples(const Task& task, const RunConfig& c) {
    Vocab vocab = make_vocab(task);
    Split split = make_split(task, vocab, c.data, find_split(c.split));
    if (c.show > split.size()) fail("--show %d: the %s split of %s has %d examples", c.show, c.split.c_str(), task.name, split.size());
    Words prompt, target;
    for (int i = 0; i < c.show; i++) {
        example_words(split, vocab, i, &prompt, &target);
        printf("%s\t%s\n", join_words(prompt).c_str(), join_words(target).c_str());
    }
}

static void answer_prompts(const Task& task) {
    Vocab vocab = make_vocab(task);
    std::string line;
    for (int number = 1; std::getline(std::cin, line); number++) {
        if (!line.empty() && line.back() == '\r') line.pop_back();  // files written on Windows
        int length = 0;
        try {
            printf("%s\n", join_words(task_answer(task, vocab, line, &length)).c_str());
        } catch (const Error& e) {
            fail("line %d: %s", number, e.what());
        }
    }
}

static void print_stats(const Task& task, const RunConfig& c) {
    Dataset d = make_dataset(task, c.data);
    printf("task %s: %s\nlength λ = %s; vocabulary %d words\n\n", task.name, task.description, task.length_unit, d.vocab.size());
    printf("split   examples  lengths  tokens per example (min / mean / max)\n");
    int longest = 0;
    for (int k = 0; k < NUM_SPLITS; k++) {
        const Split& s = d.splits[k];
        int lo = INT_MAX, hi = 0, shortest = INT_MAX;
        double tokens = 0;
        for (int i = 0; i < s.size(); i++) {
            lo = std::min(lo, s.length[i]);
            hi = std::max(hi, s.length[i]);
            shortest = std::min(shortest, s.example_len(i));
            tokens += s.example_len(i);
        }
        longest = std::max(longest, hi);
        printf("%-6s %9d  %2d-%-4d  %d / %.1f / %d\n", SPLIT_NAMES[k], s.size(), lo, hi, shortest, tokens / s.size(), s.max_example_len());
    }
    printf("\nexamples per length:\n     λ   train   valid    test\n");
    for (int n = 0; n <= longest; n++) {
        int counts[NUM_SPLITS] = {0, 0, 0};
        for (int k = 0; k < NUM_SPLITS; k++)
            for (int length : d.splits[k].length) counts[k] += length == n;
        if (counts[0] + counts[1] + counts[2] > 0) printf("%6d %7d %7d %7d\n", n, counts[0], counts[1], counts[2]);
    }
}

// ----------------------------------------------------------------------------

static void run(int argc, char** argv) {
    RunConfig config;
    parse_flags(argc, argv, &config);
    if (config.help) return print_help(&config);
    const Task& task = find_task(config.task);
    length_split(task, config.data);  // validates lengths and sizes before any mode runs
    if (config.show > 0) return show_examples(task, config);
    if (config.answer) return answer_prompts(task);
    if (config.stats) return print_stats(task, config);
    fail("nothing to do: give --show N, --answer or --stats (training comes with the model)");
}

int main(int argc, char** argv) {
    try {
        run(argc, argv);
    } catch (const Error& e) {
        fflush(stdout);
        fprintf(stderr, "train: error: %s\n", e.what());
        return 1;
    }
    return 0;
}
