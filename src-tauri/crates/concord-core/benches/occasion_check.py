"""What the rating table's occasion column costs a bulk import, by the form of its CHECK.

    python3 occasion_check.py [--rows 350000] [--runs 3]

Builds the `rating` table in three shapes in a scratch SQLite file — as before the occasion
column (unique key rater × response × criterion), with `occasion ... CHECK (occasion IN (0, 1,
2, 3))` and with `CHECK (occasion BETWEEN 0 AND 3)` (the form migration 12 uses), each with the
same foreign keys and indexes as the study schema — and times, in CPU seconds of this process,
inserting the same rows in one transaction with the import's statement (`INSERT ... ON CONFLICT
DO NOTHING`), the shapes alternating run by run. Uses only the standard library.
"""

import argparse
import os
import sqlite3
import statistics
import tempfile
import time

COLUMNS = """id INTEGER PRIMARY KEY,
    rater_id INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    response_id INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    criterion_id INTEGER NOT NULL REFERENCES criterion(id),
    {occasion}
    value INTEGER, raw_value TEXT, rationale TEXT, origin TEXT NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    UNIQUE (rater_id, response_id, criterion_id{key})"""

SHAPES = {
    "no occasion": ("", ""),
    "occasion IN (0, 1, 2, 3)": (
        "occasion INTEGER NOT NULL DEFAULT 0 CHECK (occasion IN (0, 1, 2, 3)),",
        ", occasion",
    ),
    "occasion BETWEEN 0 AND 3": (
        "occasion INTEGER NOT NULL DEFAULT 0 CHECK (occasion BETWEEN 0 AND 3),",
        ", occasion",
    ),
}


def run(path, shape, rows):
    occasion, key = SHAPES[shape]
    if os.path.exists(path):
        os.remove(path)
    c = sqlite3.connect(path, isolation_level=None)
    c.executescript(
        "CREATE TABLE rater(id INTEGER PRIMARY KEY);"
        "CREATE TABLE response(id INTEGER PRIMARY KEY);"
        "CREATE TABLE criterion(id INTEGER PRIMARY KEY);"
        f"CREATE TABLE rating ({COLUMNS.format(occasion=occasion, key=key)}) STRICT;"
        "CREATE INDEX rating_by_response ON rating(response_id);"
        "CREATE INDEX rating_by_criterion ON rating(criterion_id, rater_id);"
        "PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536;"
    )
    raters, criteria = 5, 5
    responses = rows // (raters * criteria)
    c.execute("BEGIN")
    c.executemany("INSERT INTO rater VALUES (?)", [(i + 1,) for i in range(raters)])
    c.executemany("INSERT INTO response VALUES (?)", [(i + 1,) for i in range(responses)])
    c.executemany("INSERT INTO criterion VALUES (?)", [(i + 1,) for i in range(criteria)])
    c.execute("COMMIT")
    cols = "rater_id, response_id, criterion_id" + (", occasion" if key else "")
    values = "?, ?, ?" + (", 0" if key else "")
    sql = (
        f"INSERT INTO rating({cols}, value, raw_value, rationale, origin, created_at, updated_at)"
        f" VALUES ({values}, ?, NULL, NULL, 'import:x', 1, 1)"
        f" ON CONFLICT({cols}) DO NOTHING"
    )
    data = [
        (r + 1, i + 1, k + 1, (i + k) % 5 + 1)
        for r in range(raters)
        for i in range(responses)
        for k in range(criteria)
    ]
    start = time.process_time()
    c.execute("BEGIN")
    c.executemany(sql, data)
    c.execute("COMMIT")
    spent = time.process_time() - start
    c.close()
    return spent, len(data)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=350_000)
    p.add_argument("--runs", type=int, default=3)
    a = p.parse_args()
    times = {s: [] for s in SHAPES}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rating.db")
        for _ in range(a.runs):
            for shape in SHAPES:
                spent, n = run(path, shape, a.rows)
                times[shape].append(spent)
    print(f"SQLite {sqlite3.sqlite_version}, {n} rows, {a.runs} runs, CPU seconds (median)")
    base = statistics.median(times["no occasion"])
    for shape, ts in times.items():
        m = statistics.median(ts)
        print(f"  {shape:28} {m:6.3f} s  ({m / base:4.2f}x)")


if __name__ == "__main__":
    main()
