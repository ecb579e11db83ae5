#!/usr/bin/env bash
# even pairs' two bits in the 5,000-step models: the largest head's attention of [SEP]'s query on
# the first bit (position 1) and on the last (distance 1), lengths 11-20, as docs/beyond.md's
# "Inside the models" bullet; drawn models dumped at drawn positions, plain ones at 0..n-1
# usage: bits.sh OUT RUN_DIR...
set -u
cd /work/clones/seeds5k
out=$1; shift
mkdir -p $out
for run in "$@"; do
    label=$(basename $(dirname $run))-$(basename $run)
    drawn=
    grep -q '"random-positions": 256' $run/config.json && drawn="--eval-positions drawn"
    ./train --load $run/model.bin --dump-attention $out/$label.bin --dump-per-length 3 $drawn --threads 1 > $out/$label.log 2>&1 || { echo "dump failed: $label"; continue; }
    dev/attention span --out $out/$label-first $label=$out/$label.bin --keys position --edges 0,1,2 --ranges 11-20 > /dev/null
    dev/attention span --out $out/$label-last $label=$out/$label.bin --keys distance --edges 0,1,2 --ranges 11-20 > /dev/null
    first=$(awk -F'\t' 'NR > 1 && $6 == "1" { if ($7 > m) m = $7 } END { printf "%.2f", m }' $out/$label-first/span.tsv)
    last=$(awk -F'\t' 'NR > 1 && $6 == "1" { if ($7 > m) m = $7 } END { printf "%.2f", m }' $out/$label-last/span.tsv)
    printf '%s\t%s\t%s\n' "$label" "$first" "$last"
    rm -f $out/$label.bin
done
