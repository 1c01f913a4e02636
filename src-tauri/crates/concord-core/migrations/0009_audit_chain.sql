-- Concord study schema, version 9: the tamper-evident audit chain.
-- Each entry's hash covers the previous entry's hash, its own fields and `state`, the digest of
-- every row of the tracked tables after the transaction that wrote it (see store/audit.rs).
-- Entries written before this version keep NULL hashes; the chain starts after them.
ALTER TABLE audit_log ADD COLUMN prev_hash TEXT;
ALTER TABLE audit_log ADD COLUMN hash TEXT;
ALTER TABLE audit_log ADD COLUMN state TEXT;
