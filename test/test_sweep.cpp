// Tests of dev/sweep.sh as a user runs it (./train and dev/report must be built): a short grid
// finishes, is reported and merged, is skipped when run again and resumed when interrupted; a
// run that can not start stops the sweep before any run; a failed run is named and does not
// stop the others; the cores are never oversubscribed; the Slurm script asks for what the runs
// need; and, where Slurm is installed or installable, the whole sweep runs as a job array on a
// private one-node cluster (dev/slurm_test.sh). And the scripts built on it: dev/reproduce.sh's
// parts, dev/sweep_throughput.sh and dev/grid_hours.sh. The analysis scripts that read a sweep's
// runs are test_tools' (a program of its own, so that the two run side by side). And what runs
// the test programs: unity.h's exit status and .ci/run's totals.
#include <cstring>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"  // the flag table alone is read here, not the parser
#include "flags.h"
#pragma GCC diagnostic pop
#include "test/shell.h"

static void test_a_grid_runs_reports_and_is_skipped_when_run_again(void) {
    std::string root = unity_temp_dir() + "/grid";
    Result r = shell("dev/sweep.sh " + root + " --tasks copy,addition --pes nope,t5 --seeds 7 --jobs 2 --threads 1 --device cpu" + SHORT_RUNS);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    for (const char* run : {"copy-nope-s7", "copy-t5-s7", "addition-nope-s7", "addition-t5-s7"}) {
        TEST_ASSERT_MESSAGE(exists(root + "/" + run + "/results.json"), run);
        TEST_ASSERT_MESSAGE(contains(read_file(root + "/logs/" + run + ".log"), "device: CPU, 1 threads"), run);
    }
    TEST_ASSERT_MESSAGE(contains(r.out, "[4/4]"), r.out.c_str());           // one progress line per run
    // the last run's line: nothing left of the sweep, so no time left (the ETA counts the runs not done)
    std::string last = r.out.substr(r.out.find("[4/4]"));
    last = last.substr(0, last.find('\n'));
    TEST_ASSERT_MESSAGE(contains(last + "\n", " elapsed, 0:00:00 left\n"), last.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "4 of 4 runs finished"), r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "MRR over 2 columns"), r.out.c_str());  // the report ran
    TEST_ASSERT_MESSAGE(exists(root + "/report.md") && exists(root + "/copy.svg"), "report.md and copy.svg");

    Result again = shell("dev/sweep.sh " + root + " --tasks copy,addition --pes nope,t5 --seeds 7 --jobs 2 --threads 1 --device cpu" + SHORT_RUNS);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, again.status, again.out.c_str());
    size_t skipped = 0;
    for (size_t at = 0; (at = again.out.find("already finished", at)) != std::string::npos; at++) skipped++;
    TEST_ASSERT_EQUAL_INT_MESSAGE(4, skipped, again.out.c_str());

    // a report that fails (here on a run directory beside the grid's whose config.json is cut
    // short) is named and fails the sweep, as a failed run does
    Result broken = shell("mkdir -p " + root + "/broken && echo '{' > " + root + "/broken/config.json && dev/sweep.sh " + root +
                          " --tasks copy,addition --pes nope,t5 --seeds 7 --jobs 2 --threads 1 --device cpu" + SHORT_RUNS);
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, broken.status, broken.out.c_str());
    TEST_ASSERT_MESSAGE(contains(broken.out, "failed: the report (logs in "), broken.out.c_str());
}

// A run killed after its first checkpoint continues from it (--resume); one killed before any
// checkpoint starts again. Either way the sweep ends with every run finished.
static void test_an_interrupted_grid_resumes_and_restarts_its_runs(void) {
    std::string root = unity_temp_dir() + "/resume";
    std::string flags = " --tasks copy --pes nope,alibi --seeds 7 --threads 1 --device cpu --no-report" + SHORT_RUNS;
    TEST_ASSERT_EQUAL_INT(0, shell("dev/sweep.sh " + root + flags).status);
    // make copy-nope look interrupted after its last checkpoint (state.bin kept, results gone)
    // and copy-alibi look killed before its first one
    TEST_ASSERT_EQUAL_INT(0, shell("rm " + root + "/copy-nope-s7/results.json " + root + "/copy-alibi-s7/*.bin " + root +
                                   "/copy-alibi-s7/results.json")
                                 .status);
    Result r = shell("dev/sweep.sh " + root + flags);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(read_file(root + "/logs/copy-nope-s7.log"), "resumed: ./train --resume"), "copy-nope was not resumed");
    std::string restarted = read_file(root + "/logs/copy-alibi-s7.log");  // its own attempt's alone: a fresh log
    TEST_ASSERT_MESSAGE(!contains(restarted, "resumed") && restarted.rfind("== ", 0) == 0 && !contains(restarted, "\n== "), restarted.c_str());
    TEST_ASSERT_TRUE(exists(root + "/copy-nope-s7/results.json") && exists(root + "/copy-alibi-s7/results.json"));
}

// A resumed run is given again the flags of its line that no checkpoint keeps but --resume
// reads (here a sample), and keeps those its checkpoint does (here RoPE's scaling), so it
// evaluates as it would have uninterrupted; and
// sweep.sh's list of such flags is every one flags.h reads with --resume but keeps in no
// checkpoint, bar those the sweep sets itself.
static void test_a_resumed_run_keeps_its_evaluation_flags(void) {
    std::string root = unity_temp_dir() + "/resume-flags";
    std::string flags = " --tasks copy --pes rope --seeds 7 --threads 1 --device cpu --no-report" + SHORT_RUNS + " --rope-scaling pi --sample 1";
    TEST_ASSERT_EQUAL_INT(0, shell("dev/sweep.sh " + root + flags).status);
    TEST_ASSERT_EQUAL_INT(0, shell("rm " + root + "/copy-rope-s7/results.json").status);
    Result r = shell("dev/sweep.sh " + root + flags);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    std::string log = read_file(root + "/logs/copy-rope-s7.log");
    TEST_ASSERT_MESSAGE(contains(log, "resumed: ./train --resume " + root + "/copy-rope-s7 --sample 1 --threads 1 --device cpu"),
                        log.c_str());
    // its scaling comes from the checkpoint, as every saved setting does
    TEST_ASSERT_MESSAGE(contains(read_file(root + "/copy-rope-s7/results.json"), "\"rope_scaling\": \"pi\","), "resumed without its scaling");
    std::string script = read_file("dev/sweep.sh"), listed = script.substr(script.find("RESUME_FLAGS=("));
    listed = listed.substr(0, listed.find(')'));
    RunConfig config;
    for (const Flag& f : flag_table(&config)) {
        bool read_on_resume = (f.modes & RESUME) && !f.saved && f.modes != ANY;
        bool set_by_sweep = !strcmp(f.name, "--resume") || !strcmp(f.name, "--device");
        TEST_ASSERT_EQUAL_INT_MESSAGE(read_on_resume && !set_by_sweep, contains(listed + " ", std::string(" ") + f.name + " ") ||
                                                                         contains(listed + " ", std::string("(") + f.name + " "),
                                      f.name);
    }
}

// a run that fails once it has started (here it diverges: its flags pass the check)
static void test_a_failed_run_is_named_and_the_others_finish(void) {
    std::string root = unity_temp_dir() + "/failing";
    Result r = shell("dev/sweep.sh " + root + " --pes nope --seeds 7 --vary --lr 1000,0.003 --threads 1 --device cpu --no-report" + SHORT_RUNS);
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "copy-nope-s7-lr1000: FAILED: train: error: step ") && contains(r.out, ": not finite ("), r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "failed: copy-nope-s7-lr1000 "), r.out.c_str());
    TEST_ASSERT_TRUE(exists(root + "/copy-nope-s7-lr0.003/results.json"));
}

// flags or data that a run would refuse (./train --check) stop the sweep before any run starts,
// with one line, and leave nothing behind: no run, and no line in runs.tsv that the mended
// command would find in the way
static void test_a_run_that_can_not_start_stops_the_sweep_before_any_run(void) {
    std::string root = unity_temp_dir() + "/refused";
    const std::string cases[][2] = {
        {"--tasks copy,nosuch --pes nope" + SHORT_RUNS, "sweep.sh: nosuch-nope-s7 can not start: unknown task 'nosuch'"},
        // refused only once the data is made: the check makes it
        {"--pes ape --vary --random-positions 0,5" + SHORT_RUNS, "sweep.sh: copy-ape-s7-random-positions5 can not start: --random-positions 5 is below the longest"},
    };
    assert_refusals("dev/sweep.sh " + root + " --seeds 7 --threads 1 --device cpu --no-report", cases);
    TEST_ASSERT_MESSAGE(!exists(root), root.c_str());
}

// a finished run's progress line gives its test accuracy rounded to 3 places: a parity run with 7
// test examples, 3 of them right (0.428571), reads 0.429, not the first five characters 0.428
static void test_a_finished_run_shows_its_test_accuracy_rounded(void) {
    std::string root = unity_temp_dir() + "/rounded";
    Result r = shell("dev/sweep.sh " + root + " --tasks parity --pes nope --seeds 7 --threads 1 --device cpu --no-report" +
                     " -- --steps 6 --eval-every 3 --train-size 500 --valid-size 40 --test-size 7");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    std::string results = read_file(root + "/parity-nope-s7/results.json");
    TEST_ASSERT_MESSAGE(contains(results, "\"test\": {\"accuracy\": 0.428571,"), results.c_str());  // the case this test needs
    TEST_ASSERT_MESSAGE(contains(r.out, "[1/1] parity-nope-s7: finished in ") && contains(r.out, ", test accuracy 0.429 |"), r.out.c_str());
}

// a list with an empty item would be a run of no task, PE or seed, and an item given twice the
// same run twice, run at once into one directory: both refused before anything runs (each case
// with short runs, which a sweep that took them would train)
static void test_lists_with_an_empty_or_repeated_item_are_refused(void) {
    std::string root = unity_temp_dir() + "/lists";
    const std::string cases[][2] = {
        {"--pes nope,nope --seeds 7" + SHORT_RUNS, "sweep.sh: --pes 'nope,nope' lists 'nope' twice: it would be the same run twice"},
        {"--pes nope --seeds 7,7" + SHORT_RUNS, "sweep.sh: --seeds '7,7' lists '7' twice"},
        {"--pes nope --seeds 7 --vary --lr 0.1,0.1" + SHORT_RUNS, "sweep.sh: --vary --lr '0.1,0.1' lists '0.1' twice"},
        {"--pes '' --seeds 7" + SHORT_RUNS, "sweep.sh: --pes '' has an empty item"},
        {"--tasks '' --pes nope --seeds 7" + SHORT_RUNS, "sweep.sh: --tasks '' has an empty item"},
        {"--pes nope --seeds 7,,8" + SHORT_RUNS, "sweep.sh: --seeds '7,,8' has an empty item: give comma-separated values, none empty"},
        {"--pes nope, --seeds 7" + SHORT_RUNS, "sweep.sh: --pes 'nope,' has an empty item"},
    };
    assert_refusals("dev/sweep.sh " + root + " --threads 1 --device cpu --no-report", cases);
    TEST_ASSERT_MESSAGE(!exists(root), root.c_str());
}

// A sweep that is killed stops its runs (a script's background jobs ignore Ctrl-C, and a run left
// going would train on unwatched), waits for them to exit, and exits 143 for SIGTERM
static void test_a_killed_sweep_stops_its_runs(void) {
    // its ./train, by a pattern that matches no shell whose command line holds the pattern itself
    std::string root = unity_temp_dir() + "/killed", running = "'--out [/]" + root.substr(1) + "/'";
    Result r = shell("{ dev/sweep.sh " + root + " --tasks copy --pes nope --seeds 7 --threads 1 --device cpu --no-report -- --steps 100000"
                     " --eval-every 100000 --train-size 500 --valid-size 40 --test-size 40 & sweep=$!;"
                     " for i in $(seq 600); do grep -qs '^device:' " + root + "/logs/copy-nope-s7.log && break; sleep 0.1; done;"
                     " kill -TERM $sweep; wait $sweep; echo \"sweep exited $?\";"
                     " if pgrep -f -- " + running + " > /dev/null; then echo 'its run trains on'; pkill -f -- " + running + "; fi; }");
    TEST_ASSERT_MESSAGE(contains(r.out, "sweep exited 143\n") && contains(r.out, "stopped; run it again to resume its runs"), r.out.c_str());
    TEST_ASSERT_FALSE(contains(r.out, "trains on"));
}

// A run holds a lock while it runs: a sweep that finds it held (here by flock, as another sweep on
// the tree or a Slurm array submitted again would hold it) skips the run, says so, and starts nothing
static void test_a_run_another_process_holds_is_skipped(void) {
    std::string root = unity_temp_dir() + "/locked";
    Result r = shell("mkdir -p " + root + "/logs && flock " + root + "/logs/copy-nope-s7.lock dev/sweep.sh " + root +
                     " --tasks copy --pes nope --seeds 7 --threads 1 --device cpu --no-report" + SHORT_RUNS);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "[1/1] copy-nope-s7: skipped: another process is running it (it holds " + root + "/logs/copy-nope-s7.lock)") &&
                            contains(r.out, ": 0 of 1 runs finished in ") && contains(r.out, "; 1 left to the processes running them\n"),
                        r.out.c_str());
    TEST_ASSERT_FALSE(exists(root + "/copy-nope-s7"));
}

// Two sweeps of one tree at once: the second skips the run the first holds, and the first still
// counts its run as finished (each sweep's status lines in its own directory: shared, the
// second's skip overwrote the first's line and the first reported its run FAILED). The first's
// ./train is paused (SIGSTOP) from its start until the second sweep ends, so that it is still
// running then on any machine, however fast or slow.
static void test_two_sweeps_of_one_tree_each_count_their_own_runs(void) {
    // its ./train, by a pattern that matches no shell whose command line holds the pattern itself
    std::string root = unity_temp_dir() + "/twice", running = "'--out [/]" + root.substr(1) + "/'",
                sweep = "dev/sweep.sh " + root + " --tasks copy --pes nope --seeds 7 --threads 1 --device cpu --no-report" +
                        " -- --steps 60 --eval-every 30 --train-size 500 --valid-size 40 --test-size 40";  // a second or two: time to catch it
    Result r = shell("{ " + sweep + " > " + root + ".first 2>&1 & first=$!; "
                     "for i in $(seq 3000); do pkill -STOP -f -- " + running + " && break; sleep 0.01; done; " +
                     sweep + " > " + root + ".second 2>&1; second=$?; pkill -CONT -f -- " + running + "; wait $first; "
                     "echo \"first $? second $second\"; cat " + root + ".first " + root + ".second; ls -A " + root + "/logs; }");
    TEST_ASSERT_MESSAGE(contains(r.out, "first 0 second 0\n"), r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "[1/1] copy-nope-s7: finished in ") && contains(r.out, "[1/1] copy-nope-s7: skipped: another process is running it"),
                        r.out.c_str());
    TEST_ASSERT_MESSAGE(!contains(r.out, ".status"), r.out.c_str());  // neither left its status directory behind
}

// The thread count is checked on the run's own `device:` line, the last of its log: a resumed run's
// log holds its earlier attempts' too. Here an earlier line claims the count asked for (0, which
// no run reports: 0 asks for all the cores), and the resumed run's own line must fail the check:
// the run is finished with a warning (its results do not depend on the count), and skipped when
// run again. Then a run resumed on 3 threads passes the check, though its log's first line says 1.
static void test_a_resumed_run_is_checked_by_its_own_device_line(void) {
    std::string root = unity_temp_dir() + "/threads", log = root + "/logs/copy-nope-s7.log";
    TEST_ASSERT_EQUAL_INT(0, shell("dev/sweep.sh " + root + " --tasks copy --pes nope --seeds 7 --threads 1 --device cpu --no-report" + SHORT_RUNS).status);
    TEST_ASSERT_EQUAL_INT(0, shell("rm " + root + "/copy-nope-s7/results.json && { echo 'device: CPU, 0 threads (an earlier attempt)' >> " + log + "; }").status);
    Result r = shell("dev/sweep.sh --run-one " + root + " 0 0 cpu");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "finished: but it did not use 0 threads (device: CPU, ") && !contains(r.out, "an earlier attempt"), r.out.c_str());
    TEST_ASSERT_EQUAL_STRING("skipped\n", shell("dev/sweep.sh --run-one " + root + " 0 0 cpu").out.c_str());
    TEST_ASSERT_EQUAL_INT(0, shell("rm " + root + "/copy-nope-s7/results.json").status);
    r = shell("dev/sweep.sh --run-one " + root + " 0 3 cpu");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_EQUAL_STRING("finished\n", r.out.c_str());
}

// puts in REPO a copy of the sweep beside a ./train that is the bash script BODY, which can run
// the real one as "$REAL_TRAIN": how the sweep takes a ./train that behaves otherwise
static void put_sweep_beside_train(const std::string& repo, const std::string& body) {
    std::ofstream(repo + "/train") << "#!/usr/bin/env bash\nREAL_TRAIN=" + repository() + "/train\n" + body + "\n";
    TEST_ASSERT_EQUAL_INT(0, shell("chmod +x " + repo + "/train && mkdir " + repo + "/dev && cp dev/sweep.sh dev/help.sh " + repo + "/dev/").status);
}

// A run whose ./train used another thread count than the sweep gave it is finished with a
// warning, not failed: a run's results do not depend on its thread count, so they stand, and the
// next sweep skips the run. Here ./train runs the real one and reports 5 threads.
static void test_a_run_on_other_threads_is_finished_with_a_warning(void) {
    std::string repo = unity_temp_dir();
    put_sweep_beside_train(repo, "set -o pipefail\n\"$REAL_TRAIN\" \"$@\" | sed 's/^device: CPU, [0-9]* threads/device: CPU, 5 threads/'");
    std::string sweep = repo + "/dev/sweep.sh other --tasks copy --pes nope --seeds 7 --threads 1 --device cpu --no-report" + SHORT_RUNS;
    Result r = shell(sweep);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "[1/1] copy-nope-s7: finished in ") &&
                            contains(r.out, ", but it did not use 1 threads (device: CPU, 5 threads, "), r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "sweep sweeps/other: 1 of 1 runs finished in "), r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "warning: copy-nope-s7 did not use 1 threads (OMP_THREAD_LIMIT set?)"), r.out.c_str());
    r = shell(sweep);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "[1/1] copy-nope-s7: already finished") && !contains(r.out, "warning"), r.out.c_str());
}

// A ./train that fails (exit status 3 here) after writing its results.json failed: the sweep
// judges a run by its exit status first, its results.json second.
static void test_a_run_that_fails_after_its_results_failed(void) {
    std::string repo = unity_temp_dir();
    put_sweep_beside_train(repo, "for flag; do [ \"$flag\" = --check ] && exec \"$REAL_TRAIN\" \"$@\"; done\n\"$REAL_TRAIN\" \"$@\"\nexit 3");
    Result r = shell(repo + "/dev/sweep.sh late --tasks copy --pes nope --seeds 7 --threads 1 --device cpu --no-report" + SHORT_RUNS);
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "[1/1] copy-nope-s7: FAILED: ") && contains(r.out, "failed: copy-nope-s7 "), r.out.c_str());
    TEST_ASSERT_TRUE(exists(repo + "/sweeps/late/copy-nope-s7/results.json"));
}

// K runs of --threads N that would outnumber the cores are refused; without --threads, each of
// K runs gets the cores divided among the K (here K = the cores: one thread each)
static void test_runs_side_by_side_never_oversubscribe_the_cores(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    Result r = shell("dev/sweep.sh " + unity_temp_dir() + "/crowded --device cpu --jobs " + std::to_string(cores) + " --threads 2" + SHORT_RUNS);
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "spin against each other"), r.out.c_str());
    std::string root = unity_temp_dir() + "/divided";
    r = shell("dev/sweep.sh " + root + " --tasks copy --pes nope --seeds 7 --device cpu --no-report --jobs " + std::to_string(cores) + SHORT_RUNS);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, ": 1 runs, " + std::to_string(cores) + " at a time, 1 threads each, device cpu\n"), r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(read_file(root + "/logs/copy-nope-s7.log"), "\ndevice: CPU, 1 threads,"), r.out.c_str());
}

// --jobs K runs K at a time, never more: here K = 1 and two runs, whose ./train processes are
// counted while the sweep goes (never two at once), by the run each trains: a process may have a
// twin of the same command line for a moment (a sanitized build's leak check clones one at exit)
static void test_a_sweep_runs_k_runs_at_a_time(void) {
    // its ./train, by a pattern that matches no shell whose command line holds the pattern itself
    std::string root = unity_temp_dir() + "/one-at-a-time", running = "'--out [/]" + root.substr(1) + "/'";
    Result r = shell("{ dev/sweep.sh " + root + " --tasks copy --pes nope,t5 --seeds 7 --jobs 1 --threads 1 --device cpu --no-report" + SHORT_RUNS +
                     " > " + root + ".out 2>&1 & sweep=$!; most=0;"
                     " while kill -0 $sweep 2> /dev/null; do n=$(pgrep -a -f -- " + running + " | grep -o -- '--out [^ ]*' | sort -u | wc -l); [ \"$n\" -gt $most ] && most=$n; sleep 0.02; done;"
                     " wait $sweep; echo \"sweep exited $? with at most $most at once\"; cat " + root + ".out; }");
    int most = -1;
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, sscanf(r.out.c_str(), "sweep exited 0 with at most %d at once", &most), r.out.c_str());
    TEST_ASSERT_MESSAGE(most == 1 && contains(r.out, "2 of 2 runs finished"), r.out.c_str());  // 1: the count saw the runs, one at a time
}

static void test_bad_sweep_options_get_one_clear_line(void) {
    const char* cases[][2] = {
        {"--jobs 0", "--jobs expects a positive integer"},
        {"--vary dropout 0,1", "--vary needs a flag"},
        {"--frobnicate", "unknown option '--frobnicate'"},
        {"-- --seed 3", "--seed is set by the sweep"},
        {"-- --threads 2", "--threads is set by the sweep"},
        {"--dry-run", "--dry-run goes with --slurm"},
        {"--threads 0 --slurm --dry-run", "--threads expects a positive integer, got '0'"},  // 0 would be every core for each run
        {"-- --attention-window '0:1 prompt'", "'0:1 prompt': a flag value with spaces can not be passed through a sweep"},
    };
    for (const auto& c : cases) {
        Result r = shell("dev/sweep.sh " + unity_temp_dir() + "/bad " + c[0]);
        TEST_ASSERT_EQUAL_INT_MESSAGE(1, r.status, c[0]);
        TEST_ASSERT_MESSAGE(contains(r.out, c[1]) && r.out.find('\n') == r.out.size() - 1, r.out.c_str());
    }
}

// dev/sweep_throughput.sh: a sweep that fails (here K runs side by side that would oversubscribe
// the cores, refused before any run starts) is named and makes the exit status 1; bad entries
// are refused
static void test_sweep_throughput_names_a_failed_sweep_and_refuses_bad_entries(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    Result r = shell("JOBS=" + std::to_string(cores + 1) + " RUNS=1 DEVICE=cpu dev/sweep_throughput.sh tiny:2");
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, r.status, r.out.c_str());
    std::vector<std::string> rows = lines(r.out);
    TEST_ASSERT_EQUAL_INT_MESSAGE(2, rows.size(), r.out.c_str());  // the header, then the failure
    TEST_ASSERT_MESSAGE(contains(rows[1], "tiny K=" + std::to_string(cores + 1) + " failed: ") && contains(rows[1], "spin against each other"),
                        rows[1].c_str());

    const std::string cases[][2] = {
        {"/no/such", "'/no/such' is not PRESET:STEPS (e.g. tiny:1000)"},
        {"tiny:0", "'tiny:0' is not PRESET:STEPS"},
        {"huge:10", "'huge' is not a --model preset"},
        {"copy:10", "'copy' is not a --model preset"},  // a task: --help's other indented lines are not presets
    };
    assert_refusals("dev/sweep_throughput.sh", cases);
    assert_refusals("RUNS=0 dev/sweep_throughput.sh", {{"tiny:5", "JOBS and RUNS take whole numbers above 0, got '0'"}});
}

// dev/grid_hours.sh: each task's hours are its PEs' ms/step times the steps of a run (PCFG's 2.5
// times as many) times the seeds, the total their sum; a bench that fails is named, and the
// grid's counts and names are checked before any bench
static void test_grid_hours_multiplies_each_tasks_bench_by_its_runs(void) {
    const std::string model = " --layers 1 --d-model 16 --heads 1 --d-ff 32 --threads 1 --device cpu";
    Result r = shell("TASKS=copy,pcfg PES=nope,alibi SEEDS=2 STEPS=1800000 dev/grid_hours.sh" + model);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    std::vector<std::string> rows = lines(r.out);
    TEST_ASSERT_EQUAL_INT_MESSAGE(5, rows.size(), r.out.c_str());  // the grid, the header, two tasks, the total
    TEST_ASSERT_MESSAGE(contains(rows[0], "2 tasks x 2 PEs x 2 seeds; 1800000 steps a run (pcfg 4500000)"), rows[0].c_str());
    double total = 0;
    for (int i = 2; i < 4; i++) {
        char task[32], padding[8];
        double nope, alibi, hours;
        TEST_ASSERT_EQUAL_INT_MESSAGE(5, sscanf(rows[i].c_str(), "%31s %lf %lf %7s %lf", task, &nope, &alibi, padding, &hours), rows[i].c_str());
        double runs_hours = (nope + alibi) * (i == 3 ? 4500000 : 1800000) * 2 / 3.6e6;  // ms x steps x seeds
        TEST_ASSERT_FLOAT_WITHIN(0.006, runs_hours, hours);
        TEST_ASSERT_MESSAGE(padding[strlen(padding) - 1] == '%', rows[i].c_str());
        total += hours;
    }
    double printed_total = 0;
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, sscanf(rows[4].c_str(), "total %lf", &printed_total), rows[4].c_str());
    TEST_ASSERT_FLOAT_WITHIN(0.006, total, printed_total);

    // a task whose bench fails gets no hours (its failure line is followed by the next task's row,
    // here the total's); SEEDS by default 3
    Result failed = shell("TASKS=copy,nosuch PES=nope STEPS=10 dev/grid_hours.sh" + model);
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, failed.status, failed.out.c_str());
    TEST_ASSERT_MESSAGE(contains(failed.out, "2 tasks x 1 PEs x 3 seeds; 10 steps a run (pcfg 25)"), failed.out.c_str());
    std::vector<std::string> printed = lines(failed.out);
    TEST_ASSERT_EQUAL_INT_MESSAGE(6, (int)printed.size(), failed.out.c_str());  // the grid, the header, copy, nosuch, its failure, the total
    TEST_ASSERT_MESSAGE(contains(printed[4], "nosuch nope failed: train: error: unknown task 'nosuch'") && printed[5].rfind("total ", 0) == 0,
                        failed.out.c_str());
    // the paper's grid by default: its 17 tasks in order, 5 PEs, 3 seeds, 40,000 steps (PCFG's
    // 100,000); here every bench refused at once (--layers 0), so nothing is timed
    Result paper = shell("dev/grid_hours.sh --layers 0");
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, paper.status, paper.out.c_str());
    TEST_ASSERT_MESSAGE(contains(paper.out, "grid: 17 tasks x 5 PEs x 3 seeds; 40000 steps a run (pcfg 100000);") &&
                            contains(paper.out, "nope       ape        t5     alibi      rope  padding"),
                        paper.out.c_str());
    std::string refused;
    for (const std::string& line : lines(paper.out))
        if (contains(line, " nope failed: ")) refused += line.substr(0, line.find(' ')) + " ";
    TEST_ASSERT_EQUAL_STRING("copy copy_rsc2x copy_rdc copy_cmc copy_cmc2x reverse reverse_mc reverse_mcrv addition poly sort sort_multi sum "
                             "parity lego scan pcfg ",
                             refused.c_str());
    assert_refusals("SEEDS=0 dev/grid_hours.sh", {{"", "SEEDS, STEPS and PCFG_STEPS take whole numbers above 0, got '0'"}});
    assert_refusals("TASKS='copy sum' dev/grid_hours.sh", {{"", "TASKS and PES are comma-separated names"}});
}

// --vary adds an axis, and the Slurm script has one array task per run with what each needs: a
// GPU for a GPU sweep. A build without nvcc (`make NVCC=`, as `make sanitize` builds) has no GPU
// path, so there the GPU sweep is refused before any run, with the reason, and the script is
// checked for CPU runs.
static void test_the_slurm_script_has_one_array_task_per_run(void) {
    bool gpu_build = shell("./train --check --device gpu").status == 0;
    std::string root = unity_temp_dir() + "/slurm", sweep = "dev/sweep.sh " + root + " --tasks copy --pes nope,rope --seeds 1,2 --vary --dropout 0,0.1 ";
    std::string options = " --slurm --dry-run --sbatch --time=1:00:00 -- --steps 10";
    if (!gpu_build) {
        Result refused = shell(sweep + "--device gpu" + options);
        TEST_ASSERT_EQUAL_INT_MESSAGE(1, refused.status, refused.out.c_str());
        TEST_ASSERT_MESSAGE(contains(refused.out, "this build has no GPU path"), refused.out.c_str());
    }
    Result r = shell(sweep + "--device " + (gpu_build ? "gpu" : "cpu") + options);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "#SBATCH --array=0,1,2,3,4,5,6,7\n"), r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "#SBATCH --gres=gpu:1") == gpu_build && contains(r.out, "#SBATCH --time=1:00:00"), r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "--dependency=afterany:"), r.out.c_str());
    // each array task: 2 threads (a cluster node's cores are not this machine's), on the sweep's device
    TEST_ASSERT_MESSAGE(contains(r.out, "#SBATCH --cpus-per-task=2\n") &&
                            contains(r.out, std::string("\"${SLURM_CPUS_PER_TASK:-2}\" ") + (gpu_build ? "gpu" : "cpu") + "\n"),
                        r.out.c_str());
    std::string runs = read_file(root + "/runs.tsv");
    TEST_ASSERT_MESSAGE(contains(runs, "copy-rope-s2-dropout0.1\t--task copy --pe rope --seed 2 --dropout 0.1 --steps 10\n"), runs.c_str());
    TEST_ASSERT_FALSE(contains(r.out, "submitted"));
}

// The grid is every combination of its axes, each --vary one more (runs named and flagged by
// each value, in the order given), and by default the paper's: copy with its five PEs and three
// seeds (Slurm dry runs: runs.tsv written, nothing trained)
static void test_a_grid_is_every_combination_of_its_axes_and_the_papers_by_default(void) {
    std::string root = unity_temp_dir() + "/axes";
    Result r = shell("dev/sweep.sh " + root + " --tasks copy --pes nope --seeds 1 --vary --dropout 0,0.1 --vary --lr 0.001,0.002 --device cpu"
                     " --slurm --dry-run -- --steps 10");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_EQUAL_STRING("copy-nope-s1-dropout0-lr0.001\t--task copy --pe nope --seed 1 --dropout 0 --lr 0.001 --steps 10\n"
                             "copy-nope-s1-dropout0-lr0.002\t--task copy --pe nope --seed 1 --dropout 0 --lr 0.002 --steps 10\n"
                             "copy-nope-s1-dropout0.1-lr0.001\t--task copy --pe nope --seed 1 --dropout 0.1 --lr 0.001 --steps 10\n"
                             "copy-nope-s1-dropout0.1-lr0.002\t--task copy --pe nope --seed 1 --dropout 0.1 --lr 0.002 --steps 10\n",
                             read_file(root + "/runs.tsv").c_str());
    root = unity_temp_dir() + "/defaults";
    r = shell("dev/sweep.sh " + root + " --device cpu --slurm --dry-run");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    std::string runs = read_file(root + "/runs.tsv"), names;
    for (const std::string& line : lines(runs)) names += line.substr(0, line.find('\t')) + " ";
    TEST_ASSERT_EQUAL_STRING("copy-nope-s256788 copy-nope-s234054 copy-nope-s146317 copy-ape-s256788 copy-ape-s234054 copy-ape-s146317 "
                             "copy-t5-s256788 copy-t5-s234054 copy-t5-s146317 copy-alibi-s256788 copy-alibi-s234054 copy-alibi-s146317 "
                             "copy-rope-s256788 copy-rope-s234054 copy-rope-s146317 ",
                             names.c_str());
    TEST_ASSERT_MESSAGE(contains(runs, "copy-alibi-s234054\t--task copy --pe alibi --seed 234054 \n"), runs.c_str());
}

// A sweep grows by the runs new to it, but a run it already lists with other flags (here the same
// name without --dropout, whose line is the start of the listed one's) is refused, with one line:
// the finished run would be skipped as if it were the one asked for
static void test_a_run_listed_with_other_flags_is_refused(void) {
    std::string root = unity_temp_dir() + "/other-flags", sweep = "dev/sweep.sh " + root + " --tasks copy --pes nope --seeds 1 --device cpu --slurm --dry-run";
    TEST_ASSERT_EQUAL_INT(0, shell(sweep + " -- --steps 10 --dropout 0.1").status);
    assert_refusals(sweep, {{"-- --steps 10", "sweep.sh: " + root + " already has a run copy-nope-s1 with other flags: choose another sweep name"}});
    TEST_ASSERT_EQUAL_STRING("copy-nope-s1\t--task copy --pe nope --seed 1 --steps 10 --dropout 0.1\n", read_file(root + "/runs.tsv").c_str());
    // the same flags again: the same run, listed once
    TEST_ASSERT_EQUAL_INT(0, shell(sweep + " -- --steps 10 --dropout 0.1").status);
    TEST_ASSERT_EQUAL_INT(1, (int)lines(read_file(root + "/runs.tsv")).size());
}

// Submitted (to an sbatch on the PATH that prints "JOBID;CLUSTER", as --parsable does on a
// federation, and logs its arguments): --jobs 1 throttles the array to one task at a time; the
// report job waits for the job id alone; and a path that a shell would read otherwise (here one
// holding a $) reaches sbatch as it is, quoted only in the commands the node's shell reads.
static void test_a_slurm_sweep_is_submitted_with_its_job_id_and_paths_as_they_are(void) {
    std::string dir = unity_temp_dir(), root = dir + "/sweep$x";
    std::ofstream(dir + "/sbatch") << "#!/bin/sh\nprintf '%s\\n' \"$@\" >> " + dir + "/sbatch.args\necho '4242;cluster'\n";
    TEST_ASSERT_EQUAL_INT(0, shell("chmod +x " + dir + "/sbatch").status);
    Result r = shell("PATH=" + dir + ":$PATH dev/sweep.sh '" + root + "' --tasks copy --pes nope --seeds 1,2 --jobs 1 --device cpu --slurm -- --steps 10");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "submitted job array 4242: 2 runs") && contains(r.out, "submitted job 4242: dev/report"), r.out.c_str());
    std::string script = read_file(root + "/sweep.sbatch"), args = read_file(dir + "/sbatch.args");
    TEST_ASSERT_MESSAGE(contains(script, "#SBATCH --array=0,1%1\n"), script.c_str());
    TEST_ASSERT_MESSAGE(contains(script, "exec dev/sweep.sh --run-one " + dir + "/sweep\\$x "), script.c_str());
    TEST_ASSERT_MESSAGE(contains(args, "\n--dependency=afterany:4242\n") && contains(args, "\n--output=" + root + "/logs/report.out\n") &&
                            contains(args, "\n--wrap\ncd " + repository() + " && dev/report " + dir + "/sweep\\$x\n"),
                        args.c_str());
}

// dev/reproduce.sh's chomsky part lays out the twelve tasks beyond leaves out, each with the
// paper's five PEs and beyond's budget and task flags, and again with random positions for the
// four that have positions (its Slurm dry run writes every grid's runs.tsv and trains nothing);
// an unknown part is refused
static void test_reproduce_lays_out_the_chomsky_part(void) {
    std::string root = unity_temp_dir();
    Result r = shell("dev/reproduce.sh " + root + " chomsky --slurm --dry-run");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    const char* twelve[] = {"ch_even_pairs", "ch_modular_arithmetic", "ch_cycle_navigation", "ch_stack_manipulation",
                            "ch_modular_arithmetic_brackets", "ch_solve_equation", "ch_missing_duplicate", "ch_odds_first",
                            "ch_binary_addition", "ch_binary_multiplication", "ch_compute_sqrt", "ch_bucket_sort"};
    for (const char* task : twelve) {
        std::string runs = read_file(root + "/chomsky/" + task + "/runs.tsv");
        TEST_ASSERT_EQUAL_INT_MESSAGE(5, (int)lines(runs).size(), runs.c_str());
        for (const char* pe : {"nope", "ape", "t5", "alibi", "rope"}) {
            std::string run = std::string(task) + "-" + pe + "-s256788\t--task " + task + " --pe " + pe + " --seed 256788 " +
                              "--model tiny --steps 1000 --valid-size 1000 --test-size 2000 --train-max 20 --test-max 50\n";
            TEST_ASSERT_MESSAGE(contains(runs, run), runs.c_str());
        }
        std::string random = read_file(root + "/chomsky/" + task + "-random/runs.tsv");
        TEST_ASSERT_EQUAL_INT_MESSAGE(4, (int)lines(random).size(), random.c_str());
        std::string rope = std::string(task) + "-rope-s256788\t--task " + task + " --pe rope --seed 256788 --model tiny " +
                           "--steps 1000 --valid-size 1000 --test-size 2000 --train-max 20 --test-max 50 --random-positions 256\n";
        TEST_ASSERT_MESSAGE(contains(random, rope) && !contains(random, "--pe nope"), random.c_str());
    }
    TEST_ASSERT_FALSE(exists(root + "/chomsky/ch_parity_check"));
    TEST_ASSERT_FALSE(contains(r.out, "submitted"));
    // PES and RANDOM_PES choose the PEs: the later ones beside the paper's, and no random runs
    std::string later = unity_temp_dir();
    r = shell("PES=fire,cope RANDOM_PES= TASKS=ch_bucket_sort dev/reproduce.sh " + later + " chomsky --slurm --dry-run");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    std::string runs = read_file(later + "/chomsky/ch_bucket_sort/runs.tsv");
    TEST_ASSERT_EQUAL_INT_MESSAGE(2, (int)lines(runs).size(), runs.c_str());
    TEST_ASSERT_MESSAGE(contains(runs, "ch_bucket_sort-cope-s256788\t--task ch_bucket_sort --pe cope --seed 256788 --model tiny"), runs.c_str());
    TEST_ASSERT_FALSE(exists(later + "/chomsky/ch_bucket_sort-random"));
    TEST_ASSERT_FALSE(exists(later + "/chomsky/ch_even_pairs"));
    assert_refusals("dev/reproduce.sh", {{root + " nosuch", "unknown part 'nosuch' (valid: grid long ablation head64 beyond chomsky chomskydrawn sorted far farrandom steps)"}});
}

// dev/reproduce.sh's beyond part evaluates each rope run again with each --rope-scaling once the
// run has finished: one still training (its model.bin there, its results.json not yet) is named
// and left for the next call, which evaluates it (here a run trained by hand, tiny and short; a
// Slurm dry run trains none)
static void test_reproduce_beyond_scales_a_rope_run_once_it_has_finished(void) {
    std::string root = unity_temp_dir(), run = root + "/beyond/copy/copy-rope-s7", scaled = root + "/beyond/copy-scaled/copy-rope-s7-";
    Result made = shell("./train --task copy --pe rope --seed 7 --steps 2 --eval-every 2 --train-size 64 --valid-size 16 --test-size 16 --layers 1"
                        " --d-model 16 --heads 2 --d-ff 32 --batch 8 --device cpu --threads 1 --out " + run + " > /dev/null && mv " + run +
                        "/results.json " + root);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, made.status, made.out.c_str());
    const std::string beyond = "TASKS=copy SEEDS=7 dev/reproduce.sh " + root + " beyond --slurm --dry-run --threads 1";
    Result r = shell(beyond);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    for (const char* scaling : {"pi", "ntk", "yarn"}) {
        TEST_ASSERT_MESSAGE(contains(r.out, std::string("not evaluated with --rope-scaling ") + scaling + " yet: " + run + " has not finished"), r.out.c_str());
        TEST_ASSERT_FALSE(exists(scaled + scaling + "/results.json"));
    }
    TEST_ASSERT_EQUAL_INT(0, shell("mv " + root + "/results.json " + run).status);
    r = shell(beyond);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    for (const char* scaling : {"pi", "ntk", "yarn"}) {
        std::string results = read_file(scaled + scaling + "/results.json");
        TEST_ASSERT_MESSAGE(contains(results, std::string("\"rope_scaling\": \"") + scaling + "\","), results.c_str());
    }
    TEST_ASSERT_FALSE(contains(r.out, "failed"));
}

// a tiny even-pairs run of seed 7 trained by hand into OUT (a Slurm dry run trains none), for
// the parts that test finished runs to 500: STEPS steps, validated every 2, and EXTRA flags
static Result train_even_pairs_by_hand(const std::string& pe, int steps, const std::string& extra, const std::string& out) {
    return shell("./train --task ch_even_pairs --pe " + pe + " --seed 7 --steps " + std::to_string(steps) + " --eval-every 2 --train-size 64"
                 " --valid-size 16 --test-size 16 --train-max 20 --test-max 50 --layers 1 --d-model 16 --heads 2 --d-ff 32 --batch 8"
                 " --device cpu --threads 1" + extra + " --out " + out);
}

// ENV dev/reproduce.sh ROOT PART as a Slurm dry run (which trains none but tests the finished
// runs it finds to 500) into *r: it succeeds, and GRID's runs.tsv, into *listed, lists `runs` runs
static void dry_run_part(const std::string& env, const std::string& root, const std::string& part, const std::string& grid, int runs,
                         Result* r, std::string* listed) {
    *r = shell(env + " dev/reproduce.sh " + root + " " + part + " --slurm --dry-run --threads 1");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r->status, r->out.c_str());
    *listed = read_file(grid + "/runs.tsv");
    TEST_ASSERT_EQUAL_INT_MESSAGE(runs, (int)lines(*listed).size(), listed->c_str());
}

// dev/reproduce.sh's far part: its grid laid out (5,000 steps, the Chomsky task flags), and each
// finished run of it tested again to length 500 in TASK-500 (here one trained by hand, tiny and
// short; a Slurm dry run trains none), a run not yet finished named and left for the next call
static void test_reproduce_far_tests_each_finished_run_to_500(void) {
    std::string root = unity_temp_dir(), grid = root + "/far/ch_even_pairs";
    Result made = train_even_pairs_by_hand("nope", 2, "", grid + "/ch_even_pairs-nope-s7");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, made.status, made.out.c_str());
    shell("mkdir -p " + grid + "/ch_even_pairs-fire-s7");  // started, not finished
    Result r;
    std::string runs;
    dry_run_part("TASKS=ch_even_pairs PES=xpos,fire", root, "far", grid, 2, &r, &runs);
    TEST_ASSERT_MESSAGE(contains(runs, "ch_even_pairs-xpos-s256788\t--task ch_even_pairs --pe xpos --seed 256788 --model tiny --steps 5000"
                                       " --valid-size 1000 --test-size 2000 --train-max 20 --test-max 50\n"), runs.c_str());
    std::string results = read_file(root + "/far/ch_even_pairs-500/ch_even_pairs-nope-s7/results.json");
    TEST_ASSERT_MESSAGE(contains(results, "{\"length\": 500, \"correct\": ") && contains(results, "\"test\": {\"accuracy\": ") &&
                            contains(results, "\"total\": 2400, \"by_length\""), results.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "not tested to 500 yet: " + grid + "/ch_even_pairs-fire-s7 has not finished"), r.out.c_str());
    TEST_ASSERT_FALSE(contains(r.out, "failed"));
    // called again, it leaves the run tested (its results.json there) as it is: no evaluation, so no new log
    std::string tested = root + "/far/ch_even_pairs-500/ch_even_pairs-nope-s7";
    TEST_ASSERT_EQUAL_INT(0, shell("rm " + tested + ".log").status);
    dry_run_part("TASKS=ch_even_pairs PES=xpos,fire", root, "far", grid, 2, &r, &runs);
    TEST_ASSERT_FALSE(exists(tested + ".log"));
    TEST_ASSERT_EQUAL_STRING(results.c_str(), read_file(tested + "/results.json").c_str());
}

// dev/reproduce.sh's grid, ablation and sorted parts take the sweep's options (here one PE and
// one seed) and lay out their grids: the tiny preset on TASKS, each factor's flags, the sorted
// batches on the task's own flags; and far by default the nine PEs whose parameters do not grow
// with the lengths (Slurm dry runs: nothing trained, no run finished to test to 500)
static void test_reproduce_lays_out_the_grid_ablation_sorted_and_far_parts(void) {
    std::string root = unity_temp_dir();
    Result r = shell("TASKS=copy,scan dev/reproduce.sh " + root + " grid --slurm --dry-run --pes nope --seeds 1 && "
                     "dev/reproduce.sh " + root + " ablation --slurm --dry-run --pes nope --seeds 1 && "
                     "TASKS=addition dev/reproduce.sh " + root + " sorted --slurm --dry-run --pes nope --seeds 1 && "
                     "TASKS=ch_even_pairs dev/reproduce.sh " + root + " far --slurm --dry-run");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_EQUAL_STRING("copy-nope-s1\t--task copy --pe nope --seed 1 --model tiny\nscan-nope-s1\t--task scan --pe nope --seed 1 --model tiny\n",
                             read_file(root + "/grid/runs.tsv").c_str());
    const char* factors[][2] = {{"dropout", "--dropout 0.1"}, {"lr", "--lr 3e-4"}, {"head64", "--heads 1"},
                                {"size", "--layers 6 --d-model 384 --heads 24 --d-ff 1536"}};
    for (const auto& f : factors)
        TEST_ASSERT_EQUAL_STRING((std::string("copy-nope-s1\t--task copy --pe nope --seed 1 --model tiny ") + f[1] + "\n").c_str(),
                                 read_file(root + "/ablation/" + f[0] + "/runs.tsv").c_str());
    TEST_ASSERT_EQUAL_STRING("addition-nope-s1\t--task addition --pe nope --seed 1 --model tiny --steps 1000 --valid-size 1000 --test-size 2000"
                             " --reverse-digits --index-hints --sort-pool 16\n",
                             read_file(root + "/sorted/addition/runs.tsv").c_str());
    std::string far = read_file(root + "/far/ch_even_pairs/runs.tsv"), pes;
    for (const std::string& line : lines(far)) pes += line.substr(line.find(" --pe ") + 6, line.find(" --seed ") - line.find(" --pe ") - 6) + " ";
    TEST_ASSERT_EQUAL_STRING("nope ape t5 alibi rope xpos kerple_log kerple_power fire ", pes.c_str());
}

// dev/reproduce.sh's farrandom part: far's grid with every position drawn below 2048, in training
// and evaluation, for the nine PEs with positions to draw, and its finished runs tested to 500
// so (TASK-random-500) and at 0..n-1 (TASK-random-500-counted)
static void test_reproduce_farrandom_draws_positions_below_2048(void) {
    std::string root = unity_temp_dir(), grid = root + "/far/ch_even_pairs-random";
    Result made = train_even_pairs_by_hand("ape_learned", 2, " --random-positions 2048", grid + "/ch_even_pairs-ape_learned-s7");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, made.status, made.out.c_str());
    Result r;
    std::string runs;
    dry_run_part("TASKS=ch_even_pairs", root, "farrandom", grid, 9, &r, &runs);
    TEST_ASSERT_MESSAGE(contains(runs, "ch_even_pairs-ape_learned-s256788\t--task ch_even_pairs --pe ape_learned --seed 256788 --model tiny"
                                       " --steps 5000 --valid-size 1000 --test-size 2000 --train-max 20 --test-max 50 --random-positions 2048"
                                       " --eval-positions drawn\n"),
                        runs.c_str());
    TEST_ASSERT_FALSE(contains(runs, "-nope-") || contains(runs, "-cope-"));
    // ape_learned's table has a row for each of the 2048 positions, so its model is tested to 500
    for (const char* positions : {"drawn", "counted"}) {
        std::string dir = root + "/far/ch_even_pairs-random-500" + (positions == std::string("drawn") ? "" : "-counted");
        std::string results = read_file(dir + "/ch_even_pairs-ape_learned-s7/results.json");
        TEST_ASSERT_MESSAGE(contains(results, "{\"length\": 500, \"correct\": ") && contains(results, "\"total\": 2400, \"by_length\"") &&
                                contains(results, std::string("\"eval_positions\": \"") + positions + "\","),
                            results.c_str());
    }
    TEST_ASSERT_FALSE(contains(r.out, "failed"));
}

// dev/reproduce.sh's chomskydrawn part: chomsky's random-position grid evaluated with drawn
// positions (four PEs), and each finished model evaluated again at 0..n-1 (TASK-random-drawn-counted)
static void test_reproduce_chomskydrawn_evaluates_drawn_and_counted(void) {
    std::string root = unity_temp_dir(), grid = root + "/chomsky/ch_even_pairs-random-drawn";
    Result made = train_even_pairs_by_hand("t5", 2, " --random-positions 256 --eval-positions drawn", grid + "/ch_even_pairs-t5-s7");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, made.status, made.out.c_str());
    Result r;
    std::string runs;
    dry_run_part("TASKS=ch_even_pairs", root, "chomskydrawn", grid, 4, &r, &runs);
    TEST_ASSERT_MESSAGE(contains(runs, "ch_even_pairs-alibi-s256788\t--task ch_even_pairs --pe alibi --seed 256788 --model tiny --steps 1000"
                                       " --valid-size 1000 --test-size 2000 --train-max 20 --test-max 50 --random-positions 256"
                                       " --eval-positions drawn\n"),
                        runs.c_str());
    TEST_ASSERT_FALSE(contains(runs, "-nope-"));
    std::string results = read_file(root + "/chomsky/ch_even_pairs-random-drawn-counted/ch_even_pairs-t5-s7/results.json");
    TEST_ASSERT_MESSAGE(contains(results, "\"eval_positions\": \"counted\",") && contains(results, "\"test\": {\"accuracy\": "), results.c_str());
    TEST_ASSERT_FALSE(contains(r.out, "failed"));
}

// dev/reproduce.sh's steps part: far's grid with --keep-every 250 laid out, and the snapshots of
// STEPS of each finished run tested to length 500 (here a run trained by hand, keeping every 2nd
// of 4 steps)
static void test_reproduce_steps_tests_each_snapshot_to_500(void) {
    std::string root = unity_temp_dir(), grid = root + "/steps/ch_even_pairs";
    Result made = train_even_pairs_by_hand("nope", 4, " --keep-every 2", grid + "/ch_even_pairs-nope-s7");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, made.status, made.out.c_str());
    Result r;
    std::string runs;
    dry_run_part("PES=xpos SEEDS=1 STEPS=2,4", root, "steps", grid, 1, &r, &runs);
    TEST_ASSERT_MESSAGE(contains(runs, "ch_even_pairs-xpos-s1\t--task ch_even_pairs --pe xpos --seed 1 --model tiny --steps 5000"
                                       " --valid-size 1000 --test-size 2000 --train-max 20 --test-max 50 --keep-every 250\n"), runs.c_str());
    for (const char* step : {"2", "4"}) {
        std::string results = read_file(root + "/steps/ch_even_pairs-500/ch_even_pairs-nope-s7-step" + step + "/results.json");
        TEST_ASSERT_MESSAGE(contains(results, std::string("\"evaluated_step\": ") + step + ",") && contains(results, "\"total\": 2400, \"by_length\""),
                            results.c_str());
    }
    TEST_ASSERT_FALSE(contains(r.out, "failed"));
    // STEPS that name no snapshot are refused before any sweep
    const std::string bad_steps[][2] = {
        {"STEPS=0 dev/reproduce.sh " + root + " steps --slurm --dry-run", "STEPS takes comma-separated whole numbers above 0, got '0'"},
        {"STEPS=250,,500 dev/reproduce.sh " + root + " steps --slurm --dry-run", "got '250,,500'"},
        {"STEPS=x dev/reproduce.sh " + root + " steps --slurm --dry-run", "got 'x'"},
    };
    assert_refusals("", bad_steps);
}

// a NAME with a slash is a path from the directory dev/sweep.sh is called in, not from the
// repository's
static void test_a_relative_sweep_path_is_the_callers(void) {
    std::string dir = unity_temp_dir();
    Result r = shell_in(dir, "dev/sweep.sh here/grid --tasks copy --pes nope --seeds 7 --threads 1 --device cpu --no-report" + SHORT_RUNS);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(exists(dir + "/here/grid/copy-nope-s7/results.json"), r.out.c_str());
    TEST_ASSERT_FALSE(exists(repository() + "/here"));
    // and so is dev/reproduce.sh's ROOT
    r = shell("cd " + dir + " && PES=nope RANDOM_PES= TASKS=ch_bucket_sort " + repository() + "/dev/reproduce.sh there chomsky --slurm --dry-run");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(exists(dir + "/there/chomsky/ch_bucket_sort/runs.tsv"), r.out.c_str());
    TEST_ASSERT_FALSE(exists(repository() + "/there"));
}


// builds DIR/NAME, a test program of TESTS whose main runs RUNS: g++'s exit status and output
static Result build_unity_program(const std::string& dir, const std::string& name, const std::string& tests, const std::string& runs) {
    std::ofstream(dir + "/" + name + ".cpp") << "#include \"test/unity.h\"\n"
                                             << tests << "int main(int argc, char** argv) {\n    UNITY_BEGIN(argc, argv);\n"
                                             << runs << "    return UNITY_END();\n}\n";
    return shell("g++ -std=c++17 -I. -o " + dir + "/" + name + " " + dir + "/" + name + ".cpp");
}

// A test program exits 1 on any failure, not with their count, which an exit status's 8 bits
// would wrap: 256 failures would exit 0. (Its summary line stays in its own output: this
// program's would be counted by .ci/run.)
static void test_a_test_program_with_256_failures_exits_1(void) {
    std::string dir = unity_temp_dir();
    Result built = build_unity_program(dir, "many", "static void fails(void) { TEST_ASSERT(false); }\n",
                                       "    for (int i = 0; i < 256; i++) RUN_TEST(fails);\n");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, built.status, built.out.c_str());
    Result r = shell(dir + "/many");
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, r.status, "the exit status of 256 failures");
    TEST_ASSERT_TRUE(contains(r.out, "\n256 Tests 256 Failures 0 Ignored\nFAIL\n"));
}

// unity_temp_dir's directories go when every test passed, and stay, named, when one failed
// (here a program's two tests each write a file in one and print its path)
static void test_a_test_programs_files_are_removed_unless_a_test_failed(void) {
    std::string dir = unity_temp_dir();
    Result built = build_unity_program(dir, "files",
                                       "static void writes(const char* name) {\n"
                                       "    std::string made = unity_temp_dir();\n"
                                       "    std::ofstream(made + \"/file\") << name;\n"
                                       "    printf(\"made %s\\n\", made.c_str());\n"
                                       "}\n"
                                       "static void passes(void) { writes(\"passes\"); }\n"
                                       "static void fails(void) { writes(\"fails\"); TEST_ASSERT(false); }\n",
                                       "    RUN_TEST(passes);\n    RUN_TEST(fails);\n");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, built.status, built.out.c_str());
    Result passed = shell(dir + "/files passes");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, passed.status, passed.out.c_str());
    std::string made = lines(passed.out)[0].substr(strlen("made "));
    TEST_ASSERT_MESSAGE(made.rfind("/tmp/files_", 0) == 0 && !exists(made) && !exists(made.substr(0, made.rfind('/'))), passed.out.c_str());
    Result failed = shell(dir + "/files");
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, failed.status, failed.out.c_str());
    std::string program_files = lines(failed.out)[0].substr(strlen("made "));
    program_files = program_files.substr(0, program_files.rfind('/'));
    TEST_ASSERT_MESSAGE(contains(failed.out, "\nthe tests' files are kept in " + program_files + "\n"), failed.out.c_str());
    TEST_ASSERT_EQUAL_INT(0, shell("grep -q fails " + program_files + "/*/file && grep -q passes " + program_files + "/*/file && rm -r " + program_files).status);
}

// a passing test that took a second or more says how long; a quicker one says nothing more
static void test_a_slow_test_says_how_long_it_took(void) {
    std::string dir = unity_temp_dir();
    Result built = build_unity_program(dir, "timed", "#include <thread>\n"
                                       "static void quick(void) {}\n"
                                       "static void slow(void) { std::this_thread::sleep_for(std::chrono::milliseconds(1200)); }\n",
                                       "    RUN_TEST(quick);\n    RUN_TEST(slow);\n");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, built.status, built.out.c_str());
    Result r = shell(dir + "/timed");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    std::vector<std::string> printed = lines(r.out);
    TEST_ASSERT_MESSAGE(printed.size() > 2 && printed[0] == dir + "/timed.cpp:7:quick:PASS", r.out.c_str());
    double seconds = 0;
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, sscanf(printed[1].c_str(), (dir + "/timed.cpp:8:slow:PASS (%lf s)").c_str(), &seconds), r.out.c_str());
    TEST_ASSERT_MESSAGE(seconds >= 1.2 && seconds < 60, r.out.c_str());
}

// .ci/run's line, from a `make` on the PATH that prints LOG and exits with STATUS for `make test`
// (and lists three test programs when asked for the Makefile's TESTS): its last line
static std::string ci_line(const std::string& log, int status) {
    std::string dir = unity_temp_dir();
    std::ofstream(dir + "/make") << "#!/bin/sh\nif [ \"$1\" = test ]; then cat " + dir + "/log; exit " + std::to_string(status) +
                                         "; fi\necho test/test_a test/test_b test/test_c\n";
    std::ofstream(dir + "/log") << log;
    Result r = shell("{ chmod +x " + dir + "/make && PATH=" + dir + ":$PATH .ci/run; echo \"exit $?\"; }");
    std::vector<std::string> printed = lines(r.out);
    return printed.size() < 2 ? "(fewer than two lines)" : printed[printed.size() - 2] + " / " + printed.back();
}

// .ci/run totals the summary lines alone: a program's own line that starts with "== " (a sweep
// log's, say) is no program, and every program of the Makefile's TESTS that printed no summary
// fails: one that never built, even beside another program's failure
static void test_ci_totals_every_program_the_makefile_lists(void) {
    std::string all_ran = "== test/test_a\n3 Tests 0 Failures 0 Ignored\nOK\n== test/test_b\n== 2026-11-28 10:00:00 ./train --task copy\n"
                          "2 Tests 0 Failures 1 Ignored\nOK\n== test/test_c\n1 Tests 0 Failures 0 Ignored\nOK\n";
    TEST_ASSERT_EQUAL_STRING("5 passed, 0 failed, 1 skipped / exit 0", ci_line(all_ran, 0));
    std::string one_unbuilt = "== test/test_a\n3 Tests 1 Failures 0 Ignored\nFAIL\n== test/test_b\n2 Tests 0 Failures 0 Ignored\nOK\n"
                              "make[1]: *** [Makefile:80: test/test_c] Error 1\n";
    TEST_ASSERT_EQUAL_STRING("4 passed, 2 failed, 0 skipped / exit 2", ci_line(one_unbuilt, 2));
    std::string one_died = "== test/test_a\n3 Tests 0 Failures 0 Ignored\nOK\n== test/test_b\n2 Tests 0 Failures 0 Ignored\nOK\n== test/test_c\n";
    TEST_ASSERT_EQUAL_STRING("5 passed, 1 failed, 0 skipped / exit 2", ci_line(one_died, 2));
}

// A real single-node Slurm: dev/slurm_test.sh exits 77 with the reason where it can not have one.
static void test_a_sweep_runs_as_a_slurm_job_array(void) {
    Result r = shell("dev/slurm_test.sh");
    if (r.status == 77) {
        std::string reason = r.out.substr(r.out.rfind("SKIPPED"));
        TEST_IGNORE_MESSAGE(reason.c_str());
    }
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "PASSED: 4 runs"), r.out.c_str());
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_a_grid_runs_reports_and_is_skipped_when_run_again);
    RUN_TEST(test_an_interrupted_grid_resumes_and_restarts_its_runs);
    RUN_TEST(test_a_resumed_run_keeps_its_evaluation_flags);
    RUN_TEST(test_a_failed_run_is_named_and_the_others_finish);
    RUN_TEST(test_a_run_that_can_not_start_stops_the_sweep_before_any_run);
    RUN_TEST(test_a_finished_run_shows_its_test_accuracy_rounded);
    RUN_TEST(test_lists_with_an_empty_or_repeated_item_are_refused);
    RUN_TEST(test_a_killed_sweep_stops_its_runs);
    RUN_TEST(test_a_run_another_process_holds_is_skipped);
    RUN_TEST(test_two_sweeps_of_one_tree_each_count_their_own_runs);
    RUN_TEST(test_a_resumed_run_is_checked_by_its_own_device_line);
    RUN_TEST(test_a_run_on_other_threads_is_finished_with_a_warning);
    RUN_TEST(test_a_run_that_fails_after_its_results_failed);
    RUN_TEST(test_runs_side_by_side_never_oversubscribe_the_cores);
    RUN_TEST(test_a_sweep_runs_k_runs_at_a_time);
    RUN_TEST(test_bad_sweep_options_get_one_clear_line);
    RUN_TEST(test_sweep_throughput_names_a_failed_sweep_and_refuses_bad_entries);
    RUN_TEST(test_grid_hours_multiplies_each_tasks_bench_by_its_runs);
    RUN_TEST(test_the_slurm_script_has_one_array_task_per_run);
    RUN_TEST(test_a_grid_is_every_combination_of_its_axes_and_the_papers_by_default);
    RUN_TEST(test_a_run_listed_with_other_flags_is_refused);
    RUN_TEST(test_a_slurm_sweep_is_submitted_with_its_job_id_and_paths_as_they_are);
    RUN_TEST(test_reproduce_lays_out_the_chomsky_part);
    RUN_TEST(test_reproduce_beyond_scales_a_rope_run_once_it_has_finished);
    RUN_TEST(test_reproduce_far_tests_each_finished_run_to_500);
    RUN_TEST(test_reproduce_farrandom_draws_positions_below_2048);
    RUN_TEST(test_reproduce_chomskydrawn_evaluates_drawn_and_counted);
    RUN_TEST(test_reproduce_steps_tests_each_snapshot_to_500);
    RUN_TEST(test_reproduce_lays_out_the_grid_ablation_sorted_and_far_parts);
    RUN_TEST(test_a_relative_sweep_path_is_the_callers);
    RUN_TEST(test_a_test_program_with_256_failures_exits_1);
    RUN_TEST(test_a_test_programs_files_are_removed_unless_a_test_failed);
    RUN_TEST(test_a_slow_test_says_how_long_it_took);
    RUN_TEST(test_ci_totals_every_program_the_makefile_lists);
    RUN_TEST(test_a_sweep_runs_as_a_slurm_job_array);
    return UNITY_END();
}
