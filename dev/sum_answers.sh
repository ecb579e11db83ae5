#!/usr/bin/env bash
# dev/sum_answers.sh: what does a summation model answer past the lengths it was trained on:
# the sum of some of the numbers, or the sum off by a steady amount? Behind
# docs/reproduction-cpu.md.
#
#   dev/sum_answers.sh [--examples N] [--threads N] RUN_DIR|DECODING.txt [...]
#
# The sum task asks for n numbers' sum mod 10. For each sum run's directory this decodes the
# first N valid and N test examples of its model.bin (./train --load ... --sample N, default
# 2000; a file instead of a directory holds such a decoding, saved) and prints three tables,
# a row per split and length n:
#   - the share of answers that are the sum mod 10 of the last k numbers, for k = 1..n (k = n:
#     the right answer). A model that reads only the numbers near the end of the prompt, as many
#     as training's longest prompts held, answers the sum of those. Neighbouring windows never
#     agree (their sums differ by one number from 1 to 9); a window the model does not read
#     scores about 0.1 by chance;
#   - the same for the first k numbers;
#   - the share of answers that are the sum plus d, mod 10, for d = 0..9 (0: right), and of
#     answers that are not one digit ("none": no digit, or more than one). A model that adds
#     every number but misjudges the total misses by a few steady amounts, which may change
#     with the length.
# --threads goes to ./train (give 1 beside a training run).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # the runs named are read from where the tool was called
parse_decoding_options dev/sum_answers.sh "$@"
require_task dev/sum_answers.sh sum

# the tables of SOURCE's examples on stdin (decoding.sh), whose prompts read
# "Compute: 3 + 8 + 6 . [SEP]" and answers "The answer is 7 ."
tabulate() {
    awk -F '\t' -v source="$1" '
        {
            split_name = $1; prompt = $4; said = $6
            if (!sub(/^Compute: /, "", prompt) || !sub(/ \. \[SEP\]$/, "", prompt)) next  # not a sum prompt
            n = split(prompt, numbers, " \\+ ")
            answer = said ~ /^The answer is [0-9] \.$/ ? substr(said, 15, 1) + 0 : -1
            key = split_name SUBSEP n
            examples[key]++; seen++
            if (n > longest) longest = n
            last = 0; first = 0
            for (k = 1; k <= n; k++) {
                last = (last + numbers[n + 1 - k] % 10) % 10; first = (first + numbers[k] % 10) % 10
                if (last == answer) from_end[key, k]++
                if (first == answer) from_start[key, k]++
            }
            if (answer < 0) no_digit[key]++
            else off_by[key, (answer - last + 10) % 10]++  # last now holds the sum of all n
        }
        function heading(first_column, last_column, name,   k, line) {
            line = sprintf("  %-6s %6s %8s", "split", "length", "examples")
            for (k = first_column; k <= last_column; k++) line = line sprintf(" %5s", name k)
            return line
        }
        # rows of COUNTS[key, k] for k from FIRST_COLUMN to the row length n (WINDOWS) or to 9
        function table(title, counts, windows,   s, name, n, k, key, line, top) {
            print "  " title
            print windows ? heading(1, longest, "k=") : heading(0, 9, "+") sprintf(" %5s", "none")
            for (s = 1; s <= 2; s++) {
                name = s == 1 ? "valid" : "test"
                for (n = 1; n <= longest; n++) {
                    key = name SUBSEP n
                    if (!(key in examples)) continue
                    line = sprintf("  %-6s %6d %8d", name, n, examples[key])
                    top = windows ? n : 9
                    for (k = windows ? 1 : 0; k <= top; k++) line = line sprintf(" %5.2f", counts[key, k] / examples[key])
                    if (!windows) line = line sprintf(" %5.2f", no_digit[key] / examples[key])
                    print line
                }
            }
        }
        END {
            if (seen == 0) { print "dev/sum_answers.sh: " source " holds no decoded example of the sum task" > "/dev/stderr"; exit 1 }
            table("share of answers that are the sum mod 10 of the last k numbers:", from_end, 1)
            table("share of answers that are the sum mod 10 of the first k numbers:", from_start, 1)
            table("share of answers that are the sum plus d, mod 10, and with no digit:", off_by, 0)
        }'
}

tabulate_sources
