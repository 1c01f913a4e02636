"""Cost growth: how Concord's costs grow with the size of a study, from the seeded generator of
scale.py run at several sizes, with the growth exponent of each cost fitted across them.

    python growth.py --concord target/release/concord \
        --panel-bench target/release/examples/panel_open

Runs scale.py once per size (responses x 4 judges x 7 attributes; default 12,500, 100,000 and
357,143 responses: 0.35, 2.8 and 10.0 million judge ratings, with expert ratings on 10% of the
responses), each in its own temporary folder that is removed before the next size, and prints one
Markdown table: import, recompute (`agreement --json`), panel open and one-rating update (the
`panel_open` example), export and overview, each as wall seconds or milliseconds, peak memory,
and the study file's size; the last column is the exponent b of cost = a * ratings^b fitted by
least squares on the logarithms (b = 1 is linear growth; b <= 1.1 is the goal).
"""

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def exponent(sizes, costs):
    """Least-squares slope of log(cost) on log(size)."""
    xs = [math.log(s) for s in sizes]
    ys = [math.log(max(c, 1e-9)) for c in costs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def median_ms(lines, prefix):
    """The 'median N ms' figure of the panel_open line that starts with `prefix`."""
    for line in lines:
        if line.startswith(prefix):
            m = re.search(r"median ([0-9.]+) ms", line)
            if m:
                return float(m.group(1))
    sys.exit(f"panel_open printed no '{prefix}' line: {lines}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--concord", required=True, help="path to the concord binary (release build)")
    ap.add_argument("--panel-bench", required=True, help="path to concord-core's panel_open example (release build)")
    ap.add_argument("--responses", default="12500,100000,357143", help="comma-separated sizes in responses")
    ap.add_argument("--judges", type=int, default=4)
    ap.add_argument("--workdir", help="where the temporary folders go (default: the system's)")
    args = ap.parse_args()
    results = []
    for responses in [int(r) for r in args.responses.split(",")]:
        directory = tempfile.mkdtemp(prefix="concord-growth-", dir=args.workdir)
        try:
            out = os.path.join(directory, "figures.json")
            subprocess.run([sys.executable, os.path.join(HERE, "scale.py"), "--concord", args.concord,
                            "--panel-bench", args.panel_bench, "--responses", str(responses),
                            "--judges", str(args.judges), "--keep", directory, "--json", out], check=True)
            with open(out) as f:
                results.append(json.load(f))
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    sizes = [r["ratings"] for r in results]

    def row_of(r, prefix):
        for name, v in r["rows"].items():
            if name.startswith(prefix):
                return v
        sys.exit(f"scale.py printed no '{prefix}' row")

    measures = [
        ("import long-ratings, judges (wall s)", lambda r: row_of(r, "import long-ratings (")[0], "{:.2f}"),
        ("import long-ratings, judges (CPU s)", lambda r: row_of(r, "import long-ratings (")[1], "{:.2f}"),
        ("import long-ratings, judges (peak MB)", lambda r: row_of(r, "import long-ratings (")[2], "{:.0f}"),
        ("peer: Python csv + sqlite3 (CPU s)", lambda r: row_of(r, "peer:")[1], "{:.2f}"),
        ("recompute: agreement --json (wall s)", lambda r: row_of(r, "recompute")[0], "{:.2f}"),
        ("panel open, first table (ms)", lambda r: median_ms(r["panel"], "open"), "{:.1f}"),
        ("one rating -> panel updated (ms)", lambda r: median_ms(r["panel"], "update"), "{:.1f}"),
        ("export ratings --format csv (wall s)", lambda r: row_of(r, "export")[0], "{:.2f}"),
        ("export ratings --format csv (peak MB)", lambda r: row_of(r, "export")[2], "{:.0f}"),
        ("overview (wall s)", lambda r: row_of(r, "overview")[0], "{:.3f}"),
        ("study file (MB)", lambda r: r["study_mb"], "{:.0f}"),
    ]
    print("| cost | " + " | ".join(f"{s / 1e6:.2f}M ratings" for s in sizes) + " | exponent |")
    print("|---" * (len(sizes) + 2) + "|")
    for name, get, fmt in measures:
        values = [get(r) for r in results]
        print(f"| {name} | " + " | ".join(fmt.format(v) for v in values) + f" | {exponent(sizes, values):.2f} |")


if __name__ == "__main__":
    main()
