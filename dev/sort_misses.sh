#!/usr/bin/env bash
# dev/sort_misses.sh: which items does a sort model leave out at longer lengths? Behind
# docs/reproduction-cpu.md.
#
#   dev/sort_misses.sh [--examples N] [--threads N] RUN_DIR|DECODING.txt [...]
#
# For each run's directory of the single-symbol `sort` task this decodes the first N valid and N
# test examples of its model.bin (./train --load ... --sample N, default 2000; a file instead of
# a directory holds such a decoding, saved) and prints, for every split and length, the share of
# the gold answer's items the model wrote (as a multiset: an item listed twice must be written
# twice), then that share for the items that lie 0 (a repeat), 1, 2, 3-4, 5-8 and 9 or more
# places in the sort order above the item before them in the gold answer (the first item has
# none before it), and for the items of the prompt's first, middle and last third of places. A
# model that cannot tell neighbouring symbols apart misses the small steps; one whose attention
# fades with distance misses the prompt's first third. The order is read off the gold answers
# themselves (a symbol's rank is the number of symbols some gold answer lists before it), so the
# tool needs no copy of the task's alphabet: the decoding must hold every pair of neighbouring
# symbols in some answer, which 2,000 examples of sort do many times over.
# --threads goes to ./train (give 1 beside a training run).
source "$(dirname "$0")/help.sh"  # -h, --help: the comment above
set -euo pipefail
source "$(dirname "$0")/decoding.sh"  # the runs named are read from where the tool was called
parse_decoding_options dev/sort_misses.sh "$@"

# the table of SOURCE's examples on stdin (decoding.sh), a row per split and length
tabulate() {
    awk -F '\t' -v source="$1" '
        function fail(why) { print "dev/sort_misses.sh: " source " " why > "/dev/stderr"; failed = 1; exit 1 }
        # the items of the list in brackets of a text, in items[1..n]; returns n (-1: no list)
        function list_of(line, items,   start, end_at) {
            start = index(line, "[ "); if (!start) return -1
            line = substr(line, start + 2)
            end_at = index(line, " ]"); if (end_at) line = substr(line, 1, end_at - 1)
            return split(line, items, / , /)
        }
        {
            n = $2 + 0; e++
            length_of[e] = n; split_of[e] = $1
            np = list_of($4, p); ng = list_of($5, g); nm = list_of($6, m)
            if (np < 0 || ng < 0) fail("holds an example whose prompt or gold answer has no list in brackets: not a sort decoding")
            prompt_n[e] = np; gold_n[e] = ng
            for (i = 1; i <= np; i++) prompt_item[e, i] = p[i]
            for (i = 1; i <= ng; i++) {
                if (g[i] ~ / /) fail("lists items of more than one word (sort_multi), which this tool does not read")
                gold_item[e, i] = g[i]; symbols[g[i]] = 1
                for (j = 1; j < i; j++) if (g[j] != g[i]) before[g[j], g[i]] = 1
            }
            for (i = 1; i <= nm; i++) said_count[e, m[i]]++
            if (n > longest) longest = n
        }
        # class of a step of `d` places up the order: 1 repeat, 2 one, 3 two, 4 3-4, 5 5-8, 6 9+
        function step_class(d) { return d == 0 ? 1 : d == 1 ? 2 : d == 2 ? 3 : d <= 4 ? 4 : d <= 8 ? 5 : 6 }
        function share(key, c) { return (key, c) in total ? sprintf("%6.2f", written[key, c] / total[key, c]) : sprintf("%6s", "-") }
        END {
            if (failed) exit 1
            if (e == 0) fail("holds no decoded example")
            for (s in symbols) {
                rank[s] = 0
                for (t in symbols) if ((t, s) in before) rank[s]++
                if (rank[s] in taken) fail("does not fix the sort order of its symbols (too few examples?)")
                taken[rank[s]] = 1
            }
            for (k = 1; k <= e; k++) {
                key = split_of[k] SUBSEP length_of[k]
                examples[key]++
                delete seen
                for (i = 1; i <= gold_n[k]; i++) {  # the i-th gold item is written if the model wrote its value as often
                    v = gold_item[k, i]; hit = ++seen[v] <= said_count[k, v]
                    written[key, 0] += hit; total[key, 0]++
                    if (i == 1) continue
                    c = step_class(rank[v] - rank[gold_item[k, i - 1]])
                    written[key, c] += hit; total[key, c]++
                }
                delete seen
                for (i = 1; i <= prompt_n[k]; i++) {
                    v = prompt_item[k, i]; hit = ++seen[v] <= said_count[k, v]
                    c = 7 + int(3 * (i - 1) / prompt_n[k])  # 7, 8, 9: the prompt'"'"'s thirds
                    written[key, c] += hit; total[key, c]++
                }
            }
            printf "  %-6s %6s %8s %7s  %-41s  %s\n", "split", "length", "examples", "written",
                   "written, by the step up from the item before", "by the place in the prompt"
            printf "  %-6s %6s %8s %7s  %6s %6s %6s %6s %6s %6s  %6s %6s %6s\n", "", "", "", "", "repeat", "+1", "+2", "+3-4", "+5-8", "+9-",
                   "first", "middle", "last"
            for (sp = 1; sp <= 2; sp++) {
                name = sp == 1 ? "valid" : "test"
                for (n = 0; n <= longest; n++) {
                    key = name SUBSEP n
                    if (!(key in examples)) continue
                    line = sprintf("  %-6s %6d %8d %7s ", name, n, examples[key], share(key, 0))
                    for (c = 1; c <= 6; c++) line = line " " share(key, c)
                    line = line " "
                    for (c = 7; c <= 9; c++) line = line " " share(key, c)
                    print line
                }
            }
        }'
}

tabulate_sources
