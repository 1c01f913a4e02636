//! JSON read strictly: like `serde_json::from_str::<Value>`, except that an object naming the same
//! key twice is an error instead of letting the last value silently win. The error names the key,
//! both of its places in the object (as key ordinals) and, through serde_json, the line and column
//! of the second. Used for JSON Lines rows, score cells, judge replies and rubric files.

use crate::base::text::quoted;
use serde::de::{self, Deserialize, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Parse `text` as one JSON value, refusing duplicate keys.
pub fn parse(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = StrictValue.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Builds a [`Value`], failing on a duplicate key.
#[derive(Clone, Copy)]
struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictValue)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictValue)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(StrictValue)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        let mut places: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        while let Some(key) = map.next_key::<String>()? {
            if let Some(first) = places.get(&key) {
                return Err(de::Error::custom(format!(
                    "the key {} appears twice in one object (as its key {} and key {}); which value is meant is ambiguous",
                    quoted(&key),
                    first + 1,
                    places.len() + 1
                )));
            }
            let value = map.next_value_seed(StrictValue)?;
            places.insert(key.clone(), places.len());
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// `Deserialize` for callers that want a type.
pub struct Strict(pub Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
        StrictValue.deserialize(d).map(Strict)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn duplicate_keys_are_refused_with_both_places() {
        let e =
            super::parse(r#"{"a": 1, "b": 2, "a": 3}"#).expect_err("a duplicate key is ambiguous");
        let text = e.to_string();
        assert!(
            text.contains("“a”") && text.contains("key 1") && text.contains("key 3"),
            "the message names the key and both places: {text}"
        );
        assert_eq!(
            super::parse(r#"{"a": {"b": [1, 2.5, null, "x"]}}"#).expect("valid JSON"),
            serde_json::json!({"a": {"b": [1, 2.5, null, "x"]}}),
            "valid JSON reads as serde_json would"
        );
        assert!(
            super::parse(r#"{"a": {"b": 1, "b": 2}}"#).is_err(),
            "nested duplicates are found too"
        );
    }
}
