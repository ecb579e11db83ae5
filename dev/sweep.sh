#!/usr/bin/env bash
# dev/sweep.sh: a grid of ./train runs (tasks x PEs x seeds x any varied flag) into one tree,
# run here several at a time or on a Slurm cluster as one job array, then reported by dev/report.
#
#   dev/sweep.sh NAME [options] [-- flags for every run]
#
#   --tasks LIST        comma-separated tasks (default: copy)
#   --pes LIST          positional encodings (default: nope,ape,t5,alibi,rope)
#   --seeds LIST        model seeds (default: the paper's 256788,234054,146317)
#   --vary FLAG LIST    one more axis of the grid, e.g. --vary --dropout 0,0.1 (repeatable)
#   --jobs K            runs side by side (default 1); on Slurm, array tasks at once (default: no limit)
#   --threads N         CPU threads per run (default: the cores divided among the K runs; 2 with --slurm)
#   --device D          auto (default), cpu or gpu: passed to every run, resumed ones too
#   --slurm             write NAME/sweep.sbatch (one array task per run) and submit it with sbatch,
#                       then a job that writes the report when the array is done; the compute nodes
#                       need flock (util-linux), as here
#   --sbatch "OPTIONS"  more #SBATCH lines' options for --slurm, e.g. "--partition=gpu --time=2:00:00"
#   --dry-run           with --slurm: write NAME/runs.tsv and NAME/sweep.sbatch, print the script
#                       and the sbatch commands, submit nothing
#   --no-report         skip dev/report at the end
#
# NAME is a directory under the repository's sweeps/ (or a path from where the script was called,
# if it has a slash). Each run writes
# NAME/TASK-PE-sSEED[-FLAGVALUE...]/ and logs to NAME/logs/; NAME/runs.tsv lists the grid, one
# run per line (its name, then its ./train flags), and is what --slurm's array tasks read.
#
# Re-running the same command skips runs that finished (results.json), resumes runs that were
# interrupted after a checkpoint (state.bin: --resume continues bit for bit, given again the
# flags no checkpoint keeps: RESUME_FLAGS below) and starts the rest
# afresh. Before any run starts, each new one is checked (./train --check): flags or data that
# a run would refuse stop the sweep with one line. A run that fails later (diverges, say) is
# reported at the end and does not stop the others. Every run holds a lock
# (NAME/logs/RUN.lock, with flock) while it runs: a second sweep on the same tree, or a Slurm
# array submitted again, skips the runs another process is running, and says so. Killing the
# sweep (kill, Ctrl-C) stops its runs too (exit status 143 or 130); run it again to resume them.
#
# Several runs on one CPU must divide its cores: OpenMP threads that outnumber the cores spin
# against each other (three 2-thread runs on 2 cores each ran 11x slower than one alone), so
# K x --threads may not exceed the cores, and each run's log is checked for its thread count
# (a run that used another count is finished, with a warning: its results do not depend on it).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -u -o pipefail
caller=$PWD  # a NAME with a slash is a path from here
cd "$(dirname "$0")/.."
repo=$(pwd)

die() { echo "sweep.sh: $*" >&2; exit 1; }
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # the cores, not OpenMP's settings (nproc reads both)

# ---------------------------------------------------------------------------------------------
# The flags of a run's line that no checkpoint keeps and --resume reads all the same (the
# samples it prints at the end, the precision, the attention's algorithm and the GPU's CUDA
# graphs): a resumed run is given them again, or it would compute otherwise than it started.
# test_sweep checks the list against flags.h.
RESUME_FLAGS=(--sample --precision --attention --cuda-graphs)

# the RESUME_FLAGS among a run's flags ARGS, each with its value, one word a line
resume_flags() {  # ARGS...
    while [ $# -gt 0 ]; do
        if [[ " ${RESUME_FLAGS[*]} " == *" $1 "* ]]; then
            printf '%s\n%s\n' "$1" "$2"
            shift
        fi
        shift
    done
}

# one run of the grid: line INDEX (0-based) of ROOT/runs.tsv; what local workers and Slurm array
# tasks both execute. Prints "finished", "skipped" (finished before), "skipped: ..." (another
# process is running it), "finished: ..." (with a warning) or "failed" last.

run_one() {  # ROOT INDEX THREADS DEVICE
    local root=$1 index=$2 threads=$3 device=$4
    local line name args dir log lock
    line=$(sed -n "$((index + 1))p" "$root/runs.tsv")
    [ -n "$line" ] || die "$root/runs.tsv has no run $index"
    name=${line%%$'\t'*}
    args=${line#*$'\t'}
    dir=$root/$name
    log=$root/logs/$name.log
    local where=(--threads "$threads" --device "$device")
    # Held until this process and its ./train end (fd 9 is theirs, and the kernel drops the lock
    # of a killed one): two processes running one run would write one directory at once.
    lock=$root/logs/$name.lock
    exec 9> "$lock" || die "can not open $lock"
    flock -n 9
    case $? in
        0) ;;
        1) echo "skipped: another process is running it (it holds $lock)"; return 0 ;;
        127) echo "failed: flock (util-linux) is not on this node's PATH"; return 1 ;;
        *) echo "failed: flock could not lock $lock"; return 1 ;;
    esac
    if [ -f "$dir/results.json" ]; then
        echo skipped
        return 0
    fi
    if [ -f "$dir/state.bin" ]; then
        local again
        # shellcheck disable=SC2086  # the flags are words by construction (no spaces in values)
        mapfile -t again < <(resume_flags $args)
        echo "== $(date '+%F %T') resumed: ./train --resume $dir ${again[*]} ${where[*]}" >> "$log"
        ./train --resume "$dir" "${again[@]}" "${where[@]}" >> "$log" 2>&1
    else
        rm -rf "$dir"  # killed before its first checkpoint: nothing in it to keep
        echo "== $(date '+%F %T') ./train $args --out $dir ${where[*]}" > "$log"
        # shellcheck disable=SC2086  # the flags are words by construction (no spaces in values)
        ./train $args --out "$dir" "${where[@]}" >> "$log" 2>&1
    fi
    local status=$?
    if [ $status -ne 0 ] || [ ! -f "$dir/results.json" ]; then
        echo failed
        return 1
    fi
    local device_line  # this attempt's: a resumed run's log holds its earlier attempts' too
    device_line=$(grep '^device:' "$log" | tail -n 1)
    # A run computes the same bits on any number of threads, so its results stand and it is
    # finished (the next sweep skips it); what the wrong count cost is speed, its own and that of
    # the runs beside it, which the sweep warns of.
    if [[ $device_line == "device: CPU"* && $device_line != "device: CPU, $threads threads"* ]]; then
        echo "finished: but it did not use $threads threads ($device_line)"
        return 0
    fi
    echo finished
}

if [ "${1:-}" = "--run-one" ]; then  # internal: dev/sweep.sh --run-one ROOT INDEX THREADS DEVICE
    shift
    run_one "$@"
    exit $?
fi

# ---------------------------------------------------------------------------------------------
# the command line

[ $# -ge 1 ] && [ "${1#-}" = "$1" ] || die "usage: dev/sweep.sh NAME [options] [-- flags for every run] (see the top of dev/sweep.sh)"
name=$1
shift
case $name in /*) root=$name ;; */*) root=$caller/$name ;; *) root=sweeps/$name ;; esac
tasks=copy pes=nope,ape,t5,alibi,rope seeds=256788,234054,146317
jobs=1 jobs_given=0 threads="" device=auto slurm=0 sbatch_options="" dry_run=0 report=1
vary_flags=() vary_values=() extra=()
while [ $# -gt 0 ]; do
    case $1 in
        --tasks | --pes | --seeds | --jobs | --threads | --device | --sbatch)
            [ $# -ge 2 ] || die "$1 needs a value"
            case $1 in
                --tasks) tasks=$2 ;; --pes) pes=$2 ;; --seeds) seeds=$2 ;; --jobs) jobs=$2 jobs_given=1 ;;
                --threads) threads=$2 ;; --device) device=$2 ;; --sbatch) sbatch_options=$2 ;;
            esac
            shift 2 ;;
        --vary)
            [ $# -ge 3 ] && [ "${2#--}" != "$2" ] || die "--vary needs a flag and a list of values, e.g. --vary --dropout 0,0.1"
            vary_flags+=("$2") vary_values+=("$3")
            shift 3 ;;
        --slurm) slurm=1; shift ;;
        --dry-run) dry_run=1; shift ;;
        --no-report) report=0; shift ;;
        --) shift; extra=("$@"); break ;;
        *) die "unknown option '$1' (flags for ./train go after --)" ;;
    esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs expects a positive integer, got '$jobs'"
[ -z "$threads" ] || [[ $threads =~ ^[1-9][0-9]*$ ]] || die "--threads expects a positive integer, got '$threads'"
case $device in auto | cpu | gpu) ;; *) die "unknown device '$device' (valid: auto cpu gpu)" ;; esac
[ $dry_run -eq 0 ] || [ $slurm -eq 1 ] || die "--dry-run goes with --slurm"
for flag in "${extra[@]}"; do
    case $flag in
        --task | --pe | --seed | --out | --resume | --load | --threads | --device | --check) die "$flag is set by the sweep; use its own options" ;;
        *" "*) die "'$flag': a flag value with spaces can not be passed through a sweep" ;;
    esac
done
# An axis's list: an empty item (a stray comma) would be a run of no task, PE or seed, and an item
# given twice the same run twice, run at once into one directory.
check_list() {  # OPTION LIST
    local item items seen=,
    [[ -n $2 && $2 != ,* && $2 != *, && $2 != *,,* ]] || die "$1 '$2' has an empty item: give comma-separated values, none empty"
    IFS=, read -ra items <<< "$2"
    for item in "${items[@]}"; do
        [[ $seen != *",$item,"* ]] || die "$1 '$2' lists '$item' twice: it would be the same run twice"
        seen+=$item,
    done
}
check_list --tasks "$tasks"
check_list --pes "$pes"
check_list --seeds "$seeds"
for k in "${!vary_flags[@]}"; do check_list "--vary ${vary_flags[$k]}" "${vary_values[$k]}"; done
if [ $slurm -eq 0 ]; then  # (a Slurm sweep's runs lock on the compute nodes, and scancel stops them)
    command -v flock > /dev/null || die "flock (util-linux) is not on the PATH: every run takes a lock with it"
    command -v pkill > /dev/null || die "pkill (procps) is not on the PATH: a sweep that is killed stops its runs with it"
fi

# ---------------------------------------------------------------------------------------------
# the grid: runs.tsv, one line per run: NAME<TAB>FLAGS

# every combination of the varied flags, as lines "SUFFIX<TAB>FLAGS" (one empty line: none)
combinations() {
    local lines=$'\t' k value out
    for k in "${!vary_flags[@]}"; do
        out=""
        while IFS= read -r line; do
            IFS=, read -ra values <<< "${vary_values[$k]}"
            for value in "${values[@]}"; do
                out+="${line%%$'\t'*}-${vary_flags[$k]#--}$value"$'\t'"${line#*$'\t'} ${vary_flags[$k]} $value"$'\n'
            done
        done <<< "${lines%$'\n'}"
        lines=$out
    done
    printf '%s\n' "${lines%$'\n'}"
}

write_grid() {
    local task pe seed suffix flags
    IFS=, read -ra task_list <<< "$tasks"
    IFS=, read -ra pe_list <<< "$pes"
    IFS=, read -ra seed_list <<< "$seeds"
    for task in "${task_list[@]}"; do
        for pe in "${pe_list[@]}"; do
            for seed in "${seed_list[@]}"; do
                while IFS=$'\t' read -r suffix flags; do
                    printf '%s\t%s\n' "$task-$pe-s$seed$suffix" "--task $task --pe $pe --seed $seed$flags ${extra[*]}"
                done < <(combinations)
            done
        done
    done
}

# Every run that would start afresh (neither finished nor interrupted) is first checked by
# ./train --check, as many at a time as there are cores: flags or data that a run would refuse
# stop the sweep with one line, before any run starts or runs.tsv records a run that can not.
# It runs in a subshell, whose jobs the checks are: the runs' loop below, waiting with `wait -n`
# for its runs, must never be told of a check (as it once was, when they shared this shell).
check_new_runs() (
    local checks count=0 running=0 name args why k
    checks=$(mktemp -d) || die "can not make a temporary directory"
    while IFS=$'\t' read -r name args; do
        [ -n "$name" ] || continue  # (a grid of no runs is one empty line)
        if [ -f "$root/$name/results.json" ] || [ -f "$root/$name/state.bin" ]; then continue; fi
        # --out names a directory that is never made (a check writes nothing) and holds no
        # earlier run (the partial one a killed run may leave is removed before it starts again)
        # shellcheck disable=SC2086
        { ./train $args --out "$checks/$name" --check --threads 1 --device "$device" > /dev/null 2> "$checks/$count.err" ||
            echo "$name" > "$checks/$count.failed"; } &
        count=$((count + 1)) running=$((running + 1))
        if [ $running -ge "$cores" ]; then wait -n; running=$((running - 1)); fi
    done <<< "$grid"
    wait
    for ((k = 0; k < count; k++)); do
        [ -f "$checks/$k.failed" ] || continue
        name=$(cat "$checks/$k.failed") why=$(head -n 1 "$checks/$k.err")
        why=${why:-./train --check failed and said nothing}
        rm -rf "$checks"
        die "$name can not start: ${why#train: error: }"
    done
    rm -rf "$checks"
)

[ -x ./train ] || die "./train is not built: run make first"
grid=$(write_grid)  # for the checks, then runs.tsv
check_new_runs || exit 1
mkdir -p "$root/logs" || die "can not create $root"
# A sweep grows: runs new to runs.tsv are appended (lines never move, so a Slurm array that is
# still running reads the same runs), and this command runs its own grid's lines.
touch "$root/runs.tsv"
indices=()
while IFS= read -r line; do
    [ -n "$line" ] || continue
    index=$(grep -nxF -- "$line" "$root/runs.tsv" | head -n 1 | cut -d: -f1)
    if [ -z "$index" ]; then
        awk -F '\t' -v run="${line%%$'\t'*}" '$1 == run { found = 1 } END { exit !found }' "$root/runs.tsv" &&
            die "$root already has a run ${line%%$'\t'*} with other flags: choose another sweep name"
        printf '%s\n' "$line" >> "$root/runs.tsv"
        index=$(wc -l < "$root/runs.tsv")
    fi
    indices+=($((index - 1)))
done <<< "$grid"
total=${#indices[@]}

if [ -z "$threads" ]; then  # a cluster node's cores are not this machine's: ask for two there
    if [ $slurm -eq 1 ]; then threads=2; else threads=$(( cores / jobs > 0 ? cores / jobs : 1 )); fi
fi
uses_cpu() { [ "$device" = cpu ] || { [ "$device" = auto ] && ! nvidia-smi -L > /dev/null 2>&1; }; }

# ---------------------------------------------------------------------------------------------
# on a Slurm cluster: one array task per run, then the report

slurm_script() {
    local resources="#SBATCH --cpus-per-task=$threads"
    [ "$device" = gpu ] && resources+=$'\n#SBATCH --gres=gpu:1'
    local throttle=""  # --jobs 1 too: one array task at a time
    [ $jobs_given -eq 1 ] && throttle="%$jobs"
    cat <<SCRIPT
#!/usr/bin/env bash
#SBATCH --job-name=sweep-$(basename "$root")
#SBATCH --array=$(IFS=,; echo "${indices[*]}")$throttle
$resources
#SBATCH --output=$abs_root/logs/slurm-%a.out
${sbatch_options:+#SBATCH $sbatch_options}
# one run of $abs_root/runs.tsv per array task: skipped if finished, resumed if interrupted
cd $(printf %q "$repo") && exec dev/sweep.sh --run-one $(printf %q "$abs_root") "\$SLURM_ARRAY_TASK_ID" "\${SLURM_CPUS_PER_TASK:-$threads}" $device
SCRIPT
}

if [ $slurm -eq 1 ]; then
    abs_root=$(cd "$root" && pwd)  # array tasks start elsewhere: every path absolute
    case "$repo $abs_root" in *" "*" "* | *$'\t'*) die "--slurm: #SBATCH lines can not hold the spaces in '$repo' or '$abs_root'" ;; esac
    slurm_script > "$root/sweep.sbatch"
    # its arguments as words, never read by a shell here (a path may hold any character);
    # --wrap's command is read by one on the node, so its paths are quoted for it
    report_job=(sbatch --parsable "--job-name=report-$(basename "$root")" --dependency=afterany:ARRAY_JOB
        "--output=$abs_root/logs/report.out" --wrap "cd $(printf %q "$repo") && dev/report $(printf %q "$abs_root")")
    if [ $dry_run -eq 1 ]; then
        cat "$root/sweep.sbatch"
        echo
        echo "sbatch --parsable $root/sweep.sbatch"
        if [ $report -eq 1 ]; then
            quoted=$(printf ' %q' "${report_job[@]}")
            echo "${quoted# }"
        fi
        exit 0
    fi
    command -v sbatch > /dev/null || die "--slurm: sbatch is not on the PATH"
    array_job=$(sbatch --parsable "$root/sweep.sbatch") || die "sbatch refused $root/sweep.sbatch"
    array_job=${array_job%%;*}  # --parsable prints JOBID;CLUSTER on a federation of clusters
    echo "submitted job array $array_job: $total runs of $root/runs.tsv (logs in $root/logs/)"
    if [ $report -eq 1 ]; then
        report_id=$("${report_job[@]/ARRAY_JOB/$array_job}") || die "sbatch refused the report job"
        echo "submitted job ${report_id%%;*}: dev/report $root once the array is done"
    fi
    exit 0
fi

# ---------------------------------------------------------------------------------------------
# here: K runs side by side, one progress line per finished run

if uses_cpu && [ $((jobs * threads)) -gt "$cores" ]; then
    die "--jobs $jobs x --threads $threads would run $((jobs * threads)) threads on $cores cores: OpenMP threads that outnumber the cores spin against each other and every run slows down manyfold"
fi

clock() { printf '%d:%02d:%02d' $(($1 / 3600)) $(($1 / 60 % 60)) $(($1 % 60)); }
start=$SECONDS
done_count=0 ran=0 failed=() elsewhere=() warned=()
declare -A run_of_pid=() started_at=()
# each run's last line ("finished", "skipped", ...), in this sweep's own directory: a second sweep
# on the same tree has runs of the same index, whose lines must not meet these
status_dir=$(mktemp -d "$root/logs/.status.XXXXXX") || die "can not make a directory in $root/logs"

# Killed (kill, Ctrl-C), the sweep stops its runs: a script's background jobs ignore Ctrl-C, and
# a run left going would train on with no one to count it. Each run's ./train first, then the
# subshell around it (killed first, it would leave its ./train to run on; left, it could start
# one after this). The sweep exits once each ./train has: it saves its state.bin first.
stop() {  # EXIT_STATUS
    trap - TERM INT
    local pid trains=()
    for pid in "${!run_of_pid[@]}"; do
        mapfile -t -O ${#trains[@]} trains < <(pgrep -P "$pid")
        pkill -TERM -P "$pid"
        kill -TERM "$pid"
    done 2> /dev/null
    wait
    for pid in "${trains[@]}"; do
        while kill -0 "$pid" 2> /dev/null; do sleep 0.1; done
    done
    rm -rf "$status_dir"
    echo "sweep $root: stopped; run it again to resume its runs" >&2
    exit "$1"
}
trap 'stop 143' TERM
trap 'stop 130' INT

# one line for a finished run: what it gave and the whole sweep's ETA from the runs done so far
finished() {  # INDEX STATUS OUTPUT
    local run result test eta=""
    run=$(sed -n "$(($1 + 1))p" "$root/runs.tsv" | cut -f1)
    done_count=$((done_count + 1))
    case $3 in
        skipped) result="already finished" ;;
        skipped:*)
            elsewhere+=("$run")
            result=$3 ;;
        finished*)
            ran=$((ran + 1))
            test=$(grep -o '"test": {"accuracy": [0-9.e-]*' "$root/$run/results.json" | awk '{printf "%.3f", $NF}')
            result="finished in $(clock $((SECONDS - started_at[$1]))), test accuracy $test"
            if [ "$3" != finished ]; then
                warned+=("$run")
                result+=", ${3#finished: }"
            fi ;;
        *)
            ran=$((ran + 1))
            failed+=("$run")
            result="FAILED${3#failed}: $(tail -n 1 "$root/logs/$run.log")" ;;
    esac
    [ $ran -gt 0 ] && eta=", $(clock $(( (SECONDS - start) * (total - done_count) / ran ))) left"
    printf '[%d/%d] %s: %s | %s elapsed%s\n' "$done_count" "$total" "$run" "$result" "$(clock $((SECONDS - start)))" "$eta"
}

wait_for_one() {
    local pid status
    wait -n -p pid
    status=$?
    local index=${run_of_pid[$pid]}
    finished "$index" $status "$(tail -n 1 "$status_dir/$index")"
    rm -f "$status_dir/$index"
    unset "run_of_pid[$pid]"
}

echo "sweep $root: $total runs, $jobs at a time, $threads threads each, device $device"
for index in "${indices[@]}"; do
    while [ ${#run_of_pid[@]} -ge "$jobs" ]; do wait_for_one; done
    started_at[$index]=$SECONDS
    run_one "$root" $index "$threads" "$device" > "$status_dir/$index" &
    run_of_pid[$!]=$index
done
while [ ${#run_of_pid[@]} -gt 0 ]; do wait_for_one; done
rmdir "$status_dir"
echo "sweep $root: $((total - ${#failed[@]} - ${#elsewhere[@]})) of $total runs finished in $(clock $((SECONDS - start)))${elsewhere[*]:+; ${#elsewhere[@]} left to the processes running them}"

if [ $report -eq 1 ]; then
    if [ -x dev/report ]; then dev/report "$root" || failed+=("the report")
    else echo "dev/report is not built (make): no report"; fi
fi
if [ ${#warned[@]} -gt 0 ]; then
    echo "warning: ${warned[*]} did not use $threads threads (OMP_THREAD_LIMIT set?): their results stand, their speed and their neighbours' may not" >&2
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]} (logs in $root/logs/)" >&2
    exit 1
fi
