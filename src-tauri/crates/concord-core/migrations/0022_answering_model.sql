-- Concord study schema, version 22: which model the provider says answered each judge call.
-- `answering_model`: the `model` the reply names (OpenAI-compatible chat completions, an Anthropic
-- message, a batch's result line or an imported batch file's output line), which may differ from
-- the model the run asked for (an alias resolved to a snapshot, a router's substitute, a server
-- serving something else); NULL when the reply named none or no reply was read.
-- `system_fingerprint`: the backend configuration the reply names (OpenAI-compatible replies that
-- give one); NULL otherwise.
-- Both start NULL for every earlier call; they are part of the call's row, so the audit chain
-- seals them with the rest of it (a chained study's upgrade entry seals the rows as they read
-- with the new columns; store/audit.rs, seal_migration).
ALTER TABLE judge_call ADD COLUMN answering_model TEXT;
ALTER TABLE judge_call ADD COLUMN system_fingerprint TEXT;
