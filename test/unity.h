/*
 unity.h: a minimal test harness in the style, and with the output format, of ThrowTheSwitch's
 Unity (written here from its documented behaviour; no Unity code is used).

 A test program:
     static void test_something(void) { TEST_ASSERT_EQUAL_INT(4, 2 + 2); }
     int main(int argc, char** argv) {
         UNITY_BEGIN(argc, argv);        // argv[1], if given, runs only tests whose name contains it
         RUN_TEST(test_something);
         return UNITY_END();             // 0 if every test passed, 1 if any failed
     }

 Output, one line per test, then Unity's summary:
     test/test_x.cpp:12:test_something:PASS
     test/test_x.cpp:20:test_slow:PASS (3.2 s)
     test/test_x.cpp:31:test_other:FAIL: Expected 4 Was 5
     test/test_x.cpp:40:test_gpu:IGNORE: no CUDA device
     -----------------------
     3 Tests 1 Failures 1 Ignored
     FAIL

 Differences from Unity, on purpose:
   - a failing assert *returns from the test function* (no setjmp/longjmp, so C++ destructors
     run); asserts must therefore be written in the test function itself, and helpers return a
     value for the test to assert on
   - an exception escaping a test is a failure that names it, not a crash of the whole program
   - no setUp/tearDown: every test builds its own inputs
   - TEST_ASSERT_TENSOR_CLOSE checks every element against |got - ref| <= atol + rtol * |ref|
     and reports how many failed and the worst one, as llm.c's kernel checks do
   - unity_temp_dir() gives a test a directory of its own for files, removed at the end when
     every test passed
   - a test that took a second or more says how long, so that the slow ones, which decide how
     long `make test` takes, are easy to find
*/
#pragma once

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>
#include <fcntl.h>
#include <unistd.h>

struct UnityState {
    const char* file = "";
    const char* filter = nullptr;  // run only tests whose name contains this
    const char* test_name = "";
    int tests = 0, failures = 0, ignores = 0;
    bool test_failed = false, test_ignored = false;
    std::string files;  // the program's directory of test files (unity_temp_dir), once made
};
static UnityState Unity;

static inline void unity_begin(const char* file, int argc, char** argv) {
    Unity = UnityState();
    Unity.file = file;
    if (argc > 1) Unity.filter = argv[1];
}

// a new directory from a mkdtemp pattern (ending in XXXXXX); throws, failing the test, where
// none can be made
static inline std::string unity_make_dir(const std::string& pattern) {
    std::vector<char> path(pattern.begin(), pattern.end());
    path.push_back('\0');
    if (!mkdtemp(path.data())) throw std::runtime_error("can not make a directory " + pattern + ": " + strerror(errno));
    return path.data();
}

// A directory of a test's own for its files, inside the program's directory in /tmp (made at the
// first call: /tmp/test_x_XXXXXX for test/test_x.cpp). UNITY_END removes the program's directory
// when every test passed, and keeps it, naming it, when one failed, to look at what the failing
// test left; so `make test` leaves nothing behind (before, some 180 directories and 170 MB a run).
static inline std::string unity_temp_dir(void) {
    if (Unity.files.empty()) {
        std::string program = Unity.file;
        program = program.substr(program.rfind('/') + 1);  // npos + 1: the whole name
        Unity.files = unity_make_dir("/tmp/" + program.substr(0, program.find('.')) + "_XXXXXX");
    }
    return unity_make_dir(Unity.files + "/XXXXXX");
}

// the exit status: 1 on any failure, not their count, which the status's 8 bits would wrap (256
// failures would exit 0)
static inline int unity_end(void) {
    if (!Unity.files.empty() && Unity.failures > 0) printf("\nthe tests' files are kept in %s\n", Unity.files.c_str());
    if (!Unity.files.empty() && Unity.failures == 0) {
        std::error_code error;
        std::filesystem::remove_all(Unity.files, error);
        if (error) printf("\ncould not remove the tests' files in %s: %s\n", Unity.files.c_str(), error.message().c_str());
    }
    printf("\n-----------------------\n%d Tests %d Failures %d Ignored\n%s\n", Unity.tests, Unity.failures,
           Unity.ignores, Unity.failures == 0 ? "OK" : "FAIL");
    fflush(stdout);
    return Unity.failures == 0 ? 0 : 1;
}

static inline void unity_fail(int line, const std::string& message) {
    printf("%s:%d:%s:FAIL: %s\n", Unity.file, line, Unity.test_name, message.c_str());
    fflush(stdout);
    Unity.test_failed = true;
}

static inline void unity_run(void (*test)(void), const char* name, int line) {
    if (Unity.filter && !strstr(name, Unity.filter)) return;
    Unity.test_name = name;
    Unity.test_failed = Unity.test_ignored = false;
    Unity.tests++;
    auto start = std::chrono::steady_clock::now();
    try {
        test();
    } catch (const std::exception& e) {
        unity_fail(line, std::string("unexpected exception: ") + e.what());
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (Unity.test_failed)
        Unity.failures++;
    else if (Unity.test_ignored)
        Unity.ignores++;
    else if (seconds >= 1)
        printf("%s:%d:%s:PASS (%.1f s)\n", Unity.file, line, name, seconds);
    else
        printf("%s:%d:%s:PASS\n", Unity.file, line, name);
    fflush(stdout);
}

#define UNITY_BEGIN(argc, argv) unity_begin(__FILE__, (argc), (argv))
#define UNITY_END() unity_end()
#define RUN_TEST(func) unity_run(func, #func, __LINE__)

// ----------------------------------------------------------------------------
// messages

static inline std::string unity_format(const char* format, ...) {
    char buffer[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(buffer, sizeof(buffer), format, args);
    va_end(args);
    return buffer;
}

static inline std::string unity_with(const std::string& detail, const char* message) {
    return message && *message ? detail + ": " + message : detail;
}

// ----------------------------------------------------------------------------
// asserts: each one reports and returns from the enclosing test function on failure

#define UNITY_CHECK(ok, detail)                     \
    do {                                            \
        if (!(ok)) {                                \
            unity_fail(__LINE__, (detail));         \
            return;                                 \
        }                                           \
    } while (0)

#define TEST_ASSERT_MESSAGE(cond, msg) UNITY_CHECK((cond), unity_with("Expression Evaluated To FALSE", msg))
#define TEST_ASSERT(cond) TEST_ASSERT_MESSAGE(cond, #cond)
#define TEST_ASSERT_TRUE(cond) TEST_ASSERT_MESSAGE(cond, #cond)
#define TEST_ASSERT_FALSE(cond) TEST_ASSERT_MESSAGE(!(cond), "!(" #cond ")")
#define TEST_FAIL_MESSAGE(msg) UNITY_CHECK(false, std::string(msg))

// integers only: a float cast to long long truncates, so 0.5 would "equal" 0 (compare it as a double)
#define TEST_ASSERT_EQUAL_INT_MESSAGE(expected, actual, msg)                                        \
    do {                                                                                         \
        static_assert(!std::is_floating_point<std::decay_t<decltype(expected)>>::value &&        \
                          !std::is_floating_point<std::decay_t<decltype(actual)>>::value,        \
                      "TEST_ASSERT_EQUAL_INT compares integers: a float would be truncated");   \
        long long unity_e = (long long)(expected), unity_a = (long long)(actual);                \
        UNITY_CHECK(unity_e == unity_a,                                                          \
                    unity_with(unity_format("Expected %lld Was %lld", unity_e, unity_a), msg));  \
    } while (0)
#define TEST_ASSERT_EQUAL_INT(expected, actual) TEST_ASSERT_EQUAL_INT_MESSAGE(expected, actual, "")

#define UNITY_COMPARE(a, op, b, msg)                                                                 \
    do {                                                                                          \
        double unity_a = (double)(a), unity_b = (double)(b);                                      \
        UNITY_CHECK(unity_a op unity_b,                                                           \
                    unity_with(unity_format("Expected %.7g " #op " %.7g", unity_a, unity_b), msg)); \
    } while (0)
#define TEST_ASSERT_GREATER_THAN_MESSAGE(threshold, actual, msg) UNITY_COMPARE(actual, >, threshold, msg)
#define TEST_ASSERT_LESS_THAN_MESSAGE(threshold, actual, msg) UNITY_COMPARE(actual, <, threshold, msg)
#define TEST_ASSERT_GREATER_THAN(threshold, actual) UNITY_COMPARE(actual, >, threshold, "")
#define TEST_ASSERT_LESS_THAN(threshold, actual) UNITY_COMPARE(actual, <, threshold, "")

#define TEST_ASSERT_EQUAL_STRING_MESSAGE(expected, actual, msg)                                    \
    do {                                                                                        \
        std::string unity_e = (expected), unity_a = (actual);                                   \
        UNITY_CHECK(unity_e == unity_a, unity_with("Expected '" + unity_e + "' Was '" + unity_a + "'", msg)); \
    } while (0)
#define TEST_ASSERT_EQUAL_STRING(expected, actual) TEST_ASSERT_EQUAL_STRING_MESSAGE(expected, actual, "")

// |actual - expected| <= delta; NaN or infinity never passes
#define TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(delta, expected, actual, msg)                            \
    do {                                                                                        \
        double unity_e = (double)(expected), unity_a = (double)(actual);                        \
        UNITY_CHECK(std::isfinite(unity_a) && std::fabs(unity_a - unity_e) <= std::fabs((double)(delta)), \
                    unity_with(unity_format("Expected %.9g Was %.9g (delta %.3g)", unity_e, unity_a,   \
                                            (double)(delta)), msg));                            \
    } while (0)
#define TEST_ASSERT_DOUBLE_WITHIN(delta, expected, actual) TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(delta, expected, actual, "")
#define TEST_ASSERT_FLOAT_WITHIN(delta, expected, actual) TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(delta, expected, actual, "")
// Unity's EQUAL_FLOAT: within 1e-5 relative ("about a single bit" of a float's 24)
#define TEST_ASSERT_EQUAL_FLOAT(expected, actual) \
    TEST_ASSERT_DOUBLE_WITHIN_MESSAGE(1e-5 * std::fabs((double)(expected)), expected, actual, "")

// Every element: |got - ref| <= atol + rtol * |ref|, all finite. On failure: how many failed,
// the worst element and how much of its tolerance it used.
template <typename A, typename B>
static inline std::string unity_tensor_mismatch(double atol, double rtol, const A* ref, const B* got, long n,
                                                const char* label) {
    long bad = 0, worst = -1;
    double worst_ratio = 0.0;
    for (long i = 0; i < n; i++) {
        double r = (double)ref[i], g = (double)got[i];
        double error = std::fabs(g - r);  // an exact match passes even with zero tolerance
        double ratio = !std::isfinite(g) ? INFINITY : error == 0 ? 0 : error / (atol + rtol * std::fabs(r));
        if (!(ratio <= 1.0)) bad++;
        if (worst < 0 || ratio > worst_ratio) {
            worst = i;
            worst_ratio = ratio;
        }
    }
    if (n <= 0) return unity_format("%s: compared nothing (n = %ld)", label, n);
    if (bad == 0) return "";
    return unity_format("%s: %ld of %ld elements out of tolerance (atol %.2g, rtol %.2g); worst [%ld] ref %.9g got %.9g (%.3gx its tolerance)",
                        label, bad, n, atol, rtol, worst, (double)ref[worst], (double)got[worst], worst_ratio);
}
#define TEST_ASSERT_TENSOR_CLOSE(atol, rtol, ref, got, n, label)                                       \
    do {                                                                                        \
        std::string unity_m = unity_tensor_mismatch((atol), (rtol), (ref), (got), (long)(n), (label)); \
        UNITY_CHECK(unity_m.empty(), unity_m);                                                  \
    } while (0)

// statement must throw a std::exception whose message contains the given text
#define TEST_ASSERT_THROWS_WITH(statement, text)                                                 \
    do {                                                                                        \
        std::string unity_what;                                                                 \
        bool unity_threw = false;                                                               \
        try {                                                                                   \
            statement;                                                                          \
        } catch (const std::exception& unity_e) {                                               \
            unity_threw = true;                                                                 \
            unity_what = unity_e.what();                                                        \
        }                                                                                       \
        UNITY_CHECK(unity_threw, std::string("Expected an error containing '") + (text) + "', none was raised"); \
        UNITY_CHECK(unity_what.find(text) != std::string::npos,                                 \
                    std::string("Expected an error containing '") + (text) + "' Was '" + unity_what + "'"); \
    } while (0)

// marks the test ignored (counted in "Ignored", not a failure) and leaves it
#define TEST_IGNORE_MESSAGE(msg)                                                                 \
    do {                                                                                        \
        printf("%s:%d:%s:IGNORE: %s\n", Unity.file, __LINE__, Unity.test_name, std::string(msg).c_str()); \
        Unity.test_ignored = true;                                                              \
        return;                                                                                 \
    } while (0)

// an informational line in the test log
#define TEST_MESSAGE(msg) printf("%s:%d:%s:INFO: %s\n", Unity.file, __LINE__, Unity.test_name, std::string(msg).c_str())

// A file of this repository, found beside the test/ folder this program was built in, so a test
// reads it whatever the current directory: repo_path("README.md").
inline std::string repo_path(const std::string& relative) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) return relative;
    std::string path(exe, n);
    return path.substr(0, path.rfind('/')) + "/../" + relative;
}

// Training prints progress; while a Silence lives, stdout goes to `path` (by default /dev/null),
// so the test log keeps only the test lines. (An assertion inside one would be silenced too:
// assert after it.)
struct Silence {
    int saved;
    explicit Silence(const std::string& path = "/dev/null") {
        fflush(stdout);
        saved = dup(STDOUT_FILENO);
        int file = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(file, STDOUT_FILENO);
        close(file);
    }
    ~Silence() {
        fflush(stdout);
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
};

// stdout into a file of its own while a Capture lives; text() is what was printed so far
struct Capture {
    std::string path = temp_file();
    Silence redirect{path};
    std::string text() {
        fflush(stdout);
        std::ifstream f(path);
        return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    }
    ~Capture() { unlink(path.c_str()); }
    static std::string temp_file() {
        char pattern[] = "/tmp/test_stdout_XXXXXX";
        int fd = mkstemp(pattern);
        if (fd >= 0) close(fd);
        return pattern;
    }
};

// Tests that run ./train as a user would need it built: false (and a line saying so) if not.
inline bool train_is_built(const char* test) {
    if (access("./train", X_OK) == 0) return true;
    fprintf(stderr, "%s: ./train is not built; run `make` first\n", test);
    return false;
}
