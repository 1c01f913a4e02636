-- Concord study schema, version 8: the PHI guard.

-- The lead's list of names and places to look for in every text.
CREATE TABLE phi_term (
    id   INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('name', 'place')),
    text TEXT NOT NULL,
    UNIQUE (kind, text)
) STRICT;

-- Identifiers found in a conversation's context (response_id NULL) or a response's text, located
-- by character offsets. A redacted finding forgets the text it matched (only its SHA-256 stays);
-- a kept one records who kept the original and why.
CREATE TABLE phi_finding (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
    response_id     INTEGER REFERENCES response(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    start           INTEGER NOT NULL,
    "end"           INTEGER NOT NULL,
    excerpt         TEXT,
    excerpt_sha256  TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'kept', 'redacted')),
    reason          TEXT,
    resolved_by     TEXT,
    resolved_at     INTEGER,
    found_at        INTEGER NOT NULL
) STRICT;
CREATE INDEX phi_finding_by_status ON phi_finding(status);
CREATE INDEX phi_finding_by_conversation ON phi_finding(conversation_id);

-- Texts written since the last scan: triggers mark them, the scan clears the marks, so an
-- import scans only what it brought in.
CREATE TABLE phi_pending (
    conversation_id INTEGER NOT NULL,
    response_id     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (conversation_id, response_id)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER phi_pending_conversation AFTER INSERT ON conversation
BEGIN INSERT OR IGNORE INTO phi_pending VALUES (NEW.id, 0); END;
CREATE TRIGGER phi_pending_context AFTER UPDATE OF context ON conversation
BEGIN INSERT OR IGNORE INTO phi_pending VALUES (NEW.id, 0); END;
CREATE TRIGGER phi_pending_response AFTER INSERT ON response WHEN NEW.text IS NOT NULL
BEGIN INSERT OR IGNORE INTO phi_pending VALUES (NEW.conversation_id, NEW.id); END;
CREATE TRIGGER phi_pending_text AFTER UPDATE OF text ON response
BEGIN INSERT OR IGNORE INTO phi_pending VALUES (NEW.conversation_id, NEW.id); END;

-- Texts already in the study when the guard arrived are pending too.
INSERT OR IGNORE INTO phi_pending SELECT id, 0 FROM conversation;
INSERT OR IGNORE INTO phi_pending SELECT conversation_id, id FROM response WHERE text IS NOT NULL;
