#!/usr/bin/python3
"""Calibrate ldmsim's fcfs-channels DMA timing model against the swCandle STREAM measurements.

Evaluation goes through the simulator binary (`ldmsim bench stream` on a temporary arch JSON: the sw26010
preset with a modified dma.timing), at most 2 runs in parallel. A closed-form surrogate of the same model
(saturated FCFS channels for the 64-core PE runs, one serial issuer for the BCAST get-only runs) is available
for fast exploration (`--evaluator surrogate`); it is checked against the binary with `check-surrogate`.

  scripts/fit_dma_swcandle.py eval  --params preset|FILE.json [--subset calib|holdout|all] [--out CSV] [--rounds-pe-strided N]
  scripts/fit_dma_swcandle.py fit   --channels 1 2 3 4 8 [--evaluator surrogate|binary] [--maxiter N] [--start FILE.json] --out FILE.json
  scripts/fit_dma_swcandle.py check-surrogate --params FILE.json

Objective: each calibration kind (set x kernel: PE contiguous copy, PE contiguous add, PE strided copy,
PE strided add, BCAST copy) weighs the same: sum over kinds of the mean squared log error of its points.
"""
import argparse, copy, csv, json, math, os, subprocess, sys, tempfile, re
from concurrent.futures import ThreadPoolExecutor

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LDMSIM = os.environ.get('LDMSIM', os.path.join(REPO, 'build', 'tools', 'ldmsim'))  # LDMSIM=path overrides
PRESET = os.path.join(REPO, 'sim', 'presets', 'sw26010.json')
DATA = [os.path.join(REPO, 'stream', 'data', 'swcandle', f)
        for f in ('pe_contiguous.csv', 'pe_strided.csv', 'bcast_strided.csv')]
CLOCK = 1.45e9
LINE = 128
OFFSET = 80
CORES = 64
FREE = ['request_overhead_cycles', 'realign_cycles', 'block_cycles', 'partial_put_cycles',
        'bytes_per_cycle', 'put_bytes_per_cycle', 'latency_cycles']
ROUNDS = {'pe_cont': None, 'pe_strided': 64, 'bcast_strided': 64}  # None: the bench's default


# ----------------------------------------------------------------------------------------------- data
def load_points(role=None):
    pts = []
    for path in DATA:
        with open(path) as f:
            rows = csv.DictReader(line for line in f if not line.startswith('#'))
            for r in rows:
                if r['role'] == 'excluded':
                    continue
                if role and r['role'] != role:
                    continue
                for k in ('bs_doubles', 'ss_doubles', 'block_bytes', 'gap_bytes', 'request_bytes'):
                    r[k] = int(r[k])
                r['measured_MBps'] = float(r['measured_MBps'])
                pts.append(r)
    return pts


def kind(p):
    return f"{p['set']}/{p['kernel']}"


def bench_args(p, rounds=None):
    a = ['--kernel', p['kernel'], '--block-bytes', str(p['block_bytes'])]
    if p['set'] != 'pe_cont':
        a += ['--gap-bytes', str(p['gap_bytes']), '--request-bytes', str(p['request_bytes'])]
    if p['set'] == 'bcast_strided':
        a += ['--mode', 'bcast', '--get-only']
    r = rounds if rounds is not None else ROUNDS[p['set']]
    if r:
        a += ['--rounds', str(r)]
    return a


# ----------------------------------------------------------------------------------------------- params
def preset_timing():
    return json.load(open(PRESET))['dma']['timing']


def full_timing(params):
    t = preset_timing()
    t.update(params)
    t['issue_cycles'] = 10
    return t


def write_arch(timing, directory):
    arch = json.load(open(PRESET))
    arch['dma']['timing'] = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in timing.items()}
    arch['name'] = 'sw26010-fit'
    fd, path = tempfile.mkstemp(suffix='.json', dir=directory)
    with os.fdopen(fd, 'w') as f:
        json.dump(arch, f)
    return path


# ----------------------------------------------------------------------------------------------- binary
RX_SIM = re.compile(r'simulated: (\d+) cycles = ([\d.]+) us; DMA traffic ([\d.]+) MB/s')


def run_one(arch_path, p, rounds=None):
    cmd = [LDMSIM, 'bench', 'stream', '--arch', arch_path] + bench_args(p, rounds)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    m = RX_SIM.search(out)
    z = re.search(p['kernel'] + r': ([\d.]+) MB/s', out)
    rr = re.search(r'; (\d+) requests per core and array', out)
    return {'cycles': int(m.group(1)), 'dma_MBps': float(m.group(3)), 'stream_MBps': float(z.group(1)),
            'rounds': int(rr.group(1))}


def eval_binary(timing, pts, rounds_override=None, jobs=2):
    """rounds_override: {set: rounds} to shorten runs (checked to move results by <0.5%)."""
    with tempfile.TemporaryDirectory() as d:
        arch = write_arch(timing, d)
        def go(p):
            r = (rounds_override or {}).get(p['set'])
            return run_one(arch, p, r)
        with ThreadPoolExecutor(max_workers=jobs) as ex:
            res = list(ex.map(go, pts))
    return [r['dma_MBps'] if p['compare_to'] == 'dma' else r['stream_MBps'] for p, r in zip(pts, res)], res


# ----------------------------------------------------------------------------------------------- surrogate
def shape(start, block, gap, length):
    """transaction_shape of dma/src/timing_model.cpp for a request at main address `start`
    (blocks, transactions, realigned blocks, partial transactions), using the period of block starts mod 128."""
    nb = length // block if gap else 1
    pitch = block + gap
    per = LINE // math.gcd(pitch % LINE or LINE, LINE) if gap else 1
    tot = np.zeros(3)
    reps, rem = divmod(nb, per)
    for count, rng in ((reps, range(per)), (1, range(rem))):
        if count == 0:
            continue
        acc = np.zeros(3)
        for i in rng:
            first = start + i * pitch
            lines = (first + block - 1) // LINE - first // LINE + 1
            head = first % LINE != 0
            tail = (first + block) % LINE != 0
            partial = (1 if (head or tail) else 0) if lines == 1 else int(head) + int(tail)
            acc += (lines, 1 if (lines > 1 and head) else 0, partial)
        tot += count * acc
    return nb, tot[0], tot[1], tot[2]


def service(t, sh, put):
    nb, lines, realigned, partial = sh
    ch = t['channels']
    tl = LINE * ch / (t.get('put_bytes_per_cycle', t['bytes_per_cycle']) if put else t['bytes_per_cycle'])
    return (t['request_overhead_cycles'] + (nb - 1) * t.get('block_cycles', 0) + realigned * t['realign_cycles']
            + lines * tl + (partial * t.get('partial_put_cycles', 0) if put else 0))


def loop_cycles(kernel, elements):
    two = kernel in ('add', 'triad')
    per, acc = (16, 12) if two else (32, 16)
    return max(1, -(-elements // per)) * (acc + 2)


def default_rounds(request):
    return min(2048, max(16, -(-256 * 1024 // request)))


def eval_surrogate_one(t, p):
    block, gap = p['block_bytes'], p['gap_bytes']
    req = p['request_bytes'] if p['set'] != 'pe_cont' else block
    pitch = req // block * (block + gap) if gap else block
    two = p['kernel'] in ('add', 'triad')
    loop = loop_cycles(p['kernel'], req // 8)
    ch, L, iss = t['channels'], t['latency_cycles'], 10
    if p['set'] == 'bcast_strided':
        rounds = 64
        tot = 0.0
        for k in range(rounds):
            sh = shape(OFFSET + k * pitch, block, gap, req)  # both inputs at the same offset
            s = service(t, sh, False)
            tot += (2 * iss + (2 * s if ch == 1 else s) + L if two else iss + s + L) + loop
        moved = rounds * req * (2 if two else 1)
        return moved / (tot / CLOCK) / 1e6
    rounds = ROUNDS[p['set']] or default_rounds(req)
    # 64 PE cores, saturated channels: the group serves sum(S)/channels; a core alone needs its round trip.
    res = (OFFSET + np.arange(rounds * CORES, dtype=np.int64) * pitch) % LINE
    counts = np.bincount(res, minlength=LINE)
    sum_s = 0.0
    worst_trip = 0.0
    for a in np.nonzero(counts)[0]:
        sh = shape(int(a), block, gap, req)
        sg, sp = service(t, sh, False), service(t, sh, True)
        trip = (2 * iss + (2 * sg if ch == 1 else sg) + L if two else iss + sg + L) + loop + iss + sp + L
        sum_s += counts[a] * ((2 if two else 1) * sg + sp)
        worst_trip = max(worst_trip, trip)
    tot = max(sum_s / ch, worst_trip * rounds) + worst_trip  # + one round of start-up/drain
    moved = rounds * CORES * req * (3 if two else 2)
    return moved / (tot / CLOCK) / 1e6


def eval_surrogate(t, pts):
    return [eval_surrogate_one(t, p) for p in pts], None


# ----------------------------------------------------------------------------------------------- errors
def errors(pts, sim):
    return [s / p['measured_MBps'] - 1 for p, s in zip(pts, sim)]


def stats(errs):
    e = np.array(errs)
    return {'n': len(e), 'worst': float(np.max(np.abs(e))), 'mean': float(np.mean(e)),
            'rms': float(np.sqrt(np.mean(e ** 2)))}


def table(pts, sim, title):
    lines = [f'### {title}', '', '| kind | role | n | worst abs | mean signed | RMS | worst point |', '|---|---|---|---|---|---|---|']
    groups = {}
    for p, s in zip(pts, sim):
        groups.setdefault((p['set'], p['kernel'], p['role']), []).append((p, s))
    order = {'pe_cont': 0, 'pe_strided': 1, 'bcast_strided': 2}
    korder = {'copy': 0, 'scale': 1, 'add': 2, 'triad': 3}
    for key in sorted(groups, key=lambda k: (k[2] != 'calib', order[k[0]], korder[k[1]])):
        g = groups[key]
        e = errors([x[0] for x in g], [x[1] for x in g])
        st = stats(e)
        i = int(np.argmax(np.abs(e)))
        wp = g[i][0]
        lab = f"{wp['block_bytes']} B" + (f"/gap {wp['gap_bytes']}" if wp['set'] != 'pe_cont' else '')
        lines.append(f"| {key[0]} {key[1]} | {key[2]} | {st['n']} | {100*st['worst']:.1f}% | {100*st['mean']:+.1f}% | "
                     f"{100*st['rms']:.1f}% | {lab} ({100*e[i]:+.1f}%) |")
    return '\n'.join(lines)


# ----------------------------------------------------------------------------------------------- fit
def loss(pts, sim):
    by = {}
    for p, s in zip(pts, sim):
        by.setdefault(kind(p), []).append(math.log(max(s, 1e-9) / p['measured_MBps']) ** 2)
    return sum(np.mean(v) for v in by.values())


def vec_to_params(x, channels):
    # every free parameter is positive: optimise its logarithm
    d = {k: float(math.exp(v)) for k, v in zip(FREE, x)}
    d['channels'] = channels
    return d


def params_to_vec(p):
    return np.array([math.log(max(p[k], 1e-3)) for k in FREE])


def nelder_mead(f, x0, step=0.3, maxiter=300, tol=1e-6, log=None):
    n = len(x0)
    sim = [np.array(x0, float)]
    for i in range(n):
        y = np.array(x0, float)
        y[i] += step
        sim.append(y)
    fs = [f(x) for x in sim]
    it = 0
    evals = n + 1
    while it < maxiter:
        it += 1
        order = np.argsort(fs)
        sim = [sim[i] for i in order]
        fs = [fs[i] for i in order]
        if log and it % 10 == 0:
            log(f'  iter {it} evals {evals} best {fs[0]:.5f}')
        if abs(fs[-1] - fs[0]) < tol * (abs(fs[0]) + 1e-12) and it > 2 * n:
            break
        c = np.mean(sim[:-1], axis=0)
        xr = c + (c - sim[-1]); fr = f(xr); evals += 1
        if fr < fs[0]:
            xe = c + 2 * (c - sim[-1]); fe = f(xe); evals += 1
            sim[-1], fs[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < fs[-2]:
            sim[-1], fs[-1] = xr, fr
        else:
            if fr < fs[-1]:
                xc = c + 0.5 * (xr - c)
            else:
                xc = c + 0.5 * (sim[-1] - c)
            fc = f(xc); evals += 1
            if fc < min(fr, fs[-1]):
                sim[-1], fs[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    sim[i] = sim[0] + 0.5 * (sim[i] - sim[0])
                    fs[i] = f(sim[i]); evals += 1
    i = int(np.argmin(fs))
    return sim[i], fs[i], evals


def start_guess(channels):
    # hand estimates (see REPORT.md): per-channel costs scale with the channel count
    return {'request_overhead_cycles': 16 * channels, 'realign_cycles': 10 * channels, 'block_cycles': 20 * channels,
            'partial_put_cycles': 5 * channels, 'bytes_per_cycle': 19.0, 'put_bytes_per_cycle': 11.7,
            'latency_cycles': 1000.0}


FAST_ROUNDS = {'pe_strided': 16}  # checked: moves PE strided results by < 0.1%


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('cmd', choices=['eval', 'fit', 'check-surrogate'])
    ap.add_argument('--params', default='preset')
    ap.add_argument('--subset', default='all', choices=['calib', 'holdout', 'all'])
    ap.add_argument('--out')
    ap.add_argument('--channels', type=int, nargs='+', default=[1, 2, 3, 4, 8])
    ap.add_argument('--evaluator', default='binary', choices=['binary', 'surrogate'])
    ap.add_argument('--maxiter', type=int, default=300)
    ap.add_argument('--start', help='JSON of a start point (else hand estimates)')
    ap.add_argument('--fast', action='store_true', help='PE strided at 16 rounds instead of 64')
    a = ap.parse_args()

    def get_timing(spec):
        if spec == 'preset':
            return preset_timing()
        p = json.load(open(spec))
        return full_timing(p.get('timing', p))

    if a.cmd == 'eval':
        t = get_timing(a.params)
        pts = load_points(None if a.subset == 'all' else a.subset)
        ev = eval_surrogate if a.evaluator == 'surrogate' else (
            lambda t, pts: eval_binary(t, pts, FAST_ROUNDS if a.fast else None))
        sim, raw = ev(t, pts)
        print('timing:', json.dumps(t))
        print(table([p for p in pts if p['role'] == 'calib'] + [p for p in pts if p['role'] != 'calib'],
                    [s for p, s in zip(pts, sim) if p['role'] == 'calib'] + [s for p, s in zip(pts, sim) if p['role'] != 'calib'],
                    f'errors ({a.params})'))
        print(f'calibration loss: {loss([p for p in pts if p["role"]=="calib"], [s for p, s in zip(pts, sim) if p["role"]=="calib"]):.5f}')
        if a.out:
            with open(a.out, 'w', newline='') as f:
                w = csv.writer(f)
                w.writerow(['set', 'kernel', 'role', 'block_bytes', 'gap_bytes', 'measured_MBps', 'simulated_MBps',
                            'error', 'cycles', 'rounds', 'args'])
                for i, (p, s) in enumerate(zip(pts, sim)):
                    r = raw[i] if raw else {}
                    w.writerow([p['set'], p['kernel'], p['role'], p['block_bytes'], p['gap_bytes'], p['measured_MBps'],
                                f'{s:.2f}', f'{s / p["measured_MBps"] - 1:+.4f}', r.get('cycles', ''), r.get('rounds', ''),
                                ' '.join(bench_args(p))])
        return

    if a.cmd == 'check-surrogate':
        t = get_timing(a.params)
        pts = load_points('calib')
        sb, _ = eval_binary(t, pts)
        ss, _ = eval_surrogate(t, pts)
        d = [y / x - 1 for x, y in zip(sb, ss)]
        i = int(np.argmax(np.abs(d)))
        print(f'surrogate vs binary over {len(pts)} calibration points: worst {100*d[i]:+.2f}% '
              f'({kind(pts[i])} {pts[i]["block_bytes"]}/{pts[i]["gap_bytes"]}), rms {100*math.sqrt(np.mean(np.square(d))):.2f}%')
        return

    # fit
    pts = load_points('calib')
    results = {}
    for ch in a.channels:
        if a.start:
            s = json.load(open(a.start))
            s = s.get('timing', s)
            x0 = params_to_vec({k: s[k] * (ch / s['channels'] if k in FREE[:4] else 1) for k in FREE})
        else:
            x0 = params_to_vec(start_guess(ch))
        n = [0]
        def f(x):
            n[0] += 1
            t = full_timing(vec_to_params(x, ch))
            if a.evaluator == 'surrogate':
                sim, _ = eval_surrogate(t, pts)
            else:
                sim, _ = eval_binary(t, pts, FAST_ROUNDS)
            return loss(pts, sim)
        x, fx, ev = nelder_mead(f, x0, maxiter=a.maxiter, log=lambda s: print(f'ch={ch}' + s, flush=True))
        p = vec_to_params(x, ch)
        results[ch] = {'loss': fx, 'evals': n[0], 'timing': p}
        print(f'channels={ch}: loss {fx:.5f} after {n[0]} evaluations ({a.evaluator}):',
              json.dumps({k: round(v, 3) for k, v in p.items()}), flush=True)
    if a.out:
        json.dump(results, open(a.out, 'w'), indent=1)


if __name__ == '__main__':
    main()
