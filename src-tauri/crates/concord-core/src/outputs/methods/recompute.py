"""Recompute every number of a Concord agreement table from the exported ratings.

Concord wrote this script beside its methods appendix. The directory holds
  ratings.csv    every rating of the study (Concord's long CSV),
  study.json     the rubric's criteria and groups, the sources' and raters' model families, and
                 the options the table was computed with,
  agreement.csv  the table: per attribute (or attribute group) and judge, ICC with its 95% CI,
                 bias, MSE and the numbers of targets and rating pairs.

    pip install pingouin pandas numpy
    python recompute.py DIR

Each number is recomputed with public packages only — pingouin.intraclass_corr for the ICC and its
McGraw & Wong interval, numpy for bias and MSE — following the method the table states: the
reference is, per response, the mean of the experts who rated it; responses of the judge's own
model family are left out; at system level each rated model is one target (the mean reference and
judge scores over the responses both scored). Exit status 0 when every number agrees with the
table to 1e-6, 1 otherwise.
"""

import json
import math
import os
import sys

import numpy as np
import pandas as pd
import pingouin as pg

TOLERANCE = 1e-6
# pingouin names the forms "ICC(C,1)" since 0.6 and "ICC3" before.
FORMS = {"ICC(C,1)": "ICC3", "ICC(A,1)": "ICC2", "ICC(1,1)": "ICC1"}


def main(directory):
    with open(os.path.join(directory, "study.json"), encoding="utf-8") as f:
        study = json.load(f)
    ratings = pd.read_csv(os.path.join(directory, "ratings.csv"), dtype=str, keep_default_na=False)
    ratings = ratings[(ratings["rubric"] == study["rubric"]) & (ratings["value"] != "")]
    if ratings.duplicated(["response_id", "rater", "criterion"]).any():
        sys.exit("repeated ratings (retest occasions) are not covered by this script")
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

    table = pd.read_csv(os.path.join(directory, "agreement.csv"), dtype=str, keep_default_na=False)
    checked, failures, worst = 0, [], 0.0

    def compare(label, mine, theirs):
        nonlocal checked, worst
        checked += 1
        if theirs == "":
            ok = mine is None or not math.isfinite(mine)
            diff = 0.0
        else:
            diff = abs(mine - float(theirs)) if mine is not None else math.inf
            ok = diff <= TOLERANCE
            worst = max(worst, diff)
        if not ok:
            failures.append(f"{label}: recomputed {mine}, table {theirs}")

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
        label = f"{row.attribute} / {row.rater}"
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
        long = pd.DataFrame(
            [(t, who, v) for t, pair in enumerate(targets) for who, v in zip(("reference", "judge"), pair)],
            columns=["target", "rater", "score"],
        )
        icc = pg.intraclass_corr(long, "target", "rater", "score").set_index("Type")
        line = icc.loc[row.icc_form if row.icc_form in icc.index else FORMS[row.icc_form]]
        compare(label + " icc", float(line["ICC"]), row.icc)
        if row.ci_method == "F":
            lo, hi = line["CI95%"] if "CI95%" in line else line["CI95"]
            compare(label + " ci_low", float(lo), row.ci_low)
            compare(label + " ci_high", float(hi), row.ci_high)
    print(f"{checked} numbers recomputed; largest difference {worst:.2e}")
    if failures:
        print("\n".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    pg.options["round.column.CI95"] = None
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))))
