"""Peer timing for benches/judge_stats.rs on the files it writes into DIR.

- alt-test: the transcription of the authors' reference procedure in
  tests/vectors/alttest_ppi.py (negative RMSE, epsilon 0.2, q 0.05) on alttest_0..6.csv;
- PPI++: ppi_py.ppi_mean_pointestimate + ppi_mean_ci (alpha 0.05) per group of ppi.csv.

    pip install ppi-python scipy numpy pandas
    python judge_stats_peers.py DIR       # prints one JSON object
"""

import json
import os
import statistics
import sys
import time

import numpy as np
import pandas as pd
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "vectors"))
from alttest_ppi import alt_test  # noqa: E402


def median_time(reps, f):
    f()
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def main():
    d = sys.argv[1]
    attrs = []
    for a in range(7):
        df = pd.read_csv(os.path.join(d, f"alttest_{a}.csv"), dtype={"rater": str})
        humans = [
            dict(zip(g["item"], g["score"].astype(float)))
            for r, g in sorted(df[df.rater != "judge"].groupby("rater"), key=lambda x: int(x[0]))
        ]
        j = df[df.rater == "judge"]
        attrs.append((humans, dict(zip(j["item"], j["score"].astype(float)))))

    def run_alt():
        return [alt_test(h, j, "neg_rmse", 0.2, 0.05)["winning_rate"] for h, j in attrs]

    rates = run_alt()
    alt_s = median_time(3, run_alt)

    df = pd.read_csv(os.path.join(d, "ppi.csv"))
    groups = []
    for _, g in df.groupby("group", sort=False):
        lab = g[g.expert.notna()]
        unl = g[g.expert.isna()]
        groups.append((lab.expert.to_numpy(float), lab.judge.to_numpy(float), unl.judge.to_numpy(float)))

    def run_ppi():
        out = []
        for y, yh, yu in groups:
            est = ppi_mean_pointestimate(y, yh, yu)
            ppi_mean_ci(y, yh, yu, alpha=0.05)
            out.append(float(np.asarray(est).ravel()[0]))
        return out

    estimates = run_ppi()
    ppi_s = median_time(20, run_ppi)
    print(json.dumps({
        "alttest_seconds": alt_s,
        "alttest_winning_rates": rates,
        "ppi_seconds": ppi_s,
        "ppi_estimates": estimates,
    }))


if __name__ == "__main__":
    main()
