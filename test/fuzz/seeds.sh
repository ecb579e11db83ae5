#!/usr/bin/env bash
# test/fuzz/seeds.sh: writes the seed inputs of the fuzz corpus (test/fuzz/corpus/TARGET/seed-*)
# from ./train itself, so they follow the program: prompts of every task from --show, checkpoints
# of a micro model for every PE, and command lines. Run from the repository root after `make`;
# inputs a fuzzer found (named finding-*) are kept as they are.
set -euo pipefail
cd "$(dirname "$0")/../.."
corpus=test/fuzz/corpus
rm -f $corpus/*/seed-*
mkdir -p $corpus/answer $corpus/checkpoint $corpus/flags

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
echo "seeds: $(ls $corpus/answer | wc -l) answer, $(ls $corpus/checkpoint | wc -l) checkpoint, $(ls $corpus/flags | wc -l) flags"
