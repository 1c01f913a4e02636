//! The small estimators of a judge's bias audit, each with its 95% interval and the rule it uses.
//!
//! - [`mean_interval`]: the mean of differences d = judge − expert mean with the one-sample t
//!   interval (n − 1 df).
//! - [`slope_interval`]: the ordinary least-squares slope of y on x with its classical t interval
//!   (n − 2 df, residual variance with n − 2), as `statsmodels.OLS(...).fit().conf_int()`; the
//!   length audit regresses (judge − expert mean) on ln(response length in characters).
//! - [`difference_interval`]: mean(a) − mean(b) with Welch's interval (unequal variances,
//!   Welch–Satterthwaite df), as `statsmodels.stats.weightstats.CompareMeans(a, b)
//!   .tconfint_diff(usevar="unequal")`; the self-preference audit takes a = the judge's bias on
//!   responses of its own model family, b = on the others; the order audit a = criteria asked in
//!   the first half of the prompt, b = the second half.
//! - [`fitted_line`]: the same OLS fit as a line to draw — intercept, slope and the 95%
//!   confidence band of the fitted mean, ŷ(x) ± t(0.975, n − 2)·s·√(1/n + (x − x̄)²/Sxx) with s²
//!   the residual variance on n − 2 df (statsmodels' `get_prediction(...).conf_int()`), at evenly
//!   spaced x across the observed range.
//! - [`tertile_cuts`]: the 1/3 and 2/3 quantiles of the expert means (numpy's linear rule); band 1
//!   holds values ≤ the first cut, band 2 values ≤ the second, band 3 the rest.

use serde::Serialize;

use crate::bootstrap::quantile_sorted;
use crate::special::t_critical;

/// An estimate with its 95% interval, its sample size and the rule that produced it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct IntervalEstimate {
    /// The estimate (`None` when undefined).
    pub estimate: Option<f64>,
    /// 95% interval.
    pub ci95: [Option<f64>; 2],
    /// Observations used (for a difference: both groups together).
    pub n: usize,
    /// How it was computed, in words.
    pub rule: &'static str,
}

fn undefined(n: usize, rule: &'static str) -> IntervalEstimate {
    IntervalEstimate {
        estimate: None,
        ci95: [None, None],
        n,
        rule,
    }
}

fn finite(v: &[f64]) -> Vec<f64> {
    v.iter().copied().filter(|x| x.is_finite()).collect()
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let ss: f64 = v.iter().map(|x| (x - m) * (x - m)).sum();
    (
        m,
        if v.len() > 1 {
            ss / (n - 1.0)
        } else {
            f64::NAN
        },
    )
}

/// Mean with the one-sample t 95% interval.
pub fn mean_interval(d: &[f64]) -> IntervalEstimate {
    const RULE: &str = "mean of (judge - expert mean), one-sample t interval on n - 1 df";
    let d = finite(d);
    let n = d.len();
    if n == 0 {
        return undefined(0, RULE);
    }
    let (m, var) = mean_var(&d);
    let ci = if n >= 2 {
        let t = t_critical(0.05, n as f64 - 1.0);
        let se = (var / n as f64).sqrt();
        t.map_or([None, None], |t| [Some(m - t * se), Some(m + t * se)])
    } else {
        [None, None]
    };
    IntervalEstimate {
        estimate: Some(m),
        ci95: ci,
        n,
        rule: RULE,
    }
}

/// OLS slope of `y` on `x` with its t 95% interval (pairs with a non-finite value left out).
pub fn slope_interval(x: &[f64], y: &[f64], rule: &'static str) -> IntervalEstimate {
    let pairs: Vec<(f64, f64)> = x
        .iter()
        .zip(y)
        .map(|(&a, &b)| (a, b))
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .collect();
    let n = pairs.len();
    if n < 3 {
        return undefined(n, rule);
    }
    let nf = n as f64;
    let mx = pairs.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = pairs.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    // x that does not vary (up to rounding of its mean) has no slope.
    if sxx <= 64.0 * f64::EPSILON * nf * mx.abs().max(1.0).powi(2) {
        return undefined(n, rule);
    }
    let b = sxy / sxx;
    let a = my - b * mx;
    let sse: f64 = pairs
        .iter()
        .map(|p| {
            let r = p.1 - a - b * p.0;
            r * r
        })
        .sum();
    let se = (sse / (nf - 2.0) / sxx).sqrt();
    let ci =
        t_critical(0.05, nf - 2.0).map_or([None, None], |t| [Some(b - t * se), Some(b + t * se)]);
    IntervalEstimate {
        estimate: Some(b),
        ci95: ci,
        n,
        rule,
    }
}

/// One point of a fitted line's confidence band.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BandPoint {
    pub x: f64,
    /// The fitted mean a + b·x.
    pub fitted: f64,
    /// Its 95% confidence interval.
    pub lower: f64,
    pub upper: f64,
}

/// An OLS line of y on x with the 95% confidence band of its fitted mean.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FittedLine {
    pub intercept: f64,
    pub slope: f64,
    /// Pairs used (both values finite).
    pub n: usize,
    /// The band at `points` evenly spaced x from the smallest to the largest observed x.
    pub band: Vec<BandPoint>,
}

/// The OLS line of `y` on `x` (pairs with a non-finite value left out) with its confidence band
/// at `points` x values (at least 2); `None` on fewer than three pairs or an x that does not vary
/// (as [`slope_interval`]).
pub fn fitted_line(x: &[f64], y: &[f64], points: usize) -> Option<FittedLine> {
    let pairs: Vec<(f64, f64)> = x
        .iter()
        .zip(y)
        .map(|(&a, &b)| (a, b))
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .collect();
    let n = pairs.len();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let mx = pairs.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = pairs.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx <= 64.0 * f64::EPSILON * nf * mx.abs().max(1.0).powi(2) {
        return None;
    }
    let b = sxy / sxx;
    let a = my - b * mx;
    let sse: f64 = pairs
        .iter()
        .map(|p| {
            let r = p.1 - a - b * p.0;
            r * r
        })
        .sum();
    let s = (sse / (nf - 2.0)).sqrt();
    let t = t_critical(0.05, nf - 2.0)?;
    let lo = pairs.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let hi = pairs.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let points = points.max(2);
    let band = (0..points)
        .map(|i| {
            let x = lo + (hi - lo) * i as f64 / (points - 1) as f64;
            let fitted = a + b * x;
            let half = t * s * (1.0 / nf + (x - mx) * (x - mx) / sxx).sqrt();
            BandPoint {
                x,
                fitted,
                lower: fitted - half,
                upper: fitted + half,
            }
        })
        .collect();
    Some(FittedLine {
        intercept: a,
        slope: b,
        n,
        band,
    })
}

/// mean(a) − mean(b) with Welch's 95% interval.
pub fn difference_interval(a: &[f64], b: &[f64], rule: &'static str) -> IntervalEstimate {
    let (a, b) = (finite(a), finite(b));
    let n = a.len() + b.len();
    if a.is_empty() || b.is_empty() {
        return undefined(n, rule);
    }
    let (ma, va) = mean_var(&a);
    let (mb, vb) = mean_var(&b);
    let diff = ma - mb;
    let ci = if a.len() >= 2 && b.len() >= 2 {
        let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
        let se = (sa + sb).sqrt();
        let df = (sa + sb).powi(2)
            / (sa * sa / (a.len() as f64 - 1.0) + sb * sb / (b.len() as f64 - 1.0));
        match t_critical(0.05, df) {
            Some(t) if se.is_finite() && se > 0.0 => [Some(diff - t * se), Some(diff + t * se)],
            _ if se == 0.0 => [Some(diff), Some(diff)],
            _ => [None, None],
        }
    } else {
        [None, None]
    };
    IntervalEstimate {
        estimate: Some(diff),
        ci95: ci,
        n,
        rule,
    }
}

/// The 1/3 and 2/3 quantiles of `values` (numpy linear); `None` when there are none.
pub fn tertile_cuts(values: &[f64]) -> Option<[f64; 2]> {
    let mut v = finite(values);
    v.sort_by(f64::total_cmp);
    Some([
        quantile_sorted(&v, 1.0 / 3.0)?,
        quantile_sorted(&v, 2.0 / 3.0)?,
    ])
}

/// The band (0, 1, 2) of `value` given [`tertile_cuts`].
pub fn tertile_of(value: f64, cuts: [f64; 2]) -> usize {
    if value <= cuts[0] {
        0
    } else if value <= cuts[1] {
        1
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_line_has_its_slope() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [0.5, 1.0, 1.5, 2.0];
        let s = slope_interval(&x, &y, "test");
        assert_eq!(s.estimate, Some(0.5), "y = x / 2 has slope 1/2");
        assert_eq!(
            s.ci95,
            [Some(0.5), Some(0.5)],
            "no residual: a point interval"
        );
    }

    #[test]
    fn the_fitted_line_is_the_slope_audit_drawn() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let y = [0.1, 0.5, 0.4, 1.1, 0.9, 1.6];
        let line = fitted_line(&x, &y, 5).expect("six varying points fit a line");
        let slope = slope_interval(&x, &y, "test");
        assert!(
            (line.slope - slope.estimate.unwrap()).abs() < 1e-12,
            "the line drawn is the audit's slope"
        );
        assert_eq!(line.band.len(), 5, "one band point per x asked for");
        assert_eq!(
            (line.band[0].x, line.band[4].x),
            (1.0, 6.0),
            "the band spans the observed x"
        );
        // statsmodels: OLS(y, add_constant(x)).fit().get_prediction([[1, 3.5]]).conf_int() —
        // at x̄ the half-width is t(0.975, 4)·s/√n.
        let mid = &line.band[2];
        let sse: f64 = x
            .iter()
            .zip(&y)
            .map(|(a, b)| (b - line.intercept - line.slope * a).powi(2))
            .sum();
        let half = 2.776_445_105_197_793 * (sse / 4.0).sqrt() / 6f64.sqrt();
        assert!(
            (mid.x - 3.5).abs() < 1e-12 && (mid.upper - mid.fitted - half).abs() < 1e-8,
            "the band at the mean of x is t·s/√n wide on each side ({} vs {half})",
            mid.upper - mid.fitted
        );
        assert!(
            line.band[0].upper - line.band[0].fitted > half,
            "the band widens away from the mean of x"
        );
        assert_eq!(
            fitted_line(&[2.0; 5], &y[..5], 5),
            None,
            "an x that does not vary has no line"
        );
    }

    #[test]
    fn a_constant_length_has_no_slope() {
        let x = [4.2f64.ln(); 9];
        let y = [0.0, 1.0, 0.0, 2.0, 1.0, 0.0, 1.0, 1.0, 0.0];
        assert_eq!(
            slope_interval(&x, &y, "test").estimate,
            None,
            "responses of one length cannot show a length effect, whatever rounding leaves in Sxx"
        );
    }

    #[test]
    fn an_empty_group_has_no_difference() {
        let d = difference_interval(&[1.0, 2.0], &[], "test");
        assert_eq!(
            d.estimate, None,
            "no responses of the judge's family: undefined, not zero"
        );
    }

    #[test]
    fn tertiles_split_ranks_in_three() {
        let cuts = tertile_cuts(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]).expect("cuts");
        assert_eq!(tertile_of(1.0, cuts), 0, "the lowest is in the first band");
        assert_eq!(tertile_of(4.0, cuts), 1, "the median is in the middle band");
        assert_eq!(tertile_of(7.0, cuts), 2, "the highest is in the top band");
    }
}
