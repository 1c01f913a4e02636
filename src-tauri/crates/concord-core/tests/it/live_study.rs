//! A study that other connections write and fold while it is opened: what a lead does while raters
//! save from the server. Every way of opening it (inspect, open, open read-only, the encrypted
//! forms) must tell a file mid-checkpoint from a damaged one: none may refuse the live study.

use concord_core::base::clock::SteppingClock;
use concord_core::intake::demo::populate_demo;
use concord_core::store::{inspect, inspect_with, FileKind, Passphrase, Store, StoreError};
use concord_core::workflow::queue;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

fn clock() -> Arc<SteppingClock> {
    Arc::new(SteppingClock::new(1_700_000_000_000, 10))
}

/// Saves from one expert until `stop`, each growing the file (a rating and its audit entry),
/// with a second connection folding the log after every few commits as `concord serve` does.
/// Returns how many saves were committed.
fn write_and_fold(
    path: PathBuf,
    key: Option<Passphrase>,
    stop: Arc<AtomicBool>,
    progress: Arc<AtomicUsize>,
) -> usize {
    let mut store = Store::open_with(&path, clock(), key.as_ref()).expect("the writer opens");
    store.fold_log_every(100_000).expect("auto-fold off");
    let folder = store.log_folder().expect("a folding connection");
    let expert = store
        .raters()
        .expect("raters")
        .into_iter()
        .find(|r| r.name == "Demo expert B")
        .expect("a demo expert")
        .id;
    let total = queue::open_queue(&mut store, expert).expect("queue").total;
    let mut saves = 0usize;
    let mut round = 0i64;
    while !stop.load(Ordering::SeqCst) {
        for item in 1..=total {
            let it = queue::rating_item(&store, expert, item).expect("item");
            let Some(c) = it.criteria.first() else {
                continue;
            };
            let (min, max) = (c.scale.min(), c.scale.max());
            let value = min + round % (max - min + 1);
            queue::rate(&mut store, expert, item, &c.key, value).expect("a save commits");
            saves += 1;
            progress.store(saves, Ordering::SeqCst);
            if saves.is_multiple_of(3) {
                folder.fold().expect("a fold");
            }
            if stop.load(Ordering::SeqCst) {
                break;
            }
        }
        round += 1;
    }
    saves
}

/// Open `path` every way Concord opens a study, over and over while another thread writes and
/// folds it; every refusal is returned.
fn open_while_written(path: &Path, key: Option<Passphrase>, opens: usize) -> Vec<String> {
    let stop = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (path, key, stop) = (path.to_path_buf(), key.clone(), stop.clone());
        let progress = progress.clone();
        std::thread::spawn(move || write_and_fold(path, key, stop, progress))
    };
    // The opens race real writes only once the writer is writing (it may start late on a busy
    // machine).
    while progress.load(Ordering::SeqCst) < 3 && !writer.is_finished() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut refusals = Vec::new();
    for n in 0..opens {
        let outcome: Result<(), StoreError> = match n % 3 {
            0 => inspect_with(path, key.as_ref()).and_then(|kind| match kind {
                FileKind::Study { .. } => Ok(()),
                other => Err(StoreError::Invalid(format!("seen as {other:?}"))),
            }),
            1 => Store::open_read_only(path, clock(), key.as_ref()).map(drop),
            _ => Store::open_with(path, clock(), key.as_ref()).map(drop),
        };
        if let Err(e) = outcome {
            refusals.push(e.to_string());
        }
    }
    stop.store(true, Ordering::SeqCst);
    let saves = writer.join().expect("the writer ends");
    assert!(
        saves > 0,
        "the writer committed while the study was opened, so the opens raced real writes"
    );
    refusals
}

fn demo_study(path: &Path, key: Option<&Passphrase>) {
    let mut store = Store::create_with(path, clock(), key).expect("create");
    populate_demo(&mut store, 5).expect("demo");
}

#[test]
fn a_plain_study_written_and_folded_elsewhere_always_opens() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("live.concord");
    demo_study(&path, None);
    let refusals = open_while_written(&path, None, 300);
    assert!(
        refusals.is_empty(),
        "a live study is never refused while another connection writes and folds it \
         ({} of 300 opens refused; first: {:?})",
        refusals.len(),
        refusals.first()
    );
    assert!(
        matches!(inspect(&path), Ok(FileKind::Study { .. })),
        "the study is whole after the race"
    );
}

#[test]
fn an_encrypted_study_written_and_folded_elsewhere_always_opens() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("live.concord");
    let key = Passphrase::new("correct horse battery staple 41").expect("a passphrase");
    demo_study(&path, Some(&key));
    let refusals = open_while_written(&path, Some(key), 30);
    assert!(
        refusals.is_empty(),
        "a live encrypted study is never refused while another connection writes and folds it \
         ({} of 30 opens refused; first: {:?})",
        refusals.len(),
        refusals.first()
    );
}

#[test]
fn a_plain_study_cut_short_is_still_refused_with_a_log_beside_it() {
    // A log beside a truncated file must not excuse more than the log could hold.
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("cut.concord");
    demo_study(&path, None);
    let bytes = std::fs::read(&path).expect("read");
    assert!(bytes.len() > 16_384, "the demo spans several pages");
    std::fs::write(&path, &bytes[..bytes.len() / 2]).expect("cut in half");
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    // A log header and no frame: it can hold no page the file lacks.
    std::fs::write(PathBuf::from(wal), [0u8; 32]).expect("an empty log beside it");
    let refused = inspect(&path);
    assert!(
        matches!(refused, Err(StoreError::Truncated { .. })),
        "a file cut in half is truncated whatever lies beside it: {refused:?}"
    );
}
