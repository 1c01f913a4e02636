-- Concord study schema, version 2: imports and what raters said about a response as a whole.

-- Every file imported into the study, keyed by the SHA-256 of its bytes, so importing the same
-- file again is recognised and changes nothing.
CREATE TABLE import_record (
    id           INTEGER PRIMARY KEY,
    sha256       TEXT NOT NULL UNIQUE,
    format       TEXT NOT NULL,
    file_name    TEXT NOT NULL,
    imported_at  INTEGER NOT NULL,
    options_json TEXT NOT NULL,
    summary_json TEXT NOT NULL
) STRICT;

-- One rater's remarks on one response beyond the per-criterion values: the judge's explanation or
-- the reason text before a PsyCrisis dict (`rationale`), extra fields such as MentalBench's
-- `Overall` or a declared total (`extra_json`, a JSON object), and a reply that could not be read
-- as scores (`raw_reply`), kept verbatim.
CREATE TABLE judgement (
    id          INTEGER PRIMARY KEY,
    rater_id    INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    response_id INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    rationale   TEXT,
    extra_json  TEXT NOT NULL DEFAULT '{}',
    raw_reply   TEXT,
    origin      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (rater_id, response_id)
) STRICT;
CREATE INDEX judgement_by_response ON judgement(response_id);

-- The id a released or generic file gives a response (generic long form `response_id`), so
-- ratings imported later can name it.
ALTER TABLE response ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX response_by_external_id ON response(external_id) WHERE external_id IS NOT NULL;
