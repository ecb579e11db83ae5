#!/usr/bin/env bash
# the 5,000-step pairs of beyond.md in seeds 234054 and 146317: plain, then drawn random positions
# (evaluated drawn, then each model at 0..n-1), one seed at a time
set -u
cd /work/clones/seeds5k
root=/work/sweeps/seeds5k
common="--model tiny --steps 5000 --valid-size 1000 --test-size 2000 --train-max 20 --test-max 50"
for seed in 234054 146317; do
    date
    dev/sweep.sh $root/plain-$seed --tasks ch_even_pairs,ch_cycle_navigation --pes ape,t5,alibi,rope --seeds $seed --no-report --jobs 1 --threads 2 -- $common
    dev/sweep.sh $root/drawn-$seed --tasks ch_even_pairs,ch_cycle_navigation --pes ape,t5,alibi,rope --seeds $seed --no-report --jobs 1 --threads 2 \
        -- $common --random-positions 256 --eval-positions drawn
    mkdir -p $root/drawn-$seed-counted
    for run in $root/drawn-$seed/ch_*-s$seed; do
        out=$root/drawn-$seed-counted/$(basename $run)
        [ -f $out/results.json ] || ./train --load $run/model.bin --out $out --force --threads 2 > $out.log 2>&1 || echo "failed: $out"
    done
done
date
echo done
