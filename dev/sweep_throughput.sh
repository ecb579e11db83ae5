#!/usr/bin/env bash
# dev/sweep_throughput.sh: how fast a sweep goes with K runs side by side, for README's table.
#
#   dev/sweep_throughput.sh [PRESET:STEPS ...]     (default: tiny:1000 small:500 paper:200)
#
# For each preset and K in $JOBS (default "1 2 4 8"), runs the same grid of $RUNS (default 8)
# copy runs (NoPE, seeds 1 to RUNS, STEPS steps, one validation) on $DEVICE (default auto) with
# `dev/sweep.sh --jobs K` from scratch, and prints the wall time and the grid's throughput:
# training steps per second summed over all runs, and runs per hour. A grid that fails is named
# and makes the exit status 1. Each run keeps its whole cost (data, model, validation, the final
# evaluation on valid and test), so the numbers are what a real sweep of such runs would see. The
# defaults are a GPU's: on a CPU, dev/sweep.sh refuses a K above the cores (runs that share
# cores spin against each other), and paper:200 takes long; on 2 cores, JOBS="1 2" tiny:1000.
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -u -o pipefail
cd "$(dirname "$0")/.."
presets=${*:-tiny:1000 small:500 paper:200}
jobs_list=${JOBS:-1 2 4 8}
runs=${RUNS:-8}
device=${DEVICE:-auto}
die() { echo "dev/sweep_throughput.sh: $*" >&2; exit 1; }
[ -x ./train ] || die "./train is not built: run make first"
# the preset names, from --help's block of them alone (its other indented lines name tasks and flags)
known=$(./train --help | sed -n '/^model presets (--model)/,/^$/s/^  \([a-z0-9_]*\) .*/\1/p')
for entry in $presets; do
    [[ $entry =~ ^[a-z]+:[1-9][0-9]*$ ]] || die "'$entry' is not PRESET:STEPS (e.g. tiny:1000)"
    grep -qxF -- "${entry%%:*}" <<< "$known" || die "'${entry%%:*}' is not a --model preset (see ./train --help)"
done
for k in $jobs_list $runs; do [[ $k =~ ^[1-9][0-9]*$ ]] || die "JOBS and RUNS take whole numbers above 0, got '$k'"; done
status=0
root=$(mktemp -d /tmp/sweep_throughput.XXXXXX)
trap 'rm -rf "$root"' EXIT

printf '%-7s %6s %3s %10s %14s %10s\n' preset steps K wall "steps/s (all)" runs/hour
for entry in $presets; do
    preset=${entry%%:*} steps=${entry#*:}
    for k in $jobs_list; do
        start=$(date +%s.%N)
        dev/sweep.sh "$root/$preset-$k" --tasks copy --pes nope --seeds "$(seq -s, 1 $runs)" --jobs "$k" --device "$device" --no-report \
            -- --model "$preset" --steps "$steps" --eval-every "$steps" > "$root/$preset-$k.log" 2>&1 \
            || { echo "$preset K=$k failed: $(tail -n 2 "$root/$preset-$k.log")"; status=1; continue; }
        awk -v p="$preset" -v s="$steps" -v k="$k" -v n=$runs -v t0="$start" -v t1="$(date +%s.%N)" \
            'BEGIN { w = t1 - t0; printf "%-7s %6d %3d %9.1fs %14.1f %10.0f\n", p, s, k, w, n * s / w, n * 3600 / w }'
    done
done
exit $status
