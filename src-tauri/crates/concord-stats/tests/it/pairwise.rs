//! Pairwise preferences against their references: every case in `vectors/pairwise.json` (written
//! by `vectors/pairwise.py` from choix, evalica, scipy and statsmodels) is recomputed here.
//! Maximum-likelihood points (strengths, Davidson's ν, log-likelihoods) agree to 1e-9, the
//! closed forms (agreement, κ and its standard error, Wilson, Clopper–Pearson, binomial p-values,
//! rank correlations) to 1e-9 or tighter. Cases with no maximum-likelihood estimate must be
//! refused with the named error. Then properties on random designs.

use concord_stats::bootstrap::BootstrapOptions;
use concord_stats::pairwise::{
    bradley_terry, leaderboard, position_bias, position_consistency, preference_agreement,
    rank_correlation, win_rates, BradleyTerryFit, Comparison, Outcome, PairwiseError, TieHandling,
};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

/// Maximum-likelihood points: the peers iterate to 1e-13 and Concord to 1e-10 in log-strength
/// (the committed cases agree to about 1e-14).
const MLE_TOL: f64 = 1e-9;
/// Closed forms.
const TOL: f64 = 1e-9;

fn doc() -> Value {
    serde_json::from_str(include_str!("../vectors/pairwise.json"))
        .expect("pairwise.json is valid JSON")
}

fn close(actual: Option<f64>, expected: &Value, tol: f64, what: &str) {
    match expected.as_f64() {
        None => assert!(
            actual.is_none(),
            "{what}: undefined in the reference, got {actual:?}"
        ),
        Some(e) => {
            let a = actual.unwrap_or_else(|| panic!("{what}: the reference has {e}, Concord none"));
            assert!(
                (a - e).abs() <= tol * e.abs().max(1.0),
                "{what}: Concord {a} differs from the reference {e}"
            );
        }
    }
}

fn outcome(letter: char) -> Outcome {
    match letter {
        'L' => Outcome::Left,
        'R' => Outcome::Right,
        'T' => Outcome::Tie,
        other => panic!("verdict letter {other} is not L, R or T"),
    }
}

fn comparisons(v: &Value) -> Vec<Comparison> {
    v.as_str()
        .expect("comparisons as a string")
        .split_whitespace()
        .map(|token| {
            let mut parts = token.split(':');
            let mut item = || {
                parts
                    .next()
                    .expect("left:right:verdict")
                    .parse::<usize>()
                    .expect("an item index")
            };
            let (left, right) = (item(), item());
            let verdict = token.chars().last().expect("a verdict letter");
            Comparison::new(left, right, outcome(verdict))
        })
        .collect()
}

fn verdicts(v: &Value) -> Vec<Outcome> {
    v.as_str()
        .expect("verdicts as a string")
        .chars()
        .map(outcome)
        .collect()
}

fn usize_of(v: &Value) -> usize {
    v.as_u64().expect("a count") as usize
}

fn error_name(e: &PairwiseError) -> &'static str {
    match e {
        PairwiseError::NotStronglyConnected { .. } => "not_strongly_connected",
        PairwiseError::Disconnected { .. } => "disconnected",
        PairwiseError::DavidsonUnbounded => "davidson_unbounded",
        PairwiseError::OnlyTies => "only_ties",
        _ => "other",
    }
}

fn check_fit(name: &str, label: &str, got: Result<BradleyTerryFit, PairwiseError>, want: &Value) {
    if let Some(refusal) = want["refused"].as_str() {
        match got {
            Err(e) => assert_eq!(
                error_name(&e),
                refusal,
                "{name} ({label}): the data have no MLE and must be refused as {refusal}, got {e}"
            ),
            Ok(fit) => panic!(
                "{name} ({label}): no MLE exists ({refusal}), yet Concord returned {:?}",
                fit.strengths
            ),
        }
        return;
    }
    let fit = got.unwrap_or_else(|e| panic!("{name} ({label}): the reference fits, Concord: {e}"));
    assert!(
        fit.converged,
        "{name} ({label}): Newton must converge on data with an MLE ({} iterations)",
        fit.iterations
    );
    let strengths = want["strengths"].as_array().expect("strengths");
    assert_eq!(
        fit.strengths.len(),
        strengths.len(),
        "{name} ({label}): one strength per declared item"
    );
    for (i, (g, w)) in fit.strengths.iter().zip(strengths).enumerate() {
        close(
            *g,
            w,
            MLE_TOL,
            &format!(
                "{name} ({label}): strength of item {i} ({})",
                want["peer"].as_str().unwrap_or("reference")
            ),
        );
    }
    close(
        fit.tie_parameter,
        &want["tie_parameter"],
        MLE_TOL,
        &format!("{name} ({label}): Davidson's nu (null with split ties)"),
    );
    close(
        Some(fit.log_likelihood),
        &want["log_likelihood"],
        MLE_TOL,
        &format!("{name} ({label}): log-likelihood at the estimate"),
    );
}

#[test]
fn bradley_terry_matches_choix_scipy_and_evalica() {
    let doc = doc();
    let cases = doc["fits"].as_array().expect("fit cases");
    assert!(
        cases.len() >= 10,
        "hand-small, random, ties-heavy and refused cases are all present"
    );
    for c in cases {
        let name = c["name"].as_str().expect("a name");
        let n = usize_of(&c["n_items"]);
        let data = comparisons(&c["comparisons"]);
        check_fit(
            name,
            "split ties",
            bradley_terry(n, &data, TieHandling::Split),
            &c["split"],
        );
        check_fit(
            name,
            "Davidson ties",
            bradley_terry(n, &data, TieHandling::Davidson),
            &c["davidson"],
        );
    }
}

#[test]
fn refusals_name_the_items_at_fault() {
    let doc = doc();
    let case = |name: &str| {
        let c = doc["fits"]
            .as_array()
            .expect("fit cases")
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("case {name}"));
        (usize_of(&c["n_items"]), comparisons(&c["comparisons"]))
    };
    let (n, data) = case("one_way");
    assert_eq!(
        bradley_terry(n, &data, TieHandling::Split),
        Err(PairwiseError::NotStronglyConnected {
            unbeaten: vec![0],
            winless: vec![1, 2]
        }),
        "item 0 never lost; items 1 and 2 beat only each other, never item 0"
    );
    let (n, data) = case("apart");
    assert_eq!(
        bradley_terry(n, &data, TieHandling::Davidson),
        Err(PairwiseError::Disconnected {
            groups: vec![vec![0, 1], vec![2, 3]]
        }),
        "the two groups never met, so their relative strength is not identified"
    );
}

#[test]
fn win_rates_count_ties_as_half() {
    let doc = doc();
    for c in doc["fits"].as_array().expect("fit cases") {
        let name = c["name"].as_str().expect("a name");
        let data = comparisons(&c["comparisons"]);
        let got = win_rates(usize_of(&c["n_items"]), &data).expect("valid comparisons");
        for (i, (g, w)) in got
            .iter()
            .zip(c["win_rates"].as_array().expect("records"))
            .enumerate()
        {
            assert_eq!(
                (g.wins, g.losses, g.ties, g.comparisons),
                (
                    usize_of(&w["wins"]),
                    usize_of(&w["losses"]),
                    usize_of(&w["ties"]),
                    usize_of(&w["comparisons"])
                ),
                "{name}: item {i}'s record counts every comparison it took part in"
            );
            close(
                g.win_rate,
                &w["win_rate"],
                TOL,
                &format!("{name}: item {i}'s win rate (ties half)"),
            );
        }
    }
}

#[test]
fn leaderboard_points_are_the_fit_and_intervals_hold_them() {
    let doc = doc();
    let options = BootstrapOptions {
        resamples: 300,
        ..BootstrapOptions::default()
    };
    for c in doc["fits"].as_array().expect("fit cases") {
        let Some(size) = c["cluster_size"].as_u64() else {
            continue;
        };
        let name = c["name"].as_str().expect("a name");
        let n = usize_of(&c["n_items"]);
        let data = comparisons(&c["comparisons"]);
        let clusters: Vec<Vec<Comparison>> =
            data.chunks(size as usize).map(<[_]>::to_vec).collect();
        for (ties, key) in [
            (TieHandling::Split, "split"),
            (TieHandling::Davidson, "davidson"),
        ] {
            let board = leaderboard(
                n,
                &clusters,
                ties,
                &options,
                &mut ChaCha8Rng::seed_from_u64(28),
            )
            .unwrap_or_else(|e| panic!("{name} ({key}): {e}"));
            assert_eq!(
                board.resamples_kept, 300,
                "{name} ({key}): every resample of 500 conversations has an MLE"
            );
            let want = c[key]["strengths"].as_array().expect("strengths");
            let mut previous = f64::INFINITY;
            for (position, e) in board.entries.iter().enumerate() {
                close(
                    e.strength,
                    &want[e.item],
                    MLE_TOL,
                    &format!("{name} ({key}): leaderboard point of item {}", e.item),
                );
                let s = e.strength.expect("every source compared");
                assert!(s <= previous, "{name} ({key}): entries strongest first");
                previous = s;
                assert_eq!(
                    e.rank,
                    Some(position + 1),
                    "{name} ({key}): rank is the position by point strength"
                );
                let (lo, hi) = (e.ci_low.expect("lower"), e.ci_high.expect("upper"));
                assert!(
                    lo <= s && s <= hi,
                    "{name} ({key}): item {} interval [{lo}, {hi}] should hold its estimate {s}",
                    e.item
                );
                close(
                    e.win_rate,
                    &c["win_rates"][e.item]["win_rate"],
                    TOL,
                    &format!("{name} ({key}): leaderboard win rate of item {}", e.item),
                );
            }
            if ties == TieHandling::Davidson {
                let nu = board.tie_parameter.expect("nu");
                let (lo, hi) = board.tie_parameter_ci;
                assert!(
                    lo.expect("lower") <= nu && nu <= hi.expect("upper"),
                    "{name}: the interval of nu should hold nu = {nu}"
                );
            }
        }
    }
}

#[test]
fn preference_agreement_matches_statsmodels() {
    let doc = doc();
    for c in doc["agreement"].as_array().expect("agreement cases") {
        let name = c["name"].as_str().expect("a name");
        let level = c["level"].as_f64().expect("a level");
        let got = preference_agreement(&verdicts(&c["a"]), &verdicts(&c["b"]), level)
            .expect("paired one to one");
        assert_eq!(got.n, usize_of(&c["n"]), "{name}: every pair of verdicts");
        assert_eq!(
            got.agreements,
            usize_of(&c["agreements"]),
            "{name}: identical verdicts counted"
        );
        close(got.percent, &c["percent"], TOL, &format!("{name}: percent"));
        close(
            got.percent_ci.0,
            &c["percent_ci"][0],
            TOL,
            &format!("{name}: Wilson lower bound (proportion_confint)"),
        );
        close(
            got.percent_ci.1,
            &c["percent_ci"][1],
            TOL,
            &format!("{name}: Wilson upper bound (proportion_confint)"),
        );
        close(
            got.kappa,
            &c["kappa"],
            TOL,
            &format!("{name}: Cohen's kappa"),
        );
        close(
            got.kappa_se,
            &c["kappa_se"],
            TOL,
            &format!("{name}: asymptotic SE of kappa (std_kappa)"),
        );
        close(
            got.kappa_ci.0,
            &c["kappa_ci"][0],
            TOL,
            &format!("{name}: kappa lower bound ({})", c["kappa_ci_rule"]),
        );
        close(
            got.kappa_ci.1,
            &c["kappa_ci"][1],
            TOL,
            &format!("{name}: kappa upper bound ({})", c["kappa_ci_rule"]),
        );
    }
    assert!(
        preference_agreement(&[Outcome::Left], &[], 0.95).is_err(),
        "verdicts that are not paired one to one are refused, not truncated"
    );
}

#[test]
fn position_bias_matches_scipy_binomtest() {
    let doc = doc();
    for c in doc["position_bias"].as_array().expect("bias cases") {
        let (k, n) = (usize_of(&c["first_wins"]), usize_of(&c["decided"]));
        let level = c["level"].as_f64().expect("a level");
        let got = position_bias(k, n, level);
        let what = format!("{k} of {n} at {level}");
        close(
            got.p_first,
            &c["p_first"],
            TOL,
            &format!("{what}: P(first)"),
        );
        close(
            got.ci.0,
            &c["ci"][0],
            1e-10,
            &format!("{what}: Clopper–Pearson lower bound (brentq to 2e-12 in scipy)"),
        );
        close(
            got.ci.1,
            &c["ci"][1],
            1e-10,
            &format!("{what}: Clopper–Pearson upper bound"),
        );
        close(
            got.p_value,
            &c["p_value"],
            1e-10,
            &format!("{what}: two-sided exact binomial p-value"),
        );
    }
    let none = position_bias(3, 0, 0.95);
    assert!(
        none.p_first.is_none() && none.p_value.is_none() && none.ci == (None, None),
        "no decided verdict: nothing is defined"
    );
    assert!(
        position_bias(5, 3, 0.95).p_first.is_none(),
        "more first-position wins than decided verdicts is impossible: undefined, no panic"
    );
}

#[test]
fn position_consistency_matches_statsmodels_wilson() {
    let doc = doc();
    for c in doc["position_consistency"].as_array().expect("cases") {
        let name = c["name"].as_str().expect("a name");
        let pairs: Vec<(Outcome, Outcome)> = verdicts(&c["first"])
            .into_iter()
            .zip(verdicts(&c["second"]))
            .collect();
        let got = position_consistency(&pairs, c["level"].as_f64().expect("a level"));
        assert_eq!(got.pairs, usize_of(&c["pairs"]), "{name}: every pair");
        assert_eq!(
            got.consistent,
            usize_of(&c["consistent"]),
            "{name}: the same verdict in both orders (tie and tie included)"
        );
        close(got.share, &c["share"], TOL, &format!("{name}: share"));
        close(
            got.ci.0,
            &c["ci"][0],
            TOL,
            &format!("{name}: Wilson lower bound"),
        );
        close(
            got.ci.1,
            &c["ci"][1],
            TOL,
            &format!("{name}: Wilson upper bound"),
        );
    }
}

#[test]
fn rank_correlation_matches_scipy() {
    let doc = doc();
    for c in doc["rank_correlation"].as_array().expect("cases") {
        let name = c["name"].as_str().expect("a name");
        let side = |v: &Value| -> Vec<Option<f64>> {
            v.as_array()
                .expect("scores")
                .iter()
                .map(Value::as_f64)
                .collect()
        };
        let got = rank_correlation(&side(&c["a"]), &side(&c["b"]));
        assert_eq!(
            got.n,
            usize_of(&c["n"]),
            "{name}: items both scorings define"
        );
        close(
            got.spearman,
            &c["spearman"],
            1e-12,
            &format!("{name}: Spearman (spearmanr)"),
        );
        close(
            got.kendall_tau_b,
            &c["kendall_tau_b"],
            1e-12,
            &format!("{name}: Kendall tau-b (kendalltau)"),
        );
    }
}

/// Random comparisons among up to 5 items, with ties.
fn design() -> impl Strategy<Value = (usize, Vec<Comparison>)> {
    (2usize..6).prop_flat_map(|n| {
        let comparison = (0..n, 1..n, 0u8..3).prop_map(move |(left, shift, o)| {
            let outcome = [Outcome::Left, Outcome::Right, Outcome::Tie][usize::from(o)];
            Comparison::new(left, (left + shift) % n, outcome)
        });
        (Just(n), prop::collection::vec(comparison, 0..40))
    })
}

fn same_fit(
    a: &Result<BradleyTerryFit, PairwiseError>,
    b: &Result<BradleyTerryFit, PairwiseError>,
    relabel: &[usize],
) -> Result<(), TestCaseError> {
    match (a, b) {
        (Ok(x), Ok(y)) => {
            prop_assert_eq!(x.converged, y.converged);
            for (i, s) in x.strengths.iter().enumerate() {
                let t = y.strengths[relabel[i]];
                match (s, t) {
                    (Some(s), Some(t)) => prop_assert!(
                        (s - t).abs() <= 1e-7,
                        "item {} moved from {} to {}",
                        i,
                        s,
                        t
                    ),
                    (None, None) => {}
                    _ => prop_assert!(false, "item {} compared in one fit only", i),
                }
            }
            match (x.tie_parameter, y.tie_parameter) {
                (Some(u), Some(v)) => prop_assert!((u - v).abs() <= 1e-7 * u.max(1.0)),
                (u, v) => prop_assert_eq!(u, v),
            }
        }
        (Err(x), Err(y)) => prop_assert_eq!(error_name(x), error_name(y)),
        _ => prop_assert!(false, "one fit exists and the other not: {:?} / {:?}", a, b),
    }
    Ok(())
}

/// The log-likelihood from the model's definition, comparison by comparison.
fn log_likelihood(data: &[Comparison], theta: &[f64], ties: TieHandling, nu: Option<f64>) -> f64 {
    let mut ll = 0.0;
    for c in data {
        let (pi, pj) = (theta[c.left].exp(), theta[c.right].exp());
        match ties {
            TieHandling::Split => {
                let (left, right) = (pi / (pi + pj), pj / (pi + pj));
                ll += match c.outcome {
                    Outcome::Left => left.ln(),
                    Outcome::Right => right.ln(),
                    Outcome::Tie => 0.5 * left.ln() + 0.5 * right.ln(),
                };
            }
            TieHandling::Davidson => {
                let tie = nu.unwrap_or(0.0) * (pi * pj).sqrt();
                let d = pi + pj + tie;
                ll += match c.outcome {
                    Outcome::Left => (pi / d).ln(),
                    Outcome::Right => (pj / d).ln(),
                    Outcome::Tie => (tie / d).ln(),
                };
            }
        }
    }
    ll
}

proptest! {
    #[test]
    fn swapping_sides_with_the_verdict_changes_nothing((n, data) in design()) {
        // Left and right are names: a comparison means the same with both swapped.
        let swapped: Vec<Comparison> = data.iter().map(|c| c.swapped()).collect();
        let identity: Vec<usize> = (0..n).collect();
        for ties in [TieHandling::Split, TieHandling::Davidson] {
            same_fit(&bradley_terry(n, &data, ties), &bradley_terry(n, &swapped, ties), &identity)?;
        }
    }

    #[test]
    fn strengths_follow_their_items_under_relabelling((n, data) in design(), rotate in 1usize..5) {
        // The model has no notion of item order: renaming items renames their strengths.
        let relabel: Vec<usize> = (0..n).map(|i| (i + rotate) % n).collect();
        let renamed: Vec<Comparison> = data
            .iter()
            .map(|c| Comparison::new(relabel[c.left], relabel[c.right], c.outcome))
            .collect();
        for ties in [TieHandling::Split, TieHandling::Davidson] {
            same_fit(&bradley_terry(n, &data, ties), &bradley_terry(n, &renamed, ties), &relabel)?;
        }
    }

    #[test]
    fn a_fit_is_a_centred_maximum_of_its_likelihood((n, data) in design()) {
        // Where an MLE exists, Newton converges, the strengths are centred, the reported
        // log-likelihood is the model's at the estimate, and moving any strength (or ν) lowers it.
        for ties in [TieHandling::Split, TieHandling::Davidson] {
            let Ok(fit) = bradley_terry(n, &data, ties) else { continue };
            prop_assert!(fit.converged, "{:?}: {} iterations", ties, fit.iterations);
            let defined: Vec<f64> = fit.strengths.iter().flatten().copied().collect();
            let mean = defined.iter().sum::<f64>() / defined.len() as f64;
            prop_assert!(mean.abs() < 1e-9, "strengths centred, mean {}", mean);
            let theta: Vec<f64> = fit.strengths.iter().map(|s| s.unwrap_or(0.0)).collect();
            let nu = fit.tie_parameter;
            let at = log_likelihood(&data, &theta, ties, nu);
            prop_assert!(
                (at - fit.log_likelihood).abs() <= 1e-9 * at.abs().max(1.0),
                "{:?}: reported {} but the model gives {}", ties, fit.log_likelihood, at
            );
            for i in (0..n).filter(|&i| fit.strengths[i].is_some()) {
                for h in [-1e-4, 1e-4] {
                    let mut moved = theta.clone();
                    moved[i] += h;
                    let there = log_likelihood(&data, &moved, ties, nu);
                    prop_assert!(there <= at + 1e-9, "{:?}: θ_{} + {} raises {} to {}", ties, i, h, at, there);
                }
            }
            if let Some(nu) = nu.filter(|&v| v > 0.0) {
                for factor in [0.999, 1.001] {
                    let there = log_likelihood(&data, &theta, ties, Some(nu * factor));
                    prop_assert!(there <= at + 1e-9, "ν × {} raises {} to {}", factor, at, there);
                }
            }
        }
    }

    #[test]
    fn leaderboard_points_are_the_fit((n, data) in design(), seed in 0u64..1000) {
        // The leaderboard reports the full-data fit and its ordered intervals; it fails exactly
        // when the fit does.
        let clusters: Vec<Vec<Comparison>> = data.chunks(3).map(<[_]>::to_vec).collect();
        let options = BootstrapOptions { resamples: 60, ..BootstrapOptions::default() };
        for ties in [TieHandling::Split, TieHandling::Davidson] {
            let fit = bradley_terry(n, &data, ties);
            let board = leaderboard(n, &clusters, ties, &options, &mut ChaCha8Rng::seed_from_u64(seed));
            match (&fit, &board) {
                (Err(a), Err(b)) => prop_assert_eq!(a, b),
                (Ok(fit), Ok(board)) => {
                    prop_assert!(board.resamples_kept <= board.resamples);
                    prop_assert_eq!(board.entries.len(), n);
                    for e in &board.entries {
                        prop_assert_eq!(e.strength, fit.strengths[e.item]);
                        if let (Some(lo), Some(hi)) = (e.ci_low, e.ci_high) {
                            prop_assert!(lo <= hi, "item {}: [{}, {}]", e.item, lo, hi);
                        }
                    }
                }
                _ => prop_assert!(false, "fit {:?} but leaderboard {:?}", fit, board),
            }
        }
    }

    #[test]
    fn nothing_panics_on_arbitrary_input(
        n in prop_oneof![0usize..4, Just(usize::MAX)],
        raw in prop::collection::vec((0usize..5, 0usize..5, 0u8..3), 0..12),
        first in 0usize..20,
        decided in 0usize..20,
        level in -0.5f64..1.5,
    ) {
        // Out-of-range items, self-comparisons, empty data and odd levels give errors or None.
        let data: Vec<Comparison> = raw
            .iter()
            .map(|&(l, r, o)| Comparison::new(l, r, [Outcome::Left, Outcome::Right, Outcome::Tie][usize::from(o)]))
            .collect();
        for ties in [TieHandling::Split, TieHandling::Davidson] {
            let _ = bradley_terry(n, &data, ties);
            let options = BootstrapOptions { resamples: 5, level, ..BootstrapOptions::default() };
            let _ = leaderboard(n, &[data.clone(), Vec::new()], ties, &options, &mut ChaCha8Rng::seed_from_u64(1));
        }
        let _ = win_rates(n, &data);
        let verdicts: Vec<Outcome> = data.iter().map(|c| c.outcome).collect();
        let _ = preference_agreement(&verdicts, &verdicts, level);
        let _ = position_bias(first, decided, level);
        let _ = position_bias(first, usize::MAX, level);
        let pairs: Vec<(Outcome, Outcome)> = verdicts.iter().map(|&v| (v, v.swapped())).collect();
        let _ = position_consistency(&pairs, level);
    }
}
