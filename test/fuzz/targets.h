/*
 test/fuzz/targets.h: the fuzz targets, one function per input the program parses. Each takes
 arbitrary bytes, runs the real parsing code of train.cu (included, as the tests do) on them, and
 returns normally whatever the bytes are: a user's error (Error) is the expected answer to bad
 input; a crash, a hang, another exception or a sanitizer report is a finding.

   fuzz_answer      a prompt for --answer: byte 0 picks the task; byte 1's lowest bit says whether
                    the rest is raw text, or indices into the task's vocabulary (valid words in
                    any order, which reach deep into each task's solver), and its other bits pick
                    a scratchpad format (none where the task has no such format)
   fuzz_checkpoint  a checkpoint file for --load / --resume: byte 0's bits say whether to set the
                    magic and version, the parameter count and both CRC-32s right, so that inputs
                    get past each check to the ones behind it; then header, model and run settings
                    are read and validated as --load does, without building the data
   fuzz_flags       a command line: NUL-separated arguments through parse_flags, find_mode and
                    the checks each mode makes before it does any work
   fuzz_dump        an attention dump for dev/attention: byte 0's lowest bit says whether to set
                    the magic and a version (byte 0's third bit: 3, else its second: 1, else
                    2), so that inputs get past that check to the sizes behind it; then each of
                    dev/attention's seven commands (attends by word and by index, span by
                    distance and by position) reads it and writes its tables and plots, as from
                    the command line
   fuzz_results     the run files of a sweep for dev/report: up to three runs, each a config.json
                    and a results.json, the six texts NUL-separated (a run whose results.json is
                    missing is unfinished); the whole report is written

 test/fuzz/fuzz.cpp makes a libFuzzer binary of one of them (`make fuzz`); test/test_fuzz_corpus
 runs all five over the committed corpus in every `make test`.
*/
#pragma once
#define TESTING
#include <unistd.h>

#include "train.cu"
#include "dev/attention.cpp"
#include "dev/report.cpp"

// the files a target writes for the code under test to read, one set per process (libFuzzer may
// run several): /tmp/fuzz_NAME_PID, and with .bin added
static std::string fuzz_path(const std::string& name) { return "/tmp/fuzz_" + name + "_" + std::to_string(getpid()); }

// the bytes as a file at path; false where it can not be written
static bool write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) return false;
    fwrite(bytes.data(), 1, bytes.size(), f);
    return fclose(f) == 0;
}

// words as the argv a main() takes (pointing into them)
static std::vector<char*> argv_of(std::vector<std::string>& words) {
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(&w[0]);
    return argv;
}

static void remove_fuzz_files() {
    std::error_code ignored;
    for (const char* name : {"checkpoint", "dump", "results"}) fs::remove_all(fuzz_path(name), ignored), fs::remove(fuzz_path(name) + ".bin", ignored);
}

// ----------------------------------------------------------------------------

static int fuzz_answer(const uint8_t* data, size_t size) {
    static std::map<std::pair<int, int>, Vocab> vocabs;  // (task, scratchpad format) -> vocabulary
    if (size < 2) return 0;
    int task = data[0] % NUM_TASKS;
    bool words = data[1] & 1;
    DataConfig config;
    config.scratchpad = (data[1] >> 1) % NUM_SCRATCHPAD_FORMATS;
    try {
        check_scratchpad(TASKS[task], config.scratchpad);
    } catch (const Error&) {
        config.scratchpad = SCRATCHPAD_NONE;
    }
    auto key = std::make_pair(task, config.scratchpad);
    if (!vocabs.count(key)) vocabs[key] = make_vocab(TASKS[task], config);
    const Vocab& vocab = vocabs[key];
    std::string line;
    for (size_t i = 2; i < size; i++) {
        if (!words) {
            if (data[i] == '\n') break;  // --answer reads one line at a time
            line += (char)data[i];
        } else {
            if (!line.empty()) line += ' ';
            line += vocab.words[2 + data[i] % (vocab.size() - 2)];  // any word but <pad> and <eos>
        }
    }
    try {
        int length = 0;
        task_answer(TASKS[task], vocab, line, &length, config);
    } catch (const Error&) {
    }
    return 0;
}

// ----------------------------------------------------------------------------

static void store_u32(std::vector<uint8_t>* file, int field, uint32_t value) { memcpy(file->data() + 4 * field, &value, 4); }

static int fuzz_checkpoint(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    uint8_t fixes = data[0];
    std::vector<uint8_t> file(data + 1, data + size);
    if (file.size() >= (size_t)HEADER_FIELDS * 4) {
        if (fixes & 1) store_u32(&file, H_MAGIC, CHECKPOINT_MAGIC), store_u32(&file, H_VERSION, CHECKPOINT_VERSION);
        if (fixes & 2) {  // the parameter count the file's size implies, for its kind
            int32_t kind;
            memcpy(&kind, file.data() + 4 * H_KIND, 4);
            size_t values = (file.size() - HEADER_FIELDS * 4) / 4 / (kind == CKPT_TRAIN_STATE ? 3 : 1);
            store_u32(&file, H_NUM_PARAMS_LO, (uint32_t)values), store_u32(&file, H_NUM_PARAMS_HI, 0);
        }
        if (fixes & 4) store_u32(&file, H_PAYLOAD_CRC, crc32_update(0, file.data() + HEADER_FIELDS * 4, file.size() - HEADER_FIELDS * 4));
        if (fixes & 8) store_u32(&file, H_HEADER_CRC, crc32_update(0, file.data(), 4 * H_HEADER_CRC));
    }
    static const std::string path = fuzz_path("checkpoint") + ".bin";
    if (!write_bytes(path, file)) return 0;
    try {
        Header h = read_checkpoint_header(path);
        RunConfig config;  // what --load does with the header: the run's settings, validated
        restore_run(h, &config);
        config.model = header_preset(h);
        resolve_config(&config);
        length_split(find_task(config.task), config.data);
        ModelConfig mc{h[H_LAYERS], h[H_D_MODEL], h[H_HEADS], h[H_D_FF], h[H_VOCAB], 8, (PEKind)h[H_PE], bits_float(h[H_ROPE_FRAC]),
                       bits_float(h[H_DROPOUT])};
        validate_model_config(mc);
        if (make_layout(mc).total > (1u << 20)) return 0;  // a real model this size loads the same way; the fuzzer needs speed
        Model m;
        model_init(&m, mc, 1, 1);
        load_checkpoint(path, h, &m);
    } catch (const Error&) {
    }
    return 0;
}

// ----------------------------------------------------------------------------

static int fuzz_flags(const uint8_t* data, size_t size) {
    std::vector<std::string> words = {"train"};
    std::string word;
    for (size_t i = 0; i < size && words.size() < 32; i++) {
        if (data[i]) word += (char)data[i];
        else words.push_back(word), word.clear();
    }
    if (!word.empty()) words.push_back(word);
    std::vector<char*> argv = argv_of(words);
    try {
        RunConfig c;
        std::set<std::string> given = parse_flags((int)argv.size(), argv.data(), &c);
        if (c.help) return 0;
        Mode mode = find_mode(given, &c);
        if (mode == RESUME || mode == LOAD) return 0;  // they open files the bytes name: fuzz_checkpoint covers the reading
        const Task& task = find_task(c.task);
        length_split(task, c.data);
        if (mode == SHOW) find_split(c.split);
        if (mode & MODEL) resolve_config(&c);
    } catch (const Error&) {
    }
    return 0;
}

// ----------------------------------------------------------------------------

static int fuzz_dump(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    std::vector<uint8_t> file(data + 1, data + size);
    if ((data[0] & 1) && file.size() >= 8) store_u32(&file, 0, ATTENTION_DUMP_MAGIC), store_u32(&file, 1, data[0] & 4 ? 3 : data[0] & 2 ? 1 : 2);
    static const std::string path = fuzz_path("dump") + ".bin", out = fuzz_path("dump");
    if (!write_bytes(path, file)) return 0;
    const std::string labelled = "x=" + path;
    const std::vector<std::vector<std::string>> commands = {
        {"distance", path, labelled}, {"histogram", "--min-length", "0", labelled}, {"attends", labelled}, {"attends", "--by", "index", labelled},
        {"span", labelled}, {"span", "--keys", "position", labelled}, {"scores", labelled}, {"positions", labelled}, {"probe", labelled}};
    for (const std::vector<std::string>& command : commands) {
        std::vector<std::string> words = {"attention", command[0], "--out", out};
        words.insert(words.end(), command.begin() + 1, command.end());
        std::vector<char*> argv = argv_of(words);
        try {
            attention_main((int)argv.size(), argv.data());
        } catch (const Error&) {
        }
    }
    return 0;
}

// ----------------------------------------------------------------------------

static int fuzz_results(const uint8_t* data, size_t size) {
    static const std::string sweep = fuzz_path("results");
    std::error_code ignored;
    fs::remove_all(sweep, ignored);
    const size_t MAX_TEXTS = 6;  // three runs' config.json and results.json
    std::vector<std::string> texts(1);
    for (size_t i = 0; i < size; i++) {
        if (data[i]) texts.back() += (char)data[i];
        else if (texts.size() < MAX_TEXTS) texts.push_back("");
        else break;
    }
    for (size_t k = 0; k < texts.size(); k++) {
        std::string run = sweep + "/run" + std::to_string(k / 2);
        fs::create_directories(run);
        write_text(run + (k % 2 ? "/results.json" : "/config.json"), texts[k]);
    }
    try {
        write_report(sweep);
    } catch (const Error&) {  // what dev/report's main reports as one error line, as it does
    } catch (const fs::filesystem_error&) {
    }
    return 0;
}
