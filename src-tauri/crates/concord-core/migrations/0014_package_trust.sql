-- Concord study schema, version 14: what a lead's study needs to trust nothing in a returned
-- package.
-- A signature carries a proof: HMAC-SHA256 over what it states (signer, meaning, scope, time,
-- count and hash of the signed ratings), keyed by the signer's PBKDF2 key, which the study that
-- set the signing passphrase holds as `signing_key.hash`. Signatures made before this version
-- have none.
ALTER TABLE signature ADD COLUMN proof TEXT;

-- A package gets its expert's signing key as the study holds it, but only as a check value
-- (`check_only` = 1: `hash` is the SHA-256 of the key, not the key), so the package can check the
-- passphrase and make a proof without holding what the proof is verified with.
ALTER TABLE signing_key ADD COLUMN check_only INTEGER CHECK (check_only IS NULL OR check_only = 1);

-- The last value of each rating that the study and a package agreed on at a merge (merged from
-- the package, or already the study's): the base a later return of the same package is compared
-- against, so a revision across returns merges as one. `package_base` keeps the values at issue.
CREATE TABLE package_merged (
    package_id   TEXT NOT NULL REFERENCES package(id) ON DELETE CASCADE,
    occasion     TEXT NOT NULL CHECK (occasion IN ('first', 'retest')),
    response_id  INTEGER NOT NULL,
    criterion_id INTEGER NOT NULL,
    value        INTEGER,
    raw_value    TEXT,
    rationale    TEXT,
    PRIMARY KEY (package_id, occasion, response_id, criterion_id)
) STRICT, WITHOUT ROWID;
