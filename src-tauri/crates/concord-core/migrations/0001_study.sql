-- Concord study schema, version 1.
-- One study = one SQLite file. Ratings keep every earlier value in rating_history.

CREATE TABLE study_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE rubric (
    id          INTEGER PRIMARY KEY,
    key         TEXT NOT NULL UNIQUE,
    version     INTEGER NOT NULL,
    name_json   TEXT NOT NULL,
    source_toml TEXT NOT NULL
) STRICT;

CREATE TABLE criterion (
    id               INTEGER PRIMARY KEY,
    rubric_id        INTEGER NOT NULL REFERENCES rubric(id) ON DELETE CASCADE,
    key              TEXT NOT NULL,
    position         INTEGER NOT NULL,
    group_key        TEXT,
    scale_kind       TEXT NOT NULL CHECK (scale_kind IN ('likert', 'binary')),
    scale_min        INTEGER NOT NULL,
    scale_max        INTEGER NOT NULL,
    label_json       TEXT NOT NULL,
    description_json TEXT NOT NULL,
    anchors_json     TEXT NOT NULL,
    UNIQUE (rubric_id, key)
) STRICT;

CREATE TABLE source (
    id     INTEGER PRIMARY KEY,
    key    TEXT NOT NULL UNIQUE,
    name   TEXT NOT NULL,
    family TEXT,
    kind   TEXT NOT NULL CHECK (kind IN ('human', 'llm'))
) STRICT;

CREATE TABLE conversation (
    id          INTEGER PRIMARY KEY,
    external_id TEXT NOT NULL UNIQUE,
    rubric_id   INTEGER NOT NULL REFERENCES rubric(id),
    context     TEXT NOT NULL,
    language    TEXT,
    category    TEXT
) STRICT;

CREATE TABLE response (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
    source_id       INTEGER NOT NULL REFERENCES source(id),
    text            TEXT,
    UNIQUE (conversation_id, source_id)
) STRICT;
CREATE INDEX response_by_source ON response(source_id);

CREATE TABLE rater (
    id         INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('expert', 'judge')),
    name       TEXT NOT NULL UNIQUE,
    model_id   TEXT,
    family     TEXT,
    queue_seed INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE assignment (
    id            INTEGER PRIMARY KEY,
    rater_id      INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    response_id   INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    purpose       TEXT NOT NULL DEFAULT 'regular' CHECK (purpose IN ('regular', 'calibration', 'retest')),
    first_shown_at INTEGER,
    completed_at  INTEGER,
    seconds_spent REAL NOT NULL DEFAULT 0,
    UNIQUE (rater_id, response_id, purpose),
    UNIQUE (rater_id, position)
) STRICT;

CREATE TABLE rating (
    id           INTEGER PRIMARY KEY,
    rater_id     INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    response_id  INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    criterion_id INTEGER NOT NULL REFERENCES criterion(id),
    value        INTEGER,
    raw_value    TEXT,
    rationale    TEXT,
    origin       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (rater_id, response_id, criterion_id)
) STRICT;
CREATE INDEX rating_by_response ON rating(response_id);
CREATE INDEX rating_by_criterion ON rating(criterion_id, rater_id);

CREATE TABLE rating_history (
    id          INTEGER PRIMARY KEY,
    rating_id   INTEGER NOT NULL REFERENCES rating(id) ON DELETE CASCADE,
    value       INTEGER,
    raw_value   TEXT,
    rationale   TEXT,
    origin      TEXT NOT NULL,
    valid_from  INTEGER NOT NULL,
    replaced_at INTEGER NOT NULL
) STRICT;
CREATE INDEX rating_history_by_rating ON rating_history(rating_id);

-- Append-only: no UPDATE or DELETE on the history.
CREATE TRIGGER rating_history_no_update BEFORE UPDATE ON rating_history
BEGIN SELECT RAISE(ABORT, 'rating history is append-only'); END;
CREATE TRIGGER rating_history_no_delete BEFORE DELETE ON rating_history
WHEN (SELECT COUNT(*) FROM rating WHERE id = OLD.rating_id) > 0
BEGIN SELECT RAISE(ABORT, 'rating history is append-only'); END;

CREATE TABLE flag (
    id          INTEGER PRIMARY KEY,
    rater_id    INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    response_id INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    reason      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    resolved_at INTEGER
) STRICT;

CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    detail_json TEXT NOT NULL
) STRICT;
