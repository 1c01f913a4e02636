"""Peers of benches/reviewer_stats.rs on the same files: the prevalence authors' package
(llm_judge_reporting), ppi-python's ppi_mean_power, ANOVA expected mean squares with numpy (equal
to REML on these balanced data) and crowd-kit's DawidSkene. Prints one JSON object: seconds
(median of 3, DawidSkene once) and the numbers the Rust bench checks."""
import json, sys, time, warnings
import numpy as np, pandas as pd

warnings.simplefilter("ignore")
d = sys.argv[1]
out = {}

def timed(f, reps=3):
    f(); ts = []
    for _ in range(reps):
        t = time.perf_counter(); r = f(); ts.append(time.perf_counter() - t)
    return r, sorted(ts)[len(ts) // 2]

try:
    from llm_judge_reporting import point_estimator, confidence_interval, allocate_calibration_sample
    def prevalence():
        df = pd.read_csv(f"{d}/prevalence.csv")
        res = []
        cal = df[df.expert.notna()]
        for j in ["j1", "j2", "j3", "j4"]:
            p = df[j].mean(); pos = cal[cal.expert == 1]; neg = cal[cal.expert == 0]
            q1, q0 = pos[j].mean(), 1 - neg[j].mean()
            ci = confidence_interval(p, q0, q1, len(df), len(neg), len(pos))
            m0, m1 = allocate_calibration_sample(4000, p, q0, q1, len(cal))
            res.append([point_estimator(p, q0, q1), float(ci[0]), float(ci[1]), int(m1)])
        return res
    out["prevalence"], out["prevalence_s"] = timed(prevalence)
except ImportError as e:
    print(f"skipping prevalence: {e}", file=sys.stderr)

try:
    from ppi_py import ppi_mean_power
    def power():
        df = pd.read_csv(f"{d}/pilot.csv")
        y = df.expert.to_numpy(float)
        return [[int(r["n"]), int(r["N"])] for r in
                (ppi_mean_power(y, df[j].to_numpy(float), 20.0, 0.05, effective_n=float(np.var(y) / 0.002 ** 2)) for j in ["j1", "j2", "j3", "j4"])]
    out["power"], out["power_s"] = timed(power)
except ImportError as e:
    print(f"skipping ppi-power: {e}", file=sys.stderr)

def anova():
    df = pd.read_csv(f"{d}/gstudy.csv")
    Y = df.score.to_numpy().reshape(df.target.nunique(), df.rater.nunique(), df.occasion.nunique())
    a, b, c = Y.shape; g = Y.mean()
    yp, yr, yo = Y.mean((1, 2)), Y.mean((0, 2)), Y.mean((0, 1)); ypr, ypo, yro = Y.mean(2), Y.mean(1), Y.mean(0)
    msp = b * c * ((yp - g) ** 2).sum() / (a - 1); msr = a * c * ((yr - g) ** 2).sum() / (b - 1); mso = a * b * ((yo - g) ** 2).sum() / (c - 1)
    mspr = c * ((ypr - yp[:, None] - yr[None, :] + g) ** 2).sum() / ((a - 1) * (b - 1))
    mspo = b * ((ypo - yp[:, None] - yo[None, :] + g) ** 2).sum() / ((a - 1) * (c - 1))
    msro = a * ((yro - yr[:, None] - yo[None, :] + g) ** 2).sum() / ((b - 1) * (c - 1))
    e = Y - ypr[:, :, None] - ypo[:, None, :] - yro[None, :, :] + yp[:, None, None] + yr[None, :, None] + yo[None, None, :] - g
    mse = (e ** 2).sum() / ((a - 1) * (b - 1) * (c - 1))
    return [(msp - mspr - mspo + mse) / (b * c), (msr - mspr - msro + mse) / (a * c), (mso - mspo - msro + mse) / (a * b),
            (mspr - mse) / c, (mspo - mse) / b, (msro - mse) / a, mse]
out["gstudy"], out["gstudy_s"] = timed(anova)

try:
    from crowdkit.aggregation import DawidSkene
    def ds():
        df = pd.read_csv(f"{d}/consensus.csv", dtype={"task": str, "worker": str, "label": int})
        m = DawidSkene(n_iter=100, tol=1e-5).fit(df)
        return {"iterations": len(m.loss_history_), "priors": [float(m.priors_[k]) for k in sorted(m.priors_.index)]}
    out["consensus"], out["consensus_s"] = timed(ds, reps=1)
except ImportError as e:
    print(f"skipping Dawid-Skene: {e}", file=sys.stderr)
print(json.dumps(out))
