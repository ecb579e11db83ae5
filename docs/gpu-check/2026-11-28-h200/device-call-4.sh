#!/usr/bin/env bash
# Device call 4 (2026-11-28): dev/cuda attention_forward version 4 (bf16 tensor cores, fused)
# checked against the CPU's fused bf16 attention and timed, under the sanitizers at a cut shape;
# then the paper grid projected in bf16 for NoPE (dev/grid_hours.sh).
set -u -o pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"; S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s]"; }
make -j16 train dev/cuda/attention_forward > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log; exit 1; }
echo "$(el) built"
F=./dev/cuda/attention_forward
for args in "4 t5 3 37" "4 nope 3 37" "4 nope 64 48" "4 t5 64 43" "4 nope 64 256" "4 t5 64 256" "4 alibi 64 256" "4 kerple_log 64 256" "4 fire 64 256" "4 t5 8 1024" "2 nope 64 48" "3 nope 64 48"; do
    timeout 60 $F $args > /tmp/k.log 2>&1; rc=$?
    { echo "== $args (rc $rc)"; cat /tmp/k.log; } >> "$O/kernels.log"
    echo "$args (rc $rc): $(grep -E 'worst at|ms,|error' /tmp/k.log | tr '\n' ' ')"
done
grep -B2 -A6 MISMATCH "$O/kernels.log" | head -40
echo "$(el) kernels"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for t in memcheck racecheck initcheck synccheck; do
    ( timeout 60 "$SAN" --tool $t --error-exitcode 9 $F 4 t5 3 37 > /tmp/$t.log 2>&1; echo "exit $?" >> /tmp/$t.log ) &
done
wait
for t in memcheck racecheck initcheck synccheck; do
    echo "$t: $(tail -1 /tmp/$t.log) $(grep -E '(ERROR|RACECHECK) SUMMARY' /tmp/$t.log)"; head -c 100000 /tmp/$t.log > "$O/$t.log"
done
echo "$(el) sanitizers"
PES=nope timeout 120 bash dev/grid_hours.sh --model paper --precision bf16 > "$O/grid-bf16-nope.txt" 2>&1; echo "grid rc $?"
tail -25 "$O/grid-bf16-nope.txt"
echo "$(el) done"
