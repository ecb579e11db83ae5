#!/usr/bin/env bash
# Device call 2 (2026-11-28): bf16 twins written by their producers, the residual joined by the
# dropped branch in one kernel, the embedding's table gradient by lists, clipping inside AdamW:
# build; test_gpu; two short trainings; the bench rows; the bf16 step profiled again.
set -u -o pipefail
O=${OUT:-/tmp/out}; mkdir -p "$O"; S=$(date +%s)
el() { echo "[$(( $(date +%s) - S )) s]"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
make -j16 train test/test_gpu > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log; exit 1; }
echo "$(el) built"
./test/test_gpu > "$O/test_gpu.log" 2>&1
echo "$(el) test_gpu: $(tail -2 "$O/test_gpu.log" | tr '\n' ' ')"
grep -E ":FAIL|differ in sign" "$O/test_gpu.log" | cut -c1-600
for p in tf32 bf16; do
    ./train --task copy --pe nope --precision $p --steps 3000 --out /tmp/run-$p --force > /tmp/run-$p.log 2>&1
    echo "== train $p (rc $?)" >> "$O/train.log"; cat /tmp/run-$p.log >> "$O/train.log"
    echo "train $p: $(tail -3 /tmp/run-$p.log | tr '\n' ' ' | cut -c1-250)"
done
echo "$(el) trained"
printf "%-6s %-5s %-7s %10s %12s %12s %8s\n" pe prec shape ms/step "tok/s real" "tok/s padded" MFU
for p in fp32 tf32 bf16; do for pe in nope t5; do for shape in copy 64x256; do
  [ $p = fp32 ] && [ $pe = t5 ] && continue
  flags="--task copy"; [ $shape = 64x256 ] && flags="--bench-seq 256"
  out=$(./train --bench --model paper --pe $pe --precision $p $flags 2>&1) || { echo "$pe $p $shape failed: $(echo "$out" | tail -1)"; continue; }
  echo "$out" >> "$O/bench.log"
  printf "%-6s %-5s %-7s %10s %12s %12s %8s\n" $pe $p $shape "$(echo "$out" | awk '/ms\/step/ {print $1}')" \
    "$(echo "$out" | awk '/real tokens/ {print $1}')" "$(echo "$out" | awk '/padding included/ {print $1}')" "$(echo "$out" | awk '/MFU/ {print $1}')"
done; done; done
echo "$(el) benched"
for shape in copy 256; do
  flags="--task copy"; [ $shape = 256 ] && flags="--bench-seq 256"
  bash dev/gpu_profile.sh /tmp/prof-$shape.csv --model paper --precision bf16 $flags > "$O/profile-bf16-$shape.txt" 2>&1
  echo "$(el) profile $shape"; head -24 "$O/profile-bf16-$shape.txt"; tail -1 "$O/profile-bf16-$shape.txt"
  gzip -c /tmp/prof-$shape.csv > "$O/profile-bf16-$shape.csv.gz"
done
echo "$(el) done"
