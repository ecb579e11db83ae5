# dev/decoding.sh: sourced (not run) by the tools that read a model's greedy decodings,
# dev/parity_counts.sh, dev/answer_lengths.sh, dev/first_error.sh, dev/scratchpad_steps.sh,
# dev/sort_misses.sh, dev/sum_answers.sh, dev/shuffle_answers.sh and dev/lego_depths.sh: their
# options, each source's decoding and its examples, written once. They run from anywhere: run
# directories and decodings are named from where the tool was called, and ./train is the one of
# this repository. dev/t5_clamp.sh and dev/cope_inside.sh source it for trained_arithmetic alone,
# so that they evaluate a run's models as it trained.
#
#   parse_decoding_options TOOL "$@"   sets `examples` (--examples N, default 2000), `threads`
#                                      (--threads N, for ./train) and `sources` (the rest, at
#                                      least one), or exits with TOOL's usage line
#   require_task TOOL TASK             exits with TOOL's one line unless every source is a saved
#                                      decoding or a run of TASK (by its config.json)
#   decoding SOURCE                    prints what ./train --sample printed: a run directory's
#                                      model.bin decoded now, in the arithmetic it trained in
#                                      (trained_arithmetic), or a saved decoding (a file)
#   trained_arithmetic RUN_DIR         the flags, one a line, that make ./train --load compute as
#                                      the run did: --precision bf16 and --attention fused when
#                                      its config.json says so (a checkpoint holds neither)
#   tabulate_sources                   for each source, its name and then what the tool's own
#                                      `tabulate SOURCE` prints, reading the source's examples
#                                      on stdin, one a line, tab-separated: split (valid or
#                                      test), length, right (1 or 0), prompt, gold and the
#                                      model's output (without the " (no <eos>)" mark)
# A decoded example is a line "[right] test (length 10)" (", scratchpad right" may follow the
# length), then its "  prompt: ", "  gold:   " and "  model:  " lines; the model's line ends in
# " (no <eos>)" where decoding stopped at the longest length without one.

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

parse_decoding_options() {
    local tool=$1
    local usage="usage: $tool [--examples N] [--threads N] RUN_DIR|DECODING.txt [...]"
    shift
    examples=2000 threads=()
    while [ $# -ge 2 ]; do
        case $1 in
            --examples) examples=$2 ;;
            --threads) threads=(--threads "$2") ;;
            *) break ;;
        esac
        shift 2
    done
    [ $# -ge 1 ] || { echo "$usage" >&2; exit 1; }
    [[ $examples =~ ^[1-9][0-9]*$ ]] || { echo "$tool: --examples takes a whole number above 0, got '$examples'" >&2; exit 1; }
    sources=("$@")
    for source in "${sources[@]}"; do
        [ -f "$source" ] || [ -f "$source/model.bin" ] ||
            { echo "$tool: $source is neither a decoding nor a run directory with a model.bin" >&2; exit 1; }
    done
    decoded=$(mktemp -d)
    trap 'rm -rf "$decoded"' EXIT
}

require_task() {
    local tool=$1 task=$2 source
    for source in "${sources[@]}"; do
        [ -f "$source" ] || grep -q "\"task\": \"$task\"" "$source/config.json" 2> /dev/null ||
            { echo "$tool: $source is not a $task run (its config.json names another task, or is missing)" >&2; exit 1; }
    done
}

trained_arithmetic() {
    if grep -q '"precision": "bf16"' "$1/config.json"; then printf '%s\n' --precision bf16; fi
    if grep -q '"attention": "fused"' "$1/config.json"; then printf '%s\n' --attention fused; fi
}

decoding() {
    if [ -f "$1" ]; then
        cat "$1"
    else  # --out: the evaluation's own directory, so the run's results stay as they are
        local arithmetic
        mapfile -t arithmetic < <(trained_arithmetic "$1")
        "$repo/train" --load "$1/model.bin" --device cpu "${arithmetic[@]}" --sample "$examples" "${threads[@]}" --out "$decoded/eval"
        rm -rf "$decoded/eval"
    fi
}

# SOURCE's decoded examples, one a line, as tabulate_sources describes them
decoded_examples() {
    decoding "$1" | awk '
        /^\[(right|wrong)\] (valid|test) \(length [0-9]+/ {
            right = ($1 == "[right]"); split_name = $2
            n = $4; sub(/[,)].*/, "", n)
            if ((getline prompt) <= 0 || (getline gold) <= 0 || (getline said) <= 0) next  # cut short
            if (!sub(/^  prompt: */, "", prompt) || !sub(/^  gold: +/, "", gold) || !sub(/^  model: */, "", said)) next  # not a decoded example
            sub(/ \(no <eos>\)$/, "", said)
            printf "%s\t%d\t%d\t%s\t%s\t%s\n", split_name, n, right, prompt, gold, said
        }'
}

tabulate_sources() {
    local source table
    for source in "${sources[@]}"; do
        decoded_examples "$source" > "$decoded/examples.tsv"
        table=$(tabulate "$source" < "$decoded/examples.tsv")
        printf '%s:\n%s\n' "$source" "$table"
    done
}
