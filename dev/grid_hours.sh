#!/usr/bin/env bash
# dev/grid_hours.sh: how long the paper's whole grid would take on this machine, measured:
# `./train --bench` on each task's own batches with each PE, times the steps of the grid's runs.
#
#   dev/grid_hours.sh [train flags, e.g. --model paper --precision tf32]
#
# TASKS (default the paper's 17 variants), PES (default the paper's five), SEEDS (runs per
# task and PE, default 3), STEPS (a run's steps, default the paper's 40,000) and PCFG_STEPS
# (default 2.5 x STEPS, as the paper's 100,000) choose the grid. The flags go to every bench:
# --model, --precision, --sort-pool or --pack project the grid under those. Prints each task's
# ms/step per PE, the padding of its batches, its hours (every PE and seed), and the total for
# one run at a time: runs side by side (dev/sweep.sh --jobs) and the time outside the steps
# (data, validation, the final evaluation) are not in it. A bench that fails is named, and
# makes the exit status 1.
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -u -o pipefail
cd "$(dirname "$0")/.."
die() { echo "dev/grid_hours.sh: $*" >&2; exit 1; }
[ -x ./train ] || die "./train is not built: run make first"
tasks=${TASKS:-copy,copy_rsc2x,copy_rdc,copy_cmc,copy_cmc2x,reverse,reverse_mc,reverse_mcrv,addition,poly,sort,sort_multi,sum,parity,lego,scan,pcfg}
pes=${PES:-nope,ape,t5,alibi,rope}
seeds=${SEEDS:-3} steps=${STEPS:-40000}
pcfg_steps=${PCFG_STEPS:-$((steps * 5 / 2))}
for count in "$seeds" "$steps" "$pcfg_steps"; do
    [[ $count =~ ^[1-9][0-9]*$ ]] || die "SEEDS, STEPS and PCFG_STEPS take whole numbers above 0, got '$count'"
done
[[ $tasks =~ ^[a-z0-9_,]+$ && $pes =~ ^[a-z0-9_,]+$ ]] || die "TASKS and PES are comma-separated names, got '$tasks' and '$pes'"
IFS=, read -r -a task_list <<< "$tasks"
IFS=, read -r -a pe_list <<< "$pes"

echo "grid: ${#task_list[@]} tasks x ${#pe_list[@]} PEs x $seeds seeds; $steps steps a run (pcfg $pcfg_steps); one run at a time; flags: ${*:-none}"
printf '%-14s' task
printf ' %9s' "${pe_list[@]}"
printf ' %8s %9s\n' padding hours
status=0 total=0
for task in "${task_list[@]}"; do
    run_steps=$steps
    [ "$task" = pcfg ] && run_steps=$pcfg_steps
    printf '%-14s' "$task"
    ms_sum=0 padding=
    for pe in "${pe_list[@]}"; do
        out=$(./train --bench --task "$task" --pe "$pe" "$@" 2>&1) || {
            printf '\n%s %s failed: %s\n' "$task" "$pe" "$(echo "$out" | tail -n 1)"
            status=1
            continue 2
        }
        ms=$(awk '/ms\/step/ {print $1}' <<< "$out")
        [ -n "$ms" ] || {  # a flag that made ./train do something else (--help) times nothing
            printf '\n%s %s: the bench printed no ms/step: %s\n' "$task" "$pe" "$(echo "$out" | tail -n 1)"
            status=1
            continue 2
        }
        [ -n "$padding" ] || padding=$(sed -n 's/.*(\([0-9]*%\) padding).*/\1/p' <<< "$out")  # the same batches for every PE
        printf ' %9s' "$ms"
        ms_sum=$(awk -v a="$ms_sum" -v b="$ms" 'BEGIN { print a + b }')
    done
    hours=$(awk -v ms="$ms_sum" -v n="$run_steps" -v s="$seeds" 'BEGIN { printf "%.2f", ms * n * s / 3.6e6 }')
    total=$(awk -v a="$total" -v b="$hours" 'BEGIN { printf "%.2f", a + b }')
    printf ' %8s %9s\n' "$padding" "$hours"
done
printf '%-14s%*s %8s %9s\n' total $((10 * ${#pe_list[@]})) "" "" "$total"
exit $status
