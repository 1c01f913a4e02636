//! End-to-end harness: the real Concord window under Xvfb, driven through tauri-driver and
//! WebKitWebDriver by a small W3C WebDriver client over reqwest. Each [`App`] gets its own X display,
//! its own tauri-driver on free ports, and its own study file; everything is stopped on drop.
//! Journeys of later screens live in sibling modules and use only this harness.

mod agreement;
mod conversations;
mod desktop;
mod figures;
mod first_minutes;
mod hostile;
mod judge;
mod keyboard;
mod overview;
mod pairs;
mod panel;
mod rating;
mod reliability;
mod researcher;
mod responsive;
mod reviewer;
mod roles;
mod rough;
mod security;
mod setup;
mod smoke;
mod span_panel;
mod spans;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// `n` with its thousands grouped as the English interface writes it ("12,480").
pub fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The window is a heavy process tree (app + WebKit web and network processes): run one at a time.
static ONE_WINDOW_AT_A_TIME: Mutex<()> = Mutex::new(());

const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn find_program(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cargo/bin"));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// Stop a child politely (SIGTERM lets tauri-driver stop its WebKitWebDriver), then for sure.
fn terminate(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// An X server of our own when the environment has no display.
struct Display {
    name: String,
    server: Option<Child>,
}

impl Display {
    fn start() -> Display {
        if let Some(d) = std::env::var("DISPLAY").ok().filter(|d| !d.is_empty()) {
            return Display {
                name: d,
                server: None,
            };
        }
        let xvfb = find_program("Xvfb").expect(
            "Xvfb is needed for the end-to-end tests; the README's test command installs it",
        );
        let mut server = Command::new(xvfb)
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb starts");
        let mut line = String::new();
        BufReader::new(server.stdout.take().expect("Xvfb stdout"))
            .read_line(&mut line)
            .expect("Xvfb reports its display number");
        let number = line.trim();
        assert!(!number.is_empty(), "Xvfb must print the display it chose");
        Display {
            name: format!(":{number}"),
            server: Some(server),
        }
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        if let Some(s) = self.server.as_mut() {
            terminate(s);
        }
    }
}

/// The desktop binary under test: the one cargo built for this test target, or — when
/// `CONCORD_APP_BINARY` names one — another build of it, such as the app installed from the .deb.
pub fn app_binary() -> PathBuf {
    std::env::var_os("CONCORD_APP_BINARY")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_concord-app")))
}

/// Folder for screenshots and other artefacts a person looks at after a run.
pub fn artifacts_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("artifacts");
    std::fs::create_dir_all(&dir).expect("artefacts folder");
    dir
}

/// One running Concord window with a WebDriver session on it.
pub struct App {
    http: reqwest::blocking::Client,
    base: String,
    session: String,
    driver: Child,
    _display: Display,
    _turn: MutexGuard<'static, ()>,
    /// When the session was requested (the app's launch).
    pub launched_at: Instant,
}

#[derive(Debug, Clone)]
pub struct Element(pub String);

impl App {
    /// Launch Concord on the study at `study` (created as the demo study if absent).
    pub fn launch(study: &Path) -> App {
        App::launch_with(study, &[])
    }

    pub fn launch_with(study: &Path, extra_env: &[(&str, &str)]) -> App {
        let study_env = study.display().to_string();
        let data = study.with_extension("webdata").display().to_string();
        let config = study.with_extension("config").display().to_string();
        let keys = study.with_extension("keys").display().to_string();
        let mut env = vec![
            ("CONCORD_STUDY", study_env.as_str()),
            // The window's own storage (language, last screen) lives beside the study, so tests
            // are independent of each other and a relaunch on the same study sees it again.
            ("XDG_DATA_HOME", data.as_str()),
            // Its recent-studies list and settings too.
            ("XDG_CONFIG_HOME", config.as_str()),
            // Lead keys in a folder of the test's own, never the OS keyring.
            ("CONCORD_KEY_DIR", keys.as_str()),
        ];
        env.extend_from_slice(extra_env);
        App::start(&env, &[])
    }

    /// Launch as a person starts Concord from the desktop: no `CONCORD_STUDY`, the app's own
    /// folders under `home` (`home/data`, `home/config`, so a relaunch with the same `home` finds
    /// its recent studies), and `args` on its command line.
    pub fn launch_bare(home: &Path, args: &[&str]) -> App {
        let data = home.join("data").display().to_string();
        let config = home.join("config").display().to_string();
        let keys = home.join("keys").display().to_string();
        App::start(
            &[
                ("XDG_DATA_HOME", data.as_str()),
                ("XDG_CONFIG_HOME", config.as_str()),
                ("CONCORD_KEY_DIR", keys.as_str()),
            ],
            args,
        )
    }

    fn start(env: &[(&str, &str)], args: &[&str]) -> App {
        let turn = ONE_WINDOW_AT_A_TIME
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let display = Display::start();
        let driver_bin = find_program("tauri-driver").expect(
            "tauri-driver is needed for the end-to-end tests; the README's test command installs it \
             (cargo install tauri-driver --locked)",
        );
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("http client");
        // A port found free can be taken by another process before the driver binds it, and the
        // driver then exits at once: it is started again on other ports (three tries).
        let mut attempt = 0;
        let (driver, base) = loop {
            attempt += 1;
            let port = free_port();
            let native = free_port();
            let mut cmd = Command::new(&driver_bin);
            cmd.args([
                "--port",
                &port.to_string(),
                "--native-port",
                &native.to_string(),
            ])
            .env("DISPLAY", &display.name)
            .env_remove("CONCORD_STUDY")
            .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
            for (k, v) in env {
                cmd.env(k, v);
            }
            // Reaped by `try_wait` when it exits, killed and waited on at the deadline, and owned
            // by the `App` (which ends it) once it listens: clippy cannot follow the loop.
            #[allow(clippy::zombie_processes)]
            let mut driver = cmd.spawn().expect("tauri-driver starts");
            let base = format!("http://127.0.0.1:{port}");
            let deadline = Instant::now() + Duration::from_secs(30);
            let mut exited = false;
            while http.get(format!("{base}/status")).send().is_err() {
                if driver.try_wait().ok().flatten().is_some() {
                    exited = true;
                    break;
                }
                if Instant::now() >= deadline {
                    // Silent for 30 s (seen once on a loaded machine): ended and tried again,
                    // as one that exited.
                    let _ = driver.kill();
                    let _ = driver.wait();
                    exited = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            if !exited {
                break (driver, base);
            }
            assert!(
                attempt < 3,
                "tauri-driver exited before listening, or did not listen within 30 s, three times"
            );
        };
        let launched_at = Instant::now();
        let caps = json!({"capabilities": {"alwaysMatch": {"tauri:options": {
            "application": app_binary().to_string_lossy(),
            "args": args,
        }}}});
        let resp: Value = http
            .post(format!("{base}/session"))
            .json(&caps)
            .send()
            .and_then(|r| r.json())
            .expect("new WebDriver session");
        let session = resp["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session id in {resp}"))
            .to_string();
        App {
            http,
            base,
            session,
            driver,
            _display: display,
            _turn: turn,
            launched_at,
        }
    }

    /// The X display the window is on (for a second process that must reach the same desktop).
    pub fn display_name(&self) -> &str {
        &self._display.name
    }

    fn url(&self, path: &str) -> String {
        format!("{}/session/{}{}", self.base, self.session, path)
    }

    fn post(&self, path: &str, body: Value) -> Value {
        let resp: Value = self
            .http
            .post(self.url(path))
            .json(&body)
            .send()
            .and_then(|r| r.json())
            .unwrap_or_else(|e| panic!("WebDriver POST {path} failed: {e}"));
        resp
    }

    fn get(&self, path: &str) -> Value {
        self.http
            .get(self.url(path))
            .send()
            .and_then(|r| r.json())
            .unwrap_or_else(|e| panic!("WebDriver GET {path} failed: {e}"))
    }

    /// The first element matching `css`, if present now.
    pub fn try_find(&self, css: &str) -> Option<Element> {
        let v = self.post("/element", json!({"using": "css selector", "value": css}));
        v["value"][ELEMENT_KEY]
            .as_str()
            .map(|s| Element(s.to_string()))
    }

    /// All elements matching `css` now.
    pub fn find_all(&self, css: &str) -> Vec<Element> {
        let v = self.post("/elements", json!({"using": "css selector", "value": css}));
        v["value"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e[ELEMENT_KEY].as_str().map(|s| Element(s.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Wait up to `timeout` for an element matching `css`.
    pub fn wait_for(&self, css: &str, timeout: Duration) -> Element {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(e) = self.try_find(css) {
                return e;
            }
            if Instant::now() > deadline {
                self.screenshot("timeout");
                panic!("no element {css:?} appeared within {timeout:?} (screenshot tests/artifacts/timeout.png)");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn text(&self, e: &Element) -> String {
        self.get(&format!("/element/{}/text", e.0))["value"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub fn text_of(&self, css: &str) -> String {
        let e = self.wait_for(css, Duration::from_secs(10));
        self.text(&e)
    }

    pub fn attribute(&self, e: &Element, name: &str) -> Option<String> {
        self.get(&format!("/element/{}/attribute/{name}", e.0))["value"]
            .as_str()
            .map(str::to_string)
    }

    pub fn click(&self, e: &Element) {
        self.post(&format!("/element/{}/click", e.0), json!({}));
    }

    /// Empty an input or textarea (as a person selecting all and deleting would).
    pub fn clear(&self, e: &Element) {
        self.post(&format!("/element/{}/clear", e.0), json!({}));
    }

    pub fn type_into(&self, e: &Element, text: &str) {
        self.post(&format!("/element/{}/value", e.0), json!({"text": text}));
    }

    /// Press keys as a person would, sent to whatever has focus. Special keys use WebDriver code
    /// points (e.g. "\u{E007}" Enter, "\u{E003}" Backspace, "\u{E012}" ArrowLeft).
    pub fn press(&self, keys: &str) {
        let mut actions = Vec::new();
        for ch in keys.chars() {
            actions.push(json!({"type": "keyDown", "value": ch.to_string()}));
            actions.push(json!({"type": "keyUp", "value": ch.to_string()}));
        }
        self.post(
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        );
        self.http.delete(self.url("/actions")).send().ok();
    }

    /// Press `key` while holding `modifier` (e.g. "\u{E009}" Control), as one chord.
    pub fn chord(&self, modifier: &str, key: &str) {
        let actions = json!([
            {"type": "keyDown", "value": modifier},
            {"type": "keyDown", "value": key},
            {"type": "keyUp", "value": key},
            {"type": "keyUp", "value": modifier},
        ]);
        self.post(
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        );
        self.http.delete(self.url("/actions")).send().ok();
    }

    /// Run asynchronous JavaScript in the page; the script calls `arguments[arguments.length - 1]`
    /// with its result.
    pub fn script_async(&self, body: &str, args: Value) -> Value {
        self.post("/execute/async", json!({"script": body, "args": args}))["value"].clone()
    }

    /// Wait until `css` matches an element whose attribute `name` equals `want`.
    pub fn wait_for_attribute(
        &self,
        css: &str,
        name: &str,
        want: &str,
        timeout: Duration,
    ) -> Element {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(e) = self.try_find(css) {
                if self.attribute(&e, name).as_deref() == Some(want) {
                    return e;
                }
            }
            if Instant::now() > deadline {
                self.screenshot("timeout");
                panic!("{css} never had {name}={want:?} within {timeout:?} (screenshot tests/artifacts/timeout.png)");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Run JavaScript in the page and return its result.
    pub fn script(&self, body: &str, args: Value) -> Value {
        self.post("/execute/sync", json!({"script": body, "args": args}))["value"].clone()
    }

    /// Call one of the app's IPC commands from the page, exactly as the window's code does (the
    /// path a native dialog returns goes into the same command), and return its result, or
    /// `{"error": …}` when it failed.
    pub fn invoke(&self, command: &str, args: Value) -> Value {
        self.script_async(
            "const done = arguments[arguments.length - 1]; \
             window.__TAURI_INTERNALS__.invoke(arguments[0], arguments[1]) \
               .then((v) => done({ok: v === undefined ? null : v}), (e) => done({error: e}));",
            json!([command, args]),
        )
    }

    /// Run axe-core (the npm package the UI installs) inside the real webview on the screen shown
    /// now — every WCAG 2.2 A and AA rule and axe's best practices — and fail on any violation of
    /// any impact, naming rule, impact and elements (screen names must be file-name safe: the
    /// screenshot of a failure is named after it).
    pub fn assert_accessible(&self, screen: &str) {
        if self.script("return typeof window.axe", json!([])) != json!("object") {
            self.script(
                &format!(
                    "{};\nreturn typeof window.axe;",
                    concord_testsupport::axe::source()
                ),
                json!([]),
            );
        }
        let result = self.script_async(&concord_testsupport::axe::run_script(), json!([]));
        let violations = concord_testsupport::axe::describe(&result);
        if !violations.is_empty() {
            self.screenshot(&format!("axe-{screen}"));
        }
        println!(
            "figure: axe on the window's {screen}: {} violations",
            violations.len()
        );
        assert!(
            violations.is_empty(),
            "axe-core found accessibility violations on the {screen} screen \
             (screenshot tests/artifacts/axe-{screen}.png): {violations:#?}"
        );
    }

    /// Save a screenshot of the X display the window is on as tests/artifacts/<name>.png and
    /// return its path. (The X server is captured rather than WebDriver's screenshot endpoint,
    /// which WebKitWebDriver sometimes never answers on a page that has finished painting.)
    pub fn screenshot(&self, name: &str) -> PathBuf {
        let path = artifacts_dir().join(format!("{name}.png"));
        let status = Command::new("import")
            .args(["-display", &self._display.name, "-window", "root"])
            .arg(&path)
            .stderr(Stdio::null())
            .status();
        assert!(
            status.map(|s| s.success()).unwrap_or(false),
            "ImageMagick's import must capture display {} (the README's setup installs it)",
            self._display.name
        );
        path
    }

    /// The process id of the Concord app this session launched (the one window of the binary
    /// under test that runs at a time), if it can be found.
    pub fn app_pid(&self) -> Option<u32> {
        let exe = app_binary();
        std::fs::read_dir("/proc")
            .ok()?
            .flatten()
            .find_map(|entry| {
                let target = std::fs::read_link(entry.path().join("exe")).ok()?;
                (target == exe)
                    .then(|| entry.file_name().to_str()?.parse().ok())
                    .flatten()
            })
    }

    /// Kill the app with SIGKILL — no exit handler, no flush, as a crash or a power cut — and
    /// wait until the process is gone.
    pub fn kill_app(&self) {
        let pid = self.app_pid().expect("the app's process is running");
        let status = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -9 {pid} must succeed");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|t| t == app_binary()) {
            assert!(
                Instant::now() < deadline,
                "the app {pid} did not die within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Resize the window (WebDriver's window rect), e.g. to the minimum size `tauri.conf.json`
    /// allows.
    pub fn set_window_size(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({"width": width, "height": height}));
    }

    /// Resident memory (kB) of the Concord process this session launched, if it can be found.
    pub fn app_rss_kb(&self) -> Option<u64> {
        let pid = self.app_pid()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
    }
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.http.delete(self.url("")).send();
        terminate(&mut self.driver);
    }
}
