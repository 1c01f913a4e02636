"""Reference vectors for concord-stats, computed by peer implementations.

Writes reference.json beside this file. Peers: pingouin (ICC), statsmodels (Cohen's kappa, Fleiss'
kappa, Wilson intervals), irrCAC (percent agreement, Fleiss' kappa, Gwet's AC1/AC2), krippendorff
(alpha), scipy (correlations, F/t quantiles and survival functions), mpmath (40-digit F tail
areas), numpy (percentiles and the
textbook formulas for bias, limits of agreement and Lin's CCC).

    pip install pingouin statsmodels irrCAC krippendorff mpmath
    python generate.py

Every random case uses a fixed numpy seed, so reruns give the same file. Non-finite values are
written as null.
"""

import json
import math
import os

import krippendorff
import mpmath
import numpy as np
import pandas as pd
import pingouin as pg
import scipy
import statsmodels
from irrCAC.raw import CAC
from scipy import stats
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

HERE = os.path.dirname(os.path.abspath(__file__))
# pingouin rounds the ICC confidence bounds to two decimals by default; switch that off.
pg.options["round.column.CI95"] = None


def num(x):
    """A float for JSON, or None when NaN/inf."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def matrix_json(m):
    return [[num(v) for v in row] for row in np.asarray(m, dtype=float)]


# ---------------------------------------------------------------- ICC (pingouin)


def icc_case(name, why, m):
    m = np.asarray(m, dtype=float)
    n, k = m.shape
    long = pd.DataFrame(
        [(i, j, m[i, j]) for i in range(n) for j in range(k)],
        columns=["target", "rater", "score"],
    )
    res = pg.intraclass_corr(long, "target", "rater", "score", nan_policy="omit")
    used = int((~np.isnan(m)).all(axis=1).sum())
    codes = ["ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"]
    rows = []
    for code, (_, r) in zip(codes, res.iterrows()):
        rows.append(
            {
                "type": code,
                "icc": num(r["ICC"]),
                "f": num(r["F"]),
                "df1": num(r["df1"]),
                "df2": num(r["df2"]),
                "p": num(r["pval"]),
                "ci95": [num(r["CI95"][0]), num(r["CI95"][1])],
            }
        )
    return {"name": name, "why": why, "n": n, "k": k, "matrix": matrix_json(m),
            "n_targets_used": used, "expected": rows}


def icc_cases():
    rng = np.random.default_rng(20240501)
    out = []
    sf = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    out.append(icc_case("shrout_fleiss_1979", "published 6 x 4 worked example", sf))
    wine = pg.read_dataset("icc").pivot_table(index="Wine", columns="Judge", values="Scores")
    out.append(icc_case("pingouin_wine", "pingouin's documented example (8 wines x 4 judges)", wine.values))
    truth = rng.normal(0, 1, 25)
    biased = truth[:, None] + np.array([0.0, 0.8, -0.5]) + rng.normal(0, 0.5, (25, 3))
    out.append(icc_case("biased_raters", "raters with systematic offsets: A-forms below C-forms", biased))
    latent = rng.normal(3, 1, 30)
    likert = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.7, (30, 4))), 1, 5)
    out.append(icc_case("likert_1_5", "integer 1-5 scores with ties", likert))
    miss = likert[:15, :3].copy()
    miss[2, 1] = np.nan
    miss[7, 0] = np.nan
    miss[11, 2] = np.nan
    out.append(icc_case("missing_values", "targets with a missing score are dropped", miss))
    # pingouin refuses fewer than 5 scores, so the smallest designs it takes are 2 x 3 and 3 x 2.
    out.append(icc_case("tiny_2x3", "two targets, three raters", [[1, 2, 2], [3, 5, 4]]))
    out.append(icc_case("tiny_3x2", "three targets, two raters", [[4, 5], [2, 2], [3, 5]]))
    a = rng.normal(0, 1, 12)
    neg = np.column_stack([a, -a + rng.normal(0, 0.3, 12)])
    out.append(icc_case("negative_icc", "raters ordering targets oppositely", neg))
    const = np.column_stack([np.full(12, 3.0), np.clip(np.rint(rng.normal(3, 1, 12)), 1, 5),
                             np.clip(np.rint(rng.normal(3, 1, 12)), 1, 5)])
    out.append(icc_case("constant_rater", "one rater gives the same score to every target", const))
    sys = rng.normal(3.5, 0.4, 9)
    ma = np.column_stack([sys, sys + 0.3 + rng.normal(0, 0.15, 9)])
    out.append(icc_case("mentalalign_9x2", "system-level design: 9 sources x (expert, judge)", ma))
    big = rng.normal(0, 1, 2000)[:, None] + rng.normal(0, 1.3, (2000, 5)) + np.array([0, 0.1, 0.2, -0.1, 0.05])
    out.append(icc_case("large_2000x5", "large degrees of freedom for the F quantiles", big))
    return out


# ---------------------------------------------------------------- paired comparison


def paired_case(name, why, a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    d = a - b
    n = len(a)
    bias = d.mean()
    sd = d.std(ddof=1) if n > 1 else float("nan")
    t = stats.t.ppf(0.975, n - 1) if n > 1 else float("nan")
    se_limit = math.sqrt(3 * sd * sd / n) if n > 1 else float("nan")
    lo, hi = bias - 1.96 * sd, bias + 1.96 * sd
    with np.errstate(all="ignore"):
        const = np.ptp(a) == 0 or np.ptp(b) == 0
        pear = float("nan") if const else stats.pearsonr(a, b)[0]
        spear = float("nan") if const else stats.spearmanr(a, b)[0]
        kend = float("nan") if const else stats.kendalltau(a, b, variant="b")[0]
    va, vb = a.var(ddof=0), b.var(ddof=0)
    cov = ((a - a.mean()) * (b - b.mean())).mean()
    ccc = 2 * cov / (va + vb + (a.mean() - b.mean()) ** 2)
    return {
        "name": name, "why": why, "a": a.tolist(), "b": b.tolist(),
        "expected": {
            "n": n, "bias": num(bias), "sd_diff": num(sd), "loa95": [num(lo), num(hi)],
            "bias_ci95": [num(bias - t * sd / math.sqrt(n)), num(bias + t * sd / math.sqrt(n))],
            "loa_lower_ci95": [num(lo - t * se_limit), num(lo + t * se_limit)],
            "loa_upper_ci95": [num(hi - t * se_limit), num(hi + t * se_limit)],
            "mse": num((d ** 2).mean()), "rmse": num(math.sqrt((d ** 2).mean())),
            "mae": num(np.abs(d).mean()), "pearson": num(pear), "spearman": num(spear),
            "kendall_tau_b": num(kend), "lin_ccc": num(ccc),
        },
    }


def paired_cases():
    rng = np.random.default_rng(7)
    out = []
    x = rng.normal(3, 1, 60)
    out.append(paired_case("continuous_biased", "judge scores 0.4 above the expert with noise", x + 0.4 + rng.normal(0, 0.5, 60), x))
    e = np.clip(np.rint(rng.normal(3, 1, 80)), 1, 5)
    j = np.clip(e + rng.choice([-1, 0, 0, 1, 1], 80), 1, 5)
    out.append(paired_case("likert_ties", "1-5 scores: many ties for the rank correlations", j, e))
    t1 = rng.integers(0, 6, 40)
    t2 = np.clip(t1 + rng.integers(-1, 2, 40), 0, 5)
    out.append(paired_case("psycrisis_totals", "0-5 safety totals", t1, t2))
    out.append(paired_case("tiny_n3", "three pairs", [1, 2, 4], [2, 2, 3]))
    out.append(paired_case("constant_b", "one side constant: correlations undefined", [1, 2, 3, 4], [2, 2, 2, 2]))
    return out


# ---------------------------------------------------------------- categorical


def categorical_case(name, why, rows, categories):
    """rows: items x raters with None for missing."""
    m = np.array([[np.nan if v is None else v for v in r] for r in rows], dtype=float)
    n_items, n_raters = m.shape
    df = pd.DataFrame(m)
    exp = {}

    def cac(weights, fn):
        c = CAC(df.copy(), weights=weights, categories=list(categories), digits=17)
        res = getattr(c, fn)()
        return res["est"]

    g = cac("identity", "gwet")
    exp["percent_agreement"] = num(g["pa"])
    exp["gwet_ac1"] = num(g["coefficient_value"])
    exp["gwet_ac2_linear"] = num(cac("linear", "gwet")["coefficient_value"])
    exp["gwet_ac2_quadratic"] = num(cac("quadratic", "gwet")["coefficient_value"])
    exp["fleiss_kappa"] = num(cac("identity", "fleiss")["coefficient_value"])
    complete = ~np.isnan(m).any(axis=1)
    if complete.all():
        counts, _ = aggregate_raters(m.astype(int) if np.all(m == np.round(m)) else m, n_cat=None)
        # statsmodels on the same count table with every declared category present
        table = np.zeros((n_items, len(categories)))
        for c_i, c in enumerate(categories):
            table[:, c_i] = (m == c).sum(axis=1)
        exp["fleiss_kappa_statsmodels"] = num(fleiss_kappa(table, method="fleiss"))
    if n_raters == 2:
        both = complete
        t = np.zeros((len(categories), len(categories)))
        for a, b in m[both]:
            t[categories.index(a), categories.index(b)] += 1
        with np.errstate(all="ignore"):
            exp["cohen_kappa"] = num(cohens_kappa(t, return_results=False))
            exp["cohen_kappa_linear"] = num(cohens_kappa(t, wt="linear", return_results=False))
            exp["cohen_kappa_quadratic"] = num(cohens_kappa(t, wt="quadratic", return_results=False))
        n = t.sum()
        po = np.trace(t) / n
        q = len(categories)
        exp["pabak"] = num((q * po - 1) / (q - 1))
        if q == 2:
            exp["prevalence_index"] = num(abs(t[0, 0] - t[1, 1]) / n)
            exp["bias_index"] = num(abs(t[0, 1] - t[1, 0]) / n)
    else:
        exp["cohen_kappa"] = None
    for level in ["nominal", "ordinal", "interval", "ratio"]:
        try:
            with np.errstate(all="ignore"):
                a = krippendorff.alpha(reliability_data=m.T, level_of_measurement=level,
                                       value_domain=list(categories))
        except (ValueError, ZeroDivisionError):
            a = float("nan")
        exp["alpha_" + level] = num(a)
    return {"name": name, "why": why, "categories": [float(c) for c in categories],
            "n_items": n_items, "n_raters": n_raters,
            "ratings": [[None if np.isnan(v) else float(v) for v in r] for r in m], "expected": exp}


def categorical_cases():
    from statsmodels.stats.tests.test_inter_rater import diagnoses

    rng = np.random.default_rng(11)
    out = []
    out.append(categorical_case("fleiss_1971_diagnoses", "Fleiss (1971): 30 patients x 6 psychiatrists, 5 diagnoses",
                                diagnoses.tolist(), [1, 2, 3, 4, 5]))
    kripp = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [list(col) for col in zip(*kripp)]
    out.append(categorical_case("krippendorff_2011", "Krippendorff (2011): 4 coders x 12 units with missing values",
                                units, [1, 2, 3, 4, 5]))
    a = rng.integers(0, 2, 50)
    b = np.where(rng.random(50) < 0.8, a, 1 - a)
    out.append(categorical_case("binary_two_raters", "two raters, 0/1 labels", np.column_stack([a, b]).tolist(), [0, 1]))
    para = [[1, 1]] * 80 + [[1, 0]] * 10 + [[0, 1]] * 5 + [[0, 0]] * 5
    out.append(categorical_case("prevalence_paradox", "high agreement, skewed prevalence: kappa low, AC1 high", para, [0, 1]))
    lat = rng.normal(3, 1, 40)
    lik = np.clip(np.rint(lat[:, None] + rng.normal(0, 0.8, (40, 3))), 1, 5).astype(object)
    lik[3, 1] = None
    lik[10, 0] = None
    lik[10, 2] = None
    lik[25, 2] = None
    out.append(categorical_case("likert_three_raters_missing", "1-5, three raters, missing cells (one item left with one rating)",
                                lik.tolist(), [1, 2, 3, 4, 5]))
    e = np.clip(np.rint(rng.normal(3, 1, 60)), 1, 5)
    j = np.clip(e + rng.choice([-2, -1, 0, 0, 0, 1, 1], 60), 1, 5)
    out.append(categorical_case("likert_two_raters_weighted", "weighted kappa and AC2 on 1-5", np.column_stack([e, j]).tolist(), [1, 2, 3, 4, 5]))
    out.append(categorical_case("one_category", "every rating the same: kappa and alpha undefined", [[1, 1]] * 10, [0, 1]))
    out.append(categorical_case("declared_unused_category", "binary data with a declared third category", np.column_stack([a, b]).tolist(), [0, 1, 2]))
    return out


# ---------------------------------------------------------------- distributions, Wilson, percentiles


def quantile_cases():
    out = []
    for p, d1, d2 in [(0.975, 5, 18), (0.975, 18, 5), (0.975, 1, 1), (0.975, 3, 7.25), (0.975, 7.25, 3),
                      (0.975, 9999, 39996), (0.975, 39996, 9999), (0.975, 99999, 99999), (0.025, 2, 200),
                      (0.975, 1.5, 0.8), (0.5, 0.5, 0.5)]:
        out.append({"p": p, "d1": d1, "d2": d2, "quantile": float(stats.f.ppf(p, d1, d2))})
    sf = []
    for f, d1, d2 in [(11.787, 7, 21), (0.3, 4, 12), (1.02, 9999, 39996), (35.0, 5, 10), (2.5, 1.5, 40.5)]:
        mpmath.mp.dps = 40
        y = mpmath.mpf(d2) / (mpmath.mpf(d2) + mpmath.mpf(d1) * mpmath.mpf(f))
        exact = mpmath.betainc(mpmath.mpf(d2) / 2, mpmath.mpf(d1) / 2, 0, y, regularized=True)
        sf.append({"f": f, "d1": d1, "d2": d2, "sf": float(stats.f.sf(f, d1, d2)), "sf_mpmath": float(exact)})
    t = [{"df": df, "t": float(stats.t.ppf(0.975, df))} for df in [1, 2, 8, 29, 999, 123456]]
    return out, sf, t


def wilson_cases():
    out = []
    for c, n in [(0, 10), (10, 10), (7, 20), (45, 50), (1, 1), (123, 456)]:
        lo, hi = proportion_confint(c, n, alpha=0.05, method="wilson")
        out.append({"count": c, "total": n, "ci95": [float(lo), float(hi)]})
    return out


def percentile_cases():
    rng = np.random.default_rng(3)
    out = []
    for m in [1, 2, 9, 1000]:
        v = np.sort(rng.normal(0.8, 0.1, m))
        out.append({"values": v.tolist(), "p": [0.025, 0.5, 0.975],
                    "expected": [float(np.percentile(v, 100 * p)) for p in [0.025, 0.5, 0.975]]})
    return out


def main():
    f_q, f_sf, t_q = quantile_cases()
    doc = {
        "peers": {"pingouin": pg.__version__, "statsmodels": statsmodels.__version__,
                  "krippendorff": getattr(krippendorff, "__version__", "unknown"), "scipy": scipy.__version__,
                  "numpy": np.__version__, "pandas": pd.__version__},
        "icc": icc_cases(),
        "paired": paired_cases(),
        "categorical": categorical_cases(),
        "f_quantile": f_q,
        "f_sf": f_sf,
        "t_quantile": t_q,
        "wilson": wilson_cases(),
        "percentile": percentile_cases(),
    }
    with open(os.path.join(HERE, "reference.json"), "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
