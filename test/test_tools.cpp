// Tests of the dev/ scripts that read a sweep's runs, as a user runs them (./train and the dev/
// tools must be built): dev/parity_counts.sh's table on a decoding with known cells, and on a
// run's model; dev/answer_lengths.sh's, dev/first_error.sh's, dev/scratchpad_steps.sh's,
// dev/sort_misses.sh's, dev/sum_answers.sh's, dev/lego_depths.sh's and dev/length_ranges.sh's
// tables on decodings and tallies with known answers; dev/shuffle_answers.sh on two short sum
// runs; dev/t5_clamp.sh on a T5 run's model; dev/analyses.sh and dev/cope_inside.sh on short runs.
// Each refuses bad input with one line.
#include <algorithm>
#include <cstring>
#include <tuple>

#include "test/shell.h"

// dev/parity_counts.sh, the parity analysis (it lives beside the sweep it reads)

// a saved decoding as ./train --sample prints it: (split, length's bits, right) per example
static std::string parity_decoding(std::vector<std::tuple<const char*, const char*, bool>> examples) {
    std::string text = "greedy decoding (KV cache) of the first 3 examples of each split:\n";
    for (const auto& [split, bits, right] : examples) {
        int length = (int)(strlen(bits) + 3) / 4;  // "1 , 0 , 1"
        text += std::string(right ? "[right] " : "[wrong] ") + split + " (length " + std::to_string(length) + ")\n" +
                "  prompt: Is the number of 1's even in the sequence [ " + bits + " ] ?\n" +
                "  gold:   The answer is Yes .\n  model:  The answer is No .\n";
    }
    return text;
}

// Test examples: 9 bits with two 1s twice right, 10 bits with two 1s wrong, with three 1s once
// right and once wrong. By count: two 1s 2 of 3 alike, three 1s 1 of 2: 3 of 5 follow their
// count's majority. By (length, count): 2 + 1 + 1 of 5. Valid's 3 bits all 1s has its cell too.
static void test_parity_counts_tabulates_a_decoding_by_length_and_count(void) {
    std::string path = unity_temp_dir() + "/decoding.txt";
    std::ofstream(path) << parity_decoding({{"valid", "1 , 0 , 1", true},
                                            {"valid", "1 , 1 , 1", true},
                                            {"test", "1 , 1 , 0 , 0 , 0 , 0 , 0 , 0 , 0", true},
                                            {"test", "0 , 0 , 0 , 0 , 0 , 0 , 0 , 1 , 1", true},
                                            {"test", "0 , 0 , 0 , 0 , 0 , 0 , 0 , 0 , 1 , 1", false},
                                            {"test", "1 , 0 , 0 , 0 , 0 , 0 , 0 , 0 , 1 , 1", false},
                                            {"test", "1 , 1 , 1 , 0 , 0 , 0 , 0 , 0 , 0 , 0", true}});
    Result r = shell("dev/parity_counts.sh " + path);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "5 test examples: the answer is the majority answer of its count of 1s in 0.600 of them, "
                                        "of its (length, count) in 0.800\n"), r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "\n    3 2:1/1 3:1/1\n    9 2:2/2\n   10 2:0/1 3:1/2\n"), r.out.c_str());
}

// a real run's model, decoded; and what is not a parity decoding is refused with one line
static void test_parity_counts_decodes_a_run_and_refuses_other_tasks(void) {
    std::string root = unity_temp_dir() + "/parity";
    Result sweep = shell("dev/sweep.sh " + root + " --tasks parity,copy --pes nope --seeds 7 --threads 1 --device cpu --no-report" + SHORT_RUNS);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, sweep.status, sweep.out.c_str());
    std::string results = read_file(root + "/parity-nope-s7/results.json");
    Result r = shell("dev/parity_counts.sh --examples 12 --threads 1 " + root + "/parity-nope-s7");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "12 test examples: the answer is the majority answer"), r.out.c_str());
    TEST_ASSERT_EQUAL_STRING(results.c_str(), read_file(root + "/parity-nope-s7/results.json").c_str());  // the run's own, kept

    std::string copy_decoding = unity_temp_dir() + "/copy.txt";
    std::ofstream(copy_decoding) << "[right] test (length 3)\n  prompt: Copy the sequence : a b c [SEP]\n";
    const std::string cases[][2] = {
        {root + "/copy-nope-s7", "is not a parity run"},
        {root + "/nosuch", "is neither a decoding nor a run directory with a model.bin"},
        {copy_decoding, "holds no decoded test example of the parity task"},
        {"", "usage: dev/parity_counts.sh"},
    };
    assert_refusals("dev/parity_counts.sh", cases);
}

// dev/answer_lengths.sh on a saved decoding, named from the directory it is called in: valid
// length 3 right; test length 5 once right, once 3 words short, once 2 long without an <eos>
// (each difference a third of the length's outputs); valid length 4 with one difference too rare
// to list; a scratchpad's words count with the answer's
static void test_answer_lengths_tabulates_a_decoding_by_split_and_length(void) {
    std::string dir = unity_temp_dir(), path = dir + "/decoding.txt";
    std::ofstream(path) << "greedy decoding (KV cache) of the first 3 examples of each split:\n"
                           "[right] valid (length 3)\n  prompt: Copy: a a a [SEP]\n  gold:   a a a\n  model:  a a a\n"
                           "[right] test (length 5)\n  prompt: Copy: b b b b b [SEP]\n  gold:   b b b b b\n  model:  b b b b b\n"
                           "[wrong] test (length 5)\n  prompt: Copy: c c c c c [SEP]\n  gold:   c c c c c\n  model:  c c\n"
                           "[wrong] test (length 5)\n  prompt: Copy: d d d d d [SEP]\n  gold:   d d d d d\n  model:  d d d d d d d (no <eos>)\n"
                           "[wrong] test (length 7, scratchpad right)\n  prompt: Sum: 1 2\n  gold:   1 + 2 Thus, 3\n  model:  1 + 2 Thus, 4\n";
    // valid length 4: 20 right and one a word long, a difference below 5% of the 21, not listed
    for (int i = 0; i < 21; i++)
        std::ofstream(path, std::ios::app) << (i ? "[right]" : "[wrong]") << " valid (length 4)\n  prompt: Copy: e e e e [SEP]\n  gold:   e e e e\n"
                                           << (i ? "  model:  e e e e\n" : "  model:  e e e e e\n");
    Result r = shell_in(dir, "dev/answer_lengths.sh decoding.txt");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "\n  valid       3        1   1.00        3.0         3.0     0.00    0.00  +0:1.00\n"
                                        "  valid       4       21   0.95        4.0         4.0     0.00    0.05  +0:0.95\n"
                                        "  test        5        3   0.33        5.0         4.7     0.33    0.33  -3:0.33 +0:0.33 +2:0.33\n"
                                        "  test        7        1   0.00        5.0         5.0     0.00    0.00  +0:1.00\n"),
                        r.out.c_str());
    std::string empty = unity_temp_dir() + "/empty.txt";
    std::ofstream(empty) << "valid accuracy 1.0\n";
    const std::string cases[][2] = {
        {empty, "holds no decoded example"},
        {unity_temp_dir() + "/nosuch", "is neither a decoding nor a run directory with a model.bin"},
        {"", "usage: dev/answer_lengths.sh"},
    };
    assert_refusals("dev/answer_lengths.sh", cases);
}

// The decoding tools decode a run's model as it trained: with --precision bf16 and --attention
// fused when its config.json says so (a checkpoint records neither), and with neither otherwise
static void test_decodings_compute_in_the_runs_own_arithmetic(void) {
    std::string bf16_fused = unity_temp_dir() + "/bf16-fused", plain = unity_temp_dir() + "/plain";
    shell("mkdir -p " + bf16_fused + " " + plain);
    std::ofstream(bf16_fused + "/config.json") << "{\n  \"precision\": \"bf16\",\n  \"attention\": \"fused\"\n}\n";
    std::ofstream(plain + "/config.json") << "{\n  \"precision\": \"fp32\",\n  \"attention\": \"simple\"\n}\n";
    auto arithmetic = [](const std::string& run) { return shell("bash -c 'source dev/decoding.sh && trained_arithmetic " + run + "'"); };
    Result r = arithmetic(bf16_fused);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_EQUAL_STRING("--precision\nbf16\n--attention\nfused\n", r.out.c_str());
    r = arithmetic(plain);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_EQUAL_STRING("", r.out.c_str());
}

// dev/analyses.sh on a short copy sweep of the five PEs (seed 256788) and NoPE of a second seed:
// each model's attention dumped once into SWEEP/attention/, then the distance from NoPE of every
// other model (NoPE of the second seed some distance from it: compared with NoPE, not itself), the
// histogram of the five and a heatmap of each; without all three arguments, its usage
static void test_analyses_dump_every_model_and_compare_them(void) {
    std::string root = unity_temp_dir(), sweep = root + "/sweep", out = root + "/out";
    Result r = shell("dev/sweep.sh " + sweep + " --tasks copy --seeds 256788 --threads 1 --device cpu --no-report" + SHORT_RUNS +
                     " && dev/sweep.sh " + sweep + " --tasks copy --pes nope --seeds 234054 --threads 1 --device cpu --no-report" +
                     SHORT_RUNS + " && dev/analyses.sh " + sweep + " copy " + out);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    std::string distance = read_file(out + "/distance.tsv");
    TEST_ASSERT_EQUAL_INT(0, distance.rfind("length\tape\tt5\talibi\trope\tnope-s234054\n2\t", 0));
    std::string length_2 = lines(distance)[1];
    TEST_ASSERT_MESSAGE(atof(length_2.substr(length_2.rfind('\t') + 1).c_str()) > 0, distance.c_str());
    TEST_ASSERT_EQUAL_INT(0, read_file(out + "/histogram.tsv").rfind("from\tto\tnope\tape\tt5\talibi\trope\n", 0));
    for (const char* pe : {"nope", "ape", "t5", "alibi", "rope"}) {
        TEST_ASSERT_MESSAGE(exists(out + "/" + pe + ".test.svg"), pe);
        TEST_ASSERT_MESSAGE(exists(sweep + "/attention/copy-" + pe + "-s256788.bin"), pe);
    }
    TEST_ASSERT_TRUE(exists(sweep + "/attention/copy-nope-s234054.bin"));
    // a dump is made again, not read, where its FILE.test.svg (./train's last write) is missing (a
    // dump killed midway) or older than its model.bin (made while the run trained on); here the
    // dump itself is spoilt too, which a remade one mends. None is left under its temporary name.
    // (older than the model itself, not than now: a slow build, under the sanitizers, trains
    // more than a minute before this)
    std::string dump = sweep + "/attention/copy-t5-s256788.bin", model = sweep + "/copy-t5-s256788/model.bin";
    for (std::string spoil : {std::string("rm "), "touch -d @$(( $(stat -c %Y " + model + ") - 60 )) "}) {
        TEST_ASSERT_EQUAL_INT(0, shell("{ printf cut > " + dump + "; } && " + spoil + dump + ".test.svg").status);
        r = shell("dev/analyses.sh " + sweep + " copy " + out);
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
        TEST_ASSERT_GREATER_THAN(1000, read_file(dump).size());
        TEST_ASSERT_FALSE(exists(dump + ".tmp"));
    }
    for (std::string arguments : {sweep, sweep + " copy"}) {
        Result bad = shell("dev/analyses.sh " + arguments);
        TEST_ASSERT_EQUAL_INT(1, bad.status);
        TEST_ASSERT_MESSAGE(contains(bad.out, "usage: dev/analyses.sh SWEEP TASK OUT"), bad.out.c_str());
    }
    // a task the sweep does not hold, or a second seed it does not hold: refused before anything
    // is written
    Result bad = shell("dev/analyses.sh " + sweep + " reverse " + root + "/out2");
    TEST_ASSERT_EQUAL_INT(1, bad.status);
    TEST_ASSERT_MESSAGE(contains(bad.out, "no " + sweep + "/reverse-nope-s256788/model.bin"), bad.out.c_str());
    TEST_ASSERT_FALSE(exists(root + "/out2"));
    bad = shell("dev/analyses.sh " + sweep + " copy " + root + "/out2 256788 999");
    TEST_ASSERT_EQUAL_INT(1, bad.status);
    TEST_ASSERT_MESSAGE(contains(bad.out, "no " + sweep + "/copy-nope-s999/model.bin"), bad.out.c_str());
    TEST_ASSERT_FALSE(exists(root + "/out2"));
}

// dev/cope_inside.sh over a beyond sweep holding one of its CoPE models (a short parity run), in
// a directory whose path holds a space: that model's positions, attends and the 15 edits of its
// table are written (the first, FROM 12 with PERIOD 2, what ./train says of the model
// dev/table_extend edits that way), and every model the sweep does not hold is named as left out;
// a model whose dump fails (here a damaged copy model) stops it with ./train's line, after the
// parity model's dump, spoilt and dated before its model.bin, is made again; a ROOT without
// beyond/, or whose beyond/ holds no CoPE parity model, is refused
static void test_cope_inside_looks_at_the_models_there_are(void) {
    std::string root = unity_temp_dir() + "/a root", out = root + "/out";
    Result r = shell("./train --task ch_parity_check --pe cope --seed 256788 --threads 1 --device cpu --out '" + root +
                     "/beyond/ch_parity_check/ch_parity_check-cope-s256788'" + SHORT_RUNS.substr(3) + " > /dev/null && dev/cope_inside.sh '" +
                     root + "' '" + out + "'");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    std::string positions = read_file(out + "/parity-cope/positions.txt"), extend = read_file(out + "/parity-cope/extend.tsv");
    TEST_ASSERT_MESSAGE(contains(positions, "cope-s256788"), positions.c_str());
    TEST_ASSERT_EQUAL_INT_MESSAGE(16, std::count(extend.begin(), extend.end(), '\n'), extend.c_str());  // the heading and 15 edits
    std::string model = root + "/beyond/ch_parity_check/ch_parity_check-cope-s256788/model.bin", edited = root + "/edited";
    Result made = shell("dev/table_extend '" + model + "' 12 2 '" + edited + ".bin' > /dev/null && ./train --load '" + edited +
                        ".bin' --device cpu --threads 1 --out '" + edited + "' > /dev/null");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, made.status, made.out.c_str());
    std::string results = read_file(edited + "/results.json");
    auto accuracy = [&results](const std::string& split) {  // as results.json writes it
        std::string opening = "\"" + split + "\": {\"accuracy\": ";
        size_t at = results.find(opening) + opening.size();
        return results.substr(at, results.find(',', at) - at);
    };
    std::string first_edit = "model\tfrom\tperiod\tvalid\ttest\ncope-s256788\t12\t2\t" + accuracy("valid") + "\t" + accuracy("test") + "\n";
    TEST_ASSERT_MESSAGE(extend.rfind(first_edit, 0) == 0, (first_edit + " in\n" + extend).c_str());
    TEST_ASSERT_TRUE(exists(out + "/parity-cope/attends-test/attends.tsv"));
    TEST_ASSERT_FALSE(exists(out + "/copy-cope/positions.txt"));
    int left_out = 0;
    for (size_t at = r.out.find("left out\n"); at != std::string::npos; at = r.out.find("left out\n", at + 1)) left_out++;
    TEST_ASSERT_EQUAL_INT_MESSAGE(8, left_out, r.out.c_str());  // 5 parity models, copy's, reverse's 2

    std::string copy = root + "/beyond/copy/copy-cope-s256788", dump = root + "/attention/ch_parity_check-cope-s256788.bin";
    r = shell("{ printf cut > '" + dump + "'; } && touch -d @$(( $(stat -c %Y '" + model + "') - 60 )) '" + dump + ".test.svg' && mkdir -p '" +
              copy + "' && { printf damaged > '" + copy + "/model.bin'; } && dev/cope_inside.sh '" + root + "' '" + out + "'");
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "train: error: ") && !contains(r.out, "wrote "), r.out.c_str());
    TEST_ASSERT_GREATER_THAN(1000, read_file(dump).size());

    // a ROOT with no beyond/: refused, nothing written there
    Result bad = shell("dev/cope_inside.sh '" + out + "' '" + root + "/out2'");
    TEST_ASSERT_EQUAL_INT(1, bad.status);
    TEST_ASSERT_MESSAGE(contains(bad.out, out + " holds no beyond/"), bad.out.c_str());
    TEST_ASSERT_FALSE(exists(out + "/attention") || exists(root + "/out2"));
    // a beyond/ without a CoPE parity model: refused with one line, no OUT made
    shell("mkdir -p '" + root + "/empty/beyond'");
    bad = shell("dev/cope_inside.sh '" + root + "/empty' '" + root + "/out3'");
    TEST_ASSERT_EQUAL_INT(1, bad.status);
    TEST_ASSERT_MESSAGE(contains(bad.out, "no CoPE parity model under") && !contains(bad.out, "dev/attention"), bad.out.c_str());
    TEST_ASSERT_FALSE(exists(root + "/out3"));
}

// dev/first_error.sh on a saved decoding, named from the directory it is called in: valid length
// 3 right; test length 4 (prompts of 7 words) once right, once stopped after two words (the
// first wrong is the <eos> at answer word 2, sequence token 7 + 2), once run on past the gold
// without an <eos> (word 4, token 11) and once wrong at word 1 (token 8); valid length 5 wrong
// at word 0 in 20 of 21 and at word 3 once, too rare to list
static void test_first_error_places_the_first_wrong_word(void) {
    std::string dir = unity_temp_dir(), path = dir + "/decoding.txt";
    std::ofstream(path) << "greedy decoding (KV cache) of the first 4 examples of each split:\n"
                           "[right] valid (length 3)\n  prompt: Copy : a a a [SEP]\n  gold:   a a a\n  model:  a a a\n"
                           "[right] test (length 4)\n  prompt: Copy : b b b b [SEP]\n  gold:   b b b b\n  model:  b b b b\n"
                           "[wrong] test (length 4)\n  prompt: Copy : c c c c [SEP]\n  gold:   c c c c\n  model:  c c\n"
                           "[wrong] test (length 4)\n  prompt: Copy : d d d d [SEP]\n  gold:   d d d d\n  model:  d d d d d (no <eos>)\n"
                           "[wrong] test (length 4)\n  prompt: Copy : e e e e [SEP]\n  gold:   e e e e\n  model:  e x e e\n";
    for (int i = 0; i < 21; i++)
        std::ofstream(path, std::ios::app) << "[wrong] valid (length 5)\n  prompt: Copy : f f f f f [SEP]\n  gold:   f f f f f\n"
                                           << (i ? "  model:  x f f f f\n" : "  model:  f f f x f\n");
    Result r = shell_in(dir, "dev/first_error.sh decoding.txt");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "decoding.txt:\n  split  length examples  wrong  first wrong word: at answer word | at sequence token\n"
                                        "  valid       3        1   0.00  - | -\n"
                                        "  valid       5       21   1.00  0:0.95 | 8:0.95\n"
                                        "  test        4        4   0.75  1:0.33 2:0.33 4:0.33 | 8:0.33 9:0.33 11:0.33\n"),
                        r.out.c_str());
    std::string empty = dir + "/empty.txt";
    std::ofstream(empty) << "valid accuracy 1.0\n";
    const std::string cases[][2] = {
        {empty, "holds no decoded example"},
        {dir + "/nosuch", "is neither a decoding nor a run directory with a model.bin"},
        {"", "usage: dev/first_error.sh"},
    };
    assert_refusals("dev/first_error.sh", cases);
}

// dev/scratchpad_steps.sh on a saved decoding with the full scratchpad: sum at test length 4, one
// example right and seven wrong in known places (each its own step and part, or only in the
// answer; two at the steps' end, one writing `#` there, one writing `.` and then more words
// before "Thus,"); the share of wrong answers and of wrong scratchpads apart; and a parity example
// wrong in its list of remaining bits
static void test_scratchpad_steps_places_the_first_wrong_step_and_part(void) {
    const std::string steps[] = {"in 5 comp 5 + sum = 5 + 0 = out 5 [ sum: 5 = 5 ] re 5 + 6 + 1",
                                 "in 5 comp 5 + sum = 5 + 5 = out 1 0 [ sum: 1 0 = 0 ] re 6 + 1",
                                 "in 6 comp 6 + sum = 6 + 0 = out 6 [ sum: 6 = 6 ] re 1", "in 1 comp 1 + sum = 1 + 6 = out 7 [ sum: 7 = 7 ] re"};
    auto target = [](std::vector<std::string> written, const char* answer) {
        std::string out = "Thinking step by step: " + written[0];
        for (size_t i = 1; i < written.size(); i++) out += " # " + written[i];
        return out + " . Thus, The answer is " + answer + " .";
    };
    auto replaced = [](std::string text, const std::string& from, const std::string& to) { return text.replace(text.find(from), from.size(), to); };
    std::string gold = target({steps[0], steps[1], steps[2], steps[3]}, "7");
    const std::pair<const char*, std::string> outputs[] = {
        {"right", gold},
        {"wrong", target({steps[0], steps[1]}, "0")},                                                     // stops early: step 3, '#'
        {"right", target({steps[0], replaced(steps[1], "re 6 + 1", "re 6 + 6"), steps[2], steps[3]}, "7")},  // step 2, re
        {"right", target({replaced(steps[0], "= 5 ]", "= 6 ]"), steps[1], steps[2], steps[3]}, "7")},        // step 1, vars
        {"wrong", target({steps[0], steps[1], steps[2], steps[3], "in 1 comp 1 + sum = 1 + 7 = out 8 [ sum: 8 = 8 ] re"}, "8")},  // step 5, '.'
        {"right", replaced(gold, " . Thus,", " . # Thus,")},                                              // step 5, '.' too
        {"wrong", target({steps[0], steps[1], steps[2], steps[3]}, "8")},                                 // only the answer
        {"wrong", replaced(gold, "step by step", "step step")},                                           // step 0, preamble
    };
    std::string dir = unity_temp_dir(), path = dir + "/decoding.txt";
    std::ofstream decoding(path);
    decoding << "greedy decoding (KV cache) of the first 8 examples of each split:\n"
             << "[right] valid (length 1, scratchpad right)\n  prompt: Compute: 3 . [SEP]\n"
             << "  gold:   " << target({"in 3 comp 3 + sum = 3 + 0 = out 3 [ sum: 3 = 3 ] re"}, "3") << "\n"
             << "  model:  " << target({"in 3 comp 3 + sum = 3 + 0 = out 3 [ sum: 3 = 3 ] re"}, "3") << "\n";
    // parity's remaining input is a list in brackets: a `[` that opens no `name:` stays in `re`
    const std::string parity = "Thinking step by step: in 1 comp 1 ** par = 1 ** 0 out 1 [ par: 1 ] re [ 0 ] # "
                               "in 0 comp 0 ** par = 0 ** 1 out 1 [ par: 1 ] re [ ] . Thus, The answer is No .";
    decoding << "[right] valid (length 2)\n  prompt: Is the number of 1's even in the sequence [ 1 , 0 ] ?\n  gold:   " << parity
             << "\n  model:  " << replaced(parity, "re [ 0 ]", "re [ 1 ]") << "\n";
    for (const auto& [tag, said] : outputs)
        decoding << "[" << tag << "] test (length 4)\n  prompt: Compute: 5 + 5 + 6 + 1 . [SEP]\n  gold:   " << gold << "\n  model:  " << said << "\n";
    decoding.close();
    Result r = shell_in(dir, "dev/scratchpad_steps.sh decoding.txt");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "decoding.txt:\n  split  length examples answer  steps  wrong; the first wrong word of the steps: at step | in part\n"
                                        "  valid       1        1   0.00   0.00  - | -\n"
                                        "  valid       2        1   0.00   1.00  1:1.00 | re:1.00\n"
                                        "  test        4        8   0.50   0.75  0:0.17 1:0.17 2:0.17 3:0.17 5:0.33 | "
                                        "preamble:0.17 vars:0.17 re:0.17 #:0.17 .:0.33\n"),
                        r.out.c_str());
    std::string plain = dir + "/plain.txt", empty = dir + "/empty.txt";
    std::ofstream(plain) << "[right] test (length 2)\n  prompt: Copy : a a [SEP]\n  gold:   a a\n  model:  a a\n";
    std::ofstream(empty) << "valid accuracy 1.0\n";
    const std::string cases[][2] = {
        {plain, "targets have no scratchpad (no Thus,)"},
        {empty, "holds no decoded example"},
        {dir + "/nosuch", "is neither a decoding nor a run directory with a model.bin"},
        {"", "usage: dev/scratchpad_steps.sh"},
    };
    assert_refusals("dev/scratchpad_steps.sh", cases);
}

// "5% or more" in dev/answer_lengths.sh, dev/first_error.sh and dev/scratchpad_steps.sh includes
// 5% itself: at test length 1 (prompts of 4 words), 20 wrong scratchpads, 19 with a wrong `out`
// (answer word 16, sequence token 20, step 1; as long as the gold) and one a word short in the
// preamble (word 2, token 6, step 0): each tool lists the one at 0.05
static void test_decoding_tools_list_a_place_that_exactly_5_percent_share(void) {
    const std::string gold = "Thinking step by step: in 3 comp 3 + sum = 3 + 0 = out 3 [ sum: 3 = 3 ] re . Thus, The answer is 3 .",
                      wrong_out = "Thinking step by step: in 3 comp 3 + sum = 3 + 0 = out 4 [ sum: 4 = 4 ] re . Thus, The answer is 4 .",
                      short_preamble = "Thinking step step: in 3 comp 3 + sum = 3 + 0 = out 4 [ sum: 4 = 4 ] re . Thus, The answer is 4 .";
    std::string dir = unity_temp_dir();
    std::ofstream decoding(dir + "/decoding.txt");
    for (int i = 0; i < 20; i++)
        decoding << "[wrong] test (length 1)\n  prompt: Compute: 3 . [SEP]\n  gold:   " << gold << "\n  model:  " << (i ? wrong_out : short_preamble) << "\n";
    decoding.close();
    const std::string rows[][2] = {
        {"dev/answer_lengths.sh", "  test        1       20   0.00       31.0        30.9     0.05    0.00  -1:0.05 +0:0.95\n"},
        {"dev/first_error.sh", "  test        1       20   1.00  2:0.05 16:0.95 | 6:0.05 20:0.95\n"},
        {"dev/scratchpad_steps.sh", "  test        1       20   1.00   1.00  0:0.05 1:0.95 | preamble:0.05 out:0.95\n"},
    };
    for (const auto& [tool, row] : rows) {
        Result r = shell_in(dir, tool + " decoding.txt");
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
        TEST_ASSERT_MESSAGE(contains(r.out, row), (tool + ":\n" + r.out).c_str());
    }
}

// a decoded sort example: "[TAG] SPLIT (length N)" and its lines, the model's list closed unless
// it ran out without an <eos>
static std::string sort_example(const char* tag, const char* split, const std::string& prompt, const std::string& gold,
                                const std::string& said, bool eos = true) {
    auto list = [](const std::string& items) {
        std::string out;
        for (char c : items) out += std::string(out.empty() ? "" : " , ") + c;
        return out;
    };
    return std::string("[") + tag + "] " + split + " (length " + std::to_string(prompt.size()) + ")\n  prompt: Sort the following list [ " +
           list(prompt) + " ] .\n  gold:   The sorted list is [ " + list(gold) + " ] .\n  model:  The sorted list is [ " + list(said) +
           (eos ? " ] .\n" : " (no <eos>)\n");
}

// dev/sort_misses.sh on a saved decoding over the symbols a..n, whose order it reads off the
// gold answers (the valid example lists all fourteen): at test length 4 the model writes one of
// two a's (a repeat missed), c (2 above a) and not e (2 above c), ending without an <eos>; at
// length 3 it misses e (4 above a) and writes n (9 above e), then writes f (5 above a) and misses
// n (8 above f, the widest step of +5-8); each item also counted by its third of the prompt's
// places
static void test_sort_misses_tabulates_the_items_left_out(void) {
    std::string dir = unity_temp_dir(), path = dir + "/decoding.txt";
    std::ofstream(path) << "greedy decoding (KV cache) of the first 3 examples of each split:\n"
                        << sort_example("right", "valid", "nmlkjihgfedcba", "abcdefghijklmn", "abcdefghijklmn")
                        << sort_example("wrong", "test", "eaac", "aace", "ac", false) << sort_example("wrong", "test", "nea", "aen", "an")
                        << sort_example("wrong", "test", "fan", "afn", "af");
    Result r = shell_in(dir, "dev/sort_misses.sh decoding.txt");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "repeat     +1     +2   +3-4   +5-8    +9-   first middle   last\n"
                                        "  valid      14        1    1.00       -   1.00      -      -      -      -    1.00   1.00   1.00\n"
                                        "  test        3        2    0.67       -      -      -   0.00   0.50   1.00    1.00   0.50   0.50\n"
                                        "  test        4        1    0.50    0.00      -   0.50      -      -      -    0.50   0.00   1.00\n"),
                        r.out.c_str());

    std::string copy = dir + "/copy.txt", multi = dir + "/multi.txt", unordered = dir + "/unordered.txt", empty = dir + "/empty.txt";
    std::ofstream(copy) << "[right] test (length 3)\n  prompt: Copy : a b c [SEP]\n  gold:   a b c\n  model:  a b c\n";
    std::ofstream(multi) << "[right] test (length 2)\n  prompt: Sort the following list [ 1 2 , 3 ] .\n"
                            "  gold:   The sorted list is [ 3 , 1 2 ] .\n  model:  The sorted list is [ 3 , 1 2 ] .\n";
    std::ofstream(unordered) << sort_example("right", "test", "ca", "ac", "ac") << sort_example("right", "test", "cb", "bc", "bc");  // a or b first?
    std::ofstream(empty) << "valid accuracy 1.0\n";
    const std::string cases[][2] = {
        {copy, "whose prompt or gold answer has no list in brackets: not a sort decoding"},
        {multi, "lists items of more than one word (sort_multi)"},
        {unordered, "does not fix the sort order of its symbols"},
        {empty, "holds no decoded example"},
        {dir + "/nosuch", "is neither a decoding nor a run directory with a model.bin"},
        {"", "usage: dev/sort_misses.sh"},
    };
    assert_refusals("dev/sort_misses.sh", cases);
}

// a run directory of the copy task (its config.json and an empty model.bin), for the refusals
// of the tools that read one task's runs
static void make_copy_run(const std::string& dir) {
    Result made = shell("mkdir -p " + dir + " && touch " + dir + "/model.bin && echo '{\"task\": \"copy\"}' > " + dir + "/config.json");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, made.status, made.out.c_str());
}

// a decoded sum example: "[TAG] SPLIT (length N)" and its lines, the numbers joined by " + "
static std::string sum_example(const char* tag, const char* split, const std::string& numbers, int gold, const std::string& said) {
    std::string prompt;
    for (char c : numbers) prompt += std::string(prompt.empty() ? "" : " + ") + c;
    return std::string("[") + tag + "] " + split + " (length " + std::to_string(numbers.size()) + ")\n  prompt: Compute: " + prompt +
           " . [SEP]\n  gold:   The answer is " + std::to_string(gold) + " .\n  model:  " + said + "\n";
}

// a decoded LEGO example: variables a, b, c, ... set by `signs` ("+-+": a = +1 , b = - a , c = + b),
// the one at `depth` asked, its gold resolved here, and the model's answer `said` (+1 or -1)
static std::string lego_example(const char* split, const std::string& signs, size_t depth, int said) {
    std::string prompt = "If ";
    int value = 0, asked = 0;
    for (size_t i = 0; i < signs.size(); i++) {
        std::string name(1, (char)('a' + i)), sign(1, signs[i]);
        prompt += (i ? " , " : "") + name + " = " + (i ? sign + " " + std::string(1, (char)('a' + i - 1)) : sign + "1");
        value = (signs[i] == '+' ? 1 : -1) * (i ? value : 1);
        if (i + 1 == depth) asked = value;
    }
    auto answer = [](int v) { return std::string("The answer is ") + (v > 0 ? "+1" : "-1") + " ."; };
    return std::string("[") + (said == asked ? "right" : "wrong") + "] " + split + " (length " + std::to_string(signs.size()) + ")\n  prompt: " +
           prompt + " . Then , what is the value of " + (char)('a' + depth - 1) + " ?\n  gold:   " + answer(asked) + "\n  model:  " +
           answer(said) + "\n";
}

// dev/lego_depths.sh on a saved decoding: at 4 variables (values +1 -1 -1 +1) c asked and answered
// right, d asked and answered wrong, c answered with the last variable's value (unlike: wrong);
// at 4 variables with values +1 +1 -1 -1, c (like the last) answered wrong; at test length 5 the
// last asked, right. The three answers for c are the values of clauses 1 and 2 twice, of 3 and
// 4 once. Then refusals, among them a gold that the chain does not give, and a variable asked that
// the chain never sets (even where its gold is the -1 an unset variable would read as).
static void test_lego_depths_tabulates_by_depth_asked(void) {
    std::string dir = unity_temp_dir(), path = dir + "/decoding.txt";
    std::ofstream(path) << "greedy decoding (KV cache) of the first 4 examples of each split:\n"
                        << lego_example("valid", "+-+-", 3, -1) << lego_example("valid", "+-+-", 4, -1) << lego_example("valid", "+-+-", 3, +1)
                        << lego_example("valid", "++-+", 3, +1) << lego_example("test", "-++++", 5, -1);
    Result r = shell_in(dir, "dev/lego_depths.sh decoding.txt");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "decoding.txt:\n  right/total by split and number of variables (rows), and depth asked (depth:right/total);"
                                        " unlike: among the prompts\n  whose variable asked has the other value than the last variable\n"
                                        "  valid  4: 3:1/3 4:0/1 | unlike: 3:1/2\n"
                                        "  test   5: 5:1/1 | unlike:\n"
                                        "  valid, 4 variables: the share of answers that are the value of clause j, a row per depth asked\n"
                                        "  depth examples     1     2     3     4\n"
                                        "      3        3  0.67  0.67  0.33  0.33\n"
                                        "      4        1  0.00  1.00  1.00  0.00\n"),
                        r.out.c_str());

    std::string other = dir + "/copy-run", empty = dir + "/empty.txt", miswritten = dir + "/miswritten.txt", unset = dir + "/unset.txt";
    make_copy_run(other);
    std::ofstream(empty) << "valid accuracy 1.0\n";
    std::string wrong_gold = lego_example("valid", "+-", 2, -1);
    wrong_gold.replace(wrong_gold.find("gold:   The answer is -1"), 24, "gold:   The answer is +1");
    std::ofstream(miswritten) << wrong_gold;
    std::string unset_asked = lego_example("valid", "+-", 2, -1);
    unset_asked.replace(unset_asked.find("value of b ?"), 12, "value of z ?");
    std::ofstream(unset) << unset_asked;
    const std::string cases[][2] = {
        {other, "is not a lego run (its config.json names another task, or is missing)"},
        {empty, "holds no decoded example of the lego task"},
        {miswritten, "the chain read from \"If a = +1 , b = - a . Then , what is the value of b ?\" does not give its gold"},
        {unset, "the chain read from \"If a = +1 , b = - a . Then , what is the value of z ?\" does not give its gold"},
        {"", "usage: dev/lego_depths.sh"},
    };
    assert_refusals("dev/lego_depths.sh", cases);
}

// dev/sum_answers.sh on a saved decoding: valid 3 + 7 answered 0, right (the last 2 and the
// first 2, off by 0: a 0 is a digit, not "none"), and answered 0 3 (two digits, no sum's: "none",
// not the 0 it starts with); valid 1 + 2 + 3 answered right (the last 3 and
// the first 3, off by 0); at test length 4, 9 + 1 + 2 + 4 answered 7 (the last 3: 2 + 4 + 1; off by
// 1), 5 + 5 + 5 + 5 answered 5 (the last and the first 1 and 3; off by 5), 9 + 1 + 2 + 4
// answered with no digit (no window, though its first 2 sum to 0; "none") and 1 + 1 + 1 + 1
// answered right
static void test_sum_answers_tabulates_windows_and_offsets(void) {
    std::string dir = unity_temp_dir(), path = dir + "/decoding.txt";
    std::ofstream(path) << "greedy decoding (KV cache) of the first 4 examples of each split:\n"
                        << sum_example("right", "valid", "37", 0, "The answer is 0 .") << sum_example("wrong", "valid", "37", 0, "The answer is 0 3 .")
                        << sum_example("right", "valid", "123", 6, "The answer is 6 .") << sum_example("wrong", "test", "9124", 6, "The answer is 7 .")
                        << sum_example("wrong", "test", "5555", 0, "The answer is 5 .")
                        << sum_example("wrong", "test", "9124", 6, "The answer is (no <eos>)")
                        << sum_example("right", "test", "1111", 4, "The answer is 4 .");
    Result r = shell_in(dir, "dev/sum_answers.sh decoding.txt");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_MESSAGE(contains(r.out, "decoding.txt:\n  share of answers that are the sum mod 10 of the last k numbers:\n"
                                        "  split  length examples   k=1   k=2   k=3   k=4\n"
                                        "  valid       2        2  0.00  0.50\n"
                                        "  valid       3        1  0.00  0.00  1.00\n"
                                        "  test        4        4  0.25  0.00  0.50  0.25\n"
                                        "  share of answers that are the sum mod 10 of the first k numbers:\n"
                                        "  split  length examples   k=1   k=2   k=3   k=4\n"
                                        "  valid       2        2  0.00  0.50\n"
                                        "  valid       3        1  0.00  0.00  1.00\n"
                                        "  test        4        4  0.25  0.00  0.25  0.25\n"
                                        "  share of answers that are the sum plus d, mod 10, and with no digit:\n"
                                        "  split  length examples    +0    +1    +2    +3    +4    +5    +6    +7    +8    +9  none\n"
                                        "  valid       2        2  0.50  0.00  0.00  0.00  0.00  0.00  0.00  0.00  0.00  0.00  0.50\n"
                                        "  valid       3        1  1.00  0.00  0.00  0.00  0.00  0.00  0.00  0.00  0.00  0.00  0.00\n"
                                        "  test        4        4  0.25  0.25  0.00  0.00  0.00  0.25  0.00  0.00  0.00  0.00  0.25\n"),
                        r.out.c_str());

    std::string other = dir + "/copy-run", empty = dir + "/empty.txt";
    make_copy_run(other);
    std::ofstream(empty) << "valid accuracy 1.0\n";
    const std::string cases[][2] = {
        {other, "is not a sum run (its config.json names another task, or is missing)"},
        {empty, "holds no decoded example of the sum task"},
        {dir + "/nosuch", "is neither a decoding nor a run directory with a model.bin"},
        {"", "usage: dev/sum_answers.sh"},
        {"--examples 0 " + empty, "--examples takes a whole number above 0, got '0'"},  // decoding.sh's, for every tool
    };
    assert_refusals("dev/sum_answers.sh", cases);
}

// the rows of a dev/shuffle_answers.sh table: split, length, examples, right, orders, right of
// the orders, same, same if wrong and alike
struct OrderRow {
    std::string split;
    int length, examples, orders;
    double right, orders_right, same, same_if_wrong, alike;
};

static std::vector<OrderRow> order_rows(const std::string& out) {
    std::vector<OrderRow> rows;
    std::stringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        OrderRow r = {"", 0, 0, 0, 0, -1, -1, -1, -1};
        char split[8];
        if (sscanf(line.c_str(), " %7s %d %d %lf %d %lf %lf %lf %lf", split, &r.length, &r.examples, &r.right, &r.orders, &r.orders_right,
                   &r.same, &r.same_if_wrong, &r.alike) == 9)
            r.split = split, rows.push_back(r);
    }
    return rows;
}

// dev/shuffle_answers.sh on two sum models: NoPE trained 2 steps, whose output ("[SEP]" again
// and again) depends on the prompt's length alone, answers every order as given (same 1.00),
// every example alike (alike 1.00) and none right; RoPE trained 40 steps answers some orders
// otherwise, and not all examples alike. Neither answers a prompt right, so the share of the
// same wrong answer again ("if-wrong") is "same". Every length of valid (2-4) and test (5-6)
// has a row, with four orders of each example but those whose numbers are all alike (a few at
// most: more than three orders an example in all).
// A parity model trained 2 steps has its bits, in brackets, reordered too: every length (4-6)
// has orders, each answered as given.
static void test_shuffle_answers_asks_the_model_in_other_orders(void) {
    std::string root = unity_temp_dir();
    const std::string data = " --task sum --train-size 200 --valid-size 40 --test-size 40 --train-max 4 --test-max 6"
                             " --layers 1 --d-model 16 --heads 2 --d-ff 32 --batch 8 --threads 1 --device cpu";
    for (const char* steps_and_pe : {"2 --pe nope", "40 --pe rope"}) {
        std::string steps = std::string(steps_and_pe).substr(0, std::string(steps_and_pe).find(' '));
        Result trained = shell("./train" + data + " --steps " + steps_and_pe + " --eval-every " + steps + " --out " + root + "/sum-" + steps);
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, trained.status, trained.out.c_str());
    }
    Result r = shell_in(root, "dev/shuffle_answers.sh --examples 40 --threads 1 sum-2 sum-40");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    size_t second = r.out.find("sum-40:\n");
    TEST_ASSERT_MESSAGE(r.out.rfind("sum-2:\n  split  length examples  right  orders  right   same if-wrong  alike\n", 0) == 0 && second != std::string::npos,
                        r.out.c_str());
    double least_same = 1, least_alike = 1;
    for (int model = 0; model < 2; model++) {
        std::vector<OrderRow> rows = order_rows(model == 0 ? r.out.substr(0, second) : r.out.substr(second));
        TEST_ASSERT_EQUAL_INT_MESSAGE(5, rows.size(), r.out.c_str());
        int examples = 0, orders = 0;
        for (size_t i = 0; i < rows.size(); i++) {
            const OrderRow& row = rows[i];
            TEST_ASSERT_EQUAL_STRING(i < 3 ? "valid" : "test", row.split.c_str());
            TEST_ASSERT_EQUAL_INT(i + 2, row.length);
            TEST_ASSERT_MESSAGE(row.orders > 0 && row.orders <= 4 * row.examples, r.out.c_str());
            TEST_ASSERT_MESSAGE(row.right == 0 && row.same_if_wrong == row.same, r.out.c_str());
            examples += row.examples, orders += row.orders;
            if (model == 0) TEST_ASSERT_MESSAGE(row.orders_right == 0 && row.same == 1 && row.alike == 1, r.out.c_str());
            else least_same = std::min(least_same, row.same), least_alike = std::min(least_alike, row.alike);
        }
        TEST_ASSERT_EQUAL_INT(80, examples);
        TEST_ASSERT_MESSAGE(orders > 3 * examples, r.out.c_str());
    }
    TEST_ASSERT_MESSAGE(least_same < 1 && least_alike < 1, r.out.c_str());

    std::string parity_data = " --task parity" + data.substr(data.find(" --train-size"));  // the same data flags, parity's task
    Result parity = shell("./train" + parity_data + " --steps 2 --eval-every 2 --pe nope --out " + root + "/parity-2 > /dev/null && " +
                          "dev/shuffle_answers.sh --examples 10 --threads 1 " + root + "/parity-2");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, parity.status, parity.out.c_str());
    std::vector<OrderRow> parity_rows = order_rows(parity.out);
    TEST_ASSERT_EQUAL_INT_MESSAGE(3, parity_rows.size(), parity.out.c_str());
    for (const OrderRow& row : parity_rows) TEST_ASSERT_MESSAGE(row.orders > 0 && row.same == 1, parity.out.c_str());

    // A bf16 run is decoded, and its reorderings asked, in bf16 (trained_arithmetic): the shell's
    // trace shows both ./train commands given --precision bf16
    Result bf16 = shell("./train" + data + " --steps 2 --eval-every 2 --pe nope --precision bf16 --out " + root + "/sum-bf16 > /dev/null && " +
                        "bash -x dev/shuffle_answers.sh --examples 5 --threads 1 " + root + "/sum-bf16 2>&1 | grep '/train --load'");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, bf16.status, bf16.out.c_str());
    TEST_ASSERT_MESSAGE(contains(bf16.out, "--precision bf16 --sample 5") && contains(bf16.out, "--precision bf16 --answer"), bf16.out.c_str());

    std::string other = root + "/copy-run", decoding = root + "/decoding.txt";
    make_copy_run(other);
    std::ofstream(decoding) << "valid accuracy 1.0\n";
    const std::string cases[][2] = {
        {other, "is not a sum, parity or sort run (by its config.json)"},
        {decoding, "is a decoding: reordered prompts need the run's model"},
        {root + "/nosuch", "is neither a decoding nor a run directory with a model.bin"},
        {"", "usage: dev/shuffle_answers.sh"},
    };
    assert_refusals("dev/shuffle_answers.sh", cases);
}

// dev/t5_clamp.sh, T5's buckets edited and evaluated

// what a results.json says of a split: "accuracy" and the "length:accuracy" list, as
// dev/t5_clamp.sh prints them (a results.json without the split: "no SPLIT")
static std::string split_summary(const std::string& results, const std::string& split) {
    std::string opening = "\"" + split + "\": {\"accuracy\": ";
    size_t at = results.find(opening);
    if (at == std::string::npos) return "no " + split;
    double accuracy = atof(results.c_str() + at + opening.size());
    size_t end = results.find("]}", at);
    std::string lengths;
    char buf[64];
    for (size_t entry = results.find("{\"length\": ", at); entry < end; entry = results.find("{\"length\": ", entry + 1)) {
        int length = 0, correct = 0, total = 0;
        double a = 0;
        if (sscanf(results.c_str() + entry, "{\"length\": %d, \"correct\": %d, \"total\": %d, \"accuracy\": %lf", &length, &correct, &total, &a) != 4)
            return "a damaged length of " + split;
        snprintf(buf, sizeof buf, "%s%d:%.3f", lengths.empty() ? "" : " ", length, a);
        lengths += buf;
    }
    snprintf(buf, sizeof buf, "%.3f\t", accuracy);
    return buf + lengths;
}

// a real T5 copy run trained on 2-8 words for 150 steps (long enough that its longer lengths
// answer differently when its table is edited), named relative to the directory the script is
// called from: its row as trained is its results.json; the edits start at the first bucket
// training never reached (17), the one it reached only in part (16, distances 16-18, of which
// sequences of up to 19 tokens reach 16 and 17) and two it reached (15, 14), in this order; each
// edit's row is what ./train says of the model dev/table_extend edits that way, and one at least
// differs from the row as trained, so an edit left unmade would show; other runs are refused
// with one line
static void test_t5_clamp_evaluates_a_run_as_trained_and_edited(void) {
    std::string root = unity_temp_dir() + "/clamp";
    Result sweep = shell("dev/sweep.sh " + root + " --tasks copy --pes t5,nope --seeds 7 --threads 1 --device cpu --no-report -- --steps 150 "
                         "--eval-every 50 --train-size 2000 --valid-size 60 --test-size 60 --train-max 8 --test-max 12");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, sweep.status, sweep.out.c_str());
    std::string results = read_file(root + "/copy-t5-s7/results.json");
    Result r = shell_in(root, "dev/t5_clamp.sh --threads 1 copy-t5-s7");
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    // a results.json's row: "valid\ttest\ttest by length"
    auto row_of = [](const std::string& results) {
        std::string valid = split_summary(results, "valid");
        return valid.substr(0, valid.find('\t')) + "\t" + split_summary(results, "test") + "\n";
    };
    std::string as_trained = "copy-t5-s7\t-\tas trained\t" + row_of(results);
    TEST_ASSERT_MESSAGE(contains(r.out, "model\tfrom bucket\treached\tvalid\ttest\ttest by length\n" + as_trained), r.out.c_str());
    size_t at = r.out.find(as_trained) + as_trained.size();
    bool any_differs = false;
    for (const char* edit : {"17\tnever", "16\tpartly", "15\tall", "14\tall"}) {
        std::string from = std::string(edit).substr(0, 2), edited = root + "/edited-" + from;
        Result made = shell("dev/table_extend " + root + "/copy-t5-s7/model.bin " + from + " 1 " + edited + ".bin > /dev/null && ./train --load " +
                            edited + ".bin --device cpu --threads 1 --out " + edited + " > /dev/null");
        TEST_ASSERT_EQUAL_INT_MESSAGE(0, made.status, made.out.c_str());
        std::string accuracies = row_of(read_file(edited + "/results.json")), row = "copy-t5-s7\t" + std::string(edit) + "\t" + accuracies;
        TEST_ASSERT_MESSAGE(r.out.compare(at, row.size(), row) == 0, (row + " in\n" + r.out).c_str());  // in this order, nothing else
        any_differs = any_differs || accuracies != row_of(results);
        at += row.size();
    }
    TEST_ASSERT_EQUAL_INT_MESSAGE(r.out.size(), at, r.out.c_str());
    TEST_ASSERT_MESSAGE(any_differs, r.out.c_str());
    TEST_ASSERT_EQUAL_STRING(results.c_str(), read_file(root + "/copy-t5-s7/results.json").c_str());  // the run's own, kept

    const std::string cases[][2] = {
        {root + "/copy-nope-s7", "is not a --pe t5 run"},
        {root + "/nosuch", "holds no model.bin"},
        {"--threads", "usage: dev/t5_clamp.sh"},
        {"", "usage: dev/t5_clamp.sh"},
    };
    assert_refusals("dev/t5_clamp.sh", cases);
    // a ./train that fails (here refusing the thread count) stops it with its line: no row, and
    // never an earlier evaluation's results read as this one's, nor the missing results.json
    // tried (the heading and ./train's line are all it prints)
    Result failed = shell_in(root, "dev/t5_clamp.sh --threads 2000 copy-t5-s7");
    TEST_ASSERT_EQUAL_INT_MESSAGE(1, failed.status, failed.out.c_str());
    TEST_ASSERT_MESSAGE(contains(failed.out, "--threads 2000 is out of range") && !contains(failed.out, "copy-t5-s7\t"), failed.out.c_str());
    TEST_ASSERT_EQUAL_INT_MESSAGE(2, std::count(failed.out.begin(), failed.out.end(), '\n'), failed.out.c_str());
}

// dev/length_ranges.sh sums a run's exact tallies over ranges of lengths: test 5-6 holds 1 + 3
// of 4 + 4 examples right, 7-8 no length, 9-12 the 0 of 2 at length 9; --tokens reads the
// per-token tallies instead, --split valid valid's (over a range of one length, LO = HI); the
// scratchpads' line is not the answers'.
static void test_length_ranges_sums_the_tallies_of_each_range(void) {
    std::string dir = unity_temp_dir() + "/run-a", old = unity_temp_dir() + "/old";
    mkdir(dir.c_str(), 0755), mkdir(old.c_str(), 0755);
    auto tallies = [](const char* part, std::vector<std::tuple<int, int, int>> by_length) {
        std::string line = std::string("  \"") + part + "\": {\"accuracy\": 0.5, \"correct\": 0, \"total\": 0, \"by_length\": [";
        for (auto [length, correct, total] : by_length)
            line += "{\"length\": " + std::to_string(length) + ", \"correct\": " + std::to_string(correct) + ", \"total\": " +
                    std::to_string(total) + ", \"accuracy\": 0.5}, ";
        return line + "]},\n";
    };
    std::string head = "{\n  \"task\": \"copy\",\n";
    std::ofstream(dir + "/results.json") << head << tallies("valid", {{2, 3, 3}}) << tallies("test", {{5, 1, 4}, {6, 3, 4}, {9, 0, 2}})
                                         << tallies("test_tokens", {{5, 9, 12}, {6, 10, 12}, {9, 1, 6}})
                                         << tallies("test_scratchpad", {{5, 4, 4}, {6, 4, 4}, {9, 2, 2}}) << "}\n";
    std::ofstream(old + "/results.json") << head << tallies("test", {{5, 4, 4}}) << "}\n";  // from before per-token tallies
    Result r = shell("dev/length_ranges.sh 5-6,7-8,9-12 " + dir + " " + old);
    TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, r.out.c_str());
    TEST_ASSERT_EQUAL_STRING("| run | 5-6 | 7-8 | 9-12 |\n|---|---|---|---|\n| run-a | 0.500 (8) | - | 0.000 (2) |\n| old | 1.000 (4) | - | - |\n", r.out);
    r = shell("dev/length_ranges.sh --tokens 5-12 " + dir);
    TEST_ASSERT_EQUAL_STRING("| run | 5-12 |\n|---|---|\n| run-a | 0.667 (30) |\n", r.out);
    r = shell("dev/length_ranges.sh --split valid 2-2 " + dir);
    TEST_ASSERT_EQUAL_STRING("| run | 2-2 |\n|---|---|\n| run-a | 1.000 (3) |\n", r.out);
    const std::string cases[][2] = {
        {"9-5 " + dir, "'9-5' is not a range of lengths LO-HI with LO <= HI"},
        {"5-9,x " + dir, "'x' is not a range of lengths"},
        {"5-9 " + unity_temp_dir() + "/nosuch", "holds no results.json"},
        {"--tokens 5-9 " + old, "has no \"test_tokens\" tallies"},
        {"--split train 5-9 " + dir, "unknown split 'train' (valid: valid test)"},
        {"5-9", "usage: dev/length_ranges.sh"},
    };
    assert_refusals("dev/length_ranges.sh", cases);
}

// Every dev/ program (dev/tool.h): -h and --help print its usage to stdout and exit 0; called
// without arguments it exits 1 with one line on stderr (its usage's first line, or what is
// missing) and nothing on stdout
static void test_every_dev_program_prints_its_usage_when_asked(void) {
    for (const char* program : {"report", "attention", "t5_table", "table_extend", "place_patch", "head_ablate"}) {
        std::string tool = std::string("dev/") + program;
        for (const char* asked : {" -h", " --help"}) {
            Result r = shell("{ " + tool + asked + " 2> /dev/null; }");
            TEST_ASSERT_EQUAL_INT_MESSAGE(0, r.status, (tool + asked).c_str());
            TEST_ASSERT_MESSAGE(r.out.rfind("usage: " + tool + " ", 0) == 0, (tool + asked + ": " + r.out).c_str());
        }
        Result bare = shell("{ " + tool + " 2>&1 > /dev/null; }"), out = shell("{ " + tool + " 2> /dev/null; }");
        TEST_ASSERT_EQUAL_INT_MESSAGE(1, bare.status, tool.c_str());
        TEST_ASSERT_MESSAGE(!bare.out.empty() && bare.out.find('\n') == bare.out.size() - 1 && out.out.empty(), (tool + ": " + bare.out).c_str());
    }
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_parity_counts_tabulates_a_decoding_by_length_and_count);
    RUN_TEST(test_parity_counts_decodes_a_run_and_refuses_other_tasks);
    RUN_TEST(test_answer_lengths_tabulates_a_decoding_by_split_and_length);
    RUN_TEST(test_decodings_compute_in_the_runs_own_arithmetic);
    RUN_TEST(test_analyses_dump_every_model_and_compare_them);
    RUN_TEST(test_cope_inside_looks_at_the_models_there_are);
    RUN_TEST(test_first_error_places_the_first_wrong_word);
    RUN_TEST(test_scratchpad_steps_places_the_first_wrong_step_and_part);
    RUN_TEST(test_decoding_tools_list_a_place_that_exactly_5_percent_share);
    RUN_TEST(test_sort_misses_tabulates_the_items_left_out);
    RUN_TEST(test_sum_answers_tabulates_windows_and_offsets);
    RUN_TEST(test_lego_depths_tabulates_by_depth_asked);
    RUN_TEST(test_shuffle_answers_asks_the_model_in_other_orders);
    RUN_TEST(test_t5_clamp_evaluates_a_run_as_trained_and_edited);
    RUN_TEST(test_length_ranges_sums_the_tallies_of_each_range);
    RUN_TEST(test_every_dev_program_prints_its_usage_when_asked);
    return UNITY_END();
}
