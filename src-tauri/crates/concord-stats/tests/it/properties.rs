//! Invariances every agreement statistic must respect, checked on random designs.

use concord_stats::categorical::{cohen_kappa, CategoricalRatings, Weights};
use concord_stats::icc::{icc_all, icc_c1_a1_pairs, IccForm, IccTable};
use concord_stats::paired::kendall_tau_b;
use proptest::prelude::*;

fn close(a: Option<f64>, b: Option<f64>, tol: f64) -> bool {
    match (a, b) {
        (Some(x), Some(y)) if x.is_finite() && y.is_finite() => {
            (x - y).abs() <= tol * x.abs().max(1.0)
        }
        (Some(x), Some(y)) => x == y,
        (None, None) => true,
        _ => false,
    }
}

/// A design of n targets × k raters with scores on a 0–10 grid of tenths (ties included).
fn design() -> impl Strategy<Value = (usize, usize, Vec<f64>)> {
    (3usize..15, 2usize..6).prop_flat_map(|(n, k)| {
        (
            Just(n),
            Just(k),
            prop::collection::vec((0u32..=100).prop_map(|x| f64::from(x) / 10.0), n * k),
        )
    })
}

fn same_forms(a: &IccTable, b: &IccTable, forms: &[IccForm]) -> Result<(), TestCaseError> {
    for &form in forms {
        let (x, y) = (a.get(form), b.get(form));
        prop_assert!(
            close(x.value, y.value, 1e-9),
            "{} value moved: {:?} vs {:?}",
            form.code(),
            x.value,
            y.value
        );
        prop_assert!(
            close(x.ci95[0], y.ci95[0], 1e-7) && close(x.ci95[1], y.ci95[1], 1e-7),
            "{} interval moved: {:?} vs {:?}",
            form.code(),
            x.ci95,
            y.ci95
        );
    }
    Ok(())
}

proptest! {
    #[test]
    fn adding_a_constant_changes_no_icc((n, k, m) in design(), shift in -50.0f64..50.0) {
        // Every ICC is a ratio of mean squares, and mean squares ignore a common location shift.
        let shifted: Vec<f64> = m.iter().map(|x| x + shift).collect();
        let a = icc_all(&m, n, k).unwrap();
        let b = icc_all(&shifted, n, k).unwrap();
        same_forms(&a, &b, &IccForm::ALL)?;
    }

    #[test]
    fn shifting_one_rater_changes_no_consistency_icc((n, k, m) in design(), rater in 0usize..6, shift in -5.0f64..5.0) {
        // Consistency forms remove rater means, so a rater's constant offset cannot matter.
        let rater = rater % k;
        let mut shifted = m.clone();
        for row in shifted.chunks_exact_mut(k) {
            row[rater] += shift;
        }
        let a = icc_all(&m, n, k).unwrap();
        let b = icc_all(&shifted, n, k).unwrap();
        same_forms(&a, &b, &[IccForm::Icc3, IccForm::Icc3k])?;
    }

    #[test]
    fn cohen_kappa_is_symmetric_in_the_raters(labels in prop::collection::vec((0usize..4, 0usize..4), 2..60)) {
        // Swapping the raters transposes the table; κ's observed and chance agreement are unchanged.
        let q = 4;
        let cats: Vec<f64> = (0..q).map(|c| c as f64).collect();
        let ab: Vec<Option<usize>> = labels.iter().flat_map(|&(a, b)| [Some(a), Some(b)]).collect();
        let ba: Vec<Option<usize>> = labels.iter().flat_map(|&(a, b)| [Some(b), Some(a)]).collect();
        let r1 = CategoricalRatings::new(cats.clone(), labels.len(), 2, ab).unwrap();
        let r2 = CategoricalRatings::new(cats, labels.len(), 2, ba).unwrap();
        for w in [Weights::Unweighted, Weights::Linear, Weights::Quadratic] {
            prop_assert!(close(cohen_kappa(&r1, w), cohen_kappa(&r2, w), 1e-12), "{w:?} kappa changed when the raters were swapped");
        }
    }

    #[test]
    fn pair_fast_path_agrees_with_anova(pairs in prop::collection::vec((0u32..=50, 0u32..=50), 2..40)) {
        // The bootstrap's cheap estimate must be the same statistic as the full table.
        let pairs: Vec<(f64, f64)> = pairs.into_iter().map(|(a, b)| (f64::from(a) / 10.0, f64::from(b) / 10.0)).collect();
        let flat: Vec<f64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
        let t = icc_all(&flat, pairs.len(), 2).unwrap();
        let fast = icc_c1_a1_pairs(&pairs);
        prop_assert!(close(fast.c1, t.get(IccForm::Icc3).value, 1e-9), "ICC(C,1) fast path {:?} vs table {:?}", fast.c1, t.get(IccForm::Icc3).value);
        prop_assert!(close(fast.a1, t.get(IccForm::Icc2).value, 1e-9), "ICC(A,1) fast path {:?} vs table {:?}", fast.a1, t.get(IccForm::Icc2).value);
    }

    #[test]
    fn kendall_is_symmetric_and_bounded(xs in prop::collection::vec((0u8..6, 0u8..6), 2..80)) {
        // τ-b treats both variables alike and is a correlation.
        let a: Vec<f64> = xs.iter().map(|p| f64::from(p.0)).collect();
        let b: Vec<f64> = xs.iter().map(|p| f64::from(p.1)).collect();
        let ab = kendall_tau_b(&a, &b);
        prop_assert!(close(ab, kendall_tau_b(&b, &a), 1e-12), "tau-b must not depend on argument order");
        if let Some(t) = ab { prop_assert!((-1.0..=1.0).contains(&t), "tau-b {t} outside [-1, 1]"); }
    }
}
