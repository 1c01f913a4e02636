"""Times Concord's ICC against pingouin.intraclass_corr and a vectorised numpy/scipy
implementation on the same matrices, in one run.

    pip install pingouin
    python icc_peers.py            # from this directory, or pass --crate-dir

Writes the matrices (seeded numpy generator) as wide CSV files into a temporary directory, runs
`cargo bench -p concord-stats --bench icc -- DIR` so that Concord reads the very same numbers,
times the peers, checks that all three agree on ICC(3,1), and prints a table with the ratios.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
import pandas as pd
import pingouin as pg
from scipy import stats

DESIGNS = [("icc_10000x5", 10_000, 5), ("icc_100000x2", 100_000, 2), ("icc_70000x5", 70_000, 5)]
# pingouin needs minutes on the largest design; it is timed on the first two.
PINGOUIN_DESIGNS = {"icc_10000x5", "icc_100000x2"}


def make_matrix(n, k, seed):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(1, 5, n)
    m = truth[:, None] + 0.1 * np.arange(k)[None, :] + rng.uniform(-1, 1, (n, k))
    return np.clip(m, 1, 5)


def icc_numpy(m):
    """Six ICC forms with F, p and McGraw-Wong CIs, vectorised (the same work Concord does)."""
    n, k = m.shape
    g = m.mean()
    rm = m.mean(axis=1)
    cm = m.mean(axis=0)
    ssr = k * ((rm - g) ** 2).sum()
    ssc = n * ((cm - g) ** 2).sum()
    sse = ((m - rm[:, None] - cm[None, :] + g) ** 2).sum()
    msb = ssr / (n - 1)
    msj = ssc / (k - 1)
    mse = sse / ((n - 1) * (k - 1))
    msw = (ssc + sse) / (n * (k - 1))
    df1, d1k, d2k = n - 1, n * (k - 1), (n - 1) * (k - 1)
    icc1 = (msb - msw) / (msb + (k - 1) * msw)
    icc2 = (msb - mse) / (msb + (k - 1) * mse + k * (msj - mse) / n)
    icc3 = (msb - mse) / (msb + (k - 1) * mse)
    f1, f3 = msb / msw, msb / mse
    p1, p3 = stats.f.sf(f1, df1, d1k), stats.f.sf(f3, df1, d2k)
    f1l, f1u = f1 / stats.f.ppf(0.975, df1, d1k), f1 * stats.f.ppf(0.975, d1k, df1)
    f3l, f3u = f3 / stats.f.ppf(0.975, df1, d2k), f3 * stats.f.ppf(0.975, d2k, df1)
    fj = msj / mse
    vn = d2k * (k * icc2 * fj + n * (1 + (k - 1) * icc2) - k * icc2) ** 2
    vd = df1 * k**2 * icc2**2 * fj**2 + (n * (1 + (k - 1) * icc2) - k * icc2) ** 2
    v = vn / vd
    f2u, f2l = stats.f.ppf(0.975, n - 1, v), stats.f.ppf(0.975, v, n - 1)
    l2 = n * (msb - f2u * mse) / (f2u * (k * msj + (k * n - k - n) * mse) + n * msb)
    u2 = n * (f2l * msb - mse) / (k * msj + (k * n - k - n) * mse + n * f2l * msb)
    return {
        "icc": [icc1, icc2, icc3, (msb - msw) / msb, (msb - mse) / (msb + (msj - mse) / n), (msb - mse) / msb],
        "p": [p1, p3],
        "ci": [((f1l - 1) / (f1l + k - 1), (f1u - 1) / (f1u + k - 1)), (l2, u2),
               ((f3l - 1) / (f3l + k - 1), (f3u - 1) / (f3u + k - 1)), (1 - 1 / f1l, 1 - 1 / f1u),
               (l2 * k / (1 + l2 * (k - 1)), u2 * k / (1 + u2 * (k - 1))), (1 - 1 / f3l, 1 - 1 / f3u)],
    }


def median_time(fn, budget):
    """Median seconds per call; a call longer than the budget is timed once."""
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-9)
    if once >= budget:
        return once, 1
    reps = int(min(max(budget / once, 3), 2000))
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples), reps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--crate-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--pingouin-budget", type=float, default=20.0, help="seconds per design for pingouin")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mats = {}
        for i, (name, n, k) in enumerate(DESIGNS):
            m = make_matrix(n, k, 1000 + i)
            np.savetxt(os.path.join(tmp, name + ".csv"), m, delimiter=",", fmt="%.17g")
            mats[name] = np.loadtxt(os.path.join(tmp, name + ".csv"), delimiter=",", ndmin=2)
        out = subprocess.run(["cargo", "bench", "-q", "-p", "concord-stats", "--bench", "icc", "--", tmp],
                             cwd=args.crate_dir, check=True, capture_output=True, text=True).stdout
        concord = {}
        for line in out.splitlines():
            if line.startswith("{"):
                rec = json.loads(line)
                concord[rec["bench"]] = rec
        print("| design | Concord (six forms + CIs) | numpy + scipy | pingouin | pingouin / Concord | numpy / Concord |")
        print("|---|---|---|---|---|---|")
        for name, n, k in DESIGNS:
            m = mats[name]
            long = pd.DataFrame({"target": np.repeat(np.arange(n), k), "rater": np.tile(np.arange(k), n), "score": m.ravel()})
            t_np, _ = median_time(lambda: icc_numpy(m), 2.0)
            c = concord[name]
            t_c = c["median_seconds"]
            ref = icc_numpy(m)["icc"][2]
            assert abs(c["icc3"] - ref) < 1e-9, "Concord and numpy disagree on ICC(3,1)"
            if name in PINGOUIN_DESIGNS:
                result = {}
                t_pg, reps_pg = median_time(lambda: result.update(r=pg.intraclass_corr(long, "target", "rater", "score")),
                                            args.pingouin_budget)
                assert abs(result["r"]["ICC"].iloc[2] - ref) < 1e-9, "pingouin disagrees on ICC(3,1)"
                pg_cell, ratio = f"{t_pg:.2f} s ({reps_pg} run{'s' if reps_pg > 1 else ''})", f"{t_pg / t_c:,.0f}x"
            else:
                pg_cell, ratio = "not run", "—"
            print(f"| {n:,} x {k} | {t_c * 1e3:.3f} ms | {t_np * 1e3:.3f} ms | {pg_cell} | {ratio} | {t_np / t_c:.1f}x |",
                  flush=True)
        for key in ["bootstrap_mentalalign_9_pairs_1000", "bootstrap_item_level_1000_pairs_1000"]:
            print(f"{key}: Concord {concord[key]['median_seconds'] * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
