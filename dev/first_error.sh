#!/usr/bin/env bash
# dev/first_error.sh: where does a model's answer first go wrong: at a place in the answer, or at
# a place in the whole sequence? Behind docs/reproduction-cpu.md.
#
#   dev/first_error.sh [--examples N] [--threads N] RUN_DIR|DECODING.txt [...]
#
# For each run's directory this decodes the first N valid and N test examples of its model.bin
# (./train --load ... --sample N, default 2000; a file instead of a directory holds such a
# decoding, saved) and, for every split and length, finds in each wrong output the first word
# that differs from the gold (an <eos> written too soon, or missing where the gold ends, counts
# as a word). It prints the examples, the share wrong, and where those first wrong words lie,
# each place that 5% or more of the wrong outputs share, with its share: by their index in the
# answer (0: its first word) and by their index in the whole sequence (the prompt's words come
# first, from 0). Any task: a model that loses count of the answer's words goes wrong at one
# index of the answer whatever the length; one that reads how far the sequence has gone, at one
# token of the sequence, which for longer prompts comes earlier in the answer.
# --threads goes to ./train (give 1 beside a training run).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # the runs named are read from where the tool was called
parse_decoding_options dev/first_error.sh "$@"

# the table of SOURCE's examples on stdin (decoding.sh), a row per split and length
tabulate() {
    awk -F '\t' -v source="$1" '
        {
            n = $2 + 0; key = $1 SUBSEP n
            if (n > longest) longest = n
            p = split($4, words, " "); g = split($5, gold_words, " "); m = split($6, model_words, " ")
            examples[key]++; seen++
            if ($3) next  # right
            wrong[key]++
            # the first index where the two differ; an output that is all of the gold and goes
            # on, or stops inside it, differs where the shorter one ends
            for (k = 1; k <= g && k <= m && gold_words[k] == model_words[k]; k++) {}
            at_answer[key, k - 1]++; at_sequence[key, p + k - 1]++
            if (p + k - 1 > last[key]) last[key] = p + k - 1  # the furthest token, which bounds both lists
        }
        # the places of PLACES[key, ...] that 5% or more of the wrong outputs share, with shares
        function common(places, key, top,   i, out) {
            out = ""
            for (i = 0; i <= top; i++)
                if ((key, i) in places && places[key, i] >= 0.05 * wrong[key])
                    out = out sprintf(" %d:%.2f", i, places[key, i] / wrong[key])
            return out == "" ? " -" : out
        }
        END {
            if (seen == 0) { print "dev/first_error.sh: " source " holds no decoded example" > "/dev/stderr"; exit 1 }
            printf "  %-6s %6s %8s %6s  %s\n", "split", "length", "examples", "wrong", "first wrong word: at answer word | at sequence token"
            for (s = 1; s <= 2; s++) {
                name = s == 1 ? "valid" : "test"
                for (n = 0; n <= longest; n++) {
                    key = name SUBSEP n
                    if (!(key in examples)) continue
                    places = !(key in wrong) ? " - | -" : common(at_answer, key, last[key]) " |" common(at_sequence, key, last[key])
                    printf "  %-6s %6d %8d %6.2f %s\n", name, n, examples[key], wrong[key] / examples[key], places
                }
            }
        }'
}

tabulate_sources
