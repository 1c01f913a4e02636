-- Concord study schema, version 23: conversations of many turns.
-- `turn`: the messages of a conversation imported as a transcript, in order (`position` is the
-- 1-based turn number; `system` messages count). A message that is rated is not here but in
-- `response`, with its turn number in `response.turn`; a `candidate` row is one of several
-- assistant replies at the conversation's last position kept as history only (a session rubric's
-- conversation). A conversation without turns is one of an earlier release: its `context` is the
-- user's message (turn 1) and its responses are the candidates at turn 2.
-- `response.turn`: the turn number of a reply item (NULL: a single-turn conversation's answer, at
-- turn 2, or a session item, which stands for the whole conversation). The table is rebuilt
-- because a transcript's one source answers at several turns, so a response is unique per
-- (conversation, source, turn), no longer per (conversation, source). The rebuild keeps every id
-- and value; the audit chain hashes `turn` only when it is set (store/audit.rs, LATE_COLUMNS), so
-- a study from an earlier release seals exactly as before.
-- `phi_pending_turn`, `phi_finding.turn_id`: the PHI guard scans every turn's text.
-- Runs with foreign keys off (the store switches them off around migrations and checks them
-- before committing).

DROP TRIGGER adjudication_no_delete;

CREATE TABLE response_v23 (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
    source_id       INTEGER NOT NULL REFERENCES source(id),
    text            TEXT,
    external_id     TEXT,
    turn            INTEGER CHECK (turn IS NULL OR turn >= 1)
) STRICT;
INSERT INTO response_v23(id, conversation_id, source_id, text, external_id)
SELECT id, conversation_id, source_id, text, external_id FROM response ORDER BY id;
DROP TABLE response;
ALTER TABLE response_v23 RENAME TO response;
CREATE UNIQUE INDEX response_item ON response(conversation_id, source_id, IFNULL(turn, 0));
CREATE INDEX response_by_source ON response(source_id);
CREATE UNIQUE INDEX response_by_external_id ON response(external_id) WHERE external_id IS NOT NULL;
CREATE TRIGGER phi_pending_response AFTER INSERT ON response WHEN NEW.text IS NOT NULL
BEGIN INSERT OR IGNORE INTO phi_pending VALUES (NEW.conversation_id, NEW.id); END;
CREATE TRIGGER phi_pending_text AFTER UPDATE OF text ON response
BEGIN INSERT OR IGNORE INTO phi_pending VALUES (NEW.conversation_id, NEW.id); END;
CREATE TRIGGER adjudication_no_delete BEFORE DELETE ON adjudication
WHEN (SELECT COUNT(*) FROM response WHERE id = OLD.response_id) > 0
BEGIN SELECT RAISE(ABORT, 'adjudication decisions are append-only'); END;

CREATE TABLE turn (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
    position        INTEGER NOT NULL CHECK (position >= 1),
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    text            TEXT NOT NULL,
    source_id       INTEGER REFERENCES source(id),
    candidate       INTEGER NOT NULL DEFAULT 0 CHECK (candidate IN (0, 1))
) STRICT;
CREATE INDEX turn_by_conversation ON turn(conversation_id, position);

ALTER TABLE phi_finding ADD COLUMN turn_id INTEGER REFERENCES turn(id) ON DELETE CASCADE;
CREATE TABLE phi_pending_turn (
    turn_id INTEGER PRIMARY KEY
) STRICT;
CREATE TRIGGER phi_pending_turn_insert AFTER INSERT ON turn
BEGIN INSERT OR IGNORE INTO phi_pending_turn VALUES (NEW.id); END;
CREATE TRIGGER phi_pending_turn_text AFTER UPDATE OF text ON turn
BEGIN INSERT OR IGNORE INTO phi_pending_turn VALUES (NEW.id); END;
