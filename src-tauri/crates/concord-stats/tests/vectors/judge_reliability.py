"""Reference vectors for concord-stats' judge reliability figures (repetitions, calibration, bias).

Writes judge_reliability.json beside this file. Peers:
- krippendorff (0.9 or later): alpha across a judge's repetitions (interval metric for 1-5,
  nominal for 0/1), repetitions as coders and responses as units;
- numpy: median and mean of repetitions, the within-response sample SD (ddof=1), exact agreement
  between repetitions (the share of agreeing pairs per response, averaged), tertile cuts
  (np.quantile, linear), and the hand-computed ECE (equal-width bins, the last one closed) and
  Brier score;
- scipy: the mode of repetitions (ties to the lowest value, scipy.stats.mode), the one-sample t
  interval of a mean bias;
- pingouin: ICC(A,1) (ICC2) of the judge's k-repetition aggregate against the expert mean, and
  the one-way ICC(1,1) of its repetitions, which the Spearman-Brown prediction steps up;
- statsmodels: the OLS slope of (judge - expert mean) on ln(length) with its conf_int(), and
  Welch's interval of a difference of means (CompareMeans.tconfint_diff(usevar="unequal")).

    pip install krippendorff statsmodels pingouin numpy scipy
    python judge_reliability.py

Every random case uses a fixed numpy seed. Non-finite values are written as null.
"""

import json
import math
import os
from importlib.metadata import version

import krippendorff
import numpy as np
import pandas as pd
import pingouin as pg
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

HERE = os.path.dirname(os.path.abspath(__file__))


def num(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def rows_json(m):
    return [[None if (v is None or (isinstance(v, float) and math.isnan(v))) else float(v) for v in r] for r in m]


def judge_reps(rng, n, k, scale, noise, missing):
    truth = rng.integers(0, len(scale), size=n)
    out = []
    for i in range(n):
        row = []
        for _ in range(k):
            j = int(np.clip(truth[i] + rng.integers(-noise, noise + 1), 0, len(scale) - 1))
            v = float(scale[j])
            if rng.random() < missing:
                v = float("nan")
            row.append(v)
        out.append(row)
    return np.array(out, dtype=float), truth


def exact_agreement(m):
    shares = []
    for r in m:
        v = [x for x in r if not math.isnan(x)]
        if len(v) < 2:
            continue
        pairs = agree = 0
        for a in range(len(v)):
            for b in range(a + 1, len(v)):
                pairs += 1
                agree += v[a] == v[b]
        shares.append(agree / pairs)
    return float(np.mean(shares)) if shares else None


def within_sd(m):
    sds = [np.std([x for x in r if not math.isnan(x)], ddof=1) for r in m
           if sum(not math.isnan(x) for x in r) >= 2]
    return float(np.mean(sds)) if sds else None


def consistency_case(name, why, m, scale, metric):
    return {
        "name": name,
        "why": why,
        "scale": [float(s) for s in scale],
        "kind": "likert" if metric == "interval" else "binary",
        "rows": rows_json(m),
        "alpha": num(krippendorff.alpha(reliability_data=m.T, level_of_measurement=metric,
                                        value_domain=[float(s) for s in scale])),
        "exact_agreement": num(exact_agreement(m)),
        "mean_within_sd": num(within_sd(m)),
    }


def aggregates(m):
    out = []
    for r in m:
        v = np.array([x for x in r if not math.isnan(x)])
        if len(v) == 0:
            continue
        out.append({
            "values": v.tolist(),
            "median": float(np.median(v)),
            "mean": float(np.mean(v)),
            "mode": float(stats.mode(v, keepdims=False).mode),
        })
    return out


def icc_of(matrix, form):
    n, k = matrix.shape
    df = pd.DataFrame([(i, j, matrix[i, j]) for i in range(n) for j in range(k)],
                      columns=["t", "r", "s"])
    # Rows by position (pingouin 0.7 names them ICC(1,1), ICC(A,1), ...; earlier ICC1, ICC2, ...).
    t = pg.intraclass_corr(df, targets="t", raters="r", ratings="s")
    return t.iloc[{"ICC1": 0, "ICC2": 1}[form]]


def ci_column(row):
    return "CI95" if "CI95" in row.index else "CI95%"


def needed_case(name, why, seed, n, k, noise, bias):
    rng = np.random.default_rng(seed)
    expert = rng.integers(1, 6, size=n).astype(float) + rng.normal(0, 0.3, size=n)
    reps = np.clip(np.rint(expert[:, None] + bias + rng.normal(0, noise, size=(n, k))), 1, 5)
    rho1 = float(icc_of(reps, "ICC1")["ICC"])
    rows = []
    icc1 = None
    for kk in range(1, k + 1):
        agg = np.median(reps[:, :kk], axis=1)
        e = icc_of(np.column_stack([expert, agg]), "ICC2")
        icc = float(e["ICC"])
        if kk == 1:
            icc1 = icc
        rho_k = kk * rho1 / (1 + (kk - 1) * rho1)
        rows.append({
            "k": kk,
            "icc_a1": icc,
            # pingouin 0.7 rounds its interval to two decimals: checked to 0.005.
            "ci95": [float(e[ci_column(e)][0]), float(e[ci_column(e)][1])],
            "predicted_reliability": rho_k,
            "predicted_icc_a1": icc1 * math.sqrt(rho_k / rho1),
        })
    return {"name": name, "why": why, "rows_in": rows_json(reps), "expert_mean": expert.tolist(),
            "repetitions": k, "aggregate": "median", "rho1": rho1, "rows": rows}


def calibration_case(name, why, p, y, bins):
    p = np.asarray(p, float)
    y = np.asarray(y, float)
    idx = np.minimum(np.floor(p * bins).astype(int), bins - 1)
    ece = 0.0
    out = []
    for b in range(bins):
        sel = idx == b
        c = int(sel.sum())
        if c:
            ece += c / len(p) * abs(p[sel].mean() - y[sel].mean())
        out.append({"n": c, "mean_predicted": num(p[sel].mean()) if c else None,
                    "observed_rate": num(y[sel].mean()) if c else None})
    return {"name": name, "why": why, "p": p.tolist(), "y": y.tolist(), "n_bins": bins,
            "ece": float(ece), "brier": float(np.mean((p - y) ** 2)), "bins": out}


def main():
    rng = np.random.default_rng(27)
    likert, _ = judge_reps(rng, 40, 3, [1, 2, 3, 4, 5], 1, 0.1)
    binary, _ = judge_reps(rng, 50, 5, [0, 1], 1, 0.05)
    steady, _ = judge_reps(rng, 30, 4, [1, 2, 3, 4, 5], 0, 0.0)
    consistency = [
        consistency_case("likert_3_reps", "a 1-5 judge at temperature 0.7, 3 repetitions, 10% missing",
                         likert, [1, 2, 3, 4, 5], "interval"),
        consistency_case("binary_5_reps", "a 0/1 dimension, 5 repetitions, nominal metric",
                         binary, [0, 1], "nominal"),
        consistency_case("steady_judge", "a judge that never changes its mind: alpha 1",
                         steady, [1, 2, 3, 4, 5], "interval"),
    ]
    needed = [
        needed_case("noisy_judge", "noise SD 1 around the expert mean, +0.4 bias, K = 5", 5, 60, 5, 1.0, 0.4),
        needed_case("steadier_judge", "noise SD 0.5, no bias, K = 3", 6, 45, 3, 0.5, 0.0),
    ]
    crng = np.random.default_rng(11)
    p = np.round(crng.random(200), 3)
    p[:5] = [0.0, 1.0, 0.1, 0.3, 0.9]
    y = (crng.random(200) < p * 0.8 + 0.1).astype(float)
    calibration = [
        calibration_case("ten_bins", "200 predictions, 10 equal-width bins, edges 0, 0.1, 0.3 and 1 included",
                         p, y, 10),
        calibration_case("repetition_frequencies", "5 repetitions: predictions are multiples of 0.2",
                         np.round(crng.integers(0, 6, 80) / 5, 10), (crng.random(80) < 0.5).astype(float), 10),
        calibration_case("five_bins", "the same 200 predictions in 5 bins", p, y, 5),
    ]
    lrng = np.random.default_rng(3)
    loglen = np.log(lrng.integers(80, 3000, 120).astype(float))
    d = 0.3 * (loglen - loglen.mean()) + lrng.normal(0.2, 0.8, 120)
    ols = sm.OLS(d, sm.add_constant(loglen)).fit()
    own = lrng.normal(0.6, 0.9, 25)
    other = lrng.normal(0.2, 0.7, 140)
    cm = CompareMeans(DescrStatsW(own), DescrStatsW(other))
    lo, hi = cm.tconfint_diff(alpha=0.05, usevar="unequal")
    t_lo, t_hi = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    expert_mean = lrng.integers(1, 6, 50) + lrng.choice([0.0, 0.5], 50)
    bias = {
        "length": {"log_length": loglen.tolist(), "d": d.tolist(), "slope": float(ols.params[1]),
                   "ci95": [float(ols.conf_int()[1][0]), float(ols.conf_int()[1][1])]},
        "welch": {"a": own.tolist(), "b": other.tolist(), "difference": float(own.mean() - other.mean()),
                  "ci95": [float(lo), float(hi)]},
        "mean": {"d": d.tolist(), "mean": float(d.mean()), "ci95": [float(t_lo), float(t_hi)]},
        "tertiles": {"values": expert_mean.tolist(),
                     "cuts": [float(np.quantile(expert_mean, 1 / 3)), float(np.quantile(expert_mean, 2 / 3))]},
    }
    doc = {
        "generator": "judge_reliability.py",
        "versions": {p: version(p) for p in ("krippendorff", "numpy", "pingouin", "statsmodels", "scipy")},
        "aggregates": aggregates(likert) + aggregates(binary) + aggregates(np.array([[3.0, 5.0, 5.0, 3.0, 4.0], [2.0, 5.0, np.nan, np.nan, np.nan]])),
        "consistency": consistency,
        "repetitions_needed": needed,
        "calibration": calibration,
        "bias": bias,
    }
    with open(os.path.join(HERE, "judge_reliability.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
