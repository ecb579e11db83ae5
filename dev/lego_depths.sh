#!/usr/bin/env bash
# dev/lego_depths.sh: does a LEGO model find the variable it is asked about, or answer for the
# end of the chain? Behind docs/reproduction-cpu.md.
#
#   dev/lego_depths.sh [--examples N] [--threads N] RUN_DIR|DECODING.txt [...]
#
# A LEGO prompt is a chain of clauses, "a = +1 , b = - a , c = + b , ...", and asks for one
# variable of its second half; the answer is the first clause's value times the signs of the
# clauses up to the one that sets that variable (its depth: 1 for the first clause). For each
# LEGO run's directory this decodes the first N valid and N test examples of its model.bin
# (./train --load ... --sample N, default 2000; a file instead of a directory holds such a
# decoding, saved) and prints, a row per split and number of variables, right/total for every
# depth asked (depth:right/total), and then ("unlike") the same among the prompts whose
# variable asked has the other value than the chain's last variable. A model that resolves
# each link answers those as well as the rest; one that multiplies every sign of the chain,
# wherever the variable asked stands, answers the last variable's value and gets them wrong.
# Last, for valid's longest chains, the share of answers that are the value of each clause's
# variable, a row per depth asked: a model that resolves the chain peaks where j is the depth
# (1.00), one that answers for some other place in the chain peaks there instead (about one
# half is chance: the values are independent draws).
# The chain is resolved here from the prompt, and a gold answer that disagrees with it stops
# the tool (the prompt format has changed). --threads goes to ./train (give 1 beside a training
# run).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # the runs named are read from where the tool was called
parse_decoding_options dev/lego_depths.sh "$@"
require_task dev/lego_depths.sh lego

# the rows of SOURCE's examples on stdin (decoding.sh), whose prompts read "If a = +1 , b = - a
# , c = + b . Then , what is the value of c ?" and answers "The answer is -1 ."
tabulate() {
    awk -F '\t' -v source="$1" '
        function answer(v) { return "The answer is " (v > 0 ? "+1" : "-1") " ." }
        {
            split_name = $1; right = $3 + 0; prompt = $4; gold = $5
            if (!sub(/^If /, "", prompt) || split(prompt, parts, " \\. Then , what is the value of ") != 2) next  # not a LEGO prompt
            n = split(parts[1], clauses, " , "); asked = parts[2]; sub(/ \?$/, "", asked)
            depth = 0; delete value
            for (i = 1; i <= n; i++) {  # "v = +1", "v = -1", "v = + u" or "v = - u"
                split(clauses[i], w, " ")
                value[w[1]] = w[3] == "+1" ? 1 : w[3] == "-1" ? -1 : (w[3] == "+" ? 1 : -1) * value[w[4]]
                clause_value[i] = value[w[1]]
                if (w[1] == asked) depth = i
            }
            if (depth == 0 || gold != answer(value[asked])) {
                printf "dev/lego_depths.sh: %s: the chain read from \"%s\" does not give its gold \"%s\"\n", source, $4, gold > "/dev/stderr"
                failed = 1; exit 1
            }
            unlike = clause_value[n] != value[asked]
            key = split_name SUBSEP n SUBSEP depth
            total[key]++; correct[key] += right
            if (unlike) { unlike_total[key]++; unlike_correct[key] += right }
            rows[split_name SUBSEP n] = 1
            if (n > longest) longest = n
            if (split_name == "valid") {  # which clause each answer is the value of
                if (n > longest_valid) longest_valid = n
                said = $6 == answer(1) ? 1 : $6 == answer(-1) ? -1 : 0
                for (i = 1; i <= n; i++) agrees[n, depth, i] += said == clause_value[i]
            }
        }
        function cells(counts, rights, s, n,   d, line) {
            line = ""
            for (d = 1; d <= n; d++) if ((s, n, d) in counts) line = line sprintf(" %d:%d/%d", d, rights[s, n, d], counts[s, n, d])
            return line
        }
        END {
            if (failed) exit 1
            if (longest == 0) { print "dev/lego_depths.sh: " source " holds no decoded example of the lego task" > "/dev/stderr"; exit 1 }
            print "  right/total by split and number of variables (rows), and depth asked (depth:right/total); unlike: among the prompts"
            print "  whose variable asked has the other value than the last variable"
            for (s = 0; s < 2; s++) {
                split_name = s ? "test" : "valid"
                for (n = 1; n <= longest; n++)
                    if ((split_name, n) in rows)
                        printf "  %-5s %2d:%s | unlike:%s\n", split_name, n, cells(total, correct, split_name, n), cells(unlike_total, unlike_correct, split_name, n)
            }
            n = longest_valid
            if (!n) exit
            printf "  valid, %d variables: the share of answers that are the value of clause j, a row per depth asked\n  depth examples", n
            for (j = 1; j <= n; j++) printf " %5d", j
            printf "\n"
            for (d = 1; d <= n; d++) {
                if (!(("valid", n, d) in total)) continue
                printf "  %5d %8d", d, total["valid", n, d]
                for (j = 1; j <= n; j++) printf " %5.2f", agrees[n, d, j] / total["valid", n, d]
                printf "\n"
            }
        }'
}

tabulate_sources
