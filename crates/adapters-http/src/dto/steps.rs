//! Bodies of the user's steps: `{"fields": {...}}` for `/input`, `{"code": "..."}` for `/confirm`.

use std::collections::BTreeMap;

use domain::ValidationErrors;
use serde_json::{Map, Value};

/// Longest confirmation code accepted, in characters.
const MAX_CODE_CHARS: usize = 64;

fn unknown_keys(body: &Map<String, Value>, known: &str, errors: &mut ValidationErrors) {
    super::create::unknown_fields(body, &[known], "", errors);
}

/// The values of an `/input` body: `fields` must be an object of strings.
pub fn input(body: &Map<String, Value>) -> Result<BTreeMap<String, String>, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    unknown_keys(body, "fields", &mut errors);
    let mut values = BTreeMap::new();
    match body.get("fields") {
        None | Some(Value::Null) => errors.push("fields", "is required"),
        Some(Value::Object(map)) => {
            for (name, value) in map {
                match value {
                    Value::String(text) => {
                        values.insert(name.clone(), text.clone());
                    }
                    _ => errors.push(format!("fields.{name}"), "must be a string"),
                }
            }
        }
        Some(_) => errors.push("fields", "must be an object"),
    }
    errors.into_result().map(|()| values)
}

/// The code of a `/confirm` body: a string of 1 to 64 characters.
pub fn confirm(body: &Map<String, Value>) -> Result<String, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    unknown_keys(body, "code", &mut errors);
    let code = match body.get("code") {
        None | Some(Value::Null) => {
            errors.push("code", "is required");
            None
        }
        Some(Value::String(code)) if (1..=MAX_CODE_CHARS).contains(&code.chars().count()) => {
            Some(code.clone())
        }
        Some(Value::String(_)) => {
            errors.push("code", "must be 1 to 64 characters");
            None
        }
        Some(_) => {
            errors.push("code", "must be a string");
            None
        }
    };
    errors.into_result()?;
    code.ok_or_else(ValidationErrors::default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::object;
    use serde_json::json;

    fn names(errors: ValidationErrors) -> Vec<String> {
        errors.0.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn input_takes_an_object_of_strings() {
        let values = input(&object(json!({"fields": {"bank": "a", "name": "x"}}))).expect("ok");
        assert_eq!(values.len(), 2);
        let errors = input(&object(json!({"fields": {"bank": 1}, "x": 1}))).expect_err("bad");
        assert_eq!(names(errors), vec!["x", "fields.bank"]);
        let errors = input(&object(json!({"fields": ["a"]}))).expect_err("bad");
        assert_eq!(names(errors), vec!["fields"]);
        let errors = input(&object(json!({}))).expect_err("bad");
        assert_eq!(names(errors), vec!["fields"]);
    }

    #[test]
    fn confirm_takes_a_short_string_code() {
        assert_eq!(
            confirm(&object(json!({"code": "123456"}))).ok(),
            Some("123456".into())
        );
        for bad in [
            json!({}),
            json!({"code": 123456}),
            json!({"code": ""}),
            json!({"code": "x".repeat(65)}),
        ] {
            assert_eq!(names(confirm(&object(bad)).expect_err("bad")), vec!["code"]);
        }
    }
}
