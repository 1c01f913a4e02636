//! Verbal labels for agreement coefficients and the precision of their intervals.
//!
//! - ICC: Koo & Li (2016): below 0.50 poor, 0.50 up to (not including) 0.75 moderate, 0.75 up to
//!   and including 0.90 good, above 0.90 excellent.
//! - κ and similar chance-corrected coefficients: Landis & Koch (1977): below 0 poor, 0–0.20
//!   slight, above 0.20 up to 0.40 fair, up to 0.60 moderate, up to 0.80 substantial, above 0.80
//!   almost perfect.
//! - When an interval is available the label is decided by it (Koo & Li recommend this): if both
//!   bounds fall in one band, that band; if they span bands, "between A and B" naming the bands of
//!   the lower and upper bound. [`IntervalLabel::conservative`] is the band of the lower bound.
//! - MentalAlign precision status from the CI width: good ≤ 0.355 < moderate ≤ 0.560 < poor.

use serde::Serialize;
use std::fmt;

/// Koo & Li (2016) ICC bands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IccBand {
    /// < 0.50
    Poor,
    /// 0.50 – < 0.75
    Moderate,
    /// 0.75 – 0.90
    Good,
    /// > 0.90
    Excellent,
}

/// Landis & Koch (1977) κ bands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KappaBand {
    /// < 0
    Poor,
    /// 0 – 0.20
    Slight,
    /// 0.21 – 0.40
    Fair,
    /// 0.41 – 0.60
    Moderate,
    /// 0.61 – 0.80
    Substantial,
    /// 0.81 – 1
    AlmostPerfect,
}

impl fmt::Display for IccBand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IccBand::Poor => "poor",
            IccBand::Moderate => "moderate",
            IccBand::Good => "good",
            IccBand::Excellent => "excellent",
        })
    }
}

impl fmt::Display for KappaBand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KappaBand::Poor => "poor",
            KappaBand::Slight => "slight",
            KappaBand::Fair => "fair",
            KappaBand::Moderate => "moderate",
            KappaBand::Substantial => "substantial",
            KappaBand::AlmostPerfect => "almost perfect",
        })
    }
}

/// Koo & Li band of an ICC value; `None` for NaN.
pub fn icc_band(icc: f64) -> Option<IccBand> {
    if icc.is_nan() {
        None
    } else if icc < 0.5 {
        Some(IccBand::Poor)
    } else if icc < 0.75 {
        Some(IccBand::Moderate)
    } else if icc <= 0.9 {
        Some(IccBand::Good)
    } else {
        Some(IccBand::Excellent)
    }
}

/// Landis & Koch band of a κ value; `None` for NaN.
pub fn kappa_band(kappa: f64) -> Option<KappaBand> {
    if kappa.is_nan() {
        None
    } else if kappa < 0.0 {
        Some(KappaBand::Poor)
    } else if kappa <= 0.2 {
        Some(KappaBand::Slight)
    } else if kappa <= 0.4 {
        Some(KappaBand::Fair)
    } else if kappa <= 0.6 {
        Some(KappaBand::Moderate)
    } else if kappa <= 0.8 {
        Some(KappaBand::Substantial)
    } else {
        Some(KappaBand::AlmostPerfect)
    }
}

/// A label decided by a confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IntervalLabel<B> {
    /// Band of the lower bound (the conservative reading).
    pub conservative: B,
    /// Band of the upper bound.
    pub upper: B,
}

impl<B: Copy + PartialEq> IntervalLabel<B> {
    /// True when both bounds fall in one band.
    pub fn is_single(&self) -> bool {
        self.conservative == self.upper
    }
}

impl<B: fmt::Display + Copy + PartialEq> fmt::Display for IntervalLabel<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_single() {
            write!(f, "{}", self.conservative)
        } else {
            write!(f, "between {} and {}", self.conservative, self.upper)
        }
    }
}

fn interval_label<B>(lo: f64, hi: f64, band: fn(f64) -> Option<B>) -> Option<IntervalLabel<B>> {
    if lo.is_nan() || hi.is_nan() || lo > hi {
        return None;
    }
    Some(IntervalLabel {
        conservative: band(lo)?,
        upper: band(hi)?,
    })
}

/// Koo & Li label decided by an ICC interval [lo, hi].
pub fn icc_interval_label(lo: f64, hi: f64) -> Option<IntervalLabel<IccBand>> {
    interval_label(lo, hi, icc_band)
}

/// Landis & Koch label decided by a κ interval [lo, hi].
pub fn kappa_interval_label(lo: f64, hi: f64) -> Option<IntervalLabel<KappaBand>> {
    interval_label(lo, hi, kappa_band)
}

/// MentalAlign precision status of an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PrecisionStatus {
    /// width ≤ 0.355
    Good,
    /// 0.355 < width ≤ 0.560
    Moderate,
    /// width > 0.560
    Poor,
}

/// Precision status from the CI width; `None` for a NaN or negative width.
pub fn precision_status(width: f64) -> Option<PrecisionStatus> {
    if width.is_nan() || width < 0.0 {
        None
    } else if width <= 0.355 {
        Some(PrecisionStatus::Good)
    } else if width <= 0.560 {
        Some(PrecisionStatus::Moderate)
    } else {
        Some(PrecisionStatus::Poor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn koo_li_band_edges() {
        assert_eq!(
            icc_band(0.4999),
            Some(IccBand::Poor),
            "just below 0.5 is poor"
        );
        assert_eq!(
            icc_band(0.5),
            Some(IccBand::Moderate),
            "0.5 opens the moderate band"
        );
        assert_eq!(
            icc_band(0.75),
            Some(IccBand::Good),
            "0.75 opens the good band"
        );
        assert_eq!(icc_band(0.9), Some(IccBand::Good), "0.9 is still good");
        assert_eq!(
            icc_band(0.9001),
            Some(IccBand::Excellent),
            "above 0.9 is excellent"
        );
    }

    #[test]
    fn interval_decides_label() {
        let l = icc_interval_label(0.6, 0.95).unwrap();
        assert_eq!(
            l.to_string(),
            "between moderate and excellent",
            "a CI spanning bands names both ends"
        );
        assert_eq!(
            l.conservative,
            IccBand::Moderate,
            "the conservative label is the lower bound's band"
        );
        assert_eq!(
            icc_interval_label(0.76, 0.8).unwrap().to_string(),
            "good",
            "a CI inside one band gets that band"
        );
        assert!(
            icc_interval_label(0.9, 0.1).is_none(),
            "an inverted interval has no label"
        );
    }

    #[test]
    fn landis_koch_and_precision() {
        assert_eq!(
            kappa_band(0.43),
            Some(KappaBand::Moderate),
            "Fleiss' 0.43 is moderate"
        );
        assert_eq!(
            kappa_band(-0.1),
            Some(KappaBand::Poor),
            "below chance is poor"
        );
        assert_eq!(
            precision_status(0.355),
            Some(PrecisionStatus::Good),
            "0.355 is still good"
        );
        assert_eq!(
            precision_status(0.56),
            Some(PrecisionStatus::Moderate),
            "0.560 is still moderate"
        );
        assert_eq!(
            precision_status(0.561),
            Some(PrecisionStatus::Poor),
            "wider than 0.560 is poor"
        );
    }
}
