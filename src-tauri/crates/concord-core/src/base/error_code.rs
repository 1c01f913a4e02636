//! The stable, machine-readable codes of the errors the window can receive (`{code, message}`):
//! one enum, exported to the UI's generated bindings, so a screen can match on a code the
//! compiler knows. Each error type's `code()` says which one it is.

use serde::{Deserialize, Serialize};

/// What went wrong, for the UI and scripts (serialised in snake_case, e.g. `not_a_study`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    AlreadyEncrypted,
    AlreadyExists,
    /// Answers an assignment would draw have no text (experts would rate blank items).
    AnswersWithoutText,
    Assignment,
    /// The study already has an assignment, and replacing it was not asked for.
    AssignmentExists,
    BadGap,
    BadRule,
    CalibrationPending,
    Converting,
    Damaged,
    Database,
    Demo,
    EmptyAdjudicator,
    EmptyExplanation,
    EmptyOverride,
    EmptyReason,
    Export,
    FolderMissing,
    ForeignSchema,
    InUse,
    Incomplete,
    Internal,
    Invalid,
    Io,
    JudgeBatch,
    JudgeBusy,
    JudgeClient,
    JudgeEndpoint,
    JudgeKey,
    JudgeKeySource,
    JudgeRubric,
    JudgeRuntime,
    JudgeSettings,
    JudgeTemplate,
    LeadPassphrase,
    Keyring,
    MissingSource,
    NewerSchema,
    NoLocation,
    NoRaterSession,
    NoStudy,
    NoSuchCriterion,
    NoSuchItem,
    NotAStudy,
    NotAnExpert,
    NotEncrypted,
    NotFound,
    NotSqlite,
    NothingRated,
    OffScale,
    Package,
    PassphraseNeeded,
    PassphraseRefused,
    Path,
    Plan,
    ProfilesLocked,
    RaterSession,
    ReadOnly,
    Rubric,
    StoredRule,
    StudyMissing,
    Truncated,
    UnexpectedSchemaObject,
    UnknownCriterion,
    UnknownExpert,
    UnknownItem,
    Unreadable,
    AlreadyResolved,
    NoPassphrase,
    NothingToSign,
    PhiUnreviewed,
    SignedRating,
    WeakPassphrase,
    WrongPassphrase,
    WebInvitation,
    WebLocked,
    WebLogin,
    WebSession,
    /// An evidence span refused (outside the reply, an unknown code or severity, not this expert's).
    Span,
}

impl ErrorCode {
    /// The code as it is serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::AlreadyEncrypted => "already_encrypted",
            ErrorCode::AlreadyExists => "already_exists",
            ErrorCode::AnswersWithoutText => "answers_without_text",
            ErrorCode::Assignment => "assignment",
            ErrorCode::AssignmentExists => "assignment_exists",
            ErrorCode::BadGap => "bad_gap",
            ErrorCode::BadRule => "bad_rule",
            ErrorCode::CalibrationPending => "calibration_pending",
            ErrorCode::Converting => "converting",
            ErrorCode::Damaged => "damaged",
            ErrorCode::Database => "database",
            ErrorCode::Demo => "demo",
            ErrorCode::EmptyAdjudicator => "empty_adjudicator",
            ErrorCode::EmptyExplanation => "empty_explanation",
            ErrorCode::EmptyOverride => "empty_override",
            ErrorCode::EmptyReason => "empty_reason",
            ErrorCode::Export => "export",
            ErrorCode::FolderMissing => "folder_missing",
            ErrorCode::ForeignSchema => "foreign_schema",
            ErrorCode::InUse => "in_use",
            ErrorCode::Incomplete => "incomplete",
            ErrorCode::Internal => "internal",
            ErrorCode::Invalid => "invalid",
            ErrorCode::Io => "io",
            ErrorCode::JudgeBatch => "judge_batch",
            ErrorCode::JudgeBusy => "judge_busy",
            ErrorCode::JudgeClient => "judge_client",
            ErrorCode::JudgeEndpoint => "judge_endpoint",
            ErrorCode::JudgeKey => "judge_key",
            ErrorCode::JudgeKeySource => "judge_key_source",
            ErrorCode::JudgeRubric => "judge_rubric",
            ErrorCode::JudgeRuntime => "judge_runtime",
            ErrorCode::JudgeSettings => "judge_settings",
            ErrorCode::JudgeTemplate => "judge_template",
            ErrorCode::LeadPassphrase => "lead_passphrase",
            ErrorCode::Keyring => "keyring",
            ErrorCode::MissingSource => "missing_source",
            ErrorCode::NewerSchema => "newer_schema",
            ErrorCode::NoLocation => "no_location",
            ErrorCode::NoRaterSession => "no_rater_session",
            ErrorCode::NoStudy => "no_study",
            ErrorCode::NoSuchCriterion => "no_such_criterion",
            ErrorCode::NoSuchItem => "no_such_item",
            ErrorCode::NotAStudy => "not_a_study",
            ErrorCode::NotAnExpert => "not_an_expert",
            ErrorCode::NotEncrypted => "not_encrypted",
            ErrorCode::NotFound => "not_found",
            ErrorCode::NotSqlite => "not_sqlite",
            ErrorCode::NothingRated => "nothing_rated",
            ErrorCode::OffScale => "off_scale",
            ErrorCode::Package => "package",
            ErrorCode::PassphraseNeeded => "passphrase_needed",
            ErrorCode::PassphraseRefused => "passphrase_refused",
            ErrorCode::Path => "path",
            ErrorCode::Plan => "plan",
            ErrorCode::ProfilesLocked => "profiles_locked",
            ErrorCode::RaterSession => "rater_session",
            ErrorCode::ReadOnly => "read_only",
            ErrorCode::Rubric => "rubric",
            ErrorCode::StoredRule => "stored_rule",
            ErrorCode::StudyMissing => "study_missing",
            ErrorCode::Truncated => "truncated",
            ErrorCode::UnexpectedSchemaObject => "unexpected_schema_object",
            ErrorCode::UnknownCriterion => "unknown_criterion",
            ErrorCode::UnknownExpert => "unknown_expert",
            ErrorCode::UnknownItem => "unknown_item",
            ErrorCode::Unreadable => "unreadable",
            ErrorCode::AlreadyResolved => "already_resolved",
            ErrorCode::NoPassphrase => "no_passphrase",
            ErrorCode::NothingToSign => "nothing_to_sign",
            ErrorCode::PhiUnreviewed => "phi_unreviewed",
            ErrorCode::SignedRating => "signed_rating",
            ErrorCode::WeakPassphrase => "weak_passphrase",
            ErrorCode::WrongPassphrase => "wrong_passphrase",
            ErrorCode::WebInvitation => "web_invitation",
            ErrorCode::WebLocked => "web_locked",
            ErrorCode::WebLogin => "web_login",
            ErrorCode::WebSession => "web_session",
            ErrorCode::Span => "span",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Codes compare with their serialised text, so a test can say `assert_eq!(e.code(), "io")`.
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// An error that says which [`ErrorCode`] it is: every error a job of the application layer
/// returns implements it, so a front end maps any of them to `{code, message}` in one place.
pub trait Coded: std::error::Error {
    fn code(&self) -> ErrorCode;
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn codes_serialise_as_their_text() {
        for code in [ErrorCode::NotAStudy, ErrorCode::JudgeKey, ErrorCode::Io] {
            assert_eq!(
                serde_json::to_string(&code).expect("a code serialises"),
                format!("\"{}\"", code.as_str()),
                "the JSON the window receives is the code's text"
            );
        }
    }
}
