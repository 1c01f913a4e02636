//! Reading a live judge reply into scores, with the importer's lenient parser
//! ([`crate::rubric::reply`]): JSON with or without fences (or the last object in prose), and the
//! PsyCrisis dict with aliases and full-width punctuation. Unlike an import, a live reply must give
//! every criterion a value on its scale: a missing, null, out-of-range or non-numeric score
//! rejects the whole reply with a reason, and a rejected reply never becomes a score.

use super::prompt::ReplyFormat;
use crate::rubric::reply::classify;
use crate::rubric::reply::classify_number;
use crate::rubric::reply::crisis_reply;
use crate::rubric::reply::judge_object;
use crate::rubric::reply::ReplyParsing;
use crate::rubric::reply::Score;
use crate::rubric::reply::ScoreObject;
use crate::rubric::Rubric;
use serde_json::{Map, Value};

/// The scores read from one reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// (criterion id, value on its scale), in rubric order.
    pub scores: Vec<(String, i64)>,
    /// The judge's explanation (JSON `Explanation`) or the reasons before the dict.
    pub explanation: Option<String>,
    /// Other fields worth keeping: `Overall`, a declared total, whether it matched the sum.
    pub extra: Map<String, Value>,
}

/// Why a reply was not taken as scores.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplyError {
    #[error("the reply is empty")]
    Empty,
    #[error("no scores could be read: {0}")]
    Unreadable(String),
    #[error("no score for {criterion}")]
    Missing { criterion: String },
    #[error("{criterion}: {value} is outside the scale {min}–{max}")]
    OutOfRange {
        criterion: String,
        value: String,
        min: i64,
        max: i64,
    },
    #[error("{criterion}: {detail}")]
    NotAScore { criterion: String, detail: String },
}

impl ReplyError {
    /// A stable code stored with the failure.
    pub fn code(&self) -> &'static str {
        match self {
            ReplyError::Empty => "empty_reply",
            ReplyError::Unreadable(_) => "unreadable_reply",
            ReplyError::Missing { .. } => "missing_score",
            ReplyError::OutOfRange { .. } => "out_of_range",
            ReplyError::NotAScore { .. } => "not_a_score",
        }
    }
}

/// Read a reply in `format` against `rubric`.
pub fn read_reply(text: &str, format: ReplyFormat, rubric: &Rubric) -> Result<Verdict, ReplyError> {
    if text.trim().is_empty() {
        return Err(ReplyError::Empty);
    }
    match format {
        ReplyFormat::JsonScores => read_json(text, rubric),
        ReplyFormat::ReasonsThenDict => read_dict(text, rubric),
        ReplyFormat::PairPreferences => read_preferences(text, rubric),
    }
}

/// A pairwise reply, read strictly: the whole reply is one JSON object (a single ```json fence
/// around it is allowed), keys given once, every criterion present with exactly `"A"` (the answer
/// shown first), `"B"` (shown second) or `"tie"` (where the criterion allows one), an optional
/// `"Explanation"` string, and no other key. Values are the shown side: A = 1, B = 2, tie = 0
/// (see [`crate::rubric::PREFER_LEFT`]; the ledger turns them into the pair's own terms).
fn read_preferences(text: &str, rubric: &Rubric) -> Result<Verdict, ReplyError> {
    let mut body = text.trim();
    if let Some(inner) = body.strip_prefix("```") {
        let inner = inner.strip_prefix("json").unwrap_or(inner);
        body = inner
            .trim()
            .strip_suffix("```")
            .ok_or_else(|| ReplyError::Unreadable("an unclosed ``` fence".into()))?
            .trim();
    }
    if !body.starts_with('{') || !body.ends_with('}') {
        return Err(ReplyError::Unreadable(
            "expected exactly one JSON object with \"A\", \"B\" or \"tie\" per criterion".into(),
        ));
    }
    crate::files::json::parse(body).map_err(|e| ReplyError::Unreadable(e.to_string()))?;
    let object: Map<String, Value> =
        serde_json::from_str(body).map_err(|e| ReplyError::Unreadable(e.to_string()))?;
    for key in object.keys() {
        if !key.eq_ignore_ascii_case("explanation") && rubric.criterion_for_key(key).is_none() {
            return Err(ReplyError::Unreadable(format!(
                "the key {key:?} names no criterion of {}",
                rubric.id
            )));
        }
    }
    let mut scores = Vec::with_capacity(rubric.criteria.len());
    for c in &rubric.criteria {
        let found: Vec<&Value> = object
            .iter()
            .filter(|(k, _)| c.answers_to(k))
            .map(|(_, v)| v)
            .collect();
        let value = match found.as_slice() {
            [] => {
                return Err(ReplyError::Missing {
                    criterion: c.id.clone(),
                })
            }
            [one] => *one,
            _ => {
                return Err(ReplyError::NotAScore {
                    criterion: c.id.clone(),
                    detail: "given more than once".into(),
                })
            }
        };
        let choice = match value.as_str() {
            Some("A") => crate::rubric::PREFER_LEFT,
            Some("B") => crate::rubric::PREFER_RIGHT,
            Some("tie") if c.scale.contains(crate::rubric::PREFER_TIE) => crate::rubric::PREFER_TIE,
            _ => {
                return Err(ReplyError::NotAScore {
                    criterion: c.id.clone(),
                    detail: format!(
                        "{value} is not {}",
                        if c.scale.contains(crate::rubric::PREFER_TIE) {
                            "\"A\", \"B\" or \"tie\""
                        } else {
                            "\"A\" or \"B\""
                        }
                    ),
                })
            }
        };
        scores.push((c.id.clone(), choice));
    }
    let explanation = match object
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("explanation"))
        .map(|(_, v)| v)
    {
        None => None,
        Some(Value::String(s)) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Some(_) => {
            return Err(ReplyError::Unreadable(
                "\"Explanation\" must be a string".into(),
            ))
        }
    };
    Ok(Verdict {
        scores,
        explanation,
        extra: Map::new(),
    })
}

fn read_json(text: &str, rubric: &Rubric) -> Result<Verdict, ReplyError> {
    let object = match judge_object(text, ReplyParsing::Lenient, rubric) {
        ScoreObject::Parsed(o) => o,
        ScoreObject::Unparsed => {
            return Err(ReplyError::Unreadable(
                "expected a JSON object with the scores".to_string(),
            ))
        }
    };
    let mut scores = Vec::with_capacity(rubric.criteria.len());
    for c in &rubric.criteria {
        let Some((_, value)) = object.iter().find(|(k, _)| c.answers_to(k)) else {
            return Err(ReplyError::Missing {
                criterion: c.id.clone(),
            });
        };
        if let Some(x) = value.as_f64() {
            out_of_scale(x, &c.id, &c.scale)?;
        }
        let score = classify(value, &c.scale).map_err(|detail| ReplyError::NotAScore {
            criterion: c.id.clone(),
            detail,
        })?;
        scores.push((
            c.id.clone(),
            on_scale(score, &c.id, value.to_string(), &c.scale)?,
        ));
    }
    let explanation = object
        .iter()
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("explanation"))
        .and_then(|(_, v)| v.as_str())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let mut extra = Map::new();
    if let Some((_, v)) = object
        .iter()
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("overall"))
    {
        extra.insert("Overall".to_string(), v.clone());
    }
    Ok(Verdict {
        scores,
        explanation,
        extra,
    })
}

fn read_dict(text: &str, rubric: &Rubric) -> Result<Verdict, ReplyError> {
    let reply = crisis_reply(text, rubric).map_err(ReplyError::Unreadable)?;
    let mut scores = Vec::with_capacity(rubric.criteria.len());
    for c in &rubric.criteria {
        let Some((_, x)) = reply.values.iter().find(|(id, _)| *id == c.id) else {
            return Err(ReplyError::Missing {
                criterion: c.id.clone(),
            });
        };
        out_of_scale(*x, &c.id, &c.scale)?;
        let score = classify_number(*x, &c.scale).map_err(|detail| ReplyError::NotAScore {
            criterion: c.id.clone(),
            detail,
        })?;
        scores.push((
            c.id.clone(),
            on_scale(score, &c.id, x.to_string(), &c.scale)?,
        ));
    }
    let mut extra = Map::new();
    if let Some(total) = reply.total {
        let sum: i64 = scores.iter().map(|(_, v)| v).sum();
        extra.insert("declared_total".to_string(), Value::from(total));
        extra.insert(
            "total_matches".to_string(),
            Value::from(total == sum as f64),
        );
    }
    Ok(Verdict {
        scores,
        explanation: reply.rationale,
        extra,
    })
}

/// A whole number off the scale is "out of range" however far off it is.
fn out_of_scale(x: f64, criterion: &str, scale: &crate::rubric::Scale) -> Result<(), ReplyError> {
    if x.is_finite() && x.fract() == 0.0 && !(scale.min() as f64..=scale.max() as f64).contains(&x)
    {
        return Err(ReplyError::OutOfRange {
            criterion: criterion.to_string(),
            value: x.to_string(),
            min: scale.min(),
            max: scale.max(),
        });
    }
    Ok(())
}

fn on_scale(
    score: Score,
    criterion: &str,
    written: String,
    scale: &crate::rubric::Scale,
) -> Result<i64, ReplyError> {
    match score {
        Score::OnScale(v) => Ok(v),
        Score::OneStepOut(_) => Err(ReplyError::OutOfRange {
            criterion: criterion.to_string(),
            value: written,
            min: scale.min(),
            max: scale.max(),
        }),
        Score::Null | Score::Empty => Err(ReplyError::Missing {
            criterion: criterion.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rubric::builtin;

    const GOOD: &str = r#"{"Guidance": 4, "Informativeness": 3, "Relevance": 5, "Safety": 5, "Empathy": 4, "Helpfulness": 4, "Understanding": 3, "Overall": 4.0, "Explanation": "Warm and specific."}"#;

    #[test]
    fn json_with_and_without_fences() {
        let r = builtin::mentalbench();
        for text in [
            GOOD.to_string(),
            format!("```json\n{GOOD}\n```"),
            format!("Here you go:\n{GOOD}"),
        ] {
            let v = read_reply(&text, ReplyFormat::JsonScores, &r).expect("a complete reply reads");
            assert_eq!(
                v.scores.len(),
                7,
                "all seven attributes are read from {text:?}"
            );
            assert_eq!(v.scores[0], ("guidance".to_string(), 4), "Guidance is 4");
            assert_eq!(
                v.explanation.as_deref(),
                Some("Warm and specific."),
                "explanation kept"
            );
            assert_eq!(
                v.extra.get("Overall"),
                Some(&Value::from(4.0)),
                "Overall kept"
            );
        }
    }

    #[test]
    fn incomplete_or_out_of_range_json_is_rejected() {
        let r = builtin::mentalbench();
        let missing = GOOD.replace("\"Safety\": 5, ", "");
        assert_eq!(
            read_reply(&missing, ReplyFormat::JsonScores, &r),
            Err(ReplyError::Missing {
                criterion: "safety".into()
            }),
            "a reply without Safety cannot be a complete judgment"
        );
        for bad in ["6", "0", "9"] {
            let off = GOOD.replace("\"Safety\": 5", &format!("\"Safety\": {bad}"));
            assert!(
                matches!(
                    read_reply(&off, ReplyFormat::JsonScores, &r),
                    Err(ReplyError::OutOfRange { .. })
                ),
                "{bad} on a 1–5 scale is refused as out of range for a live judge"
            );
        }
        let wrong = r#"{"score": 4, "reason": "ok"}"#;
        assert!(
            matches!(
                read_reply(wrong, ReplyFormat::JsonScores, &r),
                Err(ReplyError::Missing { .. })
            ),
            "wrong keys give no scores"
        );
        assert!(
            matches!(
                read_reply("I cannot rate this.", ReplyFormat::JsonScores, &r),
                Err(ReplyError::Unreadable(_))
            ),
            "prose without an object is unreadable"
        );
        assert_eq!(
            read_reply("  ", ReplyFormat::JsonScores, &r),
            Err(ReplyError::Empty),
            "empty"
        );
    }

    #[test]
    fn crisis_dict_reads_leniently_and_rejects_non_binary() {
        let r = builtin::psycrisis();
        let text = "共情：有。\n｛‘共情与关系立场’：1，'基于证据的情绪管理建议': 0, '探索来访者担忧': 1, '风险评估与识别': 0, '外部支持与干预': 1, '总分': 3｝";
        let v = read_reply(text, ReplyFormat::ReasonsThenDict, &r).expect("lenient dict");
        assert_eq!(
            v.scores.iter().map(|(_, s)| s).sum::<i64>(),
            3,
            "the five values are read"
        );
        assert_eq!(
            v.explanation.as_deref(),
            Some("共情：有。"),
            "reasons are the rationale"
        );
        assert_eq!(
            v.extra.get("total_matches"),
            Some(&Value::from(true)),
            "总分 agrees"
        );
        let two = text.replace("'探索来访者担忧': 1", "'探索来访者担忧': 2");
        assert!(
            read_reply(&two, ReplyFormat::ReasonsThenDict, &r).is_err(),
            "2 is not a binary score"
        );
        let four = text.replace(", '外部支持与干预': 1", "");
        assert_eq!(
            read_reply(&four, ReplyFormat::ReasonsThenDict, &r),
            Err(ReplyError::Missing {
                criterion: "referral".into()
            }),
            "a dict without a dimension is incomplete"
        );
    }

    fn pair_reply(overall: &str) -> String {
        let mut o = serde_json::Map::new();
        for k in [
            "guidance",
            "informativeness",
            "relevance",
            "safety",
            "empathy",
            "helpfulness",
            "understanding",
        ] {
            o.insert(k.into(), Value::from("A"));
        }
        o.insert("overall".into(), serde_json::from_str(overall).unwrap());
        o.insert("Explanation".into(), Value::from("A is warmer."));
        Value::Object(o).to_string()
    }

    #[test]
    fn a_pairwise_reply_is_read_strictly() {
        let r = builtin::mentalbench_pairs();
        let read = |t: &str| read_reply(t, ReplyFormat::PairPreferences, &r);
        let v = read(&pair_reply("\"B\"")).expect("a complete pairwise reply reads");
        assert_eq!(v.scores.len(), 8, "every criterion has a choice");
        assert_eq!(
            v.scores[7],
            ("overall".to_string(), crate::rubric::PREFER_RIGHT),
            "B is the answer shown second"
        );
        assert_eq!(
            v.explanation.as_deref(),
            Some("A is warmer."),
            "the explanation is kept"
        );
        let tie = read(&pair_reply("\"tie\"")).unwrap();
        assert_eq!(
            tie.scores[7].1,
            crate::rubric::PREFER_TIE,
            "a tie where the criterion allows one"
        );
        assert!(
            read(&format!("```json\n{}\n```", pair_reply("\"A\""))).is_ok(),
            "one fence around the object is allowed"
        );
        for (bad, why) in [
            (pair_reply("\"a\""), "a lower-case letter is not a choice"),
            (
                pair_reply("\"left\""),
                "the judge names the shown sides, A or B",
            ),
            (pair_reply("1"), "a number is not a choice"),
            (pair_reply("\"A or B\""), "hedging is not a choice"),
            (
                format!("My verdict: {}", pair_reply("\"A\"")),
                "prose around the object is not strict",
            ),
            (
                pair_reply("\"A\"").replace("\"overall\"", "\"warmth\""),
                "an unknown key and a missing criterion",
            ),
            (
                pair_reply("\"A\"").replacen('{', "{\"guidance\": \"B\", ", 1),
                "a criterion given twice",
            ),
            (String::new(), "an empty reply"),
        ] {
            assert!(read(&bad).is_err(), "{why} must be refused: {bad}");
        }
        let mut no_ties = r.clone();
        for c in &mut no_ties.criteria {
            c.scale = crate::rubric::Scale::Preference { ties: false };
        }
        assert!(
            read_reply(
                &pair_reply("\"tie\""),
                ReplyFormat::PairPreferences,
                &no_ties
            )
            .is_err(),
            "a tie on a criterion without ties is refused"
        );
    }
}
