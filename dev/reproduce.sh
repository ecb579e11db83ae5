#!/usr/bin/env bash
# dev/reproduce.sh: the sweeps behind docs/reproduction-*.md and docs/beyond.md, each a resumable
# dev/sweep.sh call.
#
#   dev/reproduce.sh ROOT PART [sweep options, e.g. --jobs 8 --device gpu]
#
# --device gpu suits the parts of the paper's five PEs (grid, long, ablation, head64, chomsky,
# chomskydrawn, sorted). The GPU refuses cope, kerple_log and kerple_power (they run on the CPU
# only, for now), which beyond trains, and far, farrandom and steps by default: give those
# --device auto (the GPU for the runs it can take, the CPU for the rest) or cpu, or PES without
# them.
#
#   grid       the `tiny` model (--model tiny, the preset's training), TASKS (default copy,
#              reverse, addition, scan) x 5 PEs x the paper's 3 seeds: ROOT/grid
#   long       the `tiny` grid with five times the steps (--steps 10000, validation every 500 as
#              the paper's 40,000 steps every 2,000), TASKS (default sum) x 5 PEs x 3 seeds:
#              ROOT/long
#   ablation   why T5 (and RoPE) fail on copy at `tiny` scale: the same copy grid again with one
#              departure from the paper's setting undone at a time, for every PE alike:
#              ROOT/ablation/FACTOR, with FACTOR
#                dropout   --dropout 0.1 (tiny trains without dropout; the paper used 0.1)
#                lr        --lr 3e-4 (tiny's 3e-3 is 100x the paper's 3e-5; 3e-5 does not learn
#                          copy in 2,000 steps at this size, so 10x less is the test)
#                head64    --heads 1: one 64-dim head instead of four of 16 (the paper's head
#                          size; RoPE's 25% then rotates 16 dimensions, as in the paper)
#                size      --layers 6 --d-model 384 --heads 24 --d-ff 1536: `small`'s size
#                          with tiny's 16-dim heads and tiny's training
#   head64     the `small` preset (6 layers x 384, heads of 64 like the paper's, dropout 0.1,
#              10,000 steps at lr 3e-4), TASKS (default copy, reverse, addition, scan, sort)
#              x 5 PEs x 3 seeds: ROOT/head64
#   beyond     every PE (the paper's five and the later six, plus FIRE with --random-positions 256)
#              on TASKS (default copy, addition with reversed digits and index hints,
#              ch_parity_check, ch_reverse_string, scan, ch_duplicate_string, reverse), one seed,
#              `tiny` for 1,000 steps, 1,000 valid and 2,000 test examples, the Chomsky tasks
#              trained on lengths 1-20 and tested on 21-50: ROOT/beyond/TASK and TASK-random;
#              cope again with --pe-per-layer (a table per layer, as its paper): ROOT/beyond/TASK-layers;
#              the rope run evaluated again with each --rope-scaling: ROOT/beyond/TASK-scaled;
#              and for addition, the wrappers that read digit places (which hints would cut into
#              one-digit numbers), on reversed digits without hints: nope and fire with and without
#              --abacus, ape_learned and rope with and without --position-coupling:
#              ROOT/beyond/addition-reversed/{plain,abacus,coupled}, and ape_learned and rope again with
#              the numbers zero-padded as Cho et al. 2024 write them, with and without coupling:
#              ROOT/beyond/addition-reversed/{padded,coupled-padded}, and both five times as long (5,000
#              steps): ROOT/beyond/addition-reversed/{padded-5000,coupled-padded-5000}, and coupling
#              without the padding at 5,000 steps: ROOT/beyond/addition-reversed/coupled-5000.
#              SEEDS (default 256788) adds seeds to the same tree, e.g. SEEDS=234054,146317
#              TASKS=copy,scan,reverse for the paper's other two on three tasks
#   chomsky    the paper's five PEs on the twelve Chomsky-hierarchy tasks beyond leaves out (TASKS
#              to choose others), with beyond's budget and task flags, SEEDS (default 256788):
#              ROOT/chomsky/TASK; and the four with positions to draw again with
#              --random-positions 256, as Ruoss et al. 2023 compared them on these tasks:
#              ROOT/chomsky/TASK-random. PES and RANDOM_PES choose other PEs for the two (empty
#              RANDOM_PES: none), e.g. PES=ape_learned,xpos,kerple_log,kerple_power,fire,cope
#              RANDOM_PES= for the later PEs beside the paper's in the same trees
#   chomskydrawn  chomsky's runs with --random-positions 256 again, evaluated as Ruoss et al.'s
#              code evaluates (--eval-positions drawn, in validation too): PES (default ape, t5,
#              alibi, rope) on TASKS (default chomsky's twelve), SEEDS (default 256788):
#              ROOT/chomsky/TASK-random-drawn; then each finished model evaluated again at
#              0..n-1: ROOT/chomsky/TASK-random-drawn-counted
#   sorted     the paper's five PEs with --sort-pool 16 (batches of similar lengths) on TASKS
#              (default copy, scan, reverse, addition), the paper's 3 seeds, with beyond's budget
#              and task flags, to set beside beyond's runs of the same PEs: ROOT/sorted/TASK
#   far        how far past training the Chomsky tasks extend: PES (default the nine PEs whose
#              parameters do not grow with the lengths, all but ape_learned and cope) on TASKS
#              (default ch_even_pairs, ch_cycle_navigation), SEEDS (default 256788), beyond's
#              budget and task flags but 5,000 steps: ROOT/far/TASK; then each finished model
#              tested again on lengths 21-500, 5 examples a length (./train --load --test-max 500
#              --test-size 2400): ROOT/far/TASK-500 (a model not yet trained is named and left
#              for the next call, as a Slurm sweep leaves them)
#   farrandom  far again with every position drawn from 0-2047 (--random-positions 2048, the
#              noise_max_length of Ruoss et al. 2023's example), in training and, as their code
#              does, in evaluation (--eval-positions drawn): PES (default the nine with positions
#              to draw; ape_learned's table then has a row for every position to 500):
#              ROOT/far/TASK-random, tested to 500 with drawn positions into
#              ROOT/far/TASK-random-500 and at 0..n-1 into ROOT/far/TASK-random-500-counted
#   steps      how a run's reach to 500 changes as it trains: far's runs again, of PES (default
#              rope, xpos, kerple_log, kerple_power, fire: those that extend even pairs past 50)
#              on TASKS (default ch_even_pairs), SEEDS (default the paper's three), keeping every
#              250th step's parameters (--keep-every 250): ROOT/steps/TASK; then the snapshots
#              of STEPS (default 250,500,750,1000,1500,2000,3000,4000,5000) tested on 21-500 as
#              far's models are: ROOT/steps/TASK-500/RUN-stepN
#
# Then `dev/report ROOT` reads all of it (each setting is ranked on its own).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -u -o pipefail
caller=$PWD
cd "$(dirname "$0")/.." || exit 1

budget="--model tiny --steps 1000 --valid-size 1000 --test-size 2000"  # beyond's and sorted's
long_budget="--model tiny --steps 5000 --valid-size 1000 --test-size 2000"  # beyond's reversed addition at five times the steps, and far's

# beyond's and sorted's flags for a task: the Chomsky tasks trained to λ 20 and tested to 50,
# which for the two whose λ counts halves of their input (ch_modular_arithmetic's numbers,
# ch_missing_duplicate's string written twice) is their own default split, about twice the
# others' input words
task_flags() {
    case $1 in
        addition) echo "--reverse-digits --index-hints" ;;
        ch_*) echo "--train-max 20 --test-max 50" ;;
    esac
}
# CHECKPOINT evaluated again into the run directory OUT (left as it is if it has results) with
# FLAGS, a finished run's checkpoint only; WHAT names the evaluation where it must wait
evaluate_again() {  # WHAT CHECKPOINT OUT [FLAGS]
    local what=$1 checkpoint=$2 out=$3
    shift 3
    [ -f "$out/results.json" ] && return 0
    [ -f "$(dirname "$checkpoint")/results.json" ] || { echo "not $what yet: $(dirname "$checkpoint") has not finished"; return 0; }
    ./train --load "$checkpoint" --out "$out" --force "$@" > "$out.log" 2>&1 || { echo "failed: $out (see $out.log)"; return 1; }
}
# ...tested on lengths 21-500, 5 examples a length
test_to_500() {  # CHECKPOINT OUT [FLAGS]
    evaluate_again "tested to 500" "$1" "$2" --test-max 500 --test-size 2400 "${@:3}"
}
# the twelve Chomsky-hierarchy tasks beyond leaves out
chomsky_twelve=ch_even_pairs,ch_modular_arithmetic,ch_cycle_navigation,ch_stack_manipulation,ch_modular_arithmetic_brackets
chomsky_twelve+=,ch_solve_equation,ch_missing_duplicate,ch_odds_first,ch_binary_addition,ch_binary_multiplication
chomsky_twelve+=,ch_compute_sqrt,ch_bucket_sort
# far and farrandom: each of TASKS (default ch_even_pairs, ch_cycle_navigation) with PES (default
# DEFAULT_PES), SEEDS (default 256788), far's budget and the task's flags, and where SUFFIX is
# -random with positions drawn in training and in evaluation: ROOT/far/TASKSUFFIX; then each
# finished model tested to 500: ROOT/far/TASKSUFFIX-500 (drawn), and where SUFFIX is -random at
# positions 0..n-1 too: ROOT/far/TASKSUFFIX-500-counted
far() {  # DEFAULT_PES SUFFIX [sweep options]
    local default_pes=$1 suffix=$2 status=0 task run
    shift 2
    local seeds=${SEEDS:-256788} pes=${PES:-$default_pes} train_flags=() test_flags=()
    if [ -n "$suffix" ]; then
        train_flags=(--random-positions 2048 --eval-positions drawn)
        test_flags=(--eval-positions drawn)
    fi
    IFS=, read -ra tasks <<< "${TASKS:-ch_even_pairs,ch_cycle_navigation}"
    shopt -s nullglob
    for task in "${tasks[@]}"; do
        # shellcheck disable=SC2086,SC2046  # the flags are words
        dev/sweep.sh "$root/far/$task$suffix" --tasks "$task" --pes "$pes" --seeds "$seeds" --no-report "$@" \
            -- $long_budget $(task_flags "$task") "${train_flags[@]}" || status=1
        mkdir -p "$root/far/$task$suffix-500"
        [ -n "$suffix" ] && mkdir -p "$root/far/$task$suffix-500-counted"
        for run in "$root/far/$task$suffix/$task"-*/; do
            run=${run%/}
            test_to_500 "$run/model.bin" "$root/far/$task$suffix-500/$(basename "$run")" "${test_flags[@]}" || status=1
            [ -z "$suffix" ] || test_to_500 "$run/model.bin" "$root/far/$task$suffix-500-counted/$(basename "$run")" || status=1
        done
    done
    exit $status
}
[ $# -ge 2 ] || { echo "usage: dev/reproduce.sh ROOT grid|long|ablation|head64|beyond|chomsky|chomskydrawn|sorted|far|farrandom|steps [sweep options]" >&2; exit 1; }
root=$(cd "$caller" && realpath -m "$1") part=$2  # ROOT from the caller's directory
shift 2

case $part in
    grid) dev/sweep.sh "$root/grid" --tasks "${TASKS:-copy,reverse,addition,scan}" --no-report "$@" -- --model tiny ;;
    long) dev/sweep.sh "$root/long" --tasks "${TASKS:-sum}" --no-report "$@" -- --model tiny --steps 10000 --eval-every 500 ;;
    ablation)
        status=0
        while read -r factor flags; do
            # shellcheck disable=SC2086  # the flags are words
            dev/sweep.sh "$root/ablation/$factor" --tasks copy --no-report "$@" -- --model tiny $flags || status=1
        done <<'FACTORS'
dropout --dropout 0.1
lr --lr 3e-4
head64 --heads 1
size --layers 6 --d-model 384 --heads 24 --d-ff 1536
FACTORS
        exit $status ;;
    head64) dev/sweep.sh "$root/head64" --tasks "${TASKS:-copy,reverse,addition,scan,sort}" --no-report "$@" -- --model small ;;
    beyond)
        status=0
        all_pes=$(./train --help | sed -n 's/^positional encodings (--pe): //p' | tr ' ' ,)
        seeds=${SEEDS:-256788}
        beyond="$root/beyond"
        IFS=, read -ra tasks <<< "${TASKS:-copy,addition,ch_parity_check,ch_reverse_string,scan,ch_duplicate_string,reverse}"
        for task in "${tasks[@]}"; do
            flags=$(task_flags "$task")
            # shellcheck disable=SC2086  # the flags are words
            dev/sweep.sh "$beyond/$task" --tasks "$task" --pes "$all_pes" --seeds "$seeds" --no-report "$@" -- $budget $flags || status=1
            # shellcheck disable=SC2086
            dev/sweep.sh "$beyond/$task-random" --tasks "$task" --pes fire --seeds "$seeds" --no-report "$@" \
                -- $budget $flags --random-positions 256 || status=1
            # shellcheck disable=SC2086
            dev/sweep.sh "$beyond/$task-layers" --tasks "$task" --pes cope --seeds "$seeds" --no-report "$@" \
                -- $budget $flags --pe-per-layer || status=1
            mkdir -p "$beyond/$task-scaled"
            for seed in ${seeds//,/ }; do
                for scaling in pi ntk yarn; do
                    evaluate_again "evaluated with --rope-scaling $scaling" "$beyond/$task/$task-rope-s$seed/model.bin" \
                        "$beyond/$task-scaled/$task-rope-s$seed-$scaling" --rope-scaling $scaling || status=1
                done
            done
            if [ "$task" = addition ]; then
                reversed="$beyond/addition-reversed"
                # shellcheck disable=SC2086
                dev/sweep.sh "$reversed/plain" --tasks addition --pes nope,fire,ape_learned,rope --seeds "$seeds" --no-report "$@" \
                    -- $budget --reverse-digits || status=1
                # shellcheck disable=SC2086
                dev/sweep.sh "$reversed/abacus" --tasks addition --pes nope,fire --seeds "$seeds" --no-report "$@" \
                    -- $budget --reverse-digits --abacus || status=1
                # shellcheck disable=SC2086
                dev/sweep.sh "$reversed/coupled" --tasks addition --pes ape_learned,rope --seeds "$seeds" --no-report "$@" \
                    -- $budget --reverse-digits --position-coupling || status=1
                # shellcheck disable=SC2086
                dev/sweep.sh "$reversed/padded" --tasks addition --pes ape_learned,rope --seeds "$seeds" --no-report "$@" \
                    -- $budget --reverse-digits --zero-pad || status=1
                # shellcheck disable=SC2086
                dev/sweep.sh "$reversed/coupled-padded" --tasks addition --pes ape_learned,rope --seeds "$seeds" --no-report "$@" \
                    -- $budget --reverse-digits --zero-pad --position-coupling || status=1
                # shellcheck disable=SC2086
                dev/sweep.sh "$reversed/coupled-padded-5000" --tasks addition --pes ape_learned,rope --seeds "$seeds" --no-report "$@" \
                    -- $long_budget --reverse-digits --zero-pad --position-coupling || status=1
                # shellcheck disable=SC2086
                dev/sweep.sh "$reversed/padded-5000" --tasks addition --pes ape_learned,rope --seeds "$seeds" --no-report "$@" \
                    -- $long_budget --reverse-digits --zero-pad || status=1
                # shellcheck disable=SC2086
                dev/sweep.sh "$reversed/coupled-5000" --tasks addition --pes ape_learned,rope --seeds "$seeds" --no-report "$@" \
                    -- $long_budget --reverse-digits --position-coupling || status=1
            fi
        done
        exit $status ;;
    chomsky)
        status=0
        seeds=${SEEDS:-256788} pes=${PES:-nope,ape,t5,alibi,rope} random_pes=${RANDOM_PES-ape,t5,alibi,rope}
        IFS=, read -ra tasks <<< "${TASKS:-$chomsky_twelve}"
        for task in "${tasks[@]}"; do
            flags=$(task_flags "$task")
            # shellcheck disable=SC2086  # the flags are words
            dev/sweep.sh "$root/chomsky/$task" --tasks "$task" --pes "$pes" --seeds "$seeds" --no-report "$@" -- $budget $flags || status=1
            [ -n "$random_pes" ] || continue
            # shellcheck disable=SC2086
            dev/sweep.sh "$root/chomsky/$task-random" --tasks "$task" --pes "$random_pes" --seeds "$seeds" --no-report "$@" \
                -- $budget $flags --random-positions 256 || status=1
        done
        exit $status ;;
    chomskydrawn)
        status=0
        seeds=${SEEDS:-256788} pes=${PES:-ape,t5,alibi,rope}
        IFS=, read -ra tasks <<< "${TASKS:-$chomsky_twelve}"
        for task in "${tasks[@]}"; do
            grid="$root/chomsky/$task-random-drawn"
            # shellcheck disable=SC2086,SC2046  # the flags are words
            dev/sweep.sh "$grid" --tasks "$task" --pes "$pes" --seeds "$seeds" --no-report "$@" \
                -- $budget $(task_flags "$task") --random-positions 256 --eval-positions drawn || status=1
            mkdir -p "$grid-counted"
            shopt -s nullglob
            for run in "$grid/$task"-*/; do
                run=${run%/}
                evaluate_again "evaluated at 0..n-1" "$run/model.bin" "$grid-counted/$(basename "$run")" || status=1
            done
        done
        exit $status ;;
    sorted)
        status=0
        IFS=, read -ra tasks <<< "${TASKS:-copy,scan,reverse,addition}"
        for task in "${tasks[@]}"; do
            # shellcheck disable=SC2086,SC2046  # the flags are words
            dev/sweep.sh "$root/sorted/$task" --tasks "$task" --no-report "$@" -- $budget $(task_flags "$task") --sort-pool 16 || status=1
        done
        exit $status ;;
    far) far nope,ape,t5,alibi,rope,xpos,kerple_log,kerple_power,fire "" "$@" ;;
    farrandom) far ape,ape_learned,t5,alibi,rope,xpos,kerple_log,kerple_power,fire -random "$@" ;;
    steps)
        status=0
        seeds=${SEEDS:-256788,234054,146317} pes=${PES:-rope,xpos,kerple_log,kerple_power,fire}
        IFS=, read -ra tasks <<< "${TASKS:-ch_even_pairs}"
        steps_list=${STEPS:-250,500,750,1000,1500,2000,3000,4000,5000}
        [[ $steps_list =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
            { echo "dev/reproduce.sh: STEPS takes comma-separated whole numbers above 0, got '$steps_list'" >&2; exit 1; }
        IFS=, read -ra steps <<< "$steps_list"
        shopt -s nullglob
        for task in "${tasks[@]}"; do
            # shellcheck disable=SC2086,SC2046  # the flags are words
            dev/sweep.sh "$root/steps/$task" --tasks "$task" --pes "$pes" --seeds "$seeds" --no-report "$@" \
                -- $long_budget $(task_flags "$task") --keep-every 250 || status=1
            mkdir -p "$root/steps/$task-500"
            for run in "$root/steps/$task/$task"-*/; do
                run=${run%/}
                for step in "${steps[@]}"; do
                    test_to_500 "$run/$(printf 'step-%06d.bin' "$step")" "$root/steps/$task-500/$(basename "$run")-step$step" || status=1
                done
            done
        done
        exit $status ;;
    *) echo "dev/reproduce.sh: unknown part '$part' (valid: grid long ablation head64 beyond chomsky chomskydrawn sorted far farrandom steps)" >&2; exit 1 ;;
esac
