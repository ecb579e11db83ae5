#!/usr/bin/env bash
# dev/scratchpad_steps.sh: where does a model's scratchpad (--scratchpad, paper §6) first go
# wrong: in which step, and in which part of it? Behind docs/analyses.md.
#
#   dev/scratchpad_steps.sh [--examples N] [--threads N] RUN_DIR|DECODING.txt [...]
#
# For each run's directory this decodes the first N valid and N test examples of its model.bin
# (./train --load ... --sample N, default 2000; a file instead of a directory holds such a decoding,
# saved) and, for every split and length, prints the examples, the share whose answer is wrong, the
# share whose scratchpad (the words before "Thus,") is wrong, and where the wrong scratchpads first
# differ from the gold: the step (1 is the first; 0 is the preamble before it) and the part of the
# step, each that 5% or more of them share, with its share. The parts are `preamble` (the words
# before step 1) and the gold's markers: `in`, `comp`, `out`, `vars` (the `[ name: value ]` of the
# variables) and `re` (the input that remains), and two places between steps: `#` where the gold
# begins another step (a model that stops early writes `.` there) and `.` where the gold's steps end
# (a model that goes on writes `#`). A scratchpad right to the end with a wrong answer counts in
# neither. So a model that loses its place past the training lengths shows where: at the first
# step it has not seen, say, or in a `re` longer than any it has copied.
# --threads goes to ./train (give 1 beside a training run).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # the runs named are read from where the tool was called
parse_decoding_options dev/scratchpad_steps.sh "$@"

# the table of SOURCE's examples on stdin (decoding.sh), a row per split and length
tabulate() {
    awk -F '\t' -v source="$1" '
        # the words of a target up to its first "Thus," (all of them if there is none)
        function steps_end(words, n,   k) {
            for (k = 1; k <= n; k++) if (words[k] == "Thus,") return k - 1
            return n
        }
        {
            n = $2 + 0; key = $1 SUBSEP n
            if (n > longest) longest = n
            g = split($5, gold, " "); m = split($6, model, " ")
            examples[key]++; seen++
            if (!$3) answer_wrong[key]++
            g_end = steps_end(gold, g); m_end = steps_end(model, m)
            if (g_end == g) { no_scratchpad++; next }
            for (k = 1; k <= g_end && k <= m_end && gold[k] == model[k]; k++) {}
            if (k > g_end && k > m_end) next  # the scratchpad is right
            pad_wrong[key]++
            # gold word k lies in the part its last marker (up to k) opened, in step 1 + the
            # steps ended before it; a gap between steps (or after the last) opens the next step
            gap = k > g_end || gold[k] == "#" || gold[k] == "."
            ended = 0; part = ""
            for (i = 1; i <= k && i <= g_end; i++) {
                if (gold[i] == "#" && i < k) ended++
                if (gold[i] == "in" || gold[i] == "comp" || gold[i] == "out" || gold[i] == "re") part = gold[i]
                else if (gold[i] == "[" && gold[i + 1] ~ /:$/) part = "vars"
            }
            if (part == "") { step = 0; part = "preamble" }
            else step = 1 + ended + gap
            if (gap) part = k > g_end ? "." : gold[k]
            at_step[key, step]++; in_part[key, part]++
            if (step > last[key]) last[key] = step
        }
        # the entries of COUNTS[key, ...] (over NAMES, or steps 0..TOP) that 5% or more of the
        # wrong scratchpads share, with shares
        function common(counts, key, names, top,   i, n, list, out) {
            out = ""
            if (names == "") for (i = 0; i <= top; i++) list[i + 1] = i
            n = names == "" ? top + 1 : split(names, list, " ")
            for (i = 1; i <= n; i++)
                if ((key, list[i]) in counts && counts[key, list[i]] >= 0.05 * pad_wrong[key])
                    out = out sprintf(" %s:%.2f", list[i], counts[key, list[i]] / pad_wrong[key])
            return out == "" ? " -" : out
        }
        END {
            if (seen == 0) { print "dev/scratchpad_steps.sh: " source " holds no decoded example" > "/dev/stderr"; exit 1 }
            if (no_scratchpad == seen) { print "dev/scratchpad_steps.sh: " source "'"'"'s targets have no scratchpad (no Thus,)" > "/dev/stderr"; exit 1 }
            printf "  %-6s %6s %8s %6s %6s  %s\n", "split", "length", "examples", "answer", "steps", "wrong; the first wrong word of the steps: at step | in part"
            for (s = 1; s <= 2; s++) {
                name = s == 1 ? "valid" : "test"
                for (n = 0; n <= longest; n++) {
                    key = name SUBSEP n
                    if (!(key in examples)) continue
                    places = !(key in pad_wrong) ? " - | -" : common(at_step, key, "", last[key]) " |" common(in_part, key, "preamble in comp out vars re # .", 0)
                    printf "  %-6s %6d %8d %6.2f %6.2f %s\n", name, n, examples[key], answer_wrong[key] / examples[key], pad_wrong[key] / examples[key], places
                }
            }
        }'
}

tabulate_sources
