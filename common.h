/*
 common.h: the few things every other file needs.

 Provides:
   - fail(): the one way a user-caused error leaves the program: it throws Error with a
     one-line message; main() prints it and exits 1, tests catch it and check the message
   - HD: marks a function that both the CPU loops and the CUDA kernels call
   - Rng: a seeded stream of random numbers (splitmix64) for data, init and batch order
   - hash32(): a stateless integer hash for counter-based randomness (dropout), written with
     32-bit operations only so that a CUDA kernel reproduces it bit for bit
   - word helpers: prompts and targets are lists of words separated by single spaces
   - names_of(): a table's names, for the "valid: ..." part of error messages
   - format_text(): printf into a std::string
   - write_text(): a whole text file, or fail() naming the file and the reason
   - same_file(): whether two paths name one file, so that an output never replaces an input
   - crc32_update(): the CRC-32 checkpoints carry
*/
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef __CUDACC__
#define HD __host__ __device__
#else
#define HD
#endif

// ----------------------------------------------------------------------------
// errors

struct Error : std::runtime_error {
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// printf into a std::string of whatever length the text needs
inline std::string vformat(const char* format, va_list args) {
    va_list again;
    va_copy(again, args);
    std::string text(vsnprintf(nullptr, 0, format, args), '\0');
    vsnprintf(&text[0], text.size() + 1, format, again);
    va_end(again);
    return text;
}

// printf-style message -> Error. Messages say what was wrong and what would be valid.
[[noreturn]] inline void fail(const char* format, ...) {
    va_list args;
    va_start(args, format);
    std::string message = vformat(format, args);
    va_end(args);
    throw Error(message);
}

// ----------------------------------------------------------------------------
// random numbers

// splitmix64 (Steele, Lea & Flood 2014): one 64-bit state, one add and a mixing function
// per draw. Small, fast and statistically strong enough for data and initialisation.
HD inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

struct Rng {
    uint64_t state;

    uint64_t next() {
        state += 0x9e3779b97f4a7c15ULL;  // the golden-ratio increment of splitmix64
        return mix64(state);
    }
    // uniform integer in [0, n): Lemire's multiply-shift on the top 32 bits; the bias is
    // below n / 2^32, far under anything the tasks or the batch sampler could notice
    int below(int n) { return (int)(((next() >> 32) * (uint64_t)n) >> 32); }
    // uniform integer in [lo, hi], both ends included
    int between(int lo, int hi) { return lo + below(hi - lo + 1); }
    // uniform double in [0, 1) from the top 53 bits
    double uniform() { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); }
    // standard normal draw (Box-Muller); 1 - uniform() is in (0, 1], so the log is finite
    double normal() {
        double u1 = 1.0 - uniform(), u2 = uniform();
        return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    }
};

// An independent stream for each purpose: the same (seed, a, b, c) always gives the same
// numbers, and changing any part gives unrelated ones. Used so that, e.g., the test split
// does not change when the train split's size does.
inline Rng rng_stream(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
    uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ULL);
    h = mix64(h ^ (a + 0x632be59bd9b4e019ULL));
    h = mix64(h ^ (b + 0x8cb92ba72f3d8dd7ULL));
    h = mix64(h ^ (c + 0x2545f4914f6cdd1dULL));
    return Rng{h};
}

// A string's 64-bit FNV-1a hash: names a stream after a word (a task, a tensor).
inline uint64_t hash_string(const char* s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
    return h;
}

// 32-bit integer finaliser (multiply-xorshift, constants from Wellons' hash-prospector):
// only 32-bit multiplies and shifts, so CPU and GPU produce the same bits.
HD inline uint32_t hash32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// ----------------------------------------------------------------------------
// words

typedef std::vector<std::string> Words;

// splits on runs of spaces; a prompt written by a person may have doubled spaces
inline Words split_words(const std::string& line) {
    Words words;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ') i++;
        size_t j = i;
        while (j < line.size() && line[j] != ' ') j++;
        if (j > i) words.push_back(line.substr(i, j - i));
        i = j;
    }
    return words;
}

inline std::string join_words(const Words& words) {
    std::string line;
    for (size_t i = 0; i < words.size(); i++) {
        if (i > 0) line += ' ';
        line += words[i];
    }
    return line;
}

// "a b c": the names of a table's rows (a list of names, or of structs with a `name`), as the
// valid choices an error message lists
inline const char* row_name(const char* name) { return name; }
template <typename Row>
const char* row_name(const Row& row) { return row.name; }

template <typename Rows>
Words row_names(const Rows& rows) {
    Words names;
    for (const auto& row : rows) names.push_back(row_name(row));
    return names;
}

template <typename Rows>
std::string names_of(const Rows& rows) {
    return join_words(row_names(rows));
}

inline std::string format_text(const char* format, ...) {
    va_list args;
    va_start(args, format);
    std::string text = vformat(format, args);
    va_end(args);
    return text;
}

// Writes a whole text file. A full disk shows only when the buffer is flushed, so the flush and
// the close are checked too: "can not write results.json: No space left on device".
inline void write_text(const std::string& path, const std::string& text) {
    FILE* f = fopen(path.c_str(), "w");
    if (!f) fail("can not write %s: %s", path.c_str(), strerror(errno));
    bool written = fwrite(text.data(), 1, text.size(), f) == text.size() && fflush(f) == 0;
    int error = errno;
    bool closed = fclose(f) == 0;
    if (!written || !closed) fail("can not write %s: %s", path.c_str(), strerror(written ? errno : error));
}

// a file to read must be one: "PATH is a directory, not WHAT" or "PATH is not a regular file, so
// not WHAT" (a device or pipe); a path that does not exist is the opener's to name
inline void require_regular_file(const std::string& path, const char* what) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return;
    if (S_ISDIR(st.st_mode)) fail("%s is a directory, not %s", path.c_str(), what);
    if (!S_ISREG(st.st_mode)) fail("%s is not a regular file, so not %s", path.c_str(), what);
}

// whether two paths name one existing file
inline bool same_file(const std::string& a, const std::string& b) {
    struct stat sa, sb;
    return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// CRC-32 with the IEEE polynomial, bit-reflected: the checksum of zlib's crc32(), gzip and PNG,
// so another program can check a checkpoint with its own library. Feed data in pieces, starting
// from crc = 0. Any single flipped bit and any burst of up to 32 change it, and so do any 2
// flipped bits within 2^32 - 1 bits (512 MiB) of each other.
inline uint32_t crc32_update(uint32_t crc, const void* data, size_t bytes) {
    static const std::vector<uint32_t> table = [] {
        std::vector<uint32_t> t(256);
        for (uint32_t n = 0; n < 256; n++) {
            uint32_t c = n;
            for (int bit = 0; bit < 8; bit++) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            t[n] = c;
        }
        return t;
    }();
    const uint8_t* p = (const uint8_t*)data;
    crc = ~crc;
    for (size_t i = 0; i < bytes; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}
