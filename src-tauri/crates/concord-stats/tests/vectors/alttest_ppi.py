"""Reference vectors for concord-stats' Alternative Annotator Test and PPI++ means.

Writes alttest_ppi.json beside this file.

- Alt-test: a transcription, written for Concord, of the procedure of Calderon, Reichart & Dror
  (ACL 2025) as their reference implementation (github.com/nitaytech/AltTest) runs it: items with
  at least two human labels and a judge label; leave each annotator out (skipping annotators with
  fewer than 30 such items); score the judge and the left-out annotator against the remaining
  annotators (accuracy or negative RMSE); indicators with ties counting for both; scipy's
  one-sample t-test of (human indicator - judge indicator) against epsilon with
  alternative="less"; Benjamini-Yekutieli at q = alpha; winning rate and advantage probability.
- PPI++: the `ppi-python` package itself (ppi_mean_pointestimate, ppi_mean_ci with the
  power-tuned lambda, classical_mean_ci), alpha = 0.05.

    pip install ppi-python scipy numpy
    python alttest_ppi.py

Every random case uses a fixed numpy seed. Non-finite values are written as null.
"""

import json
import math
import os
import warnings

import numpy as np
import ppi_py
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from ppi_py.ppi import _calc_lam_glm
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))


def num(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


# ------------------------------------------------------------------ alt-test


def agreement_share(label, others):
    return float(np.mean([label == o for o in others]))


def negative_rmse(label, others):
    return -1.0 * float(np.sqrt(np.mean([(label - o) ** 2 for o in others])))


def benjamini_yekutieli_rejections(p_values, q):
    p = np.array(p_values, dtype=float)
    m = len(p)
    order = np.argsort(p)
    harmonic = np.sum(1.0 / np.arange(1, m + 1))
    thresholds = (np.arange(1, m + 1) / m) * (q / harmonic)
    last = -1
    for rank in range(m):
        if p[order[rank]] <= thresholds[rank]:
            last = rank
    return [] if last < 0 else list(order[: last + 1])


def alt_test(humans, judge, metric, epsilon, alpha, min_humans=2, min_items=30):
    """humans: list over annotators of {item: label}; judge: {item: label}."""
    score = agreement_share if metric == "accuracy" else negative_rmse
    raters_of = {}
    for h, labels in enumerate(humans):
        for i in labels:
            raters_of.setdefault(i, []).append(h)
    kept = {i for i, hs in raters_of.items() if len(hs) >= min_humans and i in judge}
    p_values, outcomes, skipped = [], [], []
    for h, labels in enumerate(humans):
        items = [i for i in labels if i in kept]
        if len(items) < min_items:
            if items:
                skipped.append([h, len(items)])
            continue
        judge_wins, human_wins = [], []
        for i in items:
            others = [humans[g][i] for g in raters_of[i] if g != h]
            s_h = score(labels[i], others)
            s_j = score(judge[i], others)
            judge_wins.append(1 if s_j >= s_h else 0)
            human_wins.append(1 if s_h >= s_j else 0)
        d = [a - b for a, b in zip(human_wins, judge_wins)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = stats.ttest_1samp(d, epsilon, alternative="less").pvalue
        p_values.append(p)
        outcomes.append(
            {
                "rater": h,
                "n_items": len(items),
                "p_value": num(p),
                "rho_judge": float(np.mean(judge_wins)),
                "rho_human": float(np.mean(human_wins)),
            }
        )
    rejected = set(int(k) for k in benjamini_yekutieli_rejections(p_values, alpha))
    for k, o in enumerate(outcomes):
        o["won"] = k in rejected
    winning_rate = len(rejected) / len(outcomes)
    return {
        "winning_rate": winning_rate,
        "advantage_probability": float(np.mean([o["rho_judge"] for o in outcomes])),
        "passed": winning_rate >= 0.5,
        "annotators": outcomes,
        "skipped": skipped,
    }


def alt_case(name, why, matrix, judge_vec, metric, epsilon=0.2, alpha=0.05):
    n_items, n_ann = len(matrix), len(matrix[0])
    humans = [
        {i: matrix[i][h] for i in range(n_items) if matrix[i][h] is not None}
        for h in range(n_ann)
    ]
    judge = {i: v for i, v in enumerate(judge_vec) if v is not None}
    res = alt_test(humans, judge, metric, epsilon, alpha)
    return {
        "name": name,
        "why": why,
        "metric": metric,
        "epsilon": epsilon,
        "alpha": alpha,
        "humans": matrix,
        "judge": judge_vec,
        **res,
    }


def simulate_labels(seed, n_items, n_ann, per_item, kind, judge_noise, ann_noise):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n_items) if kind == "binary" else rng.integers(1, 6, n_items)
    matrix = [[None] * n_ann for _ in range(n_items)]
    judge = []
    for i in range(n_items):
        k = per_item if per_item else n_ann
        raters = sorted(rng.choice(n_ann, size=k, replace=False))
        for h in raters:
            matrix[i][h] = float(noisy(rng, truth[i], kind, ann_noise[h]))
        judge.append(float(noisy(rng, truth[i], kind, judge_noise)))
    return matrix, judge


def noisy(rng, value, kind, p):
    if rng.random() >= p:
        return value
    if kind == "binary":
        return 1 - value
    return int(min(5, max(1, value + rng.choice([-2, -1, 1, 2]))))


def alt_cases():
    out = []
    m, j = simulate_labels(1, 120, 5, 3, "binary", 0.10, [0.15, 0.2, 0.1, 0.25, 0.2])
    out.append(alt_case("binary_3_of_5_good_judge", "incomplete binary design, judge better than annotators", m, j, "accuracy"))
    m, j = simulate_labels(2, 120, 5, 3, "binary", 0.40, [0.1, 0.1, 0.15, 0.1, 0.1])
    out.append(alt_case("binary_3_of_5_poor_judge", "judge much noisier than annotators", m, j, "accuracy"))
    m, j = simulate_labels(3, 80, 4, None, "likert", 0.25, [0.3, 0.35, 0.3, 0.4])
    out.append(alt_case("likert_complete_neg_rmse", "four annotators rate everything, 1-5 scores", m, j, "neg_rmse"))
    m, j = simulate_labels(4, 80, 4, None, "likert", 0.25, [0.3, 0.35, 0.3, 0.4])
    out.append(alt_case("likert_accuracy_eps_0.1_alpha_0.1", "accuracy on Likert labels, other epsilon and alpha", m, j, "accuracy", epsilon=0.1, alpha=0.1))
    m, j = simulate_labels(5, 100, 6, 3, "likert", 0.3, [0.3] * 6)
    # Annotator 5 keeps only its first 20 items: it is skipped (fewer than 30).
    seen = 0
    for row in m:
        if row[5] is not None:
            seen += 1
            if seen > 20:
                row[5] = None
    out.append(alt_case("skipped_annotator", "one annotator with fewer than 30 items is skipped", m, j, "neg_rmse"))
    # Everyone, the judge included, agrees on every item: every difference is 0 < epsilon.
    m = [[1.0, 1.0, 1.0] if i % 2 else [0.0, 0.0, 0.0] for i in range(40)]
    j = [1.0 if i % 2 else 0.0 for i in range(40)]
    out.append(alt_case("unanimous", "zero-variance differences: t = -inf", m, j, "accuracy"))
    # Missing judge labels on some items.
    m, j = simulate_labels(6, 90, 3, None, "binary", 0.15, [0.15, 0.15, 0.15])
    for i in range(0, 90, 9):
        j[i] = None
    out.append(alt_case("three_annotators_missing_judge", "the minimum of three annotators; judge skipped some items", m, j, "accuracy"))
    return out


# ------------------------------------------------------------------ PPI++


def ppi_case(name, why, expert, judge_labeled, judge_unlabeled, alpha=0.05):
    y = np.asarray(expert, dtype=float)
    yh = np.asarray(judge_labeled, dtype=float)
    yu = np.asarray(judge_unlabeled, dtype=float)
    est = ppi_mean_pointestimate(y, yh, yu)
    lo, hi = ppi_mean_ci(y, yh, yu, alpha=alpha)
    # The same power-tuned lambda ppi_mean_ci computes internally.
    centre = ppi_mean_pointestimate(y, yh, yu, lam=1)
    lam = _calc_lam_glm(
        (y - centre).reshape(-1, 1),
        (yh - centre).reshape(-1, 1),
        (yu - centre).reshape(-1, 1),
        np.eye(1),
        clip=True,
    )
    c_lo, c_hi = classical_mean_ci(y, alpha=alpha)
    return {
        "name": name,
        "why": why,
        "alpha": alpha,
        "expert": list(map(float, y)),
        "judge_labeled": list(map(float, yh)),
        "judge_unlabeled": list(map(float, yu)),
        "estimate": num(np.asarray(est).ravel()[0]),
        "ci": [num(np.asarray(lo).ravel()[0]), num(np.asarray(hi).ravel()[0])],
        "lambda": num(lam),
        "classical_estimate": num(y.mean()),
        "classical_ci": [num(np.asarray(c_lo).ravel()[0]), num(np.asarray(c_hi).ravel()[0])],
    }


def ppi_cases():
    rng = np.random.default_rng(7)
    out = []

    def likert(truth, bias, noise):
        return np.clip(np.round(truth + bias + rng.normal(0, noise, truth.shape)), 1, 5)

    t = rng.uniform(1, 5, 1050)
    out.append(ppi_case("likert_biased_judge", "judge +0.5 biased, 50 expert of 1,050",
                        likert(t[:50], 0, 0.5), likert(t[:50], 0.5, 0.7), likert(t[50:], 0.5, 0.7)))
    t = rng.uniform(1, 5, 5200)
    out.append(ppi_case("likert_large", "200 expert ratings, 5,000 judge-only",
                        likert(t[:200], 0, 0.6), likert(t[:200], -0.3, 0.6), likert(t[200:], -0.3, 0.6)))
    b = (rng.random(600) < 0.3).astype(float)
    flip = rng.random(600) < 0.1
    j = np.where(flip, 1 - b, b)
    out.append(ppi_case("binary_crisis", "0/1 crisis dimension, 100 of 600 labelled", b[:100], j[:100], j[100:]))
    y = rng.normal(3, 1, 30)
    out.append(ppi_case("negative_correlation", "judge anti-correlated: lambda clipped to 0", y, 6 - y + rng.normal(0, 0.1, 30), rng.normal(3, 1, 100)))
    yh = rng.normal(0, 1, 40)
    out.append(ppi_case("lambda_clipped_to_one", "expert = 2 x judge: raw lambda above 1", 2 * yh, yh, rng.normal(0, 1, 400)))
    y = rng.integers(1, 6, 12).astype(float)
    out.append(ppi_case("small", "12 labelled, 20 unlabelled", y, np.clip(y + rng.integers(-1, 2, 12), 1, 5), rng.integers(1, 6, 20).astype(float)))
    return out


def main():
    doc = {
        "generator": "alttest_ppi.py",
        "versions": {"numpy": np.__version__, "scipy": __import__("scipy").__version__,
                     "ppi_python": getattr(ppi_py, "__version__", "0.2.3")},
        "alttest": alt_cases(),
        "ppi": ppi_cases(),
    }
    with open(os.path.join(HERE, "alttest_ppi.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    for c in doc["alttest"]:
        print(c["name"], c["winning_rate"], round(c["advantage_probability"], 3), [a["p_value"] for a in c["annotators"]], c["skipped"])
    for c in doc["ppi"]:
        print(c["name"], c["estimate"], c["lambda"], c["ci"], c["classical_ci"])


if __name__ == "__main__":
    main()
