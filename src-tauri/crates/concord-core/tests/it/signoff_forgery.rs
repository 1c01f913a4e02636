//! Signing for an expert without her signing passphrase, as an insider would try it: holding the
//! lead's study (and so the signing verifier it keeps for her) and the package passphrase, the
//! insider writes into her returned package a signature whose proof is made from that verifier,
//! the package re-sealed by Concord; the merge must refuse it. A key from before schema 21 (the
//! PBKDF2 value itself) still signs with the right passphrase and then gives way to its public
//! half. And flags, the other text an expert's package carries, are held to the same limits as
//! in the window and the browser; time on a pair to what passed.

use concord_core::base::clock::{Millis, SteppingClock};
use concord_core::store::{Passphrase, Store, MAX_FLAGS_PER_ITEM};
use concord_core::workflow::assignment::{self, AssignmentOptions, Purpose};
use concord_core::workflow::package::{self, merge_package, PackageError};
use concord_core::workflow::pairs::{self, DesignMethod};
use concord_core::workflow::signoff;
use concord_testsupport::judge_server::{add_experts, pair_study};
use concord_testsupport::lead_study::*;
use hmac::Mac;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const PACKAGE_PASS: &str = "correct horse battery staple 41";
const ANA: &str = "Ana Lindqvist";
const ANA_SIGNS: &str = "ana signs with a long phrase 41";
const ISSUE: Millis = 1_700_000_000_000;
const MINUTE: Millis = 60_000;

fn pass() -> Passphrase {
    Passphrase::new(PACKAGE_PASS).expect("passphrase")
}

fn clock_at(ms: Millis) -> Arc<SteppingClock> {
    Arc::new(SteppingClock::new(ms, 1))
}

/// The lead's study with Ana's signing passphrase set and her package written beside it; Ana
/// then rates an item and signs in the package.
fn signed_return(dir: &Path) -> (PathBuf, PathBuf) {
    let main = dir.join("main.concord");
    let mut store = file_study(&main, 6, &[ANA]);
    assignment::assign(&mut store, &AssignmentOptions::new(1, 11)).expect("assigned");
    signoff::set_passphrase(&mut store, ANA, None, ANA_SIGNS, 7, 1000).expect("Ana's passphrase");
    let pkg = dir.join("ana.concord");
    package::export_package(&mut store, ANA, &pkg, 5, &pass()).expect("package written");
    drop(store);
    let mut p =
        Store::open_with(&pkg, clock_at(ISSUE + 10 * MINUTE), Some(&pass())).expect("opens");
    let ana = rater_id(&p, ANA);
    let item = assignment::expert_items(&p, ANA)
        .expect("items")
        .into_iter()
        .find(|i| i.purpose != Purpose::Retest)
        .expect("an item");
    rate_all(&mut p, ana, item.response_id, 4, Some("rated at home"));
    signoff::sign_assignment(&mut p, ANA, ANA_SIGNS).expect("Ana signs in the package");
    (main, pkg)
}

fn keyed(path: &Path, key: Option<&str>) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).expect("opens below Concord");
    if let Some(key) = key {
        conn.pragma_update(None, "key", key).expect("keyed");
    }
    conn
}

/// A proof as a symmetric verifier makes one: HMAC-SHA256 keyed by the verifier's text.
fn hmac_proof(verifier: &str, statement: &serde_json::Value) -> String {
    let mut mac = <hmac::Hmac<sha2::Sha256> as Mac>::new_from_slice(verifier.as_bytes())
        .expect("any key length");
    mac.update(statement.to_string().as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The insider's attack: a second signature of Ana's written into her returned package with
/// the proof `make` forms from the verifier the lead's study keeps for her and the statement, the
/// package re-sealed by Concord, then merged; the merge's answer.
fn forge_and_merge(
    make: impl Fn(&str, &dyn Fn(&str) -> serde_json::Value) -> String,
) -> PackageError {
    let dir = tempfile::tempdir().expect("dir");
    let (main, pkg) = signed_return(dir.path());
    let verifier: String = keyed(&main, None)
        .query_row(
            "SELECT hash FROM signing_key WHERE rater_id = (SELECT id FROM rater WHERE name = ?1)",
            [ANA],
            |r| r.get(0),
        )
        .expect("the lead's study keeps a verifier for Ana");
    let conn = keyed(&pkg, Some(PACKAGE_PASS));
    let (meaning, signed_at, ratings, sha): (String, i64, i64, String) = conn
        .query_row(
            "SELECT meaning, signed_at, ratings, ratings_sha256 FROM signature",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .expect("Ana's genuine signature");
    let scope = "assignment, signed again";
    let at = signed_at + 1;
    let statement =
        |tag: &str| serde_json::json!([tag, ANA, meaning.clone(), scope, at, ratings, sha.clone()]);
    let forged = make(&verifier, &statement);
    conn.execute(
        "INSERT INTO signature(rater_id, signer, meaning, scope, signed_at, ratings, ratings_sha256, proof)
         SELECT rater_id, signer, meaning, ?1, ?2, ratings, ratings_sha256, ?3 FROM signature",
        rusqlite::params![scope, at, forged],
    )
    .expect("the insider writes the forged signature");
    drop(conn);
    let mut p =
        Store::open_with(&pkg, clock_at(ISSUE + 20 * MINUTE), Some(&pass())).expect("opens");
    p.write(|tx| tx.set_meta("forged", "re-sealed"))
        .expect("Concord re-seals the package with the passphrase the insider holds");
    drop(p);
    let mut store = Store::open(&main, clock_at(ISSUE + 60 * MINUTE)).expect("study opens");
    merge_package(&mut store, &pkg, &pass())
        .expect_err("a proof made without the signing passphrase must not merge as Ana's signature")
}

#[test]
fn a_proof_made_from_the_studys_verifier_and_the_package_passphrase_is_refused() {
    let as_before = forge_and_merge(|verifier, statement| {
        hmac_proof(verifier, &statement("concord signature v1"))
    });
    let with_an_ed25519_part = forge_and_merge(|verifier, statement| {
        format!(
            "ed25519:{}",
            hmac_proof(verifier, &statement("concord signature v2")).repeat(2)
        )
    });
    for err in [as_before, with_an_ed25519_part] {
        assert!(
            matches!(err, PackageError::UnverifiedSignature { .. })
                && err.to_string().contains("proof does not verify"),
            "the study's verifier must not be able to sign: only the passphrase can ({err})"
        );
    }
}

#[test]
fn a_signing_key_from_before_schema_21_still_signs_and_then_holds_only_its_public_half() {
    let dir = tempfile::tempdir().expect("dir");
    let main = dir.path().join("main.concord");
    let mut store = file_study(&main, 4, &[ANA]);
    assignment::assign(&mut store, &AssignmentOptions::new(1, 11)).expect("assigned");
    let ana = rater_id(&store, ANA);
    let item = assignment::expert_items(&store, ANA).expect("items")[0].response_id;
    rate_all(&mut store, ana, item, 3, None);
    signoff::set_passphrase(&mut store, ANA, None, ANA_SIGNS, 7, 1000).expect("passphrase");
    drop(store);
    // The key as an older Concord kept it: the PBKDF2 value of the passphrase itself.
    let salt = "00112233445566778899aabbccddeeff";
    let mut old = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<sha2::Sha256>(ANA_SIGNS.as_bytes(), salt.as_bytes(), 1000, &mut old);
    let old: String = old.iter().map(|b| format!("{b:02x}")).collect();
    keyed(&main, None)
        .execute(
            "UPDATE signing_key SET salt = ?1, hash = ?2, public = NULL",
            [salt, old.as_str()],
        )
        .expect("the older key is in place");
    let mut store = Store::open(&main, clock_at(ISSUE + MINUTE)).expect("opens");
    assert!(
        matches!(
            signoff::sign_assignment(&mut store, ANA, "not her phrase at all 9"),
            Err(signoff::SignoffError::WrongPassphrase(_))
        ),
        "an older key still refuses a wrong passphrase"
    );
    let signed = signoff::sign_assignment(&mut store, ANA, ANA_SIGNS)
        .expect("an existing study's expert still signs with her passphrase");
    assert!(signed.matches, "her signature stands over her ratings");
    let key = store.signing_key(ana).expect("read").expect("a key");
    assert!(
        key.public && key.hash != old,
        "once the passphrase was given, the study must hold only the public half, not what could sign for her"
    );
    let proof = store
        .signature_proof(signed.signature.id)
        .expect("read")
        .expect("a proof");
    let parts: Vec<&str> = proof.split(' ').collect();
    assert!(
        parts.len() == 2 && parts[0].len() == 64 && parts[1].starts_with("ed25519:"),
        "a signature under an older key carries the old proof (for a study still holding the old key) and the Ed25519 one: {proof}"
    );
}

#[test]
fn a_package_carrying_more_flags_on_an_item_than_any_screen_allows_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let (main, pkg) = signed_return(dir.path());
    let conn = keyed(&pkg, Some(PACKAGE_PASS));
    conn.execute_batch(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {})
         INSERT INTO flag(rater_id, response_id, reason, created_at)
         SELECT (SELECT id FROM rater WHERE name = '{ANA}'),
                (SELECT response_id FROM assignment ORDER BY position LIMIT 1),
                'look again ' || i, {} + i FROM n;",
        MAX_FLAGS_PER_ITEM + 1,
        ISSUE + 11 * MINUTE
    ))
    .expect("the expert writes flags below Concord");
    drop(conn);
    let mut p =
        Store::open_with(&pkg, clock_at(ISSUE + 20 * MINUTE), Some(&pass())).expect("opens");
    p.write(|tx| tx.set_meta("forged", "re-sealed"))
        .expect("re-sealed");
    drop(p);
    let mut store = Store::open(&main, clock_at(ISSUE + 60 * MINUTE)).expect("study opens");
    let err = merge_package(&mut store, &pkg, &pass())
        .expect_err("more flags than an item may carry must not merge");
    assert!(
        err.to_string()
            .contains(&format!("more than {MAX_FLAGS_PER_ITEM} flags")),
        "the merge holds a package to the flag limit of the window and the browser: {err}"
    );
}

#[test]
fn a_pair_takes_no_more_flags_and_no_more_time_than_the_limits() {
    let dir = tempfile::tempdir().expect("dir");
    let clock = clock_at(ISSUE);
    let mut store = pair_study(&dir.path().join("pairs.concord"), 3, 3);
    add_experts(&mut store, &["Ana"]);
    pairs::design(&mut store, None, None, DesignMethod::All, 3).expect("designed");
    pairs::assign(&mut store, None, 1, 5).expect("assigned");
    drop(store);
    let mut store =
        Store::open(&dir.path().join("pairs.concord"), clock.clone()).expect("opens again");
    let ana = rater_id(&store, "Ana");
    pairs::open_pair_queue(&mut store, ana).expect("the pair queue opens");
    for _ in 0..10 {
        pairs::leave_pair(&mut store, ana, 1, 86_400.0).expect("left");
    }
    let work: f64 = keyed(&dir.path().join("pairs.concord"), None)
        .query_row(
            "SELECT seconds_spent FROM pair_assignment WHERE rater_id = ?1 ORDER BY position LIMIT 1",
            [ana],
            |r| r.get(0),
        )
        .expect("pair 1's time");
    assert!(
        work < 1.0,
        "ten departures within milliseconds must add milliseconds, not ten days: {work} s"
    );
    for n in 0..MAX_FLAGS_PER_ITEM {
        pairs::flag_pair(&mut store, ana, 1, &format!("note {n}"))
            .expect("a flag within the limit");
    }
    assert!(
        pairs::flag_pair(&mut store, ana, 1, "one too many").is_err(),
        "a pair must not take more flags than the limit from the window either"
    );
    assert!(
        pairs::flag_pair(
            &mut store,
            ana,
            2,
            &"x".repeat(concord_core::store::MAX_FLAG_REASON_BYTES + 1)
        )
        .is_err(),
        "nor a reason over the size limit"
    );
}
