//! The browser build of the UI, read into memory when the server starts and served by exact
//! name: a request path is looked up in the list of files the build holds, never joined onto a
//! folder, so no path (`..`, encoded or not, a symlink, an absolute name) reaches the disk. Any
//! other path without an extension is the page itself (`/`, `/login`, `/invite`).

use crate::config::ServeError;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::path::Path;

/// The largest UI build read (the whole build is held in memory).
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The UI files by their URL path (`/index.html`, `/assets/index-….js`).
#[derive(Debug, Default)]
pub struct Assets {
    files: HashMap<String, (&'static str, Vec<u8>)>,
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "json" => "application/json",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

impl Assets {
    /// Read every regular file under `dir` (symlinks are not followed); `index.html` must be one.
    pub fn load(dir: &Path) -> Result<Assets, ServeError> {
        let refuse = |detail: String| ServeError::Ui {
            dir: dir.display().to_string(),
            detail,
        };
        let mut files = HashMap::new();
        let mut total = 0u64;
        let mut stack = vec![(dir.to_path_buf(), String::new())];
        while let Some((folder, prefix)) = stack.pop() {
            let entries = std::fs::read_dir(&folder).map_err(|e| refuse(e.to_string()))?;
            for entry in entries {
                let entry = entry.map_err(|e| refuse(e.to_string()))?;
                let kind = entry.file_type().map_err(|e| refuse(e.to_string()))?;
                let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                let url = format!("{prefix}/{name}");
                if kind.is_dir() {
                    stack.push((entry.path(), url));
                } else if kind.is_file() {
                    let bytes = std::fs::read(entry.path()).map_err(|e| refuse(e.to_string()))?;
                    total += bytes.len() as u64;
                    if total > MAX_BYTES {
                        return Err(refuse("it is larger than a UI build can be".into()));
                    }
                    files.insert(url, (content_type(&name), bytes));
                }
            }
        }
        if !files.contains_key("/index.html") {
            return Err(refuse("no index.html".into()));
        }
        Ok(Assets { files })
    }

    /// The answer for a GET of `path`.
    pub fn answer(&self, path: &str) -> Response {
        let last = path.rsplit('/').next().unwrap_or("");
        let found = self.files.get(path).or_else(|| {
            (!last.contains('.'))
                .then(|| self.files.get("/index.html"))
                .flatten()
        });
        match found {
            Some((kind, bytes)) => {
                let cache = if path.starts_with("/assets/") {
                    // Vite names built assets by their content hash.
                    "public, max-age=31536000, immutable"
                } else {
                    "no-cache"
                };
                (
                    [
                        (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
                        (header::CACHE_CONTROL, HeaderValue::from_static(cache)),
                    ],
                    bytes.clone(),
                )
                    .into_response()
            }
            None => (
                StatusCode::NOT_FOUND,
                crate::messages::Said::NoFile.text(crate::messages::current()),
            )
                .into_response(),
        }
    }
}
