//! Strict JSON: a parser that refuses a key given twice at any depth, and the canonical form
//! used for idempotency fingerprints.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::errors::ApiError;

/// Parses a request body that must be one JSON object, refusing duplicate keys.
pub fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    if bytes.is_empty() {
        return Err(ApiError::BadBody(Cow::Borrowed("body: is empty")));
    }
    match parse(bytes)? {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::BadBody(Cow::Borrowed(
            "body: must be a JSON object",
        ))),
    }
}

/// Parses any JSON value, refusing duplicate keys at any depth and trailing garbage.
pub fn parse(bytes: &[u8]) -> Result<Value, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = Strict
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|e| {
            let message = match e.classify() {
                serde_json::error::Category::Data => format!("body: {e}"),
                _ => format!("body: malformed JSON ({e})"),
            };
            ApiError::BadBody(Cow::Owned(message))
        })?;
    Ok(value)
}

/// The canonical form of a request: keys sorted at every depth, no whitespace.
///
/// Relies on serde_json's `Map` being a `BTreeMap` (the `preserve_order` feature off);
/// a unit test guards that.
pub fn canonical(object: &Map<String, Value>) -> Vec<u8> {
    // Serializing a map of JSON values cannot fail.
    serde_json::to_vec(object).unwrap_or_default()
}

/// A seed that builds a `Value` like serde_json does, but errors on a repeated key.
struct Strict;

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
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

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number out of range"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
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

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Strict.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element_seed(Strict)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                // Named as the merchant sent it, but never with a card number in full.
                let key = domain::mask_card_numbers(&key);
                return Err(de::Error::custom(format_args!(
                    "the key {key:?} is given twice"
                )));
            }
            let value = access.next_value_seed(Strict)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<Map<String, Value>, ApiError>) -> String {
        match result {
            Err(ApiError::BadBody(message)) => message.into_owned(),
            other => panic!("expected a body error, got {other:?}"),
        }
    }

    #[test]
    fn parses_an_object() {
        let map = parse_object(br#"{"a": {"b": [1, 2.5, null, true]}, "c": "x"}"#).expect("ok");
        assert_eq!(map.len(), 2);
        assert_eq!(map["a"]["b"][1], 2.5);
    }

    #[test]
    fn refuses_duplicate_keys_at_any_depth_naming_the_key() {
        for body in [
            r#"{"amount": "1.00", "amount": "2.00"}"#,
            r#"{"userData": {"email": "a@b.example", "email": "c@d.example"}}"#,
            r#"{"requisites": {"list": [{"k": 1, "k": 2}]}}"#,
        ] {
            let text = message(parse_object(body.as_bytes()));
            assert!(text.starts_with("body: the key "), "{text}");
            assert!(text.contains("given twice"), "{text}");
        }
        let text = message(parse_object(br#"{"amount": "1.00", "amount": "1.00"}"#));
        assert!(text.contains("\"amount\""), "{text}");
    }

    #[test]
    fn refuses_malformed_json_empty_bodies_and_non_objects() {
        assert_eq!(message(parse_object(b"")), "body: is empty");
        assert_eq!(
            message(parse_object(b"[1, 2]")),
            "body: must be a JSON object"
        );
        assert_eq!(
            message(parse_object(b"\"text\"")),
            "body: must be a JSON object"
        );
        for bad in [
            &b"{"[..],
            b"{\"a\": }",
            b"{\"a\": 1} x",
            b"{\"a\": 1,}",
            b"\xff",
            b"{\"a\": \"\xff\"}",
        ] {
            let text = message(parse_object(bad));
            assert!(text.starts_with("body: malformed JSON ("), "{text}");
        }
    }

    #[test]
    fn refuses_deep_nesting_without_overflowing_the_stack() {
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse_object(deep.as_bytes()).is_err());
    }

    #[test]
    fn canonical_form_sorts_keys_and_drops_whitespace() {
        let a =
            parse_object(br#"{"b": 1, "a": {"z": "x", "y": [3, {"d": 1, "c": 2}]}}"#).expect("ok");
        let b = parse_object(br#"{"a":{"y":[3,{"c":2,"d":1}],"z":"x"},"b":1}"#).expect("ok");
        assert_eq!(
            canonical(&a),
            br#"{"a":{"y":[3,{"c":2,"d":1}],"z":"x"},"b":1}"#.to_vec()
        );
        assert_eq!(canonical(&a), canonical(&b));
        let c =
            parse_object(br#"{"b": 2, "a": {"z": "x", "y": [3, {"d": 1, "c": 2}]}}"#).expect("ok");
        assert_ne!(canonical(&a), canonical(&c));
    }
}
