/*
 flags.h: the command line of ./train. Every flag is one row of the flag table (name, type,
 where its value goes, whether a checkpoint keeps it, which modes read it, help), so parsing,
 --help and the checkpoints' run fields (train.cu) can not disagree.

 What the program does is chosen by at most one mode flag (--show, --answer, --stats,
 --dump-state, --bench, --resume, --load; --load M --answer, the model answering, is the one
 pair); without one, it trains. A flag the chosen mode would not read is refused, not ignored,
 and so is a 0 that would count nothing rather than turn something off (--show, --sample,
 --keep-every, --train-max, --test-max).

 Invariants worth knowing:
   - the saved flags are checkpoint fields in table order: a new one goes after the last saved
     flag, so that the checkpoints written before it still read as they were written
   - UNSET, which no flag can give, stands for the model preset's value; resolve_config
     (train.cu) fills it in
*/
#pragma once

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "common.h"
#include "model.h"
#include "pe.h"
#include "tasks.h"


static const int UNSET = -1;

// --eval-positions: where a --random-positions model's tokens sit when it is evaluated
enum EvalPositions { EVAL_COUNTED, EVAL_DRAWN, NUM_EVAL_POSITIONS };
static const char* const EVAL_POSITIONS_NAMES[NUM_EVAL_POSITIONS] = {"counted", "drawn"};

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
    int eval_positions = EVAL_COUNTED;  // positions at evaluation, an index into EVAL_POSITIONS_NAMES
    std::string attention_window;       // "L:W[:prompt][:sink[:near]]" or "L-M:W...": at evaluation, those layers' queries see W latest tokens; "": all
    int steps = UNSET, batch = 64, eval_every = UNSET;
    int keep_every = 0;  // N: every Nth step's parameters also kept, as RUN/step-N.bin; 0: off
    int pad_multiple = 0;  // training batches' rows padded to a multiple of N tokens; 0 or 1: to their longest example
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
    int attention = ATTENTION_SIMPLE;  // an index into ATTENTION_NAMES
    std::string cuda_graphs = "on";  // on: each training step's kernels replayed as one CUDA graph per batch shape
    // modes that look at a task
    int show = 0;
    std::string split = "train";
    bool answer = false, stats = false, help = false;
};

// Training settings that suit each model preset. `paper` is the paper's protocol. `tiny` learns
// the default task on two CPU cores in under a minute to a few (README); it goes without dropout, which holds
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

// Every flag, in the order --help lists them; the saved ones are also checkpoint fields in this order.
static std::vector<Flag> flag_table(RunConfig* c) {
    return {
        {"--task", FLAG_STRING, &c->task, false, DATA | ANSWER, "task (see the list above)"},
        {"--pe", FLAG_STRING, &c->pe, false, MODEL, "positional encoding (see the list above)"},
        {"--model", FLAG_STRING, &c->model, false, MODEL, "model preset (see the list above)"},
        {"--layers", FLAG_INT, &c->layers, true, MODEL, "layers (default: the preset's)"},
        {"--d-model", FLAG_INT, &c->d_model, true, MODEL, "channels (default: the preset's)"},
        {"--heads", FLAG_INT, &c->heads, true, MODEL, "attention heads (default: the preset's)"},
        {"--d-ff", FLAG_INT, &c->d_ff, true, MODEL, "feed-forward width (default: the preset's)"},
        {"--rope-frac", FLAG_FLOAT, &c->rope_frac, true, MODEL, "fraction of each head RoPE rotates (default 0.25, the paper's)"},
        {"--dropout", FLAG_FLOAT, &c->dropout, true, MODEL, "dropout probability (default: the preset's; paper 0.1)"},
        {"--steps", FLAG_INT, &c->steps, true, TRAIN, "optimizer steps (default: the preset's; paper 40000)"},
        {"--batch", FLAG_INT, &c->batch, true, MODEL | STATS, "sequences per batch (default 64, the paper's)"},
        {"--lr", FLAG_FLOAT, &c->lr, true, TRAIN | BENCH, "peak learning rate (default: the preset's; paper 3e-5)"},
        {"--warmup-frac", FLAG_FLOAT, &c->warmup_frac, true, TRAIN | BENCH, "linear warmup, fraction of the steps (default 0.06, the paper's)"},
        {"--weight-decay", FLAG_FLOAT, &c->weight_decay, true, TRAIN | BENCH, "AdamW weight decay (default 0.05, the paper's)"},
        {"--grad-clip", FLAG_FLOAT, &c->grad_clip, true, TRAIN | BENCH, "global gradient norm clip (default 1.0, the paper's)"},
        {"--skip-nonfinite", FLAG_SWITCH, &c->skip_nonfinite, true, TRAIN, "skip an update whose loss or gradient is not finite (default: stop)"},
        {"--eval-every", FLAG_INT, &c->eval_every, true, TRAIN, "steps between validations (default: the preset's)"},
        {"--seed", FLAG_U64, &c->seed, true, MODEL | STATS, "seed of initialisation, batch order and dropout (default 256788, the paper's first)"},
        {"--data-seed", FLAG_U64, &c->data.seed, true, DATA, "seed of the data (default 9842497, the paper's)"},
        {"--train-size", FLAG_INT, &c->data.train_size, true, DATA, "training examples, spread evenly over train lengths (default 100000, the paper's)"},
        {"--valid-size", FLAG_INT, &c->data.valid_size, true, DATA, "in-distribution validation examples (default 7500)"},
        {"--test-size", FLAG_INT, &c->data.test_size, true, DATA | LOAD, "out-of-distribution test examples (default 10000; with --load: tested anew on this many)"},
        {"--train-max", FLAG_INT, &c->data.train_max, true, DATA, "longest training length (default: the task's)"},
        {"--test-max", FLAG_INT, &c->data.test_max, true, DATA | LOAD,
         "longest test length (default: the task's; with --load: a trained model tested on lengths up to this)"},
        {"--bos", FLAG_SWITCH, &c->data.bos, true, DATA, "start every sequence with a <bos> token (Theorem 1's first token; the paper had none)"},
        {"--scratchpad", FLAG_CHOICE, &c->data.scratchpad, true, DATA | ANSWER,
         "steps before the answer (paper §6): none, full, minimal or no-input/comp/output/vars/remaining", row_names(SCRATCHPAD_FORMATS)},
        {"--reverse-digits", FLAG_SWITCH, &c->data.reverse_digits, true, DATA | ANSWER, "addition: every number least significant digit first (Abacus's format)"},
        {"--index-hints", FLAG_SWITCH, &c->data.index_hints, true, DATA | ANSWER, "addition: a hint word @k before each digit names its place (Zhou et al. 2024)"},
        {"--random-positions", FLAG_INT, &c->random_positions, true, MODEL,
         "train at sorted positions drawn from 0..L-1, evaluate at 0..n-1 or as drawn (--eval-positions) (Ruoss et al. 2023); 0: off"},
        {"--abacus", FLAG_SWITCH, &c->abacus, true, MODEL,
         "digits also get a learned embedding of their place in their number, shifted 0-99 in training (McLeish et al. 2024)"},
        {"--position-coupling", FLAG_SWITCH, &c->position_coupling, true, MODEL,
         "addition with --reverse-digits: digits of equal significance share a position, the rest the start (Cho et al. 2024)"},
        {"--zero-pad", FLAG_SWITCH, &c->data.zero_pad, true, DATA | ANSWER,
         "addition: the shorter operand zero-padded to the longer one's digits, the answer to one more (Cho et al. 2024)"},
        {"--cope-max", FLAG_INT, &c->cope_max, true, MODEL,
         "cope: contextual positions clip at P, the table's last row (the paper's p_max); 0: a row per count below the longest sequence"},
        {"--sort-pool", FLAG_INT, &c->sort_pool, true, TRAIN | BENCH | STATS,
         "take K batches' examples at a time, sort them by length into K batches of less padding; 0: the paper's batches"},
        {"--pe-per-layer", FLAG_SWITCH, &c->pe_per_layer, true, MODEL,
         "t5, kerple_*, fire, cope: each layer its own PE parameters (as CoPE's paper has it), not one tensor for all"},
        {"--pack", FLAG_SWITCH, &c->pack, true, TRAIN | BENCH,
         "lay each training batch's sequences end to end in fewer rows, each attending within itself: the same batches, less padding (CPU only)"},
        {"--keep-every", FLAG_INT, &c->keep_every, true, TRAIN,
         "also keep every Nth step's parameters, as RUN/step-N.bin (for --load: how a run's reach changes as it trains)"},
        {"--pad-to-multiple", FLAG_INT, &c->pad_multiple, true, TRAIN | BENCH | STATS,
         "pad training batches' rows to a multiple of N tokens (fewer shapes, tiles that divide them), at most the longest sequence; 0: off"},
        // how a run validates (and so which checkpoint is its best) and tests, which a resume
        // keeps; --load evaluates as it is told (by default counted and unscaled: load_run)
        {"--rope-scaling", FLAG_CHOICE, &c->rope_scaling, true, TRAIN | LOAD,
         "rope, evaluation only: none, pi, ntk or yarn, scaled by sequence / longest training sequence", row_names(ROPE_SCALING_NAMES)},
        {"--eval-positions", FLAG_CHOICE, &c->eval_positions, true, TRAIN | LOAD,
         "a --random-positions model, evaluation only: counted (0..n-1) or drawn as in training, a draw per example (as Ruoss et al.'s code)",
         row_names(EVAL_POSITIONS_NAMES)},
        // (the saved flags above are checkpoint fields in table order: a new one goes here, after --eval-positions)
        {"--attention-window", FLAG_STRING, &c->attention_window, false, LOAD,
         "L:W, an intervention on a trained model, on the CPU: layer L's queries see only their W latest tokens, themselves included"
         " (L-M:W, layers L to M's); :prompt, the prompt's queries alone; :sink, and their sequence's first token too;"
         " :near, that token biased as just before the window (bias PEs)"},
        {"--out", FLAG_STRING, &c->out, false, TRAIN | LOAD, "run directory (default: runs/TASK-PE-MODEL-sSEED); with --load, a new one for the evaluation's results"},
        {"--force", FLAG_SWITCH, &c->force, false, TRAIN | LOAD, "replace the earlier run in the run directory (without it, that is an error)"},
        {"--check", FLAG_SWITCH, &c->check, false, TRAIN, "check the flags, make the data and stop: no training, no file written"},
        {"--resume", FLAG_STRING, &c->resume, false, RESUME, "continue the run in this directory from its state.bin"},
        {"--load", FLAG_STRING, &c->load, false, LOAD, "evaluate this checkpoint (model.bin or state.bin) again"},
        {"--sample", FLAG_INT, &c->sample, false, TRAIN | RESUME | LOAD, "after evaluating, decode N valid and N test examples greedily"},
        {"--dump-attention", FLAG_STRING, &c->dump_attention, false, LOAD, "with --load: write the attention of examples of every length to FILE (and heatmaps)"},
        {"--dump-per-length", FLAG_INT, &c->dump_per_length, false, LOAD, "examples per length for --dump-attention (default 10, as the paper)"},
        {"--dump-state", FLAG_STRING, &c->dump_state, false, DUMP, "write one batch's tensors and gradients to FILE, then exit"},
        {"--bench", FLAG_SWITCH, &c->bench, false, BENCH, "time 10 training steps (--sort-pool K: whole pools, K or more) after the same steps untimed, report tokens/s, then exit"},
        {"--bench-seq", FLAG_INT, &c->bench_seq, false, BENCH, "--bench on random sequences of this length, vocabulary 512"},
        {"--device", FLAG_STRING, &c->device, false, TRAIN | BENCH | RESUME | LOAD, "auto (the GPU if there is one), cpu or gpu"},
        {"--precision", FLAG_STRING, &c->precision, false, TRAIN | BENCH | RESUME | LOAD, "matrix products: fp32; tf32 (default) on a GPU's tensor cores, fp32 on the CPU; bf16: operands rounded to bfloat16, sums in fp32 (on either device)"},
        {"--attention", FLAG_CHOICE, &c->attention, false, TRAIN | BENCH | RESUME | LOAD,
         "simple (default): the probabilities kept for the backward; fused: flash style, the keys in tiles, O(T) memory a query (CPU only, for now)",
         row_names(ATTENTION_NAMES)},
        {"--cuda-graphs", FLAG_STRING, &c->cuda_graphs, false, TRAIN | BENCH | RESUME,
         "on (default): a GPU training step runs as one CUDA graph per batch shape; off: kernel by kernel (same results)"},
        {"--threads", FLAG_INT, &c->threads, false, ANY, "CPU threads (default, or 0: all cores)"},
        {"--show", FLAG_INT, &c->show, false, SHOW, "print N examples of --split as prompt<TAB>target, then exit"},
        {"--split", FLAG_STRING, &c->split, false, SHOW, "split for --show: train (default), valid or test"},
        {"--answer", FLAG_SWITCH, &c->answer, false, ANSWER | LOAD,
         "read prompts from stdin, print each gold target (with --load: the model's greedy output), then exit"},
        {"--stats", FLAG_SWITCH, &c->stats, false, STATS, "print split sizes, examples per length and the padding of training batches (--sort-pool K: 16 by default; --pad-to-multiple N), then exit"},
        {"--help", FLAG_SWITCH, &c->help, false, ANY, "print this help"},
    };
}

// A number as a person writes one: digits (for a decimal, a point and an exponent too), nothing
// before them. strtoll and strtod alone would also take leading spaces, a '+' and hexadecimal.
static bool plain_number(const char* text, bool decimal) {
    if (!isdigit((unsigned char)text[0]) && !(decimal && text[0] == '.')) return false;
    return strspn(text, decimal ? "0123456789.eE+-" : "0123456789") == strlen(text);
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
        if (!plain_number(text, true) || end == text || *end) fail("%s expects a number >= 0, got '%s'", flag.name, text);
        if (errno == ERANGE || !std::isfinite(v)) fail("%s %s is too %s for a double", flag.name, text, v > 1 ? "large" : "small");
        *(double*)flag.value = v;
    } else {
        long long v = strtoll(text, &end, 10);
        long long hi = flag.type == FLAG_INT ? INT_MAX : LLONG_MAX;
        if (!plain_number(text, false) || errno || end == text || *end || v > hi) fail("%s expects an integer in [0, %lld], got '%s'", flag.name, hi, text);
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
        if (!strcmp(argv[i], "-h")) argv[i] = (char*)"--help";  // the short form every tool knows
        const Flag* flag = find_flag(flags, argv[i]);
        std::string name = argv[i], before_equals = name.substr(0, name.find('='));
        const Flag* before = name.find('=') == std::string::npos ? nullptr : find_flag(flags, before_equals.c_str());
        if (!flag && before && before->type == FLAG_SWITCH) fail("unknown flag '%s': %s is a switch, given alone", argv[i], before->name);
        if (!flag && before)
            fail("unknown flag '%s': a flag and its value are two words (%s %s)", argv[i], before->name, name.substr(name.find('=') + 1).c_str());
        if (!flag) fail("unknown flag '%s' (valid: %s; --help says what each does)", argv[i], names_of(flags).c_str());
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
        bool setting = f.saved || (f.modes & MODEL) == MODEL;  // kept by a checkpoint, or like --pe in its header
        if ((mode == RESUME || mode == LOAD) && setting) fail("%s can not be combined with %s: a saved run keeps its own settings", f.name, chosen);
        if (chosen) fail("%s can not be combined with %s", f.name, chosen);
        std::string readers;
        for (const auto& m : MODE_FLAGS)
            if (f.modes & m.mode) readers += (readers.empty() ? "" : " or ") + std::string(m.flag);
        fail("%s is read only with %s", f.name, readers.c_str());
    }
    if (mode == SHOW && c->show < 1) fail("--show expects at least 1 example, got %d", c->show);
    if (given.count("--sample") && c->sample < 1) fail("--sample expects at least 1 example, got %d", c->sample);
    if (given.count("--keep-every") && c->keep_every < 1) fail("--keep-every expects at least 1 step, got %d", c->keep_every);
    if (given.count("--train-max") && c->data.train_max < 1) fail("--train-max expects at least 1, got 0 (leave it out for the task's own)");
    if (given.count("--test-max") && c->data.test_max < 1) fail("--test-max expects at least 1, got 0 (leave it out for the task's own)");
    if (c->threads > 1024) fail("--threads %d is out of range [0, 1024]", c->threads);
    if (given.count("--cuda-graphs") && c->device == "cpu") fail("--cuda-graphs says how the GPU runs a step, and --device cpu uses none");
    if (given.count("--rope-frac") && !pe_rotates(find_pe(c->pe)))
        fail("--rope-frac sets the share of each head that RoPE rotates, and --pe %s rotates nothing (rope and xpos do)", c->pe.c_str());
    if (given.count("--bench-seq")) {  // random tokens of one length: no task's data, digits, drawn positions or padding
        if (c->bench_seq < 2) fail("--bench-seq expects at least 2 tokens, got %d", c->bench_seq);
        for (const Flag& f : flag_table(c))  // the data's flags: read where the splits are made (and by --answer)
            if ((f.modes & ~(ANSWER | LOAD)) == DATA && given.count(f.name))
                fail("%s can not be combined with --bench-seq: it times random tokens, not a task's data", f.name);
        if (c->abacus || c->position_coupling)
            fail("%s can not be combined with --bench-seq: random tokens have no digits", c->abacus ? "--abacus" : "--position-coupling");
        if (given.count("--random-positions"))
            fail("--random-positions can not be combined with --bench-seq: its random sequences are timed at positions 0..n-1");
        for (const char* batching : {"--sort-pool", "--pack", "--pad-to-multiple"})
            if (given.count(batching))
                fail("%s can not be combined with --bench-seq: its random sequences are of one length, with no padding to save or add", batching);
    }
    // the debug state holds tokens and targets: a reader could not recompute positions or places drawn for them
    for (const char* drawn : {"--random-positions", "--abacus", "--position-coupling"})
        if (mode == DUMP && given.count(drawn)) fail("%s can not be combined with --dump-state, whose file holds no positions", drawn);
    if (mode == LOAD && c->answer) {
        for (const char* other : {"--out", "--sample", "--dump-attention", "--device", "--test-max", "--test-size", "--eval-positions"})
            if (given.count(other)) fail("%s can not be combined with --load and --answer, which decode prompts from stdin on the CPU", other);
    }
    if (given.count("--dump-attention")) {
        if (given.count("--out")) fail("--out can not be combined with --dump-attention, which writes FILE");
        for (const char* setting : {"--sample", "--rope-scaling", "--attention-window", "--device", "--precision", "--attention"})
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
                printf("  %-6s %2d layers, d_model %4d, %2d heads, d_ff %4d; %d steps, lr %g, dropout %g, validation every %d\n", p.name,
                       p.L, p.C, p.NH, p.F, d.steps, d.lr, d.dropout, d.eval_every);
    printf("\nflags:\n");
    int width = 0;
    for (const Flag& f : flag_table(c)) width = std::max(width, (int)strlen(f.name));
    for (const Flag& f : flag_table(c)) printf("  %-*s %s\n", width, f.name, f.help);
}
