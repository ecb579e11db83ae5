#!/usr/bin/env bash
# dev/cope_inside.sh: the looks inside CoPE behind docs/beyond.md, over the models of a beyond
# sweep (dev/reproduce.sh ROOT beyond, and the cope+layers runs beside it).
#
#   dev/cope_inside.sh ROOT OUT
#
# Dumps the attention of 10 examples per length (./train --load ... --dump-attention, kept in
# ROOT/attention/, beside the sweep, as dev/analyses.sh keeps its) of every CoPE model of ROOT/beyond/ch_parity_check{,-layers}, of copy's seed
# 256788 and of reverse's seed 234054 (shared and per-layer tables), then writes
#   OUT/parity-cope/      dev/attention positions (gates, counts, reach, table), and
#                         attends-valid/ and attends-test/ (dev/attention attends --split)
#   OUT/parity-cope/extend.tsv   each parity model edited by dev/table_extend (FROM 12-23 with
#                                PERIOD 2, and FROM 18 with PERIODs 1, 3, 4), then evaluated
#   OUT/copy-cope/, OUT/reverse-cope/   dev/attention positions
# A model the sweep does not hold is left out, and said so. A dump is made again when its model.bin
# is newer; the evaluations compute as the run trained (decoding.sh's trained_arithmetic).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # trained_arithmetic
[ $# -eq 2 ] || { echo "usage: dev/cope_inside.sh ROOT OUT" >&2; exit 1; }
root=$(realpath -m "$1") out=$(realpath -m "$2")  # from the caller's directory
beyond=$root/beyond kept=$root/attention
cd "$(dirname "$0")/.."
[ -d "$beyond" ] || { echo "dev/cope_inside.sh: $root holds no beyond/ (dev/reproduce.sh ROOT beyond makes it)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# LABEL=DUMP for each model there is: RUN_DIR<TAB>LABEL lines on stdin (a path may hold spaces).
# A dump is made again unless FILE.test.svg, which ./train writes last (after FILE, which it
# writes whole), is newer than its model.bin: one cut short (killed, a full disk) or older than
# its run's model is made again. It runs in a pipeline into a file, whose status set -e checks.
dumps() {
    local run label file
    while IFS=$'\t' read -r run label; do
        if [ ! -f "$run/model.bin" ]; then
            echo "dev/cope_inside.sh: no $run/model.bin: $label left out" >&2
            continue
        fi
        mkdir -p "$kept"
        file=$kept/$(basename "$(dirname "$run")")-$label.bin
        if [ ! "$file.test.svg" -nt "$run/model.bin" ]; then
            ./train --load "$run/model.bin" --dump-attention "$file" > /dev/null
        fi
        echo "$label=$file"
    done
}

parity_runs() {
    for seed in 256788 234054 146317; do
        printf '%s\t%s\n' "$beyond/ch_parity_check/ch_parity_check-cope-s$seed" "cope-s$seed" \
            "$beyond/ch_parity_check-layers/ch_parity_check-cope-s$seed" "cope+layers-s$seed"
    done
}

parity_runs | dumps > "$work/parity"
mapfile -t parity < "$work/parity"
# parity's models are the script's subject: without one there is nothing to write
[ ${#parity[@]} -gt 0 ] || { echo "dev/cope_inside.sh: no CoPE parity model under $beyond (ch_parity_check{,-layers}/ch_parity_check-cope-sSEED)" >&2; exit 1; }
mkdir -p "$out/parity-cope" "$out/copy-cope" "$out/reverse-cope"
dev/attention positions --out "$out/parity-cope" "${parity[@]}" > "$out/parity-cope/positions.txt"
for split in valid test; do
    mkdir -p "$out/parity-cope/attends-$split"
    dev/attention attends --split $split --out "$out/parity-cope/attends-$split" "${parity[@]}" > "$out/parity-cope/attends-$split/attends.txt"
done

{
    printf 'model\tfrom\tperiod\tvalid\ttest\n'
    while IFS=$'\t' read -r run label; do
        [ -f "$run/model.bin" ] || continue
        mapfile -t arithmetic < <(trained_arithmetic "$run")
        for edit in "12 2" "13 2" "14 2" "15 2" "16 2" "17 2" "18 2" "19 2" "20 2" "21 2" "22 2" "23 2" "18 1" "18 3" "18 4"; do
            read -r from period <<< "$edit"
            dev/table_extend "$run/model.bin" "$from" "$period" "$work/model.bin" > /dev/null
            ./train --load "$work/model.bin" --device cpu "${arithmetic[@]}" --out "$work/eval" --force > /dev/null
            valid=$(grep -o '"valid": {"accuracy": [0-9.]*' "$work/eval/results.json" | awk '{print $NF}')
            test=$(grep -o '"test": {"accuracy": [0-9.]*' "$work/eval/results.json" | awk '{print $NF}')
            printf '%s\t%s\t%s\t%s\t%s\n' "$label" "$from" "$period" "$valid" "$test"
        done
    done < <(parity_runs)
} > "$out/parity-cope/extend.tsv"

printf '%s\t%s\n' "$beyond/copy/copy-cope-s256788" cope-s256788 | dumps > "$work/copy"
mapfile -t copy < "$work/copy"
[ ${#copy[@]} -eq 0 ] || dev/attention positions --out "$out/copy-cope" "${copy[@]}" > "$out/copy-cope/positions.txt"
printf '%s\t%s\n' "$beyond/reverse/reverse-cope-s234054" cope-s234054 \
    "$beyond/reverse-layers/reverse-cope-s234054" cope+layers-s234054 | dumps > "$work/reverse"
mapfile -t reverse < "$work/reverse"
[ ${#reverse[@]} -eq 0 ] || dev/attention positions --out "$out/reverse-cope" "${reverse[@]}" > "$out/reverse-cope/positions.txt"
echo "wrote $out/parity-cope, $out/copy-cope and $out/reverse-cope"
