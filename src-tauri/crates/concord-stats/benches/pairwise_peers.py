"""Peer timing for benches/pairwise.rs on the pairs.csv it writes into DIR (100,000 comparisons
of 10 sources in 10,000 conversations; columns conversation, left, right, outcome).

- split ties: choix.ilsr_pairwise_dense on W + T/2 (the counts built with numpy from the
  columns, included in the time) and evalica.bradley_terry (tie weight 0.5) on the raw columns;
- Davidson ties: evalica.newman on the raw columns (nu = 2 v);
- bootstraps of 1,000 conversation resamples (numpy's generator, seed 1; numpy linear
  percentiles 2.5 and 97.5): split ties with choix, each replicate's counts a weighted sum of
  per-conversation count matrices; Davidson ties with evalica.newman, each comparison weighted
  by how often its conversation was drawn.

    pip install choix evalica numpy pandas
    python pairwise_peers.py DIR       # prints one JSON object
"""

import json
import os
import resource
import statistics
import sys
import time
from importlib.metadata import version

import choix
import evalica
import numpy as np
import pandas as pd

N = 10
RESAMPLES = 1000


def median_time(reps, f):
    f()
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def once(f):
    t = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t


def centred_log(scores):
    s = np.log(scores.reindex(range(N)).to_numpy(float))
    return s - s.mean()


def main():
    df = pd.read_csv(os.path.join(sys.argv[1], "pairs.csv"))
    conv = df.conversation.to_numpy()
    left = df.left.to_numpy()
    right = df.right.to_numpy()
    outcome = df.outcome.to_numpy()
    is_left, is_right, is_tie = outcome == "left", outcome == "right", outcome == "tie"
    index = pd.Index(range(N))
    xs, ys = left.tolist(), right.tolist()
    code = {"left": evalica.Winner.X, "right": evalica.Winner.Y, "tie": evalica.Winner.Draw}
    winners = [code[o] for o in outcome]

    def split_matrix(weights=None):
        w = np.ones(len(df)) if weights is None else weights
        m = np.zeros((N, N))
        np.add.at(m, (left[is_left], right[is_left]), w[is_left])
        np.add.at(m, (right[is_right], left[is_right]), w[is_right])
        np.add.at(m, (left[is_tie], right[is_tie]), w[is_tie] / 2)
        np.add.at(m, (right[is_tie], left[is_tie]), w[is_tie] / 2)
        return m

    def choix_split():
        p = choix.ilsr_pairwise_dense(split_matrix(), alpha=0.0, tol=1e-12, max_iter=10000)
        return p - p.mean()

    def evalica_split():
        return evalica.bradley_terry(xs, ys, winners, index=index, tolerance=1e-12, limit=10000)

    def evalica_davidson(weights=None):
        return evalica.newman(xs, ys, winners, index=index, weights=weights, tolerance=1e-12,
                              limit=10000)

    choix_strengths = choix_split()
    choix_s = median_time(11, choix_split)
    evalica_strengths = centred_log(evalica_split().scores)
    evalica_s = median_time(11, evalica_split)
    nm = evalica_davidson()
    davidson_strengths = centred_log(nm.scores)
    davidson_s = median_time(11, evalica_davidson)

    n_conv = int(conv.max()) + 1
    # Per-conversation split counts: a replicate's matrix is their weighted sum.
    per_conv = np.zeros((n_conv, N, N))
    np.add.at(per_conv, (conv[is_left], left[is_left], right[is_left]), 1.0)
    np.add.at(per_conv, (conv[is_right], right[is_right], left[is_right]), 1.0)
    np.add.at(per_conv, (conv[is_tie], left[is_tie], right[is_tie]), 0.5)
    np.add.at(per_conv, (conv[is_tie], right[is_tie], left[is_tie]), 0.5)
    flat = per_conv.reshape(n_conv, N * N)

    def choix_bootstrap():
        rng = np.random.default_rng(1)
        reps = []
        for _ in range(RESAMPLES):
            draws = np.bincount(rng.integers(0, n_conv, n_conv), minlength=n_conv)
            m = (draws @ flat).reshape(N, N)
            p = choix.ilsr_pairwise_dense(m, alpha=0.0, tol=1e-12, max_iter=10000)
            reps.append(p - p.mean())
        return np.percentile(np.array(reps), [2.5, 97.5], axis=0)

    def evalica_bootstrap():
        rng = np.random.default_rng(1)
        reps = []
        for _ in range(RESAMPLES):
            draws = np.bincount(rng.integers(0, n_conv, n_conv), minlength=n_conv)
            reps.append(centred_log(evalica_davidson(draws[conv].astype(float).tolist()).scores))
        return np.percentile(np.array(reps), [2.5, 97.5], axis=0)

    split_ci, split_boot_s = once(choix_bootstrap)
    davidson_ci, davidson_boot_s = once(evalica_bootstrap)
    print(json.dumps({
        "versions": {p: version(p) for p in ("choix", "evalica", "numpy", "pandas")}
        | {"python": sys.version.split()[0]},
        "choix_split_s": choix_s,
        "choix_split_strengths": choix_strengths.tolist(),
        "evalica_split_s": evalica_s,
        "evalica_split_strengths": evalica_strengths.tolist(),
        "evalica_davidson_s": davidson_s,
        "evalica_davidson_strengths": davidson_strengths.tolist(),
        "evalica_davidson_nu": 2 * nm.v,
        "choix_split_bootstrap_s": split_boot_s,
        "choix_split_bootstrap_resamples": RESAMPLES,
        "choix_split_bootstrap_mean_ci_width": float(np.mean(split_ci[1] - split_ci[0])),
        "evalica_davidson_bootstrap_s": davidson_boot_s,
        "evalica_davidson_bootstrap_resamples": RESAMPLES,
        "evalica_davidson_bootstrap_mean_ci_width": float(np.mean(davidson_ci[1] - davidson_ci[0])),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


if __name__ == "__main__":
    main()
