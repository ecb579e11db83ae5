/*
 train.cu: the program. It trains a model on one task with one positional encoding, selects the
 checkpoint with the best in-distribution (valid) accuracy, as the paper did, and reports exact-
 match accuracy by length on valid and on the longer test lengths.

   ./train                                   the embedded default experiment (tiny model; on the GPU if there is one)
   ./train --task T --pe P [flags]           any task, PE, model and training settings
   ./train --resume DIR                      continue an interrupted run where it stopped
   ./train --load FILE [--sample N]          evaluate a saved checkpoint again
   ./train --load FILE --dump-attention OUT  its attention on examples of every length (analysis.h)
   ./train --load FILE --answer < PROMPTS    its greedy answer to each prompt, one per line
   ./train --task T --show N | --answer | --stats     look at a task (no model)
   ./train --help                            every task, PE and flag

 A run directory (--out) receives config.json, log.tsv (one row per step), model.bin (the best
 checkpoint), state.bin (the latest, for --resume), results.json and accuracy.svg. Checkpoints
 are written whole or not at all; Ctrl-C or SIGTERM saves state.bin and exits; a step whose loss
 or gradient is not finite is never applied (the run stops, or skips it with --skip-nonfinite).

 It computes on the GPU when this build has one (nvcc found by make) and a device is present,
 else on the CPU (--device overrides). The CPU code in model.h is the reference; the GPU keeps
 its own copy of the model (model.cuh) and hands parameters back for every checkpoint, which has
 one format whatever device wrote it.

 Every flag is one row of the flag table (name, type, where it goes, whether a checkpoint keeps
 it, which modes read it, help), so parsing, --help and checkpoints can not disagree, and a flag
 the chosen mode would ignore is refused. Any error a user can cause ends as one line on stderr,
 "train: error: ...", and exit status 1.
*/
#include <omp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis.h"
#include "common.h"
#include "model.h"
#include "pe.h"
#include "report.h"
#include "tasks.h"
#ifdef __CUDACC__
#include "model.cuh"
#else
struct GpuModel {};  // a build without nvcc has the CPU path only
#endif

// ----------------------------------------------------------------------------
// configuration and the flag table

static const int UNSET = -1;

struct RunConfig {
    std::string task = "copy";
    std::string pe = "nope";
    std::string model = "tiny";
    // UNSET (which no flag can give) means: the model preset's value
    int layers = UNSET, d_model = UNSET, heads = UNSET, d_ff = UNSET;
    double rope_frac = 0.25, dropout = UNSET;
    int random_positions = 0;           // L: training positions drawn from 0 .. L-1; 0: off
    bool abacus = false;                // digits also get a learned embedding of their place (pe.h)
    bool position_coupling = false;     // positions from the digits' places (pe.h)
    int cope_max = 0;                   // CoPE's positions clip at P (the paper's p_max); 0: max_T rows (pe.h)
    int sort_pool = 0;                  // batches sorted by length together; 0 or 1: the paper's batches
    bool pe_per_layer = false;          // each layer its own PE parameters (as CoPE's paper), not one tensor for all
    bool pack = false;                  // training batches' sequences packed end to end into fewer rows
    int rope_scaling = ROPE_UNSCALED;   // RoPE at evaluation, an index into ROPE_SCALING_NAMES
    int steps = UNSET, batch = 64, eval_every = UNSET;
    double lr = UNSET;
    double warmup_frac = 0.06, weight_decay = 0.05, grad_clip = 1.0;
    uint64_t seed = 256788;  // the paper's first seed: initialisation, batch order, dropout
    DataConfig data;
    std::string out;  // "": runs/TASK-PE-MODEL-sSEED
    std::string resume, load, dump_state, dump_attention;
    int dump_per_length = 10;  // the paper's §5.2 took 10 examples of every length
    int sample = 0, threads = 0;
    bool bench = false, force = false, skip_nonfinite = false, check = false;
    int bench_seq = 0;             // --bench on random sequences of this length instead of the task's
    std::string device = "auto";   // auto: the GPU when there is one
    std::string precision = "tf32";
    // modes that look at a task
    int show = 0;
    std::string split = "train";
    bool answer = false, stats = false, help = false;
};

// Training settings that suit each model preset. `paper` is the paper's protocol. `tiny` learns
// the default task on two CPU cores in about three minutes; it goes without dropout, which holds
// a 64-wide model back (copy, NoPE, lr 3e-3: valid accuracy 0.75 with dropout 0.1 after 2,000
// steps, 1.00 without it after 1,500).
struct TrainingDefaults {
    const char* model;
    int steps, eval_every;
    double lr, dropout;
};
static const TrainingDefaults TRAINING_DEFAULTS[] = {
    {"paper", 40000, 2000, 3e-5, 0.1},
    {"small", 10000, 1000, 3e-4, 0.1},
    {"tiny", 2000, 250, 3e-3, 0.0},
};

enum FlagType { FLAG_INT, FLAG_U64, FLAG_FLOAT, FLAG_STRING, FLAG_SWITCH, FLAG_CHOICE };

// What the program does is chosen by at most one mode flag; without one, it trains.
enum Mode {
    TRAIN = 1, SHOW = 2, ANSWER = 4, STATS = 8, DUMP = 16, BENCH = 32, RESUME = 64, LOAD = 128,
    ANY = 255,
    MODEL = TRAIN | DUMP | BENCH,  // the modes that build a model from the flags
    DATA = MODEL | SHOW | STATS,   // the modes that generate the task's splits
};

struct Flag {
    const char* name;
    FlagType type;
    void* value;
    bool saved;     // kept in checkpoints, restored by --resume and --load
    unsigned modes;  // the modes that read it: given in another, it is refused, not ignored
    const char* help;
    Words choices = {};  // FLAG_CHOICE: the names it takes; its value is the index of the one given
};


static std::vector<Flag> flag_table(RunConfig* c) {
    return {
        {"--task", FLAG_STRING, &c->task, false, DATA | ANSWER, "task (see the list above)"},
        {"--pe", FLAG_STRING, &c->pe, false, MODEL, "positional encoding (see the list above)"},
        {"--model", FLAG_STRING, &c->model, false, MODEL, "model preset (see the list above)"},
        {"--layers", FLAG_INT, &c->layers, true, MODEL, "layers (default: the preset's)"},
        {"--d-model", FLAG_INT, &c->d_model, true, MODEL, "channels (default: the preset's)"},
        {"--heads", FLAG_INT, &c->heads, true, MODEL, "attention heads (default: the preset's)"},
        {"--d-ff", FLAG_INT, &c->d_ff, true, MODEL, "feed-forward width (default: the preset's)"},
        {"--rope-frac", FLAG_FLOAT, &c->rope_frac, true, MODEL, "fraction of each head RoPE rotates (paper: 0.25)"},
        {"--dropout", FLAG_FLOAT, &c->dropout, true, MODEL, "dropout probability (default: the preset's; paper 0.1)"},
        {"--steps", FLAG_INT, &c->steps, true, TRAIN, "optimizer steps (default: the preset's; paper 40000)"},
        {"--batch", FLAG_INT, &c->batch, true, MODEL, "sequences per batch (paper: 64)"},
        {"--lr", FLAG_FLOAT, &c->lr, true, TRAIN | BENCH, "peak learning rate (default: the preset's; paper 3e-5)"},
        {"--warmup-frac", FLAG_FLOAT, &c->warmup_frac, true, TRAIN | BENCH, "linear warmup, fraction of the steps (paper: 0.06)"},
        {"--weight-decay", FLAG_FLOAT, &c->weight_decay, true, TRAIN | BENCH, "AdamW weight decay (paper: 0.05)"},
        {"--grad-clip", FLAG_FLOAT, &c->grad_clip, true, TRAIN | BENCH, "global gradient norm clip (paper: 1.0)"},
        {"--skip-nonfinite", FLAG_SWITCH, &c->skip_nonfinite, true, TRAIN, "skip an update whose loss or gradient is not finite (default: stop)"},
        {"--eval-every", FLAG_INT, &c->eval_every, true, TRAIN, "steps between validations (default: the preset's)"},
        {"--seed", FLAG_U64, &c->seed, true, MODEL, "seed of initialisation, batch order and dropout"},
        {"--data-seed", FLAG_U64, &c->data.seed, true, DATA, "seed of the data (paper: 9842497)"},
        {"--train-size", FLAG_INT, &c->data.train_size, true, DATA, "training examples, spread evenly over train lengths"},
        {"--valid-size", FLAG_INT, &c->data.valid_size, true, DATA, "in-distribution validation examples"},
        {"--test-size", FLAG_INT, &c->data.test_size, true, DATA, "out-of-distribution test examples"},
        {"--train-max", FLAG_INT, &c->data.train_max, true, DATA, "longest training length (default: the task's)"},
        {"--test-max", FLAG_INT, &c->data.test_max, true, DATA, "longest test length (default: the task's)"},
        {"--bos", FLAG_SWITCH, &c->data.bos, true, DATA, "start every sequence with a <bos> token (Theorem 1's first token; the paper had none)"},
        {"--scratchpad", FLAG_CHOICE, &c->data.scratchpad, true, DATA | ANSWER,
         "steps before the answer (paper §6): none, full, minimal or no-input/comp/output/vars/remaining", row_names(SCRATCHPAD_FORMATS)},
        {"--reverse-digits", FLAG_SWITCH, &c->data.reverse_digits, true, DATA | ANSWER, "addition: every number least significant digit first (Abacus's format)"},
        {"--index-hints", FLAG_SWITCH, &c->data.index_hints, true, DATA | ANSWER, "addition: a hint word @k before each digit names its place (Zhou et al. 2024)"},
        {"--random-positions", FLAG_INT, &c->random_positions, true, MODEL,
         "train at sorted positions drawn from 0..L-1, evaluate at 0..n-1 (Ruoss et al. 2023); 0: off"},
        {"--abacus", FLAG_SWITCH, &c->abacus, true, MODEL,
         "digits also get a learned embedding of their place in their number, shifted 0-99 in training (McLeish et al. 2024)"},
        {"--position-coupling", FLAG_SWITCH, &c->position_coupling, true, MODEL,
         "addition with --reverse-digits: digits of equal significance share a position, the rest the start (Cho et al. 2024)"},
        {"--zero-pad", FLAG_SWITCH, &c->data.zero_pad, true, DATA | ANSWER,
         "addition: the shorter operand zero-padded to the longer one's digits, the answer to one more (Cho et al. 2024)"},
        {"--cope-max", FLAG_INT, &c->cope_max, true, MODEL,
         "cope: contextual positions clip at P, the table's last row (the paper's p_max); 0: a row per count below the longest sequence"},
        {"--sort-pool", FLAG_INT, &c->sort_pool, true, TRAIN | BENCH,
         "take K batches' examples at a time, sort them by length into K batches of less padding; 0: the paper's batches"},
        {"--pe-per-layer", FLAG_SWITCH, &c->pe_per_layer, true, MODEL,
         "t5, kerple_*, fire, cope: each layer its own PE parameters (as CoPE's paper has it), not one tensor for all"},
        {"--pack", FLAG_SWITCH, &c->pack, true, TRAIN | BENCH,
         "lay each training batch's sequences end to end in fewer rows, each attending within itself: the same batches, less padding"},
        // (the saved flags above are checkpoint fields in table order: a new one goes here, after --pack)
        {"--rope-scaling", FLAG_CHOICE, &c->rope_scaling, false, TRAIN | RESUME | LOAD,
         "rope, evaluation only: none, pi, ntk or yarn, scaled by sequence / longest training sequence", row_names(ROPE_SCALING_NAMES)},
        {"--out", FLAG_STRING, &c->out, false, TRAIN | LOAD, "run directory (default: runs/TASK-PE-MODEL-sSEED); with --load, a new one for the evaluation's results"},
        {"--force", FLAG_SWITCH, &c->force, false, TRAIN | LOAD, "replace the earlier run in the run directory (without it, that is an error)"},
        {"--check", FLAG_SWITCH, &c->check, false, TRAIN, "check the flags, make the data and stop: no training, no file written"},
        {"--resume", FLAG_STRING, &c->resume, false, RESUME, "continue the run in this directory from its state.bin"},
        {"--load", FLAG_STRING, &c->load, false, LOAD, "evaluate this checkpoint (model.bin or state.bin) again"},
        {"--sample", FLAG_INT, &c->sample, false, TRAIN | RESUME | LOAD, "after evaluating, decode N valid and N test examples greedily"},
        {"--dump-attention", FLAG_STRING, &c->dump_attention, false, LOAD, "with --load: write the attention of examples of every length to FILE (and heatmaps)"},
        {"--dump-per-length", FLAG_INT, &c->dump_per_length, false, LOAD, "examples per length for --dump-attention (default 10, as the paper)"},
        {"--dump-state", FLAG_STRING, &c->dump_state, false, DUMP, "write one batch's tensors and gradients to FILE, then exit"},
        {"--bench", FLAG_SWITCH, &c->bench, false, BENCH, "time training steps and report tokens/s, then exit"},
        {"--bench-seq", FLAG_INT, &c->bench_seq, false, BENCH, "--bench on random sequences of this length, vocabulary 512"},
        {"--device", FLAG_STRING, &c->device, false, TRAIN | BENCH | RESUME | LOAD, "auto (the GPU if there is one), cpu or gpu"},
        {"--precision", FLAG_STRING, &c->precision, false, TRAIN | BENCH | RESUME | LOAD, "GPU matrix products: fp32, or tf32 on tensor cores (default)"},
        {"--threads", FLAG_INT, &c->threads, false, ANY, "CPU threads (default: all cores)"},
        {"--show", FLAG_INT, &c->show, false, SHOW, "print N examples of --split as prompt<TAB>target, then exit"},
        {"--split", FLAG_STRING, &c->split, false, SHOW, "split for --show: train, valid or test"},
        {"--answer", FLAG_SWITCH, &c->answer, false, ANSWER | LOAD,
         "read prompts from stdin, print each gold target (with --load: the model's greedy output), then exit"},
        {"--stats", FLAG_SWITCH, &c->stats, false, STATS, "print split sizes and examples per length, then exit"},
        {"--help", FLAG_SWITCH, &c->help, false, ANY, "print this help"},
    };
}

static void parse_value(const Flag& flag, const char* text) {
    errno = 0;
    char* end = nullptr;
    if (flag.type == FLAG_STRING) {
        if (!*text) fail("%s needs a value, got an empty string", flag.name);
        *(std::string*)flag.value = text;
    } else if (flag.type == FLAG_CHOICE) {
        auto it = std::find(flag.choices.begin(), flag.choices.end(), text);
        if (it == flag.choices.end()) fail("unknown %s '%s' (valid: %s)", flag.name, text, join_words(flag.choices).c_str());
        *(int*)flag.value = (int)(it - flag.choices.begin());
    } else if (flag.type == FLAG_FLOAT) {
        double v = strtod(text, &end);
        if (errno || end == text || *end || !std::isfinite(v) || v < 0) fail("%s expects a number >= 0, got '%s'", flag.name, text);
        *(double*)flag.value = v;
    } else {
        long long v = strtoll(text, &end, 10);
        long long hi = flag.type == FLAG_INT ? INT_MAX : LLONG_MAX;
        if (errno || end == text || *end || v < 0 || v > hi) fail("%s expects an integer in [0, %lld], got '%s'", flag.name, hi, text);
        if (flag.type == FLAG_INT) *(int*)flag.value = (int)v;
        else *(uint64_t*)flag.value = (uint64_t)v;
    }
}

static const Flag* find_flag(const std::vector<Flag>& flags, const char* name) {
    for (const Flag& f : flags)
        if (strcmp(name, f.name) == 0) return &f;
    return nullptr;
}

// returns the flags that were given
static std::set<std::string> parse_flags(int argc, char** argv, RunConfig* c) {
    std::vector<Flag> flags = flag_table(c);
    std::set<std::string> given;
    for (int i = 1; i < argc; i++) {
        const Flag* flag = find_flag(flags, argv[i]);
        if (!flag) fail("unknown flag '%s' (valid: %s)", argv[i], names_of(flags).c_str());
        if (!given.insert(flag->name).second) fail("%s is given twice", flag->name);
        if (flag->type == FLAG_SWITCH) {
            *(bool*)flag->value = true;
            continue;
        }
        if (i + 1 >= argc) fail("%s needs a value", flag->name);
        // `--out --force` would otherwise make a run directory named --force, and `--pe --steps
        // 10` would blame the 10: a value that is a flag's name is a forgotten value
        if (find_flag(flags, argv[i + 1])) fail("%s needs a value, got the flag %s", flag->name, argv[i + 1]);
        parse_value(*flag, argv[++i]);
    }
    return given;
}

// The flags that choose a mode other than training; at most one may be given.
static const struct {
    const char* flag;
    Mode mode;
} MODE_FLAGS[] = {{"--show", SHOW}, {"--answer", ANSWER}, {"--stats", STATS}, {"--dump-state", DUMP},
                  {"--bench", BENCH}, {"--resume", RESUME}, {"--load", LOAD}};

// The mode the given flags choose. Every other given flag must be one that mode reads, and a
// count must count something: a flag that would silently do nothing is an error.
static Mode find_mode(const std::set<std::string>& given, RunConfig* c) {
    const char* chosen = nullptr;
    Mode mode = TRAIN;
    for (const auto& m : MODE_FLAGS) {
        if (!given.count(m.flag)) continue;
        if (m.mode == ANSWER && given.count("--load")) continue;  // --load M --answer: the model answers, not the task
        if (chosen) fail("%s and %s can not be combined: each chooses what the program does", chosen, m.flag);
        chosen = m.flag, mode = m.mode;
    }
    for (const Flag& f : flag_table(c)) {
        if (!given.count(f.name) || (f.modes & mode)) continue;
        if (mode == RESUME || mode == LOAD) fail("%s can not be combined with %s: a saved run keeps its own settings", f.name, chosen);
        if (chosen) fail("%s can not be combined with %s", f.name, chosen);
        std::string readers;
        for (const auto& m : MODE_FLAGS)
            if (f.modes & m.mode) readers += (readers.empty() ? "" : " or ") + std::string(m.flag);
        fail("%s is read only with %s", f.name, readers.c_str());
    }
    if (mode == SHOW && c->show < 1) fail("--show expects at least 1 example, got %d", c->show);
    if (given.count("--sample") && c->sample < 1) fail("--sample expects at least 1 example, got %d", c->sample);
    if (c->threads > 1024) fail("--threads %d is out of range [0, 1024]", c->threads);
    if (given.count("--bench-seq")) {  // random tokens of one length: no task's data, digits, drawn positions or padding
        if (c->bench_seq < 2) fail("--bench-seq expects at least 2 tokens, got %d", c->bench_seq);
        for (const Flag& f : flag_table(c))  // the data's flags: read where the splits are made (and by --answer)
            if ((f.modes & ~ANSWER) == DATA && given.count(f.name))
                fail("%s can not be combined with --bench-seq: it times random tokens, not a task's data", f.name);
        if (c->abacus || c->position_coupling)
            fail("%s can not be combined with --bench-seq: random tokens have no digits", c->abacus ? "--abacus" : "--position-coupling");
        if (given.count("--random-positions"))
            fail("--random-positions can not be combined with --bench-seq: its random sequences are timed at positions 0..n-1");
        if (given.count("--sort-pool") || given.count("--pack"))
            fail("%s can not be combined with --bench-seq: its random sequences are of one length, with no padding to save",
                 given.count("--pack") ? "--pack" : "--sort-pool");
    }
    // the debug state holds tokens and targets: a reader could not recompute positions or places drawn for them
    for (const char* drawn : {"--random-positions", "--abacus", "--position-coupling"})
        if (mode == DUMP && given.count(drawn)) fail("%s can not be combined with --dump-state, whose file holds no positions", drawn);
    if (mode == LOAD && c->answer) {
        for (const char* other : {"--out", "--sample", "--dump-attention", "--device", "--precision"})
            if (given.count(other)) fail("%s can not be combined with --load and --answer, which decode prompts from stdin on the CPU", other);
    }
    if (given.count("--dump-attention")) {
        if (given.count("--out")) fail("--out can not be combined with --dump-attention, which writes FILE");
        for (const char* setting : {"--sample", "--rope-scaling", "--device", "--precision"})
            if (given.count(setting)) fail("%s can not be combined with --dump-attention, which dumps the model as trained, on the CPU", setting);
    } else if (given.count("--dump-per-length")) {
        fail("--dump-per-length is read only with --dump-attention");
    }
    if (mode == LOAD && given.count("--force") && !given.count("--out")) fail("--force is read only with --out");
    if (c->dump_per_length < 1) fail("--dump-per-length expects at least 1 example, got %d", c->dump_per_length);
    return mode;
}

static void print_help(RunConfig* c) {
    printf("usage: ./train [flags]     (no flags: the embedded default experiment, --task copy --pe nope --model tiny)\n\n");
    printf("tasks (--task):\n");
    for (const Task& t : TASKS) printf("  %-30s %s\n", t.name, t.description);
    printf("\npositional encodings (--pe): %s\n", names_of(PE_NAMES).c_str());
    printf("\nmodel presets (--model), with their training defaults:\n");
    for (const TrainingDefaults& d : TRAINING_DEFAULTS)
        for (const Preset& p : PRESETS)
            if (strcmp(p.name, d.model) == 0)
                printf("  %-6s %2d layers, d_model %4d, %2d heads, d_ff %4d; %d steps, lr %g, dropout %g\n", p.name, p.L, p.C, p.NH, p.F,
                       d.steps, d.lr, d.dropout);
    printf("\nflags:\n");
    int width = 0;
    for (const Flag& f : flag_table(c)) width = std::max(width, (int)strlen(f.name));
    for (const Flag& f : flag_table(c)) printf("  %-*s %s\n", width, f.name, f.help);
}

// memory the system could give this process now (MemAvailable), or infinity if it does not say
static double host_available_bytes() {
    std::ifstream f("/proc/meminfo");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("MemAvailable:", 0) == 0) return atof(line.c_str() + 13) * 1024;
    return INFINITY;
}

static std::string gib(double bytes) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
    return buf;
}

// A model that would not fit is refused before anything is allocated, with the size asked for
// (B = 0: the parameters, gradients and AdamW state alone, checked before the data exists).
static void check_fits(const char* where, double needed, double available, const ModelConfig& mc, int B) {
    if (needed <= available) return;
    std::string what = B ? format_text("parameters, gradients, AdamW state, and activations for %d x %d tokens", B, mc.max_T)
                         : "parameters, gradients and AdamW state alone";
    fail("the model needs %s of memory on %s (%s); %s has %s available: use a smaller model, --batch or length", gib(needed).c_str(), where,
         what.c_str(), where, gib(available).c_str());
}

// What of a configuration the GPU path does not run yet, or "": the later PEs, drawn positions
// and RoPE scaling have CPU code only so far (issue 13).
static std::string gpu_lacks(const RunConfig& c) {
    if (find_pe(c.pe) >= NUM_PAPER_PES) return "--pe " + c.pe;
    if (c.random_positions > 0) return "--random-positions";
    if (c.abacus) return "--abacus";
    if (c.position_coupling) return "--position-coupling";
    if (c.rope_scaling != ROPE_UNSCALED) return "--rope-scaling";
    if (c.pe_per_layer) return "--pe-per-layer";
    if (c.pack) return "--pack";
    return "";
}

// the model the flags describe, for a vocabulary of V and sequences of up to max_T tokens
static ModelConfig model_config(const RunConfig& c, int V, int max_T) {
    ModelConfig mc{c.layers, c.d_model, c.heads, c.d_ff, V, max_T, find_pe(c.pe), (float)c.rope_frac, (float)c.dropout};
    mc.random_positions = c.random_positions;
    mc.abacus = c.abacus;
    mc.position_coupling = c.position_coupling;
    mc.cope_max = c.cope_max;
    mc.pe_per_layer = c.pe_per_layer;
    mc.packed = c.pack;
    return mc;
}

// Fills in what the presets decide and checks what no model or task check covers.
static void resolve_config(RunConfig* c) {
    const Preset* preset = nullptr;
    for (const Preset& p : PRESETS)
        if (c->model == p.name) preset = &p;
    if (!preset) fail("unknown model preset '%s' (valid: %s)", c->model.c_str(), names_of(PRESETS).c_str());
    if (c->layers == UNSET) c->layers = preset->L;
    if (c->d_model == UNSET) c->d_model = preset->C;
    if (c->heads == UNSET) c->heads = preset->NH;
    if (c->d_ff == UNSET) c->d_ff = preset->F;
    for (const TrainingDefaults& d : TRAINING_DEFAULTS)
        if (c->model == d.model) {
            if (c->steps == UNSET) c->steps = d.steps;
            if (c->eval_every == UNSET) c->eval_every = d.eval_every;
            if (c->lr == UNSET) c->lr = d.lr;
            if (c->dropout == UNSET) c->dropout = d.dropout;
        }
    ModelConfig architecture = model_config(*c, 1, 1);
    validate_model_config(architecture);
    if (c->rope_scaling != ROPE_UNSCALED && architecture.pe != PE_ROPE) fail("--rope-scaling rescales RoPE's angles: it needs --pe rope, not %s", c->pe.c_str());  // now, before any data is built; vocabulary and length come later
    // parameters, gradients and AdamW state alone: a model too large for any machine is refused
    // before its data is built (make_model checks everything, activations included)
    check_fits("the host", model_bytes(architecture, 0), host_available_bytes(), architecture, 0);
    if (c->steps < 1 || c->eval_every < 1) fail("--steps and --eval-every must be at least 1");
    if (!(c->lr > 0)) fail("--lr must be above 0");
    if (c->batch < 1 || c->batch > 4096) fail("--batch %d is out of range [1, 4096]", c->batch);
    if (c->sort_pool < 0 || c->sort_pool > 4096) fail("--sort-pool %d is out of range [0, 4096]", c->sort_pool);
    if (c->warmup_frac > 1) fail("--warmup-frac %g is out of range [0, 1]", c->warmup_frac);
    if (c->weight_decay > 1) fail("--weight-decay %g is out of range [0, 1]", c->weight_decay);
    if (!(c->grad_clip > 0)) fail("--grad-clip must be above 0 (it is the largest gradient norm a step may have)");
    if (c->device != "auto" && c->device != "cpu" && c->device != "gpu") fail("unknown device '%s' (valid: auto cpu gpu)", c->device.c_str());
    if (c->precision != "fp32" && c->precision != "tf32") fail("unknown precision '%s' (valid: fp32 tf32)", c->precision.c_str());
#ifdef __CUDACC__
    // (a check may run where the runs will not: on a cluster's login node, say)
    if (c->device == "gpu" && !gpu_present() && !c->check) fail("--device gpu: no CUDA device is visible");
    if (c->device == "gpu" && !gpu_lacks(*c).empty()) fail("--device gpu: %s has no GPU kernels yet (--device cpu runs it)", gpu_lacks(*c).c_str());
#else
    if (c->device == "gpu") fail("--device gpu: this build has no GPU path (nvcc was not on the PATH when it was built)");
#endif
}

// ----------------------------------------------------------------------------
// run fields: the saved flags, two int32 header fields each, after the run's progress

enum RunProgress { R_STEP = H_RUN, R_BEST_STEP, R_BEST_ACCURACY, R_SKIPPED = R_BEST_ACCURACY + 2, R_FLAGS };

struct Progress {
    int step = 0;            // steps done (updates made, plus any skipped by --skip-nonfinite)
    int best_step = 0;       // the step after which valid accuracy was best
    double best_accuracy = -1;
    int skipped = 0;         // steps whose update --skip-nonfinite skipped
};

// a saved flag's value in its two header fields, and back: integers and switches in the first
// (the second stays 0), u64 and double as all 64 bits
static void flag_to_fields(const Flag& f, int32_t* fields) {
    if (f.type == FLAG_INT || f.type == FLAG_CHOICE) fields[0] = *(int*)f.value;
    else if (f.type == FLAG_SWITCH) fields[0] = *(bool*)f.value;
    else memcpy(fields, f.value, 8);
}
static void fields_to_flag(const int32_t* fields, const Flag& f) {
    if (f.type == FLAG_CHOICE && (fields[0] < 0 || fields[0] >= (int)f.choices.size()))
        fail("the checkpoint's %s is choice %d, which does not exist", f.name, fields[0]);
    if (f.type == FLAG_INT || f.type == FLAG_CHOICE) *(int*)f.value = fields[0];
    else if (f.type == FLAG_SWITCH) *(bool*)f.value = fields[0] != 0;
    else memcpy(f.value, fields, 8);
}

static Header run_header(const Model& m, CheckpointKind kind, RunConfig* c, const Progress& p) {
    Header h = checkpoint_header(m, kind, c->task, c->model);
    h[R_STEP] = p.step, h[R_BEST_STEP] = p.best_step, h[R_SKIPPED] = p.skipped;
    memcpy(&h[R_BEST_ACCURACY], &p.best_accuracy, 8);
    int field = R_FLAGS;
    for (const Flag& f : flag_table(c))
        if (f.saved) flag_to_fields(f, &h[field]), field += 2;
    return h;
}

// the run a checkpoint came from: its task, PE and every saved flag
static Progress restore_run(const Header& h, RunConfig* c) {
    if (h[H_PE] < 0 || h[H_PE] >= NUM_PES) fail("the checkpoint names positional encoding %d, which does not exist", h[H_PE]);
    c->task = header_task(h);
    c->pe = PE_NAMES[h[H_PE]];
    int field = R_FLAGS;
    for (const Flag& f : flag_table(c))
        if (f.saved) fields_to_flag(&h[field], f), field += 2;
    Progress p;
    p.step = h[R_STEP], p.best_step = h[R_BEST_STEP], p.skipped = h[R_SKIPPED];
    memcpy(&p.best_accuracy, &h[R_BEST_ACCURACY], 8);
    return p;
}

// ----------------------------------------------------------------------------
// batches

// B examples right-padded to the longest: targets[b,t] is the next token where that token is
// part of the answer (target words and <eos>), else -1, so the loss sees only answers.
// pack_batch then lays them end to end in fewer rows.
struct Batch {
    int B = 0, T = 0;
    std::vector<int> tokens, targets;  // (B, T)
    std::vector<int> lengths;          // (B) each row's tokens before its padding
    std::vector<int> positions;        // (B, T) drawn by draw_positions, or counted by pack_batch; empty: 0 .. T-1
    std::vector<int> place_offsets;    // (B) drawn by draw_place_offsets; empty: 0
    std::vector<int> starts;           // (B, T) where each token's sequence starts in its row (pack_batch); empty: 0
    long real_tokens = 0;              // tokens that are not padding
    size_t loss_tokens = 0;            // what the summed loss is divided by (model_backward); 0: its targets

    TokenPlaces places() const {
        auto given = [](const std::vector<int>& v) { return v.empty() ? nullptr : v.data(); };
        return {given(positions), given(place_offsets), given(starts)};
    }
};

static void fill_batch(Batch* batch, const Split& split, const std::vector<int>& examples) {
    batch->B = (int)examples.size();
    batch->T = 0;
    for (int e : examples) batch->T = std::max(batch->T, split.example_len(e));
    batch->tokens.assign((size_t)batch->B * batch->T, PAD_ID);
    batch->targets.assign((size_t)batch->B * batch->T, -1);
    batch->lengths.clear();
    batch->positions.clear();
    batch->place_offsets.clear();
    batch->starts.clear();
    batch->real_tokens = 0;
    for (int b = 0; b < batch->B; b++) {
        int e = examples[b], len = split.example_len(e);
        int* tokens = batch->tokens.data() + (size_t)b * batch->T;
        std::copy(split.example(e), split.example(e) + len, tokens);
        for (int t = split.prompt_len[e] - 1; t < len - 1; t++) batch->targets[(size_t)b * batch->T + t] = tokens[t + 1];
        batch->real_tokens += len;
        batch->lengths.push_back(len);
    }
}

// --random-positions L: each training sequence's n positions, n distinct values of 0 .. L-1 in
// increasing order, uniformly over all such sets (Ruoss et al. 2023). Selection sampling draws
// them in one pass: position p is taken with probability (still needed) / (still available).
// A function of (seed, step) alone, like the batches, so a resumed run draws the same.
static void draw_positions(Batch* batch, int L, uint64_t seed, int step) {
    batch->positions.assign((size_t)batch->B * batch->T, 0);
    for (int b = 0; b < batch->B; b++) {
        Rng rng = rng_stream(seed, hash_string("positions"), step, b);
        int* pos = batch->positions.data() + (size_t)b * batch->T;
        int n = batch->lengths[b], taken = 0;
        for (int p = 0; p < L && taken < n; p++)
            if (rng.below(L - p) < n - taken) pos[taken++] = p;
        for (int t = n; t < batch->T; t++) pos[t] = pos[n - 1];  // padding: any position in range will do
    }
}

// --abacus and --position-coupling: each training sequence's shift of its digits' places (pe.h),
// uniform in 0 .. ABACUS_MAX_OFFSET-1 for Abacus; for coupling, among the starts that keep the
// sequence's positions below max_pos. Like the positions, a function of (seed, step) alone.
static void draw_place_offsets(Batch* batch, const Model& m, uint64_t seed, int step) {
    batch->place_offsets.resize(batch->B);
    for (int b = 0; b < batch->B; b++) {
        Rng rng = rng_stream(seed, hash_string(m.config.position_coupling ? "coupling" : "abacus"), step, b);
        if (!m.config.position_coupling) {
            batch->place_offsets[b] = (int)rng.below(ABACUS_MAX_OFFSET);
            continue;
        }
        int largest = 0;
        for (int t = 0; t < batch->lengths[b]; t++)
            largest = std::max(largest, digit_place(batch->tokens.data() + (size_t)b * batch->T, m.is_digit.data(), t));
        batch->place_offsets[b] = (int)rng.below(m.config.max_pos() - largest);
    }
}

// --pack: the batch's sequences laid end to end in rows of its T tokens, longest first, each in
// the first row with room for it (first fit decreasing), so that padding fills only the rows'
// ends and few of them. Which row a sequence lands in changes nothing it computes. Each
// sequence attends only within itself (starts) and counts its positions from its own start (or
// keeps those draw_positions drew), so the model computes on the packed rows what it computes on
// the padded batch: the same loss and gradient, up to the rounding of sums taken in another
// order. A row's padding starts a sequence of its own, which nothing reads.
static void pack_batch(Batch* batch) {
    int T = batch->T;
    std::vector<int> order(batch->B);  // longest first: first fit then leaves the short ones for the gaps
    for (int b = 0; b < batch->B; b++) order[b] = b;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return batch->lengths[a] > batch->lengths[b]; });
    std::vector<int> row_of(batch->B), offset(batch->B), used;  // used: each row's tokens so far
    for (int b : order) {
        int len = batch->lengths[b], row = 0;
        while (row < (int)used.size() && used[row] + len > T) row++;
        if (row == (int)used.size()) used.push_back(0);
        row_of[b] = row, offset[b] = used[row], used[row] += len;
    }
    size_t n = used.size() * (size_t)T;
    std::vector<int> tokens(n, PAD_ID), targets(n, -1), positions(n), starts(n);
    for (size_t row = 0; row < used.size(); row++)
        for (int t = 0; t < T; t++) starts[row * T + t] = used[row], positions[row * T + t] = t - used[row];  // the padding's
    for (int b = 0; b < batch->B; b++)
        for (int t = 0; t < batch->lengths[b]; t++) {
            size_t from = (size_t)b * T + t, to = (size_t)row_of[b] * T + offset[b] + t;
            tokens[to] = batch->tokens[from], targets[to] = batch->targets[from];
            positions[to] = batch->positions.empty() ? t : batch->positions[from];
            starts[to] = offset[b];
        }
    batch->B = (int)used.size();
    batch->tokens.swap(tokens), batch->targets.swap(targets), batch->positions.swap(positions), batch->starts.swap(starts);
    batch->lengths = used;
}

// 0 .. n-1 in the order a Fisher-Yates shuffle with `rng` draws
static std::vector<int> drawn_permutation(int n, Rng rng) {
    std::vector<int> order(n);
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) std::swap(order[i], order[rng.below(i + 1)]);
    return order;
}

// The examples of training batch `step`: epochs over the training split, each a permutation
// drawn from (seed, epoch) and read in order (the paper's random sampler). With --sort-pool K
// the stream is read K batches at a time: those K B examples are sorted by length, cut into K
// batches of similar lengths, and the K taken in an order drawn from (seed, pool). Every example
// is still read once per epoch, within K batches of where the paper's sampler reads it; what
// changes is which examples share a batch, so that a batch's padding shrinks. And since a
// batch's loss is a mean over its target tokens, which would weigh a token of a batch of short
// examples more than one of long ones, a pool's batches divide their summed loss by the pool's
// mean count of targets per batch instead (loss_tokens): every token weighs what it would in
// the paper's mixed batches. A function of (seed, step) alone, so a resumed run sees the
// batches the uninterrupted run would have.
struct BatchSampler {
    uint64_t seed;
    const Split& split;
    int pool;                 // batches sorted together; 1: the paper's batches
    long epoch = -1;
    std::vector<int> order;   // epoch's permutation
    long pooled = -1;         // the pool in `sorted`
    std::vector<int> sorted;  // its K B examples, shortest first
    std::vector<int> slots;   // which K-th of `sorted` each of its batches takes
    size_t pool_loss_tokens = 0;  // its targets / K, rounded

    BatchSampler(uint64_t s, const Split& training, int sort_pool) : seed(s), split(training), pool(std::max(1, sort_pool)) {}

    // the k-th example of the paper's stream
    int stream(long k) {
        int n = split.size();
        if (k / n != epoch) {
            epoch = k / n;
            order = drawn_permutation(n, rng_stream(seed, hash_string("batches"), epoch));
        }
        return order[k % n];
    }

    std::vector<int> examples(long step, int B) {
        if (pool == 1) {
            std::vector<int> out;
            for (long k = step * B; k < (step + 1) * B; k++) out.push_back(stream(k));
            return out;
        }
        if (step / pool != pooled) {
            pooled = step / pool;
            sorted.clear();
            for (long k = pooled * pool * B; k < (pooled + 1) * pool * B; k++) sorted.push_back(stream(k));
            std::stable_sort(sorted.begin(), sorted.end(), [&](int a, int b) { return split.example_len(a) < split.example_len(b); });
            size_t targets = 0;
            for (int e : sorted) targets += split.example_len(e) - split.prompt_len[e];  // fill_batch's targets
            pool_loss_tokens = (targets + pool / 2) / pool;
            slots = drawn_permutation(pool, rng_stream(seed, hash_string("pools"), pooled));
        }
        auto first = sorted.begin() + (size_t)slots[step % pool] * B;
        return std::vector<int>(first, first + B);
    }

    // the batch of `step`, with its loss's divisor
    void fill(Batch* batch, long step, int B) {
        fill_batch(batch, split, examples(step, B));
        batch->loss_tokens = pool == 1 ? 0 : pool_loss_tokens;
    }
};

// ----------------------------------------------------------------------------
// a run, and the device it computes on

struct Run {
    RunConfig* config;
    Dataset data;
    Model model;  // on the CPU: the model itself; with a GPU: the host copy checkpoints read and write
    Progress progress;
    int saved_step = -1;  // the step state.bin was saved after; -1: none yet
    int evaluated_step = 0;         // the step of the parameters report() evaluates
    bool evaluated_latest = false;  // they are a state.bin's (the latest step's), not model.bin's (the best)
    std::string dir;
    std::unique_ptr<GpuModel> gpu;  // the model on the GPU, or nothing
    std::vector<float> logits;      // a batch's logits copied from the GPU
    bool quiet = false;             // build() does not describe data, device and model: stdout carries answers alone

    explicit Run(RunConfig* c) : config(c) {}
};

static const Split& train_split(const Run& r) { return r.data.splits[SPLIT_TRAIN]; }
static const Split& valid_split(const Run& r) { return r.data.splits[SPLIT_VALID]; }
static const Split& test_split(const Run& r) { return r.data.splits[SPLIT_TEST]; }

static OptimConfig optim_config(const RunConfig& c) {
    OptimConfig o;
    o.steps = c.steps, o.lr = c.lr, o.warmup_frac = c.warmup_frac, o.weight_decay = c.weight_decay;
    return o;
}

// Each function below runs on the GPU when the run has one, else on the CPU reference.

// Forward (with the batch's targets), backward and clipping, then AdamW only if the loss and the
// gradient norm are finite: a non-finite step leaves the parameters and AdamW state as they
// were, for the caller to stop the run or skip the step. Returns whether the update was made.
static bool device_train_step(Run* r, const Batch& batch, const Dropout& drop, int step, double* loss, double* grad_norm) {
    RunConfig& c = *r->config;
    OptimConfig o = optim_config(c);
#ifdef __CUDACC__
    if (r->gpu) {
        *loss = gpu_forward(r->gpu.get(), batch.tokens, &batch.targets, batch.B, batch.T, drop);
        gpu_backward(r->gpu.get(), batch.B, batch.T, drop, batch.loss_tokens);
        *grad_norm = gpu_clip_gradients(r->gpu.get(), c.grad_clip);
        if (!std::isfinite(*loss) || !std::isfinite(*grad_norm)) return false;
        gpu_adamw_update(r->gpu.get(), o, lr_at(o, step), step + 1);
        return true;
    }
#endif
    *loss = model_forward(&r->model, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, drop, 0, batch.places());
    model_backward(&r->model, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, drop, batch.places(), batch.loss_tokens);
    *grad_norm = clip_gradients(&r->model, c.grad_clip);
    if (!std::isfinite(*loss) || !std::isfinite(*grad_norm)) return false;
    adamw_update(&r->model, o, lr_at(o, step), step + 1);
    return true;
}

// the logits (B, T, V) of a batch, without dropout, in host memory
static const float* device_logits(Run* r, const Batch& batch) {
#ifdef __CUDACC__
    if (r->gpu) {
        gpu_forward(r->gpu.get(), batch.tokens, nullptr, batch.B, batch.T, NO_DROPOUT);
        gpu_logits(r->gpu.get(), batch.B, batch.T, &r->logits);
        return r->logits.data();
    }
#endif
    model_forward(&r->model, batch.tokens.data(), nullptr, batch.B, batch.T, NO_DROPOUT);
    return r->model.act(A_LOGITS);
}

// the GPU's parameters and AdamW state into the host model, before a checkpoint is written
static void device_to_host(Run* r) {
#ifdef __CUDACC__
    if (r->gpu) gpu_download(&r->model, *r->gpu);
#endif
    (void)r;
}

// the GPU's gradients of the last step into the host model, for the non-finite diagnostic
static void device_grads_to_host(Run* r) {
#ifdef __CUDACC__
    if (r->gpu) gpu_download_grads(&r->model, *r->gpu);
#endif
    (void)r;
}

// the host model's parameters and AdamW state onto the GPU, after a checkpoint was read
static void host_to_device(Run* r) {
#ifdef __CUDACC__
    if (r->gpu) gpu_upload(r->gpu.get(), r->model);
#endif
    (void)r;
}

// whether the run computes on the GPU: --device allows it, this build has the GPU path, the
// machine has a CUDA device, and the configuration has GPU kernels (gpu_lacks)
static bool wants_gpu(const RunConfig& c) {
#ifdef __CUDACC__
    return c.device != "cpu" && gpu_present() && gpu_lacks(c).empty();
#else
    return (void)c, false;
#endif
}

// a line describing the run's data, device or model, as build() makes them
static void describe(const Run& r, const char* format, ...) {
    if (r.quiet) return;
    va_list args;
    va_start(args, format);
    vprintf(format, args);
    va_end(args);
}

// Makes the run's model: on the CPU, or on the GPU with a host copy for checkpoints and greedy
// decoding (batch 1: its activations need not hold a training batch). Says where it is.
static void make_model(Run* r, const ModelConfig& mc) {
    RunConfig& c = *r->config;
    bool gpu = wants_gpu(c);
    validate_model_config(mc);
    check_fits("the host", model_bytes(mc, gpu ? 1 : c.batch), host_available_bytes(), mc, gpu ? 1 : c.batch);
#ifdef __CUDACC__
    if (gpu) check_fits("the GPU", model_bytes(mc, c.batch), gpu_free_bytes(), mc, c.batch);
#endif
    model_init(&r->model, mc, gpu ? 1 : c.batch, c.seed);
#ifdef __CUDACC__
    if (gpu) {
        r->gpu.reset(new GpuModel());
        gpu_init(r->gpu.get(), r->model, c.batch, c.precision == "fp32" ? PRECISION_FP32 : PRECISION_TF32);
        double fp32, tf32;
        describe(*r, "device: %s, %s matrix products\n", gpu_name(&fp32, &tf32).c_str(), c.precision.c_str());
        return;
    }
#endif
    std::string why = c.device == "auto" && !gpu_lacks(c).empty() ? " (" + gpu_lacks(c) + " has no GPU kernels yet)" : "";
    describe(*r, "device: CPU, %d threads%s\n", omp_get_max_threads(), why.c_str());
}

// ----------------------------------------------------------------------------
// progress lines

static double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// When a progress line is due: a terminal redraws one line twice a second; a log (nohup, a
// sweep, CI) gets a line every progress_log_seconds, so a long run shows it is alive during
// training and during evaluation. (Tests set it to 0: a line for every step and batch.)
static double progress_log_seconds = 15;

struct Ticker {
    bool terminal = isatty(STDOUT_FILENO);
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();

    bool due() const { return seconds_since(last) >= (terminal ? 0.5 : progress_log_seconds); }
    // prints a progress line: redrawn in place on a terminal, one line each time in a log
    void print(const char* format, ...) {
        va_list args;
        va_start(args, format);
        printf("%s", terminal ? "\r" : "");
        vprintf(format, args);
        va_end(args);
        printf("%s", terminal ? "\033[K" : "\n");  // a terminal: clear what a longer line left
        fflush(stdout);
        last = std::chrono::steady_clock::now();
    }
};

// ----------------------------------------------------------------------------
// evaluation

// Exact match by length: of the answer, and with a scratchpad, of the scratchpad apart; and
// per-token accuracy (the Chomsky-hierarchy papers' measure): the share of target tokens, <eos>
// included, whose argmax is the gold token with the gold prefix fed in (teacher-forced).
struct Graded {
    SplitResult answers, scratchpads, tokens;
};

// The sequence position of an example's "Thus," (its scratchpad's end), or -1 without one.
static int scratchpad_end(const Split& split, int e, int thus) {
    for (int t = split.prompt_len[e]; thus >= 0 && t < split.example_len(e); t++)
        if (split.example(e)[t] == thus) return t;
    return -1;
}

// The exact-match accuracy of one constant answer, the split's most common (what follows the
// scratchpad's "Thus," where there is one): near 0 for copy, one half for parity and LEGO, a
// tenth for a one-digit sum. An accuracy says little until it clears this floor, and dev/report
// measures "learned" from it.
static double majority_answer_accuracy(const Split& split, int thus) {
    std::map<std::vector<int>, int> answers;  // answer's tokens -> examples
    int most = 0;
    for (int e = 0; e < split.size(); e++) {
        const int* ids = split.example(e);
        int end = scratchpad_end(split, e, thus), from = end < 0 ? split.prompt_len[e] : end + 1;
        most = std::max(most, ++answers[std::vector<int>(ids + from, ids + split.example_len(e) - 1)]);  // without <eos>
    }
    return split.size() ? (double)most / split.size() : 0;
}

// The example's gold target, and its greedy output given that it first differs from the gold
// at sequence position `at` with `token` (graded by grade_output, tasks.h). Decoding goes on
// from there on the CPU copy of the model, whose cache makes a token cheap.
static Verdict decode_from(Run* r, const Split& split, int e, int at, int token) {
    const int* ids = split.example(e);
    std::vector<int> output(ids + split.prompt_len[e], ids + at);
    output.push_back(token);
    if (token != EOS_ID) {
        std::vector<int> prefix(ids, ids + at);
        prefix.push_back(token);
        std::vector<int> more = generate_greedy(&r->model, prefix, EOS_ID);
        output.insert(output.end(), more.begin(), more.end());
    }
    bool ended = output.back() == EOS_ID;
    if (ended) output.pop_back();
    Words gold, said;
    for (int t = split.prompt_len[e]; t < split.example_len(e) - 1; t++) gold.push_back(r->data.vocab.words[ids[t]]);
    for (int id : output) said.push_back(r->data.vocab.words[id]);
    return grade_output(gold, said, ended);
}

// --rope-scaling: RoPE's tables for a batch of sequences up to T tokens, scaled by
// s = T / (longest training sequence) where that is above 1: the dynamic form, so every batch
// within the training lengths (all of validation) keeps plain RoPE. T = 0 restores them.
// Evaluation runs on the CPU with it (gpu_lacks), so the host tables are the ones in use.
static void scale_rope_for(Run* r, int T) {
    if (r->config->rope_scaling == ROPE_UNSCALED) return;
    const ModelConfig& mc = r->model.config;
    int train_len = train_split(*r).max_example_len();
    RopeScaling s{r->config->rope_scaling, (double)T / train_len, train_len};
    if (s.factor <= 1) s = RopeScaling();
    r->model.pe_tables = make_pe_tables(mc.pe, mc.C, mc.NH, rope_dims(mc.HS(), mc.rope_frac), mc.max_pos(), s);
}

// Greedy decoding reproduces the gold target (and stops at <eos>) iff, with the gold prefix fed
// in, the argmax at every target position is the gold token: each greedy step then sees exactly
// the teacher-forced prefix. So one forward pass per batch decides exact match. It decides more:
// greedy output is the gold up to the first position whose argmax differs. With a scratchpad,
// a first difference after its "Thus," means a right scratchpad and a wrong answer; one before
// it, a wrong scratchpad, and whether the answer is right anyway takes decoding from there.
static Graded evaluate(Run* r, const Split& split, const char* name) {
    int batch_size = r->config->batch, V = r->model.config.V, thus = r->data.vocab.id(SCRATCHPAD_END.back());
    Ticker ticker;
    std::vector<int> order(split.size());
    for (int i = 0; i < split.size(); i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return split.example_len(a) < split.example_len(b); });
    Graded graded;
    auto add = [&](int e, Verdict v) {
        graded.answers.add(split.length[e], v.answer);
        graded.scratchpads.add(split.length[e], v.scratchpad);
    };
    struct Difference {
        int example, at, token;  // the first position whose argmax is not the gold token, and that argmax
    };
    bool host_is_current = !r->gpu;
    int decoded = 0;
    size_t seen = 0;
    auto progress = [&] {
        if (!ticker.due()) return;
        std::string decoding = thus >= 0 ? format_text(", %d decoded on from where they left the gold", decoded) : "";
        ticker.print("evaluating %s: %zu of %d examples%s", name, seen, split.size(), decoding.c_str());
    };
    Batch batch;
    for (size_t first = 0; first < order.size(); first += batch_size) {
        std::vector<int> examples(order.begin() + first, order.begin() + std::min(order.size(), first + (size_t)batch_size));
        fill_batch(&batch, split, examples);
        scale_rope_for(r, batch.T);
        const float* logits = device_logits(r, batch);
        std::vector<Difference> to_decode;  // decoded after the batch: decoding overwrites the CPU's logits
        for (int b = 0; b < batch.B; b++) {
            int e = examples[b], end = scratchpad_end(split, e, thus);
            Difference d = {e, -1, -1};
            for (int t = 0; t < batch.T; t++) {
                int target = batch.targets[(size_t)b * batch.T + t];
                if (target < 0) continue;
                int said = argmax(logits + ((size_t)b * batch.T + t) * V, V);
                graded.tokens.add(split.length[e], said == target);
                if (said != target && d.at < 0) d = {e, t + 1, said};
            }
            if (d.at < 0) add(e, {true, true});
            else if (end < 0) add(e, {false, false});
            else if (d.at > end) add(e, {false, true});
            else to_decode.push_back(d);
        }
        seen += examples.size();
        if (!to_decode.empty() && !host_is_current) device_to_host(r), host_is_current = true;
        for (const Difference& d : to_decode) {
            add(d.example, decode_from(r, split, d.example, d.at, d.token));
            decoded++;
            progress();
        }
        progress();
    }
    scale_rope_for(r, 0);
    return graded;
}

// the words of a greedy output without its <eos>, and whether it had one (else it filled the model's longest sequence)
static Words output_words(const Vocab& vocab, const std::vector<int>& output, bool* ended) {
    Words said;
    for (int token : output)
        if (token != EOS_ID) said.push_back(vocab.words[token]);
    *ended = !output.empty() && output.back() == EOS_ID;
    return said;
}

// decodes the first n examples of a split token by token (RoPE scaled for each as evaluate
// scales it) and prints prompt, gold and output
static void print_samples(Run* r, const Split& split, const char* name, int n) {
    const Vocab& vocab = r->data.vocab;
    for (int i = 0; i < std::min(n, split.size()); i++) {
        std::vector<int> prompt(split.example(i), split.example(i) + split.prompt_len[i]);
        scale_rope_for(r, split.example_len(i));
        bool ended = false;
        Words said = output_words(vocab, generate_greedy(&r->model, prompt, EOS_ID), &ended);
        Words prompt_words, gold;
        example_words(split, vocab, i, &prompt_words, &gold);
        Verdict v = grade_output(gold, said, ended);
        bool scratchpad = vocab.id(SCRATCHPAD_END.back()) >= 0;
        printf("%s %s (length %d%s)\n  prompt: %s\n  gold:   %s\n  model:  %s%s\n", v.answer ? "[right]" : "[wrong]", name, split.length[i],
               scratchpad ? (v.scratchpad ? ", scratchpad right" : ", scratchpad wrong") : "", join_words(prompt_words).c_str(),
               join_words(gold).c_str(), join_words(said).c_str(), ended ? "" : " (no <eos>)");
    }
    scale_rope_for(r, 0);
}

// No prompt of any task comes near this; a longer line is not a prompt (`< /dev/zero`, a binary
// file), and reading it whole would take memory without bound.
static const size_t MAX_PROMPT_CHARS = 1 << 16;

// one line of standard input without its newline, or false at the end of the input
static bool read_prompt_line(std::string* line, int number) {
    line->clear();
    for (int ch; (ch = getchar()) != EOF;) {
        if (ch == '\n') return true;
        if (line->size() == MAX_PROMPT_CHARS) fail("line %d is longer than %zu characters: not a prompt", number, MAX_PROMPT_CHARS);
        line->push_back((char)ch);
    }
    return !line->empty();
}

// Reads prompts from stdin, one per line in the task's words, and hands each to `answer` with
// its gold target and line number; a line that is not a prompt of the task is an error naming it.
// A run made with --bos takes its prompts with or without the <bos> that --show prints first.
template <typename Answer>
static void for_each_prompt(const Task& task, const Vocab& vocab, const DataConfig& data, Answer answer) {
    std::string line;
    for (int number = 1; read_prompt_line(&line, number); number++) {
        if (!line.empty() && line.back() == '\r') line.pop_back();  // files written on Windows
        Words prompt = split_words(line);
        if (vocab.id("<bos>") >= 0 && !prompt.empty() && prompt[0] == "<bos>") prompt.erase(prompt.begin());
        int length = 0;
        Words gold;
        try {
            gold = task_answer(task, vocab, join_words(prompt), &length, data);
        } catch (const Error& e) {
            fail("line %d: %s", number, e.what());
        }
        answer(prompt, gold, number);  // without <bos>
    }
}

// --load M --answer: the model's greedy output to each prompt on stdin, one line each in the
// words --answer prints the gold in, so that diff compares the two (an output that fills the
// model's longest sequence without <eos> ends in "(no <eos>)", as --sample shows it). For
// questions the splits do not ask: the same numbers in another order, a chosen hard case.
static void answer_with_model(Run* r) {
    const Vocab& vocab = r->data.vocab;
    int bos = vocab.id("<bos>"), max_T = r->model.config.max_T;  // <bos> is a word only in runs made with --bos
    for_each_prompt(find_task(r->config->task), vocab, r->config->data, [&](const Words& prompt, const Words& gold, int number) {
        std::vector<int> tokens;
        if (bos >= 0) tokens.push_back(bos);
        for (const std::string& word : prompt) tokens.push_back(vocab.id(word));
        int whole = (int)(tokens.size() + gold.size()) + 1;  // prompt, gold target, <eos>: the room decoding needs
        if (whole > max_T)
            fail("line %d: the prompt and its answer take %d tokens; this model was made for at most %d (its data's longest example)", number, whole, max_T);
        scale_rope_for(r, whole);  // as evaluate scales a batch holding this example
        bool ended = false;
        Words said = output_words(vocab, generate_greedy(&r->model, tokens, EOS_ID), &ended);
        printf("%s%s\n", join_words(said).c_str(), ended ? "" : " (no <eos>)");
    });
    scale_rope_for(r, 0);
}

// ----------------------------------------------------------------------------
// the run directory

static void make_directory(const std::string& path) {
    for (size_t at = 1; at <= path.size(); at++) {
        if (at < path.size() && path[at] != '/') continue;
        std::string prefix = path.substr(0, at);
        if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) fail("can not create run directory %s: %s", prefix.c_str(), strerror(errno));
    }
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) fail("can not use %s as the run directory: it is a file, not a directory", path.c_str());
    if (access(path.c_str(), W_OK) != 0) fail("can not write in run directory %s: %s", path.c_str(), strerror(errno));
}

// the shortest text that reads back as the same double
static std::string format_double(double v) {
    char buf[32];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, sizeof(buf), "%.*g", digits, v);
        if (strtod(buf, nullptr) == v) break;
    }
    return buf;
}

static std::string config_json(RunConfig* c, const Model& m, const Dataset& d) {
    std::string s = "{\n  \"task\": \"" + c->task + "\",\n  \"pe\": \"" + c->pe + "\",\n  \"model\": \"" + c->model + "\",\n";
    for (const Flag& f : flag_table(c)) {
        if (!f.saved) continue;
        std::string value = f.type == FLAG_INT      ? std::to_string(*(int*)f.value)
                          : f.type == FLAG_U64    ? std::to_string(*(uint64_t*)f.value)
                          : f.type == FLAG_SWITCH ? (*(bool*)f.value ? "true" : "false")
                          : f.type == FLAG_CHOICE ? "\"" + f.choices[*(int*)f.value] + "\""
                                                  : format_double(*(double*)f.value);
        s += "  \"" + std::string(f.name + 2) + "\": " + value + ",\n";
    }
    s += "  \"train-min\": " + std::to_string(d.lengths.train_min) + ",\n  \"vocab\": " + std::to_string(m.config.V) +
         ",\n  \"max-tokens\": " + std::to_string(m.config.max_T) + ",\n  \"parameters\": " + std::to_string(m.layout.total) + "\n}\n";
    return s;
}

static std::string format_duration(double seconds) {
    long s = (long)(seconds + 0.5);
    char buf[32];
    if (s >= 3600) snprintf(buf, sizeof(buf), "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else snprintf(buf, sizeof(buf), "%ld:%02ld", s / 60, s % 60);
    return buf;
}

// On resume, log.tsv keeps only the rows up to the step the state was saved at: rows written
// after it belong to steps that will run again. The kept rows go to a new file that replaces the
// old one only once written whole, so a full disk can not leave log.tsv empty.
static FILE* open_log(const std::string& path, int resumed_step) {
    std::string kept;
    std::ifstream old(path);
    int rows = 0;
    for (std::string line; resumed_step > 0 && std::getline(old, line);)
        if (rows++ == 0 || atoi(line.c_str()) <= resumed_step) kept += line + "\n";
    if (kept.empty()) kept = "step\tloss\tlr\tgrad_norm\ttokens_per_s\tvalid_accuracy\n";
    write_text(path + ".tmp", kept);
    if (rename((path + ".tmp").c_str(), path.c_str()) != 0) fail("can not write %s: %s", path.c_str(), strerror(errno));
    FILE* f = fopen(path.c_str(), "a");
    if (!f) fail("can not write %s: %s", path.c_str(), strerror(errno));
    return f;
}

// A write error (a full disk) sticks to the stream until this flush reports it, with its file.
static void flush_log(FILE* log, const std::string& path) {
    if (fflush(log) != 0 || ferror(log)) fail("can not write %s: %s", path.c_str(), strerror(errno ? errno : EIO));
}

// ----------------------------------------------------------------------------
// training

// the training batch of `step` as the run's flags make it: the sampler's examples, their drawn
// positions or places, packed into fewer rows with --pack
static void training_batch(Batch* batch, BatchSampler* sampler, const Run& r, int step) {
    const RunConfig& c = *r.config;
    sampler->fill(batch, step, c.batch);
    if (c.random_positions > 0) draw_positions(batch, c.random_positions, c.seed, step);
    if (c.abacus || c.position_coupling) draw_place_offsets(batch, r.model, c.seed, step);
    if (c.pack) pack_batch(batch);
}

// one step of the run's model; returns whether the update was made (the loss and the gradient
// norm were finite)
static bool train_step(Run* r, const Batch& batch, int step, double* loss, double* grad_norm) {
    Dropout drop = {(float)r->config->dropout, r->config->seed, step};
    return device_train_step(r, batch, drop, step, loss, grad_norm);
}

// the state to resume from, after the step in r->progress
static void save_state(Run* r) {
    save_checkpoint(r->dir + "/state.bin", r->model, run_header(r->model, CKPT_TRAIN_STATE, r->config, r->progress));
    r->saved_step = r->progress.step;
}

// where a stopped run can go on from, for error messages
static std::string last_state(const Run& r) {
    if (r.saved_step < 0) return "no state was saved yet";
    return "its last state, " + r.dir + "/state.bin, is from step " + std::to_string(r.saved_step);
}

// After a validation that scored `accuracy`: keeps the best checkpoint (ties keep the earlier
// one, as the paper's trainer did) and saves the state to resume from. A checkpoint never holds
// a value that is not finite.
static void save_checkpoints(Run* r, double accuracy) {
    device_to_host(r);
    size_t bad = first_nonfinite(r->model.params);
    if (bad != SIZE_MAX)
        fail("step %d: parameter %s is not finite; nothing saved, %s", r->progress.step, param_location(r->model, bad).c_str(),
             last_state(*r).c_str());
    if (accuracy > r->progress.best_accuracy) {
        r->progress.best_accuracy = accuracy;
        r->progress.best_step = r->progress.step;
        save_checkpoint(r->dir + "/model.bin", r->model, run_header(r->model, CKPT_MODEL, r->config, r->progress));
    }
    save_state(r);
}

// ----------------------------------------------------------------------------
// steps that are not finite

// More skipped steps in a row than this, and the parameters themselves are the problem.
static const int MAX_SKIPPED_IN_A_ROW = 20;

// Appends to nonfinite.txt, for a step whose loss or gradient norm was not finite, every tensor's
// count of non-finite parameters and gradients and its largest finite magnitudes; returns the
// first place something is not finite, for the error line.
static std::string write_nonfinite_report(Run* r, int step, double loss, double grad_norm) {
    device_to_host(r);
    device_grads_to_host(r);
    const Model& m = r->model;
    char line[256];
    snprintf(line, sizeof(line), "step %d: loss %g, gradient norm %g (gradients as clipped; parameters before the update)\n", step, loss, grad_norm);
    std::string text = line;
    text += "tensor           layer  params:nonfinite  max|finite|  grads:nonfinite  max|finite|\n";
    std::string first[2];  // the first non-finite parameter, and gradient
    for (int id = 0; id < NUM_PARAMS; id++)
        for (int l = 0; l < param_copies(m.config, id); l++) {
            size_t start = m.layout.at(id, l), n = param_numel(m.config, id), bad[2] = {0, 0};
            double largest[2] = {0, 0};
            const std::vector<real>* values[2] = {&m.params, &m.grads};
            for (int k = 0; k < 2; k++)
                for (size_t i = start; i < start + n; i++) {
                    double v = (*values[k])[i];
                    if (!std::isfinite(v)) {
                        if (bad[k]++ == 0 && first[k].empty()) first[k] = std::string(k ? "gradient of " : "parameter ") + param_location(m, i);
                    } else {
                        largest[k] = std::max(largest[k], fabs(v));
                    }
                }
            if (n == 0) continue;
            snprintf(line, sizeof(line), "%-16s %5s  %16zu  %11.4g  %15zu  %11.4g\n", PARAMS[id].name,
                     is_per_layer(m.config, id) ? std::to_string(l).c_str() : "-", bad[0], largest[0], bad[1], largest[1]);
            text += line;
        }
    std::string path = r->dir + "/nonfinite.txt";
    FILE* f = fopen(path.c_str(), "a");
    bool written = f && fputs((text + "\n").c_str(), f) >= 0;
    if (!f || fclose(f) != 0 || !written) fail("can not write %s: %s", path.c_str(), strerror(errno));
    // a bad parameter is the cause of bad gradients, not the other way round: it is named first
    if (!first[0].empty()) return "first: " + first[0];
    if (!first[1].empty()) return "first: " + first[1];
    return "every parameter and gradient is finite: the forward pass overflowed";
}

// A step whose loss or gradient norm was not finite (its update was not made): stops the run,
// or with --skip-nonfinite counts it and goes on, unless too many came in a row.
static void on_nonfinite_step(Run* r, int step, double loss, double grad_norm, int in_a_row) {
    std::string where = write_nonfinite_report(r, step, loss, grad_norm);
    if (!r->config->skip_nonfinite)
        fail("step %d: loss %g, gradient norm %g: not finite (%s; %s/nonfinite.txt has every tensor); the run stopped, %s", step, loss,
             grad_norm, where.c_str(), r->dir.c_str(), last_state(*r).c_str());
    if (in_a_row > MAX_SKIPPED_IN_A_ROW)
        fail("step %d: %d steps in a row were not finite, skipping does not help (%s; see %s/nonfinite.txt)", step, in_a_row, where.c_str(),
             r->dir.c_str());
    r->progress.skipped++;
    printf("\nstep %d: loss %g, gradient norm %g: not finite, update skipped (--skip-nonfinite; %s)\n", step, loss, grad_norm, where.c_str());
}

// ----------------------------------------------------------------------------
// stopping on a signal

// SIGINT (Ctrl-C) or SIGTERM (kill, Slurm's time limit) during training: the step in flight
// finishes, the state is saved, and the program exits with 128 + the signal's number. A second
// signal of either kind stops it at once (the handler restores both defaults); checkpoints are
// written whole or not at all, so even then state.bin is intact.
static volatile sig_atomic_t stop_signal = 0;

static void on_stop_signal(int sig) {
    stop_signal = sig;
    static const char message[] = "\n(stopping after this step, once its state is saved; again to stop at once)\n";
    ssize_t ignored = write(STDERR_FILENO, message, sizeof(message) - 1);
    (void)ignored;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

// thrown when a signal ended training early; main() exits with 128 + sig
struct Stopped {
    int sig;
    std::string message;
};

// ----------------------------------------------------------------------------
// the training loop

// Trains until --steps (or stop_at, for tests), validating every --eval-every steps and at the end.
static void train(Run* r, int stop_at) {
    RunConfig& c = *r->config;
    BatchSampler sampler(c.seed, train_split(*r), c.sort_pool);
    std::string log_path = r->dir + "/log.tsv";
    FILE* log = open_log(log_path, r->progress.step);
    auto start = std::chrono::steady_clock::now();
    Ticker ticker;
    int first_step = r->progress.step, in_a_row = 0;
    double window_seconds = 0, window_loss = 0;
    long window_tokens = 0, window_steps = 0;
    Batch batch;
    stop_signal = 0;
    signal(SIGINT, on_stop_signal);
    signal(SIGTERM, on_stop_signal);
    for (int step = r->progress.step; step < std::min(c.steps, stop_at) && !stop_signal; step++) {
        auto step_start = std::chrono::steady_clock::now();
        training_batch(&batch, &sampler, *r, step);
        double loss = 0, grad_norm = 0;
        bool updated = train_step(r, batch, step, &loss, &grad_norm);
        in_a_row = updated ? 0 : in_a_row + 1;
        if (!updated) on_nonfinite_step(r, step + 1, loss, grad_norm, in_a_row);
        double step_seconds = seconds_since(step_start);
        r->progress.step = step + 1;
        window_seconds += step_seconds, window_loss += loss, window_tokens += batch.real_tokens, window_steps++;
        fprintf(log, "%d\t%.6f\t%.6g\t%.6g\t%.0f\t", step + 1, loss, lr_at(optim_config(c), step), grad_norm, batch.real_tokens / step_seconds);

        bool validate = (step + 1) % c.eval_every == 0 || step + 1 == c.steps;
        double accuracy = validate ? evaluate(r, valid_split(*r), "valid").answers.all.accuracy() : -1;
        if (validate) fprintf(log, "%.6f", accuracy);
        fprintf(log, "\n");
        // log.tsv holds every step up to this one before state.bin says training got this far:
        // a run killed between the two resumes from the older state and rewrites the rows after it
        if (validate) flush_log(log, log_path), save_checkpoints(r, accuracy);
        if (!validate && !ticker.due()) continue;

        double elapsed = seconds_since(start);
        double left = elapsed / (step + 1 - first_step) * (c.steps - step - 1);
        char valid[64] = "";
        if (validate) snprintf(valid, sizeof(valid), " | valid %.3f%s", accuracy, r->progress.best_step == step + 1 ? " (best)" : "");
        ticker.print("step %*d/%d | loss %.4f | %.1fk tok/s | %s elapsed, %s left%s", (int)std::to_string(c.steps).size(), step + 1, c.steps,
                     window_loss / window_steps, window_tokens / window_seconds / 1000,
                     format_duration(elapsed).c_str(), format_duration(left).c_str(), valid);
        if (validate && ticker.terminal) printf("\n");  // a terminal keeps each validation's line
        flush_log(log, log_path);
        window_seconds = window_loss = 0, window_tokens = window_steps = 0;
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    flush_log(log, log_path);
    fclose(log);
    if (!stop_signal) return;
    device_to_host(r);
    save_state(r);
    throw Stopped{stop_signal, "stopped by signal " + std::to_string(stop_signal) + " after step " + std::to_string(r->progress.step) +
                                   ": state.bin saved, --resume " + r->dir + " continues"};
}

// The best checkpoint on both splits: the table, results.json, accuracy.svg.
static void report(Run* r, bool write_files) {
    RunConfig& c = *r->config;
    Graded graded_valid = evaluate(r, valid_split(*r), "valid"), graded_test = evaluate(r, test_split(*r), "test");
    const SplitResult &valid = graded_valid.answers, &test = graded_test.answers;
    std::string skipped = r->progress.skipped ? "; " + std::to_string(r->progress.skipped) + " steps skipped as not finite" : "";
    bool scratchpad = c.data.scratchpad != SCRATCHPAD_NONE;
    std::string format = scratchpad ? std::string(", scratchpad ") + SCRATCHPAD_FORMATS[c.data.scratchpad].name : "";
    std::string scaling = c.rope_scaling != ROPE_UNSCALED ? std::string(" (") + ROPE_SCALING_NAMES[c.rope_scaling] + " scaling past the training lengths)" : "";
    std::string pe = c.pe + scaling;
    std::string checkpoint = r->evaluated_latest ? format_text("training state of step %d (the latest, not the best%s)", r->evaluated_step, skipped.c_str())
                                                 : format_text("checkpoint of step %d (best valid accuracy%s)", r->evaluated_step, skipped.c_str());
    printf("\n%s%s with %s, %d layers x %d, %s:\n", c.task.c_str(), format.c_str(), pe.c_str(), c.layers, c.d_model, checkpoint.c_str());
    print_accuracy_table(stdout, valid, test);
    printf("per-token accuracy (teacher-forced, <eos> included): valid %.3f, test %.3f\n", graded_valid.tokens.all.accuracy(),
           graded_test.tokens.all.accuracy());
    int thus = r->data.vocab.id(SCRATCHPAD_END.back());
    double valid_majority = majority_answer_accuracy(valid_split(*r), thus), test_majority = majority_answer_accuracy(test_split(*r), thus);
    printf("the most common answer, always given, scores: valid %.3f, test %.3f\n", valid_majority, test_majority);
    if (scratchpad) {
        printf("\nits scratchpads, exactly right (the accuracy above grades the answer after them alone):\n");
        print_accuracy_table(stdout, graded_valid.scratchpads, graded_test.scratchpads);
    }
    if (!write_files) return;
    std::string json = "{\n  \"task\": \"" + c.task + "\",\n  \"pe\": \"" + c.pe + "\",\n  \"model\": \"" + c.model + "\",\n  \"seed\": " +
                       std::to_string(c.seed) + ",\n  \"rope_scaling\": \"" + ROPE_SCALING_NAMES[c.rope_scaling] + "\",\n  \"steps\": " +
                       std::to_string(c.steps) + ",\n  \"best_step\": " +
                       std::to_string(r->progress.best_step) + ",\n  \"evaluated_step\": " + std::to_string(r->evaluated_step) +
                       ",\n  \"skipped_steps\": " + std::to_string(r->progress.skipped) +
                       ",\n  \"train_max\": " + std::to_string(r->data.lengths.train_max) +
                       ",\n  \"valid\": " + json_split(valid) + ",\n  \"test\": " + json_split(test) +
                       ",\n  \"valid_tokens\": " + json_split(graded_valid.tokens) + ",\n  \"test_tokens\": " + json_split(graded_test.tokens) +
                       format_text(",\n  \"valid_majority_answer\": %.4f,\n  \"test_majority_answer\": %.4f", valid_majority, test_majority) +
                       (scratchpad ? ",\n  \"valid_scratchpad\": " + json_split(graded_valid.scratchpads) +
                                         ",\n  \"test_scratchpad\": " + json_split(graded_test.scratchpads) : "") + "\n}\n";
    write_text(r->dir + "/results.json", json);
    write_text(r->dir + "/accuracy.svg", accuracy_svg(valid, test, r->data.lengths.train_max, c.task + " / " + c.pe));
    printf("\nwrote %s/results.json and %s/accuracy.svg\n", r->dir.c_str(), r->dir.c_str());
}

static void print_samples_of(Run* r) {
    if (r->config->sample <= 0) return;
    printf("\ngreedy decoding (KV cache) of the first %d examples of each split:\n", r->config->sample);
    print_samples(r, valid_split(*r), "valid", r->config->sample);
    print_samples(r, test_split(*r), "test", r->config->sample);
}

// Makes the data a configuration describes, checks what only the data can tell, and returns
// the model that fits it.
static ModelConfig build_data(Run* r) {
    RunConfig& c = *r->config;
    auto start = std::chrono::steady_clock::now();
    r->data = make_dataset(find_task(c.task), c.data);
    c.data.train_max = r->data.lengths.train_max;  // what "the task's default" resolved to, for
    c.data.test_max = r->data.lengths.test_max;    // config.json and checkpoints
    int max_T = 0;
    for (const Split& s : r->data.splits) max_T = std::max(max_T, s.max_example_len());
    ModelConfig mc = model_config(c, r->data.vocab.size(), max_T);
    const std::vector<unsigned char>& is_digit = r->data.vocab.is_digit;
    if (c.abacus && std::find(is_digit.begin(), is_digit.end(), 1) == is_digit.end())
        fail("--abacus embeds the places of digits: %s has no digits", c.task.c_str());
    if ((c.abacus || c.position_coupling) && c.data.index_hints)
        fail("%s can not be combined with --index-hints: the hints between digits break every number into one-digit runs",
             c.abacus ? "--abacus" : "--position-coupling");
    if (c.position_coupling && !c.data.reverse_digits)
        fail("--position-coupling lines up digits of equal significance by their place, which needs numbers written units first: add --reverse-digits");
    if (c.random_positions > 0 && c.random_positions < max_T)
        fail("--random-positions %d is below the longest sequence, %d tokens: a sequence's positions are distinct values below L", c.random_positions, max_T);
    describe(*r, "%s: %d train, %d valid, %d test examples (lengths %d-%d, test %d-%d), vocabulary %d, up to %d tokens (%.1fs)\n",
             c.task.c_str(), train_split(*r).size(), valid_split(*r).size(), test_split(*r).size(), r->data.lengths.train_min,
             r->data.lengths.train_max, r->data.lengths.train_max + 1, r->data.lengths.test_max, mc.V, max_T, seconds_since(start));
    return mc;
}

static void describe_model(const Run& r, const ModelConfig& mc) {
    const RunConfig& c = *r.config;
    // --rope-frac is rounded down to whole pairs: the line says what is rotated
    std::string pe = c.pe;
    if (pe_rotates(mc.pe)) pe += " (rotating " + std::to_string(rope_dims(mc.HS(), mc.rope_frac)) + " of " + std::to_string(mc.HS()) + " dims a head)";
    describe(r, "model: %s, %d layers, d_model %d, %d heads, d_ff %d, pe %s, %zu parameters\n", c.model.c_str(), c.layers, c.d_model,
             c.heads, c.d_ff, pe.c_str(), make_layout(mc).total);
}

// Builds the data and the model a configuration describes (parameters from --seed).
static void build(Run* r) {
    ModelConfig mc = build_data(r);
    make_model(r, mc);
    if (mc.abacus || mc.position_coupling) r->model.is_digit = r->data.vocab.is_digit;
    describe_model(*r, mc);
}

// The files a run writes in its directory (README, "The run directory").
static const char* RUN_FILES[] = {"config.json", "log.tsv", "model.bin", "state.bin", "results.json", "accuracy.svg", "nonfinite.txt"};

// A write a crash interrupted leaves FILE.tmp (the checkpoints and log.tsv are written so; FILE
// itself is intact): gone before a run starts or resumes, as the next write of FILE would
// replace it anyway.
static void remove_stale_temporaries(const std::string& dir) {
    for (const char* file : RUN_FILES) {
        std::string tmp = dir + "/" + file + ".tmp";
        if (remove(tmp.c_str()) != 0 && errno != ENOENT) fail("can not remove %s: %s", tmp.c_str(), strerror(errno));
    }
}

// A new run never silently replaces an earlier one, and a directory never mixes two runs:
// without --force an earlier run is an error, found before any work (check_new_run); with it,
// every file of the earlier run goes (clear_for_new_run) before the new one writes its first,
// and only once the new run's data and model are made, so that a mistake in its flags leaves
// the earlier run as it was.
static std::vector<std::string> earlier_run_files(const std::string& dir) {
    std::vector<std::string> found;
    for (const char* file : RUN_FILES)
        if (access((dir + "/" + file).c_str(), F_OK) == 0) found.push_back(dir + "/" + file);
    return found;
}

static void check_new_run(const std::string& dir, bool force) {
    if (!force && !earlier_run_files(dir).empty())
        fail("%s holds an earlier run: --resume %s continues it, --force replaces it, or choose another --out", dir.c_str(), dir.c_str());
}

static void clear_for_new_run(const std::string& dir) {
    for (const std::string& path : earlier_run_files(dir))
        if (remove(path.c_str()) != 0) fail("can not remove %s: %s", path.c_str(), strerror(errno));
}

static std::string run_dir(const RunConfig& c) {
    if (!c.resume.empty()) return c.resume;
    if (!c.out.empty()) return c.out;
    return "runs/" + c.task + "-" + c.pe + "-" + c.model + "-s" + std::to_string(c.seed);
}

// Everything before the first step: settings (a resumed run's come from its state.bin), the
// run directory, data, model (and a resumed run's parameters and AdamW state), config.json.
static void prepare_run(Run* r) {
    RunConfig* c = r->config;
    Header state;
    if (!c->resume.empty()) {
        state = read_checkpoint_header(c->resume + "/state.bin");
        if (state[H_KIND] != CKPT_TRAIN_STATE)  // parameters alone would restart AdamW from zero
            fail("%s/state.bin holds parameters only, no AdamW state: --resume needs the state.bin a run saves", c->resume.c_str());
        r->progress = restore_run(state, c);
        r->saved_step = r->progress.step;
        c->model = header_preset(state);
    }
    resolve_config(c);
    r->dir = run_dir(*c);
    if (c->resume.empty()) check_new_run(r->dir, c->force);
    build(r);
    make_directory(r->dir);
    if (c->resume.empty()) clear_for_new_run(r->dir);
    remove_stale_temporaries(r->dir);
    if (!c->resume.empty()) {
        load_checkpoint(c->resume + "/state.bin", state, &r->model);
        host_to_device(r);
    }
    write_text(r->dir + "/config.json", config_json(c, r->model, r->data));
    printf("run: %s, %d steps of %d sequences, lr %g%s\n\n", r->dir.c_str(), c->steps, c->batch, c->lr,
           c->resume.empty() ? "" : (", resumed after step " + std::to_string(r->progress.step)).c_str());
}

// After the last step: the best checkpoint's results, written and printed.
static void finish_run(Run* r) {
    Header best = read_checkpoint_header(r->dir + "/model.bin");
    load_checkpoint(r->dir + "/model.bin", best, &r->model);
    r->evaluated_step = best[R_STEP];
    host_to_device(r);
    report(r, true);
    print_samples_of(r);
}

// --check: everything before the run directory is made, but the model's memory, which depends
// on the machine (a sweep checks its runs on the machine that submits them, not where they run)
static void check_run(RunConfig* c) {
    Run r(c);
    resolve_config(c);
    r.dir = run_dir(*c);
    check_new_run(r.dir, c->force);
    ModelConfig mc = build_data(&r);
    validate_model_config(mc);
    describe_model(r, mc);
    printf("check: the flags and the data are good; nothing was trained or written (%s would be the run directory; the model's "
           "memory is checked when it runs)\n", r.dir.c_str());
}

static void run_training(RunConfig* c) {
    if (c->check) return check_run(c);
    Run r(c);
    prepare_run(&r);
    train(&r, INT_MAX);
    finish_run(&r);
}

// ----------------------------------------------------------------------------
// other modes

// --dump-attention: the first N examples of every length of valid (in-distribution lengths) and
// of test (the longer ones), teacher-forced on the CPU one at a time, every layer's and head's
// probabilities (and CoPE's positions and table) into one file (analysis.h), and heatmaps of
// the first valid and the first test example beside it (FILE.valid.svg, FILE.test.svg).
static void dump_attention(Run* r) {
    RunConfig& c = *r->config;
    Model& m = r->model;  // the host copy: on the CPU, batch 1 fits whatever device trained it
    const ModelConfig& mc = m.config;
    AttentionDump dump;
    dump.L = mc.L, dump.NH = mc.NH, dump.has_positions = pe_has_context_bias(mc.pe), dump.words = r->data.vocab.words;
    if (dump.has_positions) {
        dump.table_copies = param_copies(mc, P_PE_TABLE), dump.table_rows = m.pe().max_pos, dump.table_width = mc.HS();
        for (int l = 0; l < dump.table_copies; l++)
            dump.table.insert(dump.table.end(), m.param(P_PE_TABLE, l), m.param(P_PE_TABLE, l) + (size_t)dump.table_rows * dump.table_width);
    }
    for (SplitKind kind : {SPLIT_VALID, SPLIT_TEST}) {
        const Split& split = r->data.splits[kind];
        std::map<int, int> taken;  // λ -> examples dumped
        for (int i = 0; i < split.size(); i++) {
            if (taken[split.length[i]]++ >= c.dump_per_length) continue;
            AttentionExample e;
            e.split = kind, e.index = i, e.length = split.length[i], e.prompt_len = split.prompt_len[i], e.T = split.example_len(i);
            e.tokens.assign(split.example(i), split.example(i) + e.T);
            model_forward(&m, e.tokens.data(), nullptr, 1, e.T, NO_DROPOUT);
            size_t plane = (size_t)mc.NH * e.T * e.T;
            for (int l = 0; l < mc.L; l++) e.probs.insert(e.probs.end(), m.act(A_ATT, l), m.act(A_ATT, l) + plane);
            if (dump.has_positions) {
                e.positions.resize(mc.L * plane);
                for (int l = 0; l < mc.L; l++)
                    cope_positions(e.positions.data() + l * plane, m.act(A_QKV, l), e.T, mc.C, mc.NH);
            }
            dump.examples.push_back(std::move(e));
        }
    }
    write_attention_dump(c.dump_attention, dump);
    for (SplitKind kind : {SPLIT_VALID, SPLIT_TEST}) {
        const AttentionExample* first = nullptr;
        for (const AttentionExample& e : dump.examples)
            if (!first && e.split == kind) first = &e;
        Words words;
        for (int token : first->tokens) words.push_back(dump.words[token]);
        std::string title = c.task + " / " + c.pe + ": " + SPLIT_NAMES[kind] + " example " + std::to_string(first->index) + ", length " +
                            std::to_string(first->length);
        write_text(c.dump_attention + "." + SPLIT_NAMES[kind] + ".svg", attention_heatmaps_svg(*first, dump.L, dump.NH, words, title));
    }
    printf("wrote the attention of %zu examples to %s, heatmaps to %s.valid.svg and %s.test.svg\n", dump.examples.size(), c.dump_attention.c_str(),
           c.dump_attention.c_str(), c.dump_attention.c_str());
}

// Re-evaluates a saved checkpoint on the data of the run that wrote it.
// --load with --out: a run directory of its own for this evaluation (say, with --rope-scaling),
// holding the run's config.json and this evaluation's results, so that dev/report ranks it
// beside the runs of a sweep. Never the loaded run's own directory: its results stay as trained.
static void prepare_evaluation_dir(Run* r) {
    RunConfig* c = r->config;
    make_directory(c->out);
    std::string loaded_dir = c->load.substr(0, c->load.find_last_of('/') + 1) + ".";
    char out_real[PATH_MAX], loaded_real[PATH_MAX];
    if (realpath(c->out.c_str(), out_real) && realpath(loaded_dir.c_str(), loaded_real) && strcmp(out_real, loaded_real) == 0)
        fail("--out %s is the directory of %s: an evaluation writes its results into a directory of its own", c->out.c_str(), c->load.c_str());
    check_new_run(c->out, c->force);
    clear_for_new_run(c->out);
    r->dir = c->out;
    write_text(r->dir + "/config.json", config_json(c, r->model, r->data));
}

// A saved run rebuilt as it was: its settings from the checkpoint's header, its data, and the
// model holding the checkpoint's parameters (on the CPU): model.bin's, of the best step, or
// state.bin's, of the latest. Returns the header.
static Header load_run(Run* r, const std::string& path) {
    RunConfig* c = r->config;
    Header h = read_checkpoint_header(path);
    r->progress = restore_run(h, c);
    r->evaluated_step = r->progress.step, r->evaluated_latest = h[H_KIND] == CKPT_TRAIN_STATE;
    c->model = header_preset(h);
    resolve_config(c);
    build(r);
    load_checkpoint(path, h, &r->model);
    return h;
}

static void run_load(RunConfig* c) {
    Run r(c);
    if (c->answer) r.quiet = true, c->device = "cpu";  // stdout is the answers'; greedy decoding runs on the CPU's model
    load_run(&r, c->load);
    if (!c->dump_attention.empty()) return dump_attention(&r);
    if (c->answer) return answer_with_model(&r);
    host_to_device(&r);
    if (!c->out.empty()) prepare_evaluation_dir(&r);
    report(&r, !c->out.empty());
    print_samples_of(&r);
}

// --dump-state: one training batch (step 0, with the run's dropout) and everything computed
// from it, for other implementations to check against (layout in README, "Debug state").
static const int32_t DUMP_MAGIC = 20261123;

static void run_dump_state(RunConfig* c) {
    resolve_config(c);
    c->device = "cpu";  // the reference computes what other implementations check against
    FILE* f = fopen(c->dump_state.c_str(), "wb");  // before the data and model: a bad path fails at once
    if (!f) fail("can not write %s: %s", c->dump_state.c_str(), strerror(errno));
    Run r(c);
    build(&r);
    Batch batch;
    BatchSampler sampler(c->seed, train_split(r), 1);
    sampler.fill(&batch, 0, c->batch);
    Dropout drop = {(float)c->dropout, c->seed, 0};
    Model& m = r.model;
    float loss = (float)model_forward(&m, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, drop);
    model_backward(&m, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, drop);
    Header h = checkpoint_header(m, CKPT_MODEL, c->task, c->model);
    h[H_MAGIC] = DUMP_MAGIC;
    h[H_RUN] = batch.B, h[H_RUN + 1] = batch.T;
    std::vector<float> logits(m.act(A_LOGITS), m.act(A_LOGITS) + (size_t)batch.B * batch.T * m.config.V);
    bool written = fwrite(h.data(), sizeof(int32_t), HEADER_FIELDS, f) == HEADER_FIELDS && write_reals(f, m.params) &&
                   fwrite(batch.tokens.data(), sizeof(int), batch.tokens.size(), f) == batch.tokens.size() &&
                   fwrite(batch.targets.data(), sizeof(int), batch.targets.size(), f) == batch.targets.size() &&
                   fwrite(logits.data(), sizeof(float), logits.size(), f) == logits.size() && fwrite(&loss, sizeof(float), 1, f) == 1 &&
                   write_reals(f, m.grads) && fflush(f) == 0;
    int error = errno;
    if (fclose(f) != 0 || !written) fail("can not write %s: %s", c->dump_state.c_str(), strerror(written ? errno : error));
    printf("wrote %s: batch %d x %d, loss %.6f\n", c->dump_state.c_str(), batch.B, batch.T, loss);
}

static std::string cpu_name() {
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

// --bench: times training steps (updates included, no validation) on the task's batches, or on
// random sequences of --bench-seq tokens over a vocabulary of BENCH_VOCAB (every position a
// target), the shape of the PyTorch reference numbers in SPEC.md §8.
static const int BENCH_VOCAB = 512;

static void run_bench(RunConfig* c) {
    resolve_config(c);
    Run r(c);
    Rng rng = rng_stream(c->seed, hash_string("bench"));
    if (c->bench_seq > 0) {
        make_model(&r, model_config(*c, BENCH_VOCAB, c->bench_seq));
        printf("random sequences: %d x %d tokens, vocabulary %d\nmodel: %d layers, d_model %d, %d heads, d_ff %d, pe %s, %zu parameters\n",
               c->batch, c->bench_seq, BENCH_VOCAB, c->layers, c->d_model, c->heads, c->d_ff, c->pe.c_str(), r.model.layout.total);
    } else {
        build(&r);
    }
    const int warmup = 3, timed = 10;
    BatchSampler sampler(c->seed, train_split(r), c->sort_pool);  // empty with --bench-seq, and not read
    Batch batch;
    double seconds = 0, grad_norm = 0;
    long real = 0, padded = 0, rows = 0;
    for (int step = 0; step < warmup + timed; step++) {
        if (c->bench_seq > 0) {
            batch.B = c->batch, batch.T = c->bench_seq, batch.real_tokens = (long)c->batch * c->bench_seq;
            batch.tokens.resize((size_t)batch.B * batch.T);
            for (int& token : batch.tokens) token = rng.between(2, BENCH_VOCAB - 1);
            batch.targets.assign(batch.tokens.begin() + 1, batch.tokens.end());
            batch.targets.push_back(-1);
        } else {
            training_batch(&batch, &sampler, r, step);
        }
        auto start = std::chrono::steady_clock::now();
        double loss = 0;  // the step ends by reading the gradient norm back: the GPU has finished
        if (!train_step(&r, batch, step, &loss, &grad_norm)) fail("--bench: step %d was not finite (loss %g), so its time would leave out the update", step + 1, loss);
        if (step < warmup) continue;
        seconds += seconds_since(start);
        real += batch.real_tokens, padded += (long)batch.B * batch.T, rows += batch.B;
    }
    const ModelConfig& m = r.model.config;
    double T = (double)padded / rows;                                            // mean padded length of a row
    double flops = (6.0 * r.model.layout.total + 6.0 * m.L * m.C * T) * padded;  // 6N + 6LCT per token (llm.c)
    std::string device = "CPU (" + cpu_name() + "), " + std::to_string(omp_get_max_threads()) + " threads";
    double peak = 0;
#ifdef __CUDACC__
    if (r.gpu) {
        double fp32, tf32;
        device = gpu_name(&fp32, &tf32) + ", " + c->precision;
        peak = c->precision == "fp32" ? fp32 : tf32;
    }
#endif
    printf("\nbench on %s: %d steps of %d sequences after %d warm-up steps\n", device.c_str(), timed, c->batch, warmup);
    printf("%10.2f ms/step\n%10.0f tokens/s (real tokens)\n%10.0f tokens/s (padding included)\n", 1000 * seconds / timed, real / seconds,
           padded / seconds);
    if (peak > 0) printf("%10.1f TFLOP/s (6N + 6LCT per padded token)\n", flops / seconds / 1e12);
    else printf("%10.1f GFLOP/s (6N + 6LCT per padded token)\n", flops / seconds / 1e9);
    if (peak > 0) printf("%9.1f%% MFU (of %.1f TFLOP/s, the dense %s peak)\n", 100 * flops / seconds / 1e12 / peak, peak, c->precision.c_str());
}

static SplitKind find_split(const std::string& name) {
    for (int k = 0; k < NUM_SPLITS; k++)
        if (name == SPLIT_NAMES[k]) return (SplitKind)k;
    fail("unknown split '%s' (valid: train valid test)", name.c_str());
}

static void show_examples(const Task& task, const RunConfig& c) {
    Vocab vocab = make_vocab(task, c.data);
    Split split = make_split(task, vocab, c.data, find_split(c.split));
    if (c.show > split.size()) fail("--show %d: the %s split of %s has %d examples", c.show, c.split.c_str(), task.name, split.size());
    Words prompt, target;
    for (int i = 0; i < c.show; i++) {
        example_words(split, vocab, i, &prompt, &target);
        printf("%s\t%s\n", join_words(prompt).c_str(), join_words(target).c_str());
    }
}

static void answer_prompts(const Task& task, const DataConfig& data) {
    for_each_prompt(task, make_vocab(task, data), data, [](const Words&, const Words& gold, int) { printf("%s\n", join_words(gold).c_str()); });
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
    std::set<std::string> given = parse_flags(argc, argv, &config);
    if (config.help) return print_help(&config);
    Mode mode = find_mode(given, &config);
    if (config.threads > 0) omp_set_num_threads(config.threads);
    if (mode == RESUME) return run_training(&config);
    if (mode == LOAD) return run_load(&config);
    const Task& task = find_task(config.task);
    length_split(task, config.data);  // validates lengths and sizes before any mode runs
    switch (mode) {
        case SHOW: return show_examples(task, config);
        case ANSWER: return answer_prompts(task, config.data);
        case STATS: return print_stats(task, config);
        case DUMP: return run_dump_state(&config);
        case BENCH: return run_bench(&config);
        default: return run_training(&config);
    }
}

#ifndef TESTING
int main(int argc, char** argv) {
    try {
        run(argc, argv);
    } catch (const Error& e) {
        fflush(stdout);
        fprintf(stderr, "train: error: %s\n", e.what());
        return 1;
    } catch (const Stopped& stopped) {
        fflush(stdout);
        fprintf(stderr, "train: %s\n", stopped.message.c_str());
        return 128 + stopped.sig;
    } catch (const std::bad_alloc&) {
        fflush(stdout);
        fprintf(stderr, "train: error: out of memory: the model, batch or data is too large for this machine\n");
        return 1;
    }
    return 0;
}
#endif
