#!/usr/bin/env bash
# Where a training step's GPU time goes: Nsight Compute (ncu) times each kernel of the last step
# of ./train --bench (the part the bench marks for profilers), and this prints the time per
# kernel, summed by name, largest first, with its share of the step.
#   bash dev/gpu_profile.sh OUT.csv [./train --bench flags]   (default: --model paper --bench-seq 256 --precision tf32)
# ncu runs the kernels one at a time, with the clocks left alone (--clock-control none) and the
# caches not flushed (--cache-control none), so the sum is near the bench's ms/step, not equal to it.
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -eu -o pipefail
[ $# -ge 1 ] || { echo "usage: bash dev/gpu_profile.sh OUT.csv [./train --bench flags]" >&2; exit 1; }
out=$(realpath -m "$1")  # from the caller's directory, before the cd below
shift
cd "$(dirname "$0")/.."
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(--model paper --bench-seq 256 --precision tf32)
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi -L > /dev/null 2>&1 || { echo "gpu_profile.sh: no CUDA GPU here (nvidia-smi -L fails)" >&2; exit 1; }
[ -x "$ncu" ] || { echo "gpu_profile.sh: no Nsight Compute (ncu) on the PATH or in /usr/local/cuda/bin" >&2; exit 1; }
make -s train
"$ncu" --profile-from-start off --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
    ./train --bench "${flags[@]}" > "$out.raw" 2> "$out.err" || { tail -n 5 -- "$out.err"; exit 1; }
grep '^"' "$out.raw" > "$out"  # ncu's rows; the bench's own lines are the rest
grep -E "ms/step" "$out.raw" || true
python3 - "$out" <<'PY'
import csv, sys
scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0, "s": 1e3, "second": 1e3}  # to ms
total, by_name, count = 0.0, {}, {}
for row in csv.DictReader(open(sys.argv[1])):
    if row["Metric Name"] != "gpu__time_duration.sum":
        continue
    name = row["Kernel Name"].split("(")[0].split("<")[0]
    ms = float(row["Metric Value"].replace(",", "")) * scale[row["Metric Unit"]]
    by_name[name] = by_name.get(name, 0) + ms
    count[name] = count.get(name, 0) + 1
    total += ms
print(f"{'kernel':<48} {'launches':>8} {'ms':>9} {'share':>6}")
for name, ms in sorted(by_name.items(), key=lambda kv: -kv[1]):
    print(f"{name[:48]:<48} {count[name]:>8} {ms:>9.3f} {100 * ms / total:>5.1f}%")
print(f"{'all kernels of the step':<48} {sum(count.values()):>8} {total:>9.3f}")
PY
