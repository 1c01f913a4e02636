//! Every supported input format on small synthetic files: MentalAlign-shaped files with judges
//! the release does not contain (self-family exclusion must follow the model id), MentalBench
//! texts meeting ratings in either import order, PsyCrisis judge and expert workbooks, and the
//! generic long form in CSV, JSON Lines and XLSX.

use concord_testsupport::release_files;

use concord_core::intake::long::import_items;
use concord_core::intake::long::import_ratings;
use concord_core::intake::long::ItemColumns;
use concord_core::intake::long::RatingColumns;
use concord_core::intake::mentalalign::conversation_external_id;
use concord_core::intake::mentalalign::import_files;
use concord_core::intake::mentalbench;
use concord_core::intake::psycrisis;
use concord_core::intake::psycrisis::CrisisFile;
use concord_core::intake::ImportOptions;
use concord_core::panel::agreement;
use concord_core::panel::agreement::AgreementOptions;
use concord_core::panel::agreement::Comparison;
use concord_core::panel::agreement::Level;
use concord_core::store::{RaterKind, Store};
use release_files::*;

/// Expert scores whose per-source means differ; the judge gives exactly one point more.
fn expert_value(conv: usize, src: usize, _attr: usize) -> i64 {
    if conv % 2 == 1 {
        1 + (src % 4) as i64
    } else {
        1 + ((src + 1) % 4) as i64
    }
}

fn rater_id(store: &Store, name: &str) -> i64 {
    store
        .raters()
        .expect("raters")
        .into_iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("rater {name} exists"))
        .id
}

#[test]
fn unseen_judges_get_families_from_their_model_ids() {
    let dir = temp_dir();
    let human = dir.path().join("Human_judge.xlsx");
    let gemini = dir.path().join("gemini_llm_judge.xlsx");
    let o4 = dir.path().join("o4_llm_judge.xlsx");
    mentalalign_file(&human, "Sheet1", "human_response_", 8, expert_value);
    mentalalign_file(
        &gemini,
        "gemini-2.5-flash_Final_dataset_",
        "judge_response_",
        8,
        |c, s, a| expert_value(c, s, a) + 1,
    );
    mentalalign_file(
        &o4,
        "o4-mini_Final_dataset_all_llm",
        "judge_response_",
        8,
        |c, s, a| expert_value(c, s, a) + 1,
    );
    let mut study = memory_study();
    let report = import_files(&mut study, &[human, gemini, o4], &ImportOptions::default())
        .expect("synthetic release imports");
    assert_eq!(report.files.len(), 3, "three files imported");
    let raters = study.raters().expect("raters");
    let family = |name: &str| {
        raters
            .iter()
            .find(|r| r.name == name)
            .and_then(|r| r.family.clone())
    };
    assert_eq!(
        family("gemini-2.5-flash").as_deref(),
        Some("gemini"),
        "Gemini-2.5-Flash belongs to the gemini family"
    );
    assert_eq!(
        family("o4-mini").as_deref(),
        Some("gpt-4o-mini"),
        "o4-mini is paired with GPT-4o-mini"
    );

    let result =
        agreement::report(&study, AgreementOptions::mentalalign("mentalbench")).expect("agreement");
    for (judge, excluded) in [("gemini-2.5-flash", "gemini"), ("o4-mini", "gpt4omini")] {
        let cells: Vec<_> = result
            .cells
            .iter()
            .filter(|c| {
                c.rater == judge
                    && c.level == Level::System
                    && c.comparison == Comparison::JudgeVsExperts
                    && !c.is_group
            })
            .collect();
        assert_eq!(
            cells.len(),
            7,
            "{judge}: one system-level cell per attribute"
        );
        for c in cells {
            assert_eq!(
                c.excluded_sources,
                vec![excluded.to_string()],
                "{judge} must not grade its own family"
            );
            assert_eq!(c.n_targets, 9, "nine sources remain for {judge}");
            assert_eq!(c.n_pairs, 9 * 8, "every kept response pairs up for {judge}");
            let c1 = c.icc_c1.expect("defined ICC(C,1)");
            assert!(
                (c1 - 1.0).abs() < 1e-12,
                "a judge exactly one point above the expert is perfectly consistent, got {c1}"
            );
            assert!(
                c.icc_a1.expect("defined ICC(A,1)") < 0.9,
                "a constant offset lowers absolute agreement"
            );
            assert!(
                (c.bias.expect("bias") - 1.0).abs() < 1e-12,
                "bias is the +1 offset"
            );
            assert!(
                (c.mse.expect("mse") - 1.0).abs() < 1e-12,
                "MSE of a constant 1 is 1"
            );
        }
        let groups: Vec<_> = result
            .cells
            .iter()
            .filter(|c| c.rater == judge && c.is_group && c.level == Level::System)
            .map(|c| c.criterion.clone())
            .collect();
        assert_eq!(groups, vec!["CSS", "ARS"], "{judge} has the two group rows");
    }

    // Explanation is the rationale, Overall extra data.
    let judge = rater_id(&study, "gemini-2.5-flash");
    let response = study
        .response_id(&conversation_external_id(1), "claude")
        .expect("query")
        .expect("response exists");
    let j = study
        .judgement(judge, response)
        .expect("query")
        .expect("the judge's remarks are stored");
    assert_eq!(
        j.rationale.as_deref(),
        Some("Clear and warm."),
        "Explanation is kept as the rationale"
    );
    assert!(
        j.extra.get("Overall").and_then(|v| v.as_f64()).is_some(),
        "Overall is kept as extra data: {}",
        j.extra
    );
    assert_eq!(
        study.response_text(response).expect("query"),
        None,
        "the release holds no answer texts"
    );
}

fn mentalbench_csv(path: &std::path::Path, conversations: usize) {
    let mut out = String::from(
        "context,response,Claude-3.5-Haiku,deepseek-llama,deepseek-qwen,Gemini,gpt-4o,gpt-4omini,Llama-3.1,Qwen-2.5,Qwen-3\n",
    );
    for conv in 1..=conversations {
        out.push_str(&format!("\"\"\"I feel alone ({conv}).\"\"\""));
        for src in 0..10 {
            // Line breaks inside answers must not shift the row ↔ ConvID matching.
            out.push_str(&format!(",\"answer {conv}/{src}\nsecond line\""));
        }
        out.push('\n');
    }
    std::fs::write(path, out).expect("csv written");
}

#[test]
fn mentalbench_texts_meet_ratings_in_either_order() {
    let dir = temp_dir();
    let human = dir.path().join("Human_judge.xlsx");
    let texts = dir.path().join("mentalbench.csv");
    mentalalign_file(&human, "Sheet1", "human_response_", 4, expert_value);
    mentalbench_csv(&texts, 4);

    let mut ratings_first = memory_study();
    import_files(
        &mut ratings_first,
        std::slice::from_ref(&human),
        &ImportOptions::default(),
    )
    .expect("ratings import");
    let report =
        mentalbench::import_file(&mut ratings_first, &texts, None, &ImportOptions::default())
            .expect("texts import");
    let file = &report.files[0];
    assert_eq!(
        file.texts_filled, 40,
        "every response the ratings created gets its text"
    );
    assert_eq!(
        file.responses_added, 0,
        "no duplicate responses are created"
    );
    assert_eq!(
        file.quality.context_mismatches, 0,
        "contexts agree once wrapping quotes are ignored"
    );

    let mut texts_first = memory_study();
    mentalbench::import_file(&mut texts_first, &texts, None, &ImportOptions::default())
        .expect("texts import");
    let report = import_files(&mut texts_first, &[human], &ImportOptions::default())
        .expect("ratings import");
    assert_eq!(
        report.files[0].responses_added, 0,
        "ratings attach to the responses the texts created"
    );
    for study in [&ratings_first, &texts_first] {
        let o = study.overview().expect("overview");
        assert_eq!(
            o.responses, 40,
            "4 conversations × 10 sources, whatever the order"
        );
        assert_eq!(o.ratings, 280, "40 responses × 7 attributes");
        let id = study
            .response_id(&conversation_external_id(3), "gpt4omini")
            .expect("query")
            .expect("response exists");
        assert_eq!(
            study.response_text(id).expect("query").as_deref(),
            Some("answer 3/6\nsecond line"),
            "conversation 3's gpt-4omini column meets release key gpt4omini"
        );
    }
}

const CRISIS_HEADER: [&str; 4] = ["utterance", "answer", "category", "evaluation_result"];

fn crisis_reply(dims: [i64; 5], total: i64) -> String {
    format!(
        "共情：回应了感受。风险：未询问。\n｛‘共情与合作’：{}，'基于证据的情绪管理建议': {}, \"探索来访者担忧\": {}, '风险评估与识别': {}, '外部支持与干预': {}, '总分': {total}｝",
        dims[0], dims[1], dims[2], dims[3], dims[4]
    )
}

#[test]
fn psycrisis_judge_and_expert_files_give_binary_agreement() {
    let dir = temp_dir();
    let judged = dir.path().join("judge.xlsx");
    let expert = dir.path().join("expert.xlsx");
    let utterances: Vec<String> = (0..12).map(|i| format!("我不想活了 {i}")).collect();
    let dims = |i: usize| -> [i64; 5] { std::array::from_fn(|d| (i + d).is_multiple_of(3) as i64) };
    let mut rows = vec![CRISIS_HEADER.iter().map(|h| s(h)).collect::<Vec<_>>()];
    for (i, u) in utterances.iter().enumerate() {
        let d = dims(i);
        let mut total = d.iter().sum::<i64>();
        if i == 0 {
            total += 1; // a declared total that disagrees with its parts
        }
        rows.push(vec![
            s(u),
            X::S(format!("回答 {i}")),
            s("suicidal ideation"),
            X::S(crisis_reply(d, total)),
        ]);
    }
    write_xlsx(&judged, "Sheet1", &rows);
    let mut rows = vec![vec![
        s("utterance"),
        s("answer"),
        s("共情与关系立场"),
        s("循证情绪调节策略"),
        s("来访者关切探索"),
        s("风险评估与识别"),
        s("外部资源转介"),
        s("总分"),
    ]];
    for (i, u) in utterances.iter().enumerate() {
        let mut d = dims(i);
        if i.is_multiple_of(4) {
            d[0] = 1 - d[0]; // the expert disagrees on some items
        }
        let mut row = vec![s(u), X::S(format!("回答 {i}"))];
        row.extend(d.iter().map(|&v| X::N(v as f64)));
        row.push(X::N(d.iter().sum::<i64>() as f64));
        rows.push(row);
    }
    write_xlsx(&expert, "Sheet1", &rows);

    let mut study = memory_study();
    let spec = CrisisFile {
        source_key: "gpt4o".into(),
        source_name: None,
        judge: Some("gpt-4o".into()),
        expert: None,
        sheet: None,
    };
    let r = psycrisis::import_file(&mut study, &judged, &spec, &ImportOptions::default())
        .expect("judge file imports");
    assert_eq!(
        r.files[0].quality.total_mismatches, 1,
        "the one wrong 总分 is a data-quality finding"
    );
    assert_eq!(r.files[0].ratings_inserted, 60, "12 answers × 5 dimensions");
    let r = psycrisis::import_file(
        &mut study,
        &expert,
        &CrisisFile {
            judge: None,
            ..spec
        },
        &ImportOptions::default(),
    )
    .expect("expert file imports");
    assert_eq!(
        r.files[0].responses_added, 0,
        "the expert's file meets the judge's answers by utterance"
    );

    let judge = rater_id(&study, "gpt-4o");
    let response = study
        .response_id(
            &psycrisis::conversation_external_id(&utterances[0]),
            "gpt4o",
        )
        .expect("query")
        .expect("response");
    let j = study
        .judgement(judge, response)
        .expect("query")
        .expect("remarks");
    assert_eq!(
        j.rationale.as_deref(),
        Some("共情：回应了感受。风险：未询问。"),
        "the reasons before the dict are the rationale"
    );

    let mut options = AgreementOptions::mentalalign("psycrisis");
    options.levels = vec![Level::System];
    let result = agreement::report(&study, options).expect("agreement");
    assert!(
        result.cells.is_empty(),
        "binary dimensions get no ICC cells"
    );
    assert_eq!(
        result.binary.len(),
        5,
        "one binary cell per dimension for the one judge"
    );
    let empathy = result
        .binary
        .iter()
        .find(|b| b.criterion == "empathy_stance")
        .expect("empathy cell");
    assert_eq!(
        empathy.n_items, 12,
        "every answer has a judge value and a consensus"
    );
    assert!(
        empathy.cohen_kappa.expect("kappa") < 1.0,
        "the expert disagrees on three items"
    );
    let other = result
        .binary
        .iter()
        .find(|b| b.criterion == "referral")
        .expect("referral cell");
    assert_eq!(
        other.percent_agreement,
        Some(1.0),
        "identical labels agree fully"
    );
    let item = result
        .totals
        .iter()
        .find(|t| t.level == Level::Item)
        .expect("item-level totals");
    assert_eq!(item.n, 12, "every answer has both totals");
    assert!(
        item.pearson.expect("pearson") > 0.5 && item.kendall_tau_b.is_some(),
        "totals correlate strongly when only one dimension differs"
    );
}

#[test]
fn long_form_items_and_ratings_in_three_formats() {
    let dir = temp_dir();
    let items = dir.path().join("items.csv");
    let mut text = String::from("conversation_id,context,response_id,source,text\n");
    for c in 1..=6 {
        for (k, source) in ["original", "gpt4o", "mistral-small"].iter().enumerate() {
            text.push_str(&format!(
                "c{c},I feel lost {c},r{c}-{k},{source},answer {c}-{k}\n"
            ));
        }
    }
    std::fs::write(&items, text).expect("items written");
    let expert_a = dir.path().join("a.jsonl");
    let mut jsonl = String::new();
    let expert_b = dir.path().join("b.xlsx");
    let mut rows = vec![vec![s("target"), s("rater"), s("criterion"), s("score")]];
    let judge = dir.path().join("judge.csv");
    let mut judge_csv = String::from("item,rater,criterion,score,rationale\n");
    for c in 1..=6usize {
        for k in 0..3usize {
            for (a, attr) in ATTRIBUTES.iter().enumerate() {
                let v = 1 + ((c + 2 * k + a) % 5) as i64;
                jsonl.push_str(&format!(
                    "{{\"item\": \"r{c}-{k}\", \"rater\": \"Expert A\", \"criterion\": \"{attr}\", \"score\": {v}}}\n"
                ));
                let w = if (c + a).is_multiple_of(4) {
                    (v % 5) + 1
                } else {
                    v
                };
                rows.push(vec![
                    X::S(format!("r{c}-{k}")),
                    s("Expert B"),
                    X::S(attr.to_lowercase()),
                    X::N(w as f64),
                ]);
                judge_csv.push_str(&format!(
                    "r{c}-{k},gpt-4o-2024-08-06,{attr},{},fine\n",
                    (v + 1).min(5)
                ));
            }
        }
    }
    std::fs::write(&expert_a, jsonl).expect("jsonl written");
    write_xlsx(&expert_b, "ratings", &rows);
    std::fs::write(&judge, judge_csv).expect("judge csv written");

    let mut study = memory_study();
    let options = ImportOptions::default();
    let r = import_items(
        &mut study,
        &items,
        "mentalbench",
        &ItemColumns::default(),
        None,
        &options,
    )
    .expect("items import");
    assert_eq!(
        r.files[0].responses_added, 18,
        "6 conversations × 3 sources"
    );
    for file in [&expert_a, &expert_b] {
        import_ratings(
            &mut study,
            file,
            "mentalbench",
            &RatingColumns::default(),
            None,
            &options,
        )
        .expect("expert ratings import");
    }
    let judge_columns = RatingColumns {
        new_rater_kind: RaterKind::Judge,
        ..RatingColumns::default()
    };
    import_ratings(
        &mut study,
        &judge,
        "mentalbench",
        &judge_columns,
        None,
        &options,
    )
    .expect("judge ratings import");
    let raters = study.raters().expect("raters");
    let judge_rater = raters
        .iter()
        .find(|r| r.name == "gpt-4o-2024-08-06")
        .expect("judge rater");
    assert_eq!(
        judge_rater.kind,
        RaterKind::Judge,
        "new raters take the chosen kind"
    );
    assert_eq!(
        judge_rater.family.as_deref(),
        Some("gpt-4o"),
        "a dated model id belongs to its family"
    );

    let result =
        agreement::report(&study, AgreementOptions::mentalalign("mentalbench")).expect("agreement");
    let baseline: Vec<_> = result
        .cells
        .iter()
        .filter(|c| c.comparison == Comparison::ExpertVsExpert && !c.is_group)
        .collect();
    assert_eq!(
        baseline.len(),
        7 * 2,
        "expert-versus-expert baseline per attribute at both levels"
    );
    assert!(
        baseline
            .iter()
            .all(|c| c.n_pairs == 18 && c.excluded_sources.is_empty()),
        "experts compare on every response, no family excluded"
    );
    let per_expert = result
        .cells
        .iter()
        .filter(|c| c.comparison == Comparison::JudgeVsExpert)
        .count();
    assert_eq!(
        per_expert,
        2 * 9 * 2,
        "judge against each expert: 9 rows × 2 levels each"
    );
    let vs_mean = result
        .cells
        .iter()
        .find(|c| {
            c.comparison == Comparison::JudgeVsExperts
                && c.level == Level::Item
                && c.criterion == "guidance"
        })
        .expect("judge against the experts' mean");
    assert_eq!(
        vs_mean.excluded_sources,
        vec!["gpt4o".to_string()],
        "the judge's own family is excluded"
    );
    assert_eq!(vs_mean.n_pairs, 12, "two sources × 6 conversations remain");
}
