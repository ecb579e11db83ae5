#!/usr/bin/env bash
# On a machine with a CUDA GPU: build, run the GPU tests and the command-line tests (which then
# train on the GPU), check and time the attention kernels of dev/cuda, and benchmark the paper
# model with every PE in fp32 and tf32, on copy's batches and on 64 x 256 random tokens. Logs go
# to DIR (default /tmp/gpu_check); the benchmark table is printed at the end.
#   bash dev/gpu_check.sh [DIR]
set -u -o pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/gpu_check}
mkdir -p "$dir"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$dir/gpu.txt"
make -j8 train test/test_gpu test/test_cli dev/cuda/attention_forward dev/cuda/attention_backward > "$dir/build.log" 2>&1 \
    || { tail -30 "$dir/build.log"; exit 1; }

for test in test_gpu test_cli; do
    ./test/$test > "$dir/$test.log" 2>&1
    echo "$test: $(tail -2 "$dir/$test.log" | tr '\n' ' ')"
    grep -E ":FAIL" "$dir/$test.log" | cut -c1-300
done

for version in 1 2; do
    for pe in nope alibi t5; do
        for program in attention_forward attention_backward; do
            echo "== $program $version $pe"
            ./dev/cuda/$program $version $pe 64 256
        done
    done
done > "$dir/kernels.log" 2>&1
grep -E "^==|MISMATCH|TFLOP|error" "$dir/kernels.log"

# one row of the table: PE, precision, shape name, then ./train flags
row() {
    local out
    out=$(./train --bench --model paper --pe "$1" --precision "$2" "${@:4}" 2>&1) || { echo "$1 $2 $3 failed: $(echo "$out" | tail -1)"; return; }
    echo "$out" >> "$dir/bench.log"
    printf "%-6s %-5s %-8s %10s %12s %12s %8s\n" "$1" "$2" "$3" "$(echo "$out" | awk '/ms\/step/ {print $1}')" \
        "$(echo "$out" | awk '/real tokens/ {print $1}')" "$(echo "$out" | awk '/padding included/ {print $1}')" \
        "$(echo "$out" | awk '/MFU/ {print $1}')"
}
echo
printf "%-6s %-5s %-8s %10s %12s %12s %8s\n" pe prec shape ms/step "tok/s real" "tok/s padded" MFU
for precision in fp32 tf32; do
    for pe in nope ape t5 alibi rope; do
        row $pe $precision copy --task copy
        row $pe $precision 64x256 --bench-seq 256
    done
done
