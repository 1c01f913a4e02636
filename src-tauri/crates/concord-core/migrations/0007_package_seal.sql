-- Concord study schema, version 7: sealed rater packages. What the issuing study records of each
-- package's seal: the digest of the items it issued and of their state at issue, and the latest
-- return merged (its number and state digest), so a tampered or replayed package is refused.
ALTER TABLE package ADD COLUMN issue_digest TEXT;
ALTER TABLE package ADD COLUMN issue_state TEXT;
ALTER TABLE package ADD COLUMN merged_seq INTEGER;
ALTER TABLE package ADD COLUMN merged_state TEXT;
