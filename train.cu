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
 checkpoint), state.bin (the latest, for --resume), results.json and accuracy.svg, and with
 --keep-every N the parameters of every Nth step as step-N.bin. Checkpoints
 are written whole or not at all; Ctrl-C or SIGTERM saves state.bin and exits; a step whose loss
 or gradient is not finite is never applied (the run stops, or skips it with --skip-nonfinite).

 It computes on the GPU when this build has one (nvcc found by make) and a device is present,
 else on the CPU (--device overrides). The CPU code in model.h is the reference; the GPU keeps
 its own copy of the model (model.cuh) and hands parameters back for every checkpoint, which has
 one format whatever device wrote it.

 The command line is one table of every flag, in flags.h; the batches of each training step
 are made in batches.h. Any error a user can cause ends as one line on stderr, "train: error:
 ...", and exit status 1.
*/
#include <dirent.h>
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
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis.h"
#include "batches.h"
#include "common.h"
#include "flags.h"
#include "model.h"
#include "pe.h"
#include "report.h"
#include "tasks.h"
#ifdef __CUDACC__
#include <cuda_profiler_api.h>  // device_profile

#include "model.cuh"
#else
struct GpuModel {};  // a build without nvcc has the CPU path only
#endif

// ----------------------------------------------------------------------------
// configuration: what the presets decide, and what no flag, model or task check covers

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
// (B = 0: the parameters, gradients and AdamW state alone, checked before the data exists). For
// the GPU the size is model_bytes too, the host model's: it leaves out what the GPU alone holds
// (attention's workspace, the bf16 twins, cuBLAS's workspace), and a model that passes but does
// not fit is refused by its first failed allocation (GpuModel::alloc), with one line too.
static void check_fits(const char* where, double needed, double available, const ModelConfig& mc, int B) {
    if (needed <= available) return;
    std::string what = B ? format_text("parameters, gradients, AdamW state, and activations for %d x %d tokens", B, mc.max_T)
                         : "parameters, gradients and AdamW state alone";
    fail("the model needs %s of memory on %s (%s); %s has %s available: use a smaller model, --batch or length", gib(needed).c_str(), where,
         what.c_str(), where, gib(available).c_str());
}

// What of a configuration the GPU path does not run yet, or "": CoPE (whose bias is read from
// each layer's q and k), KERPLE (whose values the update clamps first, pe.h, which the GPU's
// AdamW does not yet), rows packed with several sequences, a windowed layer and fused attention
// have CPU code only so far.
static std::string gpu_lacks(const RunConfig& c) {
    PEKind pe = find_pe(c.pe);
    if (pe_has_context_bias(pe) || pe == PE_KERPLE_LOG || pe == PE_KERPLE_POWER) return "--pe " + c.pe;
    if (c.pack) return "--pack";
    if (!c.attention_window.empty()) return "--attention-window";
    if (c.attention == ATTENTION_FUSED) return "--attention fused";
    return "";
}

// --attention-window L:W[:prompt][:sink[:near]] (or L-M:W..., layers L to M) into the model's
// window fields; "" leaves every layer whole
static void parse_window(const std::string& text, ModelConfig* mc) {
    if (text.empty()) return;
    auto is_count = [](const std::string& digits) {  // (6 digits at most, which stoi takes; a window past the sequence sees it all)
        return !digits.empty() && digits.size() <= 6 && digits.find_first_not_of("0123456789") == std::string::npos;
    };
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
    size_t dash = parts[0].find('-');  // (a text that is not empty splits into one part at least)
    std::string first = parts[0].substr(0, dash), last = dash == std::string::npos ? first : parts[0].substr(dash + 1);
    bool ok = text.back() != ':' && parts.size() >= 2 && is_count(first) && is_count(last) && is_count(parts[1]);
    for (size_t k = 2; ok && k < parts.size(); k++) {
        bool* option = parts[k] == "prompt" ? &mc->window_prompt
                       : parts[k] == "sink" ? &mc->window_sink
                       : parts[k] == "near" ? &mc->window_near
                                            : nullptr;
        ok = option && !*option;  // each option once
        if (ok) *option = true;
    }
    if (!ok)
        fail("--attention-window expects LAYER:TOKENS or FIRST-LAST:TOKENS, then :prompt, :sink, :near (say 0:20 or 0-3:20:sink), got '%s'",
             text.c_str());
    mc->window_from = std::stoi(first);
    mc->window_to = std::stoi(last);
    mc->window = std::stoi(parts[1]);
}

// how results.json and dev/report name a window: "L:W" (or "L-M:W"), then ":prompt", ":sink" and ":near" where given
static std::string window_name(const ModelConfig& mc) {
    if (mc.window_from < 0) return "none";
    return format_text("%s:%d%s%s%s", mc.window_layers().c_str(), mc.window, mc.window_prompt ? ":prompt" : "", mc.window_sink ? ":sink" : "",
                       mc.window_near ? ":near" : "");
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
    mc.precision = find_precision(c.precision);
    mc.attention = (AttentionKind)c.attention;
    parse_window(c.attention_window, &mc);
    return mc;
}

// the batch flags' bounds, for training, --bench and --stats
static void check_batching(const RunConfig& c) {
    if (c.batch < 1 || c.batch > 4096) fail("--batch %d is out of range [1, 4096]", c.batch);
    if (c.sort_pool < 0 || c.sort_pool > 4096) fail("--sort-pool %d is out of range [0, 4096]", c.sort_pool);
    if (c.pad_multiple < 0 || c.pad_multiple > 4096) fail("--pad-to-multiple %d is out of range [0, 4096]", c.pad_multiple);
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
    if (c->eval_positions == EVAL_DRAWN && c->random_positions == 0)
        fail("--eval-positions drawn draws positions as --random-positions does in training, and this model was trained at 0..n-1");
    if (c->eval_positions == EVAL_DRAWN && c->data.scratchpad != SCRATCHPAD_NONE)
        fail("--eval-positions drawn can not grade a scratchpad: its answer is decoded on past the positions drawn for the gold one");
    // here, not with the flags: a resumed run's --eval-positions comes from its state.bin
    if (c->sample > 0 && c->eval_positions == EVAL_DRAWN)
        fail("--sample can not be combined with --eval-positions drawn: its decoding may run past the positions drawn for the gold answer");
    if (c->rope_scaling != ROPE_UNSCALED && architecture.pe != PE_ROPE) fail("--rope-scaling rescales RoPE's angles: it needs --pe rope, not %s", c->pe.c_str());  // now, before any data is built; vocabulary and length come later
    // parameters, gradients and AdamW state alone: a model too large for any machine is refused
    // before its data is built (make_model checks everything, activations included)
    check_fits("the host", model_bytes(architecture, 0), host_available_bytes(), architecture, 0);
    if (c->steps < 1 || c->eval_every < 1) fail("--steps and --eval-every must be at least 1");
    if (c->keep_every < 0) fail("--keep-every %d is below 0", c->keep_every);  // (from a checkpoint: the command line refuses it)
    if (c->keep_every > c->steps) fail("--keep-every %d is past the run's %d steps: it would keep no snapshot", c->keep_every, c->steps);
    if (!(c->lr > 0)) fail("--lr must be above 0");
    check_batching(*c);
    if (c->warmup_frac > 1) fail("--warmup-frac %g is out of range [0, 1]", c->warmup_frac);
    if (c->weight_decay > 1) fail("--weight-decay %g is out of range [0, 1]", c->weight_decay);
    if (!(c->grad_clip > 0)) fail("--grad-clip must be above 0 (it is the largest gradient norm a step may have)");
    if (c->device != "auto" && c->device != "cpu" && c->device != "gpu") fail("unknown device '%s' (valid: auto cpu gpu)", c->device.c_str());
    if (c->cuda_graphs != "on" && c->cuda_graphs != "off") fail("--cuda-graphs expects on or off, got '%s'", c->cuda_graphs.c_str());
    if (c->device == "gpu" && !gpu_lacks(*c).empty()) fail("--device gpu: %s runs on the CPU only, for now (--device cpu runs it)", gpu_lacks(*c).c_str());
#ifdef __CUDACC__
    // (a check may run where the runs will not: on a cluster's login node, say)
    if (c->device == "gpu" && !gpu_present() && !c->check) fail("--device gpu: no CUDA device is visible");
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
// (the second stays 0), u64 and double as all 64 bits; a string does not fit
static void flag_to_fields(const Flag& f, int32_t* fields) {
    if (f.type == FLAG_STRING) fail("internal error: %s is saved, and a string does not fit a checkpoint's two fields", f.name);
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
    for (const Flag& f : flag_table(c)) {
        if (!f.saved) continue;
        if (field + 2 > H_HEADER_CRC) fail("internal error: the saved flags overflow the checkpoint header at %s", f.name);
        flag_to_fields(f, &h[field]), field += 2;
    }
    return h;
}

// the run a checkpoint came from: its task, PE and every saved flag but those in `kept` (the
// test lengths an evaluation with --load was given in place of the run's own)
static Progress restore_run(const Header& h, RunConfig* c, const std::set<std::string>& kept = {}) {
    if (h[H_PE] < 0 || h[H_PE] >= NUM_PES) fail("the checkpoint names positional encoding %d, which does not exist", h[H_PE]);
    c->task = header_task(h);
    c->pe = PE_NAMES[h[H_PE]];
    int field = R_FLAGS;
    for (const Flag& f : flag_table(c))
        if (f.saved) {
            if (!kept.count(f.name)) fields_to_flag(&h[field], f);
            field += 2;
        }
    Progress p;
    p.step = h[R_STEP], p.best_step = h[R_BEST_STEP], p.skipped = h[R_SKIPPED];
    memcpy(&p.best_accuracy, &h[R_BEST_ACCURACY], 8);
    return p;
}

// ----------------------------------------------------------------------------
// a run, and the device it computes on

// which parameters report() evaluates: model.bin's (the best), state.bin's (the latest step's)
// or a snapshot's (--keep-every: a step of its own)
enum Evaluated { EVALUATED_BEST, EVALUATED_LATEST, EVALUATED_SNAPSHOT };
static const char* const EVALUATED_NAMES[] = {"best", "latest", "snapshot"};  // results.json's "evaluated"

struct Run {
    RunConfig* config;
    Dataset data;
    Model model;  // on the CPU: the model itself; with a GPU: the host copy checkpoints read and write
    Progress progress;
    int saved_step = -1;  // the step state.bin was saved after; -1: none yet
    int evaluated_step = 0;  // the step of the parameters report() evaluates
    Evaluated evaluated = EVALUATED_BEST;
    std::string dir;
    std::unique_ptr<GpuModel> gpu;  // the model on the GPU, or nothing
    std::vector<float> logits;      // a batch's logits copied from the GPU
    bool quiet = false;             // describe() prints nothing: stdout carries answers (--answer) or a tool's own lines alone

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

// Forward (with the batch's targets) and backward, then clipping and AdamW only if the loss and
// the gradient norm are finite: a non-finite step leaves the parameters, AdamW's state and the
// gradients as they were (unclipped, for nonfinite.txt), for the caller to stop the run or skip
// the step. Returns whether the update was made.
static bool device_train_step(Run* r, const Batch& batch, const Dropout& drop, int step, double* loss, double* grad_norm) {
    RunConfig& c = *r->config;
    OptimConfig o = optim_config(c);
#ifdef __CUDACC__
    if (r->gpu) {
        gpu_train_step(r->gpu.get(), batch.tokens, batch.targets, batch.B, batch.T, drop, batch.places(), batch.loss_tokens, o, lr_at(o, step), step + 1,
                       c.grad_clip, loss, grad_norm);
        return std::isfinite(*loss) && std::isfinite(*grad_norm);  // else AdamW left everything as it was
    }
#endif
    *loss = model_forward(&r->model, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, drop, 0, batch.places());
    model_backward(&r->model, batch.tokens.data(), batch.targets.data(), batch.B, batch.T, drop, batch.places(), batch.loss_tokens);
    *grad_norm = gradient_norm(r->model);
    if (!std::isfinite(*loss) || !std::isfinite(*grad_norm)) return false;
    clip_gradients(&r->model, c.grad_clip, *grad_norm);
    adamw_update(&r->model, o, lr_at(o, step), step + 1);
    return true;
}

// the logits (B, T, V) of a batch, without dropout, in host memory
static const float* device_logits(Run* r, const Batch& batch) {
#ifdef __CUDACC__
    if (r->gpu) {
        gpu_forward(r->gpu.get(), batch.tokens, nullptr, batch.B, batch.T, NO_DROPOUT, batch.places());
        gpu_logits(r->gpu.get(), batch.B, batch.T, &r->logits);
        return r->logits.data();
    }
#endif
    model_forward(&r->model, batch.tokens.data(), nullptr, batch.B, batch.T, NO_DROPOUT, 0, batch.places());
    return r->model.act(A_LOGITS);
}

// the GPU's parameters and AdamW state into the host model, before a checkpoint is written
static void device_to_host(Run* r) {
#ifdef __CUDACC__
    if (r->gpu) gpu_download(&r->model, *r->gpu);
#endif
    (void)r;
}

// the start and the end of what a profiler started with --profile-from-start off records
// (dev/gpu_profile.sh: --bench's last step); nothing without a GPU or a profiler
static void device_profile(Run* r, bool on) {
#ifdef __CUDACC__
    if (r->gpu) cudaCheck(on ? cudaProfilerStart() : cudaProfilerStop());
#endif
    (void)r, (void)on;
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

// what the run's matrix products compute in (config.json's "precision"): --precision on the
// GPU; on the CPU fp32, or bf16 (operands rounded, as model.h's Precision says)
static const char* products(const Run& r) {
    Precision p = r.model.config.precision;
    return r.gpu || p == PRECISION_BF16 ? PRECISION_NAMES[p] : "fp32";
}

// a line describing the run's data, device, model or directory, as they are made; flushed at
// once, since a log of the run's output (a sweep's) is read while it runs, and stdout to a file
// is written only as its buffer fills: the lines would wait for the first progress line, 15 s on
static void describe(const Run& r, const char* format, ...) {
    if (r.quiet) return;
    va_list args;
    va_start(args, format);
    vprintf(format, args);
    va_end(args);
    fflush(stdout);
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
    if (mc.abacus || mc.position_coupling) r->model.is_digit = r->data.vocab.is_digit;  // before the GPU copies it
#ifdef __CUDACC__
    if (gpu) {
        r->gpu.reset(new GpuModel());
        gpu_init(r->gpu.get(), r->model, c.batch, mc.precision);
        r->gpu->graphs = c.cuda_graphs == "on";
        describe(*r, "device: %s, %s matrix products, CUDA graphs %s\n", gpu_name().c_str(), c.precision.c_str(), c.cuda_graphs.c_str());
        return;
    }
#endif
    std::string why = c.device == "auto" && !gpu_lacks(c).empty() ? " (" + gpu_lacks(c) + " runs on the CPU only, for now)" : "";
    describe(*r, "device: CPU, %d threads, %s matrix products, %s attention%s\n", omp_get_max_threads(), products(*r),
             ATTENTION_NAMES[mc.attention], why.c_str());
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
// per-token accuracy (after the Chomsky-hierarchy papers' measure; README says how it differs):
// the share of target tokens, <eos> included, whose argmax is the gold token with the gold prefix
// fed in (teacher-forced).
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

// the words of a greedy output without its <eos>, and whether it had one (else it filled the model's longest sequence)
static Words output_words(const Vocab& vocab, const std::vector<int>& output, bool* ended) {
    Words said;
    for (int token : output)
        if (token != EOS_ID) said.push_back(vocab.words[token]);
    *ended = !output.empty() && output.back() == EOS_ID;
    return said;
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
        std::vector<int> more = generate_greedy(&r->model, prefix, EOS_ID, split.prompt_len[e]);
        output.insert(output.end(), more.begin(), more.end());
    }
    Words prompt, gold;
    example_words(split, r->data.vocab, e, &prompt, &gold);
    bool ended = false;
    Words said = output_words(r->data.vocab, output, &ended);
    return grade_output(gold, said, ended);
}

// --rope-scaling: RoPE's tables for a batch of sequences up to T tokens, scaled by
// s = T / (longest training sequence) where that is above 1: the dynamic form, so every batch
// within the training lengths (all of validation) keeps plain RoPE. T = 0 restores them.
// The host's tables change, and the GPU's copy with them.
static void scale_rope_for(Run* r, int T) {
    if (r->config->rope_scaling == ROPE_UNSCALED) return;
    const ModelConfig& mc = r->model.config;
    int train_len = train_split(*r).max_example_len();
    RopeScaling s{r->config->rope_scaling, (double)T / train_len, train_len};
    if (s.factor <= 1) s = RopeScaling();
    r->model.pe_tables = make_pe_tables(mc.pe, mc.C, mc.NH, rope_dims(mc.HS(), mc.rope_frac), mc.max_pos(), s);
#ifdef __CUDACC__
    if (r->gpu) gpu_update_rope_tables(r->gpu.get(), r->model.pe_tables);
#endif
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
        if (r->config->eval_positions == EVAL_DRAWN) draw_eval_positions(&batch, r->model.config.random_positions, r->config->seed, name, examples);
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

// decodes the first n examples of a split token by token (RoPE scaled for each by its own length,
// where evaluate scales a batch by its longest: the same where the batch's examples, sorted by
// length, share it) and prints prompt, gold and output
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

// one line of standard input without its newline, or false at the end of the input; an input
// that can not be read (a directory, a closed descriptor) is an error, not an empty one
static bool read_prompt_line(std::string* line, int number) {
    line->clear();
    for (int ch; (ch = getchar()) != EOF;) {
        if (ch == '\n') return true;
        if (line->size() == MAX_PROMPT_CHARS) fail("line %d is longer than %zu characters: not a prompt", number, MAX_PROMPT_CHARS);
        line->push_back((char)ch);
    }
    if (ferror(stdin)) fail("can not read standard input: %s", strerror(errno));
    return !line->empty();
}

// a prompt's words are printable: a tab is --show's line with its target (cut -f1 takes the
// prompt), any other control byte is no word's, and would be echoed raw into the error line
static void check_printable(const std::string& line, int number) {
    for (unsigned char ch : line) {
        if (ch == '\t') fail("line %d holds a tab: --answer reads prompts alone, one a line (cut -f1 takes them from --show's lines)", number);
        if (ch < 0x20 || ch == 0x7f) fail("line %d holds control byte 0x%02x, which is in no prompt", number, ch);
    }
}

// Reads prompts from stdin, one per line in the task's words, and hands each to `answer` with
// its gold target and line number; a line that is not a prompt of the task is an error naming it.
// A run made with --bos takes its prompts with or without the <bos> that --show prints first.
template <typename Answer>
static void for_each_prompt(const Task& task, const Vocab& vocab, const DataConfig& data, Answer answer) {
    std::string line;
    for (int number = 1; read_prompt_line(&line, number); number++) {
        if (!line.empty() && line.back() == '\r') line.pop_back();  // files written on Windows
        check_printable(line, number);
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
        scale_rope_for(r, whole);  // by its own length, as print_samples scales an example
        bool ended = false;
        Words said = output_words(vocab, generate_greedy(&r->model, tokens, EOS_ID), &ended);
        printf("%s%s\n", join_words(said).c_str(), ended ? "" : " (no <eos>)");
    });
    scale_rope_for(r, 0);
}

// ----------------------------------------------------------------------------
// the run directory

// Whether make_directory(path) can succeed, found without making anything (--check): every
// prefix that exists is a directory, and the deepest of them can take new entries.
static void check_directory_can_be_made(const std::string& path) {
    std::string deepest = path[0] == '/' ? "/" : ".";
    for (size_t at = 1; at <= path.size(); at++) {
        if (at < path.size() && path[at] != '/') continue;
        std::string prefix = path.substr(0, at);
        struct stat st;
        if (stat(prefix.c_str(), &st) != 0) break;  // the rest the run makes
        if (!S_ISDIR(st.st_mode))
            fail("can not use %s as the run directory: %s is a file, not a directory", path.c_str(), prefix == path ? "it" : prefix.c_str());
        deepest = prefix;
    }
    if (access(deepest.c_str(), W_OK | X_OK) != 0) fail("can not create run directory %s in %s: %s", path.c_str(), deepest.c_str(), strerror(errno));
}

static void make_directory(const std::string& path) {
    check_directory_can_be_made(path);
    for (size_t at = 1; at <= path.size(); at++) {
        if (at < path.size() && path[at] != '/') continue;
        std::string prefix = path.substr(0, at);
        if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) fail("can not create run directory %s: %s", prefix.c_str(), strerror(errno));
    }
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) fail("can not use %s as the run directory: it is a file, not a directory", path.c_str());
    if (access(path.c_str(), W_OK) != 0) fail("can not write in run directory %s: %s", path.c_str(), strerror(errno));
}

// A run directory's file written whole or not at all: FILE.tmp, then renamed over FILE, so a
// kill mid-write leaves FILE as it was (and the next start removes the .tmp:
// remove_stale_temporaries). dev/sweep.sh takes results.json for a finished run.
static void write_run_file(const std::string& path, const std::string& text) {
    write_text(path + ".tmp", text);
    if (rename((path + ".tmp").c_str(), path.c_str()) != 0) fail("can not write %s: %s", path.c_str(), strerror(errno));
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

// the run's settings (an evaluation's: its precision, products(), is its own)
static std::string config_json(const Run& r) {
    RunConfig* c = r.config;
    const Model& m = r.model;
    std::string s = "{\n  \"task\": \"" + c->task + "\",\n  \"pe\": \"" + c->pe + "\",\n  \"model\": \"" + c->model + "\",\n";
    for (const Flag& f : flag_table(c)) {
        // how the run evaluates is results.json's to say (rope_scaling, eval_positions): an
        // evaluation with --load --out keeps the run's config.json, which dev/report reads as the
        // setting it ranks the evaluation in, as a method of its own
        if (!f.saved || f.value == &c->rope_scaling || f.value == &c->eval_positions) continue;
        std::string value = f.type == FLAG_INT      ? std::to_string(*(int*)f.value)
                          : f.type == FLAG_U64    ? std::to_string(*(uint64_t*)f.value)
                          : f.type == FLAG_SWITCH ? (*(bool*)f.value ? "true" : "false")
                          : f.type == FLAG_CHOICE ? "\"" + f.choices[*(int*)f.value] + "\""
                                                  : format_double(*(double*)f.value);
        s += "  \"" + std::string(f.name + 2) + "\": " + value + ",\n";
    }
    s += "  \"precision\": \"" + std::string(products(r)) + "\",\n";
    s += "  \"attention\": \"" + std::string(ATTENTION_NAMES[m.config.attention]) + "\",\n";
    s += "  \"train-min\": " + std::to_string(r.data.lengths.train_min) + ",\n  \"vocab\": " + std::to_string(m.config.V) +
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
    for (std::string line; resumed_step > 0 && std::getline(old, line);) {
        if (old.eof()) break;  // a last row with no newline: torn by a kill mid-write ("1" of "104\t...")
        if (rows++ == 0 || atoi(line.c_str()) <= resumed_step) kept += line + "\n";
    }
    if (kept.empty()) kept = "step\tloss\tlr\tgrad_norm\ttokens_per_s\tvalid_accuracy\n";
    write_run_file(path, kept);
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

// --pad-to-multiple N's rounding of a training batch's rows, up to the longest sequence the
// model is built for
static Rounding training_rounding(const RunConfig& c, int max_T) { return {std::max(1, c.pad_multiple), max_T}; }

// the longest row a training batch can have: the train split's longest example, rounded as batches are
static int longest_training_row(const Run& r) {
    return training_rounding(*r.config, r.model.config.max_T).length(train_split(r).max_example_len());
}

// Dropout numbers a mask's elements with 32 bits (model.h, dropout_keeps): a training batch of
// rows of up to T tokens with more than 2^32 under one mask (its attention weights, FFN units
// or channels) would repeat its earlier elements' masks in its later ones. Evaluation draws none.
static void check_dropout_masks(const Run& r, int T) {
    const ModelConfig& mc = r.model.config;
    double elements = r.config->batch * std::max({(double)mc.NH * T * T, (double)T * mc.F, (double)T * mc.C});
    if (mc.dropout > 0 && elements >= 4294967296.0)
        fail("--dropout %g: a training batch of %d rows of up to %d tokens has %.0f elements under one mask, past the 2^32 its "
             "masks can number: use --dropout 0, or a smaller --batch", mc.dropout, r.config->batch, T, elements);
}

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

// the parameters on the host, for a checkpoint, which never holds a value that is not finite
static void fetch_finite_params(Run* r) {
    device_to_host(r);
    size_t bad = first_nonfinite(r->model.params);
    if (bad != SIZE_MAX)
        fail("step %d: parameter %s is not finite; nothing saved, %s", r->progress.step, param_location(r->model, bad).c_str(),
             last_state(*r).c_str());
}

static void save_best(Run* r) {
    save_checkpoint(r->dir + "/model.bin", r->model, run_header(r->model, CKPT_MODEL, r->config, r->progress));
}

// After a validation that scored `accuracy`: saves the state to resume from, then keeps the best
// checkpoint (ties keep the earlier one, as the paper's trainer did). In that order: a run
// killed between the two resumes from a state that is the new best, and writes model.bin from
// it (restore_best); the other order would leave a model.bin from a step the resumed run has
// not reached, which on another device it may never reach with that accuracy.
static void save_checkpoints(Run* r, double accuracy) {
    fetch_finite_params(r);
    bool best = accuracy > r->progress.best_accuracy;
    if (best) {
        r->progress.best_accuracy = accuracy;
        r->progress.best_step = r->progress.step;
    }
    save_state(r);
    if (best) save_best(r);
}

// On resume, with the state's parameters loaded: a state that is its run's best checkpoint
// (best step = its step) but whose model.bin is older or missing was saved by a run killed
// before it wrote model.bin (save_checkpoints): it is written now.
static void restore_best(Run* r) {
    if (r->progress.best_step != r->progress.step) return;
    std::string path = r->dir + "/model.bin";
    if (access(path.c_str(), F_OK) == 0 && read_checkpoint_header(path)[R_STEP] == r->progress.step) return;
    save_best(r);
}

// --keep-every's snapshot of a step, named by it (zero-padded, so that a listing is in step order)
static std::string snapshot_path(const std::string& dir, int step) { return format_text("%s/step-%06d.bin", dir.c_str(), step); }

// The parameters after this step, kept for --load: how far a run reaches at each point of its
// training, where model.bin holds one point (the best valid accuracy, often an early step) and
// state.bin the last. Its header holds the best step until then; its name (step-N.bin) tells it
// from model.bin, which it equals at a step that was the best so far (load_run).
static void keep_snapshot(Run* r) {
    fetch_finite_params(r);
    save_checkpoint(snapshot_path(r->dir, r->progress.step), r->model, run_header(r->model, CKPT_MODEL, r->config, r->progress));
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
    snprintf(line, sizeof(line), "step %d: loss %g, gradient norm %g (gradients before clipping; parameters before the update)\n", step, loss, grad_norm);
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
    // a NaN's sign bit means nothing, and the CPU's and the GPU's sums set it differently:
    // printed without it, the line reads the same on both
    if (std::isnan(loss)) loss = std::fabs(loss);
    if (std::isnan(grad_norm)) grad_norm = std::fabs(grad_norm);
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
    BatchSampler sampler(c.seed, train_split(*r), c.sort_pool, training_rounding(c, r->model.config.max_T));
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
        if (c.keep_every > 0 && (step + 1) % c.keep_every == 0) keep_snapshot(r);
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

// results.json: the run's settings that rank it, the checkpoint evaluated, and its tallies
static std::string results_json(const Run& r, const Graded& valid, const Graded& test, double valid_majority, double test_majority) {
    const RunConfig& c = *r.config;
    auto field = [](const char* name, const std::string& value) { return ",\n  \"" + std::string(name) + "\": " + value; };
    auto quoted = [](const std::string& text) { return "\"" + text + "\""; };
    std::string json = "{\n  \"task\": " + quoted(c.task) + field("pe", quoted(c.pe)) + field("model", quoted(c.model)) +
                       field("seed", std::to_string(c.seed)) + field("rope_scaling", quoted(ROPE_SCALING_NAMES[c.rope_scaling])) +
                       field("eval_positions", quoted(EVAL_POSITIONS_NAMES[c.eval_positions])) +
                       field("attention_window", quoted(window_name(r.model.config))) + field("steps", std::to_string(c.steps)) +
                       field("best_step", std::to_string(r.progress.best_step)) + field("evaluated_step", std::to_string(r.evaluated_step)) +
                       field("evaluated", quoted(EVALUATED_NAMES[r.evaluated])) + field("skipped_steps", std::to_string(r.progress.skipped)) +
                       field("train_max", std::to_string(r.data.lengths.train_max)) + field("valid", json_split(valid.answers)) +
                       field("test", json_split(test.answers)) + field("valid_tokens", json_split(valid.tokens)) +
                       field("test_tokens", json_split(test.tokens)) + field("valid_majority_answer", format_text("%.4f", valid_majority)) +
                       field("test_majority_answer", format_text("%.4f", test_majority));
    if (c.data.scratchpad != SCRATCHPAD_NONE)
        json += field("valid_scratchpad", json_split(valid.scratchpads)) + field("test_scratchpad", json_split(test.scratchpads));
    return json + "\n}\n";
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
    std::string drawn = c.eval_positions == EVAL_DRAWN ? format_text(" (positions drawn from 0-%d in evaluation too)", c.random_positions - 1) : "";
    const ModelConfig& mc = r->model.config;
    const char* sink = !mc.window_sink ? "" : mc.window_near ? " and the first, biased as just before them" : " and the first";
    std::string window = mc.window_from < 0 ? ""
                         : format_text(" (layer%s %s's queries%s seeing only their %d latest tokens%s)", mc.window_from < mc.window_to ? "s" : "",
                                       mc.window_layers().c_str(), mc.window_prompt ? " of the prompt" : "", mc.window, sink);
    std::string pe = c.pe + scaling + drawn + window;
    std::string checkpoint =
        r->evaluated == EVALUATED_LATEST   ? format_text("training state of step %d (the latest, %s the best%s)", r->evaluated_step,
                                                         r->evaluated_step == r->progress.best_step ? "also" : "not", skipped.c_str())
        : r->evaluated == EVALUATED_BEST ? format_text("checkpoint of step %d (best valid accuracy%s)", r->evaluated_step, skipped.c_str())
                                         : format_text("snapshot of step %d (--keep-every; the best valid accuracy until then was step %d's%s)",
                                                       r->evaluated_step, r->progress.best_step, skipped.c_str());
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
    write_run_file(r->dir + "/accuracy.svg", accuracy_svg(valid, test, r->data.lengths.train_max, c.task + " / " + c.pe));
    write_run_file(r->dir + "/results.json", results_json(*r, graded_valid, graded_test, valid_majority, test_majority));  // last: a sweep's sign of a finished run
    printf("\nwrote %s/results.json and %s/accuracy.svg\n", r->dir.c_str(), r->dir.c_str());
}

static void print_samples_of(Run* r) {
    if (r->config->sample <= 0) return;
    int n = r->config->sample, valid = std::min(n, valid_split(*r).size()), test = std::min(n, test_split(*r).size());
    if (valid == test) printf("\ngreedy decoding (KV cache) of the first %d examples of each split:\n", valid);
    else printf("\ngreedy decoding (KV cache) of the first %d valid and %d test examples:\n", valid, test);
    print_samples(r, valid_split(*r), "valid", r->config->sample);
    print_samples(r, test_split(*r), "test", r->config->sample);
}

// "" when the test split has examples of every test length; else how many of them it holds
// (a --test-size below their number leaves the longest without, and the table ends early)
static std::string test_lengths_held(const Dataset& d) {
    const Split& test = d.splits[SPLIT_TEST];
    std::set<int> held(test.length.begin(), test.length.end());
    int lengths = d.lengths.test_max - d.lengths.train_max;
    return (int)held.size() < lengths ? format_text(", %zu of them with examples", held.size()) : "";
}

// Makes the data a configuration describes, checks what only the data can tell, and returns
// the model that fits it.
static ModelConfig build_data(Run* r) {
    RunConfig& c = *r->config;
    auto start = std::chrono::steady_clock::now();
    r->data = make_dataset(find_task(c.task), c.data);
    c.data.train_max = r->data.lengths.train_max;  // what "the task's default" resolved to, for
    c.data.test_max = r->data.lengths.test_max;    // config.json and checkpoints
    int max_T = longest_example(r->data);
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
    describe(*r, "%s: %d train, %d valid, %d test examples (lengths %d-%d, test %d-%d%s), vocabulary %d, up to %d tokens (%.1fs)\n",
             c.task.c_str(), train_split(*r).size(), valid_split(*r).size(), test_split(*r).size(), r->data.lengths.train_min,
             r->data.lengths.train_max, r->data.lengths.train_max + 1, r->data.lengths.test_max, test_lengths_held(r->data).c_str(), mc.V,
             max_T, seconds_since(start));
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

// Builds the model build_data returned (parameters from --seed).
static void build_model(Run* r, const ModelConfig& mc) {
    make_model(r, mc);
    describe_model(*r, mc);
}

// Builds the data and the model a configuration describes.
static void build(Run* r) { build_model(r, build_data(r)); }

// The files a run writes in its directory (README, "The run directory").
static const char* RUN_FILES[] = {"config.json", "log.tsv", "model.bin", "state.bin", "results.json", "accuracy.svg", "nonfinite.txt"};

// whether `name` is step-DIGITS followed by `ending` (".bin" for a snapshot)
static bool is_snapshot_name(const std::string& name, const std::string& ending) {
    const std::string prefix = "step-";
    if (name.size() <= prefix.size() + ending.size()) return false;
    size_t digits_end = name.size() - ending.size();
    return name.compare(0, prefix.size(), prefix) == 0 && name.compare(digits_end, std::string::npos, ending) == 0 &&
           name.find_first_not_of("0123456789", prefix.size()) == digits_end;
}

// the paths in dir of --keep-every's snapshots (suffix "") or their temporaries (".tmp")
static std::vector<std::string> snapshot_files(const std::string& dir, const std::string& suffix) {
    std::vector<std::string> found;
    DIR* d = opendir(dir.c_str());
    if (!d) return found;  // no directory yet: no files
    while (const dirent* entry = readdir(d))
        if (is_snapshot_name(entry->d_name, ".bin" + suffix)) found.push_back(dir + "/" + entry->d_name);
    closedir(d);
    std::sort(found.begin(), found.end());
    return found;
}

// A write a crash interrupted leaves FILE.tmp (the checkpoints and log.tsv are written so; FILE
// itself is intact): gone before a run starts or resumes, as the next write of FILE would
// replace it anyway.
static void remove_stale_temporaries(const std::string& dir) {
    std::vector<std::string> temporaries = snapshot_files(dir, ".tmp");
    for (const char* file : RUN_FILES) temporaries.push_back(dir + "/" + file + ".tmp");
    for (const std::string& tmp : temporaries)
        if (remove(tmp.c_str()) != 0 && errno != ENOENT) fail("can not remove %s: %s", tmp.c_str(), strerror(errno));
}

// A new run never silently replaces an earlier one, and a directory never mixes two runs:
// without --force an earlier run is an error, found before any work (check_new_run); with it,
// every file of the earlier run goes (clear_for_new_run) before the new one writes its first,
// and only once the new run's data and model are made, so that a mistake in its flags leaves
// the earlier run as it was.
static std::vector<std::string> earlier_run_files(const std::string& dir) {
    std::vector<std::string> found = snapshot_files(dir, "");
    for (const char* file : RUN_FILES)
        if (access((dir + "/" + file).c_str(), F_OK) == 0) found.push_back(dir + "/" + file);
    return found;
}

static void check_new_run(const std::string& dir, bool force) {
    if (force || earlier_run_files(dir).empty()) return;
    if (access((dir + "/state.bin").c_str(), F_OK) == 0)
        fail("%s holds an earlier run: --resume %s continues it, --force replaces it, or choose another --out", dir.c_str(), dir.c_str());
    fail("%s holds an earlier run or evaluation: --force replaces it, or choose another --out", dir.c_str());
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

// A run computes in bf16 throughout or not at all (dev/report ranks bf16 runs as a setting
// apart), so a resume must ask for bf16 exactly when the run's config.json records it; runs
// from before that field were not bf16. (fp32 and tf32 may alternate: both are the GPU's
// settings for fp32 products, and the CPU computes either in fp32.) Without config.json, or with
// one cut short, whether it did is not known, and the resume is refused.
static void check_resumed_precision(const RunConfig& c) {
    std::ifstream in(c.resume + "/config.json");
    if (!in) fail("can not read %s/config.json (%s): it says whether the run computed in bf16, which its resume must repeat", c.resume.c_str(), strerror(errno));
    std::stringstream config;
    config << in.rdbuf();
    if (config.str().find('}') == std::string::npos)
        fail("%s/config.json is empty or cut short: it says whether the run computed in bf16, which its resume must repeat", c.resume.c_str());
    bool was_bf16 = config.str().find("\"precision\": \"bf16\"") != std::string::npos;
    bool is_bf16 = find_precision(c.precision) == PRECISION_BF16;
    if (was_bf16 && !is_bf16) fail("%s computed in bf16 (its config.json): resume it with --precision bf16", c.resume.c_str());
    if (!was_bf16 && is_bf16) fail("%s did not compute in bf16 (its config.json): --precision bf16 would change its arithmetic halfway", c.resume.c_str());
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
        check_resumed_precision(*c);
    }
    resolve_config(c);
    r->dir = run_dir(*c);
    if (c->resume.empty()) check_new_run(r->dir, c->force);
    check_directory_can_be_made(r->dir);  // before the data and the model are made
    build(r);
    check_dropout_masks(*r, longest_training_row(*r));
    make_directory(r->dir);
    if (c->resume.empty()) clear_for_new_run(r->dir);
    remove_stale_temporaries(r->dir);
    if (!c->resume.empty()) {
        load_checkpoint(c->resume + "/state.bin", state, &r->model);
        restore_best(r);
        host_to_device(r);
    }
    write_run_file(r->dir + "/config.json", config_json(*r));
    describe(*r, "run: %s, %d steps of %d sequences, lr %g%s\n\n", r->dir.c_str(), c->steps, c->batch, c->lr,
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
    check_directory_can_be_made(r.dir);
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
// probabilities (and CoPE's positions and table) and the residual stream into one file
// (analysis.h), and heatmaps of the first valid and the first test example beside it
// (FILE.valid.svg, FILE.test.svg). With --eval-positions drawn each example sits at the
// positions evaluation draws for it.
// --dump-attention FILE never replaces the model read, a file of the run it belongs to
// (results.json, say, written or still to come) or any checkpoint. Such a FILE is a slip of the
// hand, and the dump would leave no trained model to dump again.
static void check_dump_path(const RunConfig& c) {
    const std::string& out = c.dump_attention;
    const std::string name = out.substr(out.find_last_of('/') + 1);  // (npos + 1 is 0)
    bool run_name = is_snapshot_name(name, ".bin");
    for (const char* file : RUN_FILES) run_name = run_name || name == file;
    if ((run_name && same_file(directory_of(out), directory_of(c.load))) || starts_as_checkpoint(out))  // the model read is a checkpoint
        fail("--dump-attention %s would replace a run's file: write the dump to a file of its own", out.c_str());
}

static void dump_attention(Run* r) {
    RunConfig& c = *r->config;
    check_dump_path(c);
    Model& m = r->model;  // the host copy: on the CPU, batch 1 fits whatever device trained it
    const ModelConfig& mc = m.config;
    AttentionDump dump;
    dump.L = mc.L, dump.NH = mc.NH, dump.C = mc.C, dump.has_positions = pe_has_context_bias(mc.pe), dump.words = r->data.vocab.words;
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
            Batch batch;
            fill_batch(&batch, split, {i});
            if (c.eval_positions == EVAL_DRAWN) draw_eval_positions(&batch, mc.random_positions, c.seed, SPLIT_NAMES[kind], {i});
            model_forward(&m, e.tokens.data(), nullptr, 1, e.T, NO_DROPOUT, 0, batch.places());
            size_t plane = (size_t)mc.NH * e.T * e.T;
            for (int l = 0; l < mc.L; l++) e.probs.insert(e.probs.end(), m.act(A_ATT, l), m.act(A_ATT, l) + plane);
            for (int s = 0; s <= mc.L; s++) {  // the residual stream entering each layer, then leaving the last
                const real* state = s < mc.L ? m.act(A_RES_IN, s) : m.act(A_RES_OUT);
                e.states.insert(e.states.end(), state, state + (size_t)e.T * mc.C);
            }
            if (dump.has_positions) {
                e.positions.resize(mc.L * plane);
                for (int l = 0; l < mc.L; l++)
                    cope_positions(e.positions.data() + l * plane, m.act(A_QKV, l), e.T, mc.C, mc.NH);
            }
            dump.examples.push_back(std::move(e));
        }
    }
    write_attention_dump(c.dump_attention, dump);
    for (SplitKind kind : {SPLIT_VALID, SPLIT_TEST}) {  // the heatmaps after it: FILE.test.svg is written last
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
    write_run_file(r->dir + "/config.json", config_json(*r));
}

// the longest example of the data a checkpoint's run was made with: its model's sequence length
static int own_longest_example(const Header& h) {
    RunConfig own;
    restore_run(h, &own);
    return longest_example(make_dataset(find_task(own.task), own.data));
}

// A saved run rebuilt as it was: its settings from the checkpoint's header, its data, and the
// model holding the checkpoint's parameters (on the CPU): model.bin's, of the best step, or
// state.bin's, of the latest. Returns the header.
// With --test-max or --test-size given (`kept`), the test split is made anew to them: the model
// is tested on other lengths than its run's. The examples of a length do not depend on the
// other lengths (tasks.h), so a length both tests share holds the same examples wherever the
// two tests give it the same count. How it is evaluated is the caller's (--rope-scaling and
// --eval-positions as given, or unscaled and counted), whatever the run validated with: a
// resume (prepare_run) alone restores those.
static Header load_run(Run* r, const std::string& path, std::set<std::string> kept = {}) {
    RunConfig* c = r->config;
    Header h = read_checkpoint_header(path);
    kept.insert({"--rope-scaling", "--eval-positions"});
    r->progress = restore_run(h, c, kept);
    r->evaluated_step = r->progress.step;
    // model.bin is saved at the step that became the best; a --keep-every snapshot (step-N.bin) is
    // of its step, even one that was the best until then
    std::string file = path.substr(path.find_last_of('/') + 1);
    r->evaluated = h[H_KIND] == CKPT_TRAIN_STATE                                                   ? EVALUATED_LATEST
                   : is_snapshot_name(file, ".bin") || r->progress.step != r->progress.best_step ? EVALUATED_SNAPSHOT
                                                                                                 : EVALUATED_BEST;
    c->model = header_preset(h);
    if (kept.count("--test-max") && c->data.index_hints)
        fail("--test-max can not test a model trained with --index-hints on other lengths: the hints follow the test lengths, so "
             "every example it was trained on would change");
    resolve_config(c);
    ModelConfig mc = build_data(r);
    if ((kept.count("--test-max") || kept.count("--test-size")) && make_layout(mc).total != header_num_params(h)) {
        // a model with a learned row per position (or Abacus per place) has as many rows as its
        // run's longest example: other test examples are read with those rows, if they fit
        mc.max_T = std::max(mc.max_T, own_longest_example(h));
        if (make_layout(mc).total != header_num_params(h))
            fail("%s has a learned row per position (or Abacus per place) for the lengths it was made for, and these test examples "
                 "run to %d tokens, past its run's longest: it can be tested only on the lengths it was made for",
                 path.c_str(), longest_example(r->data));
    }
    build_model(r, mc);
    load_checkpoint(path, h, &r->model);
    return h;
}

static void run_load(RunConfig* c, const std::set<std::string>& given) {
    Run r(c);
    if (c->answer) r.quiet = true, c->device = "cpu";  // stdout is the answers'; greedy decoding runs on the CPU's model
    std::set<std::string> kept;  // saved flags given in place of the run's own (find_mode allows the test lengths)
    for (const Flag& f : flag_table(c))
        if (f.saved && given.count(f.name)) kept.insert(f.name);
    load_run(&r, c->load, kept);
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
    check_dropout_masks(r, train_split(r).max_example_len());
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
// random sequences of --bench-seq tokens over a vocabulary of BENCH_VOCAB (every position but the
// last a target), the shape of the PyTorch reference numbers README quotes (issue 11's).
static const int BENCH_VOCAB = 512;

static void run_bench(RunConfig* c) {
    resolve_config(c);
    Run r(c);
    Rng rng = rng_stream(c->seed, hash_string("bench"));
    if (c->bench_seq > 0) {
        printf("random sequences: %d x %d tokens, vocabulary %d\n", c->batch, c->bench_seq, BENCH_VOCAB);
        build_model(&r, model_config(*c, BENCH_VOCAB, c->bench_seq));
    } else {
        build(&r);
    }
    check_dropout_masks(r, c->bench_seq > 0 ? c->bench_seq : longest_training_row(r));
    // --sort-pool K: a pool's batches run from short to long in a drawn order, so the timed steps
    // are whole pools (10 rounded up to K's multiple). The warm-up runs the same steps' batches
    // once, untimed: each shape has then had its CUDA graph captured (and cuBLAS its kernels
    // loaded), so the timed steps replay, as every step of a run but a shape's first does.
    const int pool = std::max(1, c->sort_pool), timed = (10 + pool - 1) / pool * pool;
    BatchSampler sampler(c->seed, train_split(r), c->sort_pool, training_rounding(*c, r.model.config.max_T));  // with --bench-seq, not read
    Batch batch;
    double seconds = 0, grad_norm = 0;
    long real = 0, padded = 0;
    double padded_by_length = 0;  // sum over the timed steps of B T^2: the attention's work grows with each row's length
    for (int pass = 0; pass < 2; pass++)
        for (int step = 0; step < timed; step++) {
            bool warmup = pass == 0;
            if (c->bench_seq > 0) {
                batch.B = c->batch, batch.T = c->bench_seq, batch.real_tokens = (long)c->batch * c->bench_seq;
                batch.tokens.resize((size_t)batch.B * batch.T);
                for (int& token : batch.tokens) token = rng.between(2, BENCH_VOCAB - 1);
                batch.targets.assign(batch.tokens.begin() + 1, batch.tokens.end());
                batch.targets.push_back(-1);
                for (int b = 0; b < batch.B; b++) batch.targets[(size_t)b * batch.T + batch.T - 1] = -1;  // not the next row's first
            } else {
                training_batch(&batch, &sampler, r, step);
            }
            auto start = std::chrono::steady_clock::now();
            double loss = 0;  // the step ends by reading the gradient norm back: the GPU has finished
            bool last = !warmup && step == timed - 1;
            if (last) device_profile(&r, true);
            if (!train_step(&r, batch, step, &loss, &grad_norm)) fail("--bench: step %d was not finite (loss %g), so its time would leave out the update", step + 1, loss);
            if (last) device_profile(&r, false);
            if (warmup) continue;
            seconds += seconds_since(start);
            real += batch.real_tokens, padded += (long)batch.B * batch.T, padded_by_length += (double)batch.B * batch.T * batch.T;
        }
    const ModelConfig& m = r.model.config;
    double flops = 6.0 * r.model.layout.total * padded + 6.0 * m.L * m.C * padded_by_length;  // 6N + 6LCT per token (llm.c), T its row's
    std::string device = "CPU (" + cpu_name() + "), " + std::to_string(omp_get_max_threads()) + " threads, " + products(r) + " matrix products, " +
                         ATTENTION_NAMES[m.attention] + " attention";
    double peak = 0;
#ifdef __CUDACC__
    if (r.gpu) {
        device = gpu_name(m.precision, &peak) + ", " + c->precision + ", CUDA graphs " + c->cuda_graphs;
    }
#endif
    printf("\nbench on %s: %d steps of %d sequences, after the same steps once as a warm-up\n", device.c_str(), timed, c->batch);
    printf("%10ld tokens in the timed steps, %ld computed with their padding (%.0f%% padding)\n", real, padded, 100.0 * (padded - real) / padded);
    printf("%10.2f ms/step\n%10.0f tokens/s (real tokens)\n%10.0f tokens/s (padding included)\n", 1000 * seconds / timed, real / seconds,
           padded / seconds);
    if (peak > 0) printf("%10.1f TFLOP/s (6N + 6LCT per padded token, T its row's length)\n", flops / seconds / 1e12);
    else printf("%10.1f GFLOP/s (6N + 6LCT per padded token, T its row's length)\n", flops / seconds / 1e9);
    if (peak > 0) printf("%9.1f%% MFU (of %.1f TFLOP/s, the dense %s peak)\n", 100 * flops / seconds / 1e12 / peak, peak, c->precision.c_str());
#ifdef __CUDACC__
    if (r.gpu && r.gpu->graphs)
        printf("%10zu CUDA graphs captured in the warm-up, %.1f ms each (once per batch shape in a run)\n", r.gpu->captured.size(),
               1000 * r.gpu->capture_seconds / std::max<size_t>(1, r.gpu->captured.size()));
#endif
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

// What training's batches compute over an epoch, as the paper makes them and as --pack and
// --sort-pool K would, and each of those with --pad-to-multiple N where it is given: how much of
// it is padding, and how many shapes a step takes.
static void print_batch_costs(const Dataset& d, const RunConfig& c, int pool) {
    const Split& train = d.splits[SPLIT_TRAIN];
    long steps = std::max(1L, (long)train.size() / c.batch / pool) * pool;  // an epoch or less, in whole pools (one pool at least)
    printf("\ntraining batches of %d (--seed %llu), their first %ld steps (%ld examples of the split's %d; pools of %d):\n", c.batch,
           (unsigned long long)c.seed, steps, steps * c.batch, train.size(), pool);
    printf("%-44s rows a step  tokens a row  computed per real token  padding  shapes (rows, T)\n", "batches");
    std::vector<int> multiples = {1};
    if (c.pad_multiple > 1) multiples.push_back(c.pad_multiple);
    const int longest = longest_example(d);
    for (int multiple : multiples)
        for (int sorted = 0; sorted < 2; sorted++)
            for (int pack = 0; pack < 2; pack++) {
                BatchCost cost = batch_cost(train, c.seed, c.batch, sorted ? pool : 0, pack, steps, {multiple, longest});
                std::string name = sorted ? format_text("--sort-pool %d", pool) : "the paper's";
                if (pack) name += sorted ? " --pack" : ", --pack";
                if (multiple > 1) name += format_text("%s --pad-to-multiple %d", sorted || pack ? "" : ",", multiple);
                printf("%-44s %11.1f %13.1f %23.2f %7.0f%% %17zu\n", name.c_str(), (double)cost.rows / cost.steps,
                       (double)cost.computed / cost.rows, (double)cost.computed / cost.real, 100 * cost.padding(), cost.shapes.size());
            }
}

static void print_stats(const Task& task, const RunConfig& c, int pool) {
    check_batching(c);
    if (pool < 2) fail("--stats --sort-pool %d: the pool must hold at least 2 batches to sort (1 is the paper's batches, shown anyway)", pool);
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
    print_batch_costs(d, c, pool);
}

// ----------------------------------------------------------------------------

static void run(int argc, char** argv) {
    RunConfig config;
    std::set<std::string> given = parse_flags(argc, argv, &config);
    if (config.help) return print_help(&config);
    Mode mode = find_mode(given, &config);
    if (config.threads > 0) omp_set_num_threads(config.threads);
    if (mode == RESUME) return run_training(&config);
    if (mode == LOAD) return run_load(&config, given);
    const Task& task = find_task(config.task);
    length_split(task, config.data);  // validates lengths and sizes before any mode runs
    switch (mode) {
        case SHOW: return show_examples(task, config);
        case ANSWER: return answer_prompts(task, config.data);
        case STATS: return print_stats(task, config, given.count("--sort-pool") ? config.sort_pool : 16);
        case DUMP: return run_dump_state(&config);
        case BENCH: return run_bench(&config);
        default: return run_training(&config);
    }
}

#ifndef TESTING
int main(int argc, char** argv) {
    try {
        run(argc, argv);
        // what was printed must have reached standard output: a full disk or a closed pipe is an
        // error, not exit 0 (the run's own files are checked as they are written)
        if (fflush(stdout) != 0 || ferror(stdout)) fail("can not write the output to standard output (a full disk, or a closed pipe?)");
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
