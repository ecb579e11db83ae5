/*
 grammars.h: the two tasks whose prompts come from a grammar, SCAN (Lake & Baroni 2018) and
 PCFG SET (Hupkes et al. 2020). SCAN's language is finite, so its
 splits enumerate it; PCFG SET's is drawn, conditioned exactly on the number of functions.

 Each task is a vocabulary, a generator and a solver, as tasks.h's others are; neither has a
 scratchpad. This file is part of tasks.h, which includes it just before its task table: it uses
 the Reader, Alphabet, Task, Bin and Rng defined above that point, so include tasks.h, not this
 file.
*/
#pragma once

// ----------------------------------------------------------------------------
// SCAN (Lake & Baroni 2018), complete grammar:
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
// PCFG SET (Hupkes et al. 2020): string-edit functions in prefix notation
// "Solve: echo append copy Q10 E4 , shift K15 D8 [SEP]" -> "Q10 E4 D8 K15 K15"
// Sampling grammar, with p_unary and p_func drawn from U(0, 1) for every example (as the
// released corpus was generated):
//   F -> unary U_arg (p_unary) | binary B_arg , B_arg      U_arg, B_arg -> F (p_func) | STRING
//   STRING -> 2-5 symbols, each uniform over A1 .. Z20; no string argument repeats within a
//             prompt (their generator kept every string of its whole corpus apart)
// λ is the number of function words. An example of length λ is a grammar draw conditioned on
// having λ functions (pcfg_sample draws that exactly) and on every function's value having at
// most 256 words: a cap of ours, near the paper's 256-token generation limit (it capped no
// intermediate value); without it one draw in a few hundred at λ = 35 nests `repeat` into
// targets of thousands of words.

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
    if (r.at_end() || !(pcfg_is_unary(r.peek()) || pcfg_is_binary(r.peek()))) r.error("a function (a prompt is one applied to its arguments)");
    int functions = 0;
    Words result = pcfg_evaluate(r, 0, &functions);
    r.expect("[SEP]");
    r.finish();
    *length = functions;
    return result;
}
