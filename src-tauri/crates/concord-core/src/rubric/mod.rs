//! **Row 2** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): the rubric and value model.
//! Imports only `base` and `files`; never the store or anything above.
//!
//! Rubrics: the schemes experts and judges rate with. A rubric file (TOML or JSON) declares criteria
//! with an id, labels and descriptions in several languages, a scale (Likert with per-level anchors,
//! or binary), an optional group (such as CSS/ARS) and the keys under which judges and released
//! files name the criterion. Both built-in rubrics ship in this format and are loaded through the
//! same parser as a lab's custom rubric, so a custom file gets exactly the same validation.

pub mod quote;
pub mod reply;

use crate::base::text::quoted;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Text in several languages, keyed by BCP-47-like codes (`en`, `zh`). English is required.
pub type LocalText = BTreeMap<String, String>;

/// Pick the text for `lang`, falling back to English, then to any language present.
pub fn localized<'a>(text: &'a LocalText, lang: &str) -> &'a str {
    text.get(lang)
        .or_else(|| text.get("en"))
        .or_else(|| text.values().next())
        .map(String::as_str)
        .unwrap_or("")
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Scale {
    /// Integer levels from `min` to `max` inclusive.
    Likert { min: i64, max: i64 },
    /// 1 = present, 0 = absent.
    Binary,
    /// Which of two answers is better: 1 = the left one, 2 = the right one, 0 = a tie (only when
    /// `ties` allows it). A rubric of preference criteria is a *pairwise* rubric: its criteria
    /// are asked of pairs of answers to one conversation, never of a single answer.
    Preference {
        #[serde(default = "yes")]
        ties: bool,
    },
}

fn yes() -> bool {
    true
}

/// The value of a preference criterion naming the left answer of a pair.
pub const PREFER_LEFT: i64 = 1;
/// The value of a preference criterion naming the right answer of a pair.
pub const PREFER_RIGHT: i64 = 2;
/// The value of a preference criterion naming neither (a tie).
pub const PREFER_TIE: i64 = 0;

impl Scale {
    pub fn min(&self) -> i64 {
        match self {
            Scale::Likert { min, .. } => *min,
            Scale::Binary => 0,
            Scale::Preference { ties: true } => PREFER_TIE,
            Scale::Preference { ties: false } => PREFER_LEFT,
        }
    }
    pub fn max(&self) -> i64 {
        match self {
            Scale::Likert { max, .. } => *max,
            Scale::Binary => 1,
            Scale::Preference { .. } => PREFER_RIGHT,
        }
    }
    pub fn contains(&self, value: i64) -> bool {
        (self.min()..=self.max()).contains(&value)
    }
    /// Every level of the scale, lowest first (the declared category set for agreement statistics).
    pub fn levels(&self) -> Vec<i64> {
        (self.min()..=self.max()).collect()
    }
    pub fn kind_name(&self) -> &'static str {
        match self {
            Scale::Likert { .. } => "likert",
            Scale::Binary => "binary",
            Scale::Preference { .. } => "preference",
        }
    }
    pub fn is_preference(&self) -> bool {
        matches!(self, Scale::Preference { .. })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Anchor {
    pub value: i64,
    pub label: LocalText,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Group {
    pub id: String,
    pub label: LocalText,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Criterion {
    pub id: String,
    /// Names used for this criterion in released files and judge output; the first is canonical.
    #[serde(default)]
    pub keys: Vec<String>,
    #[serde(default)]
    pub group: Option<String>,
    pub label: LocalText,
    #[serde(default)]
    pub description: LocalText,
    pub scale: Scale,
    #[serde(default)]
    pub anchors: Vec<Anchor>,
}

impl Criterion {
    /// Whether `name` (from a file header or a judge's output) denotes this criterion.
    /// Comparison ignores surrounding whitespace and ASCII case.
    pub fn answers_to(&self, name: &str) -> bool {
        let name = name.trim();
        self.id.eq_ignore_ascii_case(name)
            || self
                .keys
                .iter()
                .any(|k| k.trim().eq_ignore_ascii_case(name))
            || self
                .label
                .values()
                .any(|l| l.trim().eq_ignore_ascii_case(name))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Total {
    pub label: LocalText,
    #[serde(default)]
    pub keys: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Rubric {
    pub id: String,
    #[serde(default = "one")]
    pub version: i64,
    pub name: LocalText,
    #[serde(default)]
    pub description: LocalText,
    #[serde(default)]
    pub groups: Vec<Group>,
    /// A declared sum of all criteria (PsyCrisis' 总分), checked against the parts on import.
    #[serde(default)]
    pub total: Option<Total>,
    /// What one item of the rubric is: a reply (the default) or a whole conversation.
    #[serde(default)]
    pub scope: Scope,
    pub criteria: Vec<Criterion>,
    /// The codes a rater may mark spans of a reply with (`[[codes]]`); none when the rubric
    /// declares none (a rubric file written before spans existed reads and writes as before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub codes: Vec<Code>,
}

/// A span code: what a marked part of a reply is evidence of ("unsafe advice", "referral
/// offered"). `key` is how files, judges and exports name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Code {
    pub key: String,
    pub label: LocalText,
    #[serde(default)]
    pub description: LocalText,
    /// Severity levels a span of this code may carry, mildest first; none: spans carry no severity.
    /// Left out of the JSON when empty (the rubric's stored form), so optional in the bindings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub severity: Vec<String>,
}

impl Code {
    /// The severity level `name` names (trimmed, ASCII case ignored), in its declared spelling.
    pub fn severity_level(&self, name: &str) -> Option<&str> {
        let name = name.trim();
        self.severity
            .iter()
            .find(|l| l.eq_ignore_ascii_case(name))
            .map(String::as_str)
    }
}

/// What a rubric rates: one reply in the light of the turns before it, or a whole conversation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    #[default]
    Reply,
    Session,
}

impl Scope {
    pub fn is_reply(&self) -> bool {
        *self == Scope::Reply
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Reply => "reply",
            Scope::Session => "session",
        }
    }
}

fn one() -> i64 {
    1
}

#[derive(Debug, thiserror::Error)]
pub enum RubricError {
    #[error("{file}: not valid TOML: {message}")]
    Toml { file: String, message: String },
    #[error("{file}: not valid JSON: {message}")]
    Json { file: String, message: String },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

/// The largest rubric file Concord reads (1 MiB; the built-in ones are a few kilobytes).
pub const MAX_RUBRIC_BYTES: usize = 1 << 20;

/// The text of a rubric file; a file larger than [`MAX_RUBRIC_BYTES`] is refused before it is read.
pub fn read_text(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let too_big = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "the file is larger than {} KB, so it is not a rubric",
                MAX_RUBRIC_BYTES / 1024
            ),
        )
    };
    if file.metadata()?.len() > MAX_RUBRIC_BYTES as u64 {
        return Err(too_big());
    }
    let mut text = String::new();
    file.take(MAX_RUBRIC_BYTES as u64 + 1)
        .read_to_string(&mut text)?;
    if text.len() > MAX_RUBRIC_BYTES {
        return Err(too_big());
    }
    Ok(text)
}

/// The file formats a rubric can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RubricFormat {
    Toml,
    Json,
}

impl Rubric {
    /// Parse and validate a rubric file. `file` names the source in error messages.
    pub fn parse(text: &str, format: RubricFormat, file: &str) -> Result<Rubric, RubricError> {
        if text.len() > MAX_RUBRIC_BYTES {
            return Err(RubricError::Invalid {
                file: file.to_string(),
                message: format!(
                    "the rubric file holds {:.1} MB; a rubric is at most {} KB (a few dozen criteria with their anchors)",
                    text.len() as f64 / 1_048_576.0,
                    MAX_RUBRIC_BYTES / 1024
                ),
            });
        }
        if format == RubricFormat::Json {
            // A key given twice (two labels for one language, say) would let one silently win.
            crate::files::json::parse(text).map_err(|e| RubricError::Json {
                file: file.to_string(),
                message: e.to_string(),
            })?;
        }
        let rubric: Rubric = match format {
            RubricFormat::Toml => toml::from_str(text).map_err(|e| RubricError::Toml {
                file: file.to_string(),
                message: e.to_string(),
            })?,
            RubricFormat::Json => serde_json::from_str(text).map_err(|e| RubricError::Json {
                file: file.to_string(),
                message: e.to_string(),
            })?,
        };
        rubric.validate().map_err(|message| RubricError::Invalid {
            file: file.to_string(),
            message,
        })?;
        Ok(rubric)
    }

    /// Parse a rubric file, choosing the format from its extension (`.toml` or `.json`).
    pub fn parse_named(text: &str, file: &str) -> Result<Rubric, RubricError> {
        let format = if file.to_ascii_lowercase().ends_with(".json") {
            RubricFormat::Json
        } else {
            RubricFormat::Toml
        };
        Rubric::parse(text, format, file)
    }

    fn validate(&self) -> Result<(), String> {
        let id_ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        if !id_ok(&self.id) {
            return Err(format!(
                "rubric id {} must be non-empty letters, digits, '-' or '_'",
                quoted(&self.id)
            ));
        }
        if !self.name.contains_key("en") {
            return Err("rubric name needs an English (`en`) text".into());
        }
        if self.criteria.is_empty() {
            return Err("a rubric needs at least one criterion".into());
        }
        let preferences = self
            .criteria
            .iter()
            .filter(|c| c.scale.is_preference())
            .count();
        if preferences != 0 && preferences != self.criteria.len() {
            return Err(format!(
                "{preferences} of the {} criteria are preferences between two answers and the others rate one answer; \
                 a rubric is either pairwise (every criterion a preference) or not (none)",
                self.criteria.len()
            ));
        }
        if preferences != 0 && self.total.is_some() {
            return Err(
                "a pairwise rubric cannot declare a total: preferences do not add up".into(),
            );
        }
        let group_ids: BTreeSet<&str> = self.groups.iter().map(|g| g.id.as_str()).collect();
        if group_ids.len() != self.groups.len() {
            return Err("group ids must be unique".into());
        }
        let mut seen_ids = BTreeSet::new();
        let mut seen_keys: BTreeMap<String, String> = BTreeMap::new();
        for (i, c) in self.criteria.iter().enumerate() {
            let at = format!("criterion {} ({})", i + 1, quoted(&c.id));
            if !id_ok(&c.id) {
                return Err(format!(
                    "{at}: id must be non-empty letters, digits, '-' or '_'"
                ));
            }
            if !seen_ids.insert(c.id.as_str()) {
                return Err(format!("{at}: duplicate criterion id"));
            }
            if !c.label.contains_key("en") {
                return Err(format!("{at}: label needs an English (`en`) text"));
            }
            if let Some(g) = &c.group {
                if !group_ids.contains(g.as_str()) {
                    return Err(format!(
                        "{at}: group {} is not declared in [[groups]]",
                        quoted(&g)
                    ));
                }
            }
            if let Scale::Likert { min, max } = c.scale {
                if min >= max {
                    return Err(format!("{at}: scale min ({min}) must be below max ({max})"));
                }
                if max - min > 100 {
                    return Err(format!("{at}: scale has more than 101 levels"));
                }
            }
            let mut anchor_values = BTreeSet::new();
            for a in &c.anchors {
                if !c.scale.contains(a.value) {
                    return Err(format!(
                        "{at}: anchor value {} is outside the scale {}..={}",
                        a.value,
                        c.scale.min(),
                        c.scale.max()
                    ));
                }
                if !anchor_values.insert(a.value) {
                    return Err(format!("{at}: two anchors for value {}", a.value));
                }
            }
            for k in std::iter::once(&c.id).chain(c.keys.iter()) {
                let norm = k.trim().to_lowercase();
                if let Some(other) = seen_keys.insert(norm, c.id.clone()) {
                    if other != c.id {
                        return Err(format!(
                            "{at}: key {} is already used by criterion {}",
                            quoted(&k),
                            quoted(&other)
                        ));
                    }
                }
            }
        }
        self.validate_codes()
    }

    /// The code `key` names (trimmed, ASCII case ignored).
    pub fn code(&self, key: &str) -> Option<&Code> {
        let key = key.trim();
        self.codes.iter().find(|c| c.key.eq_ignore_ascii_case(key))
    }

    /// The rubric as it reads without its span codes (how a study of an earlier release stored it).
    pub fn without_codes(&self) -> Rubric {
        Rubric {
            codes: Vec::new(),
            ..self.clone()
        }
    }

    fn validate_codes(&self) -> Result<(), String> {
        let key_ok = |s: &str| {
            !s.is_empty()
                && s.len() <= 64
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        if !self.codes.is_empty() && self.is_pairwise() {
            return Err("a pairwise rubric cannot declare span codes: spans mark one reply".into());
        }
        if self.codes.len() > 64 {
            return Err(format!(
                "the rubric declares {} codes; at most 64",
                self.codes.len()
            ));
        }
        let mut seen = BTreeSet::new();
        for (i, code) in self.codes.iter().enumerate() {
            let at = format!("code {} ({})", i + 1, quoted(&code.key));
            if !key_ok(&code.key) {
                return Err(format!(
                    "{at}: key must be 1–64 letters, digits, '-' or '_'"
                ));
            }
            if !seen.insert(code.key.to_ascii_lowercase()) {
                return Err(format!("{at}: duplicate code key"));
            }
            if !code.label.contains_key("en") {
                return Err(format!("{at}: label needs an English (`en`) text"));
            }
            let mut levels = BTreeSet::new();
            for level in &code.severity {
                if level.trim().is_empty() || level.trim() != level || level.chars().count() > 40 {
                    return Err(format!(
                        "{at}: severity level {} must be 1–40 characters without surrounding spaces",
                        quoted(level)
                    ));
                }
                if !levels.insert(level.to_ascii_lowercase()) {
                    return Err(format!(
                        "{at}: severity level {} is given twice",
                        quoted(level)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether the rubric compares two answers (every criterion a preference) rather than rating one.
    pub fn is_pairwise(&self) -> bool {
        self.criteria.iter().all(|c| c.scale.is_preference())
    }

    pub fn criterion(&self, id: &str) -> Option<&Criterion> {
        self.criteria.iter().find(|c| c.id == id)
    }

    /// The criterion a file header or judge key names, if any.
    pub fn criterion_for_key(&self, name: &str) -> Option<&Criterion> {
        self.criteria.iter().find(|c| c.answers_to(name))
    }

    /// Whether `name` denotes the rubric's declared total.
    pub fn is_total_key(&self, name: &str) -> bool {
        let name = name.trim();
        self.total.as_ref().is_some_and(|t| {
            t.keys.iter().any(|k| k.trim().eq_ignore_ascii_case(name))
                || t.label
                    .values()
                    .any(|l| l.trim().eq_ignore_ascii_case(name))
        })
    }

    /// Ids of the criteria in `group`, in rubric order.
    pub fn group_members(&self, group: &str) -> Vec<&Criterion> {
        self.criteria
            .iter()
            .filter(|c| c.group.as_deref() == Some(group))
            .collect()
    }

    /// Canonical TOML text for this rubric (stored in the study so it travels with it).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }
}

/// The rubrics shipped with Concord, in their rubric-file form.
pub mod builtin {
    use super::{Rubric, RubricFormat};

    pub const MENTALBENCH_TOML: &str = include_str!("../../rubrics/mentalbench.toml");
    pub const PSYCRISIS_TOML: &str = include_str!("../../rubrics/psycrisis.toml");
    pub const MENTALBENCH_PAIRS_TOML: &str = include_str!("../../rubrics/mentalbench-pairs.toml");
    pub const SESSION_CARE_TOML: &str = include_str!("../../rubrics/session-care.toml");

    /// MentalBench's seven 1–5 attributes grouped as CSS and ARS.
    pub fn mentalbench() -> Rubric {
        Rubric::parse(MENTALBENCH_TOML, RubricFormat::Toml, "mentalbench.toml")
            .expect("the shipped MentalBench rubric is valid (checked by a unit test)")
    }

    /// PsyCrisis' five binary safety dimensions with Chinese and English labels.
    pub fn psycrisis() -> Rubric {
        Rubric::parse(PSYCRISIS_TOML, RubricFormat::Toml, "psycrisis.toml")
            .expect("the shipped PsyCrisis rubric is valid (checked by a unit test)")
    }

    /// MentalBench's seven attributes asked as comparisons of two answers, plus an overall
    /// preference (the pairwise rubric `mentalbench-pairs`).
    pub fn mentalbench_pairs() -> Rubric {
        Rubric::parse(
            MENTALBENCH_PAIRS_TOML,
            RubricFormat::Toml,
            "mentalbench-pairs.toml",
        )
        .expect("the shipped MentalBench pairs rubric is valid (checked by a unit test)")
    }

    /// Concord's own session rubric (`scope = "session"`): six aspects of how a whole support
    /// conversation looked after the person, each 1–5.
    pub fn session_care() -> Rubric {
        Rubric::parse(SESSION_CARE_TOML, RubricFormat::Toml, "session-care.toml")
            .expect("the shipped session rubric is valid (checked by a unit test)")
    }

    /// A built-in rubric by id.
    pub fn by_id(id: &str) -> Option<Rubric> {
        match id {
            "mentalbench" => Some(mentalbench()),
            "psycrisis" => Some(psycrisis()),
            "mentalbench-pairs" => Some(mentalbench_pairs()),
            "session-care" => Some(session_care()),
            _ => None,
        }
    }

    /// The shipped pairwise rubric that compares answers on the criteria of `rubric`, if any.
    pub fn pairwise_for(rubric: &str) -> Option<Rubric> {
        match rubric {
            "mentalbench" => Some(mentalbench_pairs()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_mentalbench_has_seven_grouped_attributes() {
        let r = builtin::mentalbench();
        assert_eq!(r.criteria.len(), 7, "MentalBench rates seven attributes");
        assert_eq!(
            r.group_members("CSS").len(),
            4,
            "CSS is the mean of Guidance, Informativeness, Relevance and Safety"
        );
        assert_eq!(r.group_members("ARS").len(), 3, "ARS has three members");
        for c in &r.criteria {
            assert_eq!(c.anchors.len(), 5, "{} needs one anchor per level", c.id);
            assert_eq!(c.scale, Scale::Likert { min: 1, max: 5 }, "1–5 scale");
        }
        assert_eq!(
            r.criterion_for_key(" Guidance").map(|c| c.id.as_str()),
            Some("guidance"),
            "release headers carry stray spaces"
        );
    }

    #[test]
    fn builtin_psycrisis_accepts_aliases() {
        let r = builtin::psycrisis();
        assert_eq!(r.criteria.len(), 5, "five binary dimensions");
        assert!(
            r.criteria.iter().all(|c| c.scale == Scale::Binary),
            "all binary"
        );
        assert_eq!(
            r.criterion_for_key("风险评估与识别").map(|c| c.id.as_str()),
            Some("risk_assessment"),
            "the alias must map to its canonical dimension"
        );
        assert!(r.is_total_key("总分"), "总分 is the declared total");
        assert!(
            r.criteria.iter().all(|c| c.label.contains_key("zh")),
            "every dimension has a Chinese label"
        );
    }

    #[test]
    fn invalid_rubrics_are_refused_with_a_located_message() {
        let bad = r#"id = "x"
name = { en = "X" }
[[criteria]]
id = "a"
label = { en = "A" }
scale = { kind = "likert", min = 5, max = 1 }
"#;
        let err = Rubric::parse(bad, RubricFormat::Toml, "lab.toml").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("lab.toml") && msg.contains("criterion 1"),
            "the message must say which file and criterion: {msg}"
        );
        let dup = r#"{"id":"x","name":{"en":"X"},"criteria":[
            {"id":"a","label":{"en":"A"},"scale":{"kind":"binary"}},
            {"id":"a","label":{"en":"B"},"scale":{"kind":"binary"}}]}"#;
        assert!(
            Rubric::parse(dup, RubricFormat::Json, "lab.json").is_err(),
            "duplicate criterion ids would make ratings ambiguous"
        );
    }

    #[test]
    fn builtin_mentalbench_pairs_compares_the_seven_attributes_and_overall() {
        let pairs = builtin::mentalbench_pairs();
        let single = builtin::mentalbench();
        assert!(pairs.is_pairwise(), "every criterion is a preference");
        assert!(!single.is_pairwise(), "the 1–5 rubric is not pairwise");
        let keys: Vec<&str> = pairs.criteria.iter().map(|c| c.id.as_str()).collect();
        let mut expected: Vec<&str> = single.criteria.iter().map(|c| c.id.as_str()).collect();
        expected.push("overall");
        assert_eq!(
            keys, expected,
            "criterion keys are MentalBench's plus overall"
        );
        for c in &pairs.criteria {
            assert!(
                c.label.contains_key("zh") && c.description.contains_key("zh"),
                "{} needs Chinese",
                c.id
            );
            assert_eq!(c.scale, Scale::Preference { ties: true }, "A, B or tie");
            assert!(
                c.scale.contains(PREFER_TIE)
                    && c.scale.contains(PREFER_LEFT)
                    && c.scale.contains(PREFER_RIGHT),
                "three answers"
            );
        }
        let again = Rubric::parse(&pairs.to_toml(), RubricFormat::Toml, "again.toml").unwrap();
        assert_eq!(
            pairs, again,
            "the stored text must reproduce the pairwise rubric"
        );
    }

    #[test]
    fn a_rubric_mixing_preferences_and_scores_is_refused() {
        let mixed = r#"id = "x"
name = { en = "X" }
[[criteria]]
id = "a"
label = { en = "A" }
scale = { kind = "preference" }
[[criteria]]
id = "b"
label = { en = "B" }
scale = { kind = "binary" }
"#;
        let err = Rubric::parse(mixed, RubricFormat::Toml, "mixed.toml")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("mixed.toml") && err.contains("pairwise"),
            "a mixed rubric has no meaning for a pair or a single answer: {err}"
        );
        let no_ties = mixed.replace(
            "scale = { kind = \"binary\" }",
            "scale = { kind = \"preference\", ties = false }",
        );
        let r = Rubric::parse(&no_ties, RubricFormat::Toml, "noties.toml").unwrap();
        assert!(
            !r.criteria[1].scale.contains(PREFER_TIE),
            "a criterion without ties refuses a tie"
        );
        assert!(
            r.criteria[0].scale.contains(PREFER_TIE),
            "ties are allowed unless refused"
        );
    }

    #[test]
    fn builtin_session_care_rates_whole_conversations_in_both_languages() {
        let r = builtin::by_id("session-care").expect("the session rubric is built in by key");
        assert_eq!(r.scope, Scope::Session, "it rates a whole conversation");
        assert_eq!(r.criteria.len(), 6, "six aspects");
        for c in &r.criteria {
            assert!(
                c.label.get("en").is_some_and(|l| !l.is_empty())
                    && c.label.get("zh").is_some_and(|l| !l.is_empty()),
                "{} is labelled in English and Chinese, like the other built-in rubrics",
                c.id
            );
            assert_eq!(
                c.anchors.len(),
                5,
                "{}: every point of 1–5 is anchored",
                c.id
            );
        }
        let again = Rubric::parse(&r.to_toml(), RubricFormat::Toml, "again.toml").unwrap();
        assert_eq!(
            r, again,
            "the stored rubric text reproduces it, scope included"
        );
    }

    #[test]
    fn toml_round_trip_is_lossless() {
        let r = builtin::psycrisis();
        let again = Rubric::parse(&r.to_toml(), RubricFormat::Toml, "again.toml").unwrap();
        assert_eq!(r, again, "the stored rubric text must reproduce the rubric");
    }
}
