#!/usr/bin/env bash
# dev/shuffle_answers.sh: does a model's answer change with the order of the prompt's items,
# where the task's answer does not? Summation, parity and sorting ask about a multiset: any
# order of its items has the same answer. Behind docs/reproduction-cpu.md.
#
#   dev/shuffle_answers.sh [--examples N] [--threads N] RUN_DIR [...]
#
# For each run of sum, parity or sort, this decodes the first N valid and N test examples of its
# model.bin (./train --load ... --sample N, default 2000), writes each prompt's items in four
# other orders (drawn with a fixed seed; an example whose items are all alike has none), asks
# the model for its answer to each (./train --load ... --answer; both in the arithmetic the run
# trained in, decoding.sh's trained_arithmetic) and prints a row per split and
# length n: the examples, the share answered right as given, the reorderings, the share of them
# answered right, and the share answered exactly as the model answered the prompt as given
# ("same"), also of the reorderings of the prompts it answered wrong ("if-wrong": the same
# wrong answer again). A model that computes a function of the items alone, right or wrong,
# answers every order alike (same 1.00); one whose answer moves with the order reads positions,
# not only items. What "same" would be by chance is the last column ("alike"): the share of
# pairs of different examples of the length, as given, answered alike (a model giving one
# answer whatever it is asked scores 1.00 on both). --threads goes to ./train (give 1 beside a
# training run).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # the runs named are read from where the tool was called
parse_decoding_options dev/shuffle_answers.sh "$@"
for source in "${sources[@]}"; do
    [ -d "$source" ] || { echo "dev/shuffle_answers.sh: $source is a decoding: reordered prompts need the run's model" >&2; exit 1; }
    grep -Eq '"task": "(sum|parity|sort)"' "$source/config.json" 2> /dev/null ||
        { echo "dev/shuffle_answers.sh: $source is not a sum, parity or sort run (by its config.json)" >&2; exit 1; }
done

# Four reorderings of each example on stdin (decoding.sh's fields), each a line: the example's
# split, length, right (1 or 0), gold and the model's answer as given, then the reordered
# prompt, tab-separated. The items are the words between "Compute:" and "." (sum: "Compute: 3
# + 8 + 6 . [SEP]") or between "[" and "]" (parity, sort: "[ 0 , 1 , 1 ]"), every other one:
# the others are the separators, which stay where they are.
reorder() {
    awk -F '\t' '
        BEGIN { srand(20261125) }
        {
            n_words = split($4, w, " ")
            opener = 0; closer = 0
            for (i = 1; i <= n_words; i++) {
                if (!opener && (w[i] == "Compute:" || w[i] == "[")) opener = i
                else if (opener && !closer && (w[i] == "." || w[i] == "]")) closer = i
            }
            if (!opener || !closer) next  # not a prompt of these tasks
            n = 0
            for (i = opener + 1; i < closer; i += 2) item[++n] = w[i]
            all_same = 1
            for (i = 2; i <= n; i++) if (item[i] != item[1]) all_same = 0
            for (r = 1; r <= 4 && !all_same; r++) {
                do {  # an order other than the given one (most draws are)
                    for (i = 1; i <= n; i++) order[i] = item[i]
                    for (i = n; i > 1; i--) { j = int(rand() * i) + 1; t = order[i]; order[i] = order[j]; order[j] = t }
                    moved = 0
                    for (i = 1; i <= n; i++) if (order[i] != item[i]) moved = 1
                } while (!moved)
                line = w[1]
                for (i = 2; i <= n_words; i++) line = line " " (i > opener && i < closer && (i - opener) % 2 == 1 ? order[(i - opener + 1) / 2] : w[i])
                printf "%s\t%s\t%s\t%s\t%s\t%s\n", $1, $2, $3, $5, $6, line
            }
        }'
}

# the table of SOURCE: its examples (decoding.sh's fields) in $decoded/examples.tsv, and each
# reordering (reorder's fields) beside the model's answer to it on stdin
tabulate_orders() {
    awk -F '\t' -v source="$1" '
        FNR == NR {
            key = $1 SUBSEP $2; examples[key]++; seen++; right[key] += $3
            pairs_alike[key] += answered[key, $6]++  # each earlier example of the length answered so
            if ($2 > longest) longest = $2
            next
        }
        {
            key = $1 SUBSEP $2; orders[key]++
            answer = $7; sub(/ \(no <eos>\)$/, "", answer)
            if ($7 == $4) orders_right[key]++  # the gold, and an <eos> after it
            if (answer == $5) same[key]++
            if ($3 == 0) { orders_of_wrong[key]++; if (answer == $5) same_wrong[key]++ }
        }
        END {
            if (seen == 0) { print "dev/shuffle_answers.sh: " source " holds no decoded example" > "/dev/stderr"; exit 1 }
            printf "  %-6s %6s %8s %6s %7s %6s %6s %8s %6s\n", "split", "length", "examples", "right", "orders", "right", "same", "if-wrong", "alike"
            for (s = 1; s <= 2; s++) {
                name = s == 1 ? "valid" : "test"
                for (n = 1; n <= longest; n++) {
                    key = name SUBSEP n
                    if (!(key in examples)) continue
                    line = sprintf("  %-6s %6d %8d %6.2f %7d", name, n, examples[key], right[key] / examples[key], orders[key])
                    line = line (orders[key] ? sprintf(" %6.2f %6.2f", orders_right[key] / orders[key], same[key] / orders[key]) : sprintf(" %6s %6s", "-", "-"))
                    line = line (orders_of_wrong[key] ? sprintf(" %8.2f", same_wrong[key] / orders_of_wrong[key]) : sprintf(" %8s", "-"))
                    m = examples[key]
                    print line (m > 1 ? sprintf(" %6.2f", pairs_alike[key] / (m * (m - 1) / 2)) : sprintf(" %6s", "-"))
                }
            }
        }' "$decoded/examples.tsv" -
}

# SOURCE's table, from its examples on stdin (which tabulate_sources also leaves in
# $decoded/examples.tsv): their reorderings, answered by the run's model in the arithmetic its
# decoding used (trained_arithmetic), so that "same" compares like with like. It runs in a
# command substitution, where set -e does not reach: each step returns its failure itself.
tabulate() {
    local arithmetic
    mapfile -t arithmetic < <(trained_arithmetic "$1")
    reorder > "$decoded/orders.tsv" || return
    cut -f 6 "$decoded/orders.tsv" | "$repo/train" --load "$1/model.bin" "${arithmetic[@]}" --answer "${threads[@]}" > "$decoded/answers.txt" || return
    paste "$decoded/orders.tsv" "$decoded/answers.txt" | tabulate_orders "$1"
}

tabulate_sources
