//! Property tests with arbitrary input for the three parsers every request meets first: the
//! strict JSON reader, the creation-request parser and the signature check. Each property
//! runs a few hundred generated cases per `cargo test`; none may panic, accept what it
//! should refuse, or refuse what it should accept.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::dto::create;
use crate::json::{canonical, parse, parse_object};

/// JSON values without floats (whose text form may not round-trip), nested a few levels.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            btree_map(any::<String>(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A field value a creation body might carry: mostly strings near the rules, sometimes junk.
fn field_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => any::<String>().prop_map(Value::String),
        2 => "[0-9]{1,3}\\.[0-9]{2}".prop_map(Value::String),
        2 => prop_oneof![Just("card"), Just("sbp"), Just("sbp_qr"), Just("RUB")]
            .prop_map(|s| Value::String(s.to_string())),
        2 => "https?://[a-z]{1,8}\\.example/[ -~]{0,12}".prop_map(Value::String),
        1 => json_value(),
    ]
}

/// A creation body: a valid deposit or payout with up to four fields replaced by generated
/// values (or added, or with unknown keys), so both the refusals and the acceptances run.
fn creation_body() -> impl Strategy<Value = Map<String, Value>> {
    let requisite_keys = prop_oneof![
        Just("pan".to_string()),
        Just("cardholderName".to_string()),
        Just("phone".to_string()),
        Just("accountName".to_string()),
        Just("bankName".to_string()),
        any::<String>(),
    ];
    let object = btree_map(requisite_keys, field_value(), 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()));
    let base = prop_oneof![
        Just(
            serde_json::json!({"amount": "10.00", "currency": "RUB", "paymentMethod": "card",
            "userId": "u-1", "requisites": {"note": "x"}, "userData": {"email": "a@b.example"}})
        ),
        Just(
            serde_json::json!({"amount": "10.00", "currency": "RUB", "paymentMethod": "sbp",
            "userId": "u-1", "requisites": {"phone": "+79001234567", "accountName": "Ivan",
            "bankName": "Bank A"}})
        ),
        Just(
            serde_json::json!({"amount": "10.00", "currency": "RUB", "paymentMethod": "card",
            "userId": "u-1", "requisites": {"pan": "4242424242424242",
            "cardholderName": "IVAN"}})
        ),
    ];
    let changes = vec(
        (
            prop_oneof![
                9 => proptest::sample::select(&create::KNOWN_FIELDS[..]),
                1 => Just("unknownField"),
            ],
            prop_oneof![3 => field_value(), 2 => object],
        ),
        0..4,
    );
    (base, changes).prop_map(|(base, changes)| {
        let Value::Object(mut body) = base else {
            unreachable!("the bases are objects")
        };
        for (key, value) in changes {
            body.insert(key.to_string(), value);
        }
        body
    })
}

fn has_control(text: &str) -> bool {
    text.chars().any(domain::is_refused_control)
}

/// Whether no key or string in `value`, at any depth, holds a control character.
fn storable(value: &Value) -> bool {
    match value {
        Value::String(text) => !has_control(text),
        Value::Array(items) => items.iter().all(storable),
        Value::Object(map) => map.iter().all(|(k, v)| !has_control(k) && storable(v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary bytes: the reader never panics, accepts only what serde_json accepts, and
    /// what it accepts reads as the same value.
    #[test]
    fn the_json_reader_takes_arbitrary_bytes(bytes in vec(any::<u8>(), 0..256)) {
        if let Ok(value) = parse(&bytes) {
            let lenient: Value = serde_json::from_slice(&bytes).expect("lenient parse");
            prop_assert_eq!(value, lenient);
        }
        let _ = parse_object(&bytes);
    }

    /// Arbitrary JSON text: whatever is written without a repeated key is read back as it was.
    #[test]
    fn the_json_reader_reads_back_what_was_written(value in json_value(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_vec_pretty(&value)
        } else {
            serde_json::to_vec(&value)
        }
        .expect("serializable");
        prop_assert_eq!(parse(&text).expect("valid JSON"), value);
    }

    /// A key given twice at any depth is refused, whatever surrounds it.
    #[test]
    fn a_repeated_key_is_refused_at_any_depth(
        key in any::<String>(),
        first in json_value(),
        second in json_value(),
        depth in 0usize..4,
    ) {
        let key_json = serde_json::to_string(&key).expect("a string");
        let mut text = format!(
            "{{{key_json}: {}, {key_json}: {}}}",
            serde_json::to_string(&first).expect("json"),
            serde_json::to_string(&second).expect("json"),
        );
        for _ in 0..depth {
            text = format!("{{\"outer\": [{text}]}}");
        }
        prop_assert!(parse(text.as_bytes()).is_err(), "{}", text);
    }

    /// The canonical form ignores key order and whitespace.
    #[test]
    fn the_canonical_form_ignores_key_order_and_whitespace(
        entries in btree_map(any::<String>(), json_value(), 0..8),
    ) {
        let map: Map<String, Value> = entries.into_iter().collect();
        let parts: Vec<String> = map
            .iter()
            .rev()
            .map(|(k, v)| format!(" {} :\n {v} ", serde_json::to_string(k).expect("a key")))
            .collect();
        let reordered = format!("{{ {} }}", parts.join(" ,\t"));
        let again = parse_object(reordered.as_bytes()).expect("valid");
        prop_assert_eq!(canonical(&again), canonical(&map));
    }

    /// Arbitrary creation bodies: the parser never panics; a refusal names at least one field
    /// and every field it names; an acceptance keeps no text the databases cannot store.
    #[test]
    fn the_request_parser_takes_arbitrary_bodies(body in creation_body()) {
        match create::deposit(&body) {
            Ok(deposit) => {
                let c = &deposit.common;
                prop_assert!(c.amount.minor() > 0);
                prop_assert!(!has_control(c.user_id.as_str()));
                for (key, value) in c.user_data.entries() {
                    prop_assert!(!has_control(&key) && !has_control(&value));
                }
                if let Some(requisites) = &deposit.requisites {
                    prop_assert!(storable(&serde_json::to_value(requisites).expect("JSON")));
                }
                for url in [&c.urls.callback, &c.urls.success, &c.urls.fail, &c.urls.processing]
                    .into_iter()
                    .flatten()
                {
                    prop_assert!(url.as_str().bytes().all(|b| b.is_ascii_graphic()));
                }
            }
            Err(errors) => {
                prop_assert!(!errors.is_empty());
                prop_assert!(errors.0.iter().all(|e| !e.field.is_empty() && !e.message.is_empty()));
            }
        }
        match create::withdrawal(&body) {
            Ok(payout) => {
                prop_assert!(payout.common.amount.minor() > 0);
                let kept = payout.requisites.to_kept();
                prop_assert!(storable(&serde_json::to_value(&kept).expect("JSON")));
                prop_assert!(!has_control(payout.common.user_id.as_str()));
            }
            Err(errors) => prop_assert!(!errors.is_empty()),
        }
    }
}
