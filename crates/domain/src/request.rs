//! Creation requests turned from raw fields into validated domain values.
//!
//! The HTTP edge checks JSON types and passes the raw strings here; every value
//! rule of contract section 3 lives in this module, and every bad field is reported.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::operation::OperationUrls;
use crate::{
    luhn_valid, mask_pan, Amount, Currency, Direction, HttpUrl, MerchantOperationId, PaymentMethod,
    UserData, UserId, ValidationErrors, ValueError, WithdrawalRequisites,
};

/// The raw fields of a creation request, as strings, after the edge checked JSON types.
#[derive(Debug, Clone, Default)]
pub struct RawRequest<'a> {
    pub amount: Option<&'a str>,
    pub currency: Option<&'a str>,
    pub payment_method: Option<&'a str>,
    pub user_id: Option<&'a str>,
    pub merchant_operation_id: Option<&'a str>,
    pub callback_url: Option<&'a str>,
    pub processing_url: Option<&'a str>,
    pub success_url: Option<&'a str>,
    pub fail_url: Option<&'a str>,
    pub requisites: Option<&'a Map<String, Value>>,
    pub user_data: Option<&'a BTreeMap<String, String>>,
}

/// The fields every creation request shares.
#[derive(Debug, Clone, PartialEq)]
pub struct Common {
    pub amount: Amount,
    pub currency: Currency,
    pub method: PaymentMethod,
    pub user_id: UserId,
    pub merchant_operation_id: Option<MerchantOperationId>,
    pub urls: OperationUrls,
    pub user_data: UserData,
}

/// A valid deposit request.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDeposit {
    pub common: Common,
    /// As given, with card numbers masked and CVCs dropped.
    pub requisites: Option<Map<String, Value>>,
}

/// A valid withdrawal request.
#[derive(Debug, Clone, PartialEq)]
pub struct NewWithdrawal {
    pub common: Common,
    pub requisites: WithdrawalRequisites,
}

fn required<'a>(
    errors: &mut ValidationErrors,
    field: &str,
    value: Option<&'a str>,
) -> Option<&'a str> {
    if value.is_none() {
        errors.push(field, "is required");
    }
    value
}

fn optional<T>(
    errors: &mut ValidationErrors,
    field: &str,
    value: Option<&str>,
    parse: impl FnOnce(&str) -> Result<T, ValueError>,
) -> Option<T> {
    value.and_then(|text| errors.check(field, parse(text)))
}

fn parse_common(
    direction: Direction,
    raw: &RawRequest<'_>,
    errors: &mut ValidationErrors,
) -> Option<Common> {
    let amount = required(errors, "amount", raw.amount)
        .and_then(|t| errors.check("amount", Amount::parse(t)));
    let currency = required(errors, "currency", raw.currency)
        .and_then(|t| errors.check("currency", Currency::parse(t)));
    let method = required(errors, "paymentMethod", raw.payment_method)
        .and_then(|t| errors.check("paymentMethod", PaymentMethod::parse_for(direction, t)));
    let user_id = required(errors, "userId", raw.user_id)
        .and_then(|t| errors.check("userId", UserId::parse(t)));
    let merchant_operation_id = optional(
        errors,
        "merchantOperationId",
        raw.merchant_operation_id,
        MerchantOperationId::parse,
    );
    let urls = OperationUrls {
        callback: optional(errors, "callbackUrl", raw.callback_url, HttpUrl::parse),
        success: optional(errors, "successUrl", raw.success_url, HttpUrl::parse),
        fail: optional(errors, "failUrl", raw.fail_url, HttpUrl::parse),
        processing: optional(errors, "processingUrl", raw.processing_url, HttpUrl::parse),
    };
    let user_data = match raw.user_data.map(UserData::parse) {
        None => Some(UserData::default()),
        Some(Ok(data)) => Some(data),
        Some(Err(more)) => {
            errors.0.extend(more.0);
            None
        }
    };
    Some(Common {
        amount: amount?,
        currency: currency?,
        method: method?,
        user_id: user_id?,
        merchant_operation_id,
        urls,
        user_data: user_data?,
    })
}

impl NewDeposit {
    /// Validates a deposit request, reporting every invalid field.
    pub fn parse(raw: &RawRequest<'_>) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let common = parse_common(Direction::Deposit, raw, &mut errors);
        errors.into_result()?;
        let common = common.ok_or_else(ValidationErrors::default)?;
        Ok(Self {
            common,
            requisites: raw.requisites.map(sanitize_requisites),
        })
    }
}

impl NewWithdrawal {
    /// Validates a withdrawal request, reporting every invalid field.
    pub fn parse(raw: &RawRequest<'_>) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::default();
        let common = parse_common(Direction::Withdrawal, raw, &mut errors);
        if raw.processing_url.is_some() || raw.success_url.is_some() || raw.fail_url.is_some() {
            for (field, given) in [
                ("processingUrl", raw.processing_url),
                ("successUrl", raw.success_url),
                ("failUrl", raw.fail_url),
            ] {
                if given.is_some() {
                    errors.push(field, "is not a field of withdrawals");
                }
            }
        }
        let requisites = match (raw.requisites, common.as_ref().map(|c| c.method)) {
            (None, _) => {
                errors.push("requisites", "is required");
                None
            }
            (Some(_), None) => None,
            (Some(map), Some(method)) => match withdrawal_requisites(method, map) {
                Ok(requisites) => Some(requisites),
                Err(more) => {
                    errors.0.extend(more.0);
                    None
                }
            },
        };
        errors.into_result()?;
        match (common, requisites) {
            (Some(common), Some(requisites)) => Ok(Self { common, requisites }),
            _ => Err(ValidationErrors::default()),
        }
    }
}

fn withdrawal_requisites(
    method: PaymentMethod,
    map: &Map<String, Value>,
) -> Result<WithdrawalRequisites, ValidationErrors> {
    let known: &[&str] = match method {
        PaymentMethod::Sbp => &["phone", "accountName", "bankName"],
        PaymentMethod::Card => &["pan", "cardholderName"],
        PaymentMethod::SbpQr
        | PaymentMethod::BankAPay
        | PaymentMethod::BankBPay
        | PaymentMethod::BankCPay => &[],
    };
    let mut errors = ValidationErrors::default();
    for (key, value) in map {
        let path = format!("requisites.{key}");
        if !known.contains(&key.as_str()) {
            errors.push(path, "is not a requisite of this payment method");
        } else if !value.is_string() && !value.is_null() {
            errors.push(path, "must be a string");
        }
    }
    errors.clone().into_result()?;
    let text = |key: &str| map.get(key).and_then(Value::as_str);
    match method {
        PaymentMethod::Sbp => {
            WithdrawalRequisites::sbp(text("phone"), text("accountName"), text("bankName"))
        }
        PaymentMethod::Card => WithdrawalRequisites::card(text("pan"), text("cardholderName")),
        PaymentMethod::SbpQr
        | PaymentMethod::BankAPay
        | PaymentMethod::BankBPay
        | PaymentMethod::BankCPay => {
            errors.push("paymentMethod", "is not a payout method");
            Err(errors)
        }
    }
}

/// Whether a string looks like a card number (13 to 19 digits passing Luhn).
fn is_card_number(text: &str) -> bool {
    (13..=19).contains(&text.len()) && luhn_valid(text)
}

/// Deposit requisites as stored: card numbers masked, `cvc`/`cvv`/`cvv2` keys dropped, at any depth.
pub fn sanitize_requisites(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(key, _)| !matches!(key.to_ascii_lowercase().as_str(), "cvc" | "cvv" | "cvv2"))
        .map(|(key, value)| (key.clone(), sanitize_value(value)))
        .collect()
}

fn sanitize_value(value: &Value) -> Value {
    match value {
        Value::String(text) if is_card_number(text) => Value::String(mask_pan(text)),
        Value::Object(map) => Value::Object(sanitize_requisites(map)),
        Value::Array(items) => Value::Array(items.iter().map(sanitize_value).collect()),
        other => other.clone(),
    }
}
