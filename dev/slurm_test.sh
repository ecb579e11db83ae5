#!/usr/bin/env bash
# dev/slurm_test.sh: tests dev/sweep.sh --slurm for real, on a private one-node Slurm cluster
# that it starts by hand and stops again.
#
#   dev/slurm_test.sh            (from any directory; needs root; ~20 s, plus ~20 s to install)
#
# 1. Slurm and munge: if slurmctld, slurmd, sbatch or munged is missing and this runs as root
#    with apt-get, installs Debian's slurm-wlm and munge (apt-get update only if the install
#    fails without it). Without them, or without root, prints "SKIPPED: <reason>" and exits 77.
# 2. A cluster in a temp dir, no systemd and nothing in /etc/slurm or /etc/munge: a fresh munge
#    key, munged on its own socket, and slurmctld + slurmd (in the foreground, in the background
#    of this script) reading a minimal slurm.conf (one node: this host with its nproc CPUs, one
#    partition, no cgroups, no accounting, ports of its own) that SLURM_CONF points the clients
#    at. Waits (60 s at most) for sinfo to show the node idle.
# 3. A 4-run CPU sweep through the real path (dev/sweep.sh DIR --slurm: a job array and a report
#    job that depends on it), waits (240 s at most) for both jobs to leave the queue and checks
#    that every run of runs.tsv wrote results.json, that every array task's log exists and says
#    "finished", and, when dev/report exists, that the report job wrote report.md naming every
#    run's task. Prints "PASSED: ..." and exits 0, or "FAILED: <what>" with the log tails and
#    exits 1.
# 4. On any exit (trap): cancels the jobs, stops the daemons and whatever they started (found
#    by a marker in their environment, killed by pid) and removes the temp dir.
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
export PATH="$PATH:/usr/sbin:/sbin"
start=$SECONDS

skip() { echo "SKIPPED: $*"; exit 77; }
tmp=""
fail() {  # WHAT [LOG FILES to show the tails of]
    echo "FAILED: $1"
    shift
    local f
    for f in "$@"; do
        [ -f "$f" ] || continue
        echo "--- tail of ${f#"$tmp"/}"
        tail -n 15 "$f"
    done
    exit 1
}

# ---------------------------------------------------------------------------------------------
# 1. Slurm and munge

tools=(slurmctld slurmd sbatch squeue sinfo scontrol scancel munged)
missing() { local t; for t in "${tools[@]}"; do command -v "$t" > /dev/null || echo "$t"; done; }
[ "$(id -u)" -eq 0 ] || skip "slurmd must run as root to start jobs (this runs as $(id -un))"
if [ -n "$(missing)" ] && command -v apt-get > /dev/null; then
    echo "installing slurm-wlm and munge (missing: $(missing | paste -sd' '))"
    apt_log=$(mktemp /tmp/slurm_test_apt.XXXXXX)
    install() {
        DEBIAN_FRONTEND=noninteractive timeout 150 apt-get install -y --no-install-recommends slurm-wlm munge >> "$apt_log" 2>&1
    }
    install || { DEBIAN_FRONTEND=noninteractive timeout 60 apt-get update >> "$apt_log" 2>&1; install; } \
        || { tail -n 5 "$apt_log"; rm -f "$apt_log"; skip "apt-get could not install slurm-wlm and munge"; }
    rm -f "$apt_log"
    echo "installed in $((SECONDS - start))s"
    start=$SECONDS
fi
[ -z "$(missing)" ] || skip "not on the PATH: $(missing | paste -sd' ') (install slurm-wlm and munge)"
[ -x ./train ] || fail "./train is not built (make)"

# ---------------------------------------------------------------------------------------------
# 2. the cluster, all of it in $tmp

tmp=$(mktemp -d /tmp/slurm_test.XXXXXX) || fail "mktemp"
chmod 755 "$tmp"  # munged wants its socket's directories searchable by all
mkdir -p "$tmp"/{munge,state,spool,run,log}
# The daemons, job steps and jobs get this in their environment (not this script: ours()
# would find itself): cleanup finds them by it.
mark=(env "SLURM_TEST_MARKER=$tmp")
pids=()

# the processes started here: the daemons, and whatever has the marker in its environment
ours() {
    grep -lzxF "SLURM_TEST_MARKER=$tmp" /proc/[0-9]*/environ 2> /dev/null | cut -d/ -f3
}

cleanup() {
    local status=$? p i
    trap - EXIT INT TERM
    if [ -n "$tmp" ] && [ -d "$tmp" ]; then
        if [ -f "$tmp/slurm.conf" ] && [ -n "$(timeout 10 squeue -h -o %A 2> /dev/null)" ]; then
            # cancel the jobs while slurmctld is up: a job step whose controller is gone retries
            # (its slurmstepd lingers, and so does slurmd)
            # shellcheck disable=SC2046  # job ids: one word each
            timeout 10 scancel --quiet --full $(timeout 10 squeue -h -o %A 2> /dev/null) 2> /dev/null
            for i in $(seq 60); do  # 15 s
                [ -n "$(timeout 5 squeue -h -o %A 2> /dev/null)" ] || break
                sleep 0.25
            done
        fi
        for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
        for i in $(seq 50); do  # 10 s for the daemons and any job to go
            [ -n "$(ours)" ] || break
            [ "$i" -eq 25 ] && for p in $(ours); do kill "$p" 2> /dev/null; done
            sleep 0.2
        done
        for p in $(ours); do kill -9 "$p" 2> /dev/null; done
        wait 2> /dev/null
        rm -rf "$tmp"
    fi
    exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none && chmod 400 "$tmp/munge/munge.key" \
    || fail "could not write a munge key"
socket=$tmp/munge/munge.socket
"${mark[@]}" munged --foreground --key-file="$tmp/munge/munge.key" --socket="$socket" --pid-file="$tmp/run/munged.pid" \
    --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/munged.seed" > "$tmp/log/munged.out" 2>&1 &
pids+=($!)
for i in $(seq 50); do [ -S "$socket" ] && break; sleep 0.2; done
[ -S "$socket" ] || fail "munged did not start" "$tmp/log/munged.out" "$tmp/log/munged.log"

host=$(hostname -s)
port=$((20000 + $$ % 20000))  # not 6817/6818: a system Slurm on this host keeps its own
cat > "$tmp/slurm.conf" <<CONF
ClusterName=slurmtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
InactiveLimit=0
KillWait=5
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
logs=("$tmp/log/slurmctld.out" "$tmp/log/slurmctld.log" "$tmp/log/slurmd.out" "$tmp/log/slurmd.log")

"${mark[@]}" slurmctld -D -i -f "$SLURM_CONF" > "$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
"${mark[@]}" slurmd -D -f "$SLURM_CONF" -N "$host" > "$tmp/log/slurmd.out" 2>&1 &
pids+=($!)
state=""
for i in $(seq 120); do  # 60 s
    state=$(timeout 5 sinfo -h -N -n "$host" -o %T 2> /dev/null)
    [ "$state" = idle ] && break
    for p in "${pids[@]}"; do kill -0 "$p" 2> /dev/null || fail "a daemon exited (pid $p)" "${logs[@]}"; done
    sleep 0.5
done
[ "$state" = idle ] || fail "node $host not idle after 60 s (sinfo: '${state:-no answer}')" "${logs[@]}"
up=$((SECONDS - start))

# ---------------------------------------------------------------------------------------------
# 3. a sweep through sbatch

root=$tmp/sweep
"${mark[@]}" dev/sweep.sh "$root" --tasks copy,addition --pes nope,t5 --seeds 1 --slurm --threads 1 \
    --device cpu -- --steps 20 --eval-every 10 --train-size 2000 --valid-size 200 --test-size 200 \
    > "$tmp/log/sweep.out" 2>&1 || fail "dev/sweep.sh --slurm" "$tmp/log/sweep.out"
array_job=$(sed -n 's/^submitted job array \([0-9]*\):.*/\1/p' "$tmp/log/sweep.out")
report_job=$(sed -n 's/^submitted job \([0-9]*\):.*/\1/p' "$tmp/log/sweep.out")
[ -n "$array_job" ] && [ -n "$report_job" ] || fail "no job ids in dev/sweep.sh's output" "$tmp/log/sweep.out"

queue=""
for i in $(seq 480); do  # 240 s
    queue=$(timeout 10 squeue -h -o '%i %T %r') || fail "squeue failed" "${logs[@]}"
    [ -z "$queue" ] && break
    sleep 0.5
done
[ -z "$queue" ] || fail "jobs still queued after 240 s: ${queue//$'\n'/; }" "${logs[@]}"
jobs_took=$((SECONDS - start - up))

# the end state of every job, while slurmctld still has the records (MinJobAge)
job_states=$(timeout 10 scontrol -o show job | sed -n 's/^JobId=\([0-9]*\) \(ArrayJobId=[0-9]* ArrayTaskId=\([0-9]*\)\)\{0,1\}.*JobState=\([A-Z_]*\).*ExitCode=\([0-9:]*\).*/\1\t\3\t\4\t\5/p')
job_state() { awk -F '\t' -v id="$1" '$1 == id { print $3 }' <<< "$job_states"; }

mapfile -t runs < <(cut -f1 "$root/runs.tsv")
[ ${#runs[@]} -eq 4 ] || fail "runs.tsv has ${#runs[@]} runs, not 4" "$root/runs.tsv"
[ -f "$root/sweep.sbatch" ] || fail "no sweep.sbatch"
tasks_seen=()
for index in "${!runs[@]}"; do
    run=${runs[$index]}
    out=$root/logs/slurm-$index.out
    [ -f "$out" ] || fail "array task $index ($run) left no log $out; jobs: ${job_states//$'\n'/; }" "${logs[@]}"
    [ "$(tail -n 1 "$out")" = finished ] || fail "array task $index ($run) did not finish" "$out" "$root/logs/$run.log"
    [ -f "$root/$run/results.json" ] || fail "$run has no results.json" "$out" "$root/logs/$run.log"
    tasks_seen+=("${run%%-*}")
done
report="no dev/report: report.md not checked"
if [ -x dev/report ]; then
    report_state=$(job_state "$report_job")
    [ "$report_state" = COMPLETED ] || fail "report job $report_job ended ${report_state:-in an unknown state}" "$root/logs/report.out"
    [ -f "$root/report.md" ] || fail "the report job wrote no report.md" "$root/logs/report.out"
    for task in $(printf '%s\n' "${tasks_seen[@]}" | sort -u); do
        grep -qw -- "$task" "$root/report.md" || fail "report.md does not mention task $task" "$root/report.md"
    done
    report="report.md names $(printf '%s\n' "${tasks_seen[@]}" | sort -u | paste -sd,)"
fi
echo "PASSED: ${#runs[@]} runs as array job $array_job on a 1-node Slurm ($(sinfo -V)), results.json and logs all there, report job $report_job $(job_state "$report_job"); $report; cluster up in ${up}s, jobs done in ${jobs_took}s"
