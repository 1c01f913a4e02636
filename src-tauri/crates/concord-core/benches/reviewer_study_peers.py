"""Peers of benches/reviewer_study.rs on the files the bench's study was imported from: the
prevalence authors' package (llm_judge_reporting), crowd-kit's DawidSkene, ANOVA expected mean
squares with numpy (equal to REML on the experts' complete data) and pingouin's ICC(C,1) per
category. Prints one JSON object: seconds (median of 3; Dawid-Skene and pingouin once) and the
numbers the Rust bench checks. Each timing includes reading the CSV files it needs."""
import json, os, sys, time, warnings

for threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(threads, "1")
import numpy as np, pandas as pd

warnings.simplefilter("ignore")
d = sys.argv[1]
out = {}


def timed(f, reps=3):
    f(); ts = []
    for _ in range(reps):
        t = time.perf_counter(); r = f(); ts.append(time.perf_counter() - t)
    return r, sorted(ts)[len(ts) // 2]


def read(rubric, name):
    return pd.read_csv(f"{d}/{rubric}-{name}.csv", dtype=str, keep_default_na=False)


def majority(experts):
    """Per item and criterion the experts' strict majority of 0/1 values (ties left out)."""
    v = experts.assign(one=(experts.score == "1").astype(int))
    g = v.groupby(["item", "criterion"]).one.agg(["sum", "count"])
    g = g[2 * g["sum"] != g["count"]]
    return (2 * g["sum"] > g["count"]).astype(int)


try:
    from llm_judge_reporting import point_estimator, confidence_interval

    def prevalence():
        experts, judges = read("psycrisis", "experts"), read("psycrisis", "judges")
        m = majority(experts)
        res = {}
        for (judge, criterion), rows in judges.groupby(["rater", "criterion"]):
            said = rows.set_index("item").score.astype(int)
            p, n = said.mean(), len(said)
            truth = m.xs(criterion, level="criterion")
            both = pd.concat([truth.rename("e"), said.rename("j")], axis=1, join="inner")
            pos, neg = both[both.e == 1], both[both.e == 0]
            q1, q0 = pos.j.mean(), 1 - neg.j.mean()
            if q0 + q1 <= 1:
                res[f"{judge}|{criterion}"] = None
                continue
            lo, hi = confidence_interval(p, q0, q1, n, len(neg), len(pos))
            res[f"{judge}|{criterion}"] = [point_estimator(p, q0, q1), float(lo), float(hi)]
        return res
    out["prevalence"], out["prevalence_s"] = timed(prevalence)
except ImportError as e:
    print(f"skipping prevalence: {e}", file=sys.stderr)

try:
    from crowdkit.aggregation import DawidSkene

    def ds():
        experts, judges = read("psycrisis", "experts"), read("psycrisis", "judges")
        rated = set(experts.item)
        both = pd.concat([experts, judges[judges.item.isin(rated)]])
        res = {}
        for criterion, rows in both.groupby("criterion"):
            df = pd.DataFrame({"task": rows.item, "worker": rows.rater, "label": rows.score.astype(int)})
            m = DawidSkene(n_iter=100, tol=1e-5).fit(df)
            res[criterion] = {"iterations": len(m.loss_history_),
                              "priors": {str(k): float(v) for k, v in m.priors_.items()}}
        return res
    out["consensus"], out["consensus_s"] = timed(ds, reps=1)
except ImportError as e:
    print(f"skipping Dawid-Skene: {e}", file=sys.stderr)


def anova():
    experts = read("mentalbench", "experts")
    res = {}
    for criterion, rows in experts.groupby("criterion"):
        y = rows.pivot(index="item", columns="rater", values="score").astype(float).to_numpy()
        a, b = y.shape; g = y.mean()
        yp, yr = y.mean(1), y.mean(0)
        msp = b * ((yp - g) ** 2).sum() / (a - 1); msr = a * ((yr - g) ** 2).sum() / (b - 1)
        mse = ((y - yp[:, None] - yr[None, :] + g) ** 2).sum() / ((a - 1) * (b - 1))
        c = {"target": (msp - mse) / b, "rater": (msr - mse) / a, "residual": mse}
        # A negative ANOVA estimate is where REML (which keeps every component >= 0) differs.
        res[criterion] = c if min(c.values()) >= 0 else None
    return res
out["gstudy"], out["gstudy_s"] = timed(anova)

try:
    import pingouin as pg

    def by_category():
        items = read("mentalbench", "items")
        experts, judges = read("mentalbench", "experts"), read("mentalbench", "judges")
        category = dict(zip(items.response_id, items.category))
        source = dict(zip(items.response_id, items.source))
        reference = experts.assign(score=experts.score.astype(float)).groupby(["item", "criterion"]).score.mean()
        res = {}
        for (judge, criterion), rows in judges.groupby(["rater", "criterion"]):
            said = rows.assign(score=rows.score.astype(float)).set_index("item").score
            ref = reference.xs(criterion, level="criterion")
            both = pd.concat([ref.rename("reference"), said.rename("judge")], axis=1, join="inner")
            both["category"] = [category[i] for i in both.index]
            both["source"] = [source[i] for i in both.index]
            for cat, part in both.groupby("category"):
                means = part.groupby("source")[["reference", "judge"]].mean()
                if len(means) < 3 or part.shape[0] < 2:
                    continue
                long = means.reset_index().melt(id_vars="source", var_name="rater", value_name="score")
                icc = pg.intraclass_corr(long, "source", "rater", "score").set_index("Type")
                form = "ICC3" if "ICC3" in icc.index else "ICC(C,1)"
                res[f"{cat}|{judge}|{criterion}"] = float(icc.loc[form, "ICC"])
        return res
    out["by_category"], out["by_category_s"] = timed(by_category, reps=1)
except ImportError as e:
    print(f"skipping agreement by category: {e}", file=sys.stderr)

print(json.dumps(out))
