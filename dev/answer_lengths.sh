#!/usr/bin/env bash
# dev/answer_lengths.sh: does a model fail at longer lengths by stopping early, by going on too
# long, or with answers of the right length? Behind docs/reproduction-cpu.md.
#
#   dev/answer_lengths.sh [--examples N] [--threads N] RUN_DIR|DECODING.txt [...]
#
# For each run's directory this decodes the first N valid and N test examples of its model.bin
# (./train --load ... --sample N, default 2000; a file instead of a directory holds such a
# decoding, saved) and prints, for every split and length, the examples decoded, the share
# answered right, the mean number of words the gold output and the model's have (a scratchpad's
# words count), the shares of the model's outputs shorter and longer than their gold, and how
# many words longer than the gold (negative: shorter) the model's outputs are, each difference
# that 5% or more of them share with its share. Any task: on copy, a model that counts the
# words it has written against the prompt's shows its count here; on sort, a model whose errors
# are whole periods of some count shows them as differences that are multiples of the period.
# --threads goes to ./train (give 1 beside a training run).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # the runs named are read from where the tool was called
parse_decoding_options dev/answer_lengths.sh "$@"

# the table of SOURCE's examples on stdin (decoding.sh), a row per split and length
tabulate() {
    awk -F '\t' -v source="$1" '
        {
            n = $2 + 0; key = $1 SUBSEP n
            if (n > longest) longest = n
            right = $3; g = split($5, words, " "); m = split($6, words, " ")
            examples[key]++; correct[key] += right; gold_words[key] += g; model_words[key] += m
            shorter[key] += (m < g); longer[key] += (m > g)
            differences[key, m - g]++
            if (!(key in fewest) || m - g < fewest[key]) fewest[key] = m - g
            if (!(key in most) || m - g > most[key]) most[key] = m - g
            seen++
        }
        END {
            if (seen == 0) { print "dev/answer_lengths.sh: " source " holds no decoded example" > "/dev/stderr"; exit 1 }
            printf "  %-6s %6s %8s %6s %10s %11s %8s %7s  %s\n", "split", "length", "examples", "right", "gold words", "model words", "shorter", "longer",
                   "words more than gold: share"
            for (s = 1; s <= 2; s++) {
                name = s == 1 ? "valid" : "test"
                for (n = 0; n <= longest; n++) {
                    key = name SUBSEP n
                    if (!(key in examples)) continue
                    e = examples[key]
                    common = ""
                    for (d = fewest[key]; d <= most[key]; d++)
                        if ((key, d) in differences && differences[key, d] >= 0.05 * e)
                            common = common sprintf(" %+d:%.2f", d, differences[key, d] / e)
                    printf "  %-6s %6d %8d %6.2f %10.1f %11.1f %8.2f %7.2f %s\n", name, n, e, correct[key] / e,
                           gold_words[key] / e, model_words[key] / e, shorter[key] / e, longer[key] / e, common
                }
            }
        }'
}

tabulate_sources
