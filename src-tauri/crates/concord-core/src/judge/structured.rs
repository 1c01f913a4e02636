//! Structured replies (`RunSettings::structured`): the judge is asked for a reply constrained by
//! a JSON schema — `{"Explanation": string, "scores": {<criterion name>: integer, …}}`, every
//! score an integer enum of its scale's values, every key required, nothing else allowed. The
//! rationale comes first: JSON objects are sent with their keys in sorted order, and
//! `Explanation` sorts before `scores`, so a decoder that follows the schema's property order
//! writes its reasons before its scores. OpenAI-compatible servers get it as `response_format`
//! (`json_schema`, strict; vLLM's guided decoding reads the same); Anthropic as a forced tool
//! (`tools` with the schema as `input_schema`, `tool_choice` naming it), whose `tool_use` input
//! becomes the reply text. The reply is read by the same lenient parser as free text, after the
//! `scores` object is lifted to the top level, so a server that ignores the schema still has its
//! free-text reply read; the run's failed calls with a reply-reading kind count as unreadable.

use super::prompt::key_of;
use super::settings::ProviderKind;
use crate::rubric::Rubric;
use serde_json::{json, Map, Value};

/// The tool name of an Anthropic structured reply.
pub const TOOL: &str = "record_scores";

/// The reply schema for `rubric` (see the module docs).
pub fn schema(rubric: &Rubric) -> Value {
    let mut scores = Map::new();
    for c in &rubric.criteria {
        let levels: Vec<i64> = (c.scale.min()..=c.scale.max()).collect();
        scores.insert(
            key_of(c).to_string(),
            json!({"type": "integer", "enum": levels}),
        );
    }
    let names: Vec<&str> = rubric.criteria.iter().map(key_of).collect();
    json!({
        "type": "object",
        "properties": {
            "Explanation": {"type": "string", "description": "the reasons for the scores, first"},
            "scores": {
                "type": "object",
                "properties": scores,
                "required": names,
                "additionalProperties": false,
            },
        },
        "required": ["Explanation", "scores"],
        "additionalProperties": false,
    })
}

/// The reply schema with the rubric's span codes asked for too (`spans`, a required list of
/// `{code, quote}`; see `judge::spans`).
pub fn schema_with_spans(rubric: &Rubric) -> Value {
    let mut s = schema(rubric);
    s["properties"]["spans"] = super::spans::schema_property(rubric);
    s["required"] = json!(["Explanation", "scores", "spans"]);
    s
}

/// Add the schema to a request body of `provider` (with `spans`, the schema that asks for them).
pub fn constrain(body: &mut Value, provider: ProviderKind, rubric: &Rubric, spans: bool) {
    let schema = if spans {
        schema_with_spans(rubric)
    } else {
        schema(rubric)
    };
    match provider {
        ProviderKind::OpenaiCompatible => {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": "judge_scores", "strict": true, "schema": schema},
            });
        }
        ProviderKind::Anthropic => {
            body["tools"] = json!([{
                "name": TOOL,
                "description": "Record the reasons, then the score of every criterion.",
                "input_schema": schema,
            }]);
            body["tool_choice"] = json!({"type": "tool", "name": TOOL});
        }
    }
}

/// The reply text the parser reads: a structured reply's `scores` lifted beside its
/// `Explanation`; any other text as it came.
pub fn flatten(text: &str) -> String {
    let Ok(Value::Object(mut reply)) = serde_json::from_str::<Value>(text.trim()) else {
        return text.to_string();
    };
    let Some(Value::Object(scores)) = reply.remove("scores") else {
        return text.to_string();
    };
    for (k, v) in scores {
        reply.entry(k).or_insert(v);
    }
    Value::Object(reply).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rubric::builtin;

    #[test]
    fn the_schema_asks_for_every_criterion_as_an_integer_of_its_scale() {
        let rubric = builtin::mentalbench();
        let s = schema(&rubric);
        let scores = &s["properties"]["scores"];
        assert_eq!(
            scores["required"].as_array().map(Vec::len),
            Some(7),
            "every attribute is required"
        );
        assert_eq!(
            scores["properties"]["Guidance"]["enum"],
            json!([1, 2, 3, 4, 5]),
            "a 1–5 attribute is an integer enum of its levels"
        );
        let text = serde_json::to_string(&s).expect("JSON");
        assert!(
            text.find("\"Explanation\"") < text.find("\"scores\""),
            "the rationale is listed before the scores"
        );
    }

    #[test]
    fn a_structured_reply_is_read_like_free_text() {
        let flat = flatten(r#"{"Explanation": "Warm.", "scores": {"Guidance": 4}}"#);
        let v: Value = serde_json::from_str(&flat).expect("JSON");
        assert_eq!(v["Guidance"], 4, "scores are lifted to the top level");
        assert_eq!(v["Explanation"], "Warm.", "the rationale stays");
        assert_eq!(flatten("not json"), "not json", "free text passes through");
    }
}
