"""Whole-process timing of `concord stats icc` against pandas + numpy + scipy doing the same
work from the same long-form CSV file, in one run.

    pip install pandas numpy scipy
    python stats_icc_whole_process.py --concord target/release/concord [--targets 100000 --raters 2]

Writes a seeded long-form CSV (target, rater, score; every target scored by every rater), then
alternates the two programs, each started fresh as a process (reading the file, pivoting it to
targets x raters, the two-way ANOVA, all six ICC forms with F tests and McGraw & Wong 95% CIs,
JSON out). Checks that both print the same six ICCs to 1e-9 and prints medians and the ratio.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# The peer: what a researcher would write with pandas, numpy and scipy. Run as its own process.
PEER = r'''
import json, sys
import numpy as np
import pandas as pd
from scipy import stats

long = pd.read_csv(sys.argv[1])
wide = long.pivot(index="target", columns="rater", values="score").dropna()
m = wide.to_numpy(dtype=float)
n, k = m.shape
g = m.mean()
rm = m.mean(axis=1)
cm = m.mean(axis=0)
ssr = k * ((rm - g) ** 2).sum()
ssc = n * ((cm - g) ** 2).sum()
sse = ((m - rm[:, None] - cm[None, :] + g) ** 2).sum()
msb, msj = ssr / (n - 1), ssc / (k - 1)
mse = sse / ((n - 1) * (k - 1))
msw = (ssc + sse) / (n * (k - 1))
df1, d1k, d2k = n - 1, n * (k - 1), (n - 1) * (k - 1)
icc1 = (msb - msw) / (msb + (k - 1) * msw)
icc2 = (msb - mse) / (msb + (k - 1) * mse + k * (msj - mse) / n)
icc3 = (msb - mse) / (msb + (k - 1) * mse)
f1, f3, fj = msb / msw, msb / mse, msj / mse
p1, p3 = stats.f.sf(f1, df1, d1k), stats.f.sf(f3, df1, d2k)
f1l, f1u = f1 / stats.f.ppf(0.975, df1, d1k), f1 * stats.f.ppf(0.975, d1k, df1)
f3l, f3u = f3 / stats.f.ppf(0.975, df1, d2k), f3 * stats.f.ppf(0.975, d2k, df1)
vn = d2k * (k * icc2 * fj + n * (1 + (k - 1) * icc2) - k * icc2) ** 2
vd = df1 * k**2 * icc2**2 * fj**2 + (n * (1 + (k - 1) * icc2) - k * icc2) ** 2
v = vn / vd
f2u, f2l = stats.f.ppf(0.975, n - 1, v), stats.f.ppf(0.975, v, n - 1)
l2 = n * (msb - f2u * mse) / (f2u * (k * msj + (k * n - k - n) * mse) + n * msb)
u2 = n * (f2l * msb - mse) / (k * msj + (k * n - k - n) * mse + n * f2l * msb)
icc = [icc1, icc2, icc3, (msb - msw) / msb, (msb - mse) / (msb + (msj - mse) / n), (msb - mse) / msb]
ci = [((f1l - 1) / (f1l + k - 1), (f1u - 1) / (f1u + k - 1)), (l2, u2),
      ((f3l - 1) / (f3l + k - 1), (f3u - 1) / (f3u + k - 1)), (1 - 1 / f1l, 1 - 1 / f1u),
      (l2 * k / (1 + l2 * (k - 1)), u2 * k / (1 + u2 * (k - 1))), (1 - 1 / f3l, 1 - 1 / f3u)]
print(json.dumps({"n_targets": int(n), "icc": [float(x) for x in icc], "p": [float(p1), float(p3)],
                  "ci95": [[float(a), float(b)] for a, b in ci]}))
'''


def write_long_csv(path, n, k, seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, n)
    noise = rng.integers(-1, 2, (n, k))
    scores = np.clip(truth[:, None] + noise, 1, 5)
    with open(path, "w") as f:
        f.write("target,rater,score\n")
        for t in range(n):
            for r in range(k):
                f.write(f"t{t:06d},rater{r},{scores[t, r]}\n")


def run(cmd):
    """Wall seconds, CPU seconds (user + system of the child) and the parsed JSON output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--concord", required=True, help="path to the concord binary (release build)")
    ap.add_argument("--targets", type=int, default=100_000)
    ap.add_argument("--raters", type=int, default=2)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "long.csv")
        peer = os.path.join(tmp, "peer_icc.py")
        with open(peer, "w") as f:
            f.write(PEER)
        write_long_csv(data, args.targets, args.raters, 20261130)
        concord_cmd = [args.concord, "stats", "icc", data, "--json"]
        peer_cmd = [sys.executable, peer, data]
        _, _, c = run(concord_cmd)
        _, _, p = run(peer_cmd)
        ours = [e["icc"] for e in c["icc"]]
        for a, b in zip(ours, p["icc"]):
            assert abs(a - b) < 1e-9, f"Concord and the peer disagree: {ours} vs {p['icc']}"
        tc, tp, cc, cp = [], [], [], []
        for _ in range(args.runs):
            wall, cpu, _ = run(concord_cmd)
            tc.append(wall)
            cc.append(cpu)
            wall, cpu, _ = run(peer_cmd)
            tp.append(wall)
            cp.append(cpu)
        mc, mp = statistics.median(tc), statistics.median(tp)
        ccpu, pcpu = statistics.median(cc), statistics.median(cp)
        size = os.path.getsize(data) / 1e6
        print(f"{args.targets * args.raters:,} rows ({args.targets:,} targets x {args.raters} raters, {size:.1f} MB), "
              f"{args.runs} alternating runs each")
        print("| program | median wall | min | max | median CPU (user + sys) |")
        print("|---|---|---|---|---|")
        print(f"| concord stats icc --json | {mc * 1e3:.1f} ms | {min(tc) * 1e3:.1f} ms | {max(tc) * 1e3:.1f} ms "
              f"| {ccpu * 1e3:.1f} ms |")
        print(f"| pandas + numpy + scipy | {mp * 1e3:.1f} ms | {min(tp) * 1e3:.1f} ms | {max(tp) * 1e3:.1f} ms "
              f"| {pcpu * 1e3:.1f} ms |")
        print(f"concord / peer: wall {mc / mp:.3f}, CPU {ccpu / pcpu:.3f}")


if __name__ == "__main__":
    main()
