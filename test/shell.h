// What test_sweep and test_tools share: running the repository's dev/ scripts and ./train as a
// user does, from a shell, and reading what they print and write. Each test makes its own
// directories under /tmp (temp_dir), so no test sees another's files. The functions are inline,
// as a header's are: a program may use some of them and not others.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test/unity.h"

struct Result {
    int status;
    std::string out;  // stdout and stderr together, in order
};

inline std::string read_file(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

inline bool exists(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

inline Result shell(const std::string& command) {
    static std::string log = unity_temp_dir() + "/out";
    int status = system((command + " > " + log + " 2>&1").c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(log)};
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream s(text);
    for (std::string line; std::getline(s, line);) out.push_back(line);
    return out;
}

// the repository's directory, where the tests run
inline std::string repository(void) {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) {
        perror("getcwd");
        exit(1);
    }
    return cwd;
}

// the repository's TOOL_AND_ARGUMENTS called from DIR, which names the runs and files it is given
inline Result shell_in(const std::string& dir, const std::string& tool_and_arguments) {
    return shell("cd " + dir + " && " + repository() + "/" + tool_and_arguments);
}

// each case (arguments, message) is refused by TOOL with exit status 1 and one line holding the message
template <size_t N>
inline void assert_refusals(const std::string& tool, const std::string (&cases)[N][2]) {
    for (const auto& c : cases) {
        Result bad = shell(tool + " " + c[0]);
        TEST_ASSERT_EQUAL_INT_MESSAGE(1, bad.status, c[0].c_str());
        TEST_ASSERT_MESSAGE(contains(bad.out, c[1]) && bad.out.find('\n') == bad.out.size() - 1, bad.out.c_str());
    }
}

// every run a few steps on little data: each takes a second or two on one core
inline const std::string SHORT_RUNS = " -- --steps 6 --eval-every 3 --train-size 500 --valid-size 40 --test-size 40";
