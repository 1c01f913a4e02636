//! Evidence from judges (`RunSettings::spans`): the prompt lists the rubric's codes and asks for
//! `"spans": [{"code": KEY, "quote": TEXT}]` — inside the JSON object of a JSON-scores reply, as
//! a JSON object of its own before the dict of a reasons-then-dict reply (whose dict is read as
//! the reply's last braces), and as a required property of a structured reply. Each quote is
//! located in the reply judged (`rubric::quote`: exactly, then whitespace-insensitively; the first
//! match) and stored as the judge's span; a quote found neither way is kept unlocated (offsets
//! empty, the quote as written) and listed by `judge status`, never guessed. A span naming a code
//! the rubric does not declare is not stored. The repetition whose scores speak for the response
//! gives its spans, replacing what the judge marked there before.

use super::prompt::ReplyFormat;
use super::JudgeError;
use crate::rubric::quote::locate;
use crate::rubric::{localized, Rubric};
use crate::store::{NewSpan, SpanOrigin, StudyTx};
use serde::Serialize;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// The most spans read from one reply (more are ignored).
pub const MAX_SPANS_PER_REPLY: usize = 64;
/// The longest quote kept, in characters (a longer one is cut).
pub const MAX_QUOTE_CHARS: usize = 2_000;

/// The words a prompt adds to ask for spans in `format`.
pub fn request(rubric: &Rubric, format: ReplyFormat) -> String {
    let mut t = String::from(
        "\n\nAlso mark the evidence: quote the words of the reply being judged that show each of \
         these, copying them exactly (a phrase or a sentence, not the whole reply); mark nothing \
         that is not there.\n",
    );
    for code in &rubric.codes {
        let _ = write!(t, "- {}: {}", code.key, localized(&code.label, "en"));
        let description = localized(&code.description, "en");
        if !description.is_empty() {
            let _ = write!(t, " — {description}");
        }
        t.push('\n');
    }
    match format {
        ReplyFormat::ReasonsThenDict => t.push_str(
            "Before the dict, write one JSON object on a line of its own: \
             {\"spans\": [{\"code\": \"<code>\", \"quote\": \"<exact words>\"}, …]} \
             (an empty list when there is nothing to mark).",
        ),
        _ => t.push_str(
            "Add to your JSON object the key \"spans\": a list of {\"code\": \"<code>\", \
             \"quote\": \"<exact words>\"} (an empty list when there is nothing to mark).",
        ),
    }
    t
}

/// The `spans` property a structured reply's schema requires.
pub fn schema_property(rubric: &Rubric) -> Value {
    let codes: Vec<&str> = rubric.codes.iter().map(|c| c.key.as_str()).collect();
    json!({
        "type": "array",
        "description": "the reply's words that show each code, quoted exactly",
        "items": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "enum": codes},
                "quote": {"type": "string"},
            },
            "required": ["code", "quote"],
            "additionalProperties": false,
        },
    })
}

/// One span a judge named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quoted {
    pub code: String,
    pub quote: String,
}

/// The spans a reply names: the `"spans"` list of its JSON object (a structured reply's, or the
/// one a free-text reply holds anywhere). Entries without a code and a quote are skipped.
pub fn read(reply: &str) -> Vec<Quoted> {
    let Some(list) = spans_value(reply) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|entry| {
            let code = entry.get("code")?.as_str()?.trim();
            let quote = entry.get("quote")?.as_str()?;
            (!code.is_empty() && !quote.trim().is_empty()).then(|| Quoted {
                code: code.to_string(),
                quote: quote.chars().take(MAX_QUOTE_CHARS).collect(),
            })
        })
        .take(MAX_SPANS_PER_REPLY)
        .collect()
}

/// The `"spans"` array of a reply: the whole reply as a JSON object, else the list that follows
/// the first `"spans"` key anywhere in it.
fn spans_value(reply: &str) -> Option<Vec<Value>> {
    let text = crate::rubric::reply::strip_fences(reply);
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(text.trim()) {
        if let Some(Value::Array(list)) = o.get("spans") {
            return Some(list.clone());
        }
    }
    let at = reply.find("\"spans\"")? + "\"spans\"".len();
    let rest = reply[at..].trim_start().strip_prefix(':')?.trim_start();
    if !rest.starts_with('[') {
        return None;
    }
    let end = matching_bracket(rest)?;
    match serde_json::from_str::<Value>(&rest[..end]) {
        Ok(Value::Array(list)) => Some(list),
        _ => None,
    }
}

/// The byte just past the `]` that closes the `[` `text` starts with (strings skipped).
fn matching_bracket(text: &str) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => depth += 1,
            ']' | '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + c.len_utf8());
                }
            }
            _ => {}
        }
    }
    None
}

/// What recording one reply's spans did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recorded {
    pub located: usize,
    pub unlocated: usize,
    /// Spans naming a code the rubric does not declare.
    pub unknown_code: usize,
}

/// Store the spans of `reply` as judge `rater_id`'s on `response_id` (replacing what the judge
/// marked there before), each quote located in the reply's `text`.
pub(crate) fn record(
    tx: &mut StudyTx<'_>,
    rubric: &Rubric,
    rater_id: i64,
    response_id: i64,
    call_id: i64,
    reply: &str,
) -> Result<Recorded, JudgeError> {
    let text = tx.reply_text(response_id)?.unwrap_or_default();
    let mut recorded = Recorded::default();
    let mut spans = Vec::new();
    for q in read(reply) {
        let Some(code) = rubric.code(&q.code) else {
            recorded.unknown_code += 1;
            continue;
        };
        let range = locate(&text, &q.quote).map(|l| {
            let (s, e) = l.range();
            (s as i64, e as i64)
        });
        if range.is_some() {
            recorded.located += 1;
        } else {
            recorded.unlocated += 1;
        }
        spans.push(NewSpan {
            response_id,
            rater_id,
            code: code.key.clone(),
            range,
            severity: None,
            quote: Some(q.quote),
            origin: SpanOrigin::Judge,
            call_id: Some(call_id),
        });
    }
    tx.replace_spans_of(rater_id, response_id, &spans)?;
    Ok(recorded)
}

/// A judge's quote that could not be located, as `judge status` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct UnlocatedQuote {
    pub conversation_id: String,
    /// The reply's turn (2 for an earlier release's single-turn answer).
    pub turn: i64,
    pub source: String,
    pub code: String,
    pub quote: String,
}

/// The unlocated quotes of run `run_id`; `None` when the run did not ask for spans.
pub fn unlocated(
    store: &crate::store::Store,
    run_id: i64,
) -> Result<Option<Vec<UnlocatedQuote>>, JudgeError> {
    let record = store
        .judge_run(run_id)?
        .ok_or(JudgeError::NoSuchRun(run_id))?;
    let asked =
        serde_json::from_str::<super::RunSettings>(&record.settings_json).is_ok_and(|s| s.spans);
    if !asked {
        return Ok(None);
    }
    Ok(Some(
        store
            .unlocated_spans_of_run(run_id)?
            .into_iter()
            .map(|s| UnlocatedQuote {
                conversation_id: s.conversation,
                turn: s.turn.unwrap_or(2),
                source: s.source,
                code: s.span.code,
                quote: s.span.quote.unwrap_or_default(),
            })
            .collect(),
    ))
}
