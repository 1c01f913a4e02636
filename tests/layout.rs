//! Architectural invariants checked on every test run: the core crates never depend on tauri.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Every package reachable from `root` through normal and build dependencies (not dev).
fn dependency_closure(root: &str) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let names: BTreeMap<String, String> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap().to_string(),
                p["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let nodes = meta["resolve"]["nodes"].as_array().expect("resolve graph");
    let edges: BTreeMap<String, Vec<String>> = nodes
        .iter()
        .map(|n| {
            let deps = n["deps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| {
                    d["dep_kinds"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|k| k["kind"].as_str() != Some("dev"))
                })
                .map(|d| d["pkg"].as_str().unwrap().to_string())
                .collect();
            (n["id"].as_str().unwrap().to_string(), deps)
        })
        .collect();
    let start = names
        .iter()
        .find(|(_, n)| n.as_str() == root)
        .map(|(id, _)| id.clone())
        .unwrap_or_else(|| panic!("{root} is a workspace package"));
    let mut seen = BTreeSet::new();
    let mut stack = vec![start];
    while let Some(id) = stack.pop() {
        if seen.insert(id.clone()) {
            stack.extend(edges.get(&id).cloned().unwrap_or_default());
        }
    }
    seen.into_iter().map(|id| names[&id].clone()).collect()
}

#[test]
fn core_crates_never_depend_on_tauri() {
    for krate in ["concord-core", "concord-stats"] {
        let deps = dependency_closure(krate);
        let gui: Vec<_> = deps
            .iter()
            .filter(|n| {
                n.starts_with("tauri")
                    || n.starts_with("wry")
                    || n.starts_with("webkit2gtk")
                    || n.starts_with("gtk")
            })
            .collect();
        assert!(
            gui.is_empty(),
            "{krate} must stay GUI-free, but depends on {gui:?}"
        );
    }
    assert!(
        dependency_closure("concord").contains("tauri"),
        "the check must be able to see tauri where it is (the desktop package)"
    );
}

#[test]
fn stats_crate_has_no_io_dependencies() {
    let deps = dependency_closure("concord-stats");
    for forbidden in ["rusqlite", "reqwest", "tokio", "calamine", "csv"] {
        assert!(
            !deps.contains(forbidden),
            "concord-stats must stay pure, but depends on {forbidden}"
        );
    }
}
