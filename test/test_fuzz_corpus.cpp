// The committed fuzz corpus (test/fuzz/corpus/TARGET/) through its target of test/fuzz/targets.h,
// in an ordinary build: the seeds, and every input a fuzzer once found a problem with (fixed
// since, each with a file name that says what it was), stay regression tests on machines with
// no clang or libFuzzer. `make sanitize` runs them under AddressSanitizer and UBSan too.
#include <dirent.h>

#include "test/fuzz/targets.h"
#include "test/unity.h"

// runs every file of the target's corpus through it, its printing silenced; returns how many
// there were
static int run_corpus(const std::string& target, int (*fuzz)(const uint8_t*, size_t)) {
    std::string dir = repo_path("test/fuzz/corpus/" + target);
    DIR* d = opendir(dir.c_str());
    if (!d) return -1;
    int files = 0;
    Silence quiet;
    for (dirent* entry; (entry = readdir(d));) {
        if (entry->d_name[0] == '.') continue;
        std::ifstream f(dir + "/" + entry->d_name, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        fuzz((const uint8_t*)bytes.data(), bytes.size());
        files++;
    }
    closedir(d);
    return files;
}

static void check_corpus(const std::string& target, int (*fuzz)(const uint8_t*, size_t)) {
    int files = run_corpus(target, fuzz);
    TEST_ASSERT_MESSAGE(files >= 5, ("test/fuzz/corpus/" + target + " is missing or nearly empty").c_str());
}

static void test_answer_corpus(void) { check_corpus("answer", fuzz_answer); }
static void test_checkpoint_corpus(void) { check_corpus("checkpoint", fuzz_checkpoint); }
static void test_flags_corpus(void) { check_corpus("flags", fuzz_flags); }
static void test_dump_corpus(void) { check_corpus("dump", fuzz_dump); }
static void test_results_corpus(void) { check_corpus("results", fuzz_results); }

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    (void)run;  // train.cu's entry point; the targets call its parts
    RUN_TEST(test_answer_corpus);
    RUN_TEST(test_checkpoint_corpus);
    RUN_TEST(test_flags_corpus);
    RUN_TEST(test_dump_corpus);
    RUN_TEST(test_results_corpus);
    remove_fuzz_files();
    return UNITY_END();
}
