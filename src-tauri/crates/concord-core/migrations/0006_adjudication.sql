-- Concord study schema, version 6: adjudication of discrepancies and calibration (gold) items.

-- An adjudicator's decision on one (response, criterion) pair the experts disagreed on: a consensus
-- value, or "unratable". Append-only: deciding again adds a row, and the latest row counts, so
-- every earlier decision stays on record. The experts' own ratings are never changed.
CREATE TABLE adjudication (
    id           INTEGER PRIMARY KEY,
    response_id  INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    criterion_id INTEGER NOT NULL REFERENCES criterion(id),
    value        INTEGER,
    unratable    INTEGER NOT NULL DEFAULT 0 CHECK (unratable IN (0, 1)),
    reason       TEXT NOT NULL,
    adjudicator  TEXT NOT NULL,
    decided_at   INTEGER NOT NULL,
    CHECK ((unratable = 1 AND value IS NULL) OR (unratable = 0 AND value IS NOT NULL))
) STRICT;
CREATE INDEX adjudication_by_pair ON adjudication(response_id, criterion_id, id);

CREATE TRIGGER adjudication_no_update BEFORE UPDATE ON adjudication
BEGIN SELECT RAISE(ABORT, 'adjudication decisions are append-only'); END;
CREATE TRIGGER adjudication_no_delete BEFORE DELETE ON adjudication
WHEN (SELECT COUNT(*) FROM response WHERE id = OLD.response_id) > 0
BEGIN SELECT RAISE(ABORT, 'adjudication decisions are append-only'); END;

-- The lead's key for a calibration (gold) item: the expected value per criterion and why.
CREATE TABLE calibration_key (
    response_id  INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    criterion_id INTEGER NOT NULL REFERENCES criterion(id),
    value        INTEGER NOT NULL,
    explanation  TEXT NOT NULL,
    PRIMARY KEY (response_id, criterion_id)
) STRICT;

-- An expert's answers on calibration items (kept apart from the study's ratings, so they never
-- enter agreement).
CREATE TABLE calibration_answer (
    rater_id     INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    response_id  INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    criterion_id INTEGER NOT NULL REFERENCES criterion(id),
    value        INTEGER NOT NULL,
    answered_at  INTEGER NOT NULL,
    PRIMARY KEY (rater_id, response_id, criterion_id)
) STRICT;

-- A lead's decision to let an expert start the regular queue without passing calibration.
CREATE TABLE calibration_override (
    rater_id    INTEGER PRIMARY KEY REFERENCES rater(id) ON DELETE CASCADE,
    lead        TEXT NOT NULL,
    reason      TEXT NOT NULL,
    decided_at  INTEGER NOT NULL
) STRICT;
