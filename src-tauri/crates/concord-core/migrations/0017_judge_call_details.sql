-- Concord study schema, version 17: what a judge call was asked and how sure it was.
-- `criteria_order`: the criterion ids in the order the call's prompt listed them, as a JSON array,
-- when the run shuffles that order per call (seeded); NULL when the rubric's order was used.
-- `expected_json`: {criterion id: expected score} from the reply's token log-probabilities
-- (Σ p·s over the scale's values), when the provider returned them; NULL otherwise.
-- Both start NULL for every earlier call; a chained study's upgrade entry seals the rows as they
-- read with the new columns (store/audit.rs, seal_migration).
ALTER TABLE judge_call ADD COLUMN criteria_order TEXT;
ALTER TABLE judge_call ADD COLUMN expected_json TEXT;
