//! The one writer of the values raters save: group commit. Every save request hands its value
//! (with its session's login, whose standing is checked with the value, so a save needs the
//! study once) to this task through a channel, with a one-shot channel for its answer, and
//! waits. The task
//! takes the first value waiting, drains every value that arrived behind it (at most
//! [`MOST_SAVES_PER_COMMIT`]) and writes them all in ONE transaction of the study
//! (`app::web::rate_each`: a savepoint each, so a refused value gets its own error and the
//! others are kept); only when that commit has returned does each request get its answer — a
//! value is acknowledged only once it is durable in the study, and a failed commit answers
//! every request of it with the error. While one commit waits for the disk, the next values
//! queue and go together in the next: the disk's wait is paid once per group, not once per save.
//!
//! Every [`FOLD_AFTER_COMMITS`] commits the writer asks a thread of its own to fold the
//! write-ahead log back into the study file (`app::web::log_folder`: a passive checkpoint on a
//! second connection of the study), so the fold — the slow part of an occasional commit
//! otherwise — never holds the study while saves wait: the next commits go on while it copies.
//! A commit folds the log itself only past `app::web::FOLD_INSIDE_A_COMMIT_AT_PAGES`, the safety
//! net should the fold thread fall behind.

use crate::error::WebError;
use crate::Shared;
use concord_core::app;
use concord_core::app::web::{WebSave, WebSaveError};
use concord_core::workflow::queue::ItemProgress;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// The most values written in one transaction: a drain takes no more, so one commit stays short
/// and the values behind it go in the next.
pub const MOST_SAVES_PER_COMMIT: usize = 64;

/// Commits between two folds of the write-ahead log: a few hundred pages each (a fold after
/// every commit made the disk sync about twice as often).
pub const FOLD_AFTER_COMMITS: usize = 100;

/// A value waiting for the writer, and where its answer goes.
pub(crate) struct PendingSave {
    save: WebSave,
    answer: oneshot::Sender<Result<ItemProgress, WebError>>,
}

/// The request side of the writer: hand a value over and wait for its commit.
#[derive(Clone)]
pub(crate) struct Saves {
    queue: mpsc::UnboundedSender<PendingSave>,
}

impl Saves {
    /// Save `save` and wait until the transaction holding it has committed (or failed).
    pub(crate) async fn save(&self, save: WebSave) -> Result<ItemProgress, WebError> {
        let (answer, answered) = oneshot::channel();
        self.queue
            .send(PendingSave { save, answer })
            .map_err(|_| WebError::Internal)?;
        // A writer gone (the server stopping) never acknowledges: the value may or may not
        // have been committed, so the page sends it again.
        answered.await.map_err(|_| WebError::Internal)?
    }
}

/// The channel of a new server: the request side and the writer's end, for [`run`].
pub(crate) fn channel() -> (Saves, mpsc::UnboundedReceiver<PendingSave>) {
    let (queue, waiting) = mpsc::unbounded_channel();
    (Saves { queue }, waiting)
}

/// The fold thread: each time the writer asks, fold the log on `folder`'s own connection.
/// Asking while a fold is still asked for adds nothing (the channel holds one request); the
/// thread ends with the writer.
fn fold_thread(folder: app::web::LogFolder) -> std::sync::mpsc::SyncSender<()> {
    let (ask, asked) = std::sync::mpsc::sync_channel::<()>(1);
    // Without a thread the requests go nowhere and the commits fold the log themselves past
    // the safety net.
    let _ = std::thread::Builder::new()
        .name("concord-log-fold".into())
        .spawn(move || {
            for () in asked {
                // A fold that fails leaves the log as it was; the commits are durable either way.
                let _ = folder.fold();
            }
        });
    ask
}

/// The writer: until the server stops, take every value waiting, write them in one transaction,
/// answer each once it is committed; have the log folded back every [`FOLD_AFTER_COMMITS`].
pub(crate) async fn run(
    shared: Arc<Shared>,
    mut waiting: mpsc::UnboundedReceiver<PendingSave>,
    folder: app::web::LogFolder,
) {
    let fold = fold_thread(folder);
    let mut commits_since_fold = 0usize;
    let mut next: Option<PendingSave> = None;
    loop {
        let first = match next.take() {
            Some(p) => p,
            None => match waiting.recv().await {
                Some(p) => p,
                None => return,
            },
        };
        let mut group = vec![first];
        while group.len() < MOST_SAVES_PER_COMMIT {
            match waiting.try_recv() {
                Ok(p) => group.push(p),
                Err(_) => break,
            }
        }
        let raters: Vec<i64> = group.iter().map(|p| p.save.identity.rater.id).collect();
        let (saves, answers): (Vec<WebSave>, Vec<_>) =
            group.into_iter().map(|p| (p.save, p.answer)).unzip();
        let written = shared
            .with_study(move |study| app::web::rate_each(study, &saves))
            .await;
        // Only now, the commit returned: each request gets its own answer.
        match written {
            Ok(each) => {
                for ((answer, result), rater) in answers.into_iter().zip(each).zip(raters) {
                    let answered = match result {
                        Ok(progress) => Ok(progress),
                        // As for any request of a session whose login no longer stands.
                        Err(WebSaveError::LoginEnded) => {
                            shared.sessions.close_all_of(rater);
                            Err(WebError::Unauthorized)
                        }
                        Err(e) => Err(WebError::from(e)),
                    };
                    let _ = answer.send(answered);
                }
            }
            Err(e) => {
                for answer in answers {
                    let _ = answer.send(Err(e.clone()));
                }
            }
        }
        commits_since_fold += 1;
        if commits_since_fold >= FOLD_AFTER_COMMITS {
            commits_since_fold = 0;
            let _ = fold.try_send(());
        }
        if let Ok(p) = waiting.try_recv() {
            next = Some(p);
        }
    }
}
