#!/usr/bin/env bash
# One device call (session of 2026-11-27): build; test_gpu (bf16 included); compute-sanitizer's four
# tools over test_gpu in the background while test_cli runs; short tf32/bf16 training runs; bench rows.
set -u -o pipefail
O=${OUT:-/tmp/out}
mkdir -p "$O"
S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s]"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader
make -j16 train test/test_gpu test/test_cli dev/cuda/attention_forward dev/cuda/attention_backward > "$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
echo "$(el) built"
./test/test_gpu > "$O/test_gpu.log" 2>&1
echo "$(el) test_gpu: $(tail -2 "$O/test_gpu.log" | tr '\n' ' ')"
grep -E ":FAIL|differ in sign" "$O/test_gpu.log" | cut -c1-600
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
mkdir -p /tmp/san
for tool in memcheck initcheck racecheck synccheck; do
    extra=""; [ $tool = memcheck ] && extra="--leak-check full"
    ( timeout "${SAN_SECONDS:-180}" "$SAN" --tool $tool $extra --error-exitcode 9 ./test/test_gpu > /tmp/san/$tool.log 2>&1; echo "exit $?" >> /tmp/san/$tool.log ) &
done
./test/test_cli > "$O/test_cli.log" 2>&1
echo "$(el) test_cli: $(tail -2 "$O/test_cli.log" | tr '\n' ' ')"
grep -E ":FAIL" "$O/test_cli.log" | cut -c1-400
wait
for tool in memcheck initcheck racecheck synccheck; do
    echo "== $tool" >> "$O/sanitizers.log"; grep -vE "^test/test_gpu.cu:[0-9]+:test_.*:PASS$" /tmp/san/$tool.log | tail -60 >> "$O/sanitizers.log"
    echo "$tool: $(tail -1 /tmp/san/$tool.log), $(grep -E '(ERROR|RACECHECK) SUMMARY' /tmp/san/$tool.log | tail -1), $(grep -cE ':PASS' /tmp/san/$tool.log) passed, $(grep -E '^[0-9]+ Tests' /tmp/san/$tool.log)"
done
echo "$(el) sanitizers done"
# the tiny copy model trained briefly in tf32 and in bf16, same seed: both must learn
for p in tf32 bf16; do
    ./train --task copy --pe nope --precision $p --steps 3000 --out /tmp/run-$p --force > /tmp/run-$p.log 2>&1
    echo "== train $p (rc $?)" >> "$O/train.log"; cat /tmp/run-$p.log >> "$O/train.log"
    echo "train $p: $(grep -E 'device:' /tmp/run-$p.log | head -1 | cut -c1-90) | $(tail -4 /tmp/run-$p.log | tr '\n' ' ' | cut -c1-300)"
done
echo "$(el) training done"
printf "%-6s %-5s %-7s %10s %12s %12s %8s\n" pe prec shape ms/step "tok/s real" "tok/s padded" MFU
for p in tf32 bf16; do
    for pe in nope t5; do
        for shape in copy 64x256; do
            flags="--task copy"; [ $shape = 64x256 ] && flags="--bench-seq 256"
            out=$(./train --bench --model paper --pe $pe --precision $p $flags 2>&1) || { echo "$pe $p $shape failed: $(echo "$out" | tail -1)"; continue; }
            echo "$out" >> "$O/bench.log"
            printf "%-6s %-5s %-7s %10s %12s %12s %8s\n" $pe $p $shape "$(echo "$out" | awk '/ms\/step/ {print $1}')" \
                "$(echo "$out" | awk '/real tokens/ {print $1}')" "$(echo "$out" | awk '/padding included/ {print $1}')" "$(echo "$out" | awk '/MFU/ {print $1}')"
        done
    done
done
echo "$(el) done"
