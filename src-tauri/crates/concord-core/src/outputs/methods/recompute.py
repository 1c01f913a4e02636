"""Recompute every number of a Concord agreement table from the exported ratings.

Concord wrote this script beside its methods appendix. The directory holds
  ratings.csv    every rating of the study (Concord's long CSV),
  study.json     the rubric's criteria and groups, the sources' and raters' model families, and
                 the options the tables were computed with,
  agreement.csv  the table: per attribute (or attribute group) and judge, ICC with its 95% CI,
                 bias, MSE and the numbers of targets and rating pairs,
  judge_repetitions.csv  every repetition of every judge's newest run, with each response's
                 length in characters and any expected score from token log-probabilities,
  judge_reliability.csv  per judge and attribute: Krippendorff's alpha across repetitions with its
                 bootstrap 95% CI, the single-repetition reliability and the repetitions a target
                 reliability needs (Spearman-Brown), ECE and Brier (binary dimensions), and the
                 length-bias slope with its 95% CI,
  pairwise.csv   per rater group (experts pooled, each judge), criterion and source of a pairwise
                 study: the Bradley-Terry log-strength with its bootstrap 95% CI, rank, wins (ties
                 as halves), comparisons and win rate, and Davidson's tie parameter,
  pairwise_position.csv   per judge and criterion: position consistency with its Wilson CI, and
                 P(the answer shown first wins) with its exact CI and binomial test,
  pairwise_agreement.csv  percent agreement and Cohen's kappa on preferences, experts with each
                 other and each judge with the experts,
  prevalence.csv per judge and binary dimension: the judge's raw rate, sensitivity and
                 specificity against the experts' majority, the corrected prevalence and its
                 interval (or the reason there is none),
  gstudy.csv     per G-study (experts x responses x occasions, each judge x responses x
                 repetitions) and criterion: the variance components, the G coefficients and the
                 design that reaches a reliability of 0.8,
  dawid_skene.csv  per criterion the Dawid-Skene priors and every rater's confusion matrix, with
                 the adjudicated values they hold in adjudicated.csv,
  agreement_by_category.csv  the agreement table computed on each conversation category's
                 responses alone, the categories of the conversations in categories.csv.

    pip install pingouin pandas numpy krippendorff statsmodels scipy crowd-kit==1.4.2
    python recompute.py DIR

Each number is recomputed with public packages only — pingouin.intraclass_corr for the ICC and its
McGraw & Wong interval, numpy for bias and MSE — following the method the table states: the
reference is, per response, the mean of the experts who rated it; responses of the judge's own
model family are left out; at system level each rated model is one target (the mean reference and
judge scores over the responses both scored). The reliability table is recomputed from the
repetitions: alpha with krippendorff.alpha, the single-repetition reliability (one-way ICC(1,1))
from a statsmodels one-way ANOVA, the length slope and its interval with statsmodels OLS, ECE and
Brier with numpy. The pairwise tables are recomputed from the pair rows of ratings.csv: every
strength and tie parameter refitted by maximum likelihood with scipy.optimize, position figures
with scipy.stats.binomtest and statsmodels' Wilson interval, agreement with statsmodels'
cohens_kappa. The reviewer's tables: the corrected prevalence and its interval by the formulas Lee et al. (2025)
publish (Rogan-Gladen's correction; the interval from Agresti-Coull-shrunk rates with its bias
shift), written below with scipy's normal quantile; the G-study's components by
maximising the REML likelihood of the same crossed random-effects model written with numpy and
scipy (L-BFGS-B on the dense covariance, every component at least 0), the G coefficients and the
design that reaches 0.8 by Brennan's formulas; the Dawid-Skene priors and confusion matrices with
crowd-kit's DawidSkene (the adjudicated values as true_labels); agreement by category as the
agreement table, on each category's responses alone. Exit status 0 when every number agrees with its table to 1e-6 (alpha's bootstrap
interval, which depends on the random stream, to within 0.1 of a bootstrap this script draws
itself; each end of a strength's bootstrap interval to within 0.25 plus a quarter of the interval's
width of this script's own), 1 otherwise.
"""

import json
import math
import os
import sys

# The G-study check factorises many small dense matrices: one BLAS thread each is fastest, and a
# machine's other work does not make the threads wait on each other (set them to override).
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

import krippendorff
import numpy as np
import pandas as pd
import pingouin as pg
import statsmodels.api as sm
from scipy import optimize, sparse, stats
from scipy.sparse import csgraph
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

TOLERANCE = 1e-6
REACHES_TOLERANCE = 1e-9  # a Spearman-Brown step-up this far below the target still reaches it
# pingouin.intraclass_corr takes at least five scores: three targets rated by judge and reference.
MIN_TARGETS = 3
# Two percentile bootstraps with different random streams agree only up to Monte Carlo error.
BOOTSTRAP_TOLERANCE = 0.1
# Two bootstraps of Bradley-Terry strengths: each end within this plus a share of the width.
STRENGTH_TOLERANCE, STRENGTH_WIDTH_SHARE = 0.25, 0.25
# pingouin names the forms "ICC(C,1)" since 0.6 and "ICC3" before.
FORMS = {"ICC(C,1)": "ICC3", "ICC(A,1)": "ICC2", "ICC(1,1)": "ICC1"}


def main(directory):
    with open(os.path.join(directory, "study.json"), encoding="utf-8") as f:
        study = json.load(f)
    all_ratings = pd.read_csv(os.path.join(directory, "ratings.csv"), dtype=str,
                              keep_default_na=False)
    ratings = all_ratings[(all_ratings["rubric"] == study["rubric"]) & (all_ratings["value"] != "")]
    if "occasion" in ratings.columns:
        # Agreement reads every rater's first rating; retests are the G-study's second occasion.
        ratings = ratings[ratings["occasion"] == "first"]
    if ratings.duplicated(["response_id", "rater", "criterion"]).any():
        sys.exit("a rater rates a response twice on the same occasion: not a Concord export")
    table = pd.read_csv(os.path.join(directory, "agreement.csv"), dtype=str, keep_default_na=False)
    checked, failures, worst, skipped = 0, [], 0.0, []

    def compare(label, mine, theirs, tolerance=TOLERANCE):
        nonlocal checked, worst
        checked += 1
        if mine is not None and not math.isfinite(mine):
            mine = None
        if theirs == "":
            ok = mine is None
            diff = 0.0
        else:
            diff = abs(mine - float(theirs)) if mine is not None else math.inf
            ok = diff <= tolerance
            if tolerance == TOLERANCE:
                worst = max(worst, diff)
        if not ok:
            failures.append(f"{label}: recomputed {mine}, table {theirs}")

    check_table(study, ratings, table, compare, skipped, "")
    reliability_checked = check_reliability(directory, study, ratings, compare)
    pairwise_checked = check_pairwise(directory, study, all_ratings, compare, failures.append)
    reviewer_checked = check_reviewer(directory, study, all_ratings, ratings, compare, skipped)
    print(f"{checked} numbers recomputed ({reliability_checked} of the judge reliability table, "
          f"{pairwise_checked} of the pairwise tables, {reviewer_checked} of the reviewer's "
          f"tables); largest difference {worst:.2e}")
    for note in skipped:
        print(f"not recomputed: {note}")
    if failures:
        print("\n".join(failures))
        return 1
    return 0


def check_table(study, ratings, table, compare, skipped, prefix):
    """Every line of an agreement table recomputed from `ratings` (labels start with `prefix`)."""
    value = {
        (r.rater, r.response_id, r.criterion): float(r.value) for r in ratings.itertuples()
    }
    source_of = dict(zip(ratings["response_id"], ratings["source"]))
    responses = sorted(source_of)
    experts = [r["name"] for r in study["raters"] if r["kind"] == "expert"]
    judges = {(r["model_id"] or r["name"]): r for r in study["raters"] if r["kind"] == "judge"}
    members = {c["key"]: [c["key"]] for c in study["criteria"]}
    members.update(study["groups"])

    def series(rater, target):
        """Per response the rater's value on a criterion, or the mean of a group's members."""
        out = {}
        for resp in responses:
            vals = [value.get((rater, resp, m)) for m in members[target]]
            if all(v is not None for v in vals):
                out[resp] = sum(vals) / len(vals)
        return out

    def reference(target):
        per_expert = [series(e, target) for e in experts]
        out = {}
        for resp in responses:
            vals = [s[resp] for s in per_expert if resp in s]
            if vals:
                out[resp] = sum(vals) / len(vals)
        return out

    for row in table.itertuples():
        if row.reference != "experts":
            sys.exit(f"only judge-versus-experts tables are covered (found reference {row.reference})")
        judge = judges[row.rater]
        family = judge["family"]
        excluded = {
            s for s, fam in study["sources"].items()
            if study["exclude_self_family"] and family and fam == family
        }
        ref = reference(row.criterion)
        jud = series(judge["name"], row.criterion)
        pairs = [
            (ref[r], jud[r], source_of[r])
            for r in responses
            if r in ref and r in jud and source_of[r] not in excluded
        ]
        label = f"{prefix}{row.attribute} / {row.rater}"
        compare(label + " n_pairs", float(len(pairs)), row.n_pairs)
        d = np.array([j - r for r, j, _ in pairs])
        compare(label + " bias", float(d.mean()) if len(d) else None, row.bias)
        compare(label + " mse", float((d ** 2).mean()) if len(d) else None, row.mse)
        if row.level == "system":
            frame = pd.DataFrame(pairs, columns=["reference", "judge", "source"])
            means = frame.groupby("source", sort=True)[["reference", "judge"]].mean()
            targets = list(means.itertuples(index=False, name=None))
        else:
            targets = [(r, j) for r, j, _ in pairs]
        compare(label + " n_targets", float(len(targets)), row.n_targets)
        if len(targets) < MIN_TARGETS:
            # pingouin needs five scores, so three targets of two raters; none gives no ICC.
            if not targets:
                compare(label + " icc", None, row.icc)
            else:
                skipped.append(f"{label}: {len(targets)} targets, fewer than pingouin takes")
            continue
        long = pd.DataFrame(
            [(t, who, v) for t, pair in enumerate(targets) for who, v in zip(("reference", "judge"), pair)],
            columns=["target", "rater", "score"],
        )
        icc = pg.intraclass_corr(long, "target", "rater", "score").set_index("Type")
        line = icc.loc[row.icc_form if row.icc_form in icc.index else FORMS[row.icc_form]]
        compare(label + " icc", float(line["ICC"]), row.icc)
        if row.ci_method == "F":
            lo, hi = (float(v) for v in (line["CI95%"] if "CI95%" in line else line["CI95"]))
            if not (math.isfinite(lo) and math.isfinite(hi)) and abs(float(line["ICC"]) - 1) <= TOLERANCE:
                # Judge and reference agree exactly: no residual variance, so the F statistics are
                # infinite and pingouin gives no interval; the interval's limit is [1, 1].
                lo = hi = 1.0
            compare(label + " ci_low", lo, row.ci_low)
            compare(label + " ci_high", hi, row.ci_high)


def aggregate(values, how):
    """A judge's score from its repetitions: median, mean, or mode (ties to the lowest value)."""
    v = sorted(x for x in values if math.isfinite(x))
    if not v:
        return None
    if how == "median":
        return float(np.median(v))
    if how == "mean":
        return float(np.mean(v))
    counts = {x: v.count(x) for x in v}
    return min(x for x in counts if counts[x] == max(counts.values()))


def expert_reference(values, binary):
    """The experts' mean (1-5) or their majority (binary; a tie has no reference)."""
    if not values:
        return None
    mean = sum(values) / len(values)
    if not binary:
        return mean
    return None if mean == 0.5 else float(mean > 0.5)


def alpha_of(data, metric, domain):
    """Krippendorff's alpha of a repetitions x responses matrix (nan when undefined)."""
    if data.shape[1] == 0:
        return math.nan
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(krippendorff.alpha(reliability_data=data, level_of_measurement=metric,
                                            value_domain=domain))
    except (ValueError, ZeroDivisionError):
        return math.nan


def one_way_icc(matrix):
    """ICC(1,1) of a responses x repetitions matrix from statsmodels' one-way ANOVA."""
    n, k = matrix.shape
    long = pd.DataFrame({
        "target": np.repeat(np.arange(n), k).astype(str),
        "score": matrix.reshape(-1),
    })
    anova = sm.stats.anova_lm(sm.formula.ols("score ~ C(target)", data=long).fit())
    msb = anova.loc["C(target)", "mean_sq"]
    msw = anova.loc["Residual", "mean_sq"]
    denominator = msb + (k - 1) * msw
    return float((msb - msw) / denominator) if denominator != 0 else math.nan


def repetitions_for(rho1, target):
    """The smallest k whose Spearman-Brown reliability k*rho1 / (1 + (k - 1)*rho1) reaches target
    (within REACHES_TOLERANCE below it, so a boundary exact in rationals is not lost to rounding)."""
    if rho1 is None or not math.isfinite(rho1) or rho1 <= 0 or not 0 < target < 1:
        return None
    reaches = lambda r: r >= target - REACHES_TOLERANCE
    if reaches(rho1):
        return 1
    exact = target * (1 - rho1) / (rho1 * (1 - target))
    if exact > 1e6:
        return None
    step_up = lambda k: k * rho1 / (1 + (k - 1) * rho1)
    k = max(1, math.ceil(exact))
    while k > 1 and reaches(step_up(k - 1)):
        k -= 1
    while not reaches(step_up(k)):
        k += 1
    return k


def check_reliability(directory, study, ratings, compare):
    """Recompute judge_reliability.csv from judge_repetitions.csv and the experts' ratings."""
    settings = study["judge_reliability"]
    table = pd.read_csv(os.path.join(directory, "judge_reliability.csv"), dtype=str,
                        keep_default_na=False)
    repetitions = pd.read_csv(os.path.join(directory, "judge_repetitions.csv"), dtype=str,
                              keep_default_na=False)
    experts = ratings[(ratings["rater_kind"] == "expert") & (ratings["occasion"] == "first")]
    expert_values = {}
    for r in experts.itertuples():
        key = (r.conversation_id, r.response_id, r.criterion)
        expert_values.setdefault(key, []).append(float(r.value))
    checked = 0

    def check(label, mine, theirs, tolerance=TOLERANCE):
        nonlocal checked
        checked += 1
        compare(label, None if mine is None else float(mine), theirs, tolerance)

    for row in table.itertuples():
        label = f"reliability {row.judge} / {row.criterion}"
        binary = row.scale == "binary"
        domain = [0.0, 1.0] if binary else [1.0, 2.0, 3.0, 4.0, 5.0]
        k_max = int(row.repetitions)
        mine = repetitions[(repetitions["judge"] == row.judge)
                           & (repetitions["criterion"] == row.criterion)]
        responses = {}
        for r in mine.itertuples():
            entry = responses.setdefault((r.conversation_id, r.response_id), {
                "slots": [None] * k_max, "expected": [], "length": r.length_chars})
            rep = int(r.repetition)
            if 1 <= rep <= k_max:
                entry["slots"][rep - 1] = float(r.value)
            if r.expected != "":
                entry["expected"].append(float(r.expected))

        # Self-consistency: responses with two or more repetitions on the scale.
        units = [[v if v in domain else None for v in e["slots"]] for e in responses.values()]
        units = [u for u in units if sum(v is not None for v in u) >= 2]
        data = np.array([[np.nan if v is None else v for v in u] for u in units]).T.reshape(k_max, -1)
        metric = "nominal" if binary else "interval"
        check(label + " n_responses", float(len(units)), row.n_responses)
        alpha = alpha_of(data, metric, domain)
        check(label + " alpha", alpha, row.alpha)
        rng = np.random.default_rng(int(settings["seed"]))
        replicates = []
        if data.shape[1] > 0:
            for _ in range(int(settings["resamples"])):
                a = alpha_of(data[:, rng.integers(0, data.shape[1], data.shape[1])], metric, domain)
                if math.isfinite(a):
                    replicates.append(a)
        low, high = (np.quantile(replicates, [0.025, 0.975]) if replicates else (None, None))
        check(label + " alpha_ci_low (own bootstrap)", low, row.alpha_ci_low, BOOTSTRAP_TOLERANCE)
        check(label + " alpha_ci_high (own bootstrap)", high, row.alpha_ci_high, BOOTSTRAP_TOLERANCE)

        # Scores, expert references and what the audits pair.
        pairs = []
        complete = []
        for (conversation, response), e in responses.items():
            reference = expert_reference(expert_values.get((conversation, response, row.criterion), []),
                                         binary)
            present = [v for v in e["slots"] if v is not None]
            if reference is not None and len(present) == k_max:
                complete.append(e["slots"])
            score = aggregate(present, row.aggregate)
            if score is None or reference is None:
                continue
            predicted = (sum(e["expected"]) / len(e["expected"]) if e["expected"]
                         else sum(present) / len(present))
            length = int(e["length"]) if e["length"] != "" else 0
            pairs.append((score, reference, predicted, math.log(length) if length > 0 else math.nan))
        check(label + " n_compared", float(len(pairs)), row.n_compared)

        # Single-repetition reliability and the repetitions the target needs.
        rho1 = (one_way_icc(np.array(complete)) if k_max >= 2 and len(complete) >= 2 else None)
        check(label + " single_repetition_reliability", rho1, row.single_repetition_reliability)
        needed = repetitions_for(rho1, float(row.target_reliability))
        check(label + " repetitions_for_target", None if needed is None else float(needed),
              row.repetitions_for_target)

        # Calibration of a binary dimension: ECE over equal-width bins and the Brier score.
        if binary:
            used = [(p, y) for _, y, p, _ in pairs if math.isfinite(p) and 0 <= p <= 1]
            bins = int(settings["bins"])
            ece, brier = None, None
            if used:
                p = np.array([u[0] for u in used])
                y = np.array([u[1] for u in used])
                b = np.minimum(np.floor(p * bins).astype(int), bins - 1)
                ece = sum((b == i).sum() / len(p) * abs(p[b == i].mean() - y[b == i].mean())
                          for i in range(bins) if (b == i).any())
                brier = float(((p - y) ** 2).mean())
            check(label + " ece", ece, row.ece)
            check(label + " brier", brier, row.brier)

        # Length audit: OLS of (judge - expert) on ln(length).
        finite = [(x, s - e) for s, e, _, x in pairs if math.isfinite(x)]
        check(label + " n_length", float(len(finite)), row.n_length)
        slope, ci = None, (None, None)
        if len(finite) >= 3 and np.ptp([f[0] for f in finite]) > 0:
            x = np.array([f[0] for f in finite])
            d = np.array([f[1] for f in finite])
            fit = sm.OLS(d, sm.add_constant(x)).fit()
            slope = float(fit.params[1])
            ci = tuple(float(c) for c in fit.conf_int(0.05)[1])
        check(label + " length_slope", slope, row.length_slope)
        check(label + " length_ci_low", ci[0], row.length_ci_low)
        check(label + " length_ci_high", ci[1], row.length_ci_high)
    return checked


OUTCOMES = ("left", "right", "tie")


def pair_counts(comparisons, items):
    """Wins W[i, j] (i beat j) and ties T[i, j] (i < j) of (left, right, winner) comparisons."""
    index = {s: k for k, s in enumerate(items)}
    m = len(items)
    wins, ties = np.zeros((m, m)), np.zeros((m, m))
    for left, right, winner in comparisons:
        i, j = index[left], index[right]
        if winner == "left":
            wins[i, j] += 1
        elif winner == "right":
            wins[j, i] += 1
        else:
            ties[min(i, j), max(i, j)] += 1
    return wins, ties


def fit_exists(wins, ties, davidson):
    """Whether a finite maximum-likelihood fit exists: every item beat or tied, and was beaten or
    tied by, the rest (strong connectivity); for Davidson also a decided comparison and a cycle of
    results with more wins than ties (no negative cycle is its absence)."""
    m = len(wins)
    beat_or_tied = (wins > 0) | (ties > 0) | (ties.T > 0)
    if m < 2 or csgraph.connected_components(sparse.csr_matrix(beat_or_tied), directed=True,
                                              connection="strong")[0] != 1:
        return False
    if not davidson or not ties.any():
        return True
    if not wins.any():
        return False
    # Edges winner -> loser of weight -1, both ways across a tie of weight +1; the cheaper kept.
    weight = np.where(ties + ties.T > 0, 1.0, 0.0)
    weight = np.where(wins > 0, -1.0, weight)
    try:
        csgraph.bellman_ford(sparse.csr_matrix(weight), directed=True)
    except csgraph.NegativeCycleError:
        return True
    return False


def bradley_terry(wins, ties, davidson, start=None, exact=True):
    """Log-strengths centred to mean 0 and Davidson's nu (None with split ties; 0 without ties),
    by maximum likelihood with scipy.optimize (BFGS on the negative log-likelihood with its
    gradient, then, when `exact`, the score equations solved by scipy.optimize.root; a bootstrap
    replicate, whose Monte Carlo error is far larger, stops at BFGS). None when it fails."""
    m = len(wins)
    i_idx, j_idx = np.triu_indices(m, 1)
    with_ties = davidson and ties.any()
    if with_ties:
        w_ij, w_ji, t = wins[i_idx, j_idx], wins[j_idx, i_idx], ties[i_idx, j_idx]
    else:
        half = ties / 2
        w_ij = wins[i_idx, j_idx] + half[i_idx, j_idx]
        w_ji = wins[j_idx, i_idx] + half[i_idx, j_idx]
        t = np.zeros_like(w_ij)
    keep = (w_ij + w_ji + t) > 0
    i_idx, j_idx, w_ij, w_ji, t = i_idx[keep], j_idx[keep], w_ij[keep], w_ji[keep], t[keep]
    total = w_ij + w_ji + t

    def unpack(x):
        theta = np.append(x[: m - 1], 0.0)
        return theta, (x[m - 1] if with_ties else -np.inf)

    def negative(x):
        theta, log_nu = unpack(x)
        a, b = theta[i_idx], theta[j_idx]
        c = log_nu + (a + b) / 2
        log_d = np.logaddexp(np.logaddexp(a, b), c) if with_ties else np.logaddexp(a, b)
        ll = w_ij * (a - log_d) + w_ji * (b - log_d)
        if with_ties:
            ll = ll + t * (c - log_d)
        pa, pb = np.exp(a - log_d), np.exp(b - log_d)
        pc = np.exp(c - log_d) if with_ties else np.zeros_like(pa)
        ga = w_ij + t / 2 - total * (pa + pc / 2)
        gb = w_ji + t / 2 - total * (pb + pc / 2)
        grad = np.zeros(m + 1)
        np.add.at(grad, i_idx, ga)
        np.add.at(grad, j_idx, gb)
        grad[m] = (t - total * pc).sum()
        g = grad[: m - 1]
        if with_ties:
            g = np.append(g, grad[m])
        return -ll.sum(), -g

    x0 = np.zeros(m) if with_ties else np.zeros(m - 1)
    if start is not None and len(start) == len(x0):
        x0 = start  # a replicate starts from the full data's estimate
    first = optimize.minimize(negative, x0, jac=True, method="BFGS",
                              options={"gtol": 1e-10 if exact else 1e-6})
    x = first.x
    if exact:
        root = optimize.root(lambda x: negative(x)[1], first.x, method="hybr", tol=1e-13)
        x = root.x if root.success else first.x
    if not np.all(np.isfinite(x)) or np.abs(negative(x)[1]).max() > (1e-6 if exact else 1e-4):
        return None
    theta, log_nu = unpack(x)
    nu = (math.exp(log_nu) if with_ties else 0.0) if davidson else None
    return theta - theta.mean(), nu, x


def check_pairwise(directory, study, ratings, compare, fail):
    """Recompute pairwise.csv, pairwise_position.csv and pairwise_agreement.csv from the pair
    rows of ratings.csv; `fail` records a disagreement that is not a number (a fit the table has
    and the data do not, or the other way round)."""
    settings = study["pairwise"]
    read = lambda name: pd.read_csv(os.path.join(directory, name), dtype=str, keep_default_na=False)
    strengths, position, agreement = (read("pairwise.csv"), read("pairwise_position.csv"),
                                      read("pairwise_agreement.csv"))
    if strengths.empty and position.empty and agreement.empty:
        return 0
    if "winner" not in ratings.columns:
        sys.exit("the pairwise tables have lines but ratings.csv has no pair verdicts")
    rubric = next(iter(strengths["rubric"].tolist() + position["rubric"].tolist()
                       + agreement["rubric"].tolist()))
    pairs = ratings[(ratings["rubric"] == rubric) & (ratings["winner"] != "")]
    group_of = lambda r: "experts" if r.rater_kind == "expert" else r.rater
    verdicts = [(group_of(r), r.rater, r.rater_kind, r.criterion, r.conversation_id, r.left,
                 r.right, r.winner, r.position_left == "1") for r in pairs.itertuples()]
    level = float(settings["level"])
    z_low, z_high = (1 - level) / 2, 1 - (1 - level) / 2
    checked = 0

    def check(label, mine, theirs, tolerance=TOLERANCE):
        nonlocal checked
        checked += 1
        compare(label, None if mine is None else float(mine), theirs, tolerance)

    davidson = settings["ties"] == "davidson"
    for (rater, criterion), lines in strengths.groupby(["rater", "criterion"], sort=False):
        label = f"pairwise {rater} / {criterion}"
        mine = [v for v in verdicts if v[0] == rater and v[3] == criterion]
        check(label + " verdicts", len(mine), lines["verdicts"].iloc[0])
        items = sorted({v[5] for v in mine} | {v[6] for v in mine})
        wins, ties = pair_counts([(v[5], v[6], v[7]) for v in mine], items)
        exists = fit_exists(wins, ties, davidson)
        if lines["source"].iloc[0] == "":
            checked += 1
            if exists:
                fail(f"{label}: the table has no fit, but the verdicts have a finite one")
            continue
        fit = bradley_terry(wins, ties, davidson) if exists else None
        if fit is None:
            checked += 1
            fail(f"{label}: the table has a fit the verdicts do not have")
            continue
        theta, nu, x = fit
        check(label + " tie_parameter", nu, lines["tie_parameter"].iloc[0])
        by_source = dict(zip(items, theta))
        check(label + " sources", len(items), str(len(lines)))
        # The script's own cluster bootstrap: conversations resampled whole.
        clusters = {}
        for v in mine:
            clusters.setdefault(v[4], []).append((v[5], v[6], v[7]))
        clusters = [pair_counts(c, items) for _, c in sorted(clusters.items())]
        rng = np.random.default_rng(int(settings["seed"]))
        replicates = []
        for _ in range(int(settings["resamples"])):
            draw = rng.integers(0, len(clusters), len(clusters))
            w = sum(clusters[k][0] for k in draw)
            t = sum(clusters[k][1] for k in draw)
            compared = (w + w.T + t + t.T).sum(axis=1) > 0
            if not compared.all() or not fit_exists(w, t, davidson):
                continue
            replicate = bradley_terry(w, t, davidson, start=x, exact=False)
            if replicate is not None:
                replicates.append(replicate[0])
        replicates = np.array(replicates)
        for line in lines.itertuples():
            at = items.index(line.source)
            name = f"{label} / {line.source}"
            check(name + " strength", by_source[line.source], line.strength)
            higher = sum(1 for s in theta if s > by_source[line.source] + 1e-9)
            rank = int(line.rank)
            check(name + " rank (after every stronger source)", 0.0 if rank > higher else 1.0, "0")
            score = wins[at].sum() + (ties[at].sum() + ties[:, at].sum()) / 2
            n = wins[at].sum() + wins[:, at].sum() + ties[at].sum() + ties[:, at].sum()
            check(name + " wins", score, line.wins)
            check(name + " comparisons", n, line.comparisons)
            check(name + " win_rate", score / n if n else None, line.win_rate)
            if len(replicates) and line.ci_low != "":
                low, high = np.quantile(replicates[:, at], [z_low, z_high])
                tolerance = STRENGTH_TOLERANCE + STRENGTH_WIDTH_SHARE * (
                    float(line.ci_high) - float(line.ci_low))
                check(name + " ci_low (own bootstrap)", low, line.ci_low, tolerance)
                check(name + " ci_high (own bootstrap)", high, line.ci_high, tolerance)
    ranks_seen = strengths[strengths["source"] != ""].groupby(["rater", "criterion"])["rank"]
    for (rater, criterion), ranks in ranks_seen:
        check(f"pairwise {rater} / {criterion} ranks 1..n", 1.0 if sorted(map(int, ranks))
              == list(range(1, len(ranks) + 1)) else 0.0, "1")

    def wilson(count, n):
        if n == 0:
            return None, None
        return proportion_confint(count, n, alpha=1 - level, method="wilson")

    for line in position.itertuples():
        label = f"position {line.judge} / {line.criterion}"
        mine = [v for v in verdicts if v[1] == line.judge and v[3] == line.criterion]
        by_pair = {}
        for v in mine:
            by_pair.setdefault((v[4], v[5], v[6]), {}).setdefault(v[8], v[7])
        both = [(o[True], o[False]) for o in by_pair.values() if True in o and False in o]
        consistent = sum(a == b for a, b in both)
        check(label + " both_orders", len(both), line.both_orders)
        check(label + " consistent", consistent, line.consistent)
        check(label + " consistency", consistent / len(both) if both else None, line.consistency)
        low, high = wilson(consistent, len(both))
        check(label + " consistency_ci_low", low, line.consistency_ci_low)
        check(label + " consistency_ci_high", high, line.consistency_ci_high)
        decided = [v for v in mine if v[7] != "tie"]
        first = sum((v[7] == "left") == v[8] for v in decided)
        check(label + " decided", len(decided), line.decided)
        check(label + " first_wins", first, line.first_wins)
        if decided:
            test = stats.binomtest(first, len(decided), 0.5)
            ci = test.proportion_ci(confidence_level=level, method="exact")
            values = (first / len(decided), ci.low, ci.high, test.pvalue)
        else:
            values = (None, None, None, None)
        for column, value in zip(("p_first", "p_first_ci_low", "p_first_ci_high", "p_value"),
                                 values):
            check(f"{label} {column}", value, getattr(line, column))

    for line in agreement.itertuples():
        label = f"agreement {line.between} / {line.criterion}"
        items = {}
        for v in verdicts:
            if v[3] == line.criterion:
                items.setdefault((v[4], v[5], v[6]), []).append(v)
        first_said, second_said = [], []
        for said in items.values():
            experts = sorted((v for v in said if v[2] == "expert"), key=lambda v: v[1])
            if line.between == "experts":
                for a in range(len(experts)):
                    for b in range(a + 1, len(experts)):
                        first_said.append(experts[a][7])
                        second_said.append(experts[b][7])
                continue
            judged = {v[7] for v in said if v[1] == line.between}
            if not judged:
                continue
            one = judged.pop() if len(judged) == 1 else "tie"
            for e in experts:
                first_said.append(one)
                second_said.append(e[7])
        n = len(first_said)
        agreements = sum(a == b for a, b in zip(first_said, second_said))
        check(label + " n", n, line.n)
        check(label + " agreements", agreements, line.agreements)
        check(label + " percent", agreements / n if n else None, line.percent)
        low, high = wilson(agreements, n)
        check(label + " percent_ci_low", low, line.percent_ci_low)
        check(label + " percent_ci_high", high, line.percent_ci_high)
        table = np.zeros((3, 3))
        for a, b in zip(first_said, second_said):
            table[OUTCOMES.index(a), OUTCOMES.index(b)] += 1
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                kappa = cohens_kappa(table)
            z = stats.norm.isf((1 - level) / 2)  # statsmodels' kappa_low / kappa_upp at 95%
            values = (kappa.kappa, kappa.std_kappa, kappa.kappa - z * kappa.std_kappa,
                      kappa.kappa + z * kappa.std_kappa)
        except (ZeroDivisionError, ValueError):
            values = (None, None, None, None)
        values = [v if v is not None and math.isfinite(v) else None for v in values]
        if values[0] is None:
            values = [None] * 4
        for column, value in zip(("kappa", "kappa_se", "kappa_ci_low", "kappa_ci_high"), values):
            check(f"{label} {column}", value, getattr(line, column))
    return checked


# The G-study's components come from an iterative REML fit on both sides: they agree to this.
GSTUDY_TOLERANCE = 1e-5
# The dense REML check holds an n x n covariance per design; larger designs are listed as skipped.
GSTUDY_MAX_SCORES = 3000
TARGET_RELIABILITY = 0.8


def check_reviewer(directory, study, all_ratings, ratings, compare, skipped):
    """The tables of the reviewer's questions: prevalence, G-studies, Dawid-Skene, by category."""
    checked = 0

    def check(label, mine, theirs, tolerance=TOLERANCE):
        nonlocal checked
        checked += 1
        compare(label, None if mine is None else float(mine), theirs, tolerance)

    def read(name):
        path = os.path.join(directory, name)
        return pd.read_csv(path, dtype=str, keep_default_na=False)

    names = {(r["model_id"] or r["name"]): r["name"] for r in study["raters"]}
    check_prevalence(read("prevalence.csv"), ratings, names, check)
    check_gstudy(read("gstudy.csv"), all_ratings, study, read("judge_repetitions.csv"), check,
                 skipped)
    check_dawid_skene(read("dawid_skene.csv"), ratings, read("adjudicated.csv"), names, check)
    check_by_category(read("agreement_by_category.csv"), read("categories.csv"), study, ratings,
                      check, skipped)
    return checked


def rogan_gladen(p, q0, q1):
    """The share truly positive given the raw rate p, specificity q0 and sensitivity q1, clipped
    to [0, 1] (Rogan & Gladen 1978)."""
    return min(1.0, max(0.0, (p + q0 - 1) / (q0 + q1 - 1)))


def prevalence_interval(p, q0, q1, n, m0, m1, level):
    """Lee et al. (2025)'s interval of the corrected prevalence: the three rates shrunk as in an
    Agresti-Coull interval, the centre moved by the bias of the ratio, the half-width carrying the
    sampling error of the raw rate and of both calibration rates; both ends clipped to [0, 1]."""
    z = float(stats.norm.ppf(1 - (1 - level) / 2))
    z2 = z * z
    pt, nt = (n * p + z2 / 2) / (n + z2), n + z2
    q0t, m0t = (m0 * q0 + 1) / (m0 + 2), m0 + 2
    q1t, m1t = (m1 * q1 + 1) / (m1 + 2), m1 + 2
    denominator = q0t + q1t - 1
    theta = (pt + q0t - 1) / denominator
    v0, v1 = q0t * (1 - q0t) / m0t, q1t * (1 - q1t) / m1t
    centre = theta + 2 * z2 * (theta * v1 - (1 - theta) * v0)
    se = math.sqrt(pt * (1 - pt) / nt + (1 - theta) ** 2 * v0 + theta ** 2 * v1) / denominator
    return min(1.0, max(0.0, centre - z * se)), min(1.0, max(0.0, centre + z * se))


def check_prevalence(table, ratings, names, check):
    """Each judge x binary dimension against the experts' strict majority, corrected by the
    published formulas (rogan_gladen, prevalence_interval)."""
    if table.empty:
        return
    for row in table.itertuples():
        on = ratings[ratings["criterion"] == row.criterion]
        experts = on[on["rater_kind"] == "expert"].groupby("response_id")["value"].agg(list)
        majority = {}
        for response, values in experts.items():
            ones = sum(v == "1" for v in values)
            if 2 * ones != len(values):
                majority[response] = int(2 * ones > len(values))
        judged = on[on["rater"] == names[row.judge]]
        said = dict(zip(judged["response_id"], (int(float(v)) for v in judged["value"])))
        n = len(said)
        pairs = [(majority[r], s) for r, s in said.items() if r in majority]
        m1 = sum(e == 1 for e, _ in pairs)
        m0 = len(pairs) - m1
        p = sum(said.values()) / n if n else None
        q1 = sum(e == 1 and s == 1 for e, s in pairs) / m1 if m1 else None
        q0 = sum(e == 0 and s == 0 for e, s in pairs) / m0 if m0 else None
        label = f"prevalence {row.judge} / {row.criterion}"
        check(label + " n_items", n, row.n_items)
        check(label + " n_calibration", len(pairs), row.n_calibration)
        check(label + " raw_rate", p, row.raw_rate)
        check(label + " sensitivity", q1, row.sensitivity)
        check(label + " specificity", q0, row.specificity)
        level = float(row.level)
        if row.corrected != "":
            check(label + " corrected", rogan_gladen(p, q0, q1), row.corrected)
            low, high = prevalence_interval(p, q0, q1, n, m0, m1, level)
            check(label + " ci_low", low, row.ci_low)
            check(label + " ci_high", high, row.ci_high)
            continue
        # No figure: the reason must hold on the labels (checked as 1 = holds).
        holds = {
            "not_informative": q0 is not None and q1 is not None and q0 + q1 <= 1,
            "no_expert_positive": m1 == 0 and m0 > 0,
            "no_expert_negative": m0 == 0 and m1 > 0,
            "no_calibration": not pairs,
            "no_items": n == 0,
        }.get(row.reason)
        check(label + f" reason {row.reason} holds", 1.0 if holds else 0.0, "1")


def dense_reml(y, keys):
    """REML estimates of the variance components of y ~ 1 + sum of random effects (one per key
    column, every level independent) + error: -2 log L_R = log|V| + log|X'V^-1 X| + y'Py minimised
    over the components (each at least 0) with scipy's L-BFGS-B and its exact gradient."""
    from scipy import linalg
    n = len(y)
    grams = []
    for k in keys:
        codes = pd.factorize(k)[0]
        grams.append((codes[:, None] == codes[None, :]).astype(float))
    grams.append(np.eye(n))
    x = np.ones((n, 1))

    def objective(s):
        v = sum(si * g for si, g in zip(s, grams))
        c = linalg.cho_factor(v)
        vi = linalg.cho_solve(c, np.eye(n))
        vx = vi @ x
        xvx = float((x.T @ vx)[0, 0])
        proj = vi - (vx @ vx.T) / xvx
        py = proj @ y
        value = 2 * np.log(np.diag(c[0])).sum() + np.log(xvx) + float(y @ py)
        grad = np.array([np.sum(proj * g) - float(py @ g @ py) for g in grams])
        return value, grad

    start = np.full(len(grams), np.var(y) / len(grams) + 1e-3)
    bounds = [(0.0, None)] * (len(grams) - 1) + [(1e-10, None)]
    fit = optimize.minimize(objective, start, jac=True, method="L-BFGS-B", bounds=bounds,
                            options={"ftol": 1e-16, "gtol": 1e-11, "maxiter": 10000,
                                     "maxfun": 20000})
    return [float(v) for v in fit.x]


def brennan(c, nr, no):
    """Relative and absolute G coefficients of a design of nr raters and no occasions."""
    get = lambda k: c.get(k, 0.0)
    delta = get("target:rater") / nr + get("target:occasion") / no + get("residual") / (nr * no)
    big = delta + get("rater") / nr + get("occasion") / no + get("rater:occasion") / (nr * no)
    ratio = lambda e: get("target") / (get("target") + e) if get("target") + e > 0 else None
    return ratio(delta), ratio(big)


def check_gstudy(table, all_ratings, study, repetitions, check, skipped):
    """Every G-study's components by a dense REML fit of its scores, its coefficients and the
    design that reaches 0.8 by Brennan's formulas."""
    if table.empty:
        return
    ratings = all_ratings[(all_ratings["rubric"] == study["rubric"]) & (all_ratings["value"] != "")
                          & (all_ratings["rater_kind"] == "expert")]
    for (kind, raters, criterion), lines in table.groupby(["kind", "raters", "criterion"], sort=False):
        first = lines.iloc[0]
        label = f"gstudy {raters} / {criterion}"
        if first["not_computed"] != "":
            continue
        if kind == "experts":
            on = ratings[(ratings["criterion"] == criterion)
                         & ratings["occasion"].isin(["first", "retest"])]
            frame = pd.DataFrame({"target": on["response_id"], "rater": on["rater"],
                                  "occasion": on["occasion"], "score": on["value"].astype(float)})
        else:
            on = repetitions[(repetitions["judge"] == raters) & (repetitions["criterion"] == criterion)]
            frame = pd.DataFrame({"target": on["response_id"], "rater": on["repetition"],
                                  "occasion": "0", "score": on["value"].astype(float)})
        check(label + " n_scores", len(frame), first["n_scores"])
        if len(frame) > GSTUDY_MAX_SCORES:
            skipped.append(f"{label}: {len(frame)} scores, more than the dense REML check holds")
            continue
        facets = first["facets"].split(",")
        t, r, o = frame["target"], frame["rater"], frame["occasion"]
        if "occasion" in facets:
            keys = [t, r, o, t + "|" + r, t + "|" + o, r + "|" + o]
            names = ["target", "rater", "occasion", "target:rater", "target:occasion",
                     "rater:occasion", "residual"]
        else:
            keys = [t, r]
            names = ["target", "rater", "residual"]
        mine = dict(zip(names, dense_reml(frame["score"].to_numpy(), keys)))
        if kind == "judge":
            mine = {k.replace("rater", "repetition"): v for k, v in mine.items()}
        for line in lines.itertuples():
            scale = max(1.0, abs(float(line.variance)))
            check(f"{label} {line.component}", mine.get(line.component), line.variance,
                  GSTUDY_TOLERANCE * scale)
        c = {k.replace("repetition", "rater"): v for k, v in mine.items()}
        nr, no = int(first["n_raters"]), int(first["n_occasions"])
        relative, absolute = brennan(c, nr, no)
        check(label + " g_relative", relative, first["g_relative"], GSTUDY_TOLERANCE)
        check(label + " g_absolute", absolute, first["g_absolute"], GSTUDY_TOLERANCE)
        occasions = range(1, 11) if "occasion" in facets else [1]
        designs = [(a, b) for a in range(1, 11) for b in occasions]
        coefficient = {d: brennan(c, *d)[0] for d in designs}
        # The design with the fewest scores per response that reaches 0.8, as the table states it;
        # a coefficient within the fit's tolerance of 0.8 may fall either side.
        close = any(v is not None and abs(v - TARGET_RELIABILITY) < 1e-4 for v in coefficient.values())
        reaching = [d for d in designs if coefficient[d] is not None and coefficient[d] >= TARGET_RELIABILITY]
        best = min(reaching, key=lambda d: (d[0] * d[1], d[1], d[0]), default=None)
        stated = first["reaches_n"]
        if not close:
            want = "" if best is None else f"{best[0]}x{best[1]}"
            check(label + f" reaches {stated or 'none'}", 1.0 if want == stated else 0.0, "1")


def check_dawid_skene(table, ratings, adjudicated, names, check):
    """Every criterion's priors and confusion matrices with crowd-kit's DawidSkene."""
    if table.empty:
        return
    from crowdkit.aggregation import DawidSkene
    for criterion, lines in table.groupby("criterion", sort=False):
        fit = lines[lines["part"] == "fit"].iloc[0]
        if fit["not_computed"] != "":
            continue
        on = ratings[ratings["criterion"] == criterion]
        rated = set(on[on["rater_kind"] == "expert"]["response_id"])
        on = on[on["response_id"].isin(rated)]
        data = pd.DataFrame({"task": on["response_id"].to_numpy(), "worker": on["rater"].to_numpy(),
                             "label": [float(v) for v in on["value"]]})
        gold = adjudicated[(adjudicated["criterion"] == criterion)
                           & adjudicated["response_id"].isin(rated)]
        true_labels = pd.Series([float(v) for v in gold["value"]], index=gold["response_id"].to_numpy())
        model = DawidSkene(n_iter=100, tol=1e-5)
        model.fit(data, true_labels=true_labels if len(true_labels) else None)
        label = f"dawid-skene {criterion}"
        check(label + " iterations", len(model.loss_history_), fit["iterations"])
        as_label = lambda text: float(text)
        for line in lines[lines["part"] == "prior"].itertuples():
            check(f"{label} prior {line.true_label}", model.priors_.loc[as_label(line.true_label)],
                  line.probability)
        errors = model.errors_
        for line in lines[lines["part"] == "confusion"].itertuples():
            worker = names.get(line.rater, line.rater)
            key = (worker, as_label(line.given_label))
            mine = errors.loc[key, as_label(line.true_label)] if key in errors.index else 0.0
            check(f"{label} {line.rater} P({line.given_label} | {line.true_label})", mine,
                  line.probability)


def check_by_category(table, categories, study, ratings, check, skipped):
    """The agreement table of each category recomputed on that category's responses alone; a
    category without figures has fewer than two responses some expert rated."""
    if table.empty:
        return
    category_of = dict(zip(categories["conversation_id"], categories["category"]))
    of_category = ratings["conversation_id"].map(lambda c: category_of.get(c, ""))
    for category, lines in table.groupby("category", sort=False):
        mine = ratings[of_category == category]
        rated = mine[mine["rater_kind"] == "expert"]["response_id"].nunique()
        computed = lines[lines["not_computed"] == ""]
        if computed.empty:
            check(f"category {category or '(none)'}: fewer than two rated responses", float(rated < 2), "1")
            continue
        check(f"category {category or '(none)'}: at least two rated responses", float(rated >= 2), "1")
        check_table(study, mine, computed, check, skipped, f"category {category or '(none)'}: ")


if __name__ == "__main__":
    pg.options["round.column.CI95"] = None
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))))
