//! TLS: Concord terminating it itself with rustls (`--tls-cert/--tls-key`), and behind Debian's
//! nginx running README's server block, each with a self-signed certificate made in the test.

use crate::{serve, Browser};
use concord_testsupport::web::STRONG;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A self-signed certificate for 127.0.0.1 and localhost, written as PEM files in `dir`.
fn certificate(dir: &Path) -> (PathBuf, PathBuf, reqwest::Certificate) {
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()])
        .expect("a self-signed certificate");
    let cert_pem = cert.cert.pem();
    let cert_path = dir.join("cert.pem");
    let key_path = dir.join("key.pem");
    std::fs::write(&cert_path, &cert_pem).expect("cert written");
    std::fs::write(&key_path, cert.key_pair.serialize_pem()).expect("key written");
    let trusted = reqwest::Certificate::from_pem(cert_pem.as_bytes()).expect("pem");
    (cert_path, key_path, trusted)
}

fn trusting(cert: reqwest::Certificate) -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .add_root_certificate(cert)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// Take up an invitation and rate one value through `base` with `client`; returns the answers'
/// headers of the acceptance.
fn rate_one(
    client: reqwest::blocking::Client,
    base: &str,
    token: &str,
) -> reqwest::header::HeaderMap {
    let mut web = Browser::new(base);
    web.client = client;
    let r = web.post(
        "/api/invitation/accept",
        serde_json::json!({"token": token, "passphrase": STRONG}),
    );
    assert_eq!(r.status(), 200, "the invitation is taken up over TLS");
    let headers = r.headers().clone();
    let session: serde_json::Value = r.json().expect("session");
    web.csrf = session["csrf"].as_str().map(str::to_string);
    web.json("/api/queue");
    let key = web.json("/api/items/1")["criteria"][0]["key"]
        .as_str()
        .expect("key")
        .to_string();
    let r = web.post(
        "/api/items/1/rate",
        serde_json::json!({"criterion": key, "value": 2}),
    );
    assert_eq!(r.status(), 200, "a value is saved over TLS");
    headers
}

#[test]
fn concord_terminates_tls_itself_with_secure_cookies_and_hsts() {
    let certs = tempfile::tempdir().expect("dir");
    let (cert, key, trusted) = certificate(certs.path());
    let (served, tokens) = serve(1, &["Ada"], |o| {
        o.tls = Some(concord_web::TlsFiles { cert, key });
    });
    assert!(
        served.base.starts_with("https://"),
        "the server says https: {}",
        served.base
    );
    let headers = rate_one(trusting(trusted), &served.base, &tokens[0]);
    let cookie = headers["set-cookie"].to_str().expect("cookie");
    assert!(
        cookie.contains("Secure"),
        "under TLS the session cookie is Secure: {cookie}"
    );
    assert!(
        headers.contains_key("strict-transport-security"),
        "under TLS the answers carry HSTS"
    );
    let plain = reqwest::blocking::Client::new()
        .get(format!("{}/", served.base.replace("https://", "http://")))
        .send();
    assert!(
        plain.map(|r| !r.status().is_success()).unwrap_or(true),
        "plain HTTP to the TLS port gets no page"
    );
}

#[test]
fn a_tls_start_refuses_a_missing_or_broken_key() {
    let certs = tempfile::tempdir().expect("dir");
    let (cert, _, _) = certificate(certs.path());
    let broken = certs.path().join("broken.pem");
    std::fs::write(
        &broken,
        "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n",
    )
    .expect("broken key");
    let dir = tempfile::tempdir().expect("dir");
    let (study, clock) = crate::make_study(dir.path(), 1, &["Ada"]);
    let mut options = concord_web::ServeOptions::new(
        "127.0.0.1:0".parse().expect("addr"),
        crate::stand_in_ui(dir.path()),
    );
    options.tls = Some(concord_web::TlsFiles { cert, key: broken });
    let refused = concord_web::start(
        crate::open_study(&study, clock.clone()),
        options,
        clock,
        Box::new(rand::rngs::OsRng),
    );
    assert!(
        matches!(
            refused,
            Err(concord_web::ServeError::Tls { what: "key", .. })
        ),
        "a broken key is refused before serving"
    );
}

/// nginx running in the foreground on its own configuration; stopped on drop.
struct Nginx(Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// README's nginx server block, with this test's port, certificate and upstream.
fn readme_server_block() -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../README.md"))
            .expect("README");
    let start = readme
        .find("```nginx\n")
        .expect("README has an nginx block")
        + "```nginx\n".len();
    let end = start + readme[start..].find("```").expect("the block ends");
    readme[start..end].to_string()
}

#[test]
fn concord_behind_debians_nginx_with_readmes_configuration() {
    let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .expect("nginx is installed: `apt-get install nginx` (scripts/dev setup does)");
    let work = tempfile::tempdir().expect("dir");
    let (cert, key, trusted) = certificate(work.path());
    let (served, tokens) = serve(1, &["Ada"], |o| {
        o.behind_proxy = true;
        o.public_names = vec!["concord.example.org".into()];
    });
    let upstream = served.base.trim_start_matches("http://").to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let block = readme_server_block();
    for needle in [
        "listen 443 ssl;",
        "/etc/ssl/concord/cert.pem",
        "/etc/ssl/concord/key.pem",
        "127.0.0.1:8420",
    ] {
        assert!(
            block.contains(needle),
            "README's block has {needle} for the test to replace"
        );
    }
    let block = block
        .replace("listen 443 ssl;", &format!("listen 127.0.0.1:{port} ssl;"))
        .replace("/etc/ssl/concord/cert.pem", &cert.display().to_string())
        .replace("/etc/ssl/concord/key.pem", &key.display().to_string())
        .replace("127.0.0.1:8420", &upstream);
    let prefix = work.path();
    for d in ["logs", "tmp"] {
        std::fs::create_dir_all(prefix.join(d)).expect("nginx folder");
    }
    let tmp = prefix.join("tmp").display().to_string();
    let conf = format!(
        "pid {p}/nginx.pid;\nerror_log {p}/logs/error.log;\nevents {{}}\nhttp {{\n\
         access_log {p}/logs/access.log;\nclient_body_temp_path {tmp};\nproxy_temp_path {tmp};\n\
         fastcgi_temp_path {tmp};\nuwsgi_temp_path {tmp};\nscgi_temp_path {tmp};\n{block}\n}}\n",
        p = prefix.display()
    );
    let conf_path = prefix.join("nginx.conf");
    std::fs::write(&conf_path, conf).expect("nginx.conf");
    let child = Command::new(nginx)
        .args(["-p"])
        .arg(prefix)
        .arg("-c")
        .arg(&conf_path)
        .args(["-g", "daemon off;"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nginx starts");
    let _nginx = Nginx(child);
    let base = format!("https://127.0.0.1:{port}");
    let client = trusting(trusted);
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.get(format!("{base}/")).send().is_err() {
        assert!(
            Instant::now() < deadline,
            "nginx answers within 10 s: {}",
            std::fs::read_to_string(prefix.join("logs/error.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let headers = rate_one(client.clone(), &base, &tokens[0]);
    let cookie = headers["set-cookie"].to_str().expect("cookie");
    assert!(
        cookie.contains("Secure"),
        "behind the proxy the cookie is Secure: {cookie}"
    );
    assert_eq!(
        headers["cache-control"], "no-store",
        "the API's no-store passes the proxy"
    );
    let page = client.get(format!("{base}/")).send().expect("page");
    assert!(
        page.headers().contains_key("content-security-policy"),
        "the CSP passes the proxy"
    );
    for (host, status, why) in [
        (
            "concord.example.org",
            200,
            "the public name nginx passes on is answered",
        ),
        (
            "rebound.example.net",
            421,
            "another name passed on by the proxy (a rebound page's) is refused",
        ),
    ] {
        let r = client
            .get(format!("{base}/"))
            .header("host", host)
            .send()
            .expect("answer");
        assert_eq!(r.status(), status, "{why}");
    }
    let big = client
        .post(format!("{base}/api/login"))
        .json(&serde_json::json!({"name": "Ada", "passphrase": "x".repeat(100 * 1024)}))
        .send()
        .expect("answer");
    assert_eq!(
        big.status(),
        413,
        "an oversized body is refused (by nginx's limit, as Concord's)"
    );
}
