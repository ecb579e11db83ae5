/*
 tasks.h: the synthetic tasks, what the model sees.

 Ten task families (Kazemnejad et al. 2023, reference/paper-protocol.md §2), seventeen variants:
 copy (5), reverse (3), addition, polynomial evaluation, sorting (2), summation, parity, LEGO,
 SCAN and PCFG SET; and the fifteen tasks of Delétang et al. 2023 ("Neural Networks and the
 Chomsky Hierarchy"), named ch_*. For each variant this file provides
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
   - data is a pure function of (data seed, task, split, length bin): changing one split's size
     or length range never changes the examples of another split or another bin
*/
#pragma once

#include <algorithm>
#include <climits>
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
static const int RDC_SYMBOLS = 78;    // rdc draws ordered pairs of distinct words from the first 78

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
    } else if (task.variant == COPY_RDC) {
        int from = rng->below(RDC_SYMBOLS), to = rng->below(RDC_SYMBOLS - 1);
        if (to >= from) to++;  // uniform over the symbols other than `from`
        prompt = {"Replace", s[from], "with", s[to], "in"};
        prompt.insert(prompt.end(), bin.length, s[from]);
    } else {
        prompt = {is_reverse(task.variant) ? "Reverse:" : "Copy:"};
        for (int i = 0; i < bin.length; i++) prompt.push_back(s[rng->below(COPY_SYMBOLS)]);
    }
    prompt.push_back("[SEP]");
    return prompt;
}

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

struct Operands {
    std::string x, y;  // digit strings
};

static inline Operands read_addition(const Words& prompt) {
    Reader r(prompt);
    r.expect("Compute");
    Operands o;
    o.x = read_digits(r);
    r.expect("+");
    o.y = read_digits(r);
    r.expect("?");
    r.finish();
    return o;
}

static inline Words addition_solve(const Task&, const Words& prompt, int* length) {
    Operands o = read_addition(prompt);
    *length = (int)std::max(o.x.size(), o.y.size());
    return concat(concat(ANSWER_IS, digit_words(add_decimal(o.x, o.y))), {"."});
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
//     in M comp The minimum of the unsorted portion out E re [ M , F , F , O ]
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
// "If a = -1 , b = - a , c = + b . Then , what is the value of c ?" -> "The answer is -1 ."
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
// SCAN (Lake & Baroni 2018), complete grammar, reference/tasks.md §1:
//   C -> S | S and S | S after S        S -> V | V twice | V thrice
//   V -> D | U | D[1] opposite D[2] | D[1] around D[2]
//   D -> U left | U right | turn left | turn right        U -> walk | look | run | jump
// "Solve: jump around left twice [SEP]" -> "Left Jump Left Jump ... " (16 actions)
// The language is finite (20,910 commands), so the splits enumerate it exactly; λ is the
// number of output actions.

static const Words SCAN_PRIMITIVES = {"walk", "look", "run", "jump"};
static const Words SCAN_DIRECTIONS = {"left", "right"};

static inline Words scan_lexicon() {
    return {"walk", "look", "run", "jump", "turn", "left", "right", "opposite", "around", "twice", "thrice", "and",
            "after", "Walk", "Look", "Run", "Jump", "Left", "Right", "Solve:", "[SEP]"};
}

// an action is its command word capitalised: walk -> Walk, left -> Left
static inline std::string scan_action(const std::string& word) { return std::string(1, (char)toupper(word[0])) + word.substr(1); }

static inline std::vector<Words> scan_enumerate() {
    std::vector<Words> verbs;  // V: the 34 verb phrases
    for (const std::string& u : SCAN_PRIMITIVES) verbs.push_back({u});
    for (const std::string& x : concat(SCAN_PRIMITIVES, {"turn"}))
        for (const std::string& d : SCAN_DIRECTIONS) {
            verbs.push_back({x, d});
            verbs.push_back({x, "opposite", d});
            verbs.push_back({x, "around", d});
        }
    std::vector<Words> phrases;  // S: 102
    for (const Words& v : verbs) {
        phrases.push_back(v);
        phrases.push_back(concat(v, {"twice"}));
        phrases.push_back(concat(v, {"thrice"}));
    }
    std::vector<Words> prompts;  // C: 102 + 2 * 102^2 = 20,910
    for (const Words& s1 : phrases) {
        prompts.push_back(concat(concat({"Solve:"}, s1), {"[SEP]"}));
        for (const char* conjunction : {"and", "after"})
            for (const Words& s2 : phrases) prompts.push_back(concat(concat(concat({"Solve:"}, s1), concat({conjunction}, s2)), {"[SEP]"}));
    }
    return prompts;
}

static inline Words scan_verb(Reader& r) {
    const char* expected = "an action (walk, look, run, jump or turn)";
    bool primitive = !r.at_end() && std::find(SCAN_PRIMITIVES.begin(), SCAN_PRIMITIVES.end(), r.peek()) != SCAN_PRIMITIVES.end();
    if (!primitive && !r.peek_is("turn")) r.error(expected);
    std::string x = r.next(expected);
    Words act = x == "turn" ? Words{} : Words{scan_action(x)};  // "turn" only turns
    bool opposite = r.accept("opposite"), around = !opposite && r.accept("around");
    if (!r.peek_is("left") && !r.peek_is("right")) {
        if (x == "turn" || opposite || around) r.error("a direction (left or right)");
        return act;
    }
    Words turn = {scan_action(r.next("a direction"))};
    if (opposite) return concat(concat(turn, turn), act);
    Words turn_act = concat(turn, act);
    if (around) return concat(concat(turn_act, turn_act), concat(turn_act, turn_act));
    return turn_act;
}

static inline Words scan_phrase(Reader& r) {
    Words v = scan_verb(r);
    if (r.accept("twice")) return concat(v, v);
    if (r.accept("thrice")) return concat(concat(v, v), v);
    return v;
}

static inline Words scan_solve(const Task&, const Words& prompt, int* length) {
    Reader r(prompt);
    r.expect("Solve:");
    Words actions = scan_phrase(r);
    if (r.accept("and")) actions = concat(actions, scan_phrase(r));
    else if (r.accept("after")) actions = concat(scan_phrase(r), actions);  // "x after y" does y first
    r.expect("[SEP]");
    r.finish();
    *length = (int)actions.size();
    return actions;
}

// ----------------------------------------------------------------------------
// PCFG SET (Hupkes et al. 2020), reference/tasks.md §2: string-edit functions in prefix notation
// "Solve: echo append copy Q10 E4 , shift K15 D8 [SEP]" -> "Q10 E4 D8 K15 K15"
// Sampling grammar, with p_unary and p_func drawn from U(0, 1) for every example (as the
// released corpus was generated):
//   F -> unary U_arg (p_unary) | binary B_arg , B_arg      U_arg, B_arg -> F (p_func) | STRING
//   STRING -> 2-5 symbols, each uniform over A1 .. Z20; no string argument repeats within a prompt
// λ is the number of function words. An example of length λ is a grammar draw conditioned on
// having λ functions (pcfg_sample draws that exactly) and on every function's value having at
// most 256 words: the paper truncated targets at 256 tokens, and without the cap one draw in a
// few hundred at λ = 35 nests `repeat` into targets of thousands of words.

static const Words PCFG_UNARY = {"copy", "reverse", "shift", "echo", "swap_first_last", "repeat"};
static const Words PCFG_BINARY = {"append", "prepend", "remove_first", "remove_second"};
static const int PCFG_LETTERS = 26, PCFG_INDICES = 20;  // symbols A1 .. Z20: 520
static const int PCFG_MAX_DEPTH = 1000;                 // deeper prompts are refused, not recursed into
static const size_t PCFG_MAX_SAMPLED_VALUE = 256;       // see above
static const size_t PCFG_MAX_ANSWER_WORDS = 1 << 20;    // `repeat` doubles: --answer refuses runaway targets

static inline const Alphabet& pcfg_alphabet() {
    static const Alphabet alphabet([] {
        Words s;
        for (int letter = 0; letter < PCFG_LETTERS; letter++)
            for (int index = 1; index <= PCFG_INDICES; index++) s.push_back(std::string(1, (char)('A' + letter)) + std::to_string(index));
        return s;
    }());
    return alphabet;
}

static inline Words pcfg_lexicon() {
    return concat(concat(pcfg_alphabet().symbols, concat(PCFG_UNARY, PCFG_BINARY)), {",", "Solve:", "[SEP]"});
}

static inline bool pcfg_is_unary(const std::string& w) { return std::find(PCFG_UNARY.begin(), PCFG_UNARY.end(), w) != PCFG_UNARY.end(); }
static inline bool pcfg_is_binary(const std::string& w) { return std::find(PCFG_BINARY.begin(), PCFG_BINARY.end(), w) != PCFG_BINARY.end(); }

static inline Words pcfg_apply_unary(const std::string& f, const Words& x) {
    if (f == "copy") return x;
    if (f == "reverse") return Words(x.rbegin(), x.rend());
    if (f == "shift") return concat(Words(x.begin() + 1, x.end()), {x[0]});  // first symbol to the end
    if (f == "echo") return concat(x, {x.back()});                           // last symbol doubled
    if (f == "repeat") return concat(x, x);
    Words swapped = x;  // swap_first_last; like the reference Python, [a] becomes [a, a]
    swapped.front() = x.back();
    if (x.size() == 1) swapped.push_back(x[0]);
    else swapped.back() = x.front();
    return swapped;
}

static inline Words pcfg_apply_binary(const std::string& f, const Words& x, const Words& y) {
    if (f == "append") return concat(x, y);
    if (f == "prepend") return concat(y, x);
    if (f == "remove_first") return y;
    return x;  // remove_second
}

// A uniformly random ordered tree with the given numbers of unary and binary nodes (and so
// binary + 1 leaves), as its nodes' arities in prefix order. Shuffle the multiset of arities, then
// rotate it to start just after the first minimum of the running sum of (arity - 1): by the cycle
// lemma exactly one rotation of such a sequence is a valid prefix code, and this is it.
static inline std::vector<int> random_tree(Rng* rng, int unary, int binary) {
    std::vector<int> arity(unary, 1);
    arity.insert(arity.end(), binary, 2);
    arity.insert(arity.end(), binary + 1, 0);
    for (int i = (int)arity.size() - 1; i > 0; i--) std::swap(arity[i], arity[rng->below(i + 1)]);
    int sum = 0, lowest = 1;
    size_t start = 0;
    for (size_t i = 0; i < arity.size(); i++) {
        sum += arity[i] - 1;
        if (sum < lowest) {
            lowest = sum;
            start = i + 1;
        }
    }
    std::rotate(arity.begin(), arity.begin() + start, arity.end());
    return arity;
}

// Writes the subtree that starts at arity[*node]: names its functions, fills its strings (never
// the same string twice in one prompt) and computes its value. False if a value grows too long.
struct PcfgFill {
    Rng* rng;
    const std::vector<int>& arity;
    size_t node = 0;
    std::unordered_set<std::string> used_strings;
    Words out;

    PcfgFill(Rng* r, const std::vector<int>& tree) : rng(r), arity(tree) {}

    bool subtree(Words* value) {
        int a = arity[node++];
        if (a == 0) {
            do {
                value->clear();
                int k = rng->between(2, 5);
                for (int i = 0; i < k; i++) value->push_back(pcfg_alphabet().symbols[rng->below(PCFG_LETTERS * PCFG_INDICES)]);
            } while (!used_strings.insert(join_words(*value)).second);
            out = concat(out, *value);
            return true;
        }
        const Words& names = a == 1 ? PCFG_UNARY : PCFG_BINARY;
        const std::string& f = names[rng->below((int)names.size())];
        out.push_back(f);
        Words x, y;
        if (!subtree(&x)) return false;
        if (a == 2) {
            out.push_back(",");
            if (!subtree(&y)) return false;
        }
        *value = a == 1 ? pcfg_apply_unary(f, x) : pcfg_apply_binary(f, x, y);
        return value->size() <= PCFG_MAX_SAMPLED_VALUE;
    }
};

// The grammar conditioned on λ = n functions, drawn exactly and without waste (plain rejection
// keeps 1 draw in 1,700 at λ = 35). A tree with u unary and b binary functions has b + 1 strings
// and, once p_unary and p_func ~ U(0,1) are integrated out, probability
//     ∫ p_u^u (1-p_u)^b dp_u · ∫ p_f^(n-1) (1-p_f)^(b+1) dp_f = B(u+1, b+1) · B(n, b+2),
// the same for every tree of that (u, b). There are (n+b)! / (u! b! (b+1)!) such trees, and the
// product simplifies to P(b | n) ∝ 1 / (n + b + 1). So: draw b, draw a uniform tree of that
// shape, fill it in. test_tasks checks the result against rejection from the grammar itself.
static inline Words pcfg_sample(const Task&, Rng* rng, const Bin& bin) {
    int n = bin.length;
    for (;;) {
        double total = 0;
        for (int b = 0; b <= n; b++) total += 1.0 / (n + b + 1);
        double u = rng->uniform() * total;
        int binary = 0;
        while (binary < n && (u -= 1.0 / (n + binary + 1)) >= 0) binary++;
        std::vector<int> arity = random_tree(rng, n - binary, binary);
        PcfgFill fill(rng, arity);
        Words value;
        if (fill.subtree(&value)) return concat(concat({"Solve:"}, fill.out), {"[SEP]"});
    }
}

// Greedy recursive descent: a string argument runs to the next ',', function word or the end.
static inline Words pcfg_evaluate(Reader& r, int depth, int* functions) {
    if (depth > PCFG_MAX_DEPTH) fail("word %zu: functions nested deeper than %d", r.pos + 1, PCFG_MAX_DEPTH);
    if (!r.at_end() && (pcfg_is_unary(r.peek()) || pcfg_is_binary(r.peek()))) {
        std::string f = r.next("a function");
        ++*functions;
        Words result;
        if (pcfg_is_unary(f)) {
            result = pcfg_apply_unary(f, pcfg_evaluate(r, depth + 1, functions));
        } else {
            Words x = pcfg_evaluate(r, depth + 1, functions);
            r.expect(",");
            result = pcfg_apply_binary(f, x, pcfg_evaluate(r, depth + 1, functions));
        }
        if (result.size() > PCFG_MAX_ANSWER_WORDS) fail("the answer would be longer than %zu words", PCFG_MAX_ANSWER_WORDS);
        return result;
    }
    Words symbols;
    while (!r.at_end() && pcfg_alphabet().contains(r.peek())) symbols.push_back(r.next("a symbol"));
    if (symbols.empty()) r.error("a function or a symbol (A1 .. Z20)");
    return symbols;
}

static inline Words pcfg_solve(const Task&, const Words& prompt, int* length) {
    Reader r(prompt);
    r.expect("Solve:");
    int functions = 0;
    Words result = pcfg_evaluate(r, 0, &functions);
    r.expect("[SEP]");
    r.finish();
    *length = functions;
    return result;
}

// ----------------------------------------------------------------------------
// Neural Networks and the Chomsky Hierarchy (Delétang et al., ICLR 2023; reference/tasks.md §5.1)
//
// Fifteen tasks, named ch_*: regular (even pairs, modular arithmetic, parity check, cycle
// navigation), deterministic context-free (stack manipulation, reverse string, modular arithmetic
// with brackets, solve equation) and context-sensitive (duplicate string, missing duplicate, odds
// first, binary addition and multiplication, compute sqrt, bucket sort). The paper's models were
// encoder-only and read the answer off padding positions; here, as for every task in this file,
// the prompt is a task word, the input (a word per symbol) and [SEP], and the model writes the
// answer, then <eos>, where the paper wrote a termination token and zero padding.
// λ is the number of input words (between the task word and [SEP]), the paper's length, except
// where inputs can not have every length: modular arithmetic counts numbers (2λ - 1 words) and
// missing duplicate the length of the string written twice (2λ words). Inputs are drawn as the
// paper's repository draws them.

enum ChVariant {
    CH_EVEN_PAIRS, CH_MODULAR_ARITHMETIC, CH_PARITY_CHECK, CH_CYCLE_NAVIGATION,         // regular
    CH_STACK_MANIPULATION, CH_REVERSE_STRING, CH_MODULAR_BRACKETS, CH_SOLVE_EQUATION,   // deterministic context-free
    CH_DUPLICATE_STRING, CH_MISSING_DUPLICATE, CH_ODDS_FIRST, CH_BINARY_ADDITION,       // context-sensitive
    CH_BINARY_MULTIPLICATION, CH_COMPUTE_SQRT, CH_BUCKET_SORT, NUM_CH_VARIANTS
};

static const int CH_MODULUS = 5;  // paper: arithmetic mod 5, a 5-cycle, bucket sort over 5 symbols
static const Words CH_BITS = {"0", "1"};
static const Words CH_DIGITS = {"0", "1", "2", "3", "4"};

// A task's words: its first word, the words its input is made of (`what` names them in errors:
// for the arithmetic tasks, what an operand may be) and the words its answers are made of.
struct ChWords {
    const char* keyword;
    const char* what;
    Words symbols, answers;
};

static inline const ChWords& ch_words(int variant) {
    static const ChWords table[NUM_CH_VARIANTS] = {
        {"EvenPairs:", "a bit (0 or 1)", CH_BITS, CH_BITS},
        {"ModularArithmetic:", "a digit (0-4)", concat(CH_DIGITS, {"+", "-", "*"}), CH_DIGITS},
        {"ParityCheck:", "a bit (0 or 1)", CH_BITS, CH_BITS},
        {"CycleNavigation:", "an action (-1, 0 or +1)", {"-1", "0", "+1"}, CH_DIGITS},
        {"StackManipulation:", "a bit or an action (POP, PUSH0, PUSH1)", {"0", "1", "POP", "PUSH0", "PUSH1"}, CH_BITS},
        {"ReverseString:", "a bit (0 or 1)", CH_BITS, CH_BITS},
        {"ModularArithmeticBrackets:", "a digit (0-4), '-' or '('", concat(CH_DIGITS, {"+", "-", "*", "(", ")"}), CH_DIGITS},
        {"SolveEquation:", "a digit (0-4), 'x', '-' or '('", concat(CH_DIGITS, {"+", "-", "(", ")", "x", "="}), CH_DIGITS},
        {"DuplicateString:", "a bit (0 or 1)", CH_BITS, CH_BITS},
        {"MissingDuplicate:", "a bit (0 or 1) or the mask _", {"0", "1", "_"}, CH_BITS},
        {"OddsFirst:", "a bit (0 or 1)", CH_BITS, CH_BITS},
        {"BinaryAddition:", "a bit (0 or 1) or '+'", {"0", "1", "+"}, CH_BITS},
        {"BinaryMultiplication:", "a bit (0 or 1) or '*'", {"0", "1", "*"}, CH_BITS},
        {"ComputeSqrt:", "a bit (0 or 1)", CH_BITS, CH_BITS},
        {"BucketSort:", "a symbol (0-4)", CH_DIGITS, CH_DIGITS},
    };
    return table[variant];
}

static inline bool is_one_of(const Words& words, const std::string& w) { return std::find(words.begin(), words.end(), w) != words.end(); }

template <int VARIANT>
static inline Words ch_lexicon() {
    const ChWords& c = ch_words(VARIANT);
    Words words = concat({c.keyword}, c.symbols);
    for (const std::string& w : c.answers)
        if (!is_one_of(words, w)) words.push_back(w);
    return concat(words, {"[SEP]"});
}

static inline Words ch_prompt(const Task& task, const Words& input) { return concat(concat({ch_words(task.variant).keyword}, input), {"[SEP]"}); }

static inline Words random_symbols(Rng* rng, int n, const Words& symbols) {
    Words w;
    for (int i = 0; i < n; i++) w.push_back(symbols[rng->below((int)symbols.size())]);
    return w;
}

// n bits, uniform but not all 0 (the paper's numbers are uniform in [1, 2^n - 1], zero-padded to n bits)
static inline Words random_nonzero_bits(Rng* rng, int n) {
    Words bits;
    do bits = random_symbols(rng, n, CH_BITS);
    while (!is_one_of(bits, "1"));
    return bits;
}

// the tasks whose input is λ symbols drawn uniformly from the task's symbols
static inline Words ch_uniform_sample(const Task& task, Rng* rng, const Bin& bin) {
    return ch_prompt(task, random_symbols(rng, bin.length, ch_words(task.variant).symbols));
}

// "Keyword: w ... w [SEP]" -> the words between: at least one, each one of the task's symbols.
// Input word i is prompt word i + 2, which is how the tasks below name it in an error.
static inline Words ch_read(const Task& task, const Words& prompt) {
    const ChWords& c = ch_words(task.variant);
    Reader r(prompt);
    r.expect(c.keyword);
    Words input;
    do {
        if (r.at_end() || !is_one_of(c.symbols, r.peek())) r.error(input.empty() ? c.what : (std::string(c.what) + " or '[SEP]'").c_str());
        input.push_back(r.next(c.what));
    } while (!r.peek_is("[SEP]"));
    r.expect("[SEP]");
    r.finish();
    return input;
}

// even pairs: "EvenPairs: 0 1 1 0 1 [SEP]" -> "1": three 01 or 10 pairs, an odd number (the paper's class 1)
static inline Words even_pairs_solve(const Task& task, const Words& prompt, int* length) {
    Words bits = ch_read(task, prompt);
    *length = (int)bits.size();
    int unequal = 0;
    for (size_t i = 1; i < bits.size(); i++) unequal += bits[i] != bits[i - 1];
    return {CH_BITS[unequal % 2]};
}

// parity check: "ParityCheck: 1 0 1 1 [SEP]" -> "1": three 1s, mod 2
static inline Words parity_check_solve(const Task& task, const Words& prompt, int* length) {
    Words bits = ch_read(task, prompt);
    *length = (int)bits.size();
    return {CH_BITS[std::count(bits.begin(), bits.end(), "1") % 2]};
}

// cycle navigation: "CycleNavigation: +1 -1 0 -1 -1 [SEP]" -> "3": from 0 on a 5-cycle, -2 steps end at 3
static inline Words cycle_navigation_solve(const Task& task, const Words& prompt, int* length) {
    Words actions = ch_read(task, prompt);
    *length = (int)actions.size();
    int position = 0;
    for (const std::string& a : actions) position = python_mod(position + (a == "+1") - (a == "-1"), CH_MODULUS);
    return {CH_DIGITS[position]};
}

// reverse string: "ReverseString: 1 1 0 [SEP]" -> "0 1 1"
static inline Words reverse_string_solve(const Task& task, const Words& prompt, int* length) {
    Words bits = ch_read(task, prompt);
    *length = (int)bits.size();
    return Words(bits.rbegin(), bits.rend());
}

// duplicate string: "DuplicateString: 1 0 1 [SEP]" -> "1 0 1 1 0 1"
static inline Words duplicate_string_solve(const Task& task, const Words& prompt, int* length) {
    Words bits = ch_read(task, prompt);
    *length = (int)bits.size();
    return concat(bits, bits);
}

// odds first: "OddsFirst: 0 0 1 1 0 1 0 1 [SEP]" -> "0 1 0 0 0 1 1 1": the bits at odd positions
// counting from 1 (s1 s3 s5 s7, as the paper's text writes it), then those at even ones (s2 s4 s6 s8)
static inline Words odds_first_solve(const Task& task, const Words& prompt, int* length) {
    Words bits = ch_read(task, prompt);
    *length = (int)bits.size();
    Words odd, even;
    for (size_t i = 0; i < bits.size(); i++) (i % 2 == 0 ? odd : even).push_back(bits[i]);  // i counts from 0
    return concat(odd, even);
}

// bucket sort: "BucketSort: 3 0 4 1 0 [SEP]" -> "0 0 1 3 4": five symbols, sorted
static inline Words bucket_sort_solve(const Task& task, const Words& prompt, int* length) {
    Words symbols = ch_read(task, prompt);
    *length = (int)symbols.size();
    std::sort(symbols.begin(), symbols.end());  // the symbols are the digits 0-4: text order is value order
    return symbols;
}

// stack manipulation: "StackManipulation: 0 1 1 0 PUSH1 POP POP [SEP]" -> "1 1 0": the stack 0 1 1 0,
// bottom to top, then its actions; the final stack, top to bottom. A POP on an empty stack does
// nothing, and an empty final stack is an empty answer (<eos> at once).
static inline Words stack_manipulation_sample(const Task& task, Rng* rng, const Bin& bin) {
    if (bin.length == 1) return ch_prompt(task, random_symbols(rng, 1, CH_BITS));
    int stack = rng->between(1, bin.length - 1);
    return ch_prompt(task, concat(random_symbols(rng, stack, CH_BITS), random_symbols(rng, bin.length - stack, {"POP", "PUSH0", "PUSH1"})));
}

static inline Words stack_manipulation_solve(const Task& task, const Words& prompt, int* length) {
    Words input = ch_read(task, prompt);
    *length = (int)input.size();
    Words stack;
    bool acting = false;  // past the stack, into the actions
    for (size_t i = 0; i < input.size(); i++) {
        const std::string& w = input[i];
        bool bit = is_one_of(CH_BITS, w);
        if (bit && acting) fail("word %zu: expected an action (POP, PUSH0, PUSH1) or '[SEP]', found '%s': the stack comes first", i + 2, w.c_str());
        acting = !bit;
        if (bit) stack.push_back(w);
        else if (w != "POP") stack.push_back(w.substr(4));  // PUSH0 -> 0
        else if (!stack.empty()) stack.pop_back();
    }
    return Words(stack.rbegin(), stack.rend());
}

// missing duplicate: "MissingDuplicate: 0 1 1 0 _ 1 1 0 [SEP]" -> "0": the string 0 1 1 0 written
// twice, one of its 2λ bits masked by _; λ is the string's length
static inline Words missing_duplicate_sample(const Task& task, Rng* rng, const Bin& bin) {
    Words s = random_symbols(rng, bin.length, CH_BITS), twice = concat(s, s);
    twice[rng->below(2 * bin.length)] = "_";
    return ch_prompt(task, twice);
}

static inline Words missing_duplicate_solve(const Task& task, const Words& prompt, int* length) {
    Words input = ch_read(task, prompt);
    if (input.size() % 2) fail("the input has %zu words: a string written twice has an even number", input.size());
    size_t n = input.size() / 2, masks = std::count(input.begin(), input.end(), "_");
    if (masks != 1) fail("the input has %zu masks _: it masks exactly one bit", masks);
    size_t mask = std::find(input.begin(), input.end(), "_") - input.begin();
    for (size_t i = 0; i < n; i++)
        if (input[i] != input[i + n] && i != mask % n)
            fail("word %zu: '%s' differs from word %zu, '%s': the two halves must be the same string", i + n + 2, input[i + n].c_str(), i + 2,
                 input[i].c_str());
    *length = (int)n;
    return {input[(mask + n) % (2 * n)]};
}

// ----------------------------------------------------------------------------
// binary numbers of any length: bits least significant first, schoolbook arithmetic

typedef std::vector<int> Bits;

static inline Bits trimmed(Bits b) {
    while (b.size() > 1 && b.back() == 0) b.pop_back();  // no zeros past the highest 1; zero is {0}
    return b;
}

static inline Bits bits_add(const Bits& x, const Bits& y) {
    Bits sum;
    int carry = 0;
    for (size_t i = 0; i < std::max(x.size(), y.size()) || carry; i++) {
        carry += (i < x.size() ? x[i] : 0) + (i < y.size() ? y[i] : 0);
        sum.push_back(carry & 1);
        carry >>= 1;
    }
    return trimmed(sum);
}

static inline Bits bits_multiply(const Bits& x, const Bits& y) {
    std::vector<long long> column(x.size() + y.size(), 0);  // column k: the 1s of x_i y_j with i + j = k
    for (size_t i = 0; i < x.size(); i++)
        for (size_t j = 0; j < y.size(); j++) column[i + j] += x[i] & y[j];
    Bits product;
    long long carry = 0;
    for (long long c : column) {
        carry += c;
        product.push_back((int)(carry & 1));
        carry >>= 1;
    }
    return trimmed(product);  // x y < 2^(|x| + |y|): no carry is left
}

static inline bool bits_less(const Bits& x, const Bits& y) {
    for (size_t i = std::max(x.size(), y.size()); i-- > 0;) {
        int a = i < x.size() ? x[i] : 0, b = i < y.size() ? y[i] : 0;
        if (a != b) return a < b;
    }
    return false;
}

static inline Bits bits_subtract(const Bits& x, const Bits& y) {  // x >= y
    Bits difference;
    int borrow = 0;
    for (size_t i = 0; i < x.size(); i++) {
        int d = x[i] - (i < y.size() ? y[i] : 0) - borrow;
        borrow = d < 0;
        difference.push_back(d & 1);
    }
    return trimmed(difference);
}

static inline Bits bits_of(Words::const_iterator first, Words::const_iterator last) {  // little-endian words
    Bits b;
    for (auto w = first; w != last; ++w) b.push_back(*w == "1");
    return b;
}

static inline Words bit_words(const Bits& b) {
    Words w;
    for (int bit : b) w.push_back(CH_BITS[bit]);
    return w;
}

// binary addition: "BinaryAddition: 0 0 1 + 0 1 1 0 1 [SEP]" -> "0 1 0 1 1": 4 + 22 = 26, every
// number little-endian (least significant bit first); the answer ends at its highest 1 (0 is "0")
// binary multiplication: "BinaryMultiplication: 0 0 1 * 0 1 1 0 1 [SEP]" -> "0 0 0 1 1 0 1": 4 * 22 = 88
// λ = every input word: both numbers and the operator (so λ >= 3). As in the paper, the first
// number's length is uniform in 1..λ-2 and each number is uniform in [1, 2^bits - 1], zero-padded.
static inline Words binary_operation_sample(const Task& task, Rng* rng, const Bin& bin) {
    int a = rng->between(1, bin.length - 2);
    Words x = random_nonzero_bits(rng, a), y = random_nonzero_bits(rng, bin.length - 1 - a);
    return ch_prompt(task, concat(concat(x, {ch_words(task.variant).symbols[2]}), y));
}

static inline Words binary_operation_solve(const Task& task, const Words& prompt, int* length) {
    Words input = ch_read(task, prompt);
    const std::string& op = ch_words(task.variant).symbols[2];
    auto at = std::find(input.begin(), input.end(), op);
    if (at == input.end()) fail("the input has no '%s' between its two numbers", op.c_str());
    size_t first = at - input.begin(), second = std::find(at + 1, input.end(), op) - input.begin();
    if (first == 0 || first + 1 == input.size()) fail("word %zu: '%s' needs a number on each side", first + 2, op.c_str());
    if (second < input.size()) fail("word %zu: a second '%s' (the input is two numbers)", second + 2, op.c_str());
    *length = (int)input.size();
    Bits x = bits_of(input.begin(), at), y = bits_of(at + 1, input.end());
    return bit_words(task.variant == CH_BINARY_ADDITION ? bits_add(x, y) : bits_multiply(x, y));
}

// compute sqrt: "ComputeSqrt: 1 0 0 1 0 1 [SEP]" -> "1 1 0": ⌊√37⌋ = 6, big-endian, in ⌈λ/2⌉ bits
// with leading zeros kept, as the paper's outputs (the root of a λ-bit number has at most that many).
// The schoolbook method: bring down two bits of n at a time (rest = 4 rest + them); the root's next
// bit is 1 iff rest >= 4 root + 1, which is then taken off the rest.
static inline Words compute_sqrt_sample(const Task& task, Rng* rng, const Bin& bin) { return ch_prompt(task, random_nonzero_bits(rng, bin.length)); }

static inline Words compute_sqrt_solve(const Task& task, const Words& prompt, int* length) {
    Words n = ch_read(task, prompt);
    *length = (int)n.size();
    if (n.size() % 2) n.insert(n.begin(), "0");
    Bits root, rest;  // least significant first
    for (size_t i = 0; i < n.size(); i += 2) {
        rest.insert(rest.begin(), {n[i + 1] == "1", n[i] == "1"});
        Bits trial = root;
        trial.insert(trial.begin(), {1, 0});
        bool one = !bits_less(rest, trial);
        if (one) rest = bits_subtract(rest, trial);
        root.insert(root.begin(), one);
    }
    Words answer = bit_words(root);  // ⌈λ/2⌉ bits: one per pair
    return Words(answer.rbegin(), answer.rend());
}

// ----------------------------------------------------------------------------
// modular arithmetic, with and without brackets, and solve equation: one reader, recursive descent
// with the usual precedence, mod 5:
//     sum -> product (('+' | '-') product)*      product -> operand ('*' operand)*
//     operand -> digit | '-' operand | '(' sum ')' | 'x'
// Each task takes its part of it: without brackets digits and operators alternate (no brackets,
// no unary minus); equations have no '*' and one 'x'.

static const int CH_MAX_DEPTH = 1000;  // deeper nesting in a prompt is refused, not recursed into

struct ModParser {
    Reader& r;
    int variant, x;  // x: the value 'x' stands for
    int numbers = 0, xs = 0;

    int sum(int depth) {
        int v = product(depth);
        while (r.peek_is("+") || r.peek_is("-")) {
            bool minus = r.next("an operator") == "-";
            v = python_mod(minus ? v - product(depth) : v + product(depth), CH_MODULUS);
        }
        return v;
    }
    int product(int depth) {
        int v = operand(depth);
        while (variant != CH_SOLVE_EQUATION && r.accept("*")) v = v * operand(depth) % CH_MODULUS;
        return v;
    }
    int operand(int depth) {
        if (depth > CH_MAX_DEPTH) fail("word %zu: brackets and signs nested deeper than %d", r.pos + 1, CH_MAX_DEPTH);
        bool nested = variant != CH_MODULAR_ARITHMETIC;
        if (nested && r.accept("-")) return python_mod(-operand(depth + 1), CH_MODULUS);
        if (nested && r.accept("(")) {
            int v = sum(depth + 1);
            r.expect(")");
            return v;
        }
        if (variant == CH_SOLVE_EQUATION && r.accept("x")) return xs++, x;
        if (r.at_end() || !is_one_of(CH_DIGITS, r.peek())) r.error(ch_words(variant).what);
        numbers++;
        return r.next("a digit")[0] - '0';
    }
};

// modular arithmetic: "ModularArithmetic: 1 + 2 * 3 [SEP]" -> "2": 1 + 6 = 7 = 2 mod 5; λ = numbers
// with brackets: "ModularArithmeticBrackets: ( ( 1 * - 2 ) - 3 ) [SEP]" -> "0": -2 - 3 = -5; λ = words
static inline Words modular_arithmetic_solve(const Task& task, const Words& prompt, int* length) {
    Reader r(prompt);
    r.expect(ch_words(task.variant).keyword);
    ModParser p{r, task.variant, 0};
    int value = p.sum(0);
    if (!r.peek_is("[SEP]")) r.error(task.variant == CH_MODULAR_ARITHMETIC ? "an operator (+, -, *) or '[SEP]'" : "an operator (+, -, *), ')' or '[SEP]'");
    r.expect("[SEP]");
    r.finish();
    *length = task.variant == CH_MODULAR_ARITHMETIC ? p.numbers : (int)prompt.size() - 2;
    return {CH_DIGITS[value]};
}

static inline Words modular_arithmetic_sample(const Task& task, Rng* rng, const Bin& bin) {
    Words input;
    for (int i = 0; i < bin.length; i++) {
        if (i > 0) input.push_back(random_symbols(rng, 1, {"+", "-", "*"})[0]);
        input.push_back(CH_DIGITS[rng->below(CH_MODULUS)]);
    }
    return ch_prompt(task, input);
}

// An expression of exactly n words, as the paper's generator splits n: 1-4 words are d, - d, ( d )
// and ( - d ); longer ones ( left op right ), the left one's length uniform in 1..n-4.
static inline void bracketed_expression(Rng* rng, int n, bool multiply, Words* out) {
    if (n <= 4) {
        const std::string& d = CH_DIGITS[rng->below(CH_MODULUS)];
        const Words shapes[] = {{d}, {"-", d}, {"(", d, ")"}, {"(", "-", d, ")"}};
        out->insert(out->end(), shapes[n - 1].begin(), shapes[n - 1].end());
        return;
    }
    int left = rng->between(1, n - 4);
    out->push_back("(");
    bracketed_expression(rng, left, multiply, out);
    out->push_back(random_symbols(rng, 1, multiply ? Words{"+", "-", "*"} : Words{"+", "-"})[0]);
    bracketed_expression(rng, n - 3 - left, multiply, out);
    out->push_back(")");
}

static inline Words modular_brackets_sample(const Task& task, Rng* rng, const Bin& bin) {
    Words input;
    bracketed_expression(rng, bin.length, true, &input);
    return ch_prompt(task, input);
}

// solve equation: "SolveEquation: ( x - - 2 ) = 4 [SEP]" -> "2": the digit x stands for; λ = every
// input word, '=' and the value included (so λ >= 3). The expression has only + and -, and x once,
// so its value is c + x or c - x: exactly one x in 0..4 solves it. The solver checks that by
// trying all five, and refuses an equation that has no solution or several.
static inline Words solve_equation_sample(const Task& task, Rng* rng, const Bin& bin) {
    Words e;
    bracketed_expression(rng, bin.length - 2, false, &e);
    Reader r(e);
    int value = ModParser{r, CH_MODULAR_BRACKETS, 0}.sum(0);
    size_t at = rng->below((int)e.size());  // as the paper: a uniform position, then the first digit from there on
    while (!is_one_of(CH_DIGITS, e[at])) at = (at + 1) % e.size();
    e[at] = "x";
    return ch_prompt(task, concat(e, {"=", CH_DIGITS[value]}));
}

// the value of the equation's left side minus its right side, with x standing for `x`
static inline int equation_difference(const Task& task, const Words& prompt, int x) {
    Reader r(prompt);
    r.expect(ch_words(task.variant).keyword);
    ModParser p{r, task.variant, x};
    int left = p.sum(0);
    if (!r.peek_is("=")) r.error("an operator (+, -), ')' or '='");
    r.expect("=");
    if (r.at_end() || !is_one_of(CH_DIGITS, r.peek())) r.error("a digit (0-4)");
    int right = r.next("a digit")[0] - '0';
    r.expect("[SEP]");
    r.finish();
    if (p.xs != 1) fail("the equation has %d x's: it has exactly one", p.xs);
    return python_mod(left - right, CH_MODULUS);
}

static inline Words solve_equation_solve(const Task& task, const Words& prompt, int* length) {
    int solutions = 0, solution = 0;
    for (int x = 0; x < CH_MODULUS; x++)
        if (equation_difference(task, prompt, x) == 0) solutions++, solution = x;
    if (solutions != 1) fail("the equation has %d solutions in 0..4: it must have exactly one", solutions);
    *length = (int)prompt.size() - 2;
    return {CH_DIGITS[solution]};
}

// ----------------------------------------------------------------------------
// the task table

static const Task TASKS[] = {
    // name, description, length unit, train min, train max, test max, longest, variant, pairs,
    // lexicon, sample, enumerate, solve, scratchpad steps
    {"copy", "copy one word repeated n times (paper's rsc, Fig. 3 'Copy')", "input words", 2, 20, 40, 1000,
     COPY_RSC, false, copy_lexicon, copy_sample, nullptr, copy_solve, nullptr},
    {"copy_rsc2x", "one word repeated n times -> repeated 2n times", "input words", 2, 20, 40, 1000,
     COPY_RSC2X, false, copy_lexicon, copy_sample, nullptr, copy_solve, nullptr},
    {"copy_rdc", "Replace a with b in a a a -> b b b", "input words", 2, 20, 40, 1000,
     COPY_RDC, false, copy_lexicon, copy_sample, nullptr, copy_solve, nullptr},
    {"copy_cmc", "copy n random words", "input words", 2, 20, 40, 1000,
     COPY_CMC, false, copy_lexicon, copy_sample, nullptr, copy_solve, nullptr},
    {"copy_cmc2x", "copy n random words twice: w [NEXT] w", "input words", 2, 20, 40, 1000,
     COPY_CMC2X, false, copy_lexicon, copy_sample, nullptr, copy_solve, nullptr},
    {"reverse", "reverse n random words, twice: r [NEXT] r (paper's mc2x, Fig. 3 'Reverse')", "input words", 2, 20, 40, 1000,
     REVERSE_MC2X, false, copy_lexicon, copy_sample, nullptr, copy_solve, nullptr},
    {"reverse_mc", "reverse n random words", "input words", 2, 20, 40, 1000,
     REVERSE_MC, false, copy_lexicon, copy_sample, nullptr, copy_solve, nullptr},
    {"reverse_mcrv", "reverse, then the original: r [NEXT] w", "input words", 2, 20, 40, 1000,
     REVERSE_MCRV, false, copy_lexicon, copy_sample, nullptr, copy_solve, nullptr},
    {"addition", "add two integers (answer most significant digit first)", "digits of the longer operand", 1, 8, 16, 1000,
     0, true, addition_lexicon, addition_sample, nullptr, addition_solve, &ADDITION_STEPS},
    {"poly", "evaluate a polynomial at x, mod 10", "terms", 1, 8, 16, 1000,
     0, false, poly_lexicon, poly_sample, nullptr, poly_solve, &POLY_STEPS},
    {"sort", "sort single-token symbols by their fixed order", "list items", 2, 8, 16, 1000,
     SORT_SINGLE, false, sort_lexicon, sort_sample, nullptr, sort_solve, &SORT_STEPS},
    {"sort_multi", "sort integers of 2-4 digits", "list items", 2, 8, 16, 1000,
     SORT_MULTI, false, sort_lexicon, sort_sample, nullptr, sort_solve, &SORT_STEPS},
    {"sum", "sum of digits 1-9, mod 10", "numbers", 2, 8, 16, 1000,
     0, false, sum_lexicon, sum_sample, nullptr, sum_solve, &SUM_STEPS},
    {"parity", "is the number of 1s even?", "bits", 4, 8, 16, 1000,
     0, false, parity_lexicon, parity_sample, nullptr, parity_solve, &PARITY_STEPS},
    {"lego", "resolve a chain of +/- variable assignments", "variables", 4, 8, 16, LEGO_VARIABLES,
     0, false, lego_lexicon, lego_sample, nullptr, lego_solve, &LEGO_STEPS},
    {"scan", "SCAN commands -> actions, the finite language split by output length", "output actions", 1, 25, 48, 48,
     0, false, scan_lexicon, nullptr, scan_enumerate, scan_solve, nullptr},
    {"pcfg", "PCFG SET string-edit functions in prefix notation", "function words", 1, 8, 35, 100,
     0, false, pcfg_lexicon, pcfg_sample, nullptr, pcfg_solve, nullptr},
    // Delétang et al. 2023: train λ 1-40, test 41-100 (the paper's test went on to 500: --test-max 500)
    {"ch_even_pairs", "regular: is the number of 01 and 10 pairs in a bit string odd?", "bits", 1, 40, 100, 500,
     CH_EVEN_PAIRS, false, ch_lexicon<CH_EVEN_PAIRS>, ch_uniform_sample, nullptr, even_pairs_solve, nullptr},
    {"ch_modular_arithmetic", "regular: + - * of digits mod 5, usual precedence", "numbers", 1, 20, 50, 500,
     CH_MODULAR_ARITHMETIC, false, ch_lexicon<CH_MODULAR_ARITHMETIC>, modular_arithmetic_sample, nullptr, modular_arithmetic_solve, nullptr},
    {"ch_parity_check", "regular: the number of 1s in a bit string, mod 2", "bits", 1, 40, 100, 500,
     CH_PARITY_CHECK, false, ch_lexicon<CH_PARITY_CHECK>, ch_uniform_sample, nullptr, parity_check_solve, nullptr},
    {"ch_cycle_navigation", "regular: the end of a walk of -1/0/+1 steps on a 5-cycle", "actions", 1, 40, 100, 500,
     CH_CYCLE_NAVIGATION, false, ch_lexicon<CH_CYCLE_NAVIGATION>, ch_uniform_sample, nullptr, cycle_navigation_solve, nullptr},
    {"ch_stack_manipulation", "context-free: a bit stack after POP/PUSH0/PUSH1, top first", "stack bits and actions", 1, 40, 100, 500,
     CH_STACK_MANIPULATION, false, ch_lexicon<CH_STACK_MANIPULATION>, stack_manipulation_sample, nullptr, stack_manipulation_solve, nullptr},
    {"ch_reverse_string", "context-free: reverse a bit string", "bits", 1, 40, 100, 500,
     CH_REVERSE_STRING, false, ch_lexicon<CH_REVERSE_STRING>, ch_uniform_sample, nullptr, reverse_string_solve, nullptr},
    {"ch_modular_arithmetic_brackets", "context-free: a bracketed + - * expression mod 5", "expression words", 1, 40, 100, 500,
     CH_MODULAR_BRACKETS, false, ch_lexicon<CH_MODULAR_BRACKETS>, modular_brackets_sample, nullptr, modular_arithmetic_solve, nullptr},
    {"ch_solve_equation", "context-free: the digit x stands for in a bracketed +/- equation mod 5", "equation words", 3, 40, 100, 500,
     CH_SOLVE_EQUATION, false, ch_lexicon<CH_SOLVE_EQUATION>, solve_equation_sample, nullptr, solve_equation_solve, nullptr},
    {"ch_duplicate_string", "context-sensitive: a bit string written twice", "bits", 1, 40, 100, 500,
     CH_DUPLICATE_STRING, false, ch_lexicon<CH_DUPLICATE_STRING>, ch_uniform_sample, nullptr, duplicate_string_solve, nullptr},
    {"ch_missing_duplicate", "context-sensitive: the masked bit of a string written twice", "bits of the string", 1, 20, 50, 500,
     CH_MISSING_DUPLICATE, false, ch_lexicon<CH_MISSING_DUPLICATE>, missing_duplicate_sample, nullptr, missing_duplicate_solve, nullptr},
    {"ch_odds_first", "context-sensitive: a bit string's odd positions, then its even ones", "bits", 1, 40, 100, 500,
     CH_ODDS_FIRST, false, ch_lexicon<CH_ODDS_FIRST>, ch_uniform_sample, nullptr, odds_first_solve, nullptr},
    {"ch_binary_addition", "context-sensitive: add two little-endian binary numbers", "input words", 3, 40, 100, 500,
     CH_BINARY_ADDITION, false, ch_lexicon<CH_BINARY_ADDITION>, binary_operation_sample, nullptr, binary_operation_solve, nullptr},
    {"ch_binary_multiplication", "context-sensitive: multiply two little-endian binary numbers", "input words", 3, 40, 100, 500,
     CH_BINARY_MULTIPLICATION, false, ch_lexicon<CH_BINARY_MULTIPLICATION>, binary_operation_sample, nullptr, binary_operation_solve, nullptr},
    {"ch_compute_sqrt", "context-sensitive: the integer square root of a binary number", "bits", 1, 40, 100, 500,
     CH_COMPUTE_SQRT, false, ch_lexicon<CH_COMPUTE_SQRT>, compute_sqrt_sample, nullptr, compute_sqrt_solve, nullptr},
    {"ch_bucket_sort", "context-sensitive: sort symbols from an alphabet of 5", "symbols", 1, 40, 100, 500,
     CH_BUCKET_SORT, false, ch_lexicon<CH_BUCKET_SORT>, ch_uniform_sample, nullptr, bucket_sort_solve, nullptr},
};
static const int NUM_TASKS = sizeof(TASKS) / sizeof(TASKS[0]);

static inline const Task& find_task(const std::string& name) {
    for (const Task& t : TASKS)
        if (name == t.name) return t;
    fail("unknown task '%s' (valid: %s)", name.c_str(), names_of(TASKS).c_str());
}

// ----------------------------------------------------------------------------
// scratchpads (paper §6, reference/paper-protocol.md §3)
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
    int test_size = 10000;    // paper: ~10,000, equal counts per test length
    int train_max = 0;        // 0: the task's own split
    int test_max = 0;
    bool bos = false;         // --bos: every sequence starts with <bos>, as Theorem 1's proof needs (the paper had none)
    int scratchpad = SCRATCHPAD_NONE;  // --scratchpad: an index into SCRATCHPAD_FORMATS
};

// ----------------------------------------------------------------------------
// vocabulary

enum { PAD_ID = 0, EOS_ID = 1 };

struct Vocab {
    Words words;                               // id -> word
    std::unordered_map<std::string, int> ids;  // word -> id

    int size() const { return (int)words.size(); }
    int id(const std::string& word) const {
        auto it = ids.find(word);
        return it == ids.end() ? -1 : it->second;
    }
};

// <pad>, <eos>, the task's words, with a scratchpad the words it adds, and with --bos a last
// word <bos> (last, so that every other word keeps its id with or without it)
static inline Vocab make_vocab(const Task& task, const DataConfig& data = DataConfig()) {
    Vocab v;
    auto add = [&](const std::string& w) {
        if (!v.ids.emplace(w, v.size()).second) fail("internal error: word '%s' twice in the %s vocabulary", w.c_str(), task.name);
        v.words.push_back(w);
    };
    for (const std::string& w : concat({"<pad>", "<eos>"}, task.lexicon())) add(w);
    if (data.scratchpad != SCRATCHPAD_NONE) {
        check_scratchpad(task, data.scratchpad);
        for (const std::string& w : scratchpad_lexicon(task))
            if (v.id(w) < 0) add(w);
    }
    if (data.bos) add("<bos>");
    return v;
}

// The gold target of a prompt written as text, checking every word against the vocabulary.
static inline Words task_answer(const Task& task, const Vocab& vocab, const std::string& line, int* length, int scratchpad = SCRATCHPAD_NONE) {
    Words prompt = split_words(line);
    if (prompt.empty()) fail("empty prompt");
    for (size_t i = 0; i < prompt.size(); i++)
        if (vocab.id(prompt[i]) < 0) fail("word %zu: '%s' is not in the %s vocabulary", i + 1, prompt[i].c_str(), task.name);
    return task_target(task, scratchpad, prompt, length);
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
    check_scratchpad(task, config.scratchpad);
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

static inline void add_example(Split* split, const Task& task, const Vocab& vocab, int scratchpad, const Words& prompt, const int* expected_length) {
    int length = 0;
    Words target = task_target(task, scratchpad, prompt, &length);
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

// Generated tasks: `size` examples spread evenly over the bins (the first size % bins bins
// get one more), each bin drawn from its own stream, then shuffled.
static inline Split sampled_split(const Task& task, const Vocab& vocab, const DataConfig& config, SplitKind kind, int size, int lo, int hi) {
    uint64_t task_key = hash_string(task.name);
    std::vector<Bin> bins = task_bins(task, lo, hi);
    Split split;
    for (size_t k = 0; k < bins.size(); k++) {
        int count = size / (int)bins.size() + ((int)k < size % (int)bins.size());
        Rng rng = rng_stream(config.seed, task_key, kind, (uint64_t)bins[k].a << 32 | (uint32_t)bins[k].b);
        for (int i = 0; i < count; i++) add_example(&split, task, vocab, config.scratchpad, task.sample(task, &rng, bins[k]), &bins[k].length);
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
        if (length >= lengths.train_min && length <= lengths.train_max) add_example(&in_distribution, task, vocab, config.scratchpad, prompt, nullptr);
        if (length > lengths.train_max && length <= lengths.test_max) add_example(&out_of_distribution, task, vocab, config.scratchpad, prompt, nullptr);
    }
    uint64_t task_key = hash_string(task.name);
    Split pool = shuffled(kind == SPLIT_TEST ? out_of_distribution : in_distribution, rng_stream(config.seed, task_key, kind == SPLIT_TEST));
    int held_out = pool.size() / 10;
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
