// Tests of the ./train command line, run as a user would run it (the binary must be built):
// --show for every task, --show piped into --answer, --help, and one clear error line with a
// non-zero exit for every kind of bad input; whole runs then read back with --load and
// --resume (--keep-every's snapshots, --attention-window, --eval-positions drawn); a baseline
// x86-64 build's bits against the native one's; runs stopped by SIGINT, SIGTERM and SIGKILL at
// random moments and resumed; a run that diverges.
#include <chrono>
#include <csignal>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

#include "model.h"
#include "tasks.h"
#include "test/unity.h"

struct Result {
    int status;
    std::string out, err;
};

static std::string read_file(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// runs ./train (after `prefix`, e.g. `timeout 1 `) with the given arguments and standard input;
// captures both outputs
static Result train(const std::string& args, const std::string& input = "", const std::string& prefix = "") {
    static std::string dir;
    if (dir.empty()) dir = unity_temp_dir();
    std::ofstream(dir + "/in") << input;
    std::string command = prefix + "./train " + args + " < " + dir + "/in > " + dir + "/out 2> " + dir + "/err";
    int status = system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(dir + "/out"), read_file(dir + "/err")};
}

static std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream s(text);
    for (std::string line; std::getline(s, line);) out.push_back(line);
    return out;
}

// one line on stderr, "train: error: ...", containing `text`; nothing else
static std::string error_problem(const Result& r, const std::string& text) {
    if (r.status != 1) return "exit status " + std::to_string(r.status) + ", expected 1";
    std::vector<std::string> e = lines(r.err);
    if (e.size() != 1) return "expected one line on stderr, got " + std::to_string(e.size()) + ": " + r.err;
    if (e[0].rfind("train: error: ", 0) != 0 || e[0].find(text) == std::string::npos)
        return "expected 'train: error: ...' containing '" + text + "', got '" + e[0] + "'";
    return "";
}

// --show builds the whole split it shows from: small ones keep 32 tasks to seconds (what is
// shown does not depend on the split's size)
static const char* SMALL_SPLITS = " --train-size 400 --valid-size 100 --test-size 400";

static void test_show_prints_tab_separated_examples_for_every_task(void) {
    for (const Task& task : TASKS) {
        Result r = train(std::string("--task ") + task.name + " --show 3" + SMALL_SPLITS);
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.err.c_str());
        std::vector<std::string> out = lines(r.out);
        TEST_ASSERT_EQUAL_INT_MESSAGE(3, out.size(), task.name);
        for (const std::string& line : out) {
            TEST_ASSERT_MESSAGE(std::count(line.begin(), line.end(), '\t') == 1, line.c_str());
            TEST_ASSERT_MESSAGE(line.find("<eos>") == std::string::npos, line.c_str());
        }
    }
}

// --answer, fed --show's prompts, prints exactly --show's targets, for every task and split
static void test_answer_reproduces_the_targets_of_shown_prompts(void) {
    for (const Task& task : TASKS)
        for (const char* split : {"train", "test"}) {
            Result shown = train(std::string("--task ") + task.name + " --show 40 --split " + split + SMALL_SPLITS);
            TEST_ASSERT_EQUAL_INT_MESSAGE(0, shown.status, shown.err.c_str());
            std::string prompts, targets;
            for (const std::string& line : lines(shown.out)) {
                prompts += line.substr(0, line.find('\t')) + "\n";
                targets += line.substr(line.find('\t') + 1) + "\n";
            }
            Result answered = train(std::string("--task ") + task.name + " --answer", prompts);
            TEST_ASSERT_EQUAL_INT_MESSAGE(0, answered.status, answered.err.c_str());
            TEST_ASSERT_EQUAL_STRING_MESSAGE(targets, answered.out, task.name);
        }
}

static void test_help_lists_every_task_pe_preset_and_flag(void) {
    Result r = train("--help");
    TEST_ASSERT_EQUAL_INT(0, r.status);
    TEST_ASSERT_EQUAL_STRING(r.out.c_str(), train("-h").out.c_str());
    for (const Task& task : TASKS) TEST_ASSERT_MESSAGE(r.out.find(std::string("  ") + task.name + " ") != std::string::npos, task.name);
    TEST_ASSERT_MESSAGE(r.out.find("positional encodings (--pe): " + names_of(PE_NAMES) + "\n") != std::string::npos, r.out.c_str());
    for (const Preset& p : PRESETS) TEST_ASSERT_MESSAGE(r.out.find(std::string("  ") + p.name + " ") != std::string::npos, p.name);
    TEST_ASSERT_MESSAGE(r.out.find("2000 steps, lr 0.003, dropout 0, validation every 250\n") != std::string::npos, r.out.c_str());  // tiny's
    for (const char* flag : {"--task", "--show", "--split", "--answer", "--train-size", "--test-max", "--data-seed"})
        TEST_ASSERT_MESSAGE(r.out.find(flag) != std::string::npos, flag);
}

// bad prompts and combinations of flags (test_flags has every flag's bad values, one at a time)
static void test_bad_input_gets_one_error_line_and_exit_1(void) {
    struct Bad { const char* args; std::string input; const char* message; };
    const Bad cases[] = {
        {"--task lego --test-max 40 --show 1", "", "lego can not make examples longer than 26"},
        {"--task sum --answer", "Compute: 1 + 2 . [SEP]\nCompute: 1 + + 2 . [SEP]\n", "line 2: word 4: expected a digit, found '+'"},
        {"--task sum --answer", "\n", "line 1: empty prompt"},
        {"--resume /no/such/run --pe rope", "", "--pe can not be combined with --resume"},
        {"--task copy --show 2 --answer", "", "--show and --answer can not be combined"},
        {"--resume /tmp/a --load /tmp/b", "", "--resume and --load can not be combined"},
        {"--task copy --show 2 --seed 5", "", "--seed can not be combined with --show"},  // data comes from --data-seed
        {"--split test", "", "--split is read only with --show"},
        {"--bench-seq 64", "", "--bench-seq is read only with --bench"},
        {"--load /tmp/a/model.bin --force", "", "--force is read only with --out"},
        {"--load /tmp/a/model.bin --out /tmp/b --dump-attention /tmp/c", "", "--out can not be combined with --dump-attention"},
        {"--bench --steps 3", "", "--steps can not be combined with --bench"},  // --bench times a fixed 10 steps
        {"--bench --bench-seq 8 --task sum", "", "--task can not be combined with --bench-seq: it times random tokens"},
        {"--bench --bench-seq 8 --pe rope --random-positions 100", "", "--random-positions can not be combined with --bench-seq"},
        {"--dump-state /tmp/x.bin --pe rope --random-positions 500", "", "--random-positions can not be combined with --dump-state"},
        {"--load /tmp/a/model.bin --dump-attention /tmp/c --sample 2", "", "--sample can not be combined with --dump-attention"},
        {"--load /tmp/a/model.bin --answer --out /tmp/b", "", "--out can not be combined with --load and --answer"},
        {"--load /tmp/a/model.bin --answer --device gpu", "", "--device can not be combined with --load and --answer"},
        {"--load /tmp/a/model.bin --answer --test-max 9", "", "--test-max can not be combined with --load and --answer"},
        {"--load /tmp/a/model.bin --train-max 9", "", "--train-max can not be combined with --load: a saved run keeps its own settings"},
        {"--task copy --sample 0", "", "--sample expects at least 1 example, got 0"},
        {"--task copy --stats --sort-pool 1", "", "--stats --sort-pool 1: the pool must hold at least 2 batches to sort"},
        {"--task copy --stats --batch 0", "", "--batch 0 is out of range [1, 4096]"},
        {"--task copy --stats --pack", "", "--pack can not be combined with --stats"},  // --stats shows --pack's row anyway
        {"--load /tmp/a/model.bin --keep-every 5", "", "--keep-every can not be combined with --load: a saved run keeps its own settings"},
        {"--task copy --answer", std::string(70000, 'a'), "line 1 is longer than 65536 characters: not a prompt"},
        {"--task copy --answer", "Copy: a a [SEP]\tas as\n", "line 1 holds a tab: --answer reads prompts alone"},
        {"--task copy --answer", std::string("Copy: a\0 a [SEP]\n", 17), "line 1 holds control byte 0x00, which is in no prompt"},
        {"--task copy --answer", "Copy: \x1b[31ma [SEP]\n", "line 1 holds control byte 0x1b"},
        {"--task copy --check --out /etc/passwd", "", "can not use /etc/passwd as the run directory: it is a file"},
        {"--task copy --check --out /etc/passwd/run", "", "/etc/passwd is a file, not a directory"},
    };
    for (const Bad& b : cases) {
        std::string problem = error_problem(train(b.args, b.input), b.message);
        TEST_ASSERT_MESSAGE(problem.empty(), (std::string(b.args) + ": " + problem).c_str());
    }
}

// what ./train prints must reach its standard output: a full disk is an error, not exit 0; and
// standard input that can not be read (a directory, closed) is an error, not an empty one
static void test_output_that_can_not_be_written_is_an_error(void) {
    std::string err = unity_temp_dir() + "/err";
    auto run = [&](const std::string& command, const std::string& message) {
        int status = system((command + " 2> " + err).c_str());
        Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, "", read_file(err)};
        std::string problem = error_problem(r, message);
        TEST_ASSERT_MESSAGE(problem.empty(), (command + ": " + problem).c_str());
    };
    for (std::string args : {"--task copy --show 50", "--task copy --stats --train-size 400", "--help"})
        run("./train " + args + " > /dev/full", "can not write the output to standard output");
    run("./train --task copy --answer < /tmp", "can not read standard input: Is a directory");
    run("./train --task copy --answer <&-", "can not read standard input: Bad file descriptor");
}

// a whole (very short) run through the binary: files, table, samples; then --load and --resume
static void test_a_short_run_writes_its_directory_and_reloads(void) {
    std::string dir = unity_temp_dir() + "/run";
    std::string small = " --task copy_cmc --pe alibi --steps 6 --eval-every 3 --train-size 64 --valid-size 16 --test-size 16"
                        " --train-max 5 --test-max 7 --layers 1 --d-model 16 --heads 2 --d-ff 32 --batch 8";
    Result r = train(small + " --sample 1 --out " + dir);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.err.c_str());
    for (const char* file : {"config.json", "log.tsv", "model.bin", "state.bin", "results.json", "accuracy.svg"})
        TEST_ASSERT_MESSAGE(access((dir + "/" + file).c_str(), R_OK) == 0, file);
    TEST_ASSERT_EQUAL_INT(7, lines(read_file(dir + "/log.tsv")).size());  // header and 6 steps
    TEST_ASSERT_MESSAGE(r.out.find("length   valid (ID)   test (OOD)") != std::string::npos, r.out.c_str());
    TEST_ASSERT_MESSAGE(r.out.find("  prompt: Copy: ") != std::string::npos, "no greedy samples printed");
    std::string results = read_file(dir + "/results.json");
    TEST_ASSERT_MESSAGE(results.find("\"best_step\": ") != std::string::npos && results.find("\"test\": {\"accuracy\": ") != std::string::npos, results.c_str());

    // the same directory again: refused, the earlier run intact; replaced whole with --force
    std::string problem = error_problem(train(small + " --out " + dir), "holds an earlier run: --resume " + dir + " continues it");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
    TEST_ASSERT_EQUAL_STRING(results, read_file(dir + "/results.json"));
    std::string shorter = small;
    shorter.replace(shorter.find("--steps 6"), 9, "--steps 3");
    Result replaced = train(shorter + " --force --out " + dir);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, replaced.status, replaced.err.c_str());
    TEST_ASSERT_EQUAL_INT(4, lines(read_file(dir + "/log.tsv")).size());  // header and 3 steps
    TEST_ASSERT_MESSAGE(read_file(dir + "/config.json").find("\"steps\": 3,") != std::string::npos, "config.json of the old run");
    TEST_ASSERT_MESSAGE(read_file(dir + "/config.json").find("\"skip-nonfinite\": false,") != std::string::npos, "a switch in config.json");
    TEST_ASSERT_EQUAL_INT(0, train(small + " --force --out " + dir).status);  // the 6-step run again, for what follows
    TEST_ASSERT_EQUAL_STRING(results, read_file(dir + "/results.json"));       // and it repeats bit for bit
    // --force with flags the data refuses: the error, and the earlier run as it was
    problem = error_problem(train(small + " --random-positions 5 --force --out " + dir), "--random-positions 5 is below the longest sequence");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
    TEST_ASSERT_EQUAL_STRING(results, read_file(dir + "/results.json"));
    // --check: the same refusals (the earlier run, the data's), and where a run would start, the
    // data and model lines it would print, with no file written or removed
    problem = error_problem(train(small + " --check --out " + dir), "holds an earlier run: --resume " + dir + " continues it");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
    problem = error_problem(train(small + " --random-positions 5 --check --out " + dir + "-new"), "--random-positions 5 is below the longest sequence");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
    size_t model_at = r.out.find("model: ");
    std::string model_line = r.out.substr(model_at, r.out.find('\n', model_at) - model_at);
    for (const std::string& out : {dir + " --force", dir + "-new"}) {
        Result checked = train(small + " --check --out " + out);
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, checked.status, checked.err.c_str());
        TEST_ASSERT_MESSAGE(checked.out.find(model_line) != std::string::npos && checked.out.find("copy_cmc: 64 train, 16 valid, 16 test") != std::string::npos,
                            checked.out.c_str());
        TEST_ASSERT_MESSAGE(checked.out.find("check: the flags and the data are good; nothing was trained or written") != std::string::npos, checked.out.c_str());
    }
    TEST_ASSERT_EQUAL_STRING(results, read_file(dir + "/results.json"));
    TEST_ASSERT_MESSAGE(access((dir + "-new").c_str(), F_OK) != 0, "--check made the run directory");

    Result loaded = train("--load " + dir + "/model.bin --device cpu");  // wherever it was trained
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, loaded.status, loaded.err.c_str());
    std::string table = r.out.substr(r.out.find("length   valid"), r.out.find("wrote") - r.out.find("length   valid"));
    TEST_ASSERT_MESSAGE(loaded.out.find(table.substr(0, table.size() - 1)) != std::string::npos, "--load printed another table");

    // the best checkpoint is what a run reports; a state.bin holds the latest step, and says so
    std::string best_step = results.substr(results.find("\"best_step\": ") + 13);
    best_step = best_step.substr(0, best_step.find(','));
    TEST_ASSERT_MESSAGE(results.find("\"evaluated_step\": " + best_step + ",") != std::string::npos, results.c_str());
    Result latest = train("--load " + dir + "/state.bin --device cpu --out " + dir + "-latest");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, latest.status, latest.err.c_str());
    TEST_ASSERT_MESSAGE(latest.out.find("training state of step 6 (the latest, not the best)") != std::string::npos, latest.out.c_str());
    TEST_ASSERT_MESSAGE(read_file(dir + "-latest/results.json").find("\"evaluated_step\": 6,") != std::string::npos, "evaluated_step");

    Result resumed = train("--resume " + dir);  // already finished: nothing to train, same report
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, resumed.status, resumed.err.c_str());
    TEST_ASSERT_EQUAL_INT(7, lines(read_file(dir + "/log.tsv")).size());

    // parameters alone can not resume a run: AdamW would silently restart from zero
    TEST_ASSERT_EQUAL_INT(0, system(("cp " + dir + "/model.bin " + dir + "/state.bin").c_str()));
    problem = error_problem(train("--resume " + dir), "state.bin holds parameters only, no AdamW state");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
}

// --keep-every N: the parameters of every Nth step in step-N.bin, which --load evaluates as that
// step's; a new run (with --force) removes them with the rest, and a crash's temporaries go
static void test_keep_every_keeps_each_nth_step_for_load(void) {
    std::string root = unity_temp_dir(), dir = root + "/run";
    std::string small = " --task copy_cmc --pe rope --steps 6 --eval-every 3 --train-size 64 --valid-size 16 --test-size 16"
                        " --train-max 5 --test-max 7 --layers 1 --d-model 16 --heads 2 --d-ff 32 --batch 8 --out " + dir;
    Result r = train(small + " --keep-every 2");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.err.c_str());
    for (const char* step : {"2", "4", "6"}) TEST_ASSERT_EQUAL_INT_MESSAGE(0, access((dir + "/step-00000" + step + ".bin").c_str(), R_OK), step);
    TEST_ASSERT_MESSAGE(read_file(dir + "/config.json").find("\"keep-every\": 2,") != std::string::npos, "config.json");
    // step 4's parameters, after the first validation (step 3) chose the best so far
    Result four = train("--load " + dir + "/step-000004.bin --device cpu --out " + root + "/four");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, four.status, four.err.c_str());
    TEST_ASSERT_MESSAGE(four.out.find("snapshot of step 4 (--keep-every; the best valid accuracy until then was step 3's)") != std::string::npos,
                        four.out.c_str());
    std::string results = read_file(root + "/four/results.json");
    TEST_ASSERT_MESSAGE(results.find("\"evaluated_step\": 4,\n  \"evaluated\": \"snapshot\"") != std::string::npos, results.c_str());
    // the last snapshot holds the last step's parameters: state.bin's first tensor set, byte for byte
    std::string last = read_file(dir + "/step-000006.bin"), state = read_file(dir + "/state.bin");
    const size_t header = HEADER_FIELDS * sizeof(int32_t);
    TEST_ASSERT_EQUAL_INT(0, state.compare(header, last.size() - header, last, header, std::string::npos));
    TEST_ASSERT_EQUAL_INT(header + (state.size() - header) / 3, last.size());
    // a snapshot of a step that was the best so far (here model.bin's bytes, step 3's, under a
    // snapshot's name) is still evaluated as a snapshot: the run's best may come later
    TEST_ASSERT_EQUAL_INT(0, system(("cp " + dir + "/model.bin " + root + "/step-000003.bin").c_str()));
    Result three = train("--load " + root + "/step-000003.bin --device cpu --out " + root + "/three");
    TEST_ASSERT_MESSAGE(read_file(root + "/three/results.json").find("\"evaluated_step\": 3,\n  \"evaluated\": \"snapshot\"") != std::string::npos,
                        three.out.c_str());
    // a snapshot alone is an earlier run; --force removes it with a crash's temporary, and
    // leaves a name that is not a snapshot's
    std::ofstream(dir + "/step-000008.bin.tmp") << "torn";
    std::ofstream(dir + "/step-notes.bin") << "mine";
    for (const char* file : {"config.json", "log.tsv", "model.bin", "state.bin", "results.json", "accuracy.svg", "step-000002.bin", "step-000004.bin"})
        TEST_ASSERT_EQUAL_INT(0, remove((dir + "/" + file).c_str()));
    std::string problem = error_problem(train(small), "holds an earlier run");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
    Result replaced = train(small + " --force");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, replaced.status, replaced.err.c_str());
    for (const char* file : {"step-000006.bin", "step-000008.bin.tmp"}) TEST_ASSERT_MESSAGE(access((dir + "/" + file).c_str(), F_OK) != 0, file);
    TEST_ASSERT_EQUAL_STRING("mine", read_file(dir + "/step-notes.bin").c_str());
    // model.bin evaluates as the best, which results.json says
    Result best = train("--load " + dir + "/model.bin --device cpu --out " + root + "/best");
    TEST_ASSERT_MESSAGE(read_file(root + "/best/results.json").find("\"evaluated\": \"best\"") != std::string::npos, best.out.c_str());
}

// --load --out: an evaluation of a checkpoint (here with RoPE scaled) in a run directory of its
// own, with the run's config.json, so that dev/report ranks it beside the sweep's runs. (The
// run's --rope-frac 0.4 of an 8-dim head is 3.2 dims: the model line says the 2 rotated.)
static void test_an_evaluation_with_out_writes_a_run_directory_of_its_own(void) {
    std::string root = unity_temp_dir(), dir = root + "/run", eval = root + "/run-pi";
    Result r = train(" --task copy_cmc --pe rope --rope-frac 0.4 --steps 4 --eval-every 2 --train-size 64 --valid-size 16 --test-size 16"
                     " --train-max 5 --test-max 9 --layers 1 --d-model 16 --heads 2 --d-ff 32 --batch 8 --out " + dir);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.err.c_str());
    TEST_ASSERT_MESSAGE(r.out.find(", pe rope (rotating 2 of 8 dims a head), ") != std::string::npos, r.out.c_str());
    std::string results = read_file(dir + "/results.json");

    Result scaled = train("--load " + dir + "/model.bin --rope-scaling pi --out " + eval);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, scaled.status, scaled.err.c_str());
    TEST_ASSERT_EQUAL_STRING(read_file(dir + "/config.json").c_str(), read_file(eval + "/config.json").c_str());
    std::string scaled_results = read_file(eval + "/results.json");
    TEST_ASSERT_MESSAGE(scaled_results.find("\"rope_scaling\": \"pi\",") != std::string::npos, scaled_results.c_str());
    TEST_ASSERT_MESSAGE(scaled_results.find("\"best_step\": ") != std::string::npos, scaled_results.c_str());
    TEST_ASSERT_EQUAL_STRING(results.c_str(), read_file(dir + "/results.json").c_str());  // the trained run's stay

    std::string problem = error_problem(train("--load " + dir + "/model.bin --out " + dir), "is the directory of " + dir + "/model.bin");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
    // an evaluation's directory has no state.bin to resume: the error does not offer --resume
    problem = error_problem(train("--load " + dir + "/model.bin --out " + eval), "holds an earlier run or evaluation: --force replaces it");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
    Result replaced = train("--load " + dir + "/model.bin --out " + eval + " --force");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, replaced.status, replaced.err.c_str());
    TEST_ASSERT_MESSAGE(read_file(eval + "/results.json").find("\"rope_scaling\": \"none\",") != std::string::npos, "not replaced");
}

// results.json's line of `part` ("valid_tokens", ...), or ""
static std::string results_line(const std::string& results, const std::string& part) {
    size_t at = results.find("\"" + part + "\": ");
    return at == std::string::npos ? "" : results.substr(at, results.find('\n', at) - at);
}

// --load --attention-window L:W: an evaluation with layer L's queries (L-M: layers L to M's)
// seeing their W latest tokens (:prompt, the prompt's alone; :sink, and the first), which
// results.json (in one order) and the table's heading name. A window as long as the longest
// sequence computes what the run computed (the same counts); one of a single token, in a
// one-layer model, leaves the model its token alone, and so changes them. Bad windows: one line.
static void test_attention_window_evaluates_with_a_layer_windowed(void) {
    std::string root = unity_temp_dir(), dir = root + "/run";
    Result r = train(" --task copy_cmc --pe alibi --steps 40 --eval-every 40 --train-size 64 --valid-size 16 --test-size 16"
                     " --train-max 5 --test-max 9 --layers 1 --d-model 16 --heads 2 --d-ff 32 --batch 8 --device cpu --out " + dir);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.err.c_str());
    std::string results = read_file(dir + "/results.json"), model = dir + "/model.bin";
    Result whole = train("--load " + model + " --attention-window 0:999 --out " + root + "/whole");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, whole.status, whole.err.c_str());
    TEST_ASSERT_MESSAGE(whole.out.find("alibi (layer 0's queries seeing only their 999 latest tokens)") != std::string::npos, whole.out.c_str());
    std::string whole_results = read_file(root + "/whole/results.json");
    TEST_ASSERT_MESSAGE(whole_results.find("\"attention_window\": \"0:999\",") != std::string::npos, whole_results.c_str());
    TEST_ASSERT_MESSAGE(results.find("\"attention_window\": \"none\",") != std::string::npos, results.c_str());
    Result prompt = train("--load " + model + " --attention-window 0:1:sink:prompt --out " + root + "/prompt");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, prompt.status, prompt.err.c_str());
    TEST_ASSERT_MESSAGE(prompt.out.find("alibi (layer 0's queries of the prompt seeing only their 1 latest tokens and the first)") != std::string::npos,
                        prompt.out.c_str());
    TEST_ASSERT_MESSAGE(read_file(root + "/prompt/results.json").find("\"attention_window\": \"0:1:prompt:sink\",") != std::string::npos,
                        prompt.out.c_str());
    Result alone = train("--load " + model + " --attention-window 0:1 --out " + root + "/alone");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, alone.status, alone.err.c_str());
    std::string alone_results = read_file(root + "/alone/results.json");
    bool same_tokens = true;
    for (const char* part : {"valid", "test", "valid_tokens", "test_tokens"}) {
        TEST_ASSERT_EQUAL_STRING(results_line(results, part).c_str(), results_line(whole_results, part).c_str());
        same_tokens &= results_line(results, part) == results_line(alone_results, part);
    }
    TEST_ASSERT_MESSAGE(!same_tokens, "a window of one token changed nothing: the window is not applied");
    const struct {
        const char* window;
        const char* error;
    } bad[] = {{"1:4", "--attention-window 1:4: the model has layers 0 to 0"},
               {"0-1:4", "--attention-window 0-1:4: the model has layers 0 to 0"},
               {"1-0:4", "--attention-window 1-0:4: the first layer comes first"},
               {"0:4:near", "--attention-window 0:4:near moves the first token kept by :sink: add :sink"},
               {"0-:4", "--attention-window expects LAYER:TOKENS or FIRST-LAST:TOKENS, then :prompt, :sink, :near (say 0:20 or 0-3:20:sink), got '0-:4'"},
               {"0:0", "--attention-window 0:0: a query sees at least itself (W >= 1)"},
               {"0-4", "--attention-window expects LAYER:TOKENS or FIRST-LAST:TOKENS, then :prompt, :sink, :near (say 0:20 or 0-3:20:sink), got '0-4'"},
               {"0:", "--attention-window expects LAYER:TOKENS or FIRST-LAST:TOKENS, then :prompt, :sink, :near (say 0:20 or 0-3:20:sink), got '0:'"},
               {"0:4:", "--attention-window expects LAYER:TOKENS or FIRST-LAST:TOKENS, then :prompt, :sink, :near (say 0:20 or 0-3:20:sink), got '0:4:'"},
               {"0:4:sink:sink", "--attention-window expects LAYER:TOKENS or FIRST-LAST:TOKENS, then :prompt, :sink, :near (say 0:20 or 0-3:20:sink), got '0:4:sink:sink'"},
               {"0:4:answer", "--attention-window expects LAYER:TOKENS or FIRST-LAST:TOKENS, then :prompt, :sink, :near (say 0:20 or 0-3:20:sink), got '0:4:answer'"},
               {"0:12345678", "--attention-window expects LAYER:TOKENS or FIRST-LAST:TOKENS, then :prompt, :sink, :near (say 0:20 or 0-3:20:sink), got '0:12345678'"}};
    for (const auto& b : bad) {
        std::string problem = error_problem(train("--load " + model + " --attention-window " + b.window), b.error);
        TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
    }
}

// --eval-positions drawn: a --random-positions model evaluated at positions drawn as training
// draws them, a draw per (seed, split, example), so two evaluations agree to the byte; the
// model reads them, so the counts differ from those at 0..n-1 (the run's own results). Given in
// training, validation draws too: the run's results say so.
static void test_eval_positions_drawn_evaluates_each_example_at_drawn_positions(void) {
    std::string root = unity_temp_dir(), dir = root + "/run";
    std::string small = " --task copy_cmc --pe ape --random-positions 64 --steps 400 --eval-every 200 --train-size 256 --valid-size 32"
                        " --test-size 32 --train-max 5 --test-max 9 --layers 1 --d-model 32 --heads 2 --d-ff 64 --batch 8 --device cpu";
    Result r = train(small + " --out " + dir);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.err.c_str());
    std::string counted = read_file(dir + "/results.json");
    TEST_ASSERT_MESSAGE(counted.find("\"eval_positions\": \"counted\",") != std::string::npos, counted.c_str());
    for (const char* out : {"/a", "/b"}) {
        Result drawn = train("--load " + dir + "/model.bin --eval-positions drawn --out " + root + out);
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, drawn.status, drawn.err.c_str());
        TEST_ASSERT_MESSAGE(drawn.out.find("copy_cmc with ape (positions drawn from 0-63 in evaluation too)") != std::string::npos, drawn.out.c_str());
    }
    std::string a = read_file(root + "/a/results.json");
    TEST_ASSERT_EQUAL_STRING(a.c_str(), read_file(root + "/b/results.json").c_str());
    TEST_ASSERT_MESSAGE(a.find("\"eval_positions\": \"drawn\",") != std::string::npos, a.c_str());
    for (const char* part : {"valid_tokens", "test_tokens"})
        TEST_ASSERT_MESSAGE(results_line(a, part) != results_line(counted, part), (results_line(a, part) + "\n" + results_line(counted, part)).c_str());
    Result trained = train(small + " --eval-positions drawn --out " + root + "/trained");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, trained.status, trained.err.c_str());
    TEST_ASSERT_MESSAGE(read_file(root + "/trained/results.json").find("\"eval_positions\": \"drawn\",") != std::string::npos, trained.out.c_str());
    // a resumed run takes its --eval-positions from state.bin, and --sample is refused with it, as in a new run
    std::string problem =
        error_problem(train("--resume " + root + "/trained --sample 1"), "--sample can not be combined with --eval-positions drawn");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
}

// The by-length entry of `length` in results.json's `part` ("test", "test_tokens", ...), or "".
static std::string length_entry(const std::string& results, const std::string& part, int length) {
    size_t from = results.find("\"" + part + "\": {");
    size_t at = results.find("{\"length\": " + std::to_string(length) + ",", from);
    if (from == std::string::npos || at == std::string::npos || at > results.find('\n', from)) return "";
    return results.substr(at, results.find('}', at) + 1 - at);
}

// --load --test-max --test-size: a trained model tested on longer lengths, in a directory of its
// own. The examples of a length do not depend on the other lengths, so with the same count per
// length (8) the two lengths both tests share give the very tallies the run's own test gave,
// token by token; valid is the run's. A model whose parameters grow with the lengths (learned
// APE's row per position) is tested on shorter lengths with the rows it has, and refused longer
// ones; one trained with index hints, which follow the test lengths, is refused other lengths.
static void test_load_tests_a_model_on_longer_lengths(void) {
    std::string root = unity_temp_dir(), dir = root + "/run", longer = root + "/run-11";
    std::string small = " --steps 40 --eval-every 20 --train-size 64 --valid-size 16 --test-size 16 --train-max 5 --test-max 7"
                        " --layers 1 --d-model 16 --heads 2 --d-ff 32 --batch 8 --device cpu";
    Result r = train("--task copy_cmc --pe rope" + small + " --out " + dir);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.err.c_str());
    Result tested = train("--load " + dir + "/model.bin --test-max 11 --test-size 48 --out " + longer);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, tested.status, tested.err.c_str());
    std::string results = read_file(dir + "/results.json"), longer_results = read_file(longer + "/results.json");
    for (const char* part : {"test", "test_tokens"}) {
        for (int length : {6, 7}) {
            std::string entry = length_entry(results, part, length);
            TEST_ASSERT_MESSAGE(!entry.empty(), results.c_str());
            TEST_ASSERT_EQUAL_STRING(entry, length_entry(longer_results, part, length));
        }
        TEST_ASSERT_EQUAL_STRING("", length_entry(results, part, 8));
    }
    for (int length = 8; length <= 11; length++)
        TEST_ASSERT_MESSAGE(length_entry(longer_results, "test", length).find("\"total\": 8,") != std::string::npos, longer_results.c_str());
    TEST_ASSERT_EQUAL_STRING("", length_entry(longer_results, "test", 12));
    // (tallies of zero would agree whatever the examples: the model gets some tokens right)
    TEST_ASSERT_MESSAGE(length_entry(results, "test_tokens", 7).find("\"correct\": 0,") == std::string::npos, results.c_str());
    size_t valid = results.find("\"valid\": "), valid_end = results.find('\n', valid);
    TEST_ASSERT_EQUAL_STRING(results.substr(valid, valid_end - valid), longer_results.substr(longer_results.find("\"valid\": "), valid_end - valid));
    TEST_ASSERT_MESSAGE(read_file(longer + "/config.json").find("\"test-max\": 11,") != std::string::npos, read_file(longer + "/config.json").c_str());
    TEST_ASSERT_EQUAL_STRING(results, read_file(dir + "/results.json"));  // the trained run's stay

    TEST_ASSERT_EQUAL_INT(0, train("--task copy_cmc --pe ape_learned" + small + " --out " + root + "/ape").status);
    std::string problem = error_problem(train("--load " + root + "/ape/model.bin --test-max 11"), "can be tested only on the lengths it was made for");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
    Result same = train("--load " + root + "/ape/model.bin --test-max 7 --test-size 32");  // its own lengths, more examples
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, same.status, same.err.c_str());
    // dropout's bound on a batch (64 x 32 heads x T^2 under 2^32) is training's: a model trained
    // with dropout on short rows is tested on 2,003-token examples, which evaluation draws no mask for
    TEST_ASSERT_EQUAL_INT(0, train("--task copy --pe nope --dropout 0.1 --heads 32 --d-model 64 --layers 1 --d-ff 32 --steps 2 --eval-every 2"
                                   " --train-size 64 --valid-size 8 --test-size 8 --batch 64 --attention fused --device cpu --out " + root + "/wide")
                                 .status);
    Result wide = train("--load " + root + "/wide/model.bin --test-max 1000 --test-size 2 --attention fused --device cpu");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, wide.status, wide.err.c_str());
    Result shorter = train("--load " + root + "/ape/model.bin --test-max 6");  // shorter examples: read with the rows it has
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, shorter.status, shorter.err.c_str());
    TEST_ASSERT_MESSAGE(shorter.out.find("test 6-6") != std::string::npos, shorter.out.c_str());
    TEST_ASSERT_EQUAL_INT(0, train("--task addition --reverse-digits --index-hints --train-max 3 --test-max 5 --steps 2 --eval-every 2 --train-size 64"
                                   " --valid-size 16 --test-size 16 --layers 1 --d-model 16 --heads 2 --d-ff 32 --batch 8 --device cpu --out " + root + "/hints").status);
    problem = error_problem(train("--load " + root + "/hints/model.bin --test-max 7"), "the hints follow the test lengths");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
}

// the model's outputs that a run's --sample prints (the "model:" lines), valid's then test's
static std::vector<std::string> sampled_outputs(const Result& r) {
    std::vector<std::string> outputs;
    for (const std::string& line : lines(r.out))
        if (line.rfind("  model:  ", 0) == 0) outputs.push_back(line.substr(10));
    return outputs;
}

// --load M --answer prints the model's greedy output to each prompt on stdin, and nothing else
// on stdout: for the prompts of valid and test, exactly what --sample decodes for the same
// examples, with RoPE unscaled and scaled. The run has <bos>, which prompt lines do not hold,
// and is trained 40 steps: far enough that its outputs differ from prompt to prompt.
static void test_load_answer_decodes_prompts_as_sample_does(void) {
    std::string dir = unity_temp_dir() + "/run", model = dir + "/model.bin";
    std::string data = " --task sum --bos --train-size 64 --valid-size 16 --test-size 16 --train-max 4 --test-max 7";
    Result trained = train(data + " --pe rope --steps 40 --eval-every 40 --layers 1 --d-model 16 --heads 2 --d-ff 32 --batch 8 --sample 16 --out " + dir);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, trained.status, trained.err.c_str());
    std::string prompts;
    for (const char* split : {"valid", "test"}) {
        Result shown = train(data + " --show 16 --split " + split);
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, shown.status, shown.err.c_str());
        for (const std::string& line : lines(shown.out)) prompts += line.substr(0, line.find('\t')) + "\n";
    }
    Result scaled = train("--load " + model + " --rope-scaling yarn --sample 16");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, scaled.status, scaled.err.c_str());
    const struct {
        const Result& sampled;
        const char* scaling;
    } decodings[] = {{trained, ""}, {scaled, " --rope-scaling yarn"}};
    for (const auto& d : decodings) {
        const char* scaling = d.scaling;
        Result answered = train("--load " + model + scaling + " --answer", prompts);
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, answered.status, answered.err.c_str());
        std::vector<std::string> expected = sampled_outputs(d.sampled), said = lines(answered.out);
        TEST_ASSERT_EQUAL_INT(32, expected.size());
        TEST_ASSERT_EQUAL_INT(32, said.size());
        for (size_t i = 0; i < said.size(); i++) TEST_ASSERT_EQUAL_STRING_MESSAGE(expected[i].c_str(), said[i].c_str(), scaling);
        TEST_ASSERT_MESSAGE(std::set<std::string>(said.begin(), said.end()).size() > 8, "outputs too alike to tell prompts apart");
    }
    std::string eight_numbers = "Compute: 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 . [SEP]\n";  // test's longest has 7
    std::string problem = error_problem(train("--load " + model + " --answer", eight_numbers), "line 1: the prompt and its answer take 25 tokens; this model was made for at most 23");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
}

// `make CXXFLAGS=...` replaces only the optimisation flags: the language standard and OpenMP,
// without which nothing builds, stay
static void test_make_keeps_the_required_flags_when_cxxflags_are_given(void) {
    std::string printed = unity_temp_dir() + "/make.txt";
    int status = system(("make -s -B -n --no-print-directory CXXFLAGS=-O0 train test/test_pe > " + printed + " 2>&1").c_str());
    std::string commands = read_file(printed);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, status, commands.c_str());
    TEST_ASSERT_MESSAGE(commands.find("-O0") != std::string::npos, commands.c_str());
    for (const char* required : {"-std=c++17", "-fopenmp"})
        for (const std::string& line : lines(commands))
            TEST_ASSERT_MESSAGE(line.find(required) != std::string::npos, (required + std::string(" missing: ") + line).c_str());
}

// ./train is built for this CPU (-march=native), yet a run's bits must not depend on the CPU: the
// sums whose order a vectoriser may choose (model.h's dot) are written lane by lane. So the CPU
// program built for the x86-64 baseline (SSE2's 4 floats a vector, where this build may have
// AVX's 8 or AVX-512's 16) trains to the same bits, with heads of 16 channels (two rounds of
// dot's eight lanes), in fp32 and bf16, each attention. In a copy of the sources, so ./train stays.
static void test_a_cpu_run_has_the_same_bits_built_for_the_x86_64_baseline(void) {
    if (system("[ \"$(uname -m)\" = x86_64 ]") != 0) TEST_IGNORE_MESSAGE("not an x86-64 CPU");
    if (system("g++ -march=native -dM -E -x c++ /dev/null 2> /dev/null | grep -q __AVX__") != 0)
        TEST_IGNORE_MESSAGE("this CPU has no vector unit wider than the x86-64 baseline's: both builds would be the same program");
    std::string dir = unity_temp_dir();
    std::string build = "cp Makefile *.h train.cu " + dir + " && make -s -C " + dir + " NVCC= CXXFLAGS='-O3 -march=x86-64' train > " + dir + "/make.txt 2>&1";
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, system(build.c_str()), read_file(dir + "/make.txt").c_str());
    const std::string run = " --task copy_cmc --steps 30 --eval-every 30 --train-size 256 --valid-size 32 --test-size 32 --train-max 6 --test-max 8"
                            " --layers 1 --d-model 32 --heads 2 --d-ff 64 --batch 16 --dropout 0 --threads 1 --seed 5"
                            " --device cpu";  // where there is a GPU, ./train would run there (the baseline build has no GPU path)
    for (const char* flags : {"--pe rope --precision fp32 --attention simple", "--pe t5 --precision bf16 --attention fused",
                              "--pe alibi --precision bf16 --attention simple"}) {
        std::string native = dir + "/native", baseline = dir + "/baseline", what = flags;
        Result a = train(run + " " + flags + " --force --out " + native);
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, a.status, a.err.c_str());
        std::string command = dir + "/train" + run + " " + flags + " --force --out " + baseline + " > " + dir + "/baseline.txt 2>&1";
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, system(command.c_str()), read_file(dir + "/baseline.txt").c_str());
        for (const char* file : {"/model.bin", "/results.json"}) {
            TEST_ASSERT_MESSAGE(!read_file(native + file).empty(), (what + ": no " + file).c_str());
            TEST_ASSERT_MESSAGE(read_file(native + file) == read_file(baseline + file), (what + ": " + file + " differs between the builds").c_str());
        }
    }
}

// ----------------------------------------------------------------------------
// runs that are stopped: signals, SIGKILL, divergence

// about 1.3 s on one EPYC core, validating (and saving state.bin) every 40 of 1,200 steps
static const std::string STOPPABLE = " --task copy_cmc --pe t5 --steps 1200 --eval-every 40 --train-size 64 --valid-size 16 --test-size 16"
                                     " --train-max 5 --test-max 7 --layers 1 --d-model 16 --heads 2 --d-ff 32 --batch 8 --dropout 0.1 --threads 1";

static std::string temp_run_dir(const char* name) {
    return unity_temp_dir() + "/" + name;
}

// the straight run every stopped one must end up equal to, and how long it took
static const std::string& straight_run(double* seconds = nullptr) {
    static std::string dir;
    static double took = 0;
    if (dir.empty()) {
        dir = temp_run_dir("straight");
        auto start = std::chrono::steady_clock::now();
        Result r = train(STOPPABLE + " --out " + dir);
        took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (r.status != 0) fprintf(stderr, "the straight run failed: %s\n", r.err.c_str());
    }
    if (seconds) *seconds = took;
    return dir;
}

// what must be equal, bit for bit, between a run that was stopped and resumed and one that was not
static void assert_same_run(const std::string& expected, const std::string& got) {
    for (const char* file : {"model.bin", "state.bin", "results.json"}) {
        std::string a = read_file(expected + "/" + file), b = read_file(got + "/" + file);
        TEST_ASSERT_MESSAGE(!a.empty() && a == b, (std::string(file) + " differs from the uninterrupted run's").c_str());
    }
    std::vector<std::string> a = lines(read_file(expected + "/log.tsv")), b = lines(read_file(got + "/log.tsv"));
    TEST_ASSERT_EQUAL_INT(1201, b.size());  // the header and each step once
    for (size_t i = 0; i < a.size() && i < b.size(); i++) {
        std::string step_and_loss_a = a[i].substr(0, a[i].find('\t', a[i].find('\t') + 1));
        std::string step_and_loss_b = b[i].substr(0, b[i].find('\t', b[i].find('\t') + 1));
        TEST_ASSERT_EQUAL_STRING_MESSAGE(step_and_loss_a, step_and_loss_b, "log.tsv");
    }
    for (const char* file : {"model.bin.tmp", "state.bin.tmp", "log.tsv.tmp"})
        TEST_ASSERT_MESSAGE(access((got + "/" + file).c_str(), F_OK) != 0, file);
}

// Ctrl-C and kill: the step finishes, state.bin is saved at that step, the exit status is
// 128 + the signal; --resume then ends exactly where the uninterrupted run did
static void test_sigint_and_sigterm_save_the_state_and_resume_exactly(void) {
    for (int sig : {SIGINT, SIGTERM}) {
        std::string dir = temp_run_dir("signalled");
        std::string name = sig == SIGINT ? "INT" : "TERM";
        // the signal comes once the run has logged two steps, however slow the machine: a signal
        // during start-up, before the handler is in place, would test nothing
        std::string log = dir + "/log.tsv", out = dir + ".out", err = dir + ".err";
        std::string command = "./train --out " + dir + STOPPABLE + " > " + out + " 2> " + err + " & pid=$!; " +
                              "while kill -0 $pid 2> /dev/null && [ $(cat " + log + " 2> /dev/null | wc -l) -lt 3 ]; do sleep 0.01; done; " +
                              "kill -" + name + " $pid; wait $pid";
        int status = system(command.c_str());
        Result r = {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
        TEST_ASSERT_EQUAL_INT_MESSAGE(128 + sig, r.status, r.err.c_str());
        size_t at = r.err.find("stopped by signal " + std::to_string(sig) + " after step ");
        TEST_ASSERT_MESSAGE(at != std::string::npos, r.err.c_str());
        int step = atoi(r.err.c_str() + r.err.find("after step ") + 11);
        TEST_ASSERT_MESSAGE(r.err.find("state.bin saved, --resume " + dir + " continues") != std::string::npos, r.err.c_str());
        TEST_ASSERT_GREATER_THAN(0, step);
        TEST_ASSERT_LESS_THAN(1200, step);
        std::string state = read_file(dir + "/state.bin");
        TEST_ASSERT_EQUAL_INT(step, ((const int32_t*)state.data())[32]);  // header field 32: steps done
        TEST_ASSERT_EQUAL_INT(step + 1, lines(read_file(dir + "/log.tsv")).size());
        Result resumed = train("--resume " + dir);
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, resumed.status, resumed.err.c_str());
        assert_same_run(straight_run(), dir);
    }
}

// A run's output to a file (a sweep's log) says what the run is as it starts to train, not with
// its first progress line (15 s on, here: no validation before it): the lines are read once the
// run line is there, and no progress line may be among them
static void test_a_runs_output_to_a_file_says_what_it_is_before_its_first_step_line(void) {
    std::string dir = temp_run_dir("told"), out = dir + ".out";
    std::string command = "./train --out " + dir + " --task copy --steps 100000 --eval-every 100000 --train-size 500 --valid-size 40 --test-size 40"
                          " --threads 1 --device cpu > " + out + " 2>&1 & pid=$!; " +
                          "for i in $(seq 600); do grep -qs '^run: ' " + out + " && break; sleep 0.05; done; " +
                          "cp " + out + " " + out + ".early; kill -TERM $pid; wait $pid";
    int status = system(command.c_str());
    TEST_ASSERT_EQUAL_INT(128 + SIGTERM, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    std::string early = read_file(out + ".early");
    for (const std::string& line : std::vector<std::string>{"\ndevice: CPU, 1 threads", "\nmodel: tiny", "\nrun: " + dir + ", 100000 steps"})
        TEST_ASSERT_MESSAGE(early.find(line) != std::string::npos, (line + " is not in: " + early).c_str());
    TEST_ASSERT_MESSAGE(early.find("step ") == std::string::npos, early.c_str());
}

// the step the run in `dir` last saved its state after (0: none yet)
static int saved_step(const std::string& dir) {
    std::string state = read_file(dir + "/state.bin");
    return state.size() >= 1024 ? ((const int32_t*)state.data())[32] : 0;  // header field 32: steps done
}

// SIGKILL at random moments (during steps, validations and checkpoint writes alike), each
// followed by --resume (or a fresh start if no state was saved yet), until the run finishes:
// it ends with exactly the parameters, AdamW state, log and results of the run never killed.
// Each kill comes 3-15% of the straight run's time after its start (the run saves its state
// every 3.3%); an attempt killed before it saved anything new (start-up took longer than that)
// moves the window 2% later, so the run always progresses, in many short pieces.
static void test_a_run_killed_at_random_moments_ends_as_if_never_killed(void) {
    double whole = 0;
    straight_run(&whole);
    std::string dir = temp_run_dir("killed");
    Rng rng{20261123};
    int kills = 0, kills_after_progress = 0;
    double shortest = 0.03 * whole;
    for (int attempt = 0; attempt < 100; attempt++) {
        int before = saved_step(dir);
        std::string args = before > 0 ? "--resume " + dir : "--force --out " + dir + STOPPABLE;
        char delay[32];
        snprintf(delay, sizeof(delay), "%.3f ", shortest + 0.12 * whole * rng.uniform());
        Result r = train(args, "", std::string("timeout -s KILL ") + delay);
        if (r.status == 0) break;  // finished before the kill
        TEST_ASSERT_EQUAL_INT_MESSAGE(137, r.status, r.err.c_str());  // timeout's status for a command it killed with SIGKILL
        kills++;
        if (saved_step(dir) > before) kills_after_progress++;
        else shortest += 0.02 * whole;
    }
    // and what a kill in the middle of a checkpoint write leaves, whether or not one hit it:
    // torn temporaries beside intact checkpoints
    std::ofstream(dir + "/state.bin.tmp") << std::string(3000, 'x');
    std::ofstream(dir + "/model.bin.tmp") << std::string(500, 'y');
    Result finished = train(saved_step(dir) > 0 ? "--resume " + dir : "--force --out " + dir + STOPPABLE);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, finished.status, finished.err.c_str());
    TEST_ASSERT_GREATER_THAN(1, kills_after_progress);  // at least two resumes from a state a kill left
    assert_same_run(straight_run(), dir);
    TEST_MESSAGE(std::to_string(kills) + " kills, " + std::to_string(kills_after_progress) + " of them after a new state was saved");
}

// a run that diverges stops at the first non-finite step, names it, and writes nonfinite.txt
static void test_a_diverging_run_stops_at_its_first_nonfinite_step(void) {
    std::string dir = temp_run_dir("diverged");
    Result r = train("--lr 1000 --out " + dir + STOPPABLE);
    std::string problem = error_problem(r, "gradient norm nan: not finite (first: gradient of wte");
    TEST_ASSERT_MESSAGE(problem.empty(), problem.c_str());
    TEST_ASSERT_MESSAGE(r.err.find("the run stopped, no state was saved yet") != std::string::npos, r.err.c_str());
    TEST_ASSERT_MESSAGE(access((dir + "/nonfinite.txt").c_str(), R_OK) == 0, "nonfinite.txt");
    TEST_ASSERT_MESSAGE(access((dir + "/results.json").c_str(), F_OK) != 0, "results.json of a diverged run");
}

// prompts from a file written on Windows, each line ending in "\r\n", are the same prompts: the
// carriage return is the line's end, not a control byte in the prompt
static void test_answer_takes_prompts_with_windows_line_ends(void) {
    Result r = train("--task addition --answer", "Compute 1 + 2 ?\r\nCompute 4 + 5 ?\r\n");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.err.c_str());
    TEST_ASSERT_EQUAL_STRING("The answer is 3 .\nThe answer is 9 .\n", r.out);
}

static void test_answer_prints_the_lines_before_a_bad_one(void) {
    Result r = train("--task addition --answer", "Compute 1 + 2 ?\nCompute 1 +\n");
    TEST_ASSERT_EQUAL_INT(1, r.status);
    TEST_ASSERT_EQUAL_STRING("The answer is 3 .\n", r.out);
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    if (!train_is_built("test_cli")) return 1;
    RUN_TEST(test_show_prints_tab_separated_examples_for_every_task);
    RUN_TEST(test_answer_reproduces_the_targets_of_shown_prompts);
    RUN_TEST(test_help_lists_every_task_pe_preset_and_flag);
    RUN_TEST(test_bad_input_gets_one_error_line_and_exit_1);
    RUN_TEST(test_answer_prints_the_lines_before_a_bad_one);
    RUN_TEST(test_answer_takes_prompts_with_windows_line_ends);
    RUN_TEST(test_output_that_can_not_be_written_is_an_error);
    RUN_TEST(test_make_keeps_the_required_flags_when_cxxflags_are_given);
    RUN_TEST(test_a_cpu_run_has_the_same_bits_built_for_the_x86_64_baseline);
    RUN_TEST(test_a_short_run_writes_its_directory_and_reloads);
    RUN_TEST(test_keep_every_keeps_each_nth_step_for_load);
    RUN_TEST(test_an_evaluation_with_out_writes_a_run_directory_of_its_own);
    RUN_TEST(test_attention_window_evaluates_with_a_layer_windowed);
    RUN_TEST(test_eval_positions_drawn_evaluates_each_example_at_drawn_positions);
    RUN_TEST(test_load_tests_a_model_on_longer_lengths);
    RUN_TEST(test_load_answer_decodes_prompts_as_sample_does);
    RUN_TEST(test_sigint_and_sigterm_save_the_state_and_resume_exactly);
    RUN_TEST(test_a_runs_output_to_a_file_says_what_it_is_before_its_first_step_line);
    RUN_TEST(test_a_run_killed_at_random_moments_ends_as_if_never_killed);
    RUN_TEST(test_a_diverging_run_stops_at_its_first_nonfinite_step);
    return UNITY_END();
}
