//! Journey of the reviewer's questions in the agreement panel: a study imported from files with
//! a category column (`concord_testsupport::reviewer_study`: both rubrics, three experts with
//! retests, a good, a fair and a contrarian judge) opened in the real window. The panel's new
//! cards carry exactly the figures `concord_core` computes for the same study — agreement by
//! category (a category with one rated response saying why instead), the experts' G-study with
//! its D-study curve, the label budget of a judge's cell, each judge's corrected prevalence of
//! every PsyCrisis dimension (the contrarian judge's saying why), and the Dawid–Skene fits when
//! it is the reference — with no "NaN" anywhere, the reasons as notes a screen reader reads,
//! axe-core clean, and in Chinese when the window is.

use super::App;
use concord_core::base::clock::SystemClock;
use concord_core::panel::adjudication::{referenced_data, AgreementReference};
use concord_core::panel::agreement::{AgreementData, AgreementOptions};
use concord_core::panel::gstudy::gstudy_section;
use concord_core::panel::label_budget::{label_budget, BudgetGoal, LabelBudgetQuestion};
use concord_core::panel::prevalence::prevalence_rows;
use concord_core::panel::strata::{by_facet, Facet};
use concord_core::store::Store;
use concord_testsupport::reviewer_study::reviewer_study;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const SEED: u64 = 39;

/// The panel's options for `rubric`, as `AgreementPanel.svelte` sends them.
fn panel_options(rubric: &str) -> AgreementOptions {
    AgreementOptions {
        rubric: rubric.into(),
        seed: 42,
        resamples: 1000,
        levels: vec![
            concord_core::panel::agreement::Level::System,
            concord_core::panel::agreement::Level::Item,
        ],
        groups: true,
        per_expert: true,
        exclude_self_family: true,
    }
}

fn read_only(study: &Path) -> Store {
    Store::open_read_only(study, Arc::new(SystemClock), None)
        .expect("the study opens read-only beside the window")
}

fn choose(app: &App, css: &str, value: &str) {
    app.wait_for(css, Duration::from_secs(10));
    app.script(
        "const s = document.querySelector(arguments[0]); s.value = arguments[1]; \
         s.dispatchEvent(new Event('change')); return 1;",
        json!([css, value]),
    );
}

fn fill(app: &App, css: &str, text: &str) {
    let e = app.wait_for(css, Duration::from_secs(5));
    app.clear(&e);
    app.type_into(&e, text);
}

/// The number an element's attribute holds (the shortest decimal of the double the core sent).
fn number(app: &App, css: &str, attribute: &str) -> f64 {
    let e = app.wait_for(css, Duration::from_secs(60));
    let v = app.attribute(&e, attribute).unwrap_or_default();
    v.parse()
        .unwrap_or_else(|_| panic!("{css} {attribute} is a number: {v:?}"))
}

/// Scroll `css` to the top of the window and save a screenshot of it as `name`.
fn show(app: &App, css: &str, name: &str) {
    app.script(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'start'}); return 1;",
        json!([css]),
    );
    std::thread::sleep(Duration::from_millis(200));
    app.screenshot(name);
}

fn panel_text(app: &App) -> String {
    app.script(
        "return document.querySelector('[data-testid=agreement-panel]').innerText;",
        json!([]),
    )
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// MentalBench: agreement by category, the experts' G-study and a judge's label budget.
fn mentalbench_cards(app: &App, study: &Path) {
    let store = read_only(study);
    let options = panel_options("mentalbench");
    let (data, _) = referenced_data(&store, &options, AgreementReference::Experts).unwrap();
    let split = by_facet(&store, &data, Facet::Category, &options).unwrap();
    let row = "[data-testid=category-row][data-category=self-harm]";
    app.wait_for(row, Duration::from_secs(120));
    let criterion = app
        .attribute(
            &app.wait_for(
                "[data-testid=by-category-attribute]",
                Duration::from_secs(5),
            ),
            "value",
        )
        .unwrap_or_default();
    let stratum = split
        .strata
        .iter()
        .find(|s| s.value.as_deref() == Some("self-harm"))
        .and_then(|s| s.report.as_ref())
        .expect("the core has the category's report");
    let cell = stratum
        .cells
        .iter()
        .find(|c| {
            c.rater == "judge-good"
                && c.criterion == criterion
                && c.level == concord_core::panel::agreement::Level::System
                && c.comparison == concord_core::panel::agreement::Comparison::JudgeVsExperts
        })
        .expect("the good judge's system-level cell");
    let shown = number(
        app,
        &format!("{row} [data-testid=category-cell][data-judge=judge-good]"),
        "data-value",
    );
    assert_eq!(
        Some(shown),
        cell.icc_c1,
        "the window's ICC(C,1) of the self-harm category is the core's, on that category's responses alone"
    );
    let rare = app.wait_for(
        "[data-testid=category-row][data-category=eating] [data-testid=category-reason] [role=note]",
        Duration::from_secs(5),
    );
    assert!(
        app.text(&rare).contains("only 1 response"),
        "the rare category says why it has no figures, as a note: {}",
        app.text(&rare)
    );

    let section = gstudy_section(&store, "mentalbench").unwrap();
    let first = &section.studies[0];
    app.wait_for("[data-testid=gstudy-components]", Duration::from_secs(120));
    for (name, value) in &first.components {
        let shown = number(
            app,
            &format!("[data-testid=gstudy-component][data-name='{name}']"),
            "data-value",
        );
        assert_eq!(
            shown, *value,
            "the experts' σ²({name}) of {} is the core's",
            first.criterion
        );
    }
    let points = app.script(
        "return document.querySelectorAll('[data-testid=gstudy-curve] g.gd-point circle').length;",
        json!([]),
    );
    assert_eq!(
        points,
        json!(20),
        "the D-study curve draws 1–10 experts on one occasion and on the two observed"
    );

    let cell = app.wait_for(
        &format!("[data-testid=cell][data-rater=judge-good][data-criterion={criterion}]"),
        Duration::from_secs(30),
    );
    app.click(&cell);
    fill(app, "[data-testid=budget-cost-expert]", "20");
    fill(app, "[data-testid=budget-cost-judge]", "0.05");
    choose(app, "[data-testid=budget-goal]", "standard_error");
    fill(app, "[data-testid=budget-value]", "0.05");
    let plan = app.wait_for("[data-testid=budget-plan]", Duration::from_secs(5));
    app.click(&plan);
    let question = LabelBudgetQuestion {
        criterion: criterion.clone(),
        judge: "judge-good".into(),
        cost_expert: 20.0,
        cost_judge: 0.05,
        goal: BudgetGoal::StandardError(0.05),
    };
    let want = label_budget(
        &AgreementData::load_compared(&store, "mentalbench").unwrap(),
        &question,
    );
    let design = want.design.expect("the pilot gives a design");
    assert_eq!(
        number(app, "[data-testid=budget-result]", "data-n-expert"),
        design.n_expert as f64,
        "the planner's expert labels are the core's"
    );
    assert_eq!(
        number(app, "[data-testid=budget-result]", "data-n-judge"),
        design.n_judge as f64,
        "and its judge-only answers"
    );
    show(app, "[data-testid=label-budget]", "reviewer-label-budget");
    show(app, "[data-testid=by-category]", "reviewer-by-category");
    show(app, "[data-testid=gstudy]", "reviewer-gstudy");
}

/// PsyCrisis: the prevalence cards, then the Dawid–Skene reference.
fn psycrisis_cards(app: &App, study: &Path) {
    let store = read_only(study);
    choose(app, "[data-testid=ag-rubric]", "psycrisis");
    let rows = prevalence_rows(
        &AgreementData::load(&store, "psycrisis").unwrap(),
        0.95,
        None,
    );
    app.wait_for("[data-testid=prevalence-card]", Duration::from_secs(120));
    let cards = app.find_all("[data-testid=prevalence-card]");
    assert_eq!(
        cards.len(),
        rows.len(),
        "one card per judge × binary dimension"
    );
    for r in &rows {
        let card = format!(
            "[data-testid=prevalence-card][data-judge='{}'][data-criterion='{}']",
            r.judge, r.criterion
        );
        match r.corrected {
            Some(p) => {
                assert_eq!(
                    number(app, &card, "data-corrected"),
                    p,
                    "{} on {}: the card's corrected prevalence is the core's",
                    r.judge,
                    r.criterion
                );
                assert_eq!(
                    number(app, &card, "data-lo"),
                    r.ci.unwrap()[0],
                    "and its interval"
                );
            }
            None => {
                let note = app.wait_for(
                    &format!("{card} [data-testid=prevalence-reason]"),
                    Duration::from_secs(5),
                );
                assert_eq!(
                    app.attribute(&note, "role").as_deref(),
                    Some("note"),
                    "a degenerate card's reason is a note a screen reader reads"
                );
                let reason = serde_json::to_value(r.reason).unwrap();
                assert_eq!(
                    app.attribute(&app.wait_for(&card, Duration::from_secs(5)), "data-reason"),
                    reason.as_str().map(str::to_string),
                    "{} on {}: the card carries the core's reason",
                    r.judge,
                    r.criterion
                );
                assert!(
                    reason != json!("not_informative")
                        || app.text(&note).contains("no better than chance"),
                    "{} on {}: the card words the reason: {}",
                    r.judge,
                    r.criterion,
                    app.text(&note)
                );
            }
        }
    }
    assert!(
        rows.iter().any(|r| r.corrected.is_none()),
        "the contrarian judge has cards with a reason to show"
    );
    show(app, "[data-testid=prevalence]", "reviewer-prevalence");

    choose(app, "[data-testid=ag-reference]", "dawid-skene");
    app.wait_for("[data-testid=latent-fits]", Duration::from_secs(120));
    let fits = app.find_all("[data-testid=latent-fit]");
    assert_eq!(fits.len(), 5, "one Dawid–Skene fit per binary dimension");
    let phis = app.find_all("[data-testid=latent-phi]");
    assert_eq!(phis.len(), 15, "three pairs of judges per dimension");
    app.wait_for("[data-testid=binary-row]", Duration::from_secs(30));
    show(app, "[data-testid=latent-fits]", "reviewer-dawid-skene");
}

#[test]
fn the_reviewers_cards_show_the_cores_figures_and_their_reasons() {
    let tmp = tempfile::tempdir().unwrap();
    let study = tmp.path().join("reviewer.concord");
    drop(reviewer_study(&study, tmp.path(), SEED));
    let app = App::launch(&study);
    app.wait_for("[data-testid=overview]", Duration::from_secs(60));
    let nav = app.wait_for("[data-testid=nav-agreement]", Duration::from_secs(5));
    app.click(&nav);
    mentalbench_cards(&app, &study);
    assert!(
        !panel_text(&app).contains("NaN"),
        "no figure of the MentalBench panel reads NaN"
    );
    app.assert_accessible("agreement panel with the reviewer's cards");
    psycrisis_cards(&app, &study);
    let text = panel_text(&app);
    assert!(
        !text.contains("NaN"),
        "no figure of the PsyCrisis panel reads NaN"
    );
    app.assert_accessible("agreement panel against the latent consensus");

    // The same cards in Chinese.
    let switch = app.wait_for("[data-testid=lang-switch]", Duration::from_secs(5));
    app.click(&switch);
    app.wait_for("html[lang=zh-CN]", Duration::from_secs(10));
    let text = panel_text(&app);
    for title in [
        "Dawid–Skene 潜在共识",
        "按类别的一致性",
        "概化理论",
        "不优于随机猜测",
    ] {
        assert!(
            text.contains(title),
            "the panel's new sections and their reasons are written in Chinese: {title} is missing"
        );
    }
    show(&app, "[data-testid=prevalence]", "reviewer-zh");
}
