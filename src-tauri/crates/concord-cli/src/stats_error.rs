//! Why a `concord stats` command failed, and the one way its JSON is printed: shared by the
//! statistics command (`stats_cmd`) and each reviewer's-statistics command beside it, so none of
//! them imports another.

use concord_core::files::score_table::ScoreTableError;
use concord_stats::alttest::AltTestError;
use concord_stats::categorical::CategoricalError;
use concord_stats::icc::IccError;
use concord_stats::paired::PairedError;
use concord_stats::reml::RemlError;
use serde::Serialize;
use thiserror::Error;

/// Why a statistics command failed.
#[derive(Debug, Error)]
pub enum StatsError {
    /// The CSV could not be read or converted.
    #[error(transparent)]
    Table(#[from] ScoreTableError),
    /// The ICC input was malformed.
    #[error("ICC: {0}")]
    Icc(#[from] IccError),
    /// The paired input was malformed.
    #[error("comparison: {0}")]
    Paired(#[from] PairedError),
    /// The REML fit could not use the data.
    #[error("REML ICC: {0}")]
    Reml(#[from] RemlError),
    /// The alt-test could not use the data.
    #[error("alt-test: {0}")]
    AltTest(#[from] AltTestError),
    /// The judge named is not a rater in the file.
    #[error("{file}: no rater named `{judge}` (the raters are: {available})")]
    UnknownJudge {
        /// File name.
        file: String,
        /// The name given.
        judge: String,
        /// The raters, comma-separated.
        available: String,
    },
    /// An option is out of range.
    #[error("{0}")]
    BadOption(String),
    /// The categorical input was malformed.
    #[error("agreement: {0}")]
    Categorical(#[from] CategoricalError),
    /// JSON encoding failed.
    #[error("cannot encode JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The corrected prevalence is undefined for these data.
    #[error("{file}: corrected prevalence: {source}")]
    Prevalence {
        /// File name.
        file: String,
        /// Why.
        source: concord_stats::prevalence::PrevalenceError,
    },
    /// The power analysis cannot use this pilot.
    #[error("{file}: power analysis: {source}")]
    Power {
        /// File name.
        file: String,
        /// Why.
        source: concord_stats::power::PowerError,
    },
    /// The G-study cannot use these scores.
    #[error("{file}: G-study: {source}")]
    GStudy {
        /// File name.
        file: String,
        /// Why.
        source: concord_stats::gtheory::GStudyError,
    },
    /// The consensus model cannot use these labels.
    #[error("{file}: consensus: {source}")]
    Consensus {
        /// File name.
        file: String,
        /// Why.
        source: concord_stats::dawid_skene::DawidSkeneError,
    },
}

/// One JSON document, pretty-printed, with a final line end.
pub(crate) fn to_json<T: Serialize>(value: &T) -> Result<String, StatsError> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    Ok(s)
}
