//! Hostile names and paths through the `concord` binary: a FIFO, device or folder given as the
//! study, names holding terminal escape codes and direction overrides, experts whose names make
//! the same file name, read commands on a study not in WAL mode, and weak passphrases. Each test
//! performs the attack as a user would and checks that the defence holds.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Run `concord args` (no study from the environment), failing instead of hanging when it takes
/// more than `limit`.
fn concord_within(args: &[&str], envs: &[(&str, &str)], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_concord"))
        .args(args)
        .env_remove("CONCORD_STUDY")
        .env_remove("CONCORD_PASSPHRASE")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the concord binary runs");
    let start = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("concord {args:?} must answer within {limit:?}, not wait on the file");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn concord(args: &[&str]) -> Output {
    concord_within(args, &[], Duration::from_secs(120))
}

#[cfg(unix)]
#[test]
fn a_fifo_device_or_folder_given_as_the_study_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("pipe.concord");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs")
            .success(),
        "the FIFO is made for the attack"
    );
    let folder = dir.path().join("folder.concord");
    std::fs::create_dir(&folder).expect("folder");
    let cases = [
        (fifo.to_str().expect("utf-8 path"), "a named pipe (FIFO)"),
        (folder.to_str().expect("utf-8 path"), "a folder"),
        ("/dev/null", "a device"),
    ];
    for (db, kind) in cases {
        for command in [
            vec!["overview"],
            vec!["assignment"],
            vec!["audit", "verify"],
            vec!["demo"],
        ] {
            let mut args = vec!["--db", db];
            args.extend(command.iter().copied());
            let out = concord_within(&args, &[], Duration::from_secs(20));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "concord {args:?} must refuse {kind}: {err}"
            );
            assert!(
                err.contains(db) && err.contains(kind) && err.contains("not a study file"),
                "concord {args:?}: the error names the path and says it is {kind}: {err}"
            );
        }
    }
    let meta = std::fs::metadata("/dev/null").expect("/dev/null is there");
    assert!(!meta.is_file(), "/dev/null is still a device");
}
