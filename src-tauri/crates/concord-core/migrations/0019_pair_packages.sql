-- Concord study schema, version 19: pairs travel in rater packages, with a rationale and flags.
-- `pair_assignment.rationale`: the expert's reason for their choices on a pair (also kept on each
-- of their verdicts of the pair, as an item's rationale is on each of its ratings).
-- `pair_flag`: a pair an expert flagged for the lead's attention, with the reason.
-- `package_pair_base` / `package_pair_merged`: what `package_base` / `package_merged` are for
-- single ratings, for the package expert's verdicts on pairs — the verdict when the package was
-- written, and the last one the study and the package agreed on at a merge (the base a later
-- return is compared against). Pair and criterion ids are the issuing study's.

ALTER TABLE pair_assignment ADD COLUMN rationale TEXT;

CREATE TABLE pair_flag (
    id          INTEGER PRIMARY KEY,
    rater_id    INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    pair_id     INTEGER NOT NULL REFERENCES pair(id) ON DELETE CASCADE,
    reason      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    resolved_at INTEGER
) STRICT;
CREATE INDEX pair_flag_by_rater ON pair_flag(rater_id, pair_id);

CREATE TABLE package_pair_base (
    package_id   TEXT NOT NULL REFERENCES package(id) ON DELETE CASCADE,
    pair_id      INTEGER NOT NULL,
    criterion_id INTEGER NOT NULL,
    winner       TEXT CHECK (winner IN ('left', 'right', 'tie')),
    rationale    TEXT,
    PRIMARY KEY (package_id, pair_id, criterion_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE package_pair_merged (
    package_id   TEXT NOT NULL REFERENCES package(id) ON DELETE CASCADE,
    pair_id      INTEGER NOT NULL,
    criterion_id INTEGER NOT NULL,
    winner       TEXT CHECK (winner IN ('left', 'right', 'tie')),
    rationale    TEXT,
    PRIMARY KEY (package_id, pair_id, criterion_id)
) STRICT, WITHOUT ROWID;
