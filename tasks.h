/*
 tasks.h: the synthetic tasks, what the model sees.

 Ten task families (Kazemnejad et al. 2023, reference/paper-protocol.md §2), seventeen variants:
 copy (5), reverse (3), addition, polynomial evaluation, sorting (2), summation, parity, LEGO,
 SCAN and PCFG SET. For each variant this file provides
   - a vocabulary: word level, "<pad>" and "<eos>" then every word the task can produce
   - a generator of prompts for a given length λ (or, for SCAN, the whole finite language)
   - a solver: an interpreter that reads a prompt and computes its gold target and its λ
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

static inline Words addition_solve(const Task&, const Words& prompt, int* length) {
    Reader r(prompt);
    r.expect("Compute");
    std::string x = read_digits(r);
    r.expect("+");
    std::string y = read_digits(r);
    r.expect("?");
    r.finish();
    *length = (int)std::max(x.size(), y.size());
    return concat(concat(ANSWER_IS, digit_words(add_decimal(x, y))), {"."});
}

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

static inline Words poly_solve(const Task&, const Words& prompt, int* length) {
    Reader r(prompt);
    for (const char* w : {"Evaluate", "at", "x", "="}) r.expect(w);
    long long x = read_small_number(r, true);
    r.expect("in");
    int value = 0, terms = 0;
    do {
        long long coefficient = read_small_number(r, true);
        for (const char* w : {"*", "x", "**"}) r.expect(w);
        long long degree = read_small_number(r, false);
        int term = python_mod(coefficient, POLY_MODULUS) * power_mod(python_mod(x, POLY_MODULUS), degree, POLY_MODULUS);
        value = (value + term) % POLY_MODULUS;
        terms++;
    } while (r.accept("+"));
    r.expect("?");
    r.finish();
    *length = terms;
    return concat(ANSWER_IS, {std::to_string(value), "."});
}

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

static inline Words sort_solve(const Task& task, const Words& prompt, int* length) {
    const Alphabet& alphabet = sort_alphabet();
    Reader r(prompt);
    for (const char* w : {"Sort", "the", "following", "list", "["}) r.expect(w);
    std::vector<std::string> items;  // a symbol, or a number's digit string
    do {
        items.push_back(task.variant == SORT_SINGLE ? alphabet.read(r, "a list item") : read_digits(r));
    } while (r.accept(","));
    r.expect("]");
    r.expect(".");
    r.finish();
    *length = (int)items.size();

    auto before = [&](const std::string& x, const std::string& y) {
        if (task.variant == SORT_SINGLE) return alphabet.rank.at(x) < alphabet.rank.at(y);
        return x.size() != y.size() ? x.size() < y.size() : x < y;  // no leading zeros: shorter is smaller
    };
    std::stable_sort(items.begin(), items.end(), before);
    std::vector<Words> sorted;
    for (const std::string& item : items) sorted.push_back(task.variant == SORT_SINGLE ? Words{item} : digit_words(item));
    return concat(concat({"The", "sorted", "list", "is", "["}, join_with(sorted, ",")), {"]", "."});
}

// ----------------------------------------------------------------------------
// summation: "Compute: 3 + 8 + 6 . [SEP]" -> "The answer is 7 ." (values 1-9, the sum mod 10)

static const int SUM_MODULUS = 10;

static inline Words sum_lexicon() { return concat(DIGITS, {"Compute:", "+", ".", "[SEP]", "The", "answer", "is"}); }

static inline Words sum_sample(const Task&, Rng* rng, const Bin& bin) {
    std::vector<Words> values;
    for (int i = 0; i < bin.length; i++) values.push_back(number_words(rng->between(1, 9)));
    return concat(concat({"Compute:"}, join_with(values, "+")), {".", "[SEP]"});
}

static inline Words sum_solve(const Task&, const Words& prompt, int* length) {
    Reader r(prompt);
    r.expect("Compute:");
    int sum = 0, count = 0;
    do {
        std::string digits = read_digits(r);
        sum = (sum + (digits.back() - '0')) % SUM_MODULUS;  // a number mod 10 is its last digit
        count++;
    } while (r.accept("+"));
    r.expect(".");
    r.expect("[SEP]");
    r.finish();
    *length = count;
    return concat(ANSWER_IS, {std::to_string(sum), "."});
}

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

static inline Words parity_solve(const Task&, const Words& prompt, int* length) {
    Reader r(prompt);
    for (const std::string& w : PARITY_QUESTION) r.expect(w.c_str());
    int bits = 0, ones = 0;
    do {
        if (!r.peek_is("0") && !r.peek_is("1")) r.error("a bit (0 or 1)");
        ones += r.next("a bit") == "1";
        bits++;
    } while (r.accept(","));
    r.expect("]");
    r.expect("?");
    r.finish();
    *length = bits;
    return concat(ANSWER_IS, {ones % 2 == 0 ? "Yes" : "No", "."});
}

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
    int sign;              // +1 or -1
    std::string variable;  // "" for a constant (then sign is the value)
};

static inline int lego_value(const std::unordered_map<std::string, LegoClause>& clauses, std::string variable) {
    int value = 1;
    for (size_t hops = 0; hops <= clauses.size(); hops++) {
        auto it = clauses.find(variable);
        if (it == clauses.end()) fail("variable '%s' is used but never defined", variable.c_str());
        value *= it->second.sign;
        if (it->second.variable.empty()) return value;
        variable = it->second.variable;
    }
    fail("the clauses define variables in a circle");
}

static inline Words lego_solve(const Task&, const Words& prompt, int* length) {
    const Alphabet& names = lego_alphabet();
    Reader r(prompt);
    r.expect("If");
    std::unordered_map<std::string, LegoClause> clauses;
    do {
        size_t at = r.pos + 1;
        std::string variable = names.read(r, "a variable (a-z)");
        r.expect("=");
        LegoClause clause;
        if (r.peek_is("+1") || r.peek_is("-1")) {
            clause = {r.next("a value") == "+1" ? 1 : -1, ""};
        } else {
            if (!r.peek_is("+") && !r.peek_is("-")) r.error("'+1', '-1', '+' or '-'");
            int sign = r.next("a sign") == "+" ? 1 : -1;
            clause = {sign, names.read(r, "a variable (a-z)")};
        }
        if (!clauses.emplace(variable, clause).second) fail("word %zu: variable '%s' is defined twice", at, variable.c_str());
    } while (r.accept(","));
    r.expect(".");
    for (const std::string& w : LEGO_QUESTION) r.expect(w.c_str());
    std::string query = names.read(r, "a variable (a-z)");
    r.expect("?");
    r.finish();
    *length = (int)clauses.size();
    return concat(ANSWER_IS, {lego_value(clauses, query) > 0 ? "+1" : "-1", "."});
}

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
// the task table

static const Task TASKS[] = {
    // name, description, length unit, train min, train max, test max, longest, variant, pairs,
    // lexicon, sample, enumerate, solve
    {"copy", "copy one word repeated n times (paper's rsc, Fig. 3 'Copy')", "input words", 2, 20, 40, 1000,
     COPY_RSC, false, copy_lexicon, copy_sample, nullptr, copy_solve},
    {"copy_rsc2x", "one word repeated n times -> repeated 2n times", "input words", 2, 20, 40, 1000,
     COPY_RSC2X, false, copy_lexicon, copy_sample, nullptr, copy_solve},
    {"copy_rdc", "Replace a with b in a a a -> b b b", "input words", 2, 20, 40, 1000,
     COPY_RDC, false, copy_lexicon, copy_sample, nullptr, copy_solve},
    {"copy_cmc", "copy n random words", "input words", 2, 20, 40, 1000,
     COPY_CMC, false, copy_lexicon, copy_sample, nullptr, copy_solve},
    {"copy_cmc2x", "copy n random words twice: w [NEXT] w", "input words", 2, 20, 40, 1000,
     COPY_CMC2X, false, copy_lexicon, copy_sample, nullptr, copy_solve},
    {"reverse", "reverse n random words, twice: r [NEXT] r (paper's mc2x, Fig. 3 'Reverse')", "input words", 2, 20, 40, 1000,
     REVERSE_MC2X, false, copy_lexicon, copy_sample, nullptr, copy_solve},
    {"reverse_mc", "reverse n random words", "input words", 2, 20, 40, 1000,
     REVERSE_MC, false, copy_lexicon, copy_sample, nullptr, copy_solve},
    {"reverse_mcrv", "reverse, then the original: r [NEXT] w", "input words", 2, 20, 40, 1000,
     REVERSE_MCRV, false, copy_lexicon, copy_sample, nullptr, copy_solve},
    {"addition", "add two integers (answer most significant digit first)", "digits of the longer operand", 1, 8, 16, 1000,
     0, true, addition_lexicon, addition_sample, nullptr, addition_solve},
    {"poly", "evaluate a polynomial at x, mod 10", "terms", 1, 8, 16, 1000,
     0, false, poly_lexicon, poly_sample, nullptr, poly_solve},
    {"sort", "sort single-token symbols by their fixed order", "list items", 2, 8, 16, 1000,
     SORT_SINGLE, false, sort_lexicon, sort_sample, nullptr, sort_solve},
    {"sort_multi", "sort integers of 2-4 digits", "list items", 2, 8, 16, 1000,
     SORT_MULTI, false, sort_lexicon, sort_sample, nullptr, sort_solve},
    {"sum", "sum of digits 1-9, mod 10", "numbers", 2, 8, 16, 1000,
     0, false, sum_lexicon, sum_sample, nullptr, sum_solve},
    {"parity", "is the number of 1s even?", "bits", 4, 8, 16, 1000,
     0, false, parity_lexicon, parity_sample, nullptr, parity_solve},
    {"lego", "resolve a chain of +/- variable assignments", "variables", 4, 8, 16, LEGO_VARIABLES,
     0, false, lego_lexicon, lego_sample, nullptr, lego_solve},
    {"scan", "SCAN commands -> actions, the finite language split by output length", "output actions", 1, 25, 48, 48,
     0, false, scan_lexicon, nullptr, scan_enumerate, scan_solve},
    {"pcfg", "PCFG SET string-edit functions in prefix notation", "function words", 1, 8, 35, 100,
     0, false, pcfg_lexicon, pcfg_sample, nullptr, pcfg_solve},
};
static const int NUM_TASKS = sizeof(TASKS) / sizeof(TASKS[0]);

static inline const Task& find_task(const std::string& name) {
    for (const Task& t : TASKS)
        if (name == t.name) return t;
    fail("unknown task '%s' (valid: %s)", name.c_str(), names_of(TASKS).c_str());
}

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

// <pad>, <eos>, the task's words, and with `bos` a last word <bos> (last, so that every other
// word keeps its id with or without it)
static inline Vocab make_vocab(const Task& task, bool bos = false) {
    Vocab v;
    for (const std::string& w : concat(concat({"<pad>", "<eos>"}, task.lexicon()), bos ? Words{"<bos>"} : Words{})) {
        if (!v.ids.emplace(w, v.size()).second) fail("internal error: word '%s' twice in the %s vocabulary", w.c_str(), task.name);
        v.words.push_back(w);
    }
    return v;
}

// The gold answer of a prompt written as text, checking every word against the vocabulary.
static inline Words task_answer(const Task& task, const Vocab& vocab, const std::string& line, int* length) {
    Words prompt = split_words(line);
    if (prompt.empty()) fail("empty prompt");
    for (size_t i = 0; i < prompt.size(); i++)
        if (vocab.id(prompt[i]) < 0) fail("word %zu: '%s' is not in the %s vocabulary", i + 1, prompt[i].c_str(), task.name);
    return task.solve(task, prompt, length);
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

struct DataConfig {
    uint64_t seed = 9842497;  // the paper's data seed; the run's --seed changes init and order, not data
    int train_size = 100000;  // paper: 100,000
    int valid_size = 7500;    // paper: ~15,000 held out, half of it evaluated
    int test_size = 10000;    // paper: ~10,000, equal counts per test length
    int train_max = 0;        // 0: the task's own split
    int test_max = 0;
    bool bos = false;         // --bos: every sequence starts with <bos>, as Theorem 1's proof needs (the paper had none)
};

struct LengthSplit {
    int train_min, train_max, test_max;  // test lengths are train_max + 1 .. test_max
};

static const int MAX_SPLIT_SIZE = 10000000;

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

static inline void add_example(Split* split, const Task& task, const Vocab& vocab, const Words& prompt, const int* expected_length) {
    int length = 0;
    Words target = task.solve(task, prompt, &length);
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
static inline Split sampled_split(const Task& task, const Vocab& vocab, uint64_t seed, SplitKind kind, int size, int lo, int hi) {
    uint64_t task_key = hash_string(task.name);
    std::vector<Bin> bins = task_bins(task, lo, hi);
    Split split;
    for (size_t k = 0; k < bins.size(); k++) {
        int count = size / (int)bins.size() + ((int)k < size % (int)bins.size());
        Rng rng = rng_stream(seed, task_key, kind, (uint64_t)bins[k].a << 32 | (uint32_t)bins[k].b);
        for (int i = 0; i < count; i++) add_example(&split, task, vocab, task.sample(task, &rng, bins[k]), &bins[k].length);
    }
    return shuffled(split, rng_stream(seed, task_key, kind, ~0ULL));
}

// A finite language (SCAN), as the paper split it: commands with λ <= train_max are shuffled,
// the first tenth is valid and the rest train; test is every command with a longer λ (up to
// test_max). A size flag can only take fewer than the language has.
static inline Split enumerated_split(const Task& task, const Vocab& vocab, uint64_t seed, SplitKind kind, int size, const LengthSplit& lengths) {
    Split in_distribution, out_of_distribution;
    for (const Words& prompt : task.enumerate()) {
        int length = 0;
        task.solve(task, prompt, &length);
        if (length >= lengths.train_min && length <= lengths.train_max) add_example(&in_distribution, task, vocab, prompt, nullptr);
        if (length > lengths.train_max && length <= lengths.test_max) add_example(&out_of_distribution, task, vocab, prompt, nullptr);
    }
    uint64_t task_key = hash_string(task.name);
    Split pool = shuffled(kind == SPLIT_TEST ? out_of_distribution : in_distribution, rng_stream(seed, task_key, kind == SPLIT_TEST));
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
    Split split = task.enumerate ? enumerated_split(task, vocab, config.seed, kind, sizes[kind], lengths)
                  : kind == SPLIT_TEST ? sampled_split(task, vocab, config.seed, kind, sizes[kind], lengths.train_max + 1, lengths.test_max)
                                       : sampled_split(task, vocab, config.seed, kind, sizes[kind], lengths.train_min, lengths.train_max);
    return config.bos ? with_bos(split, vocab.id("<bos>")) : split;
}

struct Dataset {
    const Task* task;
    Vocab vocab;
    LengthSplit lengths;
    Split splits[NUM_SPLITS];
};

static inline Dataset make_dataset(const Task& task, const DataConfig& config) {
    Dataset d{&task, make_vocab(task, config.bos), length_split(task, config), {}};
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
