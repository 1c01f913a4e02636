-- Concord study schema, version 20: what gives a value its meaning joins the audit chain.
-- From this version on the chain also seals every row of rater, source, rubric,
-- criterion, conversation, response, pair_design, package, package_source, web_login,
-- web_invitation, web_session and signing_key, and the study's settings in study_meta (all but the
-- chain's head, the entry a lead key was made at, a package's seal and who is at the window).
-- Columns that change with use, not meaning (a login's failures, lock-out and last seen; a
-- session's last seen), stay outside. Opening an older chained study seals the rows these tables
-- hold at the upgrade (store/audit.rs, TRACKED_SINCE_MARKER).


-- The hash of each row of the small sealed tables under its first column (id or key), kept as
-- the chain seals them, so that `audit verify` can name the row changed outside Concord as well
-- as its table. Only a pointer for the message: the chain's digest is what detects a change.
CREATE TABLE sealed_row (
    tbl     TEXT NOT NULL,
    row_key TEXT NOT NULL,
    hash    TEXT NOT NULL,
    PRIMARY KEY (tbl, row_key)
) STRICT, WITHOUT ROWID;
