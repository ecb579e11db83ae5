#!/usr/bin/env bash
# dev/t5_clamp.sh: which of a T5 model's buckets fail it at longer lengths? The interventions
# behind docs/reproduction-cpu.md.
#
#   dev/t5_clamp.sh [--threads N] RUN_DIR [...]
#
# A T5 model trained on short sequences reads, at longer ones, the biases of buckets of
# distance that no training sequence reached (`never` in dev/t5_table), and of the last buckets
# it did reach, which only its longest sequences reached (`partly` where they reached only the
# bucket's first distances). For each --pe t5 run's directory this evaluates its model.bin as
# trained, then edited by dev/table_extend with PERIOD 1 from bucket B on (every bucket from B
# takes bucket B-1's bias, so all the longer distances read B-1's) for B the first bucket
# training never reached and each of the last three it reached. If the buckets from B on were
# what fails the model, the edit mends the longer lengths. A row per model and edit: B and how
# much of it training reached, valid and test accuracy, and the test accuracy at each length.
# Every evaluation computes as the run trained (decoding.sh's trained_arithmetic). --threads goes
# to ./train (give 1 beside a training run).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # trained_arithmetic and $repo (the runs named are read from where it was called)
usage="usage: dev/t5_clamp.sh [--threads N] RUN_DIR [...]"
threads=()
if [ "${1:-}" = --threads ]; then
    [ $# -ge 2 ] || { echo "$usage" >&2; exit 1; }
    threads=(--threads "$2")
    shift 2
fi
[ $# -ge 1 ] || { echo "$usage" >&2; exit 1; }
for run in "$@"; do
    [ -f "$run/model.bin" ] || { echo "dev/t5_clamp.sh: $run holds no model.bin" >&2; exit 1; }
    grep -q '"pe": "t5"' "$run/config.json" 2> /dev/null ||
        { echo "dev/t5_clamp.sh: $run is not a --pe t5 run (its config.json names another PE, or is missing)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the buckets to edit from, for a model's dev/t5_table output: the first bucket its training
# never reached and the last three it reached, each as "BUCKET REACH" (REACH all, partly or
# never), from the last on; bucket 0 has none before it to copy
edit_buckets() {
    awk '$3 == "all" || $3 == "partly" || $3 == "never" { reach[$1] = $3; if ($3 != "never") last = $1 }
         END { for (b = last + 1; b >= last - 2 && b >= 1; b--) if (b in reach) print b, reach[b] }' "$1"
}

# evaluate MODEL of RUN_DIR in the run's arithmetic and print "valid test length:accuracy ..."
# from its results.json. It runs in a command substitution, where set -e does not reach: a failed
# ./train returns its status (which stops the script at the caller's assignment), and the
# previous model's results.json is removed first, never read as this one's.
evaluate() {  # MODEL RUN_DIR
    local arithmetic
    mapfile -t arithmetic < <(trained_arithmetic "$2")
    rm -rf "$work/eval"
    "$repo/train" --load "$1" --device cpu "${arithmetic[@]}" "${threads[@]}" --out "$work/eval" > /dev/null || return
    tr -d '\n' < "$work/eval/results.json" | awk '
        # the accuracy of the split named, its "length:accuracy" pairs left in by_length
        function split_of(name,   rest, total, entry, f) {
            rest = $0; sub(".*\"" name "\": \\{\"accuracy\": ", "", rest)
            total = rest; sub(/,.*/, "", total)
            sub(/\]\}.*/, "", rest)  # its by_length list ends the split
            by_length = ""
            while (match(rest, /"length": [0-9]+, "correct": [0-9]+, "total": [0-9]+, "accuracy": [0-9.]+/)) {
                entry = substr(rest, RSTART, RLENGTH); rest = substr(rest, RSTART + RLENGTH)
                n = split(entry, f, /[:,] */)
                by_length = by_length sprintf(" %d:%.3f", f[2], f[8])
            }
            return total
        }
        { valid = split_of("valid"); test = split_of("test"); printf "%.3f\t%.3f\t%s\n", valid, test, substr(by_length, 2) }'
}

printf 'model\tfrom bucket\treached\tvalid\ttest\ttest by length\n'
for run in "$@"; do
    "$repo/dev/t5_table" "$run/model.bin" > "$work/table.txt"
    row=$(evaluate "$run/model.bin" "$run")
    printf '%s\t-\tas trained\t%s\n' "$run" "$row"
    while read -r from reach; do
        "$repo/dev/table_extend" "$run/model.bin" "$from" 1 "$work/edited.bin" > /dev/null
        row=$(evaluate "$work/edited.bin" "$run")
        printf '%s\t%s\t%s\t%s\n' "$run" "$from" "$reach" "$row"
    done < <(edit_buckets "$work/table.txt")
done
