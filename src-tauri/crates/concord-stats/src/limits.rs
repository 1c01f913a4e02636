//! Bland–Altman limits of agreement on their own: bias, SD of the differences and the 95% limits,
//! with exactly the conventions of [`crate::paired::compare`] (SD with n − 1, limits bias ± 1.96 SD)
//! but without the rank correlations, so a caller that needs only the limits over thousands of
//! pairs (the agreement panel's item-level cells, recomputed after every rating) pays O(n) instead
//! of the O(n log n) sorts of Spearman's ρ and Kendall's τ-b.

use serde::Serialize;

use crate::paired::{check_pairs, PairedError, LOA_Z};

/// Bias, SD of the differences and the 95% limits of agreement of a − b; `None` where undefined.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgreementLimits {
    /// Number of pairs.
    pub n: usize,
    /// Mean of a − b.
    pub bias: Option<f64>,
    /// Sample SD (n − 1) of a − b.
    pub sd_diff: Option<f64>,
    /// [bias − 1.96 SD, bias + 1.96 SD].
    pub loa95: [Option<f64>; 2],
}

fn defined(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Bland–Altman limits of a versus b (same length, finite values).
pub fn bland_altman(a: &[f64], b: &[f64]) -> Result<AgreementLimits, PairedError> {
    check_pairs(a, b)?;
    let n = a.len();
    let nf = n as f64;
    let bias = (n > 0).then(|| a.iter().zip(b).map(|(x, y)| x - y).sum::<f64>() / nf);
    let sd_diff = match bias {
        Some(m) if n >= 2 => defined(
            (a.iter()
                .zip(b)
                .map(|(x, y)| (x - y - m) * (x - y - m))
                .sum::<f64>()
                / (nf - 1.0))
                .sqrt(),
        ),
        _ => None,
    };
    let loa95 = match (bias, sd_diff) {
        (Some(m), Some(s)) => [Some(m - LOA_Z * s), Some(m + LOA_Z * s)],
        _ => [None, None],
    };
    Ok(AgreementLimits {
        n,
        bias,
        sd_diff,
        loa95,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paired::compare;

    #[test]
    fn limits_equal_the_full_comparison() {
        let a = [3.0, 4.0, 2.0, 5.0, 4.0, 1.0, 3.5];
        let b = [2.0, 4.5, 2.0, 3.0, 4.0, 2.0, 3.0];
        let full = compare(&a, &b).expect("valid pairs");
        let limits = bland_altman(&a, &b).expect("valid pairs");
        assert_eq!(limits.bias, full.bias, "same bias as compare()");
        assert_eq!(limits.sd_diff, full.sd_diff, "same SD as compare()");
        assert_eq!(limits.loa95, full.loa95, "same limits as compare()");
    }

    #[test]
    fn degenerate_input() {
        let one = bland_altman(&[1.0], &[2.0]).expect("one pair is valid");
        assert_eq!(
            one.bias,
            Some(-1.0),
            "the bias of one pair is its difference"
        );
        assert_eq!(one.sd_diff, None, "no SD from one pair");
        assert!(
            bland_altman(&[1.0, f64::NAN], &[1.0, 2.0]).is_err(),
            "NaN is an input error"
        );
        assert!(
            bland_altman(&[1.0], &[1.0, 2.0]).is_err(),
            "unequal lengths are an input error"
        );
    }
}
