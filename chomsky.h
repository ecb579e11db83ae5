/*
 chomsky.h: the fifteen tasks of Delétang et al. 2023 ("Neural Networks and the Chomsky
 Hierarchy", ICLR 2023), named ch_*, in this project's decoder-only,
 exact-match form. They are a standard benchmark of length generalization across the hierarchy:
 regular (even pairs, modular arithmetic, parity check, cycle navigation), deterministic
 context-free (stack manipulation, reverse string, modular arithmetic with brackets, solve
 equation) and context-sensitive (duplicate string, missing duplicate, odds first, binary
 addition and multiplication, compute sqrt, bucket sort).

 The paper's models were encoder-only and read the answer off padding positions; here, as for
 every task of tasks.h, the prompt is a task word, the input (a word per symbol) and [SEP], and
 the model writes the answer, then <eos>, where the paper's output had a fixed length: the answer
 alone, or on the three tasks whose answer's length varies (stack manipulation, binary addition
 and multiplication) the answer, a termination token and zero padding. An answer counts when all
 of it is right; a per-token accuracy is reported beside that, teacher-forced and counting <eos>,
 so not quite the paper's, which reads the answer's symbols in one pass and counts the
 terminator only on those three (a guessed bit and its <eos> score 0.75 here, 0.5 there). λ is
 the number of input words (between the task word and [SEP]), the paper's length, except where
 inputs can not have every length: modular arithmetic counts numbers (2λ - 1 words) and missing
 duplicate the length of the string written twice (2λ words; the paper gives an odd length a
 padding word, which a prompt has no use for). Inputs are drawn as the paper's repository draws
 them.

 Each task is a vocabulary, a generator and a solver, as tasks.h's are; none has a scratchpad.
 This file is part of tasks.h, which includes it just before its task table: it uses the Reader,
 Task, Bin and Rng defined above that point, so include tasks.h, not this file.
*/
#pragma once

// ----------------------------------------------------------------------------
// the tasks' words, and the tasks whose input is a string of symbols

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

    // what may follow an operand: the task's operators or `after` (')', '[SEP]' or '=')
    std::string expected_after(const char* after) const {
        return std::string(variant == CH_SOLVE_EQUATION ? "an operator (+, -)" : "an operator (+, -, *)") + " or " + after;
    }
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
            if (!r.peek_is(")")) r.error(expected_after("')'").c_str());
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
    if (!r.peek_is("[SEP]")) r.error(p.expected_after("'[SEP]'").c_str());
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
    if (!r.peek_is("=")) r.error(p.expected_after("'='").c_str());
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
