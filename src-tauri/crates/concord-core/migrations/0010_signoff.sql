-- Concord study schema, version 10: expert sign-off (electronic signature).

-- An expert's signing passphrase, stored only as a salted PBKDF2-HMAC-SHA256 hash.
CREATE TABLE signing_key (
    rater_id   INTEGER PRIMARY KEY REFERENCES rater(id) ON DELETE CASCADE,
    salt       TEXT NOT NULL,
    hash       TEXT NOT NULL,
    iterations INTEGER NOT NULL,
    set_at     INTEGER NOT NULL
) STRICT;

-- A signature: who signed what, when, with which meaning, and the SHA-256 of the signed ratings
-- as they were at that moment.
CREATE TABLE signature (
    id             INTEGER PRIMARY KEY,
    rater_id       INTEGER NOT NULL REFERENCES rater(id) ON DELETE CASCADE,
    signer         TEXT NOT NULL,
    meaning        TEXT NOT NULL,
    scope          TEXT NOT NULL,
    signed_at      INTEGER NOT NULL,
    ratings        INTEGER NOT NULL,
    ratings_sha256 TEXT NOT NULL
) STRICT;

-- The ratings a signature covers: they are locked (a change needs a reason).
CREATE TABLE signed_rating (
    rating_id    INTEGER NOT NULL REFERENCES rating(id) ON DELETE CASCADE,
    signature_id INTEGER NOT NULL REFERENCES signature(id) ON DELETE CASCADE,
    PRIMARY KEY (rating_id, signature_id)
) STRICT, WITHOUT ROWID;
