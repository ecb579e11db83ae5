#!/usr/bin/env bash
# test/fuzz/seeds.sh: writes the seed inputs of the fuzz corpus (test/fuzz/corpus/TARGET/seed-*)
# from ./train itself, so they follow the program: prompts of every task from --show, checkpoints
# of a micro model for every PE, command lines, attention dumps and the run files of micro runs.
# Run from the repository root after `make`; inputs a fuzzer found (named finding-*) are kept as
# they are.
set -euo pipefail
cd "$(dirname "$0")/../.."
corpus=test/fuzz/corpus
rm -f $corpus/*/seed-*
mkdir -p $corpus/answer $corpus/checkpoint $corpus/flags $corpus/dump $corpus/results

# answer: byte 0 the task's index in the task table (--help lists them in that order), byte 1
# 0 for a prompt as text, 1 for vocabulary indices
index=0
for task in $(./train --help | awk '/^tasks/ {on = 1; next} on && /^$/ {exit} on {print $1}'); do
    n=0
    while IFS=$'\t' read -r prompt _; do
        { printf "\\x$(printf %02x $index)\\x00"; printf '%s' "$prompt"; } > $corpus/answer/seed-$task-$n
        n=$((n + 1))
    done < <(./train --task "$task" --show 2 --split test)
    { printf "\\x$(printf %02x $index)\\x01"; head -c 24 /dev/urandom; } > $corpus/answer/seed-$task-words
    index=$((index + 1))
done

# checkpoint: byte 0 = 15 (every fix on: the file as saved), then a micro model's model.bin
# and state.bin for each PE (--help lists them), and for the wrappers that change the tensors
tmp=$(mktemp -d)
micro() {  # NAME FLAGS...
    local name=$1
    shift
    ./train "$@" --steps 2 --eval-every 1 --layers 1 --d-model 16 --heads 2 --d-ff 8 --train-size 16 \
        --valid-size 4 --test-size 4 --batch 2 --device cpu --out "$tmp/$name" > /dev/null
    for file in model state; do { printf '\x0f'; cat "$tmp/$name/$file.bin"; } > $corpus/checkpoint/seed-$name-$file; done
}
for pe in $(./train --help | sed -n 's/^positional encodings (--pe): //p'); do
    micro "$pe" --task copy_cmc --pe "$pe" --train-max 3 --test-max 4
done
micro fire-random --task copy_cmc --pe fire --train-max 3 --test-max 4 --random-positions 64
micro nope-abacus --task addition --pe nope --train-max 3 --test-max 4 --reverse-digits --abacus
micro ape_learned-coupled --task addition --pe ape_learned --train-max 3 --test-max 4 --reverse-digits --zero-pad --position-coupling

# dump: byte 0 = 0 (the file as written), then an attention dump of a micro model (CoPE's with
# its positions and table)
for pe in nope t5 rope fire cope; do
    ./train --load "$tmp/$pe/model.bin" --dump-attention "$tmp/$pe.dump" --dump-per-length 1 > /dev/null
    { printf '\x00'; cat "$tmp/$pe.dump"; } > $corpus/dump/seed-$pe
done

# results: micro runs' config.json and results.json, NUL-separated: one run, two and three PEs
# of a seed, a RoPE evaluation with its angles rescaled beside its run, and a finished run beside an
# unfinished one (a config.json alone)
./train --load "$tmp/rope/model.bin" --rope-scaling pi --out "$tmp/rope-pi" > /dev/null
files() {  # RUN...: each run's config.json and results.json, NUL-separated
    local first=1
    for run in "$@"; do
        for file in config results; do
            [ $first = 1 ] || printf '\0'
            first=0
            cat "$tmp/$run/$file.json"
        done
    done
}
files nope > $corpus/results/seed-nope
files nope alibi > $corpus/results/seed-nope-alibi
files nope t5 alibi > $corpus/results/seed-nope-t5-alibi
files rope rope-pi > $corpus/results/seed-rope-pi
{ files fire-random; printf '\0'; cat "$tmp/nope/config.json"; } > $corpus/results/seed-unfinished
rm -rf "$tmp"

# flags: arguments separated by NUL bytes
n=0
while read -r line; do
    printf '%s' "$line" | tr ' ' '\0' > $corpus/flags/seed-$n
    n=$((n + 1))
done <<'LINES'
--task scan --show 3 --split test
--task pcfg --stats --train-max 10
--pe rope --rope-frac 0.5 --layers 2 --d-model 32 --heads 4
--bench --bench-seq 64 --model paper --precision fp32
--model small --steps 10 --lr 1e-3 --warmup-frac 0.5 --skip-nonfinite
--task addition --answer
--resume runs/x
--dump-state x.bin --task lego --batch 2
--help
--task copy --train-size 100 --valid-size 10 --test-size 10 --train-max 5 --test-max 9 --data-seed 7
--task addition --reverse-digits --index-hints --show 2 --split test
--task addition --reverse-digits --abacus --pe fire --random-positions 300 --steps 5
--task addition --reverse-digits --zero-pad --position-coupling --pe ape_learned --steps 5
--load runs/x/model.bin --rope-scaling yarn --out runs/y --force
--task ch_duplicate_string --train-max 20 --test-max 50 --stats
LINES
echo "seeds: $(ls $corpus/answer | wc -l) answer, $(ls $corpus/checkpoint | wc -l) checkpoint, $(ls $corpus/flags | wc -l) flags," \
    "$(ls $corpus/dump | wc -l) dump, $(ls $corpus/results | wc -l) results"
