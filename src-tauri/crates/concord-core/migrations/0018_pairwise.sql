-- Concord study schema, version 18: pairwise preferences.
-- A pairwise rubric's criteria (scale kind `preference`) are asked of a pair of answers to one
-- conversation: which is better, the left one, the right one, or neither (a tie).
-- `pair_design`: how a rubric's pairs were drawn (all pairs, a seeded sample per conversation, or
-- a balanced design), once per pairwise rubric.
-- `pair`: the design's pairs; left is the answer with the lower response id, a fixed canonical
-- order that every judgement is expressed in.
-- `pair_assignment`: a pair given to a rater, with the side shown first for that rater
-- (`left_first` = 1 when the left answer is shown first), randomised per rater and recorded.
-- `pair_judgement`: one verdict of a rater on a pair and criterion in one presentation order:
-- `winner` in canonical terms (left, right, tie; NULL while unanswered) and `left_first` as it was
-- shown. A judge asked both orders has two rows per pair and criterion; an expert has one.
-- `pair_judgement_history`: every earlier version of a verdict, append-only.
-- `judge_call` gains `pair_id` and `left_first` for the calls of a pairwise run (its
-- `response_id` is then the answer shown first); the table is rebuilt because one answer is
-- shown first in many pairs, so a call is unique per (run, response, repetition, pair).
-- Runs with foreign keys off (the store switches them off around migrations and checks them
-- before committing).

CREATE TABLE criterion_v18 (
    id               INTEGER PRIMARY KEY,
    rubric_id        INTEGER NOT NULL REFERENCES rubric(id) ON DELETE CASCADE,
    key              TEXT NOT NULL,
    position         INTEGER NOT NULL,
    group_key        TEXT,
    scale_kind       TEXT NOT NULL CHECK (scale_kind IN ('likert', 'binary', 'preference')),
    scale_min        INTEGER NOT NULL,
    scale_max        INTEGER NOT NULL,
    label_json       TEXT NOT NULL,
    description_json TEXT NOT NULL,
    anchors_json     TEXT NOT NULL,
    UNIQUE (rubric_id, key)
) STRICT;
INSERT INTO criterion_v18(id, rubric_id, key, position, group_key, scale_kind, scale_min,
                          scale_max, label_json, description_json, anchors_json)
SELECT id, rubric_id, key, position, group_key, scale_kind, scale_min, scale_max, label_json,
       description_json, anchors_json
FROM criterion ORDER BY id;
DROP TABLE criterion;
ALTER TABLE criterion_v18 RENAME TO criterion;

CREATE TABLE pair_design (
    rubric_id        INTEGER PRIMARY KEY REFERENCES rubric(id) ON DELETE CASCADE,
    method           TEXT NOT NULL CHECK (method IN ('all', 'per_conversation', 'balanced')),
    per_conversation INTEGER,
    seed             INTEGER NOT NULL,
    created_at       INTEGER NOT NULL
) STRICT;

CREATE TABLE pair (
    id                INTEGER PRIMARY KEY,
    rubric_id         INTEGER NOT NULL REFERENCES rubric(id) ON DELETE CASCADE,
    conversation_id   INTEGER NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
    left_response_id  INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    right_response_id INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    position          INTEGER NOT NULL,
    CHECK (left_response_id < right_response_id),
    UNIQUE (rubric_id, left_response_id, right_response_id),
    UNIQUE (rubric_id, position)
) STRICT;
CREATE INDEX pair_by_conversation ON pair(conversation_id);

CREATE TABLE pair_assignment (
    id             INTEGER PRIMARY KEY,
    rater_id       INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    pair_id        INTEGER NOT NULL REFERENCES pair(id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    left_first     INTEGER NOT NULL CHECK (left_first IN (0, 1)),
    first_shown_at INTEGER,
    completed_at   INTEGER,
    seconds_spent  REAL NOT NULL DEFAULT 0,
    UNIQUE (rater_id, pair_id),
    UNIQUE (rater_id, position)
) STRICT;
CREATE INDEX pair_assignment_by_pair ON pair_assignment(pair_id);

CREATE TABLE pair_judgement (
    id           INTEGER PRIMARY KEY,
    rater_id     INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    pair_id      INTEGER NOT NULL REFERENCES pair(id) ON DELETE CASCADE,
    criterion_id INTEGER NOT NULL REFERENCES criterion(id),
    left_first   INTEGER NOT NULL CHECK (left_first IN (0, 1)),
    winner       TEXT CHECK (winner IN ('left', 'right', 'tie')),
    rationale    TEXT,
    origin       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (rater_id, pair_id, criterion_id, left_first)
) STRICT;
CREATE INDEX pair_judgement_by_pair ON pair_judgement(pair_id);

CREATE TABLE pair_judgement_history (
    id                INTEGER PRIMARY KEY,
    pair_judgement_id INTEGER NOT NULL REFERENCES pair_judgement(id) ON DELETE CASCADE,
    winner            TEXT,
    rationale         TEXT,
    origin            TEXT NOT NULL,
    valid_from        INTEGER NOT NULL,
    replaced_at       INTEGER NOT NULL
) STRICT;
CREATE TRIGGER pair_judgement_history_no_update BEFORE UPDATE ON pair_judgement_history
BEGIN SELECT RAISE(ABORT, 'pair judgement history is append-only'); END;
CREATE TRIGGER pair_judgement_history_no_delete BEFORE DELETE ON pair_judgement_history
WHEN (SELECT COUNT(*) FROM pair_judgement WHERE id = OLD.pair_judgement_id) > 0
BEGIN SELECT RAISE(ABORT, 'pair judgement history is append-only'); END;
CREATE TRIGGER pair_judgement_keeps_history AFTER UPDATE OF winner, rationale ON pair_judgement
WHEN OLD.winner IS NOT NEW.winner OR OLD.rationale IS NOT NEW.rationale
BEGIN
    INSERT INTO pair_judgement_history(pair_judgement_id, winner, rationale, origin, valid_from,
                                       replaced_at)
    VALUES (OLD.id, OLD.winner, OLD.rationale, OLD.origin, OLD.updated_at, NEW.updated_at);
END;

CREATE TABLE judge_call_v18 (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES judge_run(id) ON DELETE CASCADE,
    response_id    INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    repetition     INTEGER NOT NULL CHECK (repetition >= 1),
    state          TEXT NOT NULL DEFAULT 'pending'
                   CHECK (state IN ('pending', 'in_flight', 'done', 'failed')),
    attempts       INTEGER NOT NULL DEFAULT 0,
    prompt_sha256  TEXT,
    raw_output     TEXT,
    scores_json    TEXT,
    explanation    TEXT,
    failure_kind   TEXT,
    failure        TEXT,
    http_status    INTEGER,
    input_tokens   INTEGER,
    output_tokens  INTEGER,
    batch_id       TEXT,
    updated_at     INTEGER NOT NULL,
    criteria_order TEXT,
    expected_json  TEXT,
    pair_id        INTEGER REFERENCES pair(id) ON DELETE CASCADE,
    left_first     INTEGER CHECK (left_first IN (0, 1)),
    CHECK ((pair_id IS NULL) = (left_first IS NULL))
) STRICT;
INSERT INTO judge_call_v18(id, run_id, response_id, repetition, state, attempts, prompt_sha256,
                           raw_output, scores_json, explanation, failure_kind, failure,
                           http_status, input_tokens, output_tokens, batch_id, updated_at,
                           criteria_order, expected_json)
SELECT id, run_id, response_id, repetition, state, attempts, prompt_sha256, raw_output,
       scores_json, explanation, failure_kind, failure, http_status, input_tokens, output_tokens,
       batch_id, updated_at, criteria_order, expected_json
FROM judge_call ORDER BY id;
DROP TABLE judge_call;
ALTER TABLE judge_call_v18 RENAME TO judge_call;
CREATE UNIQUE INDEX judge_call_item ON judge_call(run_id, response_id, repetition, IFNULL(pair_id, 0));
CREATE INDEX judge_call_by_state ON judge_call(run_id, state);
