//! Special functions behind the p-values and confidence intervals: the regularised incomplete beta
//! function (both tails, each computed directly so that small tail areas keep their relative
//! precision), the F and Student t distributions built on it, and their quantiles found by a
//! bracketed Newton iteration. statrs supplies `ln_gamma` and the normal quantile; the continued
//! fraction is evaluated here because statrs caps it at 140 terms, which is too few for the
//! tens of thousands of degrees of freedom that a 350,000-rating ICC produces.

use statrs::distribution::{ContinuousCDF, Normal};
use statrs::function::gamma::ln_gamma;

/// Largest number of continued-fraction terms; convergence needs roughly the square root of the
/// larger shape parameter, so this covers shapes far beyond any rating study.
const MAX_TERMS: usize = 200_000;

/// Remainder of Stirling's series, ln Γ(z) − [(z − ½) ln z − z + ½ ln 2π], for z ≥ 10.
fn stirling_remainder(z: f64) -> f64 {
    let z2 = z * z;
    (1.0 / 12.0
        - (1.0 / 360.0 - (1.0 / 1260.0 - (1.0 / 1680.0 - 1.0 / (1188.0 * z2)) / z2) / z2) / z2)
        / z
}

/// ln of x^a (1-x)^b / B(a, b), the power terms shared by both tails and the density.
/// For large shapes the lnΓ terms nearly cancel, so Stirling's form is used there: each
/// a·ln(x(a+b)/a) is taken as a·ln_1p(·) of a small argument, keeping full relative precision.
fn ln_power_terms(a: f64, b: f64, x: f64, one_minus_x: f64) -> f64 {
    if a >= 10.0 && b >= 10.0 {
        let s = a + b;
        let u = (x * b - one_minus_x * a) / a;
        let w = (one_minus_x * a - x * b) / b;
        a * u.ln_1p()
            + b * w.ln_1p()
            + 0.5 * (a * b / (s * 2.0 * std::f64::consts::PI)).ln()
            + stirling_remainder(s)
            - stirling_remainder(a)
            - stirling_remainder(b)
    } else {
        ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * one_minus_x.ln()
    }
}

/// Lentz evaluation of the continued fraction for I_x(a, b) (Numerical Recipes form); converges
/// fast when x < (a + 1) / (a + b + 2).
fn beta_continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    let tiny = 1e-300;
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=MAX_TERMS {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = 1.0 + aa / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = 1.0 + aa / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() <= 1e-16 {
            break;
        }
    }
    h
}

/// Both tails of the regularised incomplete beta function, `(I_x(a,b), 1 - I_x(a,b))`, where the
/// caller passes `x` and `1 - x` separately so that neither is formed by cancellation.
/// Returns `None` for shapes that are not positive and finite or `x` outside [0, 1].
pub fn beta_tails(a: f64, b: f64, x: f64, one_minus_x: f64) -> Option<(f64, f64)> {
    if !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()) {
        return None;
    }
    if !(0.0..=1.0).contains(&x) || !(0.0..=1.0).contains(&one_minus_x) {
        return None;
    }
    if x == 0.0 {
        return Some((0.0, 1.0));
    }
    if one_minus_x == 0.0 {
        return Some((1.0, 0.0));
    }
    if x < (a + 1.0) / (a + b + 2.0) {
        let lower =
            (ln_power_terms(a, b, x, one_minus_x)).exp() * beta_continued_fraction(a, b, x) / a;
        let lower = lower.clamp(0.0, 1.0);
        Some((lower, 1.0 - lower))
    } else {
        let upper = (ln_power_terms(b, a, one_minus_x, x)).exp()
            * beta_continued_fraction(b, a, one_minus_x)
            / b;
        let upper = upper.clamp(0.0, 1.0);
        Some((1.0 - upper, upper))
    }
}

/// Density of the Beta(a, b) distribution at `x`, from the same pieces as [`beta_tails`].
fn beta_density(a: f64, b: f64, x: f64, one_minus_x: f64) -> f64 {
    if x <= 0.0 || one_minus_x <= 0.0 {
        return 0.0;
    }
    (ln_power_terms(a, b, x, one_minus_x) - x.ln() - one_minus_x.ln()).exp()
}

/// Upper-tail probability P(F > f) of Fisher's F with `d1`, `d2` degrees of freedom (real-valued).
/// `f = +inf` gives 0. `None` when the degrees of freedom are not positive or `f` is NaN.
pub fn f_sf(f: f64, d1: f64, d2: f64) -> Option<f64> {
    if f.is_nan() || !(d1 > 0.0 && d2 > 0.0) {
        return None;
    }
    if f <= 0.0 {
        return Some(1.0);
    }
    if f.is_infinite() {
        return Some(0.0);
    }
    // P(F > f) = I_y(d2/2, d1/2) with y = d2 / (d2 + d1 f).
    let denom = d2 + d1 * f;
    let y = d2 / denom;
    let one_minus_y = d1 * f / denom;
    beta_tails(d2 / 2.0, d1 / 2.0, y, one_minus_y).map(|(lower, _)| lower)
}

/// Initial guess for the Beta(a, b) quantile at lower-tail probability `p`
/// (Abramowitz & Stegun 26.5.22 for shapes above 1, the mean otherwise).
fn beta_quantile_guess(a: f64, b: f64, p: f64) -> f64 {
    if a > 1.0 && b > 1.0 {
        let normal = Normal::new(0.0, 1.0).expect("standard normal parameters are valid");
        // A&S quote the upper-tail normal deviate.
        let y = -normal.inverse_cdf(p);
        let lambda = (y * y - 3.0) / 6.0;
        let h = 2.0 / (1.0 / (2.0 * a - 1.0) + 1.0 / (2.0 * b - 1.0));
        let w = y * (h + lambda).sqrt() / h
            - (1.0 / (2.0 * b - 1.0) - 1.0 / (2.0 * a - 1.0))
                * (lambda + 5.0 / 6.0 - 2.0 / (3.0 * h));
        let x = a / (a + b * (2.0 * w).exp());
        if x.is_finite() && x > 0.0 && x < 1.0 {
            return x;
        }
    }
    a / (a + b)
}

/// Quantile of the Beta(a, b) distribution at lower-tail probability `p`, returned as `(x, 1 - x)`
/// so callers can avoid cancellation. Bracketed Newton iteration with bisection as a safeguard;
/// accurate to a few ulps of the incomplete beta function.
pub fn beta_quantile(a: f64, b: f64, p: f64) -> Option<(f64, f64)> {
    let valid_shapes = a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite();
    if !valid_shapes || !(0.0..=1.0).contains(&p) {
        return None;
    }
    if p == 0.0 {
        return Some((0.0, 1.0));
    }
    if p == 1.0 {
        return Some((1.0, 0.0));
    }
    // Work in the tail where p is small so that the root is found with relative precision.
    let (a, b, p, swapped) = if p > 0.5 {
        (b, a, 1.0 - p, true)
    } else {
        (a, b, p, false)
    };
    let mut lo = 0.0_f64;
    let mut hi = 1.0_f64;
    let mut x = beta_quantile_guess(a, b, p);
    for _ in 0..300 {
        let (lower, _) = beta_tails(a, b, x, 1.0 - x)?;
        let g = lower - p;
        if g == 0.0 {
            break;
        }
        if g < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let density = beta_density(a, b, x, 1.0 - x);
        let mut next = if density > 0.0 && density.is_finite() {
            x - g / density
        } else {
            f64::NAN
        };
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        let step = (next - x).abs();
        x = next;
        if step <= 4.0 * f64::EPSILON * x.max(f64::MIN_POSITIVE) || hi - lo <= f64::EPSILON * hi {
            break;
        }
    }
    if swapped {
        Some((1.0 - x, x))
    } else {
        Some((x, 1.0 - x))
    }
}

/// Quantile of Fisher's F(`d1`, `d2`) at lower-tail probability `p` (real-valued degrees of freedom,
/// as scipy's `f.ppf`). `None` when the degrees of freedom are not positive and finite.
pub fn f_quantile(p: f64, d1: f64, d2: f64) -> Option<f64> {
    if !(0.0..=1.0).contains(&p) {
        return None;
    }
    if p == 1.0 {
        return Some(f64::INFINITY);
    }
    // X = d1 F / (d1 F + d2) ~ Beta(d1/2, d2/2); F = d2 X / (d1 (1 - X)).
    let (x, one_minus_x) = beta_quantile(d1 / 2.0, d2 / 2.0, p)?;
    if one_minus_x == 0.0 {
        return Some(f64::INFINITY);
    }
    Some(d2 * x / (d1 * one_minus_x))
}

/// Two-sided Student t critical value: the quantile at `1 - alpha/2` with `df` degrees of freedom.
pub fn t_critical(alpha: f64, df: f64) -> Option<f64> {
    // t^2 with df degrees of freedom is F(1, df).
    f_quantile(1.0 - alpha, 1.0, df).map(f64::sqrt)
}

/// Two-sided standard normal critical value z at `1 - alpha/2` (1.959963984540054 for alpha = 0.05).
pub fn z_critical(alpha: f64) -> f64 {
    let normal = Normal::new(0.0, 1.0).expect("standard normal parameters are valid");
    normal.inverse_cdf(1.0 - alpha / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f_quantile_matches_known_table_values() {
        // Reference values from standard F tables (scipy.stats.f.ppf, 15 digits).
        let q = f_quantile(0.975, 5.0, 18.0).unwrap();
        assert!(
            (q - 3.381_967_805_875_243).abs() < 1e-9,
            "F(5,18) 97.5% point from tables, got {q}"
        );
        let q = f_quantile(0.95, 1.0, 1.0).unwrap();
        assert!(
            (q - 161.447_638_797_588_27).abs() < 1e-6,
            "F(1,1) 95% point is 161.4476, got {q}"
        );
    }

    #[test]
    fn f_sf_inverts_f_quantile() {
        for &(d1, d2) in &[
            (1.0, 1.0),
            (5.0, 18.0),
            (9999.0, 40000.0),
            (3.7, 12.2),
            (99_999.0, 99_999.0),
        ] {
            for &p in &[0.025, 0.5, 0.975] {
                let q = f_quantile(p, d1, d2).unwrap();
                let back = 1.0 - f_sf(q, d1, d2).unwrap();
                assert!(
                    (back - p).abs() < 1e-12,
                    "cdf(quantile(p)) must return p for F({d1},{d2}), p={p}: {back}"
                );
            }
        }
    }

    #[test]
    fn t_critical_is_196_for_large_df() {
        let t = t_critical(0.05, 1e7).unwrap();
        assert!(
            (t - 1.959_964).abs() < 1e-5,
            "t with huge df must tend to the normal z, got {t}"
        );
        let t = t_critical(0.05, 10.0).unwrap();
        assert!(
            (t - 2.228_138_851_964_938_5).abs() < 1e-9,
            "t(10) 97.5% point is 2.228139, got {t}"
        );
    }

    #[test]
    fn invalid_arguments_are_undefined_not_panics() {
        assert!(
            f_sf(1.0, 0.0, 3.0).is_none(),
            "zero numerator df has no F distribution"
        );
        assert!(
            f_quantile(0.5, -1.0, 3.0).is_none(),
            "negative df has no F distribution"
        );
        assert!(
            f_sf(f64::NAN, 2.0, 3.0).is_none(),
            "NaN statistic has no p-value"
        );
        assert_eq!(
            f_sf(f64::INFINITY, 2.0, 3.0),
            Some(0.0),
            "an infinite F has p = 0"
        );
    }
}
