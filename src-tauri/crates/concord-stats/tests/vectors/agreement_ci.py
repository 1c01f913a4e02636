"""Reference vectors for Gwet's AC1/AC2 standard errors and intervals (irrCAC) and for positive and
negative specific agreement (Uebersax's generalisation, computed here from its definition and,
for two raters, also as Dice's 2a / (2a + b + c)).

    pip install irrCAC pandas numpy
    python agreement_ci.py          # writes agreement_ci.json beside this file

Every random case uses a fixed numpy seed; missing ratings are null.
"""

import json
import math
import os

import numpy as np
import pandas as pd
from irrCAC.raw import CAC

HERE = os.path.dirname(os.path.abspath(__file__))


def num(x):
    x = float(x)
    return x if math.isfinite(x) else None


def specific(matrix, category):
    agree = total = 0.0
    for row in matrix:
        labels = [v for v in row if v is not None]
        if len(labels) < 2:
            continue
        nk = sum(1 for v in labels if v == category)
        agree += nk * (nk - 1)
        total += nk * (len(labels) - 1)
    return agree / total if total > 0 else None


def case(name, why, matrix, categories):
    df = pd.DataFrame([[np.nan if v is None else v for v in row] for row in matrix])
    out = {"name": name, "why": why, "categories": categories, "matrix": matrix, "gwet": {}}
    for weights in ["identity", "linear", "quadratic"]:
        cac = CAC(df, weights=weights, categories=categories, confidence_level=0.95, digits=17)
        est = cac.gwet()["est"]
        out["gwet"][weights] = {
            "value": num(est["coefficient_value"]),
            "se": num(est["se"]),
            "ci": [num(est["confidence_interval"][0]), num(est["confidence_interval"][1])],
        }
    if len(categories) == 2:
        out["specific"] = {"positive": specific(matrix, categories[1]), "negative": specific(matrix, categories[0])}
        if all(len(r) == 2 for r in matrix):
            pairs = [(a, b) for a, b in matrix if a is not None and b is not None]
            a = sum(1 for x, y in pairs if x == y == categories[1])
            d = sum(1 for x, y in pairs if x == y == categories[0])
            bc = len(pairs) - a - d
            assert abs(out["specific"]["positive"] - 2 * a / (2 * a + bc)) < 1e-15
            assert abs(out["specific"]["negative"] - 2 * d / (2 * d + bc)) < 1e-15
    return out


def binary(seed, n, raters, prevalence, flip, missing):
    rng = np.random.default_rng(seed)
    m = []
    for _ in range(n):
        truth = int(rng.random() < prevalence)
        row = []
        for _ in range(raters):
            if rng.random() < missing:
                row.append(None)
            else:
                row.append(float(1 - truth if rng.random() < flip else truth))
        m.append(row)
    return m


def likert(seed, n, raters, missing):
    rng = np.random.default_rng(seed)
    m = []
    for _ in range(n):
        truth = int(rng.integers(1, 6))
        row = []
        for _ in range(raters):
            if rng.random() < missing:
                row.append(None)
            else:
                row.append(float(min(5, max(1, truth + rng.choice([-1, 0, 0, 0, 1])))))
        m.append(row)
    return m


def main():
    cases = [
        case("binary_two_raters", "two raters, 60 items", binary(1, 60, 2, 0.4, 0.15, 0.0), [0.0, 1.0]),
        case("binary_four_raters_missing", "four raters, 20% missing", binary(2, 100, 4, 0.3, 0.1, 0.2), [0.0, 1.0]),
        case("binary_rare_crisis", "5% prevalence, three raters", binary(3, 200, 3, 0.05, 0.05, 0.1), [0.0, 1.0]),
        case("likert_three_raters_missing", "1-5 scale, three raters, 15% missing", likert(4, 80, 3, 0.15), [1.0, 2.0, 3.0, 4.0, 5.0]),
    ]
    with open(os.path.join(HERE, "agreement_ci.json"), "w") as f:
        json.dump({"generator": "agreement_ci.py", "cases": cases}, f, indent=1)
        f.write("\n")
    for c in cases:
        print(c["name"], c["gwet"]["identity"], c.get("specific"))


if __name__ == "__main__":
    main()
