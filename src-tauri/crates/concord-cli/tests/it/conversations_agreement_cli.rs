//! `concord agreement` on conversations, run as a user would on a study of transcripts
//! (`concord_testsupport::transcript_study`): the MentalAlign rows of a reply rubric over
//! transcripts are item level with the conversation-cluster interval, `--by turn --json` gives one
//! stratum per turn number with the same rows, and a session rubric reports one item per
//! conversation and has no turns.

use crate::reviewer_study_cli::json;
use concord_core::store::Store;
use concord_testsupport::lead_study::clock;
use concord_testsupport::transcript_study::{write_transcripts, TranscriptDesign};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn transcript_study(dir: &Path) -> PathBuf {
    let db = dir.join("transcripts.concord");
    let mut store = Store::create(&db, clock()).expect("a study file");
    write_transcripts(
        &mut store,
        &TranscriptDesign {
            session: true,
            ..TranscriptDesign::correlated(12, 21)
        },
    );
    drop(store);
    db
}

/// The keys every MentalAlign row has (the contract's), and those a conversation rubric's add.
const ROW_KEYS: [&str; 11] = [
    "judge",
    "attribute",
    "group",
    "icc_c1",
    "icc_a1",
    "ci95",
    "ci_width",
    "status",
    "bias",
    "mse",
    "n_pairs",
];

fn check_row(row: &Value, ci_method: &str, clusters: Option<u64>) {
    for key in ROW_KEYS {
        assert!(
            row.get(key).is_some(),
            "a row has the contract's key {key}: {row}"
        );
    }
    assert_eq!(
        row["level"], "item",
        "a conversation rubric's rows are item level: {row}"
    );
    assert_eq!(
        row["ci_method"], ci_method,
        "the interval's method is named: {row}"
    );
    assert_eq!(
        row.get("n_clusters").and_then(Value::as_u64),
        clusters,
        "the conversations resampled, when they were: {row}"
    );
    assert!(
        row["icc_c1"].is_f64() && row["ci95"][0].is_f64() && row["ci95"][1].is_f64(),
        "figures are numbers: {row}"
    );
}

#[test]
fn agreement_by_turn_prints_one_stratum_per_turn_with_cluster_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let db = transcript_study(dir.path());
    let overall = json(&db, &["agreement", "--rubric", "mentalbench", "--json"]);
    let rows = overall.as_array().expect("the MentalAlign rows");
    assert_eq!(rows.len(), 7, "one row per attribute of the one judge");
    for row in rows {
        check_row(row, "cluster", Some(12));
        assert_eq!(
            row["n_targets"],
            12 * 6,
            "six rated replies in each of 12 conversations"
        );
    }

    let by_turn = json(
        &db,
        &[
            "agreement",
            "--rubric",
            "mentalbench",
            "--json",
            "--by",
            "turn",
        ],
    );
    assert_eq!(by_turn["by"], "turn", "the facet is named");
    assert_eq!(
        by_turn["reference"], "experts",
        "judges against the experts' mean"
    );
    let strata = by_turn["strata"].as_array().expect("strata");
    let turns: Vec<i64> = strata.iter().map(|s| s["turn"].as_i64().unwrap()).collect();
    assert_eq!(
        turns,
        vec![2, 4, 6, 8],
        "turn numbers, as numbers, in order"
    );
    for s in strata {
        let candidates = s["turn"] == 8;
        assert_eq!(
            (s["n_compared"].as_u64(), s["n_conversations"].as_u64()),
            (Some(if candidates { 36 } else { 12 }), Some(12)),
            "each turn counts its rated items and their conversations: {s}"
        );
        let rows = s["rows"]
            .as_array()
            .expect("a turn with 12 conversations has rows");
        assert_eq!(rows.len(), 7, "every attribute at every turn");
        for row in rows {
            check_row(row, "cluster", Some(12));
        }
    }
}

#[test]
fn a_session_rubric_reports_one_item_per_conversation_and_no_turns() {
    let dir = tempfile::tempdir().unwrap();
    let db = transcript_study(dir.path());
    let rows = json(&db, &["agreement", "--rubric", "session-quality", "--json"]);
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 2, "the session rubric's two criteria");
    for row in rows {
        check_row(row, "F", None);
        assert_eq!(row["n_targets"], 12, "one session item per conversation");
    }
    let by_turn = json(
        &db,
        &[
            "agreement",
            "--rubric",
            "session-quality",
            "--json",
            "--by",
            "turn",
        ],
    );
    let strata = by_turn["strata"].as_array().expect("strata");
    assert_eq!(strata.len(), 1, "session items stand at no turn");
    assert!(
        strata[0]["turn"].is_null()
            && strata[0]["not_computed"]
                .as_str()
                .is_some_and(|w| w.contains("session")),
        "the one stratum says why there is no agreement by turn: {}",
        strata[0]
    );
}
