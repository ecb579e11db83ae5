// Bad input, table-driven, through the ./train binary (it must be built): every flag of the flag
// table gets each kind of bad value its type admits (missing, malformed, negative, overflowing,
// not finite, empty), and every bounded flag its out-of-range values; unknown names for the
// flags that choose from a list; missing, unwritable and wrong-kind paths for the flags that
// name files. Each must end with exit status 1 and exactly one line on stderr,
// "train: error: ...", saying what was wrong, before any training starts. The slowest case's
// time is printed at the end (about 0.3 s on an idle EPYC core: it builds a task's data).
//
// The flag table itself (included from train.cu) drives the per-type cases, and a flag that has
// no range or path case here, and is not listed as unbounded with the reason, fails the test: a
// new flag can not go untested.
#define TESTING
#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "train.cu"
#include "test/unity.h"

// the directory the test started in, which holds ./train; made once, thread-safely (the
// workers of check_cases ask at once: as a plain static filled on first use it was a race,
// which AddressSanitizer caught as a read of a freed string)
static std::string cwd() {
    static const std::string dir = [] {
        char buf[4096];
        return std::string(getcwd(buf, sizeof(buf)) ? buf : ".");
    }();
    return dir;
}

struct Outcome {
    int status;
    std::string err;
    double seconds;
};

// made once, by whichever worker thread of check_cases asks first: a function-local static's
// initialisation is thread-safe, where the `if (dir.empty())` on a plain static it replaces was
// a race between workers (a fresh-clone CI run once saw a case exit 2 with nothing on stderr,
// as the shell's `cd` does on a bad path)
static std::string scratch_dir() {
    static const std::string dir = unity_temp_dir();
    return dir;
}

static std::string read_all(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// ./train ARGS < INPUT (a file), stdout discarded; `timeout` turns a hang into a failure. Runs
// side by side need their own `slot` for stderr.
static Outcome run_train(const std::string& args, const std::string& input = "/dev/null", int slot = 0) {
    std::string err = scratch_dir() + "/err" + std::to_string(slot);
    std::string command = "cd " + scratch_dir() + " && timeout 20 " + cwd() + "/train " + args + " < " + input + " > /dev/null 2> " + err;
    auto start = std::chrono::steady_clock::now();
    int status = system(command.c_str());
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_all(err), seconds};
}

// "" if the outcome is one error line containing `text`, else what is wrong with it
static std::string problem_with(const Outcome& o, const std::string& text) {
    if (o.status != 1) return "exit status " + std::to_string(o.status) + " (expected 1), stderr: " + o.err;
    if (std::count(o.err.begin(), o.err.end(), '\n') != 1 || o.err.rfind("train: error: ", 0) != 0)
        return "expected one line 'train: error: ...', got: " + o.err;
    if (o.err.find(text) == std::string::npos) return "expected '" + text + "' in: " + o.err;
    return "";
}

// the slowest case so far: reported, not asserted (a test does not time the machine; `timeout`
// above turns a hang into a failure)
static Outcome slowest{0, "", 0};
static std::string slowest_args;

struct Case {
    const char* flag;  // the flag under test ("" for cases about no one flag)
    std::string args, message;
};

// Runs the cases `workers` at a time (only cases that write no file may run side by side), then
// asserts on their outcomes in order, on this thread.
static void check_cases(const std::vector<Case>& cases, int workers = 1) {
    std::vector<Outcome> outcomes(cases.size());
    std::atomic<size_t> next{0};
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; w++)
        threads.emplace_back([&, w] {
            for (size_t i; (i = next++) < cases.size();) outcomes[i] = run_train(cases[i].args, "/dev/null", w);
        });
    for (std::thread& t : threads) t.join();
    for (size_t i = 0; i < cases.size(); i++) {
        if (outcomes[i].seconds > slowest.seconds) slowest = outcomes[i], slowest_args = cases[i].args;
        std::string problem = problem_with(outcomes[i], cases[i].message);
        TEST_ASSERT_MESSAGE(problem.empty(), (cases[i].args + ": " + problem).c_str());
    }
}

// ----------------------------------------------------------------------------

// missing, malformed, negative, overflowing, not finite and empty values, by the flag's type
static void test_every_flag_refuses_values_its_type_can_not_hold(void) {
    RunConfig config;
    std::vector<Case> cases;
    for (const Flag& f : flag_table(&config)) {
        std::string name = f.name;  // (values are parsed before the mode is chosen: no mode needed)
        if (f.type == FLAG_SWITCH) {
            cases.push_back({f.name, name + " yes", "unknown flag 'yes'"});  // a switch takes no value
            continue;
        }
        cases.push_back({f.name, name, name + " needs a value"});
        cases.push_back({f.name, name + " --help", name + " needs a value, got the flag --help"});
        if (f.type == FLAG_STRING) {
            cases.push_back({f.name, name + " ''", name + " needs a value, got an empty string"});
            continue;
        }
        if (f.type == FLAG_CHOICE) {
            for (const char* v : {"''", "0", "-1", "FULL"}) cases.push_back({f.name, name + " " + v, "unknown " + name + " '"});
            continue;
        }
        // strtoll and strtod alone would take the leading space, the '+' and the hexadecimal
        const std::vector<const char*> bad_numbers = {"abc", "-3", "''", "12x", "0x10", "' 12'", "+12"};
        const std::vector<const char*> bad_integers = {"99999999999999999999", "1.5", "1e3", "-0.5"};
        const std::vector<const char*> bad_decimals = {"nan", "inf", "-inf", "-1e-9", "0x1p-3"};
        std::string expects = f.type == FLAG_FLOAT ? name + " expects a number >= 0" : name + " expects an integer in [0, ";
        for (const char* v : bad_numbers) cases.push_back({f.name, name + " " + v, expects});
        for (const char* v : f.type == FLAG_FLOAT ? bad_decimals : bad_integers) cases.push_back({f.name, name + " " + v, expects});
        if (f.type == FLAG_FLOAT) {
            cases.push_back({f.name, name + " 1e999", name + " 1e999 is too large for a double"});
            cases.push_back({f.name, name + " 1e-400", name + " 1e-400 is too small for a double"});
        }
    }
    TEST_ASSERT_GREATER_THAN(150, cases.size());
    // every one fails while parsing, before any file is touched, so they may run side by side:
    // each is mostly the loading of ./train (and with nvcc, of cuBLAS), 0.3-0.5 s
    check_cases(cases, 2 * (int)std::max(1u, std::thread::hardware_concurrency()));
    TEST_MESSAGE(std::to_string(cases.size()) + " bad values over " + std::to_string(flag_table(&config).size()) + " flags");
}

// the bounded flags: values past each bound
static const std::vector<Case>& range_cases() {
    static const std::vector<Case> cases = {
        {"--layers", "--layers 0", "--layers 0 is out of range [1, 65536]"},
        {"--layers", "--layers 65537", "--layers 65537 is out of range [1, 65536]"},
        {"--d-model", "--d-model 0", "--d-model 0 is out of range [1, 65536]"},
        {"--d-model", "--d-model 100 --heads 3", "--d-model 100 is not divisible by --heads 3"},
        {"--heads", "--heads 0", "--heads 0 is out of range [1, 65536]"},
        {"--d-ff", "--d-ff 70000", "--d-ff 70000 is out of range [1, 65536]"},
        {"--rope-frac", "--pe rope --rope-frac 0", "--rope-frac 0 is out of range (0, 1]"},
        {"--rope-frac", "--pe xpos --rope-frac 1.5", "--rope-frac 1.5 is out of range (0, 1]"},
        {"--rope-frac", "--pe alibi --rope-frac 0.5", "--rope-frac sets the share of each head that RoPE rotates, and --pe alibi rotates nothing"},
        {"--rope-frac", "--pe rope --rope-frac 0.01", "--rope-frac 0.01 rotates no pair of a 16-dim head"},
        {"--dropout", "--dropout 1", "--dropout 1 is out of range [0, 1)"},
        {"--steps", "--steps 0", "--steps and --eval-every must be at least 1"},
        {"--batch", "--batch 0", "--batch 0 is out of range [1, 4096]"},
        {"--batch", "--batch 4097", "--batch 4097 is out of range [1, 4096]"},
        {"--sort-pool", "--sort-pool 4097", "--sort-pool 4097 is out of range [0, 4096]"},
        {"--pad-to-multiple", "--pad-to-multiple 4097", "--pad-to-multiple 4097 is out of range [0, 4096]"},
        {"--lr", "--lr 0", "--lr must be above 0"},
        {"--warmup-frac", "--warmup-frac 1.5", "--warmup-frac 1.5 is out of range [0, 1]"},
        {"--weight-decay", "--weight-decay 2", "--weight-decay 2 is out of range [0, 1]"},
        {"--grad-clip", "--grad-clip 0", "--grad-clip must be above 0"},
        {"--eval-every", "--eval-every 0", "--steps and --eval-every must be at least 1"},
        {"--keep-every", "--keep-every 0", "--keep-every expects at least 1 step, got 0"},
        {"--keep-every", "--steps 10 --keep-every 11", "--keep-every 11 is past the run's 10 steps: it would keep no snapshot"},
        {"--train-size", "--train-size 0", "--train-size 0 is out of range [1, 10000000]"},
        {"--valid-size", "--valid-size 10000001", "--valid-size 10000001 is out of range [1, 10000000]"},
        {"--test-size", "--test-size 0", "--test-size 0 is out of range [1, 10000000]"},
        {"--train-max", "--train-max 1", "--train-max 1 is below copy's shortest length 2"},
        {"--train-max", "--train-max 30 --test-max 30", "--test-max 30 leaves no test lengths above --train-max 30"},
        {"--test-max", "--test-max 1001", "copy can not make examples longer than 1000"},
        {"--train-max", "--train-max 0", "--train-max expects at least 1, got 0 (leave it out for the task's own)"},
        {"--test-max", "--test-max 0", "--test-max expects at least 1, got 0 (leave it out for the task's own)"},
        {"--threads", "--threads 1025", "--threads 1025 is out of range [0, 1024]"},
        {"--bench-seq", "--bench --bench-seq 1", "--bench-seq expects at least 2 tokens"},
        {"--bench-seq", "--bench --bench-seq 65537", "sequence length 65537 is out of range [1, 65536]"},
        {"--show", "--show 0", "--show expects at least 1 example, got 0"},
        {"--dump-per-length", "--load x --dump-attention y --dump-per-length 0", "--dump-per-length expects at least 1 example, got 0"},
        {"--dump-per-length", "--load x --dump-per-length 3", "--dump-per-length is read only with --dump-attention"},
        {"--show", "--task scan --show 20000 --split test", "--show 20000: the test split of scan has 3136 examples"},
        // sizes whose memory would not fit: refused before allocating, with the size asked for
        // (sizes no machine has: petabytes; with a GPU, the GPU's share is what does not fit)
        {"--batch", "--batch 4096 --d-model 16384 --heads 16 --d-ff 65536 --layers 64", "GiB of memory on the "},
        {"--layers", "--model paper --layers 4000", "GiB of memory on the "},
        {"--bench-seq", "--bench --model paper --bench-seq 65536", "(parameters, gradients, AdamW state, and activations for 64 x 65536 tokens)"},
        // dropout's masks number their elements with 32 bits: 64 x 32 heads x 1999^2 attention weights are past them
        // (fused attention, whose memory holds no (T, T) tensor)
        {"--dropout", "--task copy --train-max 998 --test-max 1000 --train-size 64 --valid-size 8 --test-size 2 --dropout 0.1 --heads 32 "
                      "--d-model 64 --device cpu --attention fused",
         "--dropout 0.1: a training batch of 64 rows of up to 1999 tokens has 8183810048 elements under one mask, past the 2^32"},
    };
    return cases;
}

// numeric flags every value of whose type is valid, and why
static const char* UNBOUNDED[][2] = {
    {"--seed", "any 64-bit seed"},
    {"--data-seed", "any 64-bit seed"},
    {"--sample", "decodes min(N, the split's size) examples; 0 decodes none"},
};

static void test_every_bounded_flag_refuses_values_out_of_range(void) { check_cases(range_cases()); }

// flags that choose from a list: a name not on it
static const std::vector<Case>& choice_cases() {
    static const std::vector<Case> cases = {
        {"--task", "--task copyy --show 1", "unknown task 'copyy' (valid: copy copy_rsc2x"},
        {"--pe", "--pe cape", "unknown positional encoding 'cape' (valid: nope ape t5 alibi rope ape_learned xpos kerple_log kerple_power fire cope)"},
        {"--model", "--model huge", "unknown model preset 'huge' (valid: paper small tiny)"},
        {"--device", "--device tpu", "unknown device 'tpu' (valid: auto cpu gpu)"},
        {"--precision", "--precision fp16", "unknown precision 'fp16' (valid: fp32 tf32 bf16)"},
        {"--attention", "--attention flash", "unknown --attention 'flash' (valid: simple fused)"},
        {"--attention", "--attention fused --device gpu", "--device gpu: --attention fused runs on the CPU only, for now (--device cpu runs it)"},
        {"--attention", "--pe cope --attention fused", "--attention fused computes each score's bias from the PE alone (pe_score_bias), and cope's"},
        {"--attention", "--load x --dump-attention f --attention fused", "--attention can not be combined with --dump-attention"},
        {"--cuda-graphs", "--cuda-graphs maybe", "--cuda-graphs expects on or off, got 'maybe'"},
        {"--cuda-graphs", "--cuda-graphs off --device cpu", "--cuda-graphs says how the GPU runs a step, and --device cpu uses none"},
        {"--split", "--show 1 --split dev", "unknown split 'dev' (valid: train valid test)"},
        {"--scratchpad", "--task addition --scratchpad all --show 1",
         "unknown --scratchpad 'all' (valid: none full minimal no-input no-comp no-output no-vars no-remaining)"},
        {"--scratchpad", "--task copy --scratchpad full --show 1", "copy has no scratchpad (tasks with one: addition poly sort sort_multi sum parity lego)"},
        {"--scratchpad", "--task lego --scratchpad no-vars --answer", "lego's steps carry no variables: --scratchpad no-vars would be full"},
        {"--random-positions", "--pe rope --random-positions 70000", "--random-positions 70000 is out of range [0, 65536]"},
        {"--random-positions", "--pe nope --random-positions 500", "--random-positions: nope has no positions to draw"},
        {"--random-positions", "--pe cope --random-positions 500", "--random-positions: cope has no positions to draw"},
        {"--random-positions", "--pe xpos --random-positions 40000", "--pe xpos: this run's positions reach 39999, but xPos's scales stay within float's range only below 32768"},
        {"--cope-max", "--pe cope --cope-max 70000", "--cope-max 70000 is out of range [0, 65536]"},
        {"--cope-max", "--pe rope --cope-max 8", "--cope-max clips CoPE's contextual positions: rope has none"},
        {"--pe-per-layer", "--pe alibi --pe-per-layer", "--pe-per-layer gives each layer its own parameters of the PE's attention bias: alibi has none"},
        {"--pe-per-layer", "--pe ape_learned --pe-per-layer", "--pe-per-layer gives each layer its own parameters of the PE's attention bias: ape_learned has none"},
        {"--rope-scaling", "--pe rope --rope-scaling big", "unknown --rope-scaling 'big' (valid: none pi ntk yarn)"},
        {"--rope-scaling", "--pe t5 --rope-scaling yarn", "--rope-scaling rescales RoPE's angles: it needs --pe rope, not t5"},
        {"--eval-positions", "--pe ape --random-positions 500 --eval-positions all", "unknown --eval-positions 'all' (valid: counted drawn)"},
        {"--eval-positions", "--pe ape --eval-positions drawn", "--eval-positions drawn draws positions as --random-positions does in training, and this model"},
        {"--eval-positions", "--task addition --scratchpad full --pe ape --random-positions 500 --eval-positions drawn",
         "--eval-positions drawn can not grade a scratchpad"},
        {"--eval-positions", "--pe ape --random-positions 500 --eval-positions drawn --sample 2", "--sample can not be combined with --eval-positions drawn"},
        {"--eval-positions", "--load x --answer --eval-positions drawn", "--eval-positions can not be combined with --load and --answer"},
        // --load --answer decodes prompts from stdin on the CPU: what evaluates the splits, or writes, is refused with it
        {"--test-size", "--load x --answer --test-size 5", "--test-size can not be combined with --load and --answer"},
        {"--sample", "--load x --answer --sample 2", "--sample can not be combined with --load and --answer"},
        {"--dump-attention", "--load x --answer --dump-attention f", "--dump-attention can not be combined with --load and --answer"},
        {"--eval-positions", "--show 1 --eval-positions drawn", "--eval-positions can not be combined with --show"},
        {"--attention-window", "--attention-window 0:20", "--attention-window is read only with --load"},
        {"--attention-window", "--load x --dump-attention f --attention-window 0:2", "--attention-window can not be combined with --dump-attention"},
        // a dump is of the model as trained, on the CPU
        {"--rope-scaling", "--load x --dump-attention f --rope-scaling pi", "--rope-scaling can not be combined with --dump-attention"},
        {"--device", "--load x --dump-attention f --device cpu", "--device can not be combined with --dump-attention"},
        {"--precision", "--load x --dump-attention f --precision bf16", "--precision can not be combined with --dump-attention"},
        {"--reverse-digits", "--task sum --reverse-digits --show 1", "--reverse-digits is for the addition task only, not sum"},
        {"--index-hints", "--task copy --index-hints --show 1", "--index-hints is for the addition task only, not copy"},
        {"--zero-pad", "--task reverse --zero-pad --answer", "--zero-pad is for the addition task only, not reverse"},
        {"--abacus", "--task scan --abacus", "--abacus embeds the places of digits: scan has no digits"},
        {"--abacus", "--task addition --index-hints --abacus", "--abacus can not be combined with --index-hints"},
        {"--abacus", "--bench --bench-seq 8 --abacus", "--abacus can not be combined with --bench-seq: random tokens have no digits"},
        {"--position-coupling", "--task addition --reverse-digits --pe t5 --position-coupling",
         "--position-coupling needs a PE that reads each token's position (ape, ape_learned or rope), not t5"},
        {"--position-coupling", "--pe nope --position-coupling", "--position-coupling needs a PE that reads each token's position"},
        {"--position-coupling", "--pe rope --abacus --position-coupling", "--position-coupling can not be combined with --abacus: both set where the digits are"},
        {"--position-coupling", "--pe rope --random-positions 500 --position-coupling", "--position-coupling can not be combined with --random-positions"},
        {"--position-coupling", "--task addition --pe rope --position-coupling",
         "--position-coupling lines up digits of equal significance by their place, which needs numbers written units first: add --reverse-digits"},
        {"--position-coupling", "--task addition --pe rope --reverse-digits --index-hints --position-coupling",
         "--position-coupling can not be combined with --index-hints"},
        {"--position-coupling", "--pe rope --bench --bench-seq 8 --position-coupling", "--position-coupling can not be combined with --bench-seq"},
        {"--pack", "--task addition --reverse-digits --pe nope --abacus --pack", "--pack can not be combined with --abacus: it reads the digits' places"},
        {"--pack", "--bench --bench-seq 8 --pack", "--pack can not be combined with --bench-seq: its random sequences are of one length"},
        {"--sort-pool", "--bench --bench-seq 8 --sort-pool 4", "--sort-pool can not be combined with --bench-seq"},
        // the data's flags, --load's test lengths and size among them: --bench-seq times random tokens, no split
        {"--test-max", "--bench --bench-seq 8 --test-max 30", "--test-max can not be combined with --bench-seq: it times random tokens"},
        {"--test-size", "--bench --bench-seq 8 --test-size 30", "--test-size can not be combined with --bench-seq: it times random tokens"},
        {"--data-seed", "--bench --bench-seq 8 --data-seed 3", "--data-seed can not be combined with --bench-seq: it times random tokens"},
        {"--pad-to-multiple", "--bench --bench-seq 8 --pad-to-multiple 8", "--pad-to-multiple can not be combined with --bench-seq"},
        {"", "--tsk copy", "unknown flag '--tsk' (valid: --task"},
        {"", "--steps=5", "unknown flag '--steps=5': a flag and its value are two words (--steps 5)"},
        {"", "--force=yes", "unknown flag '--force=yes': --force is a switch, given alone"},
        {"", "--task copy --task sum --show 1", "--task is given twice"},
    };
    return cases;
}

static void test_every_choice_flag_refuses_unknown_names(void) {
    check_cases(choice_cases());
#ifndef __CUDACC__
    // this test's build, like ./train's, says whether there is a GPU path
    std::string problem = problem_with(run_train("--device gpu"), "--device gpu: ");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
#endif
}

// flags that name files and directories: missing, unwritable, full, or of the wrong kind
static const std::vector<Case>& path_cases() {
    static const std::vector<Case> cases = {
        {"--out", "--out /proc/no/such/dir", "can not create run directory /proc/no: "},
        {"--out", "--out a_file", "can not use a_file as the run directory: it is a file, not a directory"},
        {"--out", "--out /dev/full", "can not use /dev/full as the run directory: it is a file, not a directory"},
        {"--resume", "--resume /no/such/run", "can not open checkpoint /no/such/run/state.bin: No such file or directory"},
        {"--resume", "--resume a_file", "can not open checkpoint a_file/state.bin: Not a directory"},
        {"--resume", "--resume .", "can not open checkpoint ./state.bin: No such file or directory"},
        {"--load", "--load /no/such/model.bin", "can not open checkpoint /no/such/model.bin: No such file"},
        {"--load", "--load /tmp", "/tmp is a directory, not a checkpoint file"},
        {"--load", "--load /dev/zero", "/dev/zero is not a regular file, so not a checkpoint file"},
        {"--load", "--load a_file", "a_file is not a checkpoint: shorter than its 1024-byte header"},
        {"--dump-state", "--dump-state /dev/full --layers 1 --d-model 16 --heads 2 --d-ff 16", "can not write /dev/full: No space left on device"},
        {"--dump-state", "--dump-state /no/such/dir/x.bin", "can not write /no/such/dir/x.bin: No such file or directory"},
        {"--dump-state", "--dump-state /tmp", "can not write /tmp: Is a directory"},
        {"--dump-attention", "--load micro/model.bin --dump-attention /dev/full", "can not write /dev/full: No space left on device"},
        {"--dump-attention", "--load micro/model.bin --dump-attention /no/such/dir/a.bin", "can not write /no/such/dir/a.bin: No such file"},
        {"--dump-attention", "--load micro/model.bin --dump-attention /tmp", "can not write /tmp: Is a directory"},
    };
    return cases;
}

static void test_every_path_flag_refuses_missing_unwritable_and_wrong_kinds_of_files(void) {
    std::ofstream(scratch_dir() + "/a_file") << "not a checkpoint\n";
    // a real checkpoint, for the flags that write what one holds (a second or so)
    Outcome micro = run_train("--task copy_cmc --steps 2 --eval-every 1 --layers 1 --d-model 16 --heads 2 --d-ff 8 --train-size 16 --valid-size 4"
                              " --test-size 4 --train-max 3 --test-max 4 --batch 2 --device cpu --out micro");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, micro.status, micro.err.c_str());
    check_cases(path_cases());
    // standard input that is not prompts: a line without end (/dev/zero) and a binary file
    for (const char* input : {"/dev/zero", "./train"}) {
        Outcome o = run_train("--task copy --answer", input[0] == '.' ? cwd() + "/train" : input);
        std::string problem = problem_with(o, "line ");
        TEST_ASSERT_MESSAGE(problem.empty(), (std::string(input) + ": " + problem).c_str());
    }
}

// every flag has a case above (or is a switch, or is unbounded for a stated reason)
static void test_every_flag_has_range_choice_or_path_cases(void) {
    std::set<std::string> covered;
    for (const auto* list : {&range_cases(), &choice_cases(), &path_cases()})
        for (const Case& c : *list) covered.insert(c.flag);
    for (const auto& u : UNBOUNDED) covered.insert(u[0]);
    RunConfig config;
    for (const Flag& f : flag_table(&config)) {
        if (f.type == FLAG_SWITCH) continue;
        TEST_ASSERT_MESSAGE(covered.count(f.name), (std::string(f.name) + " has no range, choice or path case in test_flags").c_str());
    }
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    (void)run;  // train.cu's entry point: these tests go through the binary instead
    if (!train_is_built("test_flags")) return 1;
    RUN_TEST(test_every_flag_has_range_choice_or_path_cases);
    RUN_TEST(test_every_flag_refuses_values_its_type_can_not_hold);
    RUN_TEST(test_every_bounded_flag_refuses_values_out_of_range);
    RUN_TEST(test_every_choice_flag_refuses_unknown_names);
    RUN_TEST(test_every_path_flag_refuses_missing_unwritable_and_wrong_kinds_of_files);
    printf("test_flags: the slowest case took %.2f s: ./train %s\n", slowest.seconds, slowest_args.c_str());
    return UNITY_END();
}
