-- Concord study schema, version 21: what a served study must not take from its own file.

-- Time on task is bounded by time that passed, as the server measures it: each rater's clock of
-- the moment up to which their time on task has been counted. Leaving an item (or a pair) adds
-- at most the time since the later of this moment and when the item was first shown, and moves
-- the clock to now; so ten departures in a tenth of a second add a tenth of a second in all.
-- Opening a pair queue starts the clock when it has not started.
CREATE TABLE time_counted (
    rater_id INTEGER PRIMARY KEY REFERENCES rater(id) ON DELETE CASCADE,
    until    INTEGER NOT NULL
) STRICT;

-- A web login, invitation or session counts only with its seal: HMAC-SHA256 over what it states,
-- keyed by a secret derived from the study's lead key, which the study file never holds. The
-- server seals each one as it makes it (an invitation by the lead, a login when an invitation is
-- taken up, a session at login); a row written into the file by anything else has no valid seal
-- and logs nobody in. An invitation's and a session's token are kept as the same kind of keyed
-- hash. Rows from before this version have no seal: their experts ask the lead for a new
-- invitation, and the sessions kept for a restart end.
ALTER TABLE web_login ADD COLUMN seal TEXT;
ALTER TABLE web_invitation ADD COLUMN seal TEXT;
DELETE FROM web_session;
ALTER TABLE web_session ADD COLUMN seal TEXT;

-- A signing passphrase is kept as the public half of an Ed25519 key derived from it (`public`
-- = 1: `hash` is that public key, hex), and a signature's proof is made with the private half,
-- which only the passphrase gives: the study and its packages hold nothing a proof can be made
-- with. A key from before this version (`public` NULL: `hash` is the PBKDF2 key itself, or in a
-- package its check value) is replaced by its public key the next time its expert gives the
-- passphrase in the study that holds it.
ALTER TABLE signing_key ADD COLUMN public INTEGER CHECK (public IS NULL OR public = 1);
