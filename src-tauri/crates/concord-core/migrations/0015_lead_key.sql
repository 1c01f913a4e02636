-- Concord study schema, version 15: the lead's signing key.
-- Each committed write that appends audit entries, made where the study's lead key is available,
-- stores a checkpoint: the chain's head after it (`entry_id`, `head`), the first entry that write
-- appended (`first_entry`) and the lead key's Ed25519 signature over them (see
-- store/checkpoint.rs). The public key is kept in `study_meta` (`lead.public_key`); the private
-- key never enters the file.
CREATE TABLE audit_checkpoint (
    entry_id    INTEGER PRIMARY KEY,
    first_entry INTEGER NOT NULL,
    head        TEXT NOT NULL,
    at          INTEGER NOT NULL,
    signature   TEXT NOT NULL
) STRICT;
-- The lead's signature over each package it issued (which also travels in the package), and
-- over the study's record of the package's returns merged, so neither can be rewritten unseen.
ALTER TABLE package ADD COLUMN issuer_signature TEXT;
ALTER TABLE package ADD COLUMN replay_signature TEXT;
