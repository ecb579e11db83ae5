# Where two runs of one seed part: the first logged step whose loss differs (log.tsv keeps 6
# decimals), and the largest loss gap within each span of steps after it
import sys
def losses(path):
    rows = [l.rstrip('\n').split('\t') for l in open(path)][1:]
    return {int(r[0]): float(r[1]) for r in rows}
a, b = losses(sys.argv[1]), losses(sys.argv[2])
steps = sorted(set(a) & set(b))
first = next((s for s in steps if a[s] != b[s]), None)
print("first step whose loss differs:", first, "of", steps[-1])
for lo, hi in [(1, 10), (11, 100), (101, 500), (501, 1000), (1001, 2000)]:
    gaps = [abs(a[s] - b[s]) / max(a[s], 1e-9) for s in steps if lo <= s <= hi]
    if gaps: print("steps %d-%d: largest relative loss gap %.2e" % (lo, hi, max(gaps)))
