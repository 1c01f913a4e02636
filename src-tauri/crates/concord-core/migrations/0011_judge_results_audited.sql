-- Concord study schema, version 11: judge results join the audit chain.
-- No table changes: from this version on the chain also seals every row of judge_run (settings and
-- prompts) and judge_call (each call's raw output and scores). Opening an older chained study
-- seals the judge rows it holds at the upgrade (store/audit.rs, TRACKED_SINCE_MARKER).
SELECT 1;
