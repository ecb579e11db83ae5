#!/usr/bin/env bash
# dev/length_ranges.sh: how far past training does a model keep its accuracy? Each run's
# accuracy summed over ranges of lengths, a row per run: behind the test to 500 in
# docs/beyond.md (a run's model tested on longer lengths: ./train --load M --test-max 500 --out).
#
#   dev/length_ranges.sh [--tokens] [--split valid|test] RANGES RUN_DIR [...]
#
# RANGES: lengths LO-HI, comma separated (21-50,51-100,101-500). A cell is the share right of
# the split's examples whose length falls in the range (with --tokens: of their target tokens,
# <eos> included, results.json's per-token tallies), from results.json's exact counts, then how
# many there were: "0.953 (250)"; "-" where the split has no length in the range. The table is
# Markdown, a row per run named by its directory.
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
die() { echo "dev/length_ranges.sh: $*" >&2; exit 1; }
usage="usage: dev/length_ranges.sh [--tokens] [--split valid|test] RANGES RUN_DIR [...]"

split=test suffix=""
while [ $# -gt 0 ]; do
    case $1 in
        --tokens) suffix=_tokens; shift ;;
        --split)
            [ $# -ge 2 ] || die "--split needs a value (valid or test)"
            case $2 in valid | test) split=$2 ;; *) die "unknown split '$2' (valid: valid test)" ;; esac
            shift 2 ;;
        -*) die "unknown option '$1' ($usage)" ;;
        *) break ;;
    esac
done
[ $# -ge 2 ] || die "$usage"
ranges=$1
shift
IFS=, read -r -a bounds <<< "$ranges"
for range in "${bounds[@]}"; do
    [[ $range =~ ^([0-9]+)-([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ] ||
        die "'$range' is not a range of lengths LO-HI with LO <= HI (RANGES: 21-50,51-100,...)"
done
for dir in "$@"; do
    [ -f "$dir/results.json" ] || die "$dir holds no results.json (a finished run's directory)"
    grep -q "^  \"$split$suffix\": " "$dir/results.json" || die "$dir/results.json has no \"$split$suffix\" tallies (a run from before them?)"
done

header="| run |" rule="|---|"
for range in "${bounds[@]}"; do header+=" $range |" rule+="---|"; done
echo "$header"
echo "$rule"
for dir in "$@"; do
    # results.json holds each split's tallies on one line: "  "test": {..., "by_length": [{"length": N, "correct": C, "total": T, ...}, ...]}"
    awk -v part="\"$split$suffix\": " -v ranges="$ranges" -v run="$(basename "$(realpath -m "$dir")")" '
        index($0, "  " part) == 1 {
            line = $0
            while (match(line, /\{"length": [0-9]+, "correct": [0-9]+, "total": [0-9]+/)) {
                split(substr(line, RSTART, RLENGTH), f, /[^0-9]+/)
                correct[f[2]] += f[3]; total[f[2]] += f[4]
                line = substr(line, RSTART + RLENGTH)
            }
        }
        END {
            row = "| " run " |"
            n = split(ranges, r, ",")
            for (i = 1; i <= n; i++) {
                split(r[i], lohi, "-"); right = 0; all = 0
                for (len in total) if (len + 0 >= lohi[1] + 0 && len + 0 <= lohi[2] + 0) { right += correct[len]; all += total[len] }
                row = row (all ? sprintf(" %.3f (%d) |", right / all, all) : " - |")
            }
            print row
        }' "$dir/results.json"
done
