-- Concord study schema, version 3: LLM judge runs.
-- A run is a batch of judge calls with its settings. Every (run, response, repetition) is one row of
-- judge_call with a state, so a killed app or CLI resumes where it stopped. The exact prompt
-- template, model and sampling settings are stored with the run (and hashed), and every call keeps
-- its raw output, so each score is traceable to the prompt and the text it was read from.
-- API keys are never stored.

CREATE TABLE judge_run (
    id              INTEGER PRIMARY KEY,
    rater_id        INTEGER NOT NULL REFERENCES rater(id),
    rubric_id       INTEGER NOT NULL REFERENCES rubric(id),
    provider        TEXT NOT NULL,
    base_url        TEXT NOT NULL,
    model           TEXT NOT NULL,
    temperature     REAL NOT NULL,
    repetitions     INTEGER NOT NULL CHECK (repetitions >= 1),
    -- The full settings as JSON (identity and operational ones; never a key).
    settings_json   TEXT NOT NULL,
    -- SHA-256 of the identity settings: the same settings resume the same run.
    settings_sha256 TEXT NOT NULL UNIQUE,
    system_prompt   TEXT,
    user_prompt     TEXT NOT NULL,
    -- SHA-256 of the prompt template (system and user text).
    prompt_sha256   TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;

CREATE TABLE judge_call (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES judge_run(id) ON DELETE CASCADE,
    response_id   INTEGER NOT NULL REFERENCES response(id) ON DELETE CASCADE,
    repetition    INTEGER NOT NULL CHECK (repetition >= 1),
    state         TEXT NOT NULL DEFAULT 'pending'
                  CHECK (state IN ('pending', 'in_flight', 'done', 'failed')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    -- SHA-256 of the exact messages sent (the template with this item's texts filled in).
    prompt_sha256 TEXT,
    raw_output    TEXT,
    -- {criterion id: value} of a done call; every repetition keeps its own.
    scores_json   TEXT,
    explanation   TEXT,
    failure_kind  TEXT,
    failure       TEXT,
    http_status   INTEGER,
    input_tokens  INTEGER,
    output_tokens INTEGER,
    -- The provider batch this call was submitted in (batch mode), until its result is collected.
    batch_id      TEXT,
    updated_at    INTEGER NOT NULL,
    UNIQUE (run_id, response_id, repetition)
) STRICT;
CREATE INDEX judge_call_by_state ON judge_call(run_id, state);

-- Provider batches (OpenAI Batch API, Anthropic Message Batches) submitted for a run: on resume an
-- uncollected batch is polled again, never resubmitted.
CREATE TABLE judge_batch (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES judge_run(id) ON DELETE CASCADE,
    provider_id TEXT NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('submitted', 'collected')),
    calls       INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (run_id, provider_id)
) STRICT;
