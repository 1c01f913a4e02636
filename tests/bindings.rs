//! The committed TypeScript bindings must match the Rust IPC types exactly.

use std::path::Path;

#[test]
fn committed_bindings_match_rust_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join(concord_app::bindings::BINDINGS_PATH);
    let fresh = concord_app::bindings::typescript();
    if std::env::var_os("CONCORD_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write bindings");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "ui/src/lib/bindings.ts drifted from the Rust IPC types; run `CONCORD_BLESS=1 cargo test bindings` and commit the result"
    );
}
