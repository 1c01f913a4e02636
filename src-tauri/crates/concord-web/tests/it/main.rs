//! The web server's tests: one binary, one module per capability. Each test starts a real server
//! on 127.0.0.1 (port 0) over a study file in a temporary folder and talks to it over HTTP, as a
//! browser would.

mod api;
mod attacks;
mod browser;
mod first_minute;
mod first_minute_browser;
mod group_commit;
mod keyboard_browser;
mod phone_browser;
mod security;
mod spans_browser;
mod tls;
mod web_session_browser;

use concord_core::app::open::{open, WhenMissing};
use concord_core::app::open_study::OpenStudy;
use concord_core::base::clock::Clock;
use concord_core::base::study_location::StudyPath;
use concord_core::store::{NewConversation, NewSource, SourceKind, Store};
use concord_testsupport::lead_study::populate;
use concord_testsupport::web::ManualClock;
use concord_web::{Running, ServeOptions};
use rand::SeedableRng;
use reqwest::blocking::{Client, Response};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// PBKDF2 iterations in these tests (the production count takes seconds in a debug build).
pub const TEST_ITERATIONS: u32 = 1_000;
/// The text the stand-in UI page carries.
pub const PAGE_MARK: &str = "concord-test-page";
/// The answer text of a hostile dataset row.
pub const HOSTILE: &str = "<img src=x onerror=alert(1)><script>alert(2)</script>";

/// A served study and what a test needs to reach it.
pub struct Served {
    pub dir: tempfile::TempDir,
    pub study: PathBuf,
    pub clock: Arc<ManualClock>,
    pub running: Option<Running>,
    pub base: String,
}

impl Served {
    /// The study opened on a second connection, as the desktop or the CLI would open it.
    pub fn open_again(&self) -> OpenStudy {
        open_study(&self.study, self.clock.clone())
    }

    /// Stop the server and start a new one on the same study, address and UI, as after a crash
    /// and a restart.
    pub fn restart(&mut self, ui: &Path) {
        let addr = self.running.as_ref().expect("running").addr;
        self.stop();
        self.start_on(addr, ui);
    }

    /// Start a server on the study again, at `addr`.
    pub fn start_on(&mut self, addr: std::net::SocketAddr, ui: &Path) {
        let study = open_study(&self.study, self.clock.clone());
        let mut options = ServeOptions::new(addr, ui.to_path_buf());
        options.iterations = TEST_ITERATIONS;
        let running = concord_web::start(
            study,
            options,
            self.clock.clone(),
            Box::new(rand_chacha::ChaCha20Rng::seed_from_u64(12)),
        )
        .expect("the server starts again on the same address");
        self.base = running.url();
        self.running = Some(running);
    }

    /// Stop the server (it releases the study).
    pub fn stop(&mut self) {
        if let Some(r) = self.running.take() {
            r.stop();
        }
    }
}

/// Where this test process keeps its studies' lead keys: the server seals web access with a key
/// derived from a study's lead key, so a served study needs one, as on the lead's machine.
pub fn lead_keys() -> concord_core::store::lead_key::KeyStore {
    concord_core::store::lead_key::KeyStore::Folder(PathBuf::from(concat!(
        env!("CARGO_TARGET_TMPDIR"),
        "/web-lead-keys"
    )))
}

/// Keep this process's lead keys in [`lead_keys`].
pub fn keep_lead_keys() {
    concord_core::app::open_study::keep_lead_keys_in(lead_keys());
}

pub fn open_study(path: &Path, clock: Arc<dyn Clock>) -> OpenStudy {
    keep_lead_keys();
    open(
        &StudyPath::Explicit(path.to_path_buf()),
        WhenMissing::Refuse,
        clock,
        1,
        None,
    )
    .expect("the test study opens")
    .study
}

/// A study file with `conversations` conversations (four answers each, one of them hostile
/// markup) and the given experts, on a hand-moved clock.
pub fn make_study(
    dir: &Path,
    conversations: usize,
    experts: &[&str],
) -> (PathBuf, Arc<ManualClock>) {
    let path = dir.join("study.concord");
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let mut store = Store::create(&path, clock.clone()).expect("a study file is created");
    // Created on the lead's machine: the study's lead key is made with it.
    store
        .use_lead_keys(lead_keys())
        .expect("the study takes this machine's lead keys");
    populate(&mut store, conversations, experts);
    let rubric = store
        .read()
        .rubric_id("mentalbench")
        .expect("rubric read")
        .expect("the synthetic study has the MentalBench rubric");
    store
        .write(|tx| {
            let source = tx.upsert_source(&NewSource {
                key: "hostile",
                name: "Hostile",
                family: None,
                kind: SourceKind::Llm,
            })?;
            let c = tx.add_conversation(&NewConversation {
                external_id: "conv-hostile",
                rubric_id: rubric,
                context: HOSTILE,
                language: Some("en"),
                category: Some("grief"),
            })?;
            tx.add_response(c, source, Some(HOSTILE))?;
            Ok::<_, concord_core::store::StoreError>(())
        })
        .expect("the hostile row is written");
    store.close().expect("the study closes");
    (path, clock)
}

/// A stand-in UI build: an index page and one asset.
pub fn stand_in_ui(dir: &Path) -> PathBuf {
    let ui = dir.join("ui");
    std::fs::create_dir_all(ui.join("assets")).expect("ui folder");
    std::fs::write(
        ui.join("index.html"),
        format!("<!doctype html><title>{PAGE_MARK}</title>"),
    )
    .expect("index");
    std::fs::write(ui.join("assets/app.js"), "console.log('ok')").expect("asset");
    // A secret beside the build that no URL may reach.
    std::fs::write(dir.join("secret.txt"), "the study's secret").expect("secret");
    ui
}

/// Serve a new study with `experts`, each invited; returns the server and the invitation tokens
/// in the order of `experts`.
pub fn serve(
    conversations: usize,
    experts: &[&str],
    adjust: impl FnOnce(&mut ServeOptions),
) -> (Served, Vec<String>) {
    serve_study(conversations, experts, |_| {}, adjust)
}

/// [`serve`], with `prepare` given the study before the server takes it.
pub fn serve_study(
    conversations: usize,
    experts: &[&str],
    prepare: impl FnOnce(&mut OpenStudy),
    adjust: impl FnOnce(&mut ServeOptions),
) -> (Served, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (study_path, clock) = make_study(dir.path(), conversations, experts);
    let mut study = open_study(&study_path, clock.clone());
    if experts.len() > 1 {
        // Every answer to every expert, each in their own seeded order.
        let options = concord_core::workflow::assignment::AssignmentOptions::new(experts.len(), 3);
        concord_core::app::setup::assign(&mut study, &options).expect("the lead assigns");
    }
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
    let tokens = experts
        .iter()
        .map(|e| {
            concord_core::app::web::invite(&mut study, e, 7, &mut rng)
                .expect("the lead invites the expert")
                .token
        })
        .collect();
    prepare(&mut study);
    let ui = stand_in_ui(dir.path());
    let mut options = ServeOptions::new("127.0.0.1:0".parse().expect("addr"), ui);
    options.iterations = TEST_ITERATIONS;
    adjust(&mut options);
    let running = concord_web::start(
        study,
        options,
        clock.clone(),
        Box::new(rand_chacha::ChaCha20Rng::seed_from_u64(11)),
    )
    .expect("the server starts");
    let base = running.url();
    (
        Served {
            dir,
            study: study_path,
            clock,
            running: Some(running),
            base,
        },
        tokens,
    )
}

/// A browser: its cookie and CSRF token, kept as a browser keeps them.
pub struct Browser {
    pub client: Client,
    pub base: String,
    pub cookie: Option<String>,
    pub csrf: Option<String>,
}

impl Browser {
    pub fn new(base: &str) -> Browser {
        Browser {
            client: Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            base: base.to_string(),
            cookie: None,
            csrf: None,
        }
    }

    fn keep(&mut self, r: &Response) {
        for v in r.headers().get_all("set-cookie") {
            let v = v.to_str().expect("cookie text");
            let pair = v.split(';').next().expect("pair");
            if let Some(value) = pair.strip_prefix("concord_session=") {
                self.cookie = (!value.is_empty()).then(|| value.to_string());
            }
        }
    }

    pub fn get(&mut self, path: &str) -> Response {
        let mut req = self.client.get(format!("{}{path}", self.base));
        if let Some(c) = &self.cookie {
            req = req.header("cookie", format!("concord_session={c}"));
        }
        let r = req.send().expect("the server answers");
        self.keep(&r);
        r
    }

    pub fn post(&mut self, path: &str, body: serde_json::Value) -> Response {
        let mut req = self.client.post(format!("{}{path}", self.base)).json(&body);
        if let Some(c) = &self.cookie {
            req = req.header("cookie", format!("concord_session={c}"));
        }
        if let Some(t) = &self.csrf {
            req = req.header("x-csrf-token", t);
        }
        let r = req.send().expect("the server answers");
        self.keep(&r);
        r
    }

    fn logged_in(&mut self, r: Response) -> serde_json::Value {
        assert_eq!(r.status(), 200, "logging in succeeds");
        self.keep(&r);
        let v: serde_json::Value = r.json().expect("session JSON");
        self.csrf = v["csrf"].as_str().map(str::to_string);
        v
    }

    /// Take up invitation `token` with `passphrase`.
    pub fn accept(&mut self, token: &str, passphrase: &str) -> serde_json::Value {
        let r = self.post(
            "/api/invitation/accept",
            serde_json::json!({"token": token, "passphrase": passphrase}),
        );
        self.logged_in(r)
    }

    /// Log in as `name`.
    pub fn login(&mut self, name: &str, passphrase: &str) -> serde_json::Value {
        let r = self.post(
            "/api/login",
            serde_json::json!({"name": name, "passphrase": passphrase}),
        );
        self.logged_in(r)
    }

    pub fn json(&mut self, path: &str) -> serde_json::Value {
        let r = self.get(path);
        assert_eq!(r.status(), 200, "GET {path} succeeds");
        r.json().expect("JSON answer")
    }
}
