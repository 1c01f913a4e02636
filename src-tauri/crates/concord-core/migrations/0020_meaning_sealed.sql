-- Concord study schema, version 20: what gives a value its meaning joins the audit chain.
-- No table changes: from this version on the chain also seals every row of rater, source, rubric,
-- criterion, conversation, response, pair_design, package, package_source, web_login,
-- web_invitation, web_session and signing_key, and the study's settings in study_meta (all but the
-- chain's head, the entry a lead key was made at, a package's seal and who is at the window).
-- Columns that change with use, not meaning (a login's failures, lock-out and last seen; a
-- session's last seen), stay outside. Opening an older chained study seals the rows these tables
-- hold at the upgrade (store/audit.rs, TRACKED_SINCE_MARKER).
SELECT 1;
