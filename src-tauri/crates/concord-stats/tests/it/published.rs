//! Published worked examples, checked against the values printed in the papers (to their rounding).
//!
//! McGraw & Wong (1996) Table 6 is not included: its data could not be reconstructed reliably
//! from the paper, and a fixture that might be wrong would test nothing.

use concord_stats::categorical::{
    fleiss_kappa, krippendorff_alpha, AlphaMetric, CategoricalRatings,
};
use concord_stats::icc::{icc_all, IccForm};

#[test]
fn shrout_fleiss_1979_table() {
    // Shrout & Fleiss (1979), Table 2: six targets rated by four judges.
    let m = [
        9.0, 2.0, 5.0, 8.0, 6.0, 1.0, 3.0, 2.0, 8.0, 4.0, 6.0, 8.0, 7.0, 1.0, 2.0, 6.0, 10.0, 5.0,
        6.0, 9.0, 6.0, 2.0, 4.0, 7.0,
    ];
    let t = icc_all(&m, 6, 4).unwrap();
    let published = [
        (IccForm::Icc1, 0.17),
        (IccForm::Icc2, 0.29),
        (IccForm::Icc3, 0.71),
        (IccForm::Icc1k, 0.44),
        (IccForm::Icc2k, 0.62),
        (IccForm::Icc3k, 0.91),
    ];
    for (form, value) in published {
        let got = t.get(form).value.unwrap();
        assert!(
            (got - value).abs() <= 0.005,
            "{} must round to the published {value}, got {got}",
            form.mcgraw_wong_name()
        );
    }
}

#[test]
fn fleiss_1971_diagnoses() {
    // Fleiss (1971): 30 patients, 6 psychiatrists each, 5 diagnostic categories; published κ = 0.430.
    let rows: [[u8; 6]; 30] = [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ];
    let cells = rows
        .iter()
        .flat_map(|r| r.iter().map(|&c| Some(usize::from(c) - 1)))
        .collect();
    let r = CategoricalRatings::new(vec![1.0, 2.0, 3.0, 4.0, 5.0], 30, 6, cells).unwrap();
    let k = fleiss_kappa(&r).unwrap();
    assert!(
        (k - 0.430).abs() <= 0.0005,
        "Fleiss (1971) reports κ = 0.430, got {k}"
    );
}

#[test]
fn krippendorff_2011_reliability_data() {
    // Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers × 12 units,
    // values 1–5, with missing entries. Published: nominal 0.743, interval 0.849.
    let observers: [[Option<f64>; 12]; 4] = [
        [
            Some(1.0),
            Some(2.0),
            Some(3.0),
            Some(3.0),
            Some(2.0),
            Some(1.0),
            Some(4.0),
            Some(1.0),
            Some(2.0),
            None,
            None,
            None,
        ],
        [
            Some(1.0),
            Some(2.0),
            Some(3.0),
            Some(3.0),
            Some(2.0),
            Some(2.0),
            Some(4.0),
            Some(1.0),
            Some(2.0),
            Some(5.0),
            None,
            Some(3.0),
        ],
        [
            None,
            Some(3.0),
            Some(3.0),
            Some(3.0),
            Some(2.0),
            Some(3.0),
            Some(4.0),
            Some(2.0),
            Some(2.0),
            Some(5.0),
            Some(1.0),
            None,
        ],
        [
            Some(1.0),
            Some(2.0),
            Some(3.0),
            Some(3.0),
            Some(2.0),
            Some(4.0),
            Some(4.0),
            Some(1.0),
            Some(2.0),
            Some(5.0),
            Some(1.0),
            None,
        ],
    ];
    let units: Vec<Vec<Option<f64>>> = (0..12)
        .map(|u| observers.iter().map(|o| o[u]).collect())
        .collect();
    let r = CategoricalRatings::from_values(&[1.0, 2.0, 3.0, 4.0, 5.0], &units).unwrap();
    let nominal = krippendorff_alpha(&r, AlphaMetric::Nominal).unwrap();
    let interval = krippendorff_alpha(&r, AlphaMetric::Interval).unwrap();
    assert!(
        (nominal - 0.743).abs() <= 0.0005,
        "published nominal α is 0.743, got {nominal}"
    );
    assert!(
        (interval - 0.849).abs() <= 0.0005,
        "published interval α is 0.849, got {interval}"
    );
}
