#!/usr/bin/env bash
# dev/analyses.sh: the attention analyses behind docs/analyses.md, on one task's sweep.
#
#   dev/analyses.sh SWEEP TASK OUT [SEED [OTHER_SEED]]
#
# SWEEP holds runs TASK-PE-sSEED for the five PEs and TASK-nope-sOTHER_SEED (default seeds
# 256788 and 234054: dev/sweep.sh NAME --tasks TASK --seeds 256788, then --pes nope --seeds
# 234054). For each run it dumps the attention of 10 examples per length (./train --load ...
# --dump-attention, kept in SWEEP/attention/ until its model.bin changes), then writes into OUT:
#   distance.tsv/.svg    §5.2: each model's distance from NoPE's attention (and NoPE of the
#                        other seed, the paper's baseline NoPE')
#   histogram.tsv/.svg   §6.1: where each model's heads look over the answer
#   PE.test.svg          heatmaps of the first test example, every head, for each PE
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: dev/analyses.sh SWEEP TASK OUT [SEED [OTHER_SEED]]" >&2; exit 1; }
sweep=$(realpath -m "$1") task=$2 out=$(realpath -m "$3") seed=${4:-256788} other=${5:-234054}  # from the caller's directory
cd "$(dirname "$0")/.."
pes=(nope ape t5 alibi rope)
# every model is there before anything is written: a wrong SWEEP or TASK leaves no trace
need() { [ -f "$sweep/$1/model.bin" ] || { echo "dev/analyses.sh: no $sweep/$1/model.bin (SWEEP holds TASK-PE-sSEED for the five PEs and TASK-nope-sOTHER_SEED: see the script's head)" >&2; exit 1; }; }
for pe in "${pes[@]}"; do need "$task-$pe-s$seed"; done
need "$task-nope-s$other"
mkdir -p "$sweep/attention" "$out"

# run name -> its dump (FILE, FILE.valid.svg and FILE.test.svg), made again unless FILE.test.svg,
# which ./train writes last (after FILE, which it writes whole), is newer than its model.bin: a
# dump cut short (killed, a full disk) or older than its run's model is made again. It runs in
# a command substitution, where set -e does not reach: it returns a failure itself.
dump() {
    local model=$sweep/$1/model.bin file=$sweep/attention/$1.bin
    if [ ! "$file.test.svg" -nt "$model" ]; then
        ./train --load "$model" --dump-attention "$file" > /dev/null || return
    fi
    echo "$file"
}

labelled=()
for pe in "${pes[@]}"; do
    file=$(dump "$task-$pe-s$seed")
    cp "$file.test.svg" "$out/$pe.test.svg"
    [ "$pe" = nope ] || labelled+=("$pe=$file")
done
file=$(dump "$task-nope-s$other")
labelled+=("nope-s$other=$file")
dev/attention distance --out "$out" "nope=$sweep/attention/$task-nope-s$seed.bin" "${labelled[@]}"

histogram=()
for pe in "${pes[@]}"; do histogram+=("$pe=$sweep/attention/$task-$pe-s$seed.bin"); done
dev/attention histogram --out "$out" "${histogram[@]}"
