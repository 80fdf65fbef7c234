//! Creation bodies: JSON types are checked here, values by `domain::request`; every invalid
//! field of both kinds is reported together.

use std::collections::BTreeMap;

use domain::request::{NewDeposit, NewWithdrawal, RawRequest};
use domain::{Kept, KeptObject, ValidationErrors};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The top-level fields a creation body may have. Withdrawals pass the three page URLs on
/// to the domain, which refuses them by name.
pub(crate) const KNOWN_FIELDS: [&str; 11] = [
    "amount",
    "currency",
    "paymentMethod",
    "userId",
    "merchantOperationId",
    "callbackUrl",
    "processingUrl",
    "successUrl",
    "failUrl",
    "requisites",
    "userData",
];

/// A valid deposit request from a parsed body, or every invalid field.
pub fn deposit(body: &Map<String, Value>) -> Result<NewDeposit, ValidationErrors> {
    read(body, NewDeposit::parse)
}

/// A valid withdrawal request from a parsed body, or every invalid field.
pub fn withdrawal(body: &Map<String, Value>) -> Result<NewWithdrawal, ValidationErrors> {
    read(body, NewWithdrawal::parse)
}

fn read<T>(
    body: &Map<String, Value>,
    parse: impl FnOnce(&RawRequest<'_>) -> Result<T, ValidationErrors>,
) -> Result<T, ValidationErrors> {
    let mut edge = ValidationErrors::default();
    unknown_fields(body, &KNOWN_FIELDS, "", &mut edge);
    let mut raw = RawRequest {
        amount: string(body, "amount", &mut edge),
        currency: string(body, "currency", &mut edge),
        payment_method: string(body, "paymentMethod", &mut edge),
        user_id: string(body, "userId", &mut edge),
        merchant_operation_id: string(body, "merchantOperationId", &mut edge),
        callback_url: string(body, "callbackUrl", &mut edge),
        processing_url: string(body, "processingUrl", &mut edge),
        success_url: string(body, "successUrl", &mut edge),
        fail_url: string(body, "failUrl", &mut edge),
        requisites: None,
        user_data: None,
    };
    let requisites = object(body, "requisites", &mut edge).map(kept);
    raw.requisites = requisites.as_ref();
    let user_data = user_data(body, &mut edge);
    raw.user_data = user_data.as_ref();
    merge(edge, parse(&raw))
}

/// A string field; absent and `null` are `None`, another type is an error.
pub(crate) fn string<'a>(
    body: &'a Map<String, Value>,
    key: &str,
    errors: &mut ValidationErrors,
) -> Option<&'a str> {
    typed(body, key, errors, Value::as_str, "must be a string")
}

/// Every key of `body` not in `known`, refused by name (under `prefix`).
pub(crate) fn unknown_fields(
    body: &Map<String, Value>,
    known: &[&str],
    prefix: &str,
    errors: &mut ValidationErrors,
) {
    for key in body.keys() {
        if !known.contains(&key.as_str()) {
            errors.push(format!("{prefix}{key}"), "is not a known field");
        }
    }
}

/// An object field; absent and `null` are `None`, another type is an error.
pub(crate) fn object<'a>(
    body: &'a Map<String, Value>,
    key: &str,
    errors: &mut ValidationErrors,
) -> Option<&'a Map<String, Value>> {
    typed(body, key, errors, Value::as_object, "must be an object")
}

/// A field of the type `read` takes; absent and `null` are `None`, another type is the error
/// `expected`.
fn typed<'a, T: ?Sized>(
    body: &'a Map<String, Value>,
    key: &str,
    errors: &mut ValidationErrors,
    read: fn(&'a Value) -> Option<&'a T>,
    expected: &str,
) -> Option<&'a T> {
    match body.get(key) {
        None | Some(Value::Null) => None,
        Some(value) => {
            let read = read(value);
            if read.is_none() {
                errors.push(key, expected);
            }
            read
        }
    }
}

/// A JSON object as the domain keeps free-form data.
fn kept(map: &Map<String, Value>) -> KeptObject {
    // Read in place, without copying the body. Every JSON value is a kept value, so
    // `deserialize` cannot fail here.
    map.iter()
        .map(|(key, value)| (key.clone(), Kept::deserialize(value).unwrap_or(Kept::Null)))
        .collect()
}

/// `userData`: an object of strings; `null` entries are left out, other types reported.
fn user_data(
    body: &Map<String, Value>,
    errors: &mut ValidationErrors,
) -> Option<BTreeMap<String, String>> {
    let map = object(body, "userData", errors)?;
    let mut entries = BTreeMap::new();
    for (key, value) in map {
        match value {
            Value::Null => {}
            Value::String(text) => {
                entries.insert(key.clone(), text.clone());
            }
            _ => errors.push(format!("userData.{key}"), "must be a string"),
        }
    }
    Some(entries)
}

/// The edge's type errors, then the domain's value errors for fields not already reported.
fn merge<T>(
    mut edge: ValidationErrors,
    parsed: Result<T, ValidationErrors>,
) -> Result<T, ValidationErrors> {
    match parsed {
        Ok(value) if edge.is_empty() => Ok(value),
        Ok(_) => Err(edge),
        Err(domain) => {
            edge.extend_unreported(domain);
            if edge.is_empty() {
                edge.push("body", "is not a valid request");
            }
            Err(edge)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::object;
    use serde_json::json;

    fn fields(errors: &ValidationErrors) -> Vec<(&str, &str)> {
        errors
            .0
            .iter()
            .map(|e| (e.field.as_str(), e.message.as_str()))
            .collect()
    }

    fn good_deposit() -> Value {
        json!({"amount": "100.00", "currency": "RUB", "paymentMethod": "card", "userId": "u-1"})
    }

    #[test]
    fn a_good_deposit_parses_and_nulls_mean_absent() {
        let mut body = good_deposit();
        body["merchantOperationId"] = Value::Null;
        body["userData"] = json!({"email": "a@b.example", "country": null});
        let deposit = deposit(&object(body)).expect("valid");
        assert_eq!(deposit.common.amount.minor(), 10_000);
        assert!(deposit.common.merchant_operation_id.is_none());
        assert!(deposit.common.user_data.extra.is_empty());
    }

    #[test]
    fn wrong_types_are_reported_once_per_field() {
        let body = json!({"amount": 100, "currency": "RUB", "paymentMethod": "card",
                          "userId": "u-1", "requisites": "x", "userData": {"email": 5}});
        let errors = deposit(&object(body)).expect_err("invalid");
        assert_eq!(
            fields(&errors),
            vec![
                ("amount", "must be a string"),
                ("requisites", "must be an object"),
                ("userData.email", "must be a string"),
            ]
        );
    }

    #[test]
    fn unknown_fields_and_value_errors_are_reported_together() {
        let body = json!({"amount": "100", "currency": "rub", "paymentMethod": "cash",
                          "extra": 1, "userData": {"ipAddress": "x"}});
        let errors = deposit(&object(body)).expect_err("invalid");
        let names: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "extra",
                "amount",
                "currency",
                "paymentMethod",
                "userId",
                "userData.ipAddress"
            ]
        );
    }

    #[test]
    fn unknown_field_alone_refuses_an_otherwise_valid_body() {
        let mut body = good_deposit();
        body["amout"] = json!("1.00");
        let errors = deposit(&object(body)).expect_err("invalid");
        assert_eq!(fields(&errors), vec![("amout", "is not a known field")]);
    }

    #[test]
    fn user_data_must_be_an_object() {
        let mut body = good_deposit();
        body["userData"] = json!(["a"]);
        let errors = deposit(&object(body)).expect_err("invalid");
        assert_eq!(fields(&errors), vec![("userData", "must be an object")]);
    }

    #[test]
    fn withdrawals_need_requisites_of_their_method() {
        let body = json!({"amount": "10.00", "currency": "RUB", "paymentMethod": "sbp",
                          "userId": "u", "requisites": {"phone": 7}, "successUrl": "https://a.example"});
        let errors = withdrawal(&object(body)).expect_err("invalid");
        let names: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "successUrl",
                "requisites.phone",
                "requisites.accountName",
                "requisites.bankName"
            ]
        );
    }
}
