#!/usr/bin/env bash
# Device call 3 (2026-11-28): bf16 twins kept alone (no fp32 copies of what only products read):
# build; test_gpu; a short bf16 training; the bench rows alone on the GPU; then compute-sanitizer
# over the changed kernels' tests side by side with test_cli.
set -u -o pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"; S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s]"; }
make -j16 train test/test_gpu test/test_cli > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log; exit 1; }
echo "$(el) built"
./test/test_gpu > "$O/test_gpu.log" 2>&1
echo "$(el) test_gpu: $(tail -2 "$O/test_gpu.log" | tr '\n' ' ')"
grep -E ":FAIL|differ in sign" "$O/test_gpu.log" | cut -c1-600
./train --task copy --pe nope --precision bf16 --steps 3000 --out /tmp/run-bf16 --force > "$O/train.log" 2>&1
echo "train bf16 (rc $?): $(grep -E 'checkpoint of|mean' "$O/train.log" | tr '\n' ' ')"
printf "%-6s %-5s %-7s %10s %12s %12s %8s\n" pe prec shape ms/step "tok/s real" "tok/s padded" MFU
for p in tf32 bf16; do for pe in nope t5; do for shape in copy 64x256; do
  [ $p = tf32 ] && [ $pe = t5 ] && continue
  flags="--task copy"; [ $shape = 64x256 ] && flags="--bench-seq 256"
  out=$(./train --bench --model paper --pe $pe --precision $p $flags 2>&1) || { echo "$pe $p $shape failed: $(echo "$out" | tail -1)"; continue; }
  echo "$out" >> "$O/bench.log"
  printf "%-6s %-5s %-7s %10s %12s %12s %8s\n" $pe $p $shape "$(echo "$out" | awk '/ms\/step/ {print $1}')" \
    "$(echo "$out" | awk '/real tokens/ {print $1}')" "$(echo "$out" | awk '/padding included/ {print $1}')" "$(echo "$out" | awk '/MFU/ {print $1}')"
done; done; done
echo "$(el) benched"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
san() {  # LOG TOOL FILTER...: each filter's tests under the tool, one after another
    local log=$1 tool=$2; shift 2
    for f in "$@"; do
        timeout 100 "$SAN" --tool $tool --error-exitcode 9 ./test/test_gpu $f >> /tmp/$log.log 2>&1; echo "$f: exit $?" >> /tmp/$log.log
    done
}
san memcheck memcheck matches_cpu &
san initcheck initcheck embedding rmsnorm dropout_relu crossentropy attention_matches_cpu_in_bf16 adamw &
san racecheck racecheck embedding attention_matches_cpu_in_bf16 &
san synccheck synccheck embedding dropout_relu &
timeout 150 ./test/test_cli > "$O/test_cli.log" 2>&1; echo "exit $?" >> "$O/test_cli.log"
echo "$(el) test_cli: $(tail -3 "$O/test_cli.log" | tr '\n' ' ')"
grep -E ":FAIL" "$O/test_cli.log" | cut -c1-400
wait
for t in memcheck initcheck racecheck synccheck; do
    echo "$t: $(grep -E ': exit' /tmp/$t.log | tr '\n' ' ') | $(grep -E '(ERROR|RACECHECK) SUMMARY' /tmp/$t.log | tr '\n' ' ') | $(grep -cE ':PASS' /tmp/$t.log) passed"
    grep -vE "^test/test_gpu.cu:[0-9]+:test_.*:PASS$" /tmp/$t.log | head -c 400000 > "$O/$t.log"
done
echo "$(el) done"
