#!/usr/bin/env bash
# Device call 1 (2026-11-28): build; test_gpu; test_cli in the background; the bf16 step profiled
# kernel by kernel (copy and 64x256); the bench baseline rows.
set -u -o pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"; S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s]"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
make -j16 train test/test_gpu test/test_cli > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log; exit 1; }
echo "$(el) built"
./test/test_gpu > "$O/test_gpu.log" 2>&1
echo "$(el) test_gpu: $(tail -2 "$O/test_gpu.log" | tr '\n' ' ')"
grep -E ":FAIL|differ in sign" "$O/test_gpu.log" | cut -c1-600
( timeout 250 ./test/test_cli > "$O/test_cli.log" 2>&1; echo "exit $?" >> "$O/test_cli.log" ) &
for shape in copy 256; do
  flags="--task copy"; [ $shape = 256 ] && flags="--bench-seq 256"
  bash dev/gpu_profile.sh /tmp/prof-$shape.csv --model paper --precision bf16 $flags > "$O/profile-bf16-$shape.txt" 2>&1
  echo "$(el) profile $shape"; head -30 "$O/profile-bf16-$shape.txt"
  gzip -c /tmp/prof-$shape.csv > "$O/profile-bf16-$shape.csv.gz"
done
printf "%-6s %-5s %-7s %10s %12s %12s %8s\n" pe prec shape ms/step "tok/s real" "tok/s padded" MFU
for p in tf32 bf16; do for pe in nope t5; do for shape in copy 64x256; do
  flags="--task copy"; [ $shape = 64x256 ] && flags="--bench-seq 256"
  out=$(./train --bench --model paper --pe $pe --precision $p $flags 2>&1) || { echo "$pe $p $shape failed: $(echo "$out" | tail -1)"; continue; }
  echo "$out" >> "$O/bench.log"
  printf "%-6s %-5s %-7s %10s %12s %12s %8s\n" $pe $p $shape "$(echo "$out" | awk '/ms\/step/ {print $1}')" \
    "$(echo "$out" | awk '/real tokens/ {print $1}')" "$(echo "$out" | awk '/padding included/ {print $1}')" "$(echo "$out" | awk '/MFU/ {print $1}')"
done; done; done
wait
echo "$(el) test_cli: $(tail -3 "$O/test_cli.log" | tr '\n' ' ')"
grep -E ":FAIL" "$O/test_cli.log" | cut -c1-400
echo "$(el) done"
