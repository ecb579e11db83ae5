// Tests of the scratchpads in tasks.h (the paper's §6, as its code writes them): every format
// of every task that has one, step by step against a second solution written here from each
// task's definition (integer arithmetic, counting, std::sort, a fixpoint sweep; never the
// *_steps code), the paper's own step examples, grading only what follows "Thus,", refused
// formats and prompts, and data and vocabularies that the scratchpad leaves as they were.
#include <array>
#include <map>
#include <set>

#include "tasks.h"
#include "test/unity.h"

// Small splits keep the whole file to a few seconds; every length bin still gets examples.
static DataConfig small_config(int scratchpad = SCRATCHPAD_NONE) {
    DataConfig c;
    c.train_size = 300;
    c.valid_size = 50;
    c.test_size = 300;
    c.scratchpad = scratchpad;
    return c;
}

// ----------------------------------------------------------------------------
// the formats, written down here a second time (the paper's code's): the parts each writes,
// in the order written, as letters: i(nput) c(omputation) o(utput) v(ariables) r(emaining)

struct FormatSpec {
    const char* name;
    const char* parts;
};
static const FormatSpec FORMATS[] = {{"full", "icovr"},     {"minimal", "co"},   {"no-input", "covr"}, {"no-comp", "iovr"},
                                     {"no-output", "icvr"}, {"no-vars", "icor"}, {"no-remaining", "icov"}};

// the tasks with a scratchpad; sorting and LEGO carry no variables
static const char* const WITH_SCRATCHPAD[] = {"addition", "poly", "sort", "sort_multi", "sum", "parity", "lego"};
static bool carries_variables(const std::string& task) { return task != "sort" && task != "sort_multi" && task != "lego"; }

// the index of a format in tasks.h's table, or -1
static int format_index(const std::string& name) {
    for (int f = 0; f < NUM_SCRATCHPAD_FORMATS; f++)
        if (name == SCRATCHPAD_FORMATS[f].name) return f;
    return -1;
}

// the parts a format writes for a task: the format's own, less the variables where the task has none
static std::string parts_for(const std::string& task, const FormatSpec& f) {
    std::string parts = f.parts;
    if (!carries_variables(task)) parts.erase(std::remove(parts.begin(), parts.end(), 'v'), parts.end());
    return parts;
}

// ----------------------------------------------------------------------------
// words

static std::vector<Words> pieces(const Words& w, const std::string& separator) {
    std::vector<Words> out(1);
    for (const std::string& x : w) {
        if (x == separator) out.emplace_back();
        else out.back().push_back(x);
    }
    return out;
}

static Words between(const Words& w, const std::string& open, const std::string& close) {
    auto a = std::find(w.begin(), w.end(), open), b = std::find(w.begin(), w.end(), close);
    return a < b ? Words(a + 1, b) : Words();
}

static std::string concat_text(const Words& w) {
    std::string s;
    for (const std::string& x : w) s += x;
    return s;
}

// an integer as the tasks write it: every digit a word, a minus sign a word of its own
static Words integer_words(long long v) {
    Words w;
    if (v < 0) w.push_back("-");
    for (char c : std::to_string(v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v)) w.push_back(std::string(1, c));
    return w;
}

static Words operator+(Words a, const Words& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

static Words joined(const std::vector<Words>& items, const std::string& separator) {
    Words out;
    for (size_t i = 0; i < items.size(); i++) out = (i ? out + Words{separator} : out) + items[i];
    return out;
}

// ----------------------------------------------------------------------------
// the second solution: each task's steps computed from its definition

enum { IN, COMP, OUT, VARS, RE };
typedef std::array<Words, 5> Parts;  // in, comp, out, vars, remaining

struct Solution {
    std::vector<Parts> steps;
    Words answer;  // the plain target, as the steps lead to it
};

// Schoolbook addition by integer arithmetic: digit i of a number is n / 10^i % 10, the carry
// into digit i is whether the numbers' last i digits overflow 10^i. What is left of an operand
// is its number without its last i + 1 digits; one that ran out is "0" while the other has
// digits left, and both are empty when neither has.
static Solution addition_solution(const Words& p) {
    std::vector<Words> operands = pieces(Words(p.begin() + 1, p.end() - 1), "+");
    unsigned long long x = std::stoull(concat_text(operands[0])), y = std::stoull(concat_text(operands[1])), sum = x + y;
    int nx = (int)operands[0].size(), ny = (int)operands[1].size(), n = std::max(nx, ny);
    unsigned long long ten[20] = {1};
    for (int i = 1; i < 20; i++) ten[i] = 10 * ten[i - 1];
    auto digit = [&](unsigned long long v, int i) { return std::to_string(v / ten[i] % 10); };
    auto carry_into = [&](int i) { return (int)(x % ten[i] + y % ten[i] >= ten[i]); };
    auto left = [&](unsigned long long v, int digits, int i) {
        return i + 1 < digits ? integer_words((long long)(v / ten[i + 1])) : i + 1 < n ? Words{"0"} : Words{};
    };
    Solution s;
    int steps = n + (sum >= ten[n]);  // a carry out of the top digit is one step more
    for (int i = 0; i < steps; i++) {
        int dx = (int)(x / ten[i] % 10), dy = (int)(y / ten[i] % 10), carry = carry_into(i);
        Parts step;
        step[IN] = {digit(x, i), ",", digit(y, i)};
        step[COMP] = Words{digit(x, i), "+", digit(y, i), "+", "carry", "="} + integer_words(dx + dy) +
                     Words{"+", std::to_string(carry), "="} + integer_words(dx + dy + carry);
        step[OUT] = {digit(sum, i)};
        step[VARS] = {"carry:", std::to_string(carry_into(i + 1))};
        step[RE] = left(x, nx, i) + Words{"+"} + left(y, ny, i);
        s.steps.push_back(step);
    }
    s.answer = Words{"The", "answer", "is"} + integer_words((long long)sum) + Words{"."};
    return s;
}

// Term by term: coefficient * x^degree exactly, then the running sum mod 10 (Python's %).
static Solution poly_solution(const Words& p) {
    auto in = std::find(p.begin(), p.end(), "in");
    long long x = std::stoll(concat_text(Words(p.begin() + 4, in)));
    std::vector<Words> terms = pieces(Words(in + 1, p.end() - 1), "+");
    Solution s;
    long long sum = 0;
    for (size_t i = 0; i < terms.size(); i++) {
        const Words& term = terms[i];
        Words coefficient(term.begin(), std::find(term.begin(), term.end(), "*"));
        Words degree(std::find(term.begin(), term.end(), "**") + 1, term.end());
        long long power = 1;
        for (long long k = 0; k < std::stoll(concat_text(degree)); k++) power *= x;
        long long value = std::stoll(concat_text(coefficient)) * power;
        long long next = ((sum + value) % 10 + 10) % 10;
        Parts step;
        step[IN] = term;
        step[COMP] = coefficient + Words{"*"} + integer_words(x) + Words{"**"} + degree + Words{"="} + coefficient + Words{"*"} + integer_words(power);
        step[OUT] = integer_words(value);
        step[VARS] = Words{"sum:"} + integer_words(sum) + Words{"+"} + integer_words(value) + Words{"="} + integer_words(next);
        step[RE] = joined(std::vector<Words>(terms.begin() + i + 1, terms.end()), "+");
        s.steps.push_back(step);
        sum = next;
    }
    s.answer = Words{"The", "answer", "is"} + integer_words(sum) + Words{"."};
    return s;
}

// Selection sort written out by hand, swapping the first smallest item of the unsorted rest
// with the rest's first; std::stable_sort gives the answer, which the steps must agree with.
static Solution sort_solution(const std::string& task, const Words& p) {
    const std::string order = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN";
    auto key = [&](const Words& item) { return task == "sort" ? (long long)order.find(item[0]) : std::stoll(concat_text(item)); };
    auto before = [&](const Words& a, const Words& b) { return key(a) < key(b); };
    std::vector<Words> items = pieces(between(p, "[", "]"), ","), sorted = items;
    std::stable_sort(sorted.begin(), sorted.end(), before);
    Solution s;
    for (size_t i = 0; i < items.size(); i++) {
        size_t smallest = i;
        for (size_t j = i + 1; j < items.size(); j++)
            if (before(items[j], items[smallest])) smallest = j;
        Parts step;
        step[IN] = items[i];
        step[COMP] = {"The", "minimum", "of", "the", "unsorted", "portion"};
        step[OUT] = items[smallest];
        std::swap(items[i], items[smallest]);
        step[RE] = Words{"["} + joined(std::vector<Words>(items.begin() + i + 1, items.end()), ",") + Words{"]"};
        s.steps.push_back(step);
    }
    if (items != sorted) s.steps.clear();  // the two sorts disagree: the test's own error, reported as a mismatch
    s.answer = Words{"The", "sorted", "list", "is", "["} + joined(sorted, ",") + Words{"]", "."};
    return s;
}

// The sum of the numbers before each, mod 10, is the running sum it is added to.
static Solution sum_solution(const Words& p) {
    std::vector<Words> numbers = pieces(Words(p.begin() + 1, std::find(p.begin(), p.end(), ".")), "+");
    Solution s;
    long long before = 0;  // the exact sum of the numbers before this one
    for (size_t i = 0; i < numbers.size(); i++) {
        long long value = std::stoll(concat_text(numbers[i])), total = value + before % 10;
        Parts step;
        step[IN] = integer_words(value);
        step[COMP] = integer_words(value) + Words{"+", "sum", "="} + integer_words(value) + Words{"+"} + integer_words(before % 10) + Words{"="};
        step[OUT] = integer_words(total);
        step[VARS] = Words{"sum:"} + integer_words(total) + Words{"="} + integer_words(total % 10);
        step[RE] = joined(std::vector<Words>(numbers.begin() + i + 1, numbers.end()), "+");
        s.steps.push_back(step);
        before += value;
    }
    s.answer = Words{"The", "answer", "is"} + integer_words(before % 10) + Words{"."};
    return s;
}

// The parity after each bit is the number of 1s up to it, mod 2.
static Solution parity_solution(const Words& p) {
    Words bits;
    for (const Words& bit : pieces(between(p, "[", "]"), ",")) bits.push_back(bit[0]);
    Solution s;
    for (size_t i = 0; i < bits.size(); i++) {
        std::string before = std::to_string(std::count(bits.begin(), bits.begin() + i, "1") % 2);
        std::string after = std::to_string(std::count(bits.begin(), bits.begin() + i + 1, "1") % 2);
        std::vector<Words> rest;
        for (size_t j = i + 1; j < bits.size(); j++) rest.push_back({bits[j]});
        Parts step;
        step[IN] = {bits[i]};
        step[COMP] = {bits[i], "**", "par", "=", bits[i], "**", before};
        step[OUT] = {after};
        step[VARS] = {"par:", after};
        step[RE] = Words{"["} + joined(rest, ",") + Words{"]"};
        s.steps.push_back(step);
    }
    long ones = std::count(bits.begin(), bits.end(), "1");
    s.answer = {"The", "answer", "is", ones % 2 ? "No" : "Yes", "."};
    return s;
}

// Values by sweeping the clauses until nothing changes (order-free); the steps take, each
// time, the first clause left in the prompt's order whose right side has a value.
static Solution lego_solution(const Words& p) {
    std::vector<Words> clauses = pieces(Words(p.begin() + 1, std::find(p.begin(), p.end(), ".")), ",");
    std::map<std::string, std::string> value;  // variable -> "+1" or "-1"
    for (bool changed = true; changed;) {
        changed = false;
        for (const Words& c : clauses) {
            if (value.count(c[0])) continue;
            if (c.size() == 3) value[c[0]] = c[2];
            else if (value.count(c[3])) value[c[0]] = (c[2] == "+") == (value[c[3]] == "+1") ? "+1" : "-1";
            changed = changed || value.count(c[0]);
        }
    }
    Solution s;
    std::set<std::string> known;
    std::vector<Words> left = clauses;
    while (!left.empty()) {
        size_t k = 0;
        while (k < left.size() && left[k].size() == 4 && !known.count(left[k][3])) k++;
        if (k == left.size()) return Solution();  // unresolvable: not a prompt the tasks make
        Words c = left[k];
        left.erase(left.begin() + k);
        Parts step;
        step[IN] = {c[0]};
        if (c.size() == 4) step[COMP] = {c[2], c[3], "=", c[2], value[c[3]]};
        step[OUT] = {value[c[0]]};
        step[RE] = joined(left, ",");
        s.steps.push_back(step);
        known.insert(c[0]);
    }
    s.answer = {"The", "answer", "is", value[p[p.size() - 2]], "."};
    return s;
}

static Solution solution(const std::string& task, const Words& prompt) {
    if (task == "addition") return addition_solution(prompt);
    if (task == "poly") return poly_solution(prompt);
    if (task == "sort" || task == "sort_multi") return sort_solution(task, prompt);
    if (task == "sum") return sum_solution(prompt);
    if (task == "parity") return parity_solution(prompt);
    return lego_solution(prompt);
}

// ----------------------------------------------------------------------------
// a scratchpad target taken apart: "Thinking step by step:" STEP # ... # STEP "." "Thus," ANSWER,
// each step cut at the markers of the parts `parts` names, in that order

static const char* marker(char part) {
    switch (part) {
        case 'i': return "in";
        case 'c': return "comp";
        case 'o': return "out";
        case 'v': return "[";
        default: return "re";
    }
}

static int part_slot(char part) { return part == 'i' ? IN : part == 'c' ? COMP : part == 'o' ? OUT : part == 'v' ? VARS : RE; }

struct Parsed {
    std::vector<Parts> steps;
    Words answer;
    std::string error;  // "" when the target has the form
};

static Parsed parse_target(const Words& target, const std::string& parts) {
    Parsed parsed;
    const Words start = {"Thinking", "step", "by", "step:"};
    if (target.size() < start.size() || !std::equal(start.begin(), start.end(), target.begin())) {
        parsed.error = "does not start with 'Thinking step by step:'";
        return parsed;
    }
    auto thus = std::find(target.begin(), target.end(), "Thus,");
    if (thus == target.end() || thus - target.begin() < 5 || *(thus - 1) != ".") {
        parsed.error = "no '. Thus,' after the steps";
        return parsed;
    }
    parsed.answer = Words(thus + 1, target.end());
    for (const Words& words : pieces(Words(target.begin() + start.size(), thus - 1), "#")) {
        Parts step;
        size_t pos = 0;
        for (size_t k = 0; k < parts.size(); k++) {
            if (pos >= words.size() || words[pos] != marker(parts[k])) {
                parsed.error = std::string("step ") + std::to_string(parsed.steps.size() + 1) + ": expected '" + marker(parts[k]) +
                               "' at word " + std::to_string(pos + 1) + " of '" + join_words(words) + "'";
                return parsed;
            }
            pos++;
            // a part runs to the next part's marker ("]" ends the variables); the last to the step's end
            const char* end_word = parts[k] == 'v' ? "]" : k + 1 < parts.size() ? marker(parts[k + 1]) : nullptr;
            size_t end = end_word ? std::find(words.begin() + pos, words.end(), end_word) - words.begin() : words.size();
            if (end == words.size() && end_word) {
                parsed.error = std::string("step ") + std::to_string(parsed.steps.size() + 1) + ": no '" + end_word + "' in '" + join_words(words) + "'";
                return parsed;
            }
            step[part_slot(parts[k])] = Words(words.begin() + pos, words.begin() + end);
            pos = parts[k] == 'v' ? end + 1 : end;
        }
        if (pos != words.size()) {
            parsed.error = "step " + std::to_string(parsed.steps.size() + 1) + ": words after its last part in '" + join_words(words) + "'";
            return parsed;
        }
        parsed.steps.push_back(step);
    }
    return parsed;
}

// What is wrong with a scratchpad target of `prompt` in format `f` (given the plain target),
// measured against the second solution; "" when nothing is.
static std::string target_problem(const std::string& task, const FormatSpec& f, const Words& prompt, const Words& target, const Words& plain) {
    std::string parts = parts_for(task, f);
    Parsed parsed = parse_target(target, parts);
    if (!parsed.error.empty()) return parsed.error;
    if (parsed.answer != plain) return "the words after 'Thus,' are '" + join_words(parsed.answer) + "', the plain target '" + join_words(plain) + "'";
    Solution want = solution(task, prompt);
    if (want.answer != plain) return "the plain target '" + join_words(plain) + "' is not the second solution's '" + join_words(want.answer) + "'";
    if (parsed.steps.size() != want.steps.size())
        return std::to_string(parsed.steps.size()) + " steps, expected " + std::to_string(want.steps.size());
    for (size_t i = 0; i < want.steps.size(); i++)
        for (char part : parts) {
            const Words& got = parsed.steps[i][part_slot(part)];
            const Words& expected = want.steps[i][part_slot(part)];
            if (got != expected)
                return "step " + std::to_string(i + 1) + " part '" + marker(part) + "': '" + join_words(got) + "', expected '" + join_words(expected) + "'";
        }
    return "";
}

static std::string scratchpad(const char* task, const char* format, const char* prompt) {
    int length = 0;
    return join_words(task_target(find_task(task), format_index(format), split_words(prompt), &length));
}

// step k (from 1) of a scratchpad target, as text
static std::string step_of(const std::string& target, size_t k) {
    Words w = split_words(target);
    auto thus = std::find(w.begin(), w.end(), "Thus,");
    if (w.size() < 4 || thus == w.end()) return "";
    std::vector<Words> steps = pieces(Words(w.begin() + 4, thus - 1), "#");
    return k >= 1 && k <= steps.size() ? join_words(steps[k - 1]) : "";
}

// ----------------------------------------------------------------------------
// the paper's examples

static void test_the_formats_are_the_papers_eight(void) {
    TEST_ASSERT_EQUAL_INT(8, NUM_SCRATCHPAD_FORMATS);
    TEST_ASSERT_EQUAL_STRING("none", SCRATCHPAD_FORMATS[SCRATCHPAD_NONE].name);
    for (int p = 0; p < NUM_STEP_PARTS; p++) TEST_ASSERT_FALSE(SCRATCHPAD_FORMATS[SCRATCHPAD_NONE].writes[p]);
    for (const FormatSpec& f : FORMATS) {
        int index = format_index(f.name);
        TEST_ASSERT_MESSAGE(index > 0, f.name);
        const char letters[NUM_STEP_PARTS] = {'i', 'c', 'o', 'v', 'r'};
        for (int p = 0; p < NUM_STEP_PARTS; p++)
            TEST_ASSERT_EQUAL_INT_MESSAGE(strchr(f.parts, letters[p]) != nullptr, SCRATCHPAD_FORMATS[index].writes[p], f.name);
    }
}

static void test_addition_writes_the_papers_example_exactly(void) {
    TEST_ASSERT_EQUAL_STRING(
        "Thinking step by step: in 7 , 6 comp 7 + 6 + carry = 1 3 + 0 = 1 3 out 3 [ carry: 1 ] re 5 8 + 4 # "
        "in 8 , 4 comp 8 + 4 + carry = 1 2 + 1 = 1 3 out 3 [ carry: 1 ] re 5 + 0 # "
        "in 5 , 0 comp 5 + 0 + carry = 5 + 1 = 6 out 6 [ carry: 0 ] re + . Thus, The answer is 6 3 3 .",
        scratchpad("addition", "full", "Compute 5 8 7 + 4 6 ?"));
    // the same steps with only comp and out
    TEST_ASSERT_EQUAL_STRING(
        "Thinking step by step: comp 7 + 6 + carry = 1 3 + 0 = 1 3 out 3 # comp 8 + 4 + carry = 1 2 + 1 = 1 3 out 3 # "
        "comp 5 + 0 + carry = 5 + 1 = 6 out 6 . Thus, The answer is 6 3 3 .",
        scratchpad("addition", "minimal", "Compute 5 8 7 + 4 6 ?"));
    // the carry left at the end is one step more, on "0 , 0"
    TEST_ASSERT_EQUAL_STRING(
        "Thinking step by step: in 9 , 1 comp 9 + 1 + carry = 1 0 + 0 = 1 0 out 0 [ carry: 1 ] re 9 + 0 # "
        "in 9 , 0 comp 9 + 0 + carry = 9 + 1 = 1 0 out 0 [ carry: 1 ] re + # "
        "in 0 , 0 comp 0 + 0 + carry = 0 + 1 = 1 out 1 [ carry: 0 ] re + . Thus, The answer is 1 0 0 .",
        scratchpad("addition", "full", "Compute 9 9 + 1 ?"));
    // the shorter operand first: it is the one written 0 when it runs out
    TEST_ASSERT_EQUAL_STRING(
        "Thinking step by step: in 4 , 6 comp 4 + 6 + carry = 1 0 + 0 = 1 0 out 0 [ carry: 1 ] re 0 + 5 8 # "
        "in 0 , 8 comp 0 + 8 + carry = 8 + 1 = 9 out 9 [ carry: 0 ] re 0 + 5 # "
        "in 0 , 5 comp 0 + 5 + carry = 5 + 0 = 5 out 5 [ carry: 0 ] re + . Thus, The answer is 5 9 0 .",
        scratchpad("addition", "full", "Compute 4 + 5 8 6 ?"));
}

static void test_parity_sum_and_poly_steps_are_the_papers(void) {
    TEST_ASSERT_EQUAL_STRING("in 1 comp 1 ** par = 1 ** 0 out 1 [ par: 1 ] re [ 1 , 0 , 1 ]",
                             step_of(scratchpad("parity", "full", "Is the number of 1's even in the sequence [ 0 , 1 , 1 , 0 , 1 ] ?"), 2));
    TEST_ASSERT_EQUAL_STRING("in 8 comp 8 + sum = 8 + 3 = out 1 1 [ sum: 1 1 = 1 ] re 6 + 1",
                             step_of(scratchpad("sum", "full", "Compute: 3 + 8 + 6 + 1 . [SEP]"), 2));
    TEST_ASSERT_EQUAL_STRING("in - 2 * x ** 2 comp - 2 * - 1 ** 2 = - 2 * 1 out - 2 [ sum: 0 + - 2 = 8 ] re 3 * x ** 0 + 1 * x ** 3",
                             step_of(scratchpad("poly", "full", "Evaluate at x = - 1 in - 2 * x ** 2 + 3 * x ** 0 + 1 * x ** 3 ?"), 1));
    // the last step of each leaves nothing: an empty list, an empty sum
    TEST_ASSERT_EQUAL_STRING("in 1 comp 1 ** par = 1 ** 0 out 1 [ par: 1 ] re [ ]",
                             step_of(scratchpad("parity", "full", "Is the number of 1's even in the sequence [ 0 , 1 , 1 , 0 , 1 ] ?"), 5));
    TEST_ASSERT_EQUAL_STRING("in 1 comp 1 + sum = 1 + 7 = out 8 [ sum: 8 = 8 ] re",
                             step_of(scratchpad("sum", "full", "Compute: 3 + 8 + 6 + 1 . [SEP]"), 4));
}

static void test_sort_step_is_the_papers(void) {
    // the paper sorts [ M , E , F , F , O ]; our 50 symbols end at N, so O becomes K
    const char* prompt = "Sort the following list [ M , E , F , F , K ] .";
    TEST_ASSERT_EQUAL_STRING("in M comp The minimum of the unsorted portion out E re [ M , F , F , K ]", step_of(scratchpad("sort", "full", prompt), 1));
    // a tie swaps the first smallest: [ M , F , F , K ] -> F comes from the rest's second place
    TEST_ASSERT_EQUAL_STRING("in M comp The minimum of the unsorted portion out F re [ M , F , K ]", step_of(scratchpad("sort", "full", prompt), 2));
    TEST_ASSERT_EQUAL_STRING(
        "Thinking step by step: in 2 4 6 8 out 8 1 re [ 2 4 6 8 , 4 1 2 5 ] # in 2 4 6 8 out 2 4 6 8 re [ 4 1 2 5 ] # "
        "in 4 1 2 5 out 4 1 2 5 re [ ] . Thus, The sorted list is [ 8 1 , 2 4 6 8 , 4 1 2 5 ] .",
        scratchpad("sort_multi", "no-comp", "Sort the following list [ 2 4 6 8 , 8 1 , 4 1 2 5 ] ."));
}

static void test_lego_resolves_every_clause_first_known_first(void) {
    // the paper's example: q first (the only constant), then t; then c, the query, and on to f
    // (before r in the prompt, but r needs f) and r
    std::string target = scratchpad("lego", "full", "If c = + t , r = + f , t = - q , q = -1 , f = - c . Then , what is the value of c ?");
    TEST_ASSERT_EQUAL_STRING("in q comp out -1 re c = + t , r = + f , t = - q , f = - c", step_of(target, 1));
    TEST_ASSERT_EQUAL_STRING("in t comp - q = - -1 out +1 re c = + t , r = + f , f = - c", step_of(target, 2));
    TEST_ASSERT_EQUAL_STRING(
        "Thinking step by step: in q comp out -1 re c = + t , r = + f , t = - q , f = - c # "
        "in t comp - q = - -1 out +1 re c = + t , r = + f , f = - c # in c comp + t = + +1 out +1 re r = + f , f = - c # "
        "in f comp - c = - +1 out -1 re r = + f # in r comp + f = + -1 out -1 re . Thus, The answer is +1 .",
        target);
    // Generated chains (and the paper's example) have one clause known at a time; with two
    // constants, the first known in the prompt's order goes first: b before a, then d (known
    // through b) before a, which comes before c in the prompt but is not known yet
    TEST_ASSERT_EQUAL_STRING(
        "Thinking step by step: in b comp out -1 re d = + b , c = - a , a = +1 # in d comp + b = + -1 out -1 re c = - a , a = +1 # "
        "in a comp out +1 re c = - a # in c comp - a = - +1 out -1 re . Thus, The answer is -1 .",
        scratchpad("lego", "full", "If d = + b , c = - a , b = -1 , a = +1 . Then , what is the value of d ?"));
}

// ----------------------------------------------------------------------------
// generated data, every format, against the second solution

static void test_every_format_of_every_task_matches_the_second_solution(void) {
    for (const char* name : WITH_SCRATCHPAD) {
        const Task& task = find_task(name);
        Vocab plain_vocab = make_vocab(task);
        Split plain[NUM_SPLITS];
        for (int k = 0; k < NUM_SPLITS; k++) plain[k] = make_split(task, plain_vocab, small_config(), (SplitKind)k);
        for (const FormatSpec& f : FORMATS) {
            if (!carries_variables(name) && std::string(f.name) == "no-vars") continue;  // refused: see below
            DataConfig config = small_config(format_index(f.name));
            Vocab vocab = make_vocab(task, config);
            for (int k = 0; k < NUM_SPLITS; k++) {
                Split split = make_split(task, vocab, config, (SplitKind)k);
                TEST_ASSERT_EQUAL_INT(plain[k].size(), split.size());
                for (int i = 0; i < split.size(); i++) {
                    Words prompt, target, plain_prompt, plain_target;
                    example_words(split, vocab, i, &prompt, &target);
                    example_words(plain[k], plain_vocab, i, &plain_prompt, &plain_target);
                    std::string where = std::string(name) + " " + f.name + " " + SPLIT_NAMES[k] + " #" + std::to_string(i) + ": " + join_words(prompt);
                    TEST_ASSERT_EQUAL_STRING_MESSAGE(join_words(plain_prompt), join_words(prompt), where.c_str());
                    TEST_ASSERT_EQUAL_STRING_MESSAGE("", target_problem(name, f, prompt, target, plain_target), where.c_str());
                    TEST_ASSERT_EQUAL_INT_MESSAGE(plain[k].length[i], split.length[i], where.c_str());
                    TEST_ASSERT_EQUAL_INT_MESSAGE(EOS_ID, split.example(i)[split.example_len(i) - 1], where.c_str());
                }
            }
        }
    }
}

// Generated LEGO prompts have their clauses in chain order, where "first known" is simply the
// next clause. Shuffled, the steps must still take the first clause in the prompt's order whose
// right side is known, and resolve all of them.
static void test_lego_with_shuffled_clauses_matches_the_second_solution(void) {
    const Task& lego = find_task("lego");
    Vocab plain_vocab = make_vocab(lego);
    Split split = make_split(lego, plain_vocab, small_config(), SPLIT_TEST);
    Rng rng = rng_stream(77, 1);
    for (int i = 0; i < split.size(); i++) {
        Words prompt, plain_target;
        example_words(split, plain_vocab, i, &prompt, &plain_target);
        auto dot = std::find(prompt.begin(), prompt.end(), ".");
        std::vector<Words> clauses = pieces(Words(prompt.begin() + 1, dot), ",");
        for (int j = (int)clauses.size() - 1; j > 0; j--) std::swap(clauses[j], clauses[rng.below(j + 1)]);
        Words shuffled = Words{"If"} + joined(clauses, ",") + Words(dot, prompt.end());
        for (const FormatSpec& f : FORMATS) {
            if (std::string(f.name) == "no-vars") continue;
            int length = 0;
            Words target = task_target(lego, format_index(f.name), shuffled, &length);
            std::string where = std::string(f.name) + ": " + join_words(shuffled);
            TEST_ASSERT_EQUAL_STRING_MESSAGE("", target_problem("lego", f, shuffled, target, plain_target), where.c_str());
            TEST_ASSERT_EQUAL_INT_MESSAGE(split.length[i], length, where.c_str());
        }
    }
}

// Hand-made prompts beyond what the generators draw: long carries, larger x and degrees, numbers
// of many digits, one-item lists.
static void test_hand_made_prompts_match_the_second_solution(void) {
    struct Case { const char* task; const char* prompt; };
    const Case cases[] = {
        {"addition", "Compute 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 + 1 ?"},
        {"addition", "Compute 1 + 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 ?"},
        {"addition", "Compute 0 + 0 ?"},
        {"addition", "Compute 5 0 0 + 5 0 0 ?"},
        {"poly", "Evaluate at x = - 7 in 3 * x ** 5 + - 9 * x ** 0 + 0 * x ** 4 ?"},
        {"poly", "Evaluate at x = 0 in 2 * x ** 0 + 5 * x ** 3 ?"},
        {"poly", "Evaluate at x = 2 in 1 2 3 * x ** 2 0 ?"},
        {"sort", "Sort the following list [ N ] ."},
        {"sort", "Sort the following list [ a , A , 0 , z , N , 9 , a ] ."},
        {"sort_multi", "Sort the following list [ 9 9 9 9 , 1 0 , 9 9 9 9 , 1 0 0 ] ."},
        {"sum", "Compute: 9 9 9 9 9 9 9 9 9 + 9 + 1 2 . [SEP]"},
        {"parity", "Is the number of 1's even in the sequence [ 1 ] ?"},
        {"lego", "If a = -1 . Then , what is the value of a ?"},
        {"lego", "If d = - c , c = - b , b = - a , a = +1 . Then , what is the value of d ?"},
        {"lego", "If e = - c , c = + a , d = - b , b = +1 , a = - b . Then , what is the value of e ?"},  // a tree
        {"lego", "If z = + y , x = -1 , y = - x , w = +1 , v = + w . Then , what is the value of z ?"},  // two chains
    };
    for (const Case& c : cases) {
        const Task& task = find_task(c.task);
        Words prompt = split_words(c.prompt);
        int plain_length = 0;
        Words plain = task_target(task, SCRATCHPAD_NONE, prompt, &plain_length);
        for (const FormatSpec& f : FORMATS) {
            if (!carries_variables(c.task) && std::string(f.name) == "no-vars") continue;
            int length = 0;
            Words target = task_target(task, format_index(f.name), prompt, &length);
            std::string where = std::string(f.name) + ": " + c.prompt;
            TEST_ASSERT_EQUAL_STRING_MESSAGE("", target_problem(c.task, f, prompt, target, plain), where.c_str());
            TEST_ASSERT_EQUAL_INT_MESSAGE(plain_length, length, where.c_str());
        }
    }
}

// ----------------------------------------------------------------------------
// vocabularies

// Every word a scratchpad can write, for the longest generated prompts and hand-made ones with
// the largest numbers (make_split refuses a word outside the vocabulary, but --answer and
// evaluation write targets of any prompt).
static void test_every_scratchpad_word_is_in_the_vocabulary(void) {
    const char* extra[] = {"Compute 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 + 1 ?",
                           "Evaluate at x = - 7 in 3 * x ** 5 + - 9 * x ** 0 ?",
                           "Sort the following list [ 9 9 9 9 , 1 0 ] .",
                           "Compute: 9 9 9 9 9 9 9 9 9 + 9 . [SEP]",
                           "If d = - c , c = - b , b = - a , a = +1 . Then , what is the value of d ?"};
    for (const char* name : WITH_SCRATCHPAD) {
        const Task& task = find_task(name);
        Vocab plain = make_vocab(task);
        std::vector<Words> prompts;
        Split split = make_split(task, plain, small_config(), SPLIT_TEST);
        for (int i = 0; i < split.size(); i++) {
            Words prompt, target;
            example_words(split, plain, i, &prompt, &target);
            prompts.push_back(prompt);
        }
        for (const char* e : extra) {
            Words prompt = split_words(e);
            int length = 0;
            try {
                task.solve(task, prompt, &length);
                prompts.push_back(prompt);
            } catch (const std::exception&) {  // another task's prompt
            }
        }
        for (const FormatSpec& f : FORMATS) {
            if (!carries_variables(name) && std::string(f.name) == "no-vars") continue;
            Vocab vocab = make_vocab(task, small_config(format_index(f.name)));
            for (const Words& prompt : prompts) {
                int length = 0;
                for (const std::string& w : task_target(task, format_index(f.name), prompt, &length))
                    if (vocab.id(w) < 0) TEST_FAIL_MESSAGE(std::string(name) + " " + f.name + ": '" + w + "' in the target of " + join_words(prompt));
            }
        }
    }
}

// Checkpoints of runs without a scratchpad keep working: the plain vocabulary is the task's
// words only, with the sizes it had before scratchpads, and a scratchpad only adds words after
// them (every plain word keeps its id); --bos still comes last.
static void test_vocabularies_without_a_scratchpad_are_unchanged(void) {
    const std::map<std::string, int> plain_size = {{"copy", 109}, {"addition", 19}, {"poly", 26}, {"sort", 63}, {"sort_multi", 63},
                                                   {"sum", 19},   {"parity", 22},   {"lego", 45}, {"scan", 23}, {"pcfg", 535}};
    const Words scratchpad_only = {"Thinking", "step", "step:", "Thus,", "#", "comp", "out", "re", "carry",
                                   "carry:", "sum", "sum:", "par", "par:", "minimum", "unsorted", "portion"};
    for (const Task& task : TASKS) {
        Vocab plain = make_vocab(task), none = make_vocab(task, small_config());
        TEST_ASSERT_MESSAGE(plain.words == Words({"<pad>", "<eos>"}) + task.lexicon(), task.name);
        TEST_ASSERT_MESSAGE(none.words == plain.words, task.name);
        if (plain_size.count(task.name)) TEST_ASSERT_EQUAL_INT_MESSAGE(plain_size.at(task.name), plain.size(), task.name);
        for (const std::string& w : scratchpad_only) TEST_ASSERT_MESSAGE(plain.id(w) < 0, (std::string(task.name) + ": " + w).c_str());
    }
    for (const char* name : WITH_SCRATCHPAD) {
        const Task& task = find_task(name);
        Vocab plain = make_vocab(task);
        DataConfig config = small_config(format_index("full"));
        Vocab with = make_vocab(task, config);
        TEST_ASSERT_GREATER_THAN_MESSAGE(plain.size(), with.size(), name);
        for (int id = 0; id < plain.size(); id++) {
            TEST_ASSERT_EQUAL_STRING_MESSAGE(plain.words[id], with.words[id], name);
            TEST_ASSERT_EQUAL_INT_MESSAGE(id, with.id(plain.words[id]), name);
        }
        TEST_ASSERT_EQUAL_INT_MESSAGE(with.size(), std::set<std::string>(with.words.begin(), with.words.end()).size(), name);
        config.bos = true;
        Vocab bos = make_vocab(task, config);
        TEST_ASSERT_EQUAL_INT_MESSAGE(with.size() + 1, bos.size(), name);
        TEST_ASSERT_EQUAL_INT_MESSAGE(bos.size() - 1, bos.id("<bos>"), name);
        TEST_ASSERT_MESSAGE(Words(bos.words.begin(), bos.words.end() - 1) == with.words, name);
    }
}

// ----------------------------------------------------------------------------
// data

// The scratchpad changes targets only: every split has the same prompts, in the same order,
// with the same λ, whatever the format.
static void test_prompts_order_and_lengths_are_the_same_with_or_without_a_scratchpad(void) {
    for (const char* name : WITH_SCRATCHPAD) {
        const Task& task = find_task(name);
        Vocab plain_vocab = make_vocab(task);
        for (const char* format : {"full", "minimal"}) {
            DataConfig config = small_config(format_index(format));
            Vocab vocab = make_vocab(task, config);
            for (int k = 0; k < NUM_SPLITS; k++) {
                Split plain = make_split(task, plain_vocab, small_config(), (SplitKind)k);
                Split with = make_split(task, vocab, config, (SplitKind)k);
                std::string where = std::string(name) + " " + format + " " + SPLIT_NAMES[k];
                TEST_ASSERT_EQUAL_INT_MESSAGE(plain.size(), with.size(), where.c_str());
                TEST_ASSERT_MESSAGE(plain.length == with.length, where.c_str());
                TEST_ASSERT_MESSAGE(plain.prompt_len == with.prompt_len, where.c_str());
                for (int i = 0; i < plain.size(); i++) {
                    Words a, b, target;
                    example_words(plain, plain_vocab, i, &a, &target);
                    example_words(with, vocab, i, &b, &target);
                    TEST_ASSERT_EQUAL_STRING_MESSAGE(join_words(a), join_words(b), where.c_str());
                    // the plain vocabulary's ids are kept, so the prompt's tokens are the same too
                    TEST_ASSERT_MESSAGE(std::equal(plain.example(i), plain.example(i) + plain.prompt_len[i], with.example(i)), where.c_str());
                }
            }
        }
    }
}

// ----------------------------------------------------------------------------
// grading

static void test_only_the_answer_after_thus_is_graded(void) {
    const Words gold = split_words(scratchpad("addition", "full", "Compute 5 8 7 + 4 6 ?"));
    auto thus = std::find(gold.begin(), gold.end(), "Thus,");
    const Words steps(gold.begin(), thus), answer(thus + 1, gold.end());  // steps end with "."
    auto words = [](const char* text) { return split_words(text); };

    Verdict right = grade_output(gold, gold, true);
    TEST_ASSERT_TRUE(right.answer);
    TEST_ASSERT_TRUE(right.scratchpad);

    Words wrong_steps = gold;
    *(std::find(wrong_steps.begin(), wrong_steps.end(), "out") + 1) = "4";  // the first step's output digit
    TEST_ASSERT_FALSE(wrong_steps == gold);
    Verdict v = grade_output(gold, wrong_steps, true);
    TEST_ASSERT_TRUE(v.answer);  // a wrong scratchpad does not cost the right answer
    TEST_ASSERT_FALSE(v.scratchpad);

    // one step too many, the gold steps all there before it
    Words extra_step = Words(steps.begin(), steps.end() - 1) + words("# in 0 , 0 comp 0 + 0 + carry = 0 + 0 = 0 out 0 [ carry: 0 ] re + . Thus,") + answer;
    v = grade_output(gold, extra_step, true);
    TEST_ASSERT_TRUE(v.answer);
    TEST_ASSERT_FALSE(v.scratchpad);

    v = grade_output(gold, steps + words("Thus, The answer is 6 3 4 ."), true);
    TEST_ASSERT_FALSE(v.answer);
    TEST_ASSERT_TRUE(v.scratchpad);

    v = grade_output(gold, answer, true);  // the answer alone, no scratchpad and no "Thus,"
    TEST_ASSERT_FALSE(v.answer);
    TEST_ASSERT_FALSE(v.scratchpad);
    v = grade_output(gold, steps + answer, true);  // the steps and the answer, "Thus," left out
    TEST_ASSERT_FALSE(v.answer);
    TEST_ASSERT_FALSE(v.scratchpad);
    v = grade_output(gold, steps, true);  // the steps and <eos> where "Thus," should be: unfinished
    TEST_ASSERT_FALSE(v.answer);
    TEST_ASSERT_FALSE(v.scratchpad);

    v = grade_output(gold, gold, false);  // stopped by the length limit, not by <eos>
    TEST_ASSERT_FALSE(v.answer);
    TEST_ASSERT_TRUE(v.scratchpad);

    // the first "Thus," ends the scratchpad: what follows it all is the answer
    v = grade_output(gold, gold + words("Thus,") + answer, true);
    TEST_ASSERT_FALSE(v.answer);
    TEST_ASSERT_TRUE(v.scratchpad);
    v = grade_output(gold, words("Thinking step by step: . Thus, The answer is 1 .") + Words{"Thus,"} + answer, true);
    TEST_ASSERT_FALSE(v.answer);  // right after the last "Thus,", not after the first
    TEST_ASSERT_FALSE(v.scratchpad);
    v = grade_output(gold, Words(steps.begin(), steps.begin() + 10) + Words{"Thus,"} + answer, true);
    TEST_ASSERT_TRUE(v.answer);  // right after the first "Thus,", however early
    TEST_ASSERT_FALSE(v.scratchpad);

    // without a scratchpad the gold has no "Thus," and the whole output is graded
    const Words plain = words("The answer is 6 3 3 .");
    v = grade_output(plain, plain, true);
    TEST_ASSERT_TRUE(v.answer);
    TEST_ASSERT_TRUE(v.scratchpad);
    v = grade_output(plain, gold, true);  // the right answer after steps nobody asked for
    TEST_ASSERT_FALSE(v.answer);
    TEST_ASSERT_FALSE(v.scratchpad);
    v = grade_output(plain, words("The answer is 6 3 3 . ."), true);
    TEST_ASSERT_FALSE(v.answer);
    v = grade_output(plain, plain, false);
    TEST_ASSERT_FALSE(v.answer);
    TEST_ASSERT_FALSE(v.scratchpad);
}

// ----------------------------------------------------------------------------
// refusals

static void test_formats_a_task_can_not_write_are_refused(void) {
    for (const char* name : {"sort", "sort_multi", "lego"}) {
        TEST_ASSERT_THROWS_WITH(check_scratchpad(find_task(name), format_index("no-vars")), "carry no variables");
        TEST_ASSERT_THROWS_WITH(length_split(find_task(name), small_config(format_index("no-vars"))), "carry no variables");
    }
    check_scratchpad(find_task("addition"), format_index("no-vars"));  // addition carries its carry
    for (const Task& task : TASKS) {
        bool has = std::find_if(std::begin(WITH_SCRATCHPAD), std::end(WITH_SCRATCHPAD), [&](const char* n) { return n == std::string(task.name); }) !=
                   std::end(WITH_SCRATCHPAD);
        TEST_ASSERT_EQUAL_INT_MESSAGE(has, task.scratchpad != nullptr, task.name);
        check_scratchpad(task, SCRATCHPAD_NONE);  // every task can go without
        if (has) continue;
        for (const FormatSpec& f : FORMATS) TEST_ASSERT_THROWS_WITH(check_scratchpad(task, format_index(f.name)), "has no scratchpad");
        TEST_ASSERT_THROWS_WITH(length_split(task, small_config(format_index("full"))), "has no scratchpad");
    }
    TEST_ASSERT_THROWS_WITH(check_scratchpad(find_task("addition"), NUM_SCRATCHPAD_FORMATS), "does not exist");
    TEST_ASSERT_THROWS_WITH(check_scratchpad(find_task("addition"), -1), "does not exist");
}

static Words long_sum_prompt(int numbers) {
    Words p = {"Compute:"};
    for (int i = 0; i < numbers; i++) p = (i ? p + Words{"+"} : p) + Words{std::to_string(1 + i % 9)};
    return p + Words{".", "[SEP]"};
}

static void test_prompts_too_long_or_too_large_to_write_out_are_refused(void) {
    int length = 0;
    const Task& parity = find_task("parity");
    Words bits = {"Is", "the", "number", "of", "1's", "even", "in", "the", "sequence", "["};
    for (int i = 0; i < 600; i++) bits = (i ? bits + Words{","} : bits) + Words{i % 3 ? "1" : "0"};
    bits = bits + Words{"]", "?"};
    TEST_ASSERT_THROWS_WITH(task_target(parity, format_index("full"), bits, &length), "up to 1024 words");
    TEST_ASSERT_EQUAL_STRING("The answer is Yes .", join_words(task_target(parity, SCRATCHPAD_NONE, bits, &length)));  // 400 ones
    // the limit itself is allowed: 511 numbers make 1024 words, 512 one word too many (+ and a number)
    const Task& sum = find_task("sum");
    TEST_ASSERT_EQUAL_INT(MAX_SCRATCHPAD_PROMPT_WORDS, long_sum_prompt(511).size());
    Words target = task_target(sum, format_index("minimal"), long_sum_prompt(511), &length);
    TEST_ASSERT_EQUAL_INT(511, length);
    TEST_ASSERT_EQUAL_STRING("", target_problem("sum", FORMATS[1], long_sum_prompt(511), target, task_target(sum, SCRATCHPAD_NONE, long_sum_prompt(511), &length)));
    TEST_ASSERT_THROWS_WITH(task_target(sum, format_index("minimal"), long_sum_prompt(512), &length), "this one has 1026");

    // x^degree written out in full would overflow: refused, while the plain answer works mod 10
    const Task& poly = find_task("poly");
    TEST_ASSERT_THROWS_WITH(task_target(poly, format_index("full"), split_words("Evaluate at x = 9 9 9 in 1 * x ** 9 9 ?"), &length), "too large");
    TEST_ASSERT_EQUAL_STRING("The answer is 9 .", join_words(task_target(poly, SCRATCHPAD_NONE, split_words("Evaluate at x = 9 9 9 in 1 * x ** 9 9 ?"), &length)));
    TEST_ASSERT_THROWS_WITH(task_target(poly, format_index("minimal"), split_words("Evaluate at x = 2 in 3 * x ** 6 2 ?"), &length), "too large");
    TEST_ASSERT_THROWS_WITH(task_target(poly, format_index("minimal"), split_words("Evaluate at x = - 2 in 1 * x ** 6 4 ?"), &length), "too large");
    // (-2)^63 fits int64 but is its minimum, which can not be written as "-" and a magnitude
    TEST_ASSERT_THROWS_WITH(task_target(poly, format_index("full"), split_words("Evaluate at x = - 2 in 1 * x ** 6 3 ?"), &length), "too large");
    // near the edge of int64, and powers of -1, 0 and 1 of any degree, are written out
    TEST_ASSERT_EQUAL_STRING("comp - 1 * - 2 ** 6 2 = - 1 * 4 6 1 1 6 8 6 0 1 8 4 2 7 3 8 7 9 0 4 out - 4 6 1 1 6 8 6 0 1 8 4 2 7 3 8 7 9 0 4",
                             step_of(scratchpad("poly", "minimal", "Evaluate at x = - 2 in - 1 * x ** 6 2 ?"), 1));
    TEST_ASSERT_EQUAL_STRING("comp 3 * - 1 ** 9 9 9 9 9 9 9 9 9 = 3 * - 1 out - 3",
                             step_of(scratchpad("poly", "minimal", "Evaluate at x = - 1 in 3 * x ** 9 9 9 9 9 9 9 9 9 ?"), 1));
    TEST_ASSERT_EQUAL_STRING("comp 3 * 0 ** 0 = 3 * 1 out 3", step_of(scratchpad("poly", "minimal", "Evaluate at x = 0 in 3 * x ** 0 ?"), 1));

    // sum's scratchpad writes a number's running total: at most 9 digits
    const Task& sum_task = find_task("sum");
    TEST_ASSERT_THROWS_WITH(task_target(sum_task, format_index("full"), split_words("Compute: 1 2 3 4 5 6 7 8 9 0 + 1 . [SEP]"), &length), "has 10 digits");
    TEST_ASSERT_EQUAL_STRING("The answer is 1 .", join_words(task_target(sum_task, SCRATCHPAD_NONE, split_words("Compute: 1 2 3 4 5 6 7 8 9 0 + 1 . [SEP]"), &length)));
}

int main(int argc, char** argv) {
    UNITY_BEGIN(argc, argv);
    RUN_TEST(test_the_formats_are_the_papers_eight);
    RUN_TEST(test_addition_writes_the_papers_example_exactly);
    RUN_TEST(test_parity_sum_and_poly_steps_are_the_papers);
    RUN_TEST(test_sort_step_is_the_papers);
    RUN_TEST(test_lego_resolves_every_clause_first_known_first);
    RUN_TEST(test_every_format_of_every_task_matches_the_second_solution);
    RUN_TEST(test_lego_with_shuffled_clauses_matches_the_second_solution);
    RUN_TEST(test_hand_made_prompts_match_the_second_solution);
    RUN_TEST(test_every_scratchpad_word_is_in_the_vocabulary);
    RUN_TEST(test_vocabularies_without_a_scratchpad_are_unchanged);
    RUN_TEST(test_prompts_order_and_lengths_are_the_same_with_or_without_a_scratchpad);
    RUN_TEST(test_only_the_answer_after_thus_is_graded);
    RUN_TEST(test_formats_a_task_can_not_write_are_refused);
    RUN_TEST(test_prompts_too_long_or_too_large_to_write_out_are_refused);
    return UNITY_END();
}
