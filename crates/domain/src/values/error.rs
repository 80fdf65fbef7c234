use std::fmt;

use super::card_text::mask_card_numbers;

/// Why one value was refused; the message is written for the merchant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ValueError(pub String);

impl ValueError {
    /// `Ok(())` if `ok`, else this error with `message`.
    pub fn unless(ok: bool, message: &str) -> Result<(), ValueError> {
        if ok {
            Ok(())
        } else {
            Err(ValueError::new(message))
        }
    }

    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// One invalid field of a request, named by its dotted path (`requisites.phone`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    /// The error of `field`, whose path has its card numbers masked: a path names the keys
    /// a merchant sent (`userData.{key}`), and an answer never shows a card number in full.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        let field = field.into();
        Self {
            field: mask_card_numbers(&field).into_owned(),
            message: message.into(),
        }
    }
}

/// Every invalid field of one request, in the order they were found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationErrors(pub Vec<FieldError>);

impl ValidationErrors {
    pub fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Keeps the value when it parsed, records the error under `field` otherwise.
    /// The parsed `value` of a required field; a missing one is reported as `is required`,
    /// an invalid one with its parser's message.
    pub fn required<T>(
        &mut self,
        field: &str,
        value: Option<&str>,
        parse: impl FnOnce(&str) -> Result<T, ValueError>,
    ) -> Option<T> {
        match value {
            Some(text) => self.optional(field, Some(text), parse),
            None => {
                self.push(field, "is required");
                None
            }
        }
    }

    /// The parsed `value` of an optional field, if given; an invalid one is reported.
    pub fn optional<T>(
        &mut self,
        field: &str,
        value: Option<&str>,
        parse: impl FnOnce(&str) -> Result<T, ValueError>,
    ) -> Option<T> {
        value.and_then(|text| self.check(field, parse(text)))
    }

    pub fn check<T>(&mut self, field: &str, result: Result<T, ValueError>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.push(field, error.0);
                None
            }
        }
    }

    /// Adds the errors of `more` about fields not reported yet (a field refused for its type
    /// is not refused again as missing).
    /// Identical entries (the same field and message twice) are kept once.
    pub fn extend_unreported(&mut self, more: ValidationErrors) {
        let reported: Vec<String> = self.0.iter().map(|e| e.field.clone()).collect();
        for error in more.0 {
            if !reported.contains(&error.field) && !self.0.contains(&error) {
                self.0.push(error);
            }
        }
    }

    /// `Err(self)` when any field was invalid.
    pub fn into_result(self) -> Result<(), ValidationErrors> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self)
        }
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        f.write_str(&parts.join("; "))
    }
}

impl std::error::Error for ValidationErrors {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_path_never_shows_a_card_number() {
        let error = FieldError::new("userData.4242 4242 4242 4242", "must be a string");
        assert_eq!(error.field, "userData.424242******4242");
        assert_eq!(
            FieldError::new("requisites.list.0", "x").field,
            "requisites.list.0"
        );
    }
}
