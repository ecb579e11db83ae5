#!/usr/bin/env bash
# dev/parity_counts.sh: what a parity model's answer depends on, behind docs/reproduction-cpu.md.
#
#   dev/parity_counts.sh [--examples N] [--threads N] RUN_DIR|DECODING.txt [...]
#
# A parity string's answer is fixed by its count of 1s, so a model that computes parity answers
# right at every count and every length, and a model that learned something else shows it in
# which counts it gets right. For each parity run's directory this decodes the first N valid
# and N test examples of its model.bin (./train --load ... --sample N, default 2000; a file
# instead of a directory holds such a decoding, saved), and prints right/total for every
# (length, count of 1s), a row per length, and two shares of the test examples: those whose
# answer is the one most test examples of the same count got (1.000: the answer depends on the
# count alone, whatever the length), and the same for the examples of one length and count
# (1.000: it depends on the two together). --threads goes to ./train (give 1 beside a training
# run: two programs' OpenMP threads spinning on two cores slow both tenfold).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # the runs named are read from where the tool was called
parse_decoding_options dev/parity_counts.sh "$@"
require_task dev/parity_counts.sh parity

# the cells and shares of SOURCE's examples on stdin (decoding.sh), whose prompts read "Is the
# number of 1's even in the sequence [ 0 , 1 , ... ] ?"
tabulate() {
    awk -F '\t' -v source="$1" '
        {
            split_name = $1; right = $3 + 0; prompt = $4
            if (!sub(/.*sequence \[ /, "", prompt) || !sub(/ \] \?$/, "", prompt)) next  # not a parity prompt
            n = split(prompt, bits, " , "); ones = 0
            for (i = 1; i <= n; i++) ones += (bits[i] == "1")
            total[n, ones]++; correct[n, ones] += right; seen[n] = 1
            if (n > longest) longest = n
            if (split_name == "test") {
                test_total++
                by_count[ones, right]++; by_cell[n, ones, right]++
                counts[ones] = 1; cells[n, ones] = 1
            }
        }
        function majority(a, b) { return a > b ? a : b }
        END {
            if (test_total == 0) { print "dev/parity_counts.sh: " source " holds no decoded test example of the parity task" > "/dev/stderr"; exit 1 }
            for (c in counts) fixed_by_count += majority(by_count[c, 0], by_count[c, 1])
            for (key in cells) { split(key, k, SUBSEP); fixed_by_cell += majority(by_cell[k[1], k[2], 0], by_cell[k[1], k[2], 1]) }
            printf "  %d test examples: the answer is the majority answer of its count of 1s in %.3f of them, of its (length, count) in %.3f\n",
                   test_total, fixed_by_count / test_total, fixed_by_cell / test_total
            print "  right/total by length (rows) and count of 1s (count:right/total):"
            for (n = 1; n <= longest; n++) {
                if (!(n in seen)) continue
                line = sprintf("  %3d", n)
                for (c = 0; c <= n; c++)
                    if ((n, c) in total) line = line sprintf(" %d:%d/%d", c, correct[n, c], total[n, c])
                print line
            }
        }'
}

tabulate_sources
