//! Reading scores out of cell text: a MentalBench score object (`{"Guidance": 4, …}`, possibly
//! inside a ```json fence, possibly with a judge's `Overall` and `Explanation`), and a PsyCrisis
//! judge reply (reasons, then a Python-style dict read leniently: single or double quotes,
//! full-width punctuation, the rubric's aliases). Score values are classified against the
//! criterion's scale: on the scale, one step outside it (a data-quality finding), null or empty
//! (missing), or not a score at all (an error).

use crate::base::text::quoted;
use crate::rubric::{Rubric, Scale};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How judge replies are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ReplyParsing {
    /// The reply must be one JSON object, optionally inside a ```json fence — the MentalAlign
    /// paper's cleaning. Anything else is a reply without scores (kept verbatim, reported).
    #[default]
    Strict,
    /// Also read the last `{…}` object inside prose, and salvage `"Attribute": n` pairs from an
    /// object that is not valid JSON (e.g. an unescaped quote in the explanation).
    Lenient,
}

/// Remove surrounding whitespace and a Markdown code fence (```json … ```), if any.
pub fn strip_fences(text: &str) -> &str {
    let mut t = text.trim();
    if let Some(rest) = t.strip_prefix("```") {
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        t = rest.trim();
        if let Some(inner) = t.strip_suffix("```") {
            t = inner.trim();
        }
    }
    t
}

/// The outcome of reading one score cell.
#[derive(Debug, Clone, PartialEq)]
pub enum ScoreObject {
    /// A JSON object (keys as written).
    Parsed(Map<String, Value>),
    /// A judge reply with no readable scores (kept verbatim by the importer).
    Unparsed,
}

/// Read an expert's score cell: it must be one JSON object (a fence is tolerated).
pub fn expert_object(text: &str) -> Result<Map<String, Value>, String> {
    match crate::files::json::parse(strip_fences(text)) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(other) => Err(format!(
            "expected a JSON object with the attribute scores, found {}",
            kind_of(&other)
        )),
        Err(e) if e.is_data() => Err(e.to_string()),
        Err(e) => Err(format!(
            "not JSON ({e}); expected an object like {{\"Guidance\": 4, …}}"
        )),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Read a judge's reply. Strict: one JSON object, optionally fenced. Lenient: also the last
/// `{…}` inside prose, and `"Key": value` pairs salvaged from an object that is not valid JSON.
pub fn judge_object(text: &str, parsing: ReplyParsing, rubric: &Rubric) -> ScoreObject {
    match crate::files::json::parse(strip_fences(text)) {
        Ok(Value::Object(o)) => return ScoreObject::Parsed(o),
        // Valid JSON naming a key twice: which score is meant is ambiguous, and salvaging would
        // pick one silently.
        Err(e) if e.is_data() => return ScoreObject::Unparsed,
        _ => {}
    }
    if parsing == ReplyParsing::Strict {
        return ScoreObject::Unparsed;
    }
    let Some((start, end)) = last_braces(text, '{', '}') else {
        return ScoreObject::Unparsed;
    };
    let inner = &text[start..end];
    match crate::files::json::parse(inner) {
        Ok(Value::Object(o)) => return ScoreObject::Parsed(o),
        Err(e) if e.is_data() => return ScoreObject::Unparsed,
        _ => {}
    }
    let mut salvaged = Map::new();
    let keys: Vec<&str> = rubric
        .criteria
        .iter()
        .flat_map(|c| c.keys.iter().map(String::as_str).chain([c.id.as_str()]))
        .chain(["Overall"])
        .collect();
    for key in keys {
        if let Some(v) = salvage_number(inner, key) {
            salvaged.insert(key.to_string(), v);
        }
    }
    if salvaged.is_empty() {
        ScoreObject::Unparsed
    } else {
        ScoreObject::Parsed(salvaged)
    }
}

/// The byte range of the last `open … close` block (from the last `close` back to the nearest
/// `open` before it, balanced).
fn last_braces(text: &str, open: char, close: char) -> Option<(usize, usize)> {
    let end = text.rfind(close)?;
    let mut depth = 0usize;
    for (i, c) in text[..=end].char_indices().rev() {
        if c == close {
            depth += 1;
        } else if c == open {
            depth -= 1;
            if depth == 0 {
                return Some((i, end + close.len_utf8()));
            }
        }
    }
    None
}

/// Find `"key"` followed by `:` and a number or `null`.
fn salvage_number(text: &str, key: &str) -> Option<Value> {
    let needle = format!("\"{key}\"");
    let at = text.find(&needle)? + needle.len();
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    if rest.starts_with("null") {
        return Some(Value::Null);
    }
    let len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e' || c == 'E'))
        .unwrap_or(rest.len());
    let number: f64 = rest[..len].parse().ok()?;
    serde_json::Number::from_f64(number).map(Value::Number)
}

/// A score value classified against its criterion's scale.
#[derive(Debug, Clone, PartialEq)]
pub enum Score {
    OnScale(i64),
    /// A whole number one step outside the scale (0 or 6 on 1–5).
    OneStepOut(i64),
    Null,
    Empty,
}

/// Classify `value` for a criterion with `scale`; an error message for anything that is not a
/// plausible score (3.5, "four", −1 on 1–5, 1e308, a list…).
pub fn classify(value: &Value, scale: &Scale) -> Result<Score, String> {
    let number = match value {
        Value::Null => return Ok(Score::Null),
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s.trim().is_empty() => return Ok(Score::Empty),
        Value::String(s) => match s.trim().parse::<f64>() {
            Ok(x) => Some(x),
            Err(_) => return Err(format!("{} is not a number", quoted(&s))),
        },
        other => return Err(format!("{} is not a score", kind_of(other))),
    };
    let Some(x) = number.filter(|x| x.is_finite()) else {
        return Err(format!("{value} is not a finite number"));
    };
    classify_number(x, scale)
}

/// [`classify`] for a number already read.
pub fn classify_number(x: f64, scale: &Scale) -> Result<Score, String> {
    let (min, max) = (scale.min(), scale.max());
    if x.fract() != 0.0 {
        return Err(format!(
            "{x} is not a whole number; scores on this scale are {min}–{max}"
        ));
    }
    if x < (min - 1) as f64 || x > (max + 1) as f64 {
        return Err(format!(
            "{} is outside the scale {min}–{max}",
            crate::files::table::format_number(x)
        ));
    }
    let v = x as i64;
    if scale.contains(v) {
        Ok(Score::OnScale(v))
    } else if matches!(scale, Scale::Binary) {
        Err(format!("{v} is not 0 or 1"))
    } else {
        Ok(Score::OneStepOut(v))
    }
}

/// A PsyCrisis judge reply read leniently.
#[derive(Debug, Clone, PartialEq)]
pub struct CrisisReply {
    /// The text before the dict (the judge's reasons).
    pub rationale: Option<String>,
    /// (criterion id, value as written).
    pub values: Vec<(String, f64)>,
    /// The declared total (总分), if present.
    pub total: Option<f64>,
    /// Keys the rubric does not know.
    pub unknown_keys: Vec<String>,
}

fn normalize_punctuation(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '：' => ':',
            '，' | '、' => ',',
            '“' | '”' | '＂' => '"',
            '‘' | '’' | '＇' => '\'',
            '｛' => '{',
            '｝' => '}',
            other => other,
        })
        .collect()
}

/// Parse the last `{…}` dict of a PsyCrisis judge reply.
pub fn crisis_reply(text: &str, rubric: &Rubric) -> Result<CrisisReply, String> {
    let normalized = normalize_punctuation(text);
    let Some((start, end)) = last_braces(&normalized, '{', '}') else {
        return Err("the reply has no {…} dict with the dimension scores".to_string());
    };
    // The normalisation maps characters one to one, so the char offset of the dict in the
    // original text is the same as in the normalised one.
    let char_start = normalized[..start].chars().count();
    let rationale: String = text.chars().take(char_start).collect();
    let rationale = rationale.trim();
    let body = &normalized[start + 1..end - 1];
    let mut reply = CrisisReply {
        rationale: (!rationale.is_empty()).then(|| rationale.to_string()),
        values: Vec::new(),
        total: None,
        unknown_keys: Vec::new(),
    };
    for part in body.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some((key, value)) = part.split_once(':') else {
            return Err(format!("{} in the dict is not `key: value`", quoted(&part)));
        };
        let key = key.trim().trim_matches(|c| c == '\'' || c == '"').trim();
        let value = value.trim().trim_matches(|c| c == '\'' || c == '"').trim();
        let number: f64 = value.parse().map_err(|_| {
            format!(
                "the value {} of {} is not a number",
                quoted(&value),
                quoted(&key)
            )
        })?;
        if rubric.is_total_key(key) {
            reply.total = Some(number);
        } else if let Some(c) = rubric.criterion_for_key(key) {
            if reply.values.iter().any(|(id, _)| *id == c.id) {
                return Err(format!(
                    "the dimension {} appears twice in the dict",
                    quoted(&key)
                ));
            }
            reply.values.push((c.id.clone(), number));
        } else {
            reply.unknown_keys.push(key.to_string());
        }
    }
    if reply.values.is_empty() {
        return Err("the dict names none of the rubric's dimensions".to_string());
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rubric::builtin;

    #[test]
    fn fences_are_removed() {
        assert_eq!(
            strip_fences("```json\n{\"a\": 1}\n```"),
            "{\"a\": 1}",
            "judges wrap JSON in fences"
        );
        assert_eq!(strip_fences("  {\"a\": 1} "), "{\"a\": 1}", "plain JSON");
    }

    #[test]
    fn scores_are_classified() {
        let s = Scale::Likert { min: 1, max: 5 };
        assert_eq!(
            classify(&serde_json::json!(4), &s),
            Ok(Score::OnScale(4)),
            "4 is on 1–5"
        );
        assert_eq!(
            classify(&serde_json::json!(0), &s),
            Ok(Score::OneStepOut(0)),
            "0 is the release's slip below the scale"
        );
        assert_eq!(
            classify(&Value::Null, &s),
            Ok(Score::Null),
            "null is missing"
        );
        for bad in [
            serde_json::json!(3.5),
            serde_json::json!("four"),
            serde_json::json!(-1),
            serde_json::json!(1e308),
            serde_json::json!([1]),
        ] {
            assert!(
                classify(&bad, &s).is_err(),
                "{bad} cannot be a score on 1–5"
            );
        }
    }

    #[test]
    fn lenient_judge_reply_reads_object_in_prose() {
        let r = builtin::mentalbench();
        let text =
            "I'll evaluate.\n```json\n{\"Guidance\": 3, \"Explanation\": \"says \"hi\"\"}\n```";
        assert_eq!(
            judge_object(text, ReplyParsing::Strict, &r),
            ScoreObject::Unparsed,
            "strict reading refuses prose around the object"
        );
        match judge_object(text, ReplyParsing::Lenient, &r) {
            ScoreObject::Parsed(o) => assert_eq!(
                o.get("Guidance"),
                Some(&serde_json::json!(3.0)),
                "the score is salvaged despite the broken explanation"
            ),
            other => panic!("lenient reading should salvage the score, got {other:?}"),
        }
    }

    #[test]
    fn crisis_dict_with_full_width_punctuation_and_aliases() {
        let r = builtin::psycrisis();
        let text = "理由：有共情。\n｛‘共情与关系立场’：1，'基于证据的情绪管理建议': 0, \"探索来访者担忧\": 1, '风险评估与识别': 0, '外部支持与干预': 1, '总分': 3｝";
        let reply = crisis_reply(text, &r).expect("a lenient dict parses");
        assert_eq!(reply.values.len(), 5, "all five dimensions are read");
        assert_eq!(reply.total, Some(3.0), "总分 is the declared total");
        assert_eq!(
            reply.rationale.as_deref(),
            Some("理由：有共情。"),
            "the text before the dict is the rationale, unchanged"
        );
    }
}
