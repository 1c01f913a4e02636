-- Concord study schema, version 16: raters who rate from a browser (`concord serve`).

-- An expert's web passphrase, stored only as a salted PBKDF2-HMAC-SHA256 hash, with the count of
-- wrong passphrases since the last right one, the time a lock-out ends, and when a session of
-- theirs was last seen (noted at most once a minute, so the desktop can show who is connected). Revoking access deletes
-- the row: a session whose `set_at` no longer matches a row is over.
CREATE TABLE web_login (
    rater_id     INTEGER PRIMARY KEY REFERENCES rater(id) ON DELETE CASCADE,
    salt         TEXT NOT NULL,
    hash         TEXT NOT NULL,
    iterations   INTEGER NOT NULL,
    set_at       INTEGER NOT NULL,
    failures     INTEGER NOT NULL DEFAULT 0,
    locked_until INTEGER,
    last_login   INTEGER,
    last_seen    INTEGER
) STRICT;

-- A one-time invitation: only the SHA-256 of its token is kept, so the study file cannot be
-- used to log in.
CREATE TABLE web_invitation (
    token_sha256 TEXT PRIMARY KEY,
    rater_id     INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    used_at      INTEGER
) STRICT;

-- A browser's session, kept so a restarted server carries on where it stopped: only the SHA-256
-- of the cookie's token, the expert, the login it was opened under (`web_login.set_at`) and when
-- it was last seen (noted at most once a minute). Logout, idleness and revocation delete it.
CREATE TABLE web_session (
    token_sha256 TEXT PRIMARY KEY,
    rater_id     INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    login        INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen    INTEGER NOT NULL
) STRICT;
