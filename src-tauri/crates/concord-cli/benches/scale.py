"""Scale: a MentalBench-100k-shaped study with LLM judges, imported and used by the `concord`
binary, side by side with a plain Python csv + sqlite3 load of the same rows.

    python scale.py --concord target/release/concord --responses 100000 --judges 4

Writes (seeded) a long-form items file (conversations x sources, one response each) and a
long-form ratings file (every judge scores every response on the seven MentalBench attributes:
responses x judges x 7 rows), then times, each as its own process with its peak resident memory:

- `concord import long-items` and `concord import long-ratings --kind judge` into a new study;
- the peer: Python's csv module and sqlite3 loading the same ratings rows into a table keyed by
  integers, with the pragmas Concord uses (WAL, synchronous FULL, foreign keys on, one
  transaction);
- expert ratings on a seeded share of the responses (`--experts 3 --expert-share 0.1`: each
  sampled response rated by `--expert-overlap` of the experts on all seven attributes), imported
  with `concord import long-ratings --kind expert`, and a queue of 20 conversations assigned to
  `expert0` (`concord assign`);
- `concord agreement --method mentalalign --json` ("recompute": the whole report from the file);
- with `--panel-bench` (the `panel_open` example of concord-core, release build): opening the
  agreement panel the way the window does (first table) and one new rating applied to it;
- `concord overview`, `concord export ratings --format csv`, and the study file's size.

`--keep DIR --reuse` keeps the generated files and the imported study and times only what follows
the import on a second run.

Prints one Markdown table. Nothing here needs network access; the data is synthetic.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

CRITERIA = ["Guidance", "Informativeness", "Relevance", "Safety", "Empathy", "Helpfulness", "Understanding"]

PEER = r'''
import csv, sqlite3, sys
db, items_path, ratings_path = sys.argv[1:4]
con = sqlite3.connect(db, isolation_level=None)
con.execute("PRAGMA journal_mode = WAL")
con.executescript("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY;")
con.executescript("""
CREATE TABLE response(id INTEGER PRIMARY KEY, external_id TEXT NOT NULL UNIQUE);
CREATE TABLE rater(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE criterion(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
CREATE TABLE rating(rater_id INTEGER NOT NULL REFERENCES rater(id),
  response_id INTEGER NOT NULL REFERENCES response(id),
  criterion_id INTEGER NOT NULL REFERENCES criterion(id), value INTEGER,
  UNIQUE(rater_id, response_id, criterion_id));
""")
con.execute("BEGIN")
with open(items_path, newline="") as f:
    con.executemany("INSERT INTO response(external_id) VALUES (?)", ((r["response_id"],) for r in csv.DictReader(f)))
responses = dict(con.execute("SELECT external_id, id FROM response"))
raters, criteria = {}, {}
def key(table, column, cache, name):
    if name not in cache:
        cache[name] = con.execute(f"INSERT INTO {table}({column}) VALUES (?)", (name,)).lastrowid
    return cache[name]
with open(ratings_path, newline="") as f:
    con.executemany("INSERT INTO rating VALUES (?, ?, ?, ?)",
        ((key("rater", "name", raters, r["rater"]), responses[r["item"]],
          key("criterion", "key", criteria, r["criterion"]), int(r["score"])) for r in csv.DictReader(f)))
con.execute("COMMIT")
'''


def generate(directory, responses, sources, judges, experts, expert_share, expert_overlap, seed):
    rng = np.random.default_rng(seed)
    conversations = responses // sources
    items = os.path.join(directory, "items.csv")
    ratings = os.path.join(directory, "ratings.csv")
    with open(items, "w") as f:
        f.write("conversation_id,context,response_id,source,text\n")
        for c in range(conversations):
            for s in range(sources):
                f.write(f"conv{c:06d},Synthetic context {c}: I have not slept for days and feel alone.,"
                        f"conv{c:06d}-s{s},source{s},Synthetic answer {s} to conversation {c}.\n")
    quality = rng.integers(1, 6, (conversations, sources))
    with open(ratings, "w") as f:
        f.write("item,rater,criterion,score\n")
        for j in range(judges):
            noise = rng.integers(-1, 2, (conversations, sources, len(CRITERIA)))
            scores = np.clip(quality[:, :, None] + noise, 1, 5)
            for c in range(conversations):
                for s in range(sources):
                    row = scores[c, s]
                    item = f"conv{c:06d}-s{s}"
                    f.write("".join(f"{item},judge{j},{name},{row[k]}\n" for k, name in enumerate(CRITERIA)))
    expert_file = os.path.join(directory, "experts.csv")
    with open(expert_file, "w") as f:
        f.write("item,rater,criterion,score\n")
        if experts > 0:
            n = conversations * sources
            chosen = np.sort(rng.choice(n, size=int(round(n * expert_share)), replace=False))
            overlap = min(expert_overlap, experts)
            for flat in chosen:
                c, s = divmod(int(flat), sources)
                who = np.sort(rng.choice(experts, size=overlap, replace=False))
                item = f"conv{c:06d}-s{s}"
                for e in who:
                    scores = np.clip(quality[c, s] + rng.integers(-1, 2, len(CRITERIA)), 1, 5)
                    f.write("".join(f"{item},expert{e},{name},{scores[k]}\n" for k, name in enumerate(CRITERIA)))
    return items, ratings, expert_file


def timed(cmd, env=None):
    """Wall seconds, CPU seconds and peak RSS (MB) of one process, via GNU time."""
    out = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M"] + cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr[-2000:]}")
    wall, user, system, rss = out.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(system), int(rss) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--concord", required=True, help="path to the concord binary (release build)")
    ap.add_argument("--responses", type=int, default=100_000)
    ap.add_argument("--sources", type=int, default=10)
    ap.add_argument("--judges", type=int, default=4)
    ap.add_argument("--experts", type=int, default=3)
    ap.add_argument("--expert-share", type=float, default=0.1, help="share of the responses the experts rate")
    ap.add_argument("--expert-overlap", type=int, default=2, help="experts per expert-rated response")
    ap.add_argument("--panel-bench", help="path to concord-core's panel_open example (release build)")
    ap.add_argument("--keep", help="directory to keep the files in (default: a temporary one)")
    ap.add_argument("--reuse", action="store_true", help="with --keep: reuse the files and study of an earlier run")
    ap.add_argument("--json", help="also write the figures to this JSON file (for growth.py)")
    args = ap.parse_args()
    directory = args.keep or tempfile.mkdtemp(prefix="concord-scale-")
    os.makedirs(directory, exist_ok=True)
    study = os.path.join(directory, "scale.concord")
    reuse = args.reuse and os.path.exists(study)
    if reuse:
        items, ratings, experts = (os.path.join(directory, f) for f in ("items.csv", "ratings.csv", "experts.csv"))
    else:
        items, ratings, experts = generate(directory, args.responses, args.sources, args.judges, args.experts,
                                           args.expert_share, args.expert_overlap, 20261130)
    n_ratings = args.responses * args.judges * len(CRITERIA)
    n_expert = sum(1 for _ in open(experts)) - 1
    peer_db = os.path.join(directory, "peer.sqlite")
    peer = os.path.join(directory, "peer_load.py")
    with open(peer, "w") as f:
        f.write(PEER)
    for path in (peer_db,) if reuse else (study, peer_db):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
    c = args.concord
    big = dict(os.environ, CONCORD_MAX_ROWS="100000000", CONCORD_MAX_CELLS="1000000000", CONCORD_MAX_FILE_MB="100000")
    rows = []
    if not reuse:
        rows.append(("import long-items", timed([c, "import", "long-items", items, "--db", study])))
        rows.append((f"import long-ratings ({n_ratings:,})",
                     timed([c, "import", "long-ratings", ratings, "--db", study, "--kind", "judge"], env=big)))
        rows.append(("peer: Python csv + sqlite3 load of the same rows", timed([sys.executable, peer, peer_db, items, ratings])))
        if n_expert > 0:
            rows.append((f"import long-ratings --kind expert ({n_expert:,})",
                         timed([c, "import", "long-ratings", experts, "--db", study, "--kind", "expert"], env=big)))
            # A small queue for expert0, so the rating screen and a new rating can be timed.
            subprocess.run([c, "assign", "--k", "1", "--seed", "7", "--sample", "20", "--expert", "expert0",
                            "--db", study], check=True, capture_output=True)
    if n_expert > 0:
        agreement = os.path.join(directory, "agreement.json")
        rows.append(("recompute: agreement --method mentalalign --json",
                     timed(["sh", "-c", f'"$0" agreement --method mentalalign --json --db "$1" > "$2"', c, study, agreement])))
        if args.panel_bench:
            out = subprocess.run([args.panel_bench, study], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"failed: {args.panel_bench}\n{out.stderr[-2000:]}")
            panel = out.stdout.strip().splitlines()
    rows.append(("overview", timed([c, "overview", "--db", study])))
    export = os.path.join(directory, "ratings-export.csv")
    rows.append(("export ratings --format csv", timed([c, "export", "ratings", "--format", "csv", "--out", export, "--db", study])))
    size = sum(os.path.getsize(study + s) for s in ("", "-wal") if os.path.exists(study + s)) / 1e6
    print(f"{args.responses:,} responses ({args.sources} sources), {args.judges} judges x 7 attributes = {n_ratings:,} ratings, "
          f"{n_expert:,} expert ratings; ratings file {os.path.getsize(ratings) / 1e6:.0f} MB; study file {size:.0f} MB")
    print("| operation | wall | CPU | peak RSS |")
    print("|---|---|---|---|")
    for name, (wall, cpu, rss) in rows:
        print(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {rss:.0f} MB |")
    if not reuse:
        imp, peer_row = rows[1][1], rows[2][1]
        print(f"import / peer: wall {imp[0] / peer_row[0]:.2f}, CPU {imp[1] / peer_row[1]:.2f}")
    if n_expert > 0 and args.panel_bench:
        print("panel_open (in one process, as the window holds the study):")
        for line in panel:
            print(f"  {line}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"responses": args.responses, "ratings": n_ratings, "expert_ratings": n_expert,
                       "study_mb": size, "rows": {name: list(v) for name, v in rows},
                       "panel": panel if n_expert > 0 and args.panel_bench else []}, f, indent=1)


if __name__ == "__main__":
    main()
