//! axe-core (the UI's npm dev dependency) as the window's and the browser's page tests run it:
//! one page, every rule of WCAG 2.0, 2.1 and 2.2 at levels A and AA and axe's best practices —
//! including the rules axe leaves off by default, such as 2.5.8's target size — and every
//! violation of any impact counted. Both test binaries load the same script and the same list of
//! rules from here, so "0 violations" means the same in both.

use serde_json::Value;
use std::path::PathBuf;

/// The tags of the rules that run: WCAG 2.2 level AA (with all it takes from 2.0 and 2.1) and
/// axe's best practices.
pub const TAGS: [&str; 7] = [
    "wcag2a",
    "wcag2aa",
    "wcag21a",
    "wcag21aa",
    "wcag22a",
    "wcag22aa",
    "best-practice",
];

/// axe-core's own script, as `npm ci` in `ui/` installs it.
pub fn source() -> String {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../ui/node_modules/axe-core/axe.min.js"
    ));
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: axe-core is a dev dependency of the UI (`npm ci` in ui/ installs it): {e}",
            path.display()
        )
    })
}

/// An asynchronous WebDriver script (its last argument is the callback) that runs axe on the
/// whole document and answers with the violations: `{id, impact, help, nodes}`, the first five
/// elements of each named by selector with axe's summary of what to fix.
pub fn run_script() -> String {
    let tags = serde_json::to_string(&TAGS).unwrap_or_default();
    format!(
        "const done = arguments[arguments.length - 1]; \
         window.axe.run(document, {{resultTypes: ['violations'], runOnly: {{type: 'tag', values: {tags}}}}}) \
           .then((r) => done(r.violations.map((v) => ({{id: v.id, impact: v.impact, help: v.help, \
              nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ') + ' — ' + n.failureSummary)}}))), \
                 (e) => done([{{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}}]));"
    )
}

/// The violations of a run as lines a person reads: `rule (impact): help — elements`.
pub fn describe(found: &Value) -> Vec<String> {
    match found.as_array() {
        Some(list) => list
            .iter()
            .map(|v| {
                let nodes: Vec<&str> = v["nodes"]
                    .as_array()
                    .map(|n| n.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                format!(
                    "{} ({}): {} — {}",
                    v["id"].as_str().unwrap_or("?"),
                    v["impact"].as_str().unwrap_or("?"),
                    v["help"].as_str().unwrap_or(""),
                    nodes.join(" | ")
                )
            })
            .collect(),
        None => vec![format!("axe gave no list of violations: {found}")],
    }
}
