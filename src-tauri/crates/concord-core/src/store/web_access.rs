//! The `web_login`, `web_invitation` and `web_session` tables: the experts who may rate from a
//! browser (`concord serve`). A login holds the web passphrase only as a salted PBKDF2 hash, with
//! the wrong passphrases counted towards a wait before the next guess; an invitation and a
//! session hold only a keyed hash of their tokens (`token_sha256`, by its historical name). Each
//! row carries the seal the server made with it (`seal`, checked by `workflow::web_access`).

use super::{Store, StoreResult, StudyTx};
use crate::base::clock::Millis;
use rusqlite::{params, OptionalExtension};

/// An expert's web passphrase as stored, and where its lock-out stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebLogin {
    pub rater_id: i64,
    pub salt: String,
    pub hash: String,
    pub iterations: u32,
    /// When the passphrase was set: a session opened under an earlier one (or under a login
    /// since revoked) is over.
    pub set_at: Millis,
    /// The server's seal over the login (none for one made before seals, or not by Concord).
    pub seal: Option<String>,
    /// Wrong passphrases since the last right one.
    pub failures: i64,
    pub locked_until: Option<Millis>,
    pub last_login: Option<Millis>,
    /// When a session of theirs last made a request (noted at most once a minute).
    pub last_seen: Option<Millis>,
}

/// A one-time invitation as stored (its token only as a SHA-256).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebInvitation {
    pub token_sha256: String,
    pub rater_id: i64,
    pub created_at: Millis,
    pub expires_at: Millis,
    pub used_at: Option<Millis>,
    pub seal: Option<String>,
}

const LOGIN_COLUMNS: &str =
    "rater_id, salt, hash, iterations, set_at, failures, locked_until, last_login, last_seen, seal";

fn web_login(r: &rusqlite::Row<'_>) -> rusqlite::Result<WebLogin> {
    Ok(WebLogin {
        rater_id: r.get(0)?,
        salt: r.get(1)?,
        hash: r.get(2)?,
        iterations: r.get::<_, i64>(3)? as u32,
        set_at: r.get(4)?,
        failures: r.get(5)?,
        locked_until: r.get(6)?,
        last_login: r.get(7)?,
        last_seen: r.get(8)?,
        seal: r.get(9)?,
    })
}

/// A browser's session as stored (its token only as a SHA-256).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSessionRecord {
    pub rater_id: i64,
    /// The `web_login.set_at` it was opened under.
    pub login: Millis,
    pub created_at: Millis,
    pub last_seen: Millis,
    pub seal: Option<String>,
}

impl Store {
    /// The session whose token has this SHA-256.
    pub fn web_session(&self, token_sha256: &str) -> StoreResult<Option<WebSessionRecord>> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT rater_id, login, created_at, last_seen, seal FROM web_session
                 WHERE token_sha256 = ?1",
            )?
            .query_row([token_sha256], |r| {
                Ok(WebSessionRecord {
                    rater_id: r.get(0)?,
                    login: r.get(1)?,
                    created_at: r.get(2)?,
                    last_seen: r.get(3)?,
                    seal: r.get(4)?,
                })
            })
            .optional()?)
    }

    /// The web login of expert `rater_id`, if they have one.
    pub fn web_login(&self, rater_id: i64) -> StoreResult<Option<WebLogin>> {
        Ok(self
            .conn()
            .prepare_cached(&format!(
                "SELECT {LOGIN_COLUMNS} FROM web_login WHERE rater_id = ?1"
            ))?
            .query_row([rater_id], web_login)
            .optional()?)
    }

    /// Every web login, by rater id.
    pub fn web_logins(&self) -> StoreResult<Vec<WebLogin>> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {LOGIN_COLUMNS} FROM web_login ORDER BY rater_id"
        ))?;
        let rows = stmt.query_map([], web_login)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The invitation whose token has this SHA-256.
    pub fn web_invitation(&self, token_sha256: &str) -> StoreResult<Option<WebInvitation>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT token_sha256, rater_id, created_at, expires_at, used_at, seal
                 FROM web_invitation WHERE token_sha256 = ?1",
                [token_sha256],
                |r| {
                    Ok(WebInvitation {
                        token_sha256: r.get(0)?,
                        rater_id: r.get(1)?,
                        created_at: r.get(2)?,
                        expires_at: r.get(3)?,
                        used_at: r.get(4)?,
                        seal: r.get(5)?,
                    })
                },
            )
            .optional()?)
    }

    /// How many unused, unexpired invitations each expert holds at `now`.
    pub fn open_web_invitations(&self, now: Millis) -> StoreResult<Vec<(i64, i64)>> {
        let mut stmt = self.conn().prepare(
            "SELECT rater_id, COUNT(*) FROM web_invitation
             WHERE used_at IS NULL AND expires_at > ?1 GROUP BY rater_id ORDER BY rater_id",
        )?;
        let rows = stmt.query_map([now], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl StudyTx<'_> {
    /// Record a new invitation for expert `rater_id`, made now, with its seal.
    pub fn add_web_invitation(
        &mut self,
        token_sha256: &str,
        rater_id: i64,
        expires_at: Millis,
        seal: &str,
    ) -> StoreResult<()> {
        self.conn().execute(
            "INSERT INTO web_invitation(token_sha256, rater_id, created_at, expires_at, seal)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![token_sha256, rater_id, self.now, expires_at, seal],
        )?;
        Ok(())
    }

    /// Mark an invitation used now; false when it was already used.
    pub fn use_web_invitation(&mut self, token_sha256: &str) -> StoreResult<bool> {
        let changed = self.conn().execute(
            "UPDATE web_invitation SET used_at = ?2 WHERE token_sha256 = ?1 AND used_at IS NULL",
            params![token_sha256, self.now],
        )?;
        Ok(changed == 1)
    }

    /// Set (or replace) expert `rater_id`'s web passphrase hash, set now (`seal` made over this
    /// time), with no failures.
    pub fn set_web_login(
        &mut self,
        rater_id: i64,
        salt: &str,
        hash: &str,
        iterations: u32,
        seal: &str,
    ) -> StoreResult<()> {
        self.conn().execute(
            "INSERT INTO web_login(rater_id, salt, hash, iterations, set_at, failures, seal)
             VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6)
             ON CONFLICT(rater_id) DO UPDATE SET salt = excluded.salt, hash = excluded.hash,
                 iterations = excluded.iterations, set_at = excluded.set_at, failures = 0,
                 locked_until = NULL, seal = excluded.seal",
            params![rater_id, salt, hash, iterations as i64, self.now, seal],
        )?;
        // Sessions opened under an earlier passphrase end with it.
        self.conn()
            .execute("DELETE FROM web_session WHERE rater_id = ?1", [rater_id])?;
        Ok(())
    }

    /// Record a right passphrase now: the failures are forgotten.
    pub fn web_login_succeeded(&mut self, rater_id: i64) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE web_login SET failures = 0, locked_until = NULL, last_login = ?2,
                 last_seen = ?2 WHERE rater_id = ?1",
            params![rater_id, self.now],
        )?;
        Ok(())
    }

    /// Note that session `token_sha256` of expert `rater_id` made a request now.
    pub fn web_seen(&mut self, rater_id: i64, token_sha256: &str) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE web_login SET last_seen = ?2 WHERE rater_id = ?1",
            params![rater_id, self.now],
        )?;
        self.conn().execute(
            "UPDATE web_session SET last_seen = ?2 WHERE token_sha256 = ?1",
            params![token_sha256, self.now],
        )?;
        Ok(())
    }

    /// Keep a new session of expert `rater_id`, opened now under login `login` (`seal` made over
    /// this time).
    pub fn add_web_session(
        &mut self,
        token_sha256: &str,
        rater_id: i64,
        login: Millis,
        seal: &str,
    ) -> StoreResult<()> {
        self.conn().execute(
            "INSERT INTO web_session(token_sha256, rater_id, login, created_at, last_seen, seal)
             VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
            params![token_sha256, rater_id, login, self.now, seal],
        )?;
        Ok(())
    }

    /// End one session.
    pub fn remove_web_session(&mut self, token_sha256: &str) -> StoreResult<()> {
        self.conn().execute(
            "DELETE FROM web_session WHERE token_sha256 = ?1",
            [token_sha256],
        )?;
        Ok(())
    }

    /// Record a wrong passphrase (the count goes on until a right one), with no new guess taken
    /// until `wait_until` when given.
    pub fn web_login_failed(
        &mut self,
        rater_id: i64,
        wait_until: Option<Millis>,
    ) -> StoreResult<()> {
        self.conn().execute(
            "UPDATE web_login SET failures = failures + 1,
                 locked_until = COALESCE(?2, locked_until) WHERE rater_id = ?1",
            params![rater_id, wait_until],
        )?;
        Ok(())
    }

    /// End expert `rater_id`'s web access: their login and open invitations go; returns whether
    /// there was anything to end.
    pub fn revoke_web_access(&mut self, rater_id: i64) -> StoreResult<bool> {
        let logins = self
            .conn()
            .execute("DELETE FROM web_login WHERE rater_id = ?1", [rater_id])?;
        let invitations = self.conn().execute(
            "DELETE FROM web_invitation WHERE rater_id = ?1 AND used_at IS NULL",
            [rater_id],
        )?;
        self.conn()
            .execute("DELETE FROM web_session WHERE rater_id = ?1", [rater_id])?;
        Ok(logins + invitations > 0)
    }
}
