//! TypeScript declarations of every type that crosses IPC, generated from the Rust types with ts-rs
//! into one committed file (`ui/src/lib/bindings.ts`). A test regenerates them and fails when the
//! committed file drifts; `CONCORD_BLESS=1 cargo test bindings` rewrites it.

use ts_rs::TS;

/// Path of the committed bindings, relative to the workspace root.
pub const BINDINGS_PATH: &str = "ui/src/lib/bindings.ts";

macro_rules! declarations {
    ($($t:ty),* $(,)?) => {{
        let mut out = String::from(
            "// Generated from the Rust IPC types by ts-rs. Do not edit by hand:\n\
             // run `CONCORD_BLESS=1 cargo test bindings` after changing a Rust type.\n\n",
        );
        $(
            out.push_str("export ");
            out.push_str(&<$t as TS>::decl());
            out.push_str("\n\n");
        )*
        // serde_json sends i64/u64 as JSON numbers, and every integer Concord sends (ids, counts,
        // scores, epoch milliseconds) is far below 2^53, so they are `number`s in the UI.
        out.trim_end().replace("bigint", "number") + "\n"
    }};
}

/// The full text of the bindings file.
pub fn typescript() -> String {
    use concord_core::agreement::*;
    use concord_core::agreement_table::*;
    use concord_core::queue::*;
    use concord_core::rubric::*;
    use concord_core::store::*;
    declarations!(
        concord_core::error_code::ErrorCode,
        crate::error::IpcError,
        crate::commands::study::StudyStatus,
        crate::commands::security::StudySecurity,
        crate::commands::security::SecurityOutcome,
        StudyOverview,
        RubricSummary,
        CriterionSummary,
        SourceCount,
        RaterSummary,
        RaterKind,
        RatingOutcome,
        Scale,
        Anchor,
        Group,
        Criterion,
        Total,
        Rubric,
        RaterProfile,
        RaterProfiles,
        QueueSummary,
        ItemCriterion,
        RatingItem,
        ItemProgress,
        concord_core::signoff::SignoffState,
        concord_core::signoff::SignatureStatus,
        SignatureRecord,
        concord_core::usecase::ImportFormat,
        concord_core::usecase::ImportRequest,
        concord_core::usecase::ImportOutcome,
        concord_core::import::ImportReport,
        concord_core::import::ImportOptions,
        concord_core::import::OutOfScale,
        concord_core::import::ReplyParsing,
        concord_core::import::FileReport,
        concord_core::import::FileStatus,
        concord_core::import::QualityReport,
        concord_core::import::QualityItem,
        concord_core::import::QualityKind,
        concord_core::import::Location,
        concord_core::import::Issue,
        concord_core::import::Severity,
        concord_core::usecase::SheetOutcome,
        concord_core::export::SheetImportReport,
        concord_core::export::CellError,
        concord_core::usecase::RatingsFormat,
        concord_core::usecase::WrittenFile,
        concord_core::usecase::PackageWritten,
        concord_core::package::PackageSummary,
        concord_core::package::MergeReport,
        concord_core::package::MergeConflict,
        concord_core::package::Occasion,
        concord_core::assignment::AssignmentOptions,
        concord_core::assignment::AssignmentSummary,
        concord_core::assignment::AssignmentTable,
        concord_core::assignment::ExpertProgress,
        concord_core::assignment::ExpertLoad,
        concord_core::assignment::StratumCount,
        concord_core::assignment::ExpertAdded,
        concord_core::assignment::RubricAdded,
        Level,
        Comparison,
        Precision,
        CiMethod,
        AgreementOptions,
        RaterRef,
        BlandAltman,
        IccFormValue,
        TargetPoint,
        AgreementCell,
        AgreementReport,
        BinaryCell,
        TotalsCell,
        Rate,
        IccChoice,
        CiChoice,
        TableView,
        Verdict,
        TableCell,
        TableRow,
        TableColumn,
        AgreementTable,
        TableFormat,
        MoreTargets,
        concord_core::judge::ProviderKind,
        concord_core::judge::ResponseSelection,
        concord_core::judge::Prices,
        concord_core::judge::ReplyFormat,
        concord_core::judge::PromptTemplate,
        concord_core::judge::RunSettings,
        concord_core::judge::CostEstimate,
        concord_core::judge::RunPreview,
        concord_core::judge::RunStatus,
        concord_core::judge::RunPlan,
        concord_core::judge::CallFailure,
        concord_core::judge::Progress,
        concord_core::judge::RunReport,
        concord_core::judge::KeyChoice,
        concord_core::judge::RunPhase,
        crate::judge_runs::JudgeStart,
        crate::judge_runs::JudgeStarted,
        crate::judge_runs::JudgeActivity,
        crate::judge_runs::JudgeFinished,
        concord_core::adjudication::LikertRule,
        concord_core::adjudication::DiscrepancyRule,
        concord_core::adjudication::DiscrepancyReason,
        concord_core::adjudication::ExpertOpinion,
        concord_core::adjudication::DecisionView,
        concord_core::adjudication::DiscrepantPair,
        concord_core::adjudication::AdjudicationStatus,
        concord_core::adjudication::ReviewPair,
        concord_core::adjudication::AdjudicationReview,
        concord_core::adjudication::Ruling,
        concord_core::adjudication::Resolution,
        concord_core::adjudication::ConsensusAgreement,
        concord_core::rater_quality::SeverityEstimate,
        concord_core::rater_quality::DriftDirection,
        concord_core::rater_quality::SessionDrift,
        concord_core::rater_quality::Retest,
        concord_core::rater_quality::StraightLines,
        concord_core::rater_quality::CriterionQuality,
        concord_core::rater_quality::SeverityFlag,
        concord_core::rater_quality::TimeSummary,
        concord_core::rater_quality::QualityFlag,
        concord_core::rater_quality::ExpertQuality,
        concord_core::rater_quality::RaterQualityReport,
        concord_core::calibration::PassRule,
        concord_core::calibration::CalibrationState,
        concord_core::calibration::CalibrationStatus,
        concord_core::calibration::CalibrationCriterion,
        concord_core::calibration::CalibrationItem,
        crate::events::RatingsChanged,
    )
}
