-- Concord study schema, version 4: the lead's workflow (sampling, test–retest ratings, rater
-- packages).

-- The conversations drawn for the study by the last assignment, in draw order, with the stratum
-- (category) each was drawn from.
CREATE TABLE sample_item (
    conversation_id INTEGER PRIMARY KEY REFERENCES conversation(id) ON DELETE CASCADE,
    position        INTEGER NOT NULL UNIQUE,
    stratum         TEXT
) STRICT;

-- A test–retest item's second, blind rating. The first rating stays in `rating`; keeping the
-- second apart is what lets intra-rater reliability compare the two.
CREATE TABLE retest_rating (
    id           INTEGER PRIMARY KEY,
    rater_id     INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    response_id  INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    criterion_id INTEGER NOT NULL REFERENCES criterion(id),
    value        INTEGER,
    rationale    TEXT,
    origin       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (rater_id, response_id, criterion_id)
) STRICT;

-- Every rater package written from this study.
CREATE TABLE package (
    id          TEXT PRIMARY KEY,
    rater_id    INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    file_name   TEXT NOT NULL,
    exported_at INTEGER NOT NULL,
    merged_at   INTEGER
) STRICT;

-- The opaque source codes a package uses in place of source names.
CREATE TABLE package_source (
    package_id TEXT NOT NULL REFERENCES package(id) ON DELETE CASCADE,
    code       TEXT NOT NULL,
    source_id  INTEGER NOT NULL REFERENCES source(id),
    PRIMARY KEY (package_id, code)
) STRICT;

-- The package rater's ratings as they were when the package was written: the common base that
-- tells a revision made in the package from one made in the study (a conflict when both).
CREATE TABLE package_base (
    package_id   TEXT NOT NULL REFERENCES package(id) ON DELETE CASCADE,
    occasion     TEXT NOT NULL CHECK (occasion IN ('first', 'retest')),
    response_id  INTEGER NOT NULL,
    criterion_id INTEGER NOT NULL,
    value        INTEGER,
    raw_value    TEXT,
    rationale    TEXT,
    PRIMARY KEY (package_id, occasion, response_id, criterion_id)
) STRICT, WITHOUT ROWID;
