"""Reference vectors for concord-stats' pairwise-preference statistics (src/pairwise.rs).

Writes pairwise.json beside this file. Peers:
- choix: Bradley-Terry maximum-likelihood strengths without ties (ilsr_pairwise, alpha = 0,
  iterated to an L1 change below 1e-13) and with split ties (ilsr_pairwise_dense on the matrix
  W + T/2, a tie being half a win for each side); both cross-checked here against
  evalica.bradley_terry (whose tie weight is 0.5, so split ties are its convention) and
  choix.opt_pairwise on duplicated data (each win twice, a tie as one win each way);
- scipy.optimize: the Davidson (1970) tie model, P(i beats j) = pi_i / D, P(tie) = nu sqrt(pi_i pi_j)
  / D with D = pi_i + pi_j + nu sqrt(pi_i pi_j), fitted by maximising its log-likelihood written
  out comparison by comparison (BFGS with its analytic gradient, then the score equations solved
  by scipy.optimize.root); cross-checked against evalica.newman (Newman 2023, whose tie
  parameter v is nu / 2);
- statsmodels: Cohen's kappa with its asymptotic standard error and interval
  (stats.inter_rater.cohens_kappa: std_kappa, kappa_low, kappa_upp at 95%), Wilson intervals
  (stats.proportion.proportion_confint(method="wilson"));
- scipy.stats: binomtest(k, n).pvalue (two-sided, p = 0.5) and proportion_ci(method="exact")
  (Clopper-Pearson); spearmanr and kendalltau (tau-b).

Strengths are log-strengths centred to mean 0 over the compared items. To keep the file small,
comparisons are written as one string of space-separated "left:right:verdict" tokens, the verdict
L (left wins), R (right wins) or T (tie); conversations are runs of `cluster_size` consecutive
comparisons; verdict sequences are strings of L/R/T, one letter per judgement. Cases the model cannot fit
(no maximum-likelihood estimate) are written with the error Concord must give instead.

    pip install choix evalica statsmodels scipy numpy pandas
    python pairwise.py

Every random case uses a fixed numpy seed. Non-finite values are written as null.
"""

import json
import math
import os
from importlib.metadata import version

import choix
import evalica
import numpy as np
import pandas as pd
from scipy import optimize, stats
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

HERE = os.path.dirname(os.path.abspath(__file__))
OUTCOMES = ("left", "right", "tie")
LETTER = {"left": "L", "right": "R", "tie": "T"}


def encode(comparisons):
    return " ".join(f"{a}:{b}:{LETTER[o]}" for a, b, o in comparisons)


def letters(verdicts):
    return "".join(LETTER[v] for v in verdicts)
# Agreement on MLE points between the peers before a case is written.
PEER_TOL = 1e-8


def num(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def counts(n, comparisons):
    w = np.zeros((n, n))
    t = np.zeros((n, n))
    for left, right, o in comparisons:
        if o == "left":
            w[left, right] += 1
        elif o == "right":
            w[right, left] += 1
        else:
            t[left, right] += 1
            t[right, left] += 1
    return w, t


def compared_items(n, comparisons):
    seen = sorted({i for c in comparisons for i in c[:2]})
    return seen


def centred(params, items, n):
    out = [None] * n
    mean = float(np.mean([params[i] for i in items]))
    for i in items:
        out[i] = float(params[i]) - mean
    return out


def split_log_likelihood(theta, w, t):
    """Sum over ordered pairs of (w_ij + t_ij / 2) ln P(i beats j)."""
    a = w + t / 2
    ll = 0.0
    n = len(theta)
    for i in range(n):
        for j in range(n):
            if i != j and a[i, j] > 0:
                ll += a[i, j] * (theta[i] - np.logaddexp(theta[i], theta[j]))
    return ll


def davidson_log_likelihood(theta, log_nu, comparisons):
    ll = 0.0
    for left, right, o in comparisons:
        ti, tj = theta[left], theta[right]
        log_d = np.logaddexp(np.logaddexp(ti, tj), log_nu + (ti + tj) / 2)
        if o == "left":
            ll += ti - log_d
        elif o == "right":
            ll += tj - log_d
        else:
            ll += log_nu + (ti + tj) / 2 - log_d
    return ll


def davidson_gradient(theta, log_nu, comparisons):
    g = np.zeros(len(theta) + 1)
    for left, right, o in comparisons:
        ti, tj = theta[left], theta[right]
        log_d = np.logaddexp(np.logaddexp(ti, tj), log_nu + (ti + tj) / 2)
        pi, pj = math.exp(ti - log_d), math.exp(tj - log_d)
        pt = 1 - pi - pj
        g[left] -= pi + pt / 2
        g[right] -= pj + pt / 2
        g[-1] -= pt
        if o == "left":
            g[left] += 1
        elif o == "right":
            g[right] += 1
        else:
            g[left] += 0.5
            g[right] += 0.5
            g[-1] += 1
    return g


def as_indexed(comparisons):
    xs = [int(c[0]) for c in comparisons]
    ys = [int(c[1]) for c in comparisons]
    winner = {"left": evalica.Winner.X, "right": evalica.Winner.Y, "tie": evalica.Winner.Draw}
    return xs, ys, [winner[c[2]] for c in comparisons]


def evalica_log_scores(scores, items, n):
    full = np.zeros(n)
    full[items] = np.log(scores.reindex(items).to_numpy(float))
    return centred(full, items, n)


def close(a, b, what, tol=PEER_TOL):
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None, what
            continue
        assert abs(x - y) <= tol, f"{what}: {x} vs {y}"


def split_fit(n, comparisons):
    """choix on W + T/2, checked against evalica and choix.opt_pairwise on duplicated data."""
    w, t = counts(n, comparisons)
    items = compared_items(n, comparisons)
    sub = np.ix_(items, items)
    params = choix.ilsr_pairwise_dense((w + t / 2)[sub], alpha=0.0, tol=1e-13, max_iter=100000)
    full = np.zeros(n)
    full[items] = params
    strengths = centred(full, items, n)
    # evalica is given the compared items only: it normalises over its whole index.
    index = pd.Index(items)
    xs, ys, winners = as_indexed(comparisons)
    ev = evalica.bradley_terry(xs, ys, winners, index=index, tolerance=1e-14, limit=100000)
    close(strengths, evalica_log_scores(ev.scores, items, n), "evalica.bradley_terry (tie = 1/2)")
    doubled = []
    remap = {v: k for k, v in enumerate(items)}
    for left, right, o in comparisons:
        a, b = remap[left], remap[right]
        if o == "left":
            doubled += [(a, b), (a, b)]
        elif o == "right":
            doubled += [(b, a), (b, a)]
        else:
            doubled += [(a, b), (b, a)]
    opt = choix.opt_pairwise(len(items), doubled, alpha=0.0, method="Newton-CG", tol=1e-14)
    close([strengths[i] for i in items], list(opt - opt.mean()), "choix.opt_pairwise", 1e-6)
    theta = np.array([s if s is not None else 0.0 for s in strengths])
    return {
        "strengths": strengths,
        "log_likelihood": split_log_likelihood(theta, w, t),
        "peer": "choix.ilsr_pairwise_dense(W + T/2)" if t.any() else "choix.ilsr_pairwise_dense(W)",
        "cross_checked": ["evalica.bradley_terry", "choix.opt_pairwise"],
    }


def davidson_fit(n, comparisons):
    """Explicit scipy maximisation of the Davidson likelihood; checked against evalica.newman."""
    items = compared_items(n, comparisons)
    m = len(items)
    remap = {v: k for k, v in enumerate(items)}
    local = [(remap[a], remap[b], o) for a, b, o in comparisons]
    ties = sum(o == "tie" for _, _, o in comparisons)
    decided = len(comparisons) - ties
    if ties == 0:
        # No tie: the likelihood increases as nu falls to 0, the boundary, where Davidson's model
        # is Bradley-Terry's; the strengths are then choix's.
        plain = split_fit(n, comparisons)
        return {"strengths": plain["strengths"], "tie_parameter": 0.0,
                "log_likelihood": plain["log_likelihood"],
                "peer": "no tie: nu = 0 and " + plain["peer"]}

    def unpack(x):
        return np.concatenate([x[: m - 1], [0.0]]), x[m - 1]

    def negative(x):
        theta, log_nu = unpack(x)
        return -davidson_log_likelihood(theta, log_nu, local)

    def score(x):
        theta, log_nu = unpack(x)
        g = davidson_gradient(theta, log_nu, local)
        return np.concatenate([g[: m - 1], [g[-1]]])

    x0 = np.concatenate([np.zeros(m - 1), [math.log(2 * ties / decided)]])
    first = optimize.minimize(negative, x0, jac=lambda x: -score(x), method="BFGS",
                              options={"gtol": 1e-10, "maxiter": 10000})
    # hybr may report that it cannot improve further at this tolerance; the score check below
    # is what certifies the maximum.
    root = optimize.root(score, first.x, method="hybr", tol=1e-14)
    gradient = float(np.max(np.abs(score(root.x))))
    assert gradient < 1e-8, f"score equations not solved: {gradient}"
    theta, log_nu = unpack(root.x)
    full = np.zeros(n)
    full[items] = theta
    strengths = centred(full, items, n)
    xs, ys, winners = as_indexed(comparisons)
    nm = evalica.newman(xs, ys, winners, index=pd.Index(items), tolerance=1e-14,
                        limit=100000)
    close(strengths, evalica_log_scores(nm.scores, items, n), "evalica.newman strengths", 1e-7)
    assert abs(2 * nm.v - math.exp(log_nu)) <= 1e-7 * max(1.0, math.exp(log_nu)), "evalica.newman v"
    return {
        "strengths": strengths,
        "tie_parameter": math.exp(log_nu),
        "log_likelihood": davidson_log_likelihood(theta, log_nu, local),
        "max_abs_score": gradient,
        "peer": "scipy.optimize (BFGS, then root of the score equations)",
        "cross_checked": ["evalica.newman (nu = 2 v)"],
    }


def win_records(n, comparisons):
    w, t = counts(n, comparisons)
    out = []
    for i in range(n):
        wins, losses, ties = int(w[i].sum()), int(w[:, i].sum()), int(t[i].sum())
        total = wins + losses + ties
        out.append({"wins": wins, "losses": losses, "ties": ties, "comparisons": total,
                    "win_rate": (wins + ties / 2) / total if total else None})
    return out


def fit_case(name, why, n, comparisons, split=None, davidson=None, cluster_size=None):
    """`split`/`davidson`: None to fit, or the name of the error Concord must give."""
    case = {"name": name, "why": why, "n_items": n, "comparisons": encode(comparisons),
            "win_rates": win_records(n, comparisons)}
    if cluster_size is not None:
        case["cluster_size"] = cluster_size
    case["split"] = {"refused": split} if split else split_fit(n, comparisons)
    case["davidson"] = {"refused": davidson} if davidson else davidson_fit(n, comparisons)
    return case


def simulate(rng, n, count, theta, nu, pairs=None):
    comparisons = []
    for _ in range(count):
        if pairs is None:
            i, j = (int(v) for v in rng.choice(n, 2, replace=False))
        else:
            i, j = pairs[int(rng.integers(len(pairs)))]
            if rng.random() < 0.5:
                i, j = j, i
        pi, pj = math.exp(theta[i]), math.exp(theta[j])
        d = pi + pj + nu * math.sqrt(pi * pj)
        u = rng.random() * d
        o = "left" if u < pi else ("right" if u < pi + pj else "tie")
        comparisons.append((i, j, o))
    return comparisons


def fits():
    hand3 = ([(0, 1, "left")] * 3 + [(1, 0, "left")] + [(1, 2, "left")] * 2 + [(2, 1, "left")]
             + [(2, 0, "left")] * 2 + [(0, 2, "left")] * 2)
    hand4 = ([(0, 1, "left"), (0, 1, "left"), (1, 0, "tie"), (0, 1, "right"), (1, 2, "left"),
              (2, 1, "tie"), (2, 1, "tie"), (1, 2, "right"), (2, 3, "left"), (3, 2, "left"),
              (3, 2, "tie"), (0, 3, "right"), (3, 0, "right"), (0, 2, "tie"), (2, 0, "left"),
              (1, 3, "left"), (3, 1, "left")])
    rng = np.random.default_rng(2028)
    theta10 = rng.normal(0, 0.8, 10)
    plain10 = simulate(rng, 10, 5000, theta10, 0.0)
    ties10 = simulate(rng, 10, 4000, theta10, 0.6)
    heavy = simulate(rng, 6, 1500, rng.normal(0, 0.5, 6), 4.0)
    ring = [(i, (i + 1) % 8) for i in range(8)] + [(0, 4), (2, 6)]
    sparse = simulate(rng, 8, 160, rng.normal(0, 1.0, 8), 0.8, pairs=ring)
    # Item 5 of 6 is never compared; item 9 of an 8-item ring is outside it.
    partial = [c for c in hand4] + [(4, 0, "left"), (0, 4, "left"), (4, 1, "tie")]
    one_way = [(0, 1, "left"), (1, 2, "left"), (0, 2, "left"), (2, 1, "left")]
    apart = [(0, 1, "left"), (1, 0, "left"), (2, 3, "tie"), (3, 2, "left")]
    win_tie = [(0, 1, "left"), (1, 0, "tie")]
    ties_only = [(0, 1, "tie"), (1, 2, "tie"), (0, 2, "tie")]
    return [
        fit_case("hand_three", "3 items, 11 decided comparisons: 0 beat 1 3:1, 1 beat 2 2:1, 0 and 2 split 2:2",
                 3, hand3),
        fit_case("hand_four_ties", "4 items, 17 comparisons, 6 of them ties", 4, hand4),
        fit_case("partial_six", "6 items declared; item 5 never compared (strength null)", 6, partial),
        fit_case("random_ten", "10 sources, 5,000 decided comparisons, 500 conversations of 10",
                 10, plain10, cluster_size=10),
        fit_case("random_ten_ties", "10 sources, 4,000 comparisons drawn with Davidson nu = 0.6, "
                 "500 conversations of 8", 10, ties10, cluster_size=8),
        fit_case("ties_heavy", "6 items, 1,500 comparisons drawn with nu = 4 (about two thirds ties)",
                 6, heavy),
        fit_case("sparse_ring", "8 items compared only around a ring with two chords, 160 comparisons",
                 8, sparse),
        fit_case("one_way", "item 0 never loses, and items 1 and 2 never beat it: no MLE", 3, one_way,
                 split="not_strongly_connected", davidson="not_strongly_connected"),
        fit_case("apart", "items {0,1} and {2,3} never met: relative strength not identified", 4,
                 apart, split="disconnected", davidson="disconnected"),
        fit_case("win_and_tie", "A beat B once and they tied once: split ties fit; Davidson's nu and "
                 "the strength gap diverge together", 2, win_tie, davidson="davidson_unbounded"),
        fit_case("only_ties", "every comparison a tie: split gives equal strengths; Davidson's nu "
                 "diverges", 3, ties_only, davidson="only_ties"),
    ]


def wilson(count, total, level):
    lo, hi = proportion_confint(count, total, alpha=1 - level, method="wilson")
    return [num(lo), num(hi)]


def agreement_case(name, why, a, b, level=0.95):
    idx = {o: k for k, o in enumerate(OUTCOMES)}
    table = np.zeros((3, 3))
    for x, y in zip(a, b):
        table[idx[x], idx[y]] += 1
    agree = int(np.trace(table))
    n = len(a)
    with np.errstate(all="ignore"):
        res = cohens_kappa(table)
    kappa = num(res.kappa)
    se = num(res.std_kappa) if kappa is not None else None
    if level == 0.95:
        ci = [num(res.kappa_low), num(res.kappa_upp)] if se is not None else [None, None]
        rule = "statsmodels kappa_low / kappa_upp"
    else:
        z = stats.norm.isf((1 - level) / 2)
        ci = [kappa - z * se, kappa + z * se] if se is not None else [None, None]
        rule = "kappa -+ scipy.stats.norm.isf((1 - level) / 2) * statsmodels std_kappa"
    return {"name": name, "why": why, "a": letters(a), "b": letters(b), "level": level, "n": n,
            "agreements": agree, "percent": agree / n, "percent_ci": wilson(agree, n, level),
            "kappa": kappa, "kappa_se": se, "kappa_ci": ci, "kappa_ci_rule": rule}


def agreements():
    rng = np.random.default_rng(91)
    truth = rng.choice(OUTCOMES, 400, p=[0.45, 0.4, 0.15])

    def noisy(p):
        return [str(t) if rng.random() > p else str(rng.choice(OUTCOMES)) for t in truth]

    expert, other, judge = noisy(0.25), noisy(0.25), noisy(0.5)
    return [
        agreement_case("two_experts", "400 judgements, each expert errs at random 25% of the time",
                       expert, other),
        agreement_case("judge_vs_expert", "the same judgements, the judge errs 50% of the time",
                       judge, expert),
        agreement_case("judge_vs_expert_90", "the same pair at the 90% level", judge, expert, 0.9),
        agreement_case("no_ties_used", "small: the tie category is never used (zero row and column)",
                       ["left", "right", "left", "left", "right", "right", "left", "right"],
                       ["left", "right", "right", "left", "right", "left", "left", "right"]),
        agreement_case("perfect", "identical verdicts: kappa 1, standard error 0",
                       ["left", "tie", "right", "left", "right"], ["left", "tie", "right", "left", "right"]),
        agreement_case("one_category", "both raters always say left: chance agreement 1, kappa undefined",
                       ["left"] * 6, ["left"] * 6),
    ]


def bias_case(k, n, level=0.95):
    r = stats.binomtest(k, n, 0.5)
    ci = r.proportion_ci(confidence_level=level, method="exact")
    return {"first_wins": k, "decided": n, "level": level, "p_first": k / n,
            "ci": [float(ci.low), float(ci.high)], "p_value": float(r.pvalue)}


def consistency_case(name, why, pairs, level=0.95):
    same = sum(a == b for a, b in pairs)
    return {"name": name, "why": why, "first": letters(p[0] for p in pairs),
            "second": letters(p[1] for p in pairs), "level": level,
            "pairs": len(pairs), "consistent": same, "share": same / len(pairs),
            "ci": wilson(same, len(pairs), level)}


def consistencies():
    rng = np.random.default_rng(5)
    pairs = []
    for _ in range(300):
        first = str(rng.choice(OUTCOMES, p=[0.45, 0.4, 0.15]))
        second = first if rng.random() < 0.7 else str(rng.choice(OUTCOMES))
        pairs.append((first, second))
    return [
        consistency_case("judge_both_orders", "300 pairs asked twice; the verdict survives 70% + chance",
                         pairs),
        consistency_case("judge_both_orders_99", "the same at the 99% level", pairs, 0.99),
        consistency_case("always_consistent", "every verdict survives the swap (Wilson upper bound 1)",
                         [("left", "left"), ("tie", "tie"), ("right", "right")]),
        consistency_case("never_consistent", "the verdict always follows the position",
                         [("left", "right"), ("right", "left"), ("left", "right"), ("right", "left")]),
    ]


def rank_case(name, why, a, b):
    both = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    x = [p[0] for p in both]
    y = [p[1] for p in both]
    return {"name": name, "why": why, "a": a, "b": b, "n": len(both),
            "spearman": num(stats.spearmanr(x, y).statistic),
            "kendall_tau_b": num(stats.kendalltau(x, y).statistic)}


def ranks(fit_cases):
    ten = next(c for c in fit_cases if c["name"] == "random_ten")["split"]["strengths"]
    rng = np.random.default_rng(13)
    means = [round(3 + 0.6 * s + rng.normal(0, 0.3), 1) for s in ten]
    return [
        rank_case("strengths_vs_mean_scores", "10 sources: BT strengths against mean 1-5 scores "
                  "rounded to tenths", ten, means),
        rank_case("tied_means", "ties in both scorings (average ranks, tau-b)",
                  [0.3, 0.3, -0.2, 0.1, -0.5, 0.0], [4.1, 4.1, 3.0, 3.9, 3.0, 3.5]),
        rank_case("missing_items", "items undefined on either side are left out",
                  [0.5, None, -0.1, 0.2, -0.6, 0.0], [4.0, 3.2, None, 3.6, 2.9, 3.1]),
    ]


def main():
    fit_cases = fits()
    doc = {
        "generator": "pairwise.py",
        "versions": {p: version(p) for p in ("choix", "evalica", "numpy", "pandas", "scipy",
                                             "statsmodels")},
        "fits": fit_cases,
        "agreement": agreements(),
        "position_bias": [bias_case(*a) for a in [(7, 20), (0, 12), (12, 12), (50, 100), (530, 1000),
                                                   (4900, 10000), (1, 3), (64, 100, 0.9),
                                                   (3, 40, 0.99), (61, 122), (62, 123)]],
        "position_consistency": consistencies(),
        "rank_correlation": ranks(fit_cases),
    }
    with open(os.path.join(HERE, "pairwise.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
