#!/usr/bin/env bash
# dev/t5_clamp.sh: are T5's untrained buckets what fails it at longer lengths? The intervention
# behind docs/reproduction-cpu.md.
#
#   dev/t5_clamp.sh [--threads N] RUN_DIR [...]
#
# A T5 model trained on short sequences reads, at longer ones, the biases of buckets of
# distance that no training sequence reached (`never` in dev/t5_table) or that only the longest
# ones did (`partly`). For each --pe t5 run's directory this evaluates its model.bin as trained
# and twice edited by dev/table_extend with PERIOD 1: from the first `never` bucket on, every
# bucket takes the bias of the bucket before it (so the distances training never showed read the
# last bucket it did), and from the first `partly` bucket on (so they read the last bucket every
# long training sequence filled). If the untrained buckets were the failure, the edits would
# mend the longer lengths. A row per model and edit: valid and test accuracy, and the test
# accuracy at each length. --threads goes to ./train (give 1 beside a training run).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)  # its tools; the runs named are read from where it was called
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

# the first bucket dev/t5_table marks as trained WHICH (partly, never) for a model, or nothing
first_bucket() { awk -v which="$2" '$3 == which { print $1; exit }' "$1"; }

# evaluate MODEL and print "valid test length:accuracy ..." from its results.json
evaluate() {
    "$repo/train" --load "$1" --device cpu "${threads[@]}" --out "$work/eval" --force > /dev/null
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

printf 'model\tedit\tfrom\tvalid\ttest\ttest by length\n'
for run in "$@"; do
    "$repo/dev/t5_table" "$run/model.bin" > "$work/table.txt"
    printf '%s\tas trained\t-\t%s\n' "$run" "$(evaluate "$run/model.bin")"
    for which in never partly; do
        from=$(first_bucket "$work/table.txt" "$which")
        if [ -z "$from" ]; then
            printf '%s\tfrom the first %s bucket\t-\tno such bucket at the test lengths\n' "$run" "$which"
            continue
        fi
        "$repo/dev/table_extend" "$run/model.bin" "$from" 1 "$work/edited.bin" > /dev/null
        printf '%s\tfrom the first %s bucket\t%s\t%s\n' "$run" "$which" "$from" "$(evaluate "$work/edited.bin")"
    done
done
