#!/usr/bin/env bash
# On a machine with a CUDA GPU, in parts (default: all four, in this order):
#   tests     the GPU tests and the command-line tests (which then train on the GPU)
#   sanitize  the GPU tests again under compute-sanitizer: memcheck, initcheck, racecheck, synccheck
#   kernels   check and time the attention kernels of dev/cuda
#   bench     the paper model with every PE the GPU runs (all but cope, kerple_log and kerple_power,
#             which run on the CPU only), in fp32, tf32 and bf16, with CUDA graphs on and off,
#             on copy's batches and on 64 x 256 random tokens: the table README shows; copy's
#             batches sorted by length (--sort-pool 16, and padded to multiples of 8); drawn
#             positions (--random-positions); and
#             addition with --abacus and --position-coupling beside the PE alone
#   grid      (only when named) the paper's whole grid projected in hours, from the paper model's
#             bench on each task's own batches (dev/grid_hours.sh; PES default nope and t5)
# Logs go to DIR (default /tmp/gpu_check; a relative one is from where the script is called);
# each part prints a short summary. A first argument that names a part is a part, not DIR. The
# exit status is 1 if a test program of `tests` fails.
#   bash dev/gpu_check.sh [DIR] [PART ...]
# SANITIZE_SECONDS bounds each sanitizer (default 300; racecheck alone took 126 s on an H200),
# PES, PRECISIONS and GRAPHS choose the bench's rows (default every PE the GPU runs, fp32, tf32
# and bf16, graphs on and off).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -u -o pipefail
dir=/tmp/gpu_check
case ${1:-} in
    "" | tests | sanitize | kernels | bench | grid) ;;
    *) dir=$(realpath -m "$1"); shift ;;  # from the caller's directory, before the cd below
esac
cd "$(dirname "$0")/.."
parts=${*:-tests sanitize kernels bench}
status=0
for part in $parts; do
    case $part in
        tests | sanitize | kernels | bench | grid) ;;
        *) echo "gpu_check.sh: unknown part '$part' (valid: tests sanitize kernels bench grid)" >&2; exit 1 ;;
    esac
done
nvidia-smi -L > /dev/null 2>&1 || { echo "gpu_check.sh: no CUDA GPU here (nvidia-smi -L fails): every part needs one" >&2; exit 1; }
mkdir -p "$dir"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$dir/gpu.txt"
make -j"$(nproc)" train test/test_gpu test/test_cli dev/cuda/attention_forward dev/cuda/attention_backward > "$dir/build.log" 2>&1 \
    || { tail -30 "$dir/build.log"; exit 1; }

tests() {
    for test in test_gpu test_cli; do
        ./test/$test > "$dir/$test.log" 2>&1 || status=1
        echo "$test: $(tail -2 "$dir/$test.log" | tr '\n' ' ')"
        grep -E ":FAIL" "$dir/$test.log" | cut -c1-300
    done
}

# memcheck: out-of-bounds and misaligned accesses, leaks; initcheck: reads of device memory that
# nothing wrote; racecheck: shared-memory races (the reductions and the attention tiles);
# synccheck: __syncthreads() that not every thread of a block reaches. The four run side by
# side (each is slow, and the GPU has room for all), each stopped after SANITIZE_SECONDS
# (default 300); each log ends with the tool's summary line.
sanitize() {
    local sanitizer tool
    sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    run_tool() {  # TOOL [TOOL OPTIONS] PROGRAM [ITS ARGUMENTS]
        local tool=$1
        shift
        timeout "${SANITIZE_SECONDS:-300}" "$sanitizer" --tool "$tool" --error-exitcode 9 "$@" > "$dir/$tool.log" 2>&1
        echo "exit $?" >> "$dir/$tool.log"
    }
    run_tool memcheck --leak-check full ./test/test_gpu &
    run_tool initcheck ./test/test_gpu &
    run_tool racecheck ./test/test_gpu &
    run_tool synccheck ./test/test_gpu &
    wait
    for tool in memcheck initcheck racecheck synccheck; do
        echo "compute-sanitizer $tool: $(tail -1 "$dir/$tool.log"), $(grep -E '(ERROR|RACECHECK) SUMMARY' "$dir/$tool.log" | tail -1)," \
             "$(grep -E '^[0-9]+ Tests' "$dir/$tool.log")"
    done
}

# forward versions 1-4 and backward versions 1-3 (backward's 3 differs from its 2 in the learned
# biases' gradient alone); version 1, a thread per row, with three PEs only, to spare time
kernels() {
    {
        for version in 1 2 3 4; do
            for pe in nope alibi t5 $([ $version != 1 ] && echo kerple_log fire); do
                echo "== attention_forward $version $pe"
                ./dev/cuda/attention_forward $version $pe 64 256
            done
        done
        for version in 1 2 3; do
            for pe in nope alibi t5 $([ $version != 1 ] && echo kerple_log fire); do
                echo "== attention_backward $version $pe"
                ./dev/cuda/attention_backward $version $pe 64 256
            done
        done
    } > "$dir/kernels.log" 2>&1
    grep -E "^==|MISMATCH|TFLOP|error" "$dir/kernels.log"
}

# one row of the table: PE, precision, CUDA graphs (on or off), shape name, then ./train flags
row() {
    local out
    out=$(./train --bench --model paper --pe "$1" --precision "$2" --cuda-graphs "$3" "${@:5}" 2>&1) || { echo "$1 $2 $3 $4 failed: $(echo "$out" | tail -1)"; return; }
    echo "$out" >> "$dir/bench.log"
    printf "%-12s %-5s %-6s %-11s %10s %12s %12s %8s\n" "$1" "$2" "$3" "$4" "$(echo "$out" | awk '/ms\/step/ {print $1}')" \
        "$(echo "$out" | awk '/real tokens/ {print $1}')" "$(echo "$out" | awk '/padding included/ {print $1}')" \
        "$(echo "$out" | awk '/MFU/ {print $1}')"
}

# PRECISIONS (default "fp32 tf32 bf16"), PES (default every PE the GPU runs) and GRAPHS (default
# "on off") choose the rows
bench() {
    echo
    printf "%-12s %-5s %-6s %-11s %10s %12s %12s %8s\n" pe prec graphs shape ms/step "tok/s real" "tok/s padded" MFU
    for precision in ${PRECISIONS:-fp32 tf32 bf16}; do
        for pe in ${PES:-nope ape t5 alibi rope ape_learned xpos fire}; do  # KERPLE's update: CPU only, for now
            for graphs in ${GRAPHS:-on off}; do
                row $pe $precision $graphs copy --task copy
                row $pe $precision $graphs 64x256 --bench-seq 256
            done
        done
    done
    # copy's batches sorted by length (--sort-pool 16: 4% padding instead of 40%), and those rows
    # padded to a multiple of 8 tokens (18% padding): do tensor cores repay aligned shapes?
    for pe in nope t5; do
        row $pe tf32 on copy-s16 --task copy --sort-pool 16
        row $pe tf32 on copy-s16p8 --task copy --sort-pool 16 --pad-to-multiple 8
    done
    # drawn positions: a bias plane per sequence instead of one per batch
    for pe in t5 fire; do
        row $pe tf32 on copy-r2048 --task copy --random-positions 2048
    done
    # the wrappers that place digits, on addition written units first, against the PE alone
    for pe in ape rope; do
        row $pe tf32 on add-rev --task addition --reverse-digits
        row $pe tf32 on add-abacus --task addition --reverse-digits --abacus
        row $pe tf32 on add-coupled --task addition --reverse-digits --position-coupling
    done
}

grid() {
    echo
    PES=$(tr ' ' , <<< "${PES:-nope t5}") dev/grid_hours.sh --model paper | tee "$dir/grid.log"  # its PES are comma-separated
}

for part in $parts; do
    $part
done
exit $status
