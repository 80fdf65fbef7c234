//! Card data in the free-form data a merchant sends (`userData`, deposit requisites): every
//! string kept has its card numbers masked ([`mask_card_numbers`]), and every entry whose key
//! names a card security code is dropped.
//!
//! Keys are strings the merchant sends too: they are masked like values. Should two keys of
//! one object read the same once masked, the first of them in key order is kept.

use std::collections::BTreeMap;

use super::card_text::mask_card_numbers;
use super::{Kept, KeptObject};

/// Whether `key` names a card security code: `cvc`, `cvv`, `cvv2`, `cvc2` or `cid`, in any case.
pub fn is_card_code_key(key: &str) -> bool {
    ["cvc", "cvv", "cvv2", "cvc2", "cid"]
        .iter()
        .any(|name| key.eq_ignore_ascii_case(name))
}

/// Deposit requisites as stored: at any depth, entries named like a card security code
/// dropped, card numbers masked in every key and string, and in every number (which is then
/// kept as the masked text).
pub fn sanitize_requisites(map: &KeptObject) -> KeptObject {
    let mut clean = KeptObject::new();
    for (key, value) in map.iter().filter(|(key, _)| !is_card_code_key(key)) {
        let key = mask_card_numbers(key);
        if clean.get(&key).is_none() {
            clean.insert(key.into_owned(), sanitize_value(value));
        }
    }
    clean
}

fn sanitize_value(value: &Kept) -> Kept {
    match value {
        Kept::Text(text) => Kept::Text(mask_card_numbers(text).into_owned()),
        Kept::Number(number) => match mask_card_numbers(number) {
            std::borrow::Cow::Borrowed(_) => Kept::Number(number.clone()),
            std::borrow::Cow::Owned(masked) => Kept::Text(masked),
        },
        Kept::Object(map) => Kept::Object(sanitize_requisites(map)),
        Kept::List(items) => Kept::List(items.iter().map(sanitize_value).collect()),
        Kept::Null | Kept::Bool(_) => value.clone(),
    }
}

/// The keys of a payout's requisites that are names typed by someone (the recipient's, the
/// bank's): free text, so card numbers in them are masked. The card number itself is kept
/// masked by its own rule, and the phone is a number to pay, not text.
pub const PAYOUT_NAME_KEYS: [&str; 3] = ["accountName", "bankName", "cardholderName"];

/// Payout requisites as stored: card numbers masked in the names ([`PAYOUT_NAME_KEYS`]);
/// every other entry as it is.
pub fn sanitize_payout_requisites(map: &KeptObject) -> KeptObject {
    map.iter()
        .map(|(key, value)| {
            let value = match value {
                Kept::Text(text) if PAYOUT_NAME_KEYS.contains(&key.as_str()) => {
                    Kept::Text(mask_card_numbers(text).into_owned())
                }
                other => other.clone(),
            };
            (key.clone(), value)
        })
        .collect()
}

/// `userData` entries as stored: entries named like a card security code dropped, card
/// numbers masked in every key and value (`email` and `ipAddress` included).
pub fn sanitize_user_data(entries: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut clean = BTreeMap::new();
    for (key, value) in entries.iter().filter(|(key, _)| !is_card_code_key(key)) {
        clean
            .entry(mask_card_numbers(key).into_owned())
            .or_insert_with(|| mask_card_numbers(value).into_owned());
    }
    clean
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn kept(value: Value) -> KeptObject {
        serde_json::from_value(value).expect("an object")
    }

    fn json_of(object: KeptObject) -> Value {
        serde_json::to_value(object).expect("JSON")
    }

    #[test]
    fn requisites_have_card_numbers_masked_at_any_depth_inside_text() {
        let given = json!({
            "pan": "4242424242424242",
            "nested": {"deeper": {"card": "card 4000-0000-0000-9995, exp 12/28"}},
            "list": ["4242 4242 4242 4242", {"pan": "4000.0000.0000.0002"}, 7],
            "number": 4242424242424242u64,
            "negative": -4242424242424242i64,
            "plain": 12345,
            "phone": "+79001234567",
            "notLuhn": "4242424242424241",
            "short": "424242424242",
        });

        let clean = json_of(sanitize_requisites(&kept(given)));

        assert_eq!(
            clean,
            json!({
                "pan": "424242******4242",
                "nested": {"deeper": {"card": "card 400000******9995, exp 12/28"}},
                "list": ["424242******4242", {"pan": "400000******0002"}, 7],
                "number": "424242******4242",
                "negative": "-424242******4242",
                "plain": 12345,
                "phone": "+79001234567",
                "notLuhn": "4242424242424241",
                "short": "424242424242",
            })
        );
    }

    #[test]
    fn requisites_drop_card_code_keys_in_any_case_at_any_depth() {
        let given = json!({
            "cvc": "123", "CVV": "123", "Cvv2": "123", "cVC2": "123", "CID": "1234",
            "card": {"cVc": "1", "holder": "IVAN", "inner": [{"cvv2": "9", "cid": 7, "keep": 1}]},
            "cvcHint": "kept: not one of the five names",
            "cvc3": "kept too",
        });

        let clean = json_of(sanitize_requisites(&kept(given)));

        assert_eq!(
            clean,
            json!({
                "card": {"holder": "IVAN", "inner": [{"keep": 1}]},
                "cvcHint": "kept: not one of the five names",
                "cvc3": "kept too",
            })
        );
    }

    #[test]
    fn keys_are_masked_and_the_first_of_keys_that_read_the_same_is_kept() {
        let given = json!({
            "cards": {"4242 4242 4242 4242": "first", "4242424242424242": "second", "x": 1},
        });

        let clean = json_of(sanitize_requisites(&kept(given)));

        assert_eq!(
            clean,
            json!({"cards": {"424242******4242": "first", "x": 1}})
        );
    }

    #[test]
    fn user_data_drops_card_codes_and_masks_keys_and_values() {
        let entries: BTreeMap<String, String> = [
            ("CVV2", "737"),
            ("cid", "7319"),
            ("note", "pay 4242.4242.4242.4242 now"),
            ("email", "4242424242424242@shop.example"),
            ("5555 5555 5555 4444", "keyed by a card"),
            ("cvcHint", "kept"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();

        let clean = sanitize_user_data(&entries);

        let expected: BTreeMap<String, String> = [
            ("note", "pay 424242******4242 now"),
            ("email", "424242******4242@shop.example"),
            ("555555******4444", "keyed by a card"),
            ("cvcHint", "kept"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(clean, expected);
        assert_eq!(sanitize_user_data(&clean), clean, "idempotent");
    }
}
