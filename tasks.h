/*
 tasks.h: the synthetic tasks, what the model sees.

 Ten task families (Kazemnejad et al. 2023, as their released code builds them), seventeen variants:
 copy (5), reverse (3), addition, polynomial evaluation, sorting (2), summation, parity, LEGO,
 SCAN and PCFG SET; and the fifteen tasks of Delétang et al. 2023 ("Neural Networks and the
 Chomsky Hierarchy"), named ch_*. SCAN and PCFG SET live in grammars.h and the ch_* tasks in
 chomsky.h, both included here. For each variant this file provides
   - a vocabulary: word level, "<pad>" and "<eos>" then every word the task can produce
   - a generator of prompts for a given length λ (or, for SCAN, the whole finite language)
   - a solver: an interpreter that reads a prompt and computes its gold target and its λ
   - for addition, poly, sort, sum, parity and LEGO: the steps of an algorithm that solves a
     prompt, which scratchpad targets write out before the answer (paper §6; --scratchpad)
 and, built from those, the three splits: train and valid (in-distribution lengths) and test
 (longer, out-of-distribution lengths).

 Invariants worth knowing:
   - an example is prompt + target + <eos>; the model is trained on target + <eos> only
   - targets and lengths are always computed by the solver from the prompt text, never stored
     by the generator, so an example can not disagree with its own words (the dataset builder
     checks that the solver's λ is the length the generator was asked for)
   - words are separated by single spaces; punctuation is a word of its own ("The answer is 7 .")
   - a generated task's data is a function of (data seed, task, split, length bin): changing one
     split's size never changes another split's examples, nor a bin's those of another bin (a
     split's size sets each bin's count, a prefix of that bin's stream, or of its deck's two ends
     for copy_rdc, whose train and valid never share a prompt; with --index-hints the
     test lengths also set how many hints there are: see "addition"). SCAN's valid examples are
     a tenth of its shuffled pool of lengths up to --train-max, so that flag changes which ones
*/
#pragma once

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common.h"

// ----------------------------------------------------------------------------
// reading prompts

// Reads a prompt word by word. Every mismatch is an Error that names the word (counting from 1)
// and says what was expected there.
struct Reader {
    const Words& words;
    size_t pos = 0;

    explicit Reader(const Words& w) : words(w) {}
    bool at_end() const { return pos >= words.size(); }
    bool peek_is(const char* word) const { return !at_end() && words[pos] == word; }
    const std::string& peek() const { return words[pos]; }

    [[noreturn]] void error(const char* expected) const {
        if (at_end()) fail("expected %s after the last word", expected);
        fail("word %zu: expected %s, found '%s'", pos + 1, expected, words[pos].c_str());
    }
    const std::string& next(const char* expected) {
        if (at_end()) error(expected);
        return words[pos++];
    }
    // consumes the word if it is next; says whether it was
    bool accept(const char* word) {
        if (!peek_is(word)) return false;
        pos++;
        return true;
    }
    void expect(const char* word) {
        if (!peek_is(word)) error((std::string("'") + word + "'").c_str());
        pos++;
    }
    void finish() const {
        if (!at_end()) fail("word %zu: unexpected '%s' after the end of the prompt", pos + 1, words[pos].c_str());
    }
};

// A fixed, ordered set of symbols; the order is the one the sorting task sorts by.
struct Alphabet {
    Words symbols;
    std::unordered_map<std::string, int> rank;

    explicit Alphabet(Words list) : symbols(std::move(list)) {
        for (size_t i = 0; i < symbols.size(); i++) rank[symbols[i]] = (int)i;
    }
    bool contains(const std::string& w) const { return rank.count(w) > 0; }
    // the next word, which must be one of the symbols
    const std::string& read(Reader& r, const char* what) const {
        if (r.at_end() || !contains(r.peek())) r.error(what);
        return r.next(what);
    }
};

static inline Words concat(Words a, const Words& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// ----------------------------------------------------------------------------
// numbers are written digit by digit, most significant first: 407 -> "4 0 7", -5 -> "- 5"

static inline bool is_digit_word(const std::string& w) { return w.size() == 1 && w[0] >= '0' && w[0] <= '9'; }

// a run of digit words without a leading zero, returned as a digit string ("407")
static inline std::string read_digits(Reader& r) {
    if (r.at_end() || !is_digit_word(r.peek())) r.error("a digit");
    size_t first = r.pos;
    std::string digits;
    while (!r.at_end() && is_digit_word(r.peek())) digits += r.next("a digit")[0];
    if (digits.size() > 1 && digits[0] == '0') fail("word %zu: a number may not start with 0", first + 1);
    return digits;
}

static const int MAX_SMALL_NUMBER_DIGITS = 9;  // numbers read as int64 (polynomial terms) stay far from overflow

static inline long long read_small_number(Reader& r, bool allow_sign) {
    bool negative = allow_sign && r.accept("-");
    size_t first = r.pos;
    std::string digits = read_digits(r);
    if (digits.size() > MAX_SMALL_NUMBER_DIGITS)
        fail("word %zu: numbers in this task have at most %d digits", first + 1, MAX_SMALL_NUMBER_DIGITS);
    long long value = std::stoll(digits);
    return negative ? -value : value;
}

static inline Words digit_words(const std::string& digits) {
    Words w;
    for (char c : digits) w.push_back(std::string(1, c));
    return w;
}

static inline Words number_words(long long v) {
    Words w = digit_words(std::to_string(v < 0 ? -v : v));
    if (v < 0) w.insert(w.begin(), "-");
    return w;
}

// an n-digit number uniform in [10^(n-1), 10^n - 1]; with one digit, uniform in [0, 9]
static inline std::string random_digits(Rng* rng, int n) {
    std::string digits;
    for (int i = 0; i < n; i++) digits += (char)('0' + (i == 0 && n > 1 ? rng->between(1, 9) : rng->below(10)));
    return digits;
}

static inline int python_mod(long long v, int m) { return (int)(((v % m) + m) % m); }

static inline Words join_with(const std::vector<Words>& items, const char* separator) {
    Words out;
    for (size_t i = 0; i < items.size(); i++) {
        if (i > 0) out.push_back(separator);
        out = concat(out, items[i]);
    }
    return out;
}

// "[ a , b , c ]"
static inline Words bracketed(const std::vector<Words>& items) { return concat(concat({"["}, join_with(items, ",")), {"]"}); }

static const Words DIGITS = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
static const Words ANSWER_IS = {"The", "answer", "is"};

// ----------------------------------------------------------------------------
// the task descriptor

// A length bin: every example in it has length λ = `length`. `a` and `b` are what the
// generator is asked for; they equal the length except for addition, where they are the two
// operands' digit counts and λ is the larger one (paper: "a-by-b" bins, plotted by the max).
struct Bin {
    int length, a, b;
};

// One step of an algorithm that solves a task, for scratchpads (paper §6): the input the step
// reads, the computation it does, the output it writes, the variables it carries on and the
// input it has left. Which parts a scratchpad writes is its format's choice (see "scratchpads").
enum StepPart { STEP_INPUT, STEP_COMP, STEP_OUTPUT, STEP_VARS, STEP_REMAINING, NUM_STEP_PARTS };

struct Step {
    Words part[NUM_STEP_PARTS];
};

struct Task;

// What a task needs to write scratchpads: its steps for a prompt, the words they use beyond the
// task's own, and whether its steps carry variables (sorting and LEGO carry none).
struct ScratchpadSteps {
    std::vector<Step> (*steps)(const Task& task, const Words& prompt);
    Words (*lexicon)();
    bool has_vars;
};

// A task whose every length has few distinct prompts (copy_rdc: 6,006) is dealt from a deck,
// not drawn with replacement: each length bin's prompts are shuffled once per data seed, train
// takes them from the top and valid from the bottom, so no prompt is in both (the paper's rdc
// split put each pair of a length in train or in valid, once), and either split's size leaves
// the other's examples where they were.
struct DealtPrompts {
    int per_bin;                                                // distinct prompts of each length
    Words (*nth)(const Task& task, const Bin& bin, int index);  // the index-th, 0 <= index < per_bin
};

struct Task {
    const char* name;
    const char* description;  // one line, for --help
    const char* length_unit;  // what λ counts
    int train_min, train_max, test_max;  // paper split: train λ in [min, max], test in [max+1, test_max]
    int max_length;                      // the longest λ the generator can make
    int variant;                         // which variant of its family
    bool operand_pairs;                  // bins are (a, b) digit-count pairs (addition)
    Words (*lexicon)();                                             // every word the task uses
    Words (*sample)(const Task& task, Rng* rng, const Bin& bin);    // a random prompt of the bin
    const DealtPrompts* deck;                                       // or: each bin's prompts, dealt
    std::vector<Words> (*enumerate)();                              // or: the whole finite language
    Words (*solve)(const Task& task, const Words& prompt, int* length);  // gold target and λ
    const ScratchpadSteps* scratchpad;                                  // or nullptr: none
};

// ----------------------------------------------------------------------------
// copy and reverse (paper §2 "Copy", "Reverse")

// The paper's word list starts with these 79 ASCII characters, then continues with T5
// vocabulary entries; we continue with 21 common English words so the list is self-contained.
static inline const Alphabet& copy_alphabet() {
    static const Alphabet alphabet([] {
        Words s;
        for (char c = '0'; c <= '9'; c++) s.push_back(std::string(1, c));
        for (char c = 'a'; c <= 'z'; c++) s.push_back(std::string(1, c));
        for (char c = 'A'; c <= 'Z'; c++) s.push_back(std::string(1, c));
        for (const char* w : {"!", "$", "%", "&", "(", ")", "*", "+", ",", "-", ".", "/", ":", ";", "<", "=", ">",
                              "the", "of", "and", "to", "is", "it", "for", "on", "as", "at", "by", "be", "or", "an",
                              "we", "he", "my", "up", "do", "so", "all"})
            s.push_back(w);
        return s;
    }());
    return alphabet;
}
static const int COPY_SYMBOLS = 100;  // rsc, cmc and reverse draw from the whole list
static const int RDC_SYMBOLS = 78;    // rdc deals ordered pairs of distinct words from the first 78

enum CopyVariant { COPY_RSC, COPY_RSC2X, COPY_RDC, COPY_CMC, COPY_CMC2X, REVERSE_MC, REVERSE_MC2X, REVERSE_MCRV };

static inline bool is_reverse(int variant) { return variant >= REVERSE_MC; }

static inline Words copy_lexicon() {
    return concat(copy_alphabet().symbols, {"Copy:", "Reverse:", "Replace", "with", "in", "[SEP]", "[NEXT]"});
}

static inline Words copy_sample(const Task& task, Rng* rng, const Bin& bin) {
    const Words& s = copy_alphabet().symbols;
    Words prompt;
    if (task.variant == COPY_RSC || task.variant == COPY_RSC2X) {
        prompt = {"Copy:"};
        prompt.insert(prompt.end(), bin.length, s[rng->below(COPY_SYMBOLS)]);
    } else {
        prompt = {is_reverse(task.variant) ? "Reverse:" : "Copy:"};
        for (int i = 0; i < bin.length; i++) prompt.push_back(s[rng->below(COPY_SYMBOLS)]);
    }
    prompt.push_back("[SEP]");
    return prompt;
}

// rdc's ordered pairs of distinct words, numbered from*(RDC_SYMBOLS-1) + the rank of `to` among
// the other words
static inline Words rdc_nth(const Task&, const Bin& bin, int index) {
    const Words& s = copy_alphabet().symbols;
    int from = index / (RDC_SYMBOLS - 1), to = index % (RDC_SYMBOLS - 1);
    if (to >= from) to++;
    Words prompt = {"Replace", s[from], "with", s[to], "in"};
    prompt.insert(prompt.end(), bin.length, s[from]);
    prompt.push_back("[SEP]");
    return prompt;
}
static const DealtPrompts RDC_PROMPTS = {RDC_SYMBOLS * (RDC_SYMBOLS - 1), rdc_nth};

static inline Words copy_solve(const Task& task, const Words& prompt, int* length) {
    const Alphabet& alphabet = copy_alphabet();
    Reader r(prompt);
    std::string from, to;
    if (task.variant == COPY_RDC) {
        r.expect("Replace");
        from = alphabet.read(r, "a symbol");
        r.expect("with");
        to = alphabet.read(r, "a symbol");
        r.expect("in");
        if (from == to) fail("word 4: the replacement must differ from the replaced word");
    } else {
        r.expect(is_reverse(task.variant) ? "Reverse:" : "Copy:");
    }
    Words input;
    while (!r.peek_is("[SEP]")) input.push_back(alphabet.read(r, "a symbol or '[SEP]'"));
    if (input.empty()) fail("the prompt has no words to %s", is_reverse(task.variant) ? "reverse" : "copy");
    r.expect("[SEP]");
    r.finish();
    *length = (int)input.size();

    bool repeated = std::count(input.begin(), input.end(), input[0]) == (long)input.size();
    if ((task.variant == COPY_RSC || task.variant == COPY_RSC2X) && !repeated)
        fail("%s copies one word repeated; this prompt has different words", task.name);
    if (task.variant == COPY_RDC && (input[0] != from || !repeated))
        fail("%s expects only '%s' after 'in'", task.name, from.c_str());

    Words reversed(input.rbegin(), input.rend());
    switch (task.variant) {
        case COPY_RSC: case COPY_CMC: return input;
        case COPY_RSC2X: return concat(input, input);
        case COPY_RDC: return Words(input.size(), to);
        case COPY_CMC2X: return concat(concat(input, {"[NEXT]"}), input);
        case REVERSE_MC: return reversed;
        case REVERSE_MC2X: return concat(concat(reversed, {"[NEXT]"}), reversed);
        default: return concat(concat(reversed, {"[NEXT]"}), input);  // REVERSE_MCRV
    }
}

// ----------------------------------------------------------------------------
// addition: "Compute 5 8 7 + 4 6 ?" -> "The answer is 6 3 3 ."
//
// Three more ways of writing the numbers, which help addition generalize to longer numbers
// (the works named at each); each is a DataConfig switch, and they combine:
//   reversed (--reverse-digits): every number least significant digit first, as McLeish et al.
//     2024 (Abacus) write them: "Compute 7 8 5 + 6 4 ?" -> "The answer is 3 3 6 ."
//   index hints (--index-hints): a hint word before every digit names its significance, so that
//     digits of equal significance share a hint, in the answer too (Zhou et al. 2024's
//     "a5b4 + a1b2"): "Compute @1 5 @0 8 + @0 4 ?" -> "The answer is @1 6 @0 2 ."
//   zero padding (--zero-pad): the shorter operand gets leading zeros up to the longer one's
//     digits, n, and the answer up to n + 1, as Cho et al. 2024 (position coupling) write them:
//     "Compute 5 8 + 0 4 ?" -> "The answer is 0 6 2 .". Every digit then has a partner of its
//     significance in each number, and the answer's length no longer tells of a final carry.
// The hints are @0 .. @(H-1), H set by the data configuration (see digit_format). In each
// example the units digits have @k, the tens @(k+1), ..., for an offset k drawn uniformly from
// [0, H - the answer's digits]: so every hint, even those that only the longest test numbers
// reach from k = 0, comes up in training. The numbers are the plain format's (the offsets come
// from a stream of their own), and λ is still the longer operand's digit count. Scratchpads
// write the plain format only, so none of the switches goes with one.

static inline Words addition_lexicon() { return concat(DIGITS, {"Compute", "+", "?", "The", "answer", "is", "."}); }

static inline Words addition_sample(const Task&, Rng* rng, const Bin& bin) {
    Words prompt = {"Compute"};
    prompt = concat(prompt, digit_words(random_digits(rng, bin.a)));
    prompt.push_back("+");
    prompt = concat(prompt, digit_words(random_digits(rng, bin.b)));
    prompt.push_back("?");
    return prompt;
}

// schoolbook addition of two digit strings, from the least significant digit up
static inline std::string add_decimal(const std::string& x, const std::string& y) {
    std::string sum;
    int carry = 0;
    for (size_t i = 0; i < std::max(x.size(), y.size()) || carry; i++) {
        int dx = i < x.size() ? x[x.size() - 1 - i] - '0' : 0;
        int dy = i < y.size() ? y[y.size() - 1 - i] - '0' : 0;
        sum += (char)('0' + (dx + dy + carry) % 10);
        carry = (dx + dy + carry) / 10;
    }
    return std::string(sum.rbegin(), sum.rend());
}

// How addition writes its numbers; the paper's plain format by default.
struct DigitFormat {
    bool reversed = false;  // least significant digit first
    int hints = 0;          // H: a hint @0 .. @(H-1) before every digit; 0: no hints
    bool padded = false;    // operands zero-padded to one length n, the answer to n + 1
    bool plain() const { return !reversed && hints == 0 && !padded; }
};

static inline std::string hint_word(int significance) { return "@" + std::to_string(significance); }

// the next word as one of the hints, and the significance it names
static inline int read_hint(Reader& r, int hints) {
    std::string expected = "a hint (@0 to " + hint_word(hints - 1) + ")";
    if (r.at_end()) r.error(expected.c_str());
    const std::string& w = r.peek();
    long value = w.size() > 1 && w[0] == '@' ? strtol(w.c_str() + 1, nullptr, 10) : -1;
    if (value < 0 || value >= hints || w != hint_word((int)value)) r.error(expected.c_str());
    r.pos++;
    return (int)value;
}

// A number read in the format: its digit string, most significant first, and the hint on its
// units digit (0 without hints). Unless padded it may not start with 0 (in value: reversed, it
// may not end with one), and its hints must count up by one from the units digit.
struct WrittenNumber {
    std::string digits;
    int offset;
};

static inline WrittenNumber read_number(Reader& r, const DigitFormat& f) {
    std::string written;           // the digits in the order written
    std::vector<int> hints;        // the hint before each
    std::vector<size_t> position;  // each digit's word number (counting from 1)
    do {
        if (f.hints) hints.push_back(read_hint(r, f.hints));
        if (r.at_end() || !is_digit_word(r.peek())) r.error("a digit");
        written += r.next("a digit")[0];
        position.push_back(r.pos);
    } while (!r.at_end() && (is_digit_word(r.peek()) || (f.hints && r.peek()[0] == '@')));
    size_t n = written.size(), units = f.reversed ? 0 : n - 1, top = f.reversed ? n - 1 : 0;
    if (n > 1 && written[top] == '0' && !f.padded)
        fail(f.reversed ? "word %zu: a number written least significant digit first may not end with 0"
                        : "word %zu: a number may not start with 0", position[top]);
    for (size_t i = 0; i < hints.size(); i++) {
        int want = hints[units] + (int)(f.reversed ? i : n - 1 - i);
        if (hints[i] != want)
            fail("word %zu: this digit's hint must be '%s', not '%s': the units digit has '%s', and hints count up by one per digit",
                 position[i] - 1, hint_word(want).c_str(), hint_word(hints[i]).c_str(), hint_word(hints[units]).c_str());
    }
    if (f.reversed) std::reverse(written.begin(), written.end());
    return {written, f.hints ? hints[units] : 0};
}

// a digit string (most significant first) written in the format, its units digit hinted `offset`
static inline Words written_number(const std::string& digits, const DigitFormat& f, int offset) {
    Words w;
    for (size_t i = 0, n = digits.size(); i < n; i++) {
        size_t significance = f.reversed ? i : n - 1 - i;  // of the i-th digit written
        if (f.hints) w.push_back(hint_word(offset + (int)significance));
        w.push_back(std::string(1, digits[n - 1 - significance]));
    }
    return w;
}

struct Operands {
    std::string x, y;  // digit strings, most significant first, zero-padded as written
    int offset;        // the hint on both units digits (0 without hints)
};

static inline std::string zero_padded(const std::string& digits, size_t n) { return std::string(n - std::min(n, digits.size()), '0') + digits; }

static inline Operands read_addition(const Words& prompt, const DigitFormat& f = DigitFormat()) {
    Reader r(prompt);
    r.expect("Compute");
    WrittenNumber x = read_number(r, f);
    r.expect("+");
    WrittenNumber y = read_number(r, f);
    r.expect("?");
    r.finish();
    if (x.offset != y.offset)
        fail("the units digits have different hints, '%s' and '%s': digits of equal significance share one",
             hint_word(x.offset).c_str(), hint_word(y.offset).c_str());
    if (f.padded && x.digits.size() != y.digits.size())
        fail("zero-padded numbers have one length, and these have %zu and %zu digits", x.digits.size(), y.digits.size());
    if (f.padded && x.digits.size() > 1 && x.digits[0] == '0' && y.digits[0] == '0')
        fail("both numbers have a leading 0, but zero padding pads only the shorter one, to the longer one's length");
    return {x.digits, y.digits, x.offset};
}

// the answer's digit string in the format: the sum, zero-padded to one digit more than the operands
static inline std::string answer_digits(const DigitFormat& f, const Operands& o) {
    std::string sum = add_decimal(o.x, o.y);
    return f.padded ? zero_padded(sum, o.x.size() + 1) : sum;
}

// the answer in the format, hinted from the prompt's offset, which must leave a hint for its last digit
static inline Words addition_answer(const DigitFormat& f, const Words& prompt, int* length) {
    Operands o = read_addition(prompt, f);
    std::string sum = answer_digits(f, o);
    if (f.hints && o.offset + (int)sum.size() > f.hints)
        fail("the answer has %zu digits, which from the units digits' '%s' on need hints past the last, '%s'", sum.size(),
             hint_word(o.offset).c_str(), hint_word(f.hints - 1).c_str());
    *length = (int)std::max(o.x.size(), o.y.size());
    return concat(concat(ANSWER_IS, written_number(sum, f, o.offset)), {"."});
}

static inline Words addition_solve(const Task&, const Words& prompt, int* length) { return addition_answer(DigitFormat(), prompt, length); }

// A plain prompt's numbers written in the format, padded if it pads, hinted from an offset drawn
// uniformly among those that leave a hint for every digit of the answer.
static inline Words written_addition(const Words& plain, const DigitFormat& f, Rng* offsets) {
    Operands o = read_addition(plain);
    if (f.padded) {
        size_t n = std::max(o.x.size(), o.y.size());
        o.x = zero_padded(o.x, n), o.y = zero_padded(o.y, n);
    }
    if (f.hints) o.offset = offsets->below(f.hints - (int)answer_digits(f, o).size() + 1);
    return concat(concat(concat({"Compute"}, written_number(o.x, f, o.offset)), concat({"+"}, written_number(o.y, f, o.offset))), {"?"});
}

// Schoolbook addition from the least significant digit, a step per digit and one more for a
// last carry, as the paper wrote it ("13" becomes "1 3" here, where every digit is a word):
//     in 7 , 6 comp 7 + 6 + carry = 1 3 + 0 = 1 3 out 3 [ carry: 1 ] re 5 8 + 4
// `re` is what is left of each operand. Like the paper's, an operand that ran out is written 0
// while the other has digits left ("re 5 + 0", then "in 5 , 0"), and both are empty at the end.
static inline std::vector<Step> addition_steps(const Task&, const Words& prompt) {
    Operands o = read_addition(prompt);
    std::vector<Step> steps;
    int carry = 0;
    while (!o.x.empty() || !o.y.empty() || carry) {
        int dx = o.x.empty() ? 0 : o.x.back() - '0', dy = o.y.empty() ? 0 : o.y.back() - '0';
        if (!o.x.empty()) o.x.pop_back();
        if (!o.y.empty()) o.y.pop_back();
        int pair = dx + dy, total = pair + carry;
        Step s;
        s.part[STEP_INPUT] = {DIGITS[dx], ",", DIGITS[dy]};
        s.part[STEP_COMP] = concat(concat(Words{DIGITS[dx], "+", DIGITS[dy], "+", "carry", "="}, number_words(pair)),
                                   concat(Words{"+", DIGITS[carry], "="}, number_words(total)));
        s.part[STEP_OUTPUT] = {DIGITS[total % 10]};
        carry = total / 10;
        s.part[STEP_VARS] = {"carry:", DIGITS[carry]};
        bool done = o.x.empty() && o.y.empty();
        s.part[STEP_REMAINING] = concat(concat(digit_words(done || !o.x.empty() ? o.x : "0"), {"+"}), digit_words(done || !o.y.empty() ? o.y : "0"));
        steps.push_back(s);
    }
    return steps;
}

static inline Words addition_step_lexicon() { return {",", "carry", "carry:", "="}; }
static const ScratchpadSteps ADDITION_STEPS = {addition_steps, addition_step_lexicon, true};

// ----------------------------------------------------------------------------
// polynomial evaluation: "Evaluate at x = - 1 in - 2 * x ** 2 + 3 * x ** 0 ?" -> "The answer is 1 ."
// coefficients in [-3, 3], degrees in [0, 3], x in [-2, 2]; the answer is the value mod 10
// with Python's `%` (always 0..9)

static const int POLY_MODULUS = 10;

static inline Words poly_lexicon() {
    return concat(DIGITS, {"Evaluate", "at", "x", "=", "in", "*", "**", "+", "-", "?", "The", "answer", "is", "."});
}

static inline Words poly_sample(const Task&, Rng* rng, const Bin& bin) {
    Words prompt = concat({"Evaluate", "at", "x", "="}, number_words(rng->between(-2, 2)));
    prompt.push_back("in");
    std::vector<Words> terms;
    for (int i = 0; i < bin.length; i++) {
        Words term = concat(number_words(rng->between(-3, 3)), {"*", "x", "**"});
        terms.push_back(concat(term, number_words(rng->between(0, 3))));
    }
    return concat(concat(prompt, join_with(terms, "+")), {"?"});
}

// base^exponent mod m by repeated squaring (0^0 = 1, as in Python)
static inline int power_mod(int base, long long exponent, int m) {
    long long result = 1 % m, b = python_mod(base, m);
    for (; exponent > 0; exponent >>= 1, b = b * b % m)
        if (exponent & 1) result = result * b % m;
    return (int)result;
}

struct PolyTerm {
    long long coefficient, degree;
};

struct Polynomial {
    long long x;
    std::vector<PolyTerm> terms;
};

static inline Polynomial read_poly(const Words& prompt) {
    Reader r(prompt);
    for (const char* w : {"Evaluate", "at", "x", "="}) r.expect(w);
    Polynomial p;
    p.x = read_small_number(r, true);
    r.expect("in");
    do {
        PolyTerm term;
        term.coefficient = read_small_number(r, true);
        for (const char* w : {"*", "x", "**"}) r.expect(w);
        term.degree = read_small_number(r, false);
        p.terms.push_back(term);
    } while (r.accept("+"));
    r.expect("?");
    r.finish();
    return p;
}

static inline Words poly_solve(const Task&, const Words& prompt, int* length) {
    Polynomial p = read_poly(prompt);
    int value = 0;
    for (const PolyTerm& t : p.terms)
        value = (value + python_mod(t.coefficient, POLY_MODULUS) * power_mod(python_mod(p.x, POLY_MODULUS), t.degree, POLY_MODULUS)) % POLY_MODULUS;
    *length = (int)p.terms.size();
    return concat(ANSWER_IS, {std::to_string(value), "."});
}

static inline Words term_words(const PolyTerm& t) { return concat(concat(number_words(t.coefficient), {"*", "x", "**"}), number_words(t.degree)); }

// coefficient * base^exponent exactly (and base^exponent), or an error where a scratchpad could not write it out
static inline long long term_value(long long coefficient, long long base, long long exponent, long long* power) {
    if (base == 0 || base == 1) *power = base == 0 && exponent > 0 ? 0 : 1;
    else if (base == -1) *power = exponent % 2 ? -1 : 1;
    else {  // |base| >= 2 overflows within 63 factors
        *power = 1;
        for (long long k = 0; k < exponent; k++)
            if (__builtin_mul_overflow(*power, base, power)) fail("the scratchpad would write %lld ** %lld out in full: too large", base, exponent);
    }
    long long value;
    if (__builtin_mul_overflow(coefficient, *power, &value) || value == LLONG_MIN || *power == LLONG_MIN)  // (number_words negates)
        fail("the scratchpad would write %lld * %lld ** %lld out in full: too large", coefficient, base, exponent);
    return value;
}

// Term by term: each written out in full, then added to the running sum mod 10:
//     in - 2 * x ** 2 comp - 2 * - 1 ** 2 = - 2 * 1 out - 2 [ sum: 0 + - 2 = 8 ] re 3 * x ** 0
static inline std::vector<Step> poly_steps(const Task&, const Words& prompt) {
    Polynomial p = read_poly(prompt);
    std::vector<Step> steps;
    int sum = 0;
    for (size_t i = 0; i < p.terms.size(); i++) {
        const PolyTerm& t = p.terms[i];
        long long power, value = term_value(t.coefficient, p.x, t.degree, &power);
        Step s;
        s.part[STEP_INPUT] = term_words(t);
        s.part[STEP_COMP] = concat(concat(concat(number_words(t.coefficient), {"*"}), number_words(p.x)), concat({"**"}, number_words(t.degree)));
        s.part[STEP_COMP] = concat(concat(concat(s.part[STEP_COMP], {"="}), number_words(t.coefficient)), concat({"*"}, number_words(power)));
        s.part[STEP_OUTPUT] = number_words(value);
        int next = python_mod(sum + python_mod(value, POLY_MODULUS), POLY_MODULUS);
        s.part[STEP_VARS] = concat(concat(concat({"sum:"}, number_words(sum)), concat({"+"}, number_words(value))), {"=", DIGITS[next]});
        sum = next;
        std::vector<Words> rest;
        for (size_t j = i + 1; j < p.terms.size(); j++) rest.push_back(term_words(p.terms[j]));
        s.part[STEP_REMAINING] = join_with(rest, "+");
        steps.push_back(s);
    }
    return steps;
}

static inline Words poly_step_lexicon() { return {"sum:"}; }
static const ScratchpadSteps POLY_STEPS = {poly_steps, poly_step_lexicon, true};

// ----------------------------------------------------------------------------
// sorting: "Sort the following list [ M , E , F ] ." -> "The sorted list is [ E , F , M ] ."
// single token: 50 symbols sorted by their place in the list (0-9, a-z, A-N), not by ASCII;
// multi digit: integers in [10, 9999] sorted by value

enum SortVariant { SORT_SINGLE, SORT_MULTI };
static const int SORT_SYMBOLS = 50;

static inline const Alphabet& sort_alphabet() {
    static const Alphabet alphabet(Words(copy_alphabet().symbols.begin(), copy_alphabet().symbols.begin() + SORT_SYMBOLS));
    return alphabet;
}

static inline Words sort_lexicon() {
    return concat(sort_alphabet().symbols, {"Sort", "the", "following", "list", "[", "]", ",", ".", "The", "sorted", "is"});
}

static inline Words sort_sample(const Task& task, Rng* rng, const Bin& bin) {
    std::vector<Words> items;
    for (int i = 0; i < bin.length; i++) {
        if (task.variant == SORT_SINGLE)
            items.push_back({sort_alphabet().symbols[rng->below(SORT_SYMBOLS)]});
        else
            items.push_back(number_words(rng->between(10, 9999)));
    }
    return concat(concat({"Sort", "the", "following", "list", "["}, join_with(items, ",")), {"]", "."});
}

// the list's items: symbols, or numbers' digit strings
static inline std::vector<std::string> read_sort(const Task& task, const Words& prompt) {
    Reader r(prompt);
    for (const char* w : {"Sort", "the", "following", "list", "["}) r.expect(w);
    std::vector<std::string> items;
    do {
        items.push_back(task.variant == SORT_SINGLE ? sort_alphabet().read(r, "a list item") : read_digits(r));
    } while (r.accept(","));
    r.expect("]");
    r.expect(".");
    r.finish();
    return items;
}

static inline bool sorts_before(const Task& task, const std::string& x, const std::string& y) {
    if (task.variant == SORT_SINGLE) return sort_alphabet().rank.at(x) < sort_alphabet().rank.at(y);
    return x.size() != y.size() ? x.size() < y.size() : x < y;  // no leading zeros: shorter is smaller
}

static inline std::vector<Words> item_words(const Task& task, const std::vector<std::string>& items) {
    std::vector<Words> words;
    for (const std::string& item : items) words.push_back(task.variant == SORT_SINGLE ? Words{item} : digit_words(item));
    return words;
}

static inline Words sort_solve(const Task& task, const Words& prompt, int* length) {
    std::vector<std::string> items = read_sort(task, prompt);
    *length = (int)items.size();
    std::stable_sort(items.begin(), items.end(), [&](const std::string& x, const std::string& y) { return sorts_before(task, x, y); });
    return concat({"The", "sorted", "list", "is"}, concat(bracketed(item_words(task, items)), {"."}));
}

// Selection sort: each step swaps the smallest item of the unsorted rest (its first, if it
// occurs more than once) with the rest's first item, which is the step's input:
//     in M comp The minimum of the unsorted portion out E re [ M , F , F , N ]
static inline std::vector<Step> sort_steps(const Task& task, const Words& prompt) {
    std::vector<std::string> items = read_sort(task, prompt);
    std::vector<Step> steps;
    for (size_t i = 0; i < items.size(); i++) {
        size_t smallest = i;
        for (size_t j = i + 1; j < items.size(); j++)
            if (sorts_before(task, items[j], items[smallest])) smallest = j;
        Step s;
        s.part[STEP_INPUT] = item_words(task, {items[i]})[0];
        s.part[STEP_COMP] = {"The", "minimum", "of", "the", "unsorted", "portion"};
        s.part[STEP_OUTPUT] = item_words(task, {items[smallest]})[0];
        std::swap(items[i], items[smallest]);
        s.part[STEP_REMAINING] = bracketed(item_words(task, std::vector<std::string>(items.begin() + i + 1, items.end())));
        steps.push_back(s);
    }
    return steps;
}

static inline Words sort_step_lexicon() { return {"The", "minimum", "of", "the", "unsorted", "portion"}; }
static const ScratchpadSteps SORT_STEPS = {sort_steps, sort_step_lexicon, false};

// ----------------------------------------------------------------------------
// summation: "Compute: 3 + 8 + 6 . [SEP]" -> "The answer is 7 ." (values 1-9, the sum mod 10)

static const int SUM_MODULUS = 10;

static inline Words sum_lexicon() { return concat(DIGITS, {"Compute:", "+", ".", "[SEP]", "The", "answer", "is"}); }

static inline Words sum_sample(const Task&, Rng* rng, const Bin& bin) {
    std::vector<Words> values;
    for (int i = 0; i < bin.length; i++) values.push_back(number_words(rng->between(1, 9)));
    return concat(concat({"Compute:"}, join_with(values, "+")), {".", "[SEP]"});
}

// the numbers as digit strings
static inline std::vector<std::string> read_sum(const Words& prompt) {
    Reader r(prompt);
    r.expect("Compute:");
    std::vector<std::string> numbers;
    do {
        numbers.push_back(read_digits(r));
    } while (r.accept("+"));
    r.expect(".");
    r.expect("[SEP]");
    r.finish();
    return numbers;
}

static inline Words sum_solve(const Task&, const Words& prompt, int* length) {
    std::vector<std::string> numbers = read_sum(prompt);
    int sum = 0;
    for (const std::string& digits : numbers) sum = (sum + (digits.back() - '0')) % SUM_MODULUS;  // a number mod 10 is its last digit
    *length = (int)numbers.size();
    return concat(ANSWER_IS, {std::to_string(sum), "."});
}

// Number by number, added to the running sum mod 10 (the sum is written out, then reduced):
//     in 8 comp 8 + sum = 8 + 3 = out 1 1 [ sum: 1 1 = 1 ] re 6 + 1
static inline std::vector<Step> sum_steps(const Task&, const Words& prompt) {
    std::vector<std::string> numbers = read_sum(prompt);
    std::vector<Step> steps;
    long long sum = 0;
    for (size_t i = 0; i < numbers.size(); i++) {
        if (numbers[i].size() > MAX_SMALL_NUMBER_DIGITS)
            fail("number %zu has %zu digits; the scratchpad writes numbers of at most %d", i + 1, numbers[i].size(), MAX_SMALL_NUMBER_DIGITS);
        long long value = std::stoll(numbers[i]), total = value + sum;
        Step s;
        s.part[STEP_INPUT] = number_words(value);
        s.part[STEP_COMP] = concat(concat(number_words(value), {"+", "sum", "="}), concat(number_words(value), {"+", DIGITS[sum], "="}));
        s.part[STEP_OUTPUT] = number_words(total);
        sum = total % SUM_MODULUS;
        s.part[STEP_VARS] = concat(concat({"sum:"}, number_words(total)), {"=", DIGITS[sum]});
        std::vector<Words> rest;
        for (size_t j = i + 1; j < numbers.size(); j++) rest.push_back(digit_words(numbers[j]));
        s.part[STEP_REMAINING] = join_with(rest, "+");
        steps.push_back(s);
    }
    return steps;
}

static inline Words sum_step_lexicon() { return {"sum", "sum:", "="}; }
static const ScratchpadSteps SUM_STEPS = {sum_steps, sum_step_lexicon, true};

// ----------------------------------------------------------------------------
// parity: "Is the number of 1's even in the sequence [ 0 , 1 , 1 ] ?" -> "The answer is Yes ."

static const Words PARITY_QUESTION = {"Is", "the", "number", "of", "1's", "even", "in", "the", "sequence", "["};

static inline Words parity_lexicon() {
    return {"0", "1", "Is", "the", "number", "of", "1's", "even", "in", "sequence", "[", "]", ",", "?",
            "The", "answer", "is", "Yes", "No", "."};
}

static inline Words parity_sample(const Task&, Rng* rng, const Bin& bin) {
    std::vector<Words> bits;
    for (int i = 0; i < bin.length; i++) bits.push_back({rng->below(2) ? "1" : "0"});
    return concat(concat(PARITY_QUESTION, join_with(bits, ",")), {"]", "?"});
}

static inline std::vector<int> read_parity(const Words& prompt) {
    Reader r(prompt);
    for (const std::string& w : PARITY_QUESTION) r.expect(w.c_str());
    std::vector<int> bits;
    do {
        if (!r.peek_is("0") && !r.peek_is("1")) r.error("a bit (0 or 1)");
        bits.push_back(r.next("a bit") == "1");
    } while (r.accept(","));
    r.expect("]");
    r.expect("?");
    r.finish();
    return bits;
}

static inline Words parity_solve(const Task&, const Words& prompt, int* length) {
    std::vector<int> bits = read_parity(prompt);
    *length = (int)bits.size();
    return concat(ANSWER_IS, {std::count(bits.begin(), bits.end(), 1) % 2 == 0 ? "Yes" : "No", "."});
}

// Bit by bit, each XORed (written **, as the paper did) into the parity of the bits before it:
//     in 1 comp 1 ** par = 1 ** 0 out 1 [ par: 1 ] re [ 1 , 0 , 1 ]
static inline std::vector<Step> parity_steps(const Task&, const Words& prompt) {
    std::vector<int> bits = read_parity(prompt);
    std::vector<Step> steps;
    int parity = 0;
    for (size_t i = 0; i < bits.size(); i++) {
        const std::string& bit = DIGITS[bits[i]];
        Step s;
        s.part[STEP_INPUT] = {bit};
        s.part[STEP_COMP] = {bit, "**", "par", "=", bit, "**", DIGITS[parity]};
        parity ^= bits[i];
        s.part[STEP_OUTPUT] = {DIGITS[parity]};
        s.part[STEP_VARS] = {"par:", DIGITS[parity]};
        std::vector<Words> rest;
        for (size_t j = i + 1; j < bits.size(); j++) rest.push_back({DIGITS[bits[j]]});
        s.part[STEP_REMAINING] = bracketed(rest);
        steps.push_back(s);
    }
    return steps;
}

static inline Words parity_step_lexicon() { return {"**", "par", "par:", "="}; }
static const ScratchpadSteps PARITY_STEPS = {parity_steps, parity_step_lexicon, true};

// ----------------------------------------------------------------------------
// LEGO (Zhang et al. 2022, paper's seq2seq form): a chain of n variables over {+1, -1}
// "If a = -1 , b = - a , c = + b . Then , what is the value of c ?" -> "The answer is +1 ."
// clauses in chain order; the query is one of the second half of the chain, [ceil(n/2), n-1]

static const int LEGO_VARIABLES = 26;  // variable names are the letters a-z
static const Words LEGO_QUESTION = {"Then", ",", "what", "is", "the", "value", "of"};

static inline const Alphabet& lego_alphabet() {
    static const Alphabet alphabet([] {
        Words s;
        for (char c = 'a'; c <= 'z'; c++) s.push_back(std::string(1, c));
        return s;
    }());
    return alphabet;
}

static inline Words lego_lexicon() {
    return concat(lego_alphabet().symbols, {"If", "=", "+", "-", "+1", "-1", ",", ".", "Then", "what", "is", "the",
                                            "value", "of", "?", "The", "answer"});
}

static inline Words lego_sample(const Task&, Rng* rng, const Bin& bin) {
    int n = bin.length;
    Words names = lego_alphabet().symbols;
    for (int i = 0; i < n; i++) std::swap(names[i], names[rng->between(i, LEGO_VARIABLES - 1)]);
    std::vector<Words> clauses;
    int previous = 0;
    for (int i = 0; i < n; i++) {
        int value = rng->below(2);
        if (i == 0)
            clauses.push_back({names[0], "=", value ? "+1" : "-1"});
        else
            clauses.push_back({names[i], "=", value == previous ? "+" : "-", names[i - 1]});
        previous = value;
    }
    int query = rng->between((n + 1) / 2, n - 1);
    Words prompt = concat(concat({"If"}, join_with(clauses, ",")), {"."});
    return concat(concat(prompt, LEGO_QUESTION), {names[query], "?"});
}

// Clauses may come in any order (so shuffled-clause variants solve too); each variable is
// defined once, as a constant or as +/- another variable.
struct LegoClause {
    std::string variable;  // the one it defines
    int sign;              // +1 or -1
    std::string source;    // "" for a constant (then sign is the value)
};

struct LegoPrompt {
    std::vector<LegoClause> clauses;  // in the prompt's order
    std::string query;
};

static inline LegoPrompt read_lego(const Words& prompt) {
    const Alphabet& names = lego_alphabet();
    Reader r(prompt);
    r.expect("If");
    LegoPrompt p;
    std::unordered_set<std::string> defined;
    do {
        size_t at = r.pos + 1;
        LegoClause clause;
        clause.variable = names.read(r, "a variable (a-z)");
        r.expect("=");
        if (r.peek_is("+1") || r.peek_is("-1")) {
            clause.sign = r.next("a value") == "+1" ? 1 : -1;
        } else {
            if (!r.peek_is("+") && !r.peek_is("-")) r.error("'+1', '-1', '+' or '-'");
            clause.sign = r.next("a sign") == "+" ? 1 : -1;
            clause.source = names.read(r, "a variable (a-z)");
        }
        if (!defined.insert(clause.variable).second) fail("word %zu: variable '%s' is defined twice", at, clause.variable.c_str());
        p.clauses.push_back(clause);
    } while (r.accept(","));
    r.expect(".");
    for (const std::string& w : LEGO_QUESTION) r.expect(w.c_str());
    p.query = names.read(r, "a variable (a-z)");
    r.expect("?");
    r.finish();
    return p;
}

static inline int lego_value(const LegoPrompt& p, std::string variable) {
    std::unordered_map<std::string, const LegoClause*> definition;
    for (const LegoClause& c : p.clauses) definition[c.variable] = &c;
    int value = 1;
    for (size_t hops = 0; hops <= p.clauses.size(); hops++) {
        auto it = definition.find(variable);
        if (it == definition.end()) fail("variable '%s' is used but never defined", variable.c_str());
        value *= it->second->sign;
        if (it->second->source.empty()) return value;
        variable = it->second->source;
    }
    fail("the clauses define variables in a circle");
}

static inline const char* lego_value_word(int value) { return value > 0 ? "+1" : "-1"; }
static inline const char* lego_sign_word(int sign) { return sign > 0 ? "+" : "-"; }

static inline Words lego_solve(const Task&, const Words& prompt, int* length) {
    LegoPrompt p = read_lego(prompt);
    *length = (int)p.clauses.size();
    return concat(ANSWER_IS, {lego_value_word(lego_value(p, p.query)), "."});
}

static inline Words clause_words(const LegoClause& c) {
    if (c.source.empty()) return {c.variable, "=", lego_value_word(c.sign)};
    return {c.variable, "=", lego_sign_word(c.sign), c.source};
}

// The clauses resolved one per step, each time the first (in the prompt's order) whose right
// side is known, until every variable has its value (not only the queried one). The constant's
// step computes nothing:
//     in q comp out -1 re c = + t , t = - q        then        in t comp - q = - -1 out +1 re c = + t
static inline std::vector<Step> lego_steps(const Task&, const Words& prompt) {
    LegoPrompt p = read_lego(prompt);
    for (const LegoClause& c : p.clauses) lego_value(p, c.variable);  // every chain ends in a constant
    std::unordered_map<std::string, int> value;
    std::vector<const LegoClause*> left;
    for (const LegoClause& c : p.clauses) left.push_back(&c);
    std::vector<Step> steps;
    while (!left.empty()) {
        size_t k = 0;
        while (!left[k]->source.empty() && !value.count(left[k]->source)) k++;
        const LegoClause& c = *left[k];
        left.erase(left.begin() + k);
        Step s;
        s.part[STEP_INPUT] = {c.variable};
        if (!c.source.empty()) s.part[STEP_COMP] = {lego_sign_word(c.sign), c.source, "=", lego_sign_word(c.sign), lego_value_word(value[c.source])};
        value[c.variable] = c.source.empty() ? c.sign : c.sign * value[c.source];
        s.part[STEP_OUTPUT] = {lego_value_word(value[c.variable])};
        std::vector<Words> rest;
        for (const LegoClause* r : left) rest.push_back(clause_words(*r));
        s.part[STEP_REMAINING] = join_with(rest, ",");
        steps.push_back(s);
    }
    return steps;
}

static const ScratchpadSteps LEGO_STEPS = {lego_steps, [] { return Words{}; }, false};

// ----------------------------------------------------------------------------
// SCAN and PCFG SET, the tasks drawn from a grammar, in a file of their own

#include "grammars.h"

// ----------------------------------------------------------------------------
// the fifteen ch_* tasks of Delétang et al. 2023, in a file of their own

#include "chomsky.h"

// ----------------------------------------------------------------------------
// the task table

static const Task TASKS[] = {
    // name, description, length unit, train min, train max, test max, longest, variant, pairs,
    // lexicon, sample, deck, enumerate, solve, scratchpad steps
    {"copy", "copy one word repeated n times (paper's rsc, Fig. 3 'Copy')", "input words", 2, 20, 40, 1000,
     COPY_RSC, false, copy_lexicon, copy_sample, nullptr, nullptr, copy_solve, nullptr},
    {"copy_rsc2x", "one word repeated n times -> repeated 2n times", "input words", 2, 20, 40, 1000,
     COPY_RSC2X, false, copy_lexicon, copy_sample, nullptr, nullptr, copy_solve, nullptr},
    {"copy_rdc", "Replace a with b in a a a -> b b b", "input words", 2, 20, 40, 1000,
     COPY_RDC, false, copy_lexicon, nullptr, &RDC_PROMPTS, nullptr, copy_solve, nullptr},
    {"copy_cmc", "copy n random words", "input words", 2, 20, 40, 1000,
     COPY_CMC, false, copy_lexicon, copy_sample, nullptr, nullptr, copy_solve, nullptr},
    {"copy_cmc2x", "copy n random words twice: w [NEXT] w", "input words", 2, 20, 40, 1000,
     COPY_CMC2X, false, copy_lexicon, copy_sample, nullptr, nullptr, copy_solve, nullptr},
    {"reverse", "reverse n random words, twice: r [NEXT] r (paper's mc2x, Fig. 3 'Reverse')", "input words", 2, 20, 40, 1000,
     REVERSE_MC2X, false, copy_lexicon, copy_sample, nullptr, nullptr, copy_solve, nullptr},
    {"reverse_mc", "reverse n random words", "input words", 2, 20, 40, 1000,
     REVERSE_MC, false, copy_lexicon, copy_sample, nullptr, nullptr, copy_solve, nullptr},
    {"reverse_mcrv", "reverse, then the original: r [NEXT] w", "input words", 2, 20, 40, 1000,
     REVERSE_MCRV, false, copy_lexicon, copy_sample, nullptr, nullptr, copy_solve, nullptr},
    {"addition", "add two integers (answer most significant digit first)", "digits of the longer operand", 1, 8, 16, 1000,
     0, true, addition_lexicon, addition_sample, nullptr, nullptr, addition_solve, &ADDITION_STEPS},
    {"poly", "evaluate a polynomial at x, mod 10", "terms", 1, 8, 16, 1000,
     0, false, poly_lexicon, poly_sample, nullptr, nullptr, poly_solve, &POLY_STEPS},
    {"sort", "sort single-token symbols by their fixed order", "list items", 2, 8, 16, 1000,
     SORT_SINGLE, false, sort_lexicon, sort_sample, nullptr, nullptr, sort_solve, &SORT_STEPS},
    {"sort_multi", "sort integers of 2-4 digits", "list items", 2, 8, 16, 1000,
     SORT_MULTI, false, sort_lexicon, sort_sample, nullptr, nullptr, sort_solve, &SORT_STEPS},
    {"sum", "sum of digits 1-9, mod 10", "numbers", 2, 8, 16, 1000,
     0, false, sum_lexicon, sum_sample, nullptr, nullptr, sum_solve, &SUM_STEPS},
    {"parity", "is the number of 1s even?", "bits", 4, 8, 16, 1000,
     0, false, parity_lexicon, parity_sample, nullptr, nullptr, parity_solve, &PARITY_STEPS},
    {"lego", "resolve a chain of +/- variable assignments", "variables", 4, 8, 16, LEGO_VARIABLES,
     0, false, lego_lexicon, lego_sample, nullptr, nullptr, lego_solve, &LEGO_STEPS},
    {"scan", "SCAN commands -> actions, the finite language split by output length", "output actions", 1, 25, 48, 48,
     0, false, scan_lexicon, nullptr, nullptr, scan_enumerate, scan_solve, nullptr},
    {"pcfg", "PCFG SET string-edit functions in prefix notation", "function words", 1, 8, 35, 100,
     0, false, pcfg_lexicon, pcfg_sample, nullptr, nullptr, pcfg_solve, nullptr},
    // Delétang et al. 2023: train λ 1-40, test 41-100 (the paper's test went on to 500: --test-max 500)
    {"ch_even_pairs", "regular: is the number of 01 and 10 pairs in a bit string odd?", "bits", 1, 40, 100, 500,
     CH_EVEN_PAIRS, false, ch_lexicon<CH_EVEN_PAIRS>, ch_uniform_sample, nullptr, nullptr, even_pairs_solve, nullptr},
    {"ch_modular_arithmetic", "regular: + - * of digits mod 5, usual precedence", "numbers", 1, 20, 50, 500,
     CH_MODULAR_ARITHMETIC, false, ch_lexicon<CH_MODULAR_ARITHMETIC>, modular_arithmetic_sample, nullptr, nullptr, modular_arithmetic_solve, nullptr},
    {"ch_parity_check", "regular: the number of 1s in a bit string, mod 2", "bits", 1, 40, 100, 500,
     CH_PARITY_CHECK, false, ch_lexicon<CH_PARITY_CHECK>, ch_uniform_sample, nullptr, nullptr, parity_check_solve, nullptr},
    {"ch_cycle_navigation", "regular: the end of a walk of -1/0/+1 steps on a 5-cycle", "actions", 1, 40, 100, 500,
     CH_CYCLE_NAVIGATION, false, ch_lexicon<CH_CYCLE_NAVIGATION>, ch_uniform_sample, nullptr, nullptr, cycle_navigation_solve, nullptr},
    {"ch_stack_manipulation", "context-free: a bit stack after POP/PUSH0/PUSH1, top first", "stack bits and actions", 1, 40, 100, 500,
     CH_STACK_MANIPULATION, false, ch_lexicon<CH_STACK_MANIPULATION>, stack_manipulation_sample, nullptr, nullptr, stack_manipulation_solve, nullptr},
    {"ch_reverse_string", "context-free: reverse a bit string", "bits", 1, 40, 100, 500,
     CH_REVERSE_STRING, false, ch_lexicon<CH_REVERSE_STRING>, ch_uniform_sample, nullptr, nullptr, reverse_string_solve, nullptr},
    {"ch_modular_arithmetic_brackets", "context-free: a bracketed + - * expression mod 5", "expression words", 1, 40, 100, 500,
     CH_MODULAR_BRACKETS, false, ch_lexicon<CH_MODULAR_BRACKETS>, modular_brackets_sample, nullptr, nullptr, modular_arithmetic_solve, nullptr},
    {"ch_solve_equation", "context-free: the digit x stands for in a bracketed +/- equation mod 5", "equation words", 3, 40, 100, 500,
     CH_SOLVE_EQUATION, false, ch_lexicon<CH_SOLVE_EQUATION>, solve_equation_sample, nullptr, nullptr, solve_equation_solve, nullptr},
    {"ch_duplicate_string", "context-sensitive: a bit string written twice", "bits", 1, 40, 100, 500,
     CH_DUPLICATE_STRING, false, ch_lexicon<CH_DUPLICATE_STRING>, ch_uniform_sample, nullptr, nullptr, duplicate_string_solve, nullptr},
    {"ch_missing_duplicate", "context-sensitive: the masked bit of a string written twice", "bits of the string", 1, 20, 50, 500,
     CH_MISSING_DUPLICATE, false, ch_lexicon<CH_MISSING_DUPLICATE>, missing_duplicate_sample, nullptr, nullptr, missing_duplicate_solve, nullptr},
    {"ch_odds_first", "context-sensitive: a bit string's odd positions, then its even ones", "bits", 1, 40, 100, 500,
     CH_ODDS_FIRST, false, ch_lexicon<CH_ODDS_FIRST>, ch_uniform_sample, nullptr, nullptr, odds_first_solve, nullptr},
    {"ch_binary_addition", "context-sensitive: add two little-endian binary numbers", "input words", 3, 40, 100, 500,
     CH_BINARY_ADDITION, false, ch_lexicon<CH_BINARY_ADDITION>, binary_operation_sample, nullptr, nullptr, binary_operation_solve, nullptr},
    {"ch_binary_multiplication", "context-sensitive: multiply two little-endian binary numbers", "input words", 3, 40, 100, 500,
     CH_BINARY_MULTIPLICATION, false, ch_lexicon<CH_BINARY_MULTIPLICATION>, binary_operation_sample, nullptr, nullptr, binary_operation_solve, nullptr},
    {"ch_compute_sqrt", "context-sensitive: the integer square root of a binary number", "bits", 1, 40, 100, 500,
     CH_COMPUTE_SQRT, false, ch_lexicon<CH_COMPUTE_SQRT>, compute_sqrt_sample, nullptr, nullptr, compute_sqrt_solve, nullptr},
    {"ch_bucket_sort", "context-sensitive: sort symbols from an alphabet of 5", "symbols", 1, 40, 100, 500,
     CH_BUCKET_SORT, false, ch_lexicon<CH_BUCKET_SORT>, ch_uniform_sample, nullptr, nullptr, bucket_sort_solve, nullptr},
};
static const int NUM_TASKS = sizeof(TASKS) / sizeof(TASKS[0]);

static inline const Task& find_task(const std::string& name) {
    for (const Task& t : TASKS)
        if (name == t.name) return t;
    fail("unknown task '%s' (valid: %s)", name.c_str(), names_of(TASKS).c_str());
}

// ----------------------------------------------------------------------------
// scratchpads (the paper's §6, as its code writes them)
//
// With a scratchpad the target spells out the steps of an algorithm that solves the prompt,
// then gives the answer (the plain target):
//     Thinking step by step: STEP # STEP # ... # STEP . Thus, ANSWER
// A step writes the parts its format enables, each after its marker:
//     in INPUT comp COMPUTATION out OUTPUT [ VARIABLES ] re REMAINING
// so addition's first step of "Compute 5 8 7 + 4 6 ?", in the full format, is
//     in 7 , 6 comp 7 + 6 + carry = 1 3 + 0 = 1 3 out 3 [ carry: 1 ] re 5 8 + 4
// The formats are the paper's: full writes every part, minimal ("only compute and output")
// writes comp and out, and each no-X every part but X. Only the answer is graded
// (grade_output); whether the scratchpad was right is scored on its own.

struct ScratchpadFormat {
    const char* name;
    bool writes[NUM_STEP_PARTS];  // input, comp, output, vars, remaining
};

static const ScratchpadFormat SCRATCHPAD_FORMATS[] = {
    {"none", {false, false, false, false, false}},  {"full", {true, true, true, true, true}},
    {"minimal", {false, true, true, false, false}}, {"no-input", {false, true, true, true, true}},
    {"no-comp", {true, false, true, true, true}},   {"no-output", {true, true, false, true, true}},
    {"no-vars", {true, true, true, false, true}},   {"no-remaining", {true, true, true, true, false}},
};
static const int NUM_SCRATCHPAD_FORMATS = sizeof(SCRATCHPAD_FORMATS) / sizeof(SCRATCHPAD_FORMATS[0]);
static const int SCRATCHPAD_NONE = 0;

static const Words SCRATCHPAD_START = {"Thinking", "step", "by", "step:"};
static const Words SCRATCHPAD_END = {".", "Thus,"};  // "Thus," ends the scratchpad: the answer follows
static const char* const STEP_SEPARATOR = "#";
static const char* const STEP_MARKERS[NUM_STEP_PARTS] = {"in", "comp", "out", "[", "re"};
static const char* const VARS_END = "]";

// A step's input left at each step makes a scratchpad grow with the square of its prompt; no
// task's prompt at the paper's lengths comes near this.
static const size_t MAX_SCRATCHPAD_PROMPT_WORDS = 1024;

static inline std::string tasks_with_scratchpads() {
    std::string names;
    for (const Task& t : TASKS)
        if (t.scratchpad) names += (names.empty() ? "" : " ") + std::string(t.name);
    return names;
}

static inline void check_scratchpad(const Task& task, int format) {
    if (format < 0 || format >= NUM_SCRATCHPAD_FORMATS) fail("scratchpad format %d does not exist", format);
    if (format == SCRATCHPAD_NONE) return;
    if (!task.scratchpad) fail("%s has no scratchpad (tasks with one: %s)", task.name, tasks_with_scratchpads().c_str());
    if (!task.scratchpad->has_vars && strcmp(SCRATCHPAD_FORMATS[format].name, "no-vars") == 0)
        fail("%s's steps carry no variables: --scratchpad no-vars would be full", task.name);
}

// the words a task's scratchpads use, its own words among them
static inline Words scratchpad_lexicon(const Task& task) {
    Words words = concat(SCRATCHPAD_START, SCRATCHPAD_END);
    words.push_back(STEP_SEPARATOR);
    words.insert(words.end(), STEP_MARKERS, STEP_MARKERS + NUM_STEP_PARTS);
    words.push_back(VARS_END);
    return concat(words, task.scratchpad->lexicon());
}

// The gold target of a prompt and its λ: the answer, after the steps that lead to it when the
// scratchpad format writes any.
static inline Words task_target(const Task& task, int format, const Words& prompt, int* length) {
    Words answer = task.solve(task, prompt, length);
    if (format == SCRATCHPAD_NONE) return answer;
    if (prompt.size() > MAX_SCRATCHPAD_PROMPT_WORDS)
        fail("scratchpads are written for prompts of up to %zu words (this one has %zu): they grow with the square of the prompt",
             MAX_SCRATCHPAD_PROMPT_WORDS, prompt.size());
    const ScratchpadFormat& f = SCRATCHPAD_FORMATS[format];
    std::vector<Step> steps = task.scratchpad->steps(task, prompt);
    Words target = SCRATCHPAD_START;
    for (size_t i = 0; i < steps.size(); i++) {
        if (i > 0) target.push_back(STEP_SEPARATOR);
        for (int part = 0; part < NUM_STEP_PARTS; part++) {
            if (!f.writes[part] || (part == STEP_VARS && !task.scratchpad->has_vars)) continue;
            target.push_back(STEP_MARKERS[part]);
            target.insert(target.end(), steps[i].part[part].begin(), steps[i].part[part].end());
            if (part == STEP_VARS) target.push_back(VARS_END);
        }
    }
    return concat(concat(target, SCRATCHPAD_END), answer);
}

// An output graded against its gold target (both without <eos>; `ended`: the output stopped
// with <eos>). With a scratchpad only the answer counts, which is what follows the first
// "Thus,"; the scratchpad, what precedes it (an output without "Thus," has none), is scored
// apart. Without one, the whole output is the answer (and the scratchpad verdict says the same).
struct Verdict {
    bool answer, scratchpad;
};

static inline Verdict grade_output(const Words& gold, const Words& output, bool ended) {
    auto gold_thus = std::find(gold.begin(), gold.end(), SCRATCHPAD_END.back());
    if (gold_thus == gold.end()) {
        bool right = ended && output == gold;
        return {right, right};
    }
    auto thus = std::find(output.begin(), output.end(), SCRATCHPAD_END.back());
    bool scratchpad = thus != output.end() && thus - output.begin() == gold_thus - gold.begin() && std::equal(output.begin(), thus, gold.begin());
    bool answer = ended && thus != output.end() && Words(thus + 1, output.end()) == Words(gold_thus + 1, gold.end());
    return {answer, scratchpad};
}

struct DataConfig {
    uint64_t seed = 9842497;  // the paper's data seed; the run's --seed changes init and order, not data
    int train_size = 100000;  // paper: 100,000
    int valid_size = 7500;    // paper: ~15,000 held out, half of it evaluated
    int test_size = 10000;    // paper: ~10,000, equal counts per test bin (addition's: per pair of operand lengths)
    int train_max = 0;        // 0: the task's own split
    int test_max = 0;
    bool bos = false;         // --bos: every sequence starts with <bos>, as Theorem 1's proof needs (the paper had none)
    int scratchpad = SCRATCHPAD_NONE;  // --scratchpad: an index into SCRATCHPAD_FORMATS
    bool reverse_digits = false;  // --reverse-digits: addition's numbers least significant digit first (McLeish et al. 2024)
    bool index_hints = false;     // --index-hints: a hint word before each of addition's digits (Zhou et al. 2024)
    bool zero_pad = false;        // --zero-pad: addition's operands padded to one length, the answer to one more (Cho et al. 2024)
};

// Refuses number-format switches where they do not apply: they are addition's only, and its
// scratchpads are written in the plain format.
static inline void check_digit_format(const Task& task, const DataConfig& data) {
    if (!data.reverse_digits && !data.index_hints && !data.zero_pad) return;
    const char* flag = data.reverse_digits ? "--reverse-digits" : data.index_hints ? "--index-hints" : "--zero-pad";
    if (strcmp(task.name, "addition") != 0) fail("%s is for the addition task only, not %s", flag, task.name);
    if (data.scratchpad != SCRATCHPAD_NONE)
        fail("%s does not go with a scratchpad: addition's scratchpads are written in the plain format (--scratchpad none)", flag);
}

// Addition's number format under a data configuration. H, the number of hints, is the longest
// test answer's digit count (the longest test operand's and one for a carry) and one more, so
// that even the longest answers start at one of two offsets. It follows --test-max: with
// --index-hints, changing the test lengths moves every example's hints (never its numbers).
static inline DigitFormat digit_format(const Task& task, const DataConfig& data) {
    check_digit_format(task, data);
    int test_max = data.test_max ? data.test_max : task.test_max;
    return {data.reverse_digits, data.index_hints ? test_max + 2 : 0, data.zero_pad};
}

// The gold target of a prompt and its λ under a data configuration: the answer in addition's
// number format, or the task's target with the configuration's scratchpad.
static inline Words data_target(const Task& task, const DataConfig& data, const Words& prompt, int* length) {
    DigitFormat f = digit_format(task, data);
    return f.plain() ? task_target(task, data.scratchpad, prompt, length) : addition_answer(f, prompt, length);
}

// ----------------------------------------------------------------------------
// vocabulary

enum { PAD_ID = 0, EOS_ID = 1 };

struct Vocab {
    Words words;                               // id -> word
    std::unordered_map<std::string, int> ids;  // word -> id
    std::vector<unsigned char> is_digit;       // id -> is the word a digit, "0" to "9" (Abacus reads it)

    int size() const { return (int)words.size(); }
    int id(const std::string& word) const {
        auto it = ids.find(word);
        return it == ids.end() ? -1 : it->second;
    }
};

// <pad>, <eos>, the task's words, with a scratchpad the words it adds, with --index-hints the
// hints @0 .. @(H-1), and with --bos a last word <bos>. Each group comes after the ones before
// it, so that a word's id never depends on the switches after it; <bos> is last, so that every
// other word keeps its id with or without it.
static inline Vocab make_vocab(const Task& task, const DataConfig& data = DataConfig()) {
    Vocab v;
    auto add = [&](const std::string& w) {
        if (!v.ids.emplace(w, v.size()).second) fail("internal error: word '%s' twice in the %s vocabulary", w.c_str(), task.name);
        v.words.push_back(w);
        v.is_digit.push_back(is_digit_word(w));
    };
    for (const std::string& w : concat({"<pad>", "<eos>"}, task.lexicon())) add(w);
    if (data.scratchpad != SCRATCHPAD_NONE) {
        check_scratchpad(task, data.scratchpad);
        for (const std::string& w : scratchpad_lexicon(task))
            if (v.id(w) < 0) add(w);
    }
    DigitFormat format = digit_format(task, data);
    for (int i = 0; i < format.hints; i++) add(hint_word(i));
    if (data.bos) add("<bos>");
    return v;
}

// The gold target of a prompt written as text, under the data configuration the vocabulary was
// made with, checking every word against the vocabulary.
static inline Words task_answer(const Task& task, const Vocab& vocab, const std::string& line, int* length, const DataConfig& data = DataConfig()) {
    Words prompt = split_words(line);
    if (prompt.empty()) fail("empty prompt");
    for (size_t i = 0; i < prompt.size(); i++)
        if (vocab.id(prompt[i]) < 0) fail("word %zu: '%s' is not in the %s vocabulary", i + 1, prompt[i].c_str(), task.name);
    return data_target(task, data, prompt, length);
}

// ----------------------------------------------------------------------------
// splits

enum SplitKind { SPLIT_TRAIN, SPLIT_VALID, SPLIT_TEST, NUM_SPLITS };
static const char* const SPLIT_NAMES[NUM_SPLITS] = {"train", "valid", "test"};

// Examples stored as token ids, back to back: prompt, target, <eos>.
struct Split {
    std::vector<int> tokens;
    std::vector<size_t> start = {0};  // example i is tokens[start[i] .. start[i+1])
    std::vector<int> prompt_len;      // tokens before the target begins
    std::vector<int> length;          // λ

    int size() const { return (int)length.size(); }
    const int* example(int i) const { return tokens.data() + start[i]; }
    int example_len(int i) const { return (int)(start[i + 1] - start[i]); }
    int max_example_len() const {
        int longest = 0;
        for (int i = 0; i < size(); i++) longest = std::max(longest, example_len(i));
        return longest;
    }
};

struct LengthSplit {
    int train_min, train_max, test_max;  // test lengths are train_max + 1 .. test_max
};

static const int MAX_SPLIT_SIZE = 10000000;

// A dealt task's bins hold deck->per_bin prompts each: train and valid share their lengths'
// decks, test has its own lengths. A bin gets at most ceil(size / bins) of a split's examples.
static inline void check_deck_sizes(const Task& task, const LengthSplit& s, const DataConfig& config) {
    int per_bin = task.deck->per_bin, train_bins = s.train_max - s.train_min + 1, test_bins = s.test_max - s.train_max;
    auto most = [](int size, int bins) { return (size + bins - 1) / bins; };
    if (most(config.train_size, train_bins) + most(config.valid_size, train_bins) > per_bin)
        fail("%s has %d distinct prompts of each length, which train and valid share: --train-size %d and --valid-size %d "
             "over %d lengths ask for %d of one length", task.name, per_bin, config.train_size, config.valid_size, train_bins,
             most(config.train_size, train_bins) + most(config.valid_size, train_bins));
    if (most(config.test_size, test_bins) > per_bin)
        fail("%s has %d distinct prompts of each length: --test-size %d over %d lengths asks for %d of one length",
             task.name, per_bin, config.test_size, test_bins, most(config.test_size, test_bins));
}

// The task's lengths under a data configuration, whose every field it checks.
static inline LengthSplit length_split(const Task& task, const DataConfig& config) {
    LengthSplit s{task.train_min, config.train_max ? config.train_max : task.train_max,
                  config.test_max ? config.test_max : task.test_max};
    if (s.train_max < s.train_min)
        fail("--train-max %d is below %s's shortest length %d", s.train_max, task.name, s.train_min);
    if (s.test_max <= s.train_max)
        fail("--test-max %d leaves no test lengths above --train-max %d", s.test_max, s.train_max);
    if (s.test_max > task.max_length)
        fail("%s can not make examples longer than %d %s (asked for %d)", task.name, task.max_length, task.length_unit, s.test_max);
    const int sizes[] = {config.train_size, config.valid_size, config.test_size};
    for (int k = 0; k < NUM_SPLITS; k++)
        if (sizes[k] < 1 || sizes[k] > MAX_SPLIT_SIZE)
            fail("--%s-size %d is out of range [1, %d]", SPLIT_NAMES[k], sizes[k], MAX_SPLIT_SIZE);
    if (task.deck) check_deck_sizes(task, s, config);
    check_scratchpad(task, config.scratchpad);
    check_digit_format(task, config);
    return s;
}

// The bins of lengths lo..hi. Addition: every pair of operand lengths (a, b) with
// max(a, b) in lo..hi and both at least the task's shortest length.
static inline std::vector<Bin> task_bins(const Task& task, int lo, int hi) {
    std::vector<Bin> bins;
    if (!task.operand_pairs) {
        for (int n = lo; n <= hi; n++) bins.push_back({n, n, n});
        return bins;
    }
    for (int a = task.train_min; a <= hi; a++)
        for (int b = task.train_min; b <= hi; b++)
            if (std::max(a, b) >= lo) bins.push_back({std::max(a, b), a, b});
    return bins;
}

static inline void add_example(Split* split, const Task& task, const Vocab& vocab, const DataConfig& config, const Words& prompt, const int* expected_length) {
    int length = 0;
    Words target = data_target(task, config, prompt, &length);
    if (expected_length && length != *expected_length)
        fail("internal error: %s generated length %d for a bin of length %d", task.name, length, *expected_length);
    for (const std::string& w : concat(prompt, target)) {
        int id = vocab.id(w);
        if (id < 0) fail("internal error: %s produced '%s', which is not in its vocabulary", task.name, w.c_str());
        split->tokens.push_back(id);
    }
    split->tokens.push_back(EOS_ID);
    split->start.push_back(split->tokens.size());
    split->prompt_len.push_back((int)prompt.size());
    split->length.push_back(length);
}

static inline Split shuffled(const Split& in, Rng rng) {
    std::vector<int> order(in.size());
    for (int i = 0; i < in.size(); i++) order[i] = i;
    for (int i = in.size() - 1; i > 0; i--) std::swap(order[i], order[rng.below(i + 1)]);
    Split out;
    for (int i : order) {
        out.tokens.insert(out.tokens.end(), in.example(i), in.example(i) + in.example_len(i));
        out.start.push_back(out.tokens.size());
        out.prompt_len.push_back(in.prompt_len[i]);
        out.length.push_back(in.length[i]);
    }
    return out;
}

// A dealt bin's prompt numbers in the order its deck deals them, the same for every split
static inline std::vector<int> shuffled_deck(const Task& task, uint64_t seed, uint64_t bin_key) {
    std::vector<int> deck(task.deck->per_bin);
    for (int i = 0; i < (int)deck.size(); i++) deck[i] = i;
    Rng rng = rng_stream(seed, hash_string(task.name), hash_string("deck"), bin_key);
    for (int i = (int)deck.size() - 1; i > 0; i--) std::swap(deck[i], deck[rng.below(i + 1)]);
    return deck;
}

// How many of a split's `size` examples bin k of `bins` gets: size / bins each, the first
// size % bins one more. A split smaller than its bins gives one to every (bins / size)th bin,
// spread over them all: the first `size` would be the shortest lengths alone, or for addition,
// whose pairs of operand lengths run by the first operand, the shortest first operands.
static inline int bin_count(int size, int bins, int k) {
    if (size >= bins) return size / bins + (k < size % bins);
    return (int)((int64_t)(k + 1) * size / bins - (int64_t)k * size / bins);
}

// Generated tasks: `size` examples spread evenly over the bins (bin_count), each bin drawn
// from its own stream (or dealt from its deck: valid from the bottom), then shuffled.
// Addition's number formats rewrite the plain prompts, drawing hint offsets from a second
// stream per bin.
static inline Split sampled_split(const Task& task, const Vocab& vocab, const DataConfig& config, SplitKind kind, int size, int lo, int hi) {
    uint64_t task_key = hash_string(task.name);
    DigitFormat format = digit_format(task, config);
    std::vector<Bin> bins = task_bins(task, lo, hi);
    Split split;
    for (size_t k = 0; k < bins.size(); k++) {
        int count = bin_count(size, (int)bins.size(), (int)k);
        uint64_t bin_key = (uint64_t)bins[k].a << 32 | (uint32_t)bins[k].b;
        Rng rng = rng_stream(config.seed, task_key, kind, bin_key), offsets = rng_stream(config.seed, hash_string("index hints"), kind, bin_key);
        std::vector<int> deck = task.deck ? shuffled_deck(task, config.seed, bin_key) : std::vector<int>();
        for (int i = 0; i < count; i++) {
            Words prompt = !task.deck ? task.sample(task, &rng, bins[k])
                                      : task.deck->nth(task, bins[k], deck[kind == SPLIT_VALID ? deck.size() - 1 - i : i]);
            if (!format.plain()) prompt = written_addition(prompt, format, &offsets);
            add_example(&split, task, vocab, config, prompt, &bins[k].length);
        }
    }
    return shuffled(split, rng_stream(config.seed, task_key, kind, ~0ULL));
}

// A finite language (SCAN), as the paper split it: commands with λ <= train_max are shuffled,
// the first tenth is valid and the rest train; test is every command with a longer λ (up to
// test_max). A size flag can only take fewer than the language has.
static inline Split enumerated_split(const Task& task, const Vocab& vocab, const DataConfig& config, SplitKind kind, int size, const LengthSplit& lengths) {
    Split in_distribution, out_of_distribution;
    for (const Words& prompt : task.enumerate()) {
        int length = 0;
        task.solve(task, prompt, &length);
        if (length >= lengths.train_min && length <= lengths.train_max) add_example(&in_distribution, task, vocab, config, prompt, nullptr);
        if (length > lengths.train_max && length <= lengths.test_max) add_example(&out_of_distribution, task, vocab, config, prompt, nullptr);
    }
    uint64_t task_key = hash_string(task.name);
    Split pool = shuffled(kind == SPLIT_TEST ? out_of_distribution : in_distribution, rng_stream(config.seed, task_key, kind == SPLIT_TEST));
    int held_out = pool.size() / 10;
    // the language need not hold every length: a split left empty would score 0 without a word
    int lo = kind == SPLIT_TEST ? lengths.train_max + 1 : lengths.train_min, hi = kind == SPLIT_TEST ? lengths.test_max : lengths.train_max;
    std::string range = format_text(lo == hi ? "%d" : "%d-%d", lo, hi);
    if (pool.size() == 0)
        fail("%s has no examples of %s %s for its %s split", task.name, range.c_str(), task.length_unit, SPLIT_NAMES[kind]);
    if (kind == SPLIT_VALID && held_out == 0)
        fail("%s has %d examples of %s %s, too few for its valid split (a tenth of them): raise --train-max", task.name,
             pool.size(), range.c_str(), task.length_unit);
    int first = kind == SPLIT_TRAIN ? held_out : 0;
    int available = kind == SPLIT_VALID ? held_out : pool.size() - first;
    Split split;
    for (int i = first; i < first + std::min(size, available); i++) {
        split.tokens.insert(split.tokens.end(), pool.example(i), pool.example(i) + pool.example_len(i));
        split.start.push_back(split.tokens.size());
        split.prompt_len.push_back(pool.prompt_len[i]);
        split.length.push_back(pool.length[i]);
    }
    return split;
}

// the same examples, each now starting with <bos> (part of the prompt; lengths λ unchanged)
static inline Split with_bos(const Split& in, int bos) {
    Split out;
    for (int i = 0; i < in.size(); i++) {
        out.tokens.push_back(bos);
        out.tokens.insert(out.tokens.end(), in.example(i), in.example(i) + in.example_len(i));
        out.start.push_back(out.tokens.size());
        out.prompt_len.push_back(in.prompt_len[i] + 1);
        out.length.push_back(in.length[i]);
    }
    return out;
}

// The split's examples are the same with --bos or without (the data stream does not see it).
static inline Split make_split(const Task& task, const Vocab& vocab, const DataConfig& config, SplitKind kind) {
    LengthSplit lengths = length_split(task, config);
    const int sizes[] = {config.train_size, config.valid_size, config.test_size};
    Split split = task.enumerate ? enumerated_split(task, vocab, config, kind, sizes[kind], lengths)
                  : kind == SPLIT_TEST ? sampled_split(task, vocab, config, kind, sizes[kind], lengths.train_max + 1, lengths.test_max)
                                       : sampled_split(task, vocab, config, kind, sizes[kind], lengths.train_min, lengths.train_max);
    return config.bos ? with_bos(split, vocab.id("<bos>")) : split;
}

struct Dataset {
    const Task* task;
    Vocab vocab;
    LengthSplit lengths;
    Split splits[NUM_SPLITS];
};

// the longest example of any split: the longest sequence a model for this data is built for
static inline int longest_example(const Dataset& d) {
    int longest = 0;
    for (const Split& s : d.splits) longest = std::max(longest, s.max_example_len());
    return longest;
}

static inline Dataset make_dataset(const Task& task, const DataConfig& config) {
    Dataset d{&task, make_vocab(task, config), length_split(task, config), {}};
    for (int k = 0; k < NUM_SPLITS; k++) d.splits[k] = make_split(task, d.vocab, config, (SplitKind)k);
    return d;
}

// An example's words: the prompt, and the target without <eos>.
static inline void example_words(const Split& split, const Vocab& vocab, int i, Words* prompt, Words* target) {
    prompt->clear();
    target->clear();
    const int* ids = split.example(i);
    for (int t = 0; t < split.example_len(i) - 1; t++) (t < split.prompt_len[i] ? prompt : target)->push_back(vocab.words[ids[t]]);
}
