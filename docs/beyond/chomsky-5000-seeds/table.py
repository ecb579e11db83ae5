# the 5,000-step pairs in three seeds: plain, drawn (evaluated drawn), drawn at 0..n-1; OOD exact match (ID valid)
import json, os, sys
root = '/work/sweeps/seeds5k'
first = '/work/main/docs/beyond/chomsky-5000-drawn'
plain0 = '/work/main/docs/beyond/chomsky-5000'
def res(path):
    f = os.path.join(path, 'results.json')
    if not os.path.exists(f): return None
    d = json.load(open(f))
    return d['test']['accuracy'], d['valid']['accuracy'], d['best_step']
rows = []
for task in ['ch_even_pairs', 'ch_cycle_navigation']:
    for pe in ['ape', 't5', 'alibi', 'rope']:
        for seed in [256788, 234054, 146317]:
            name = f'{task}-{pe}-s{seed}'
            if seed == 256788:
                p = res(f'{plain0}/{task}-{pe}-s{seed}-random-positions0')
                d = res(f'{first}/{name}'); c = res(f'{first}/{name}-counted')
            else:
                p = res(f'{root}/plain-{seed}/{name}')
                d = res(f'{root}/drawn-{seed}/{name}'); c = res(f'{root}/drawn-{seed}-counted/{name}')
            rows.append((task, pe, seed, p, d, c))
fmt = lambda r: '-' if r is None else f'{r[0]:.3f} ({r[1]:.3f})'
for task, pe, seed, p, d, c in rows:
    print(f'{task[3:]}\t{pe}\t{seed}\t{fmt(p)}\t{fmt(d)}\t{fmt(c)}\t{p and p[2]}\t{d and d[2]}')
