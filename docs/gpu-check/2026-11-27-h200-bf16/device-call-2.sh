#!/usr/bin/env bash
# second call: the step tests with poisoned activations; initcheck on the bf16 step, the reads it flags counted by kernel
set -u -o pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"; S=$(date +%s)
make -j16 test/test_gpu > "$O/build.log" 2>&1 || { tail -30 "$O/build.log"; exit 1; }
echo "[$(( $(date +%s) - S )) s] built"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
( timeout 150 "$SAN" --tool initcheck ./test/test_gpu training_step_matches_cpu_in_bf16 > /tmp/init_bf16.log 2>&1; echo "exit $?" >> /tmp/init_bf16.log ) &
./test/test_gpu training_step > "$O/steps.log" 2>&1; grep -vE ":PASS$" "$O/steps.log" | tail -5
./test/test_gpu bf16 > "$O/bf16.log" 2>&1; tail -2 "$O/bf16.log" | tr '\n' ' '; echo
wait
echo "[$(( $(date +%s) - S )) s] initcheck: $(tail -1 /tmp/init_bf16.log) $(grep -E 'ERROR SUMMARY' /tmp/init_bf16.log) $(grep -c 'Uninitialized' /tmp/init_bf16.log) reports; $(grep -cE ':PASS' /tmp/init_bf16.log) passed"
grep -A1 "Uninitialized" /tmp/init_bf16.log | grep "  at " | sed 's/(.*//; s/+0x.*//' | sort | uniq -c | head
grep -B2 -A12 "Uninitialized" /tmp/init_bf16.log | head -40 > "$O/init_first.log"
head -c 2000000 /tmp/init_bf16.log > "$O/init_bf16.log"
