//! Creation requests turned from raw fields into validated domain values.
//!
//! The HTTP edge checks JSON types and passes the raw strings (and the requisites as a
//! [`KeptObject`]) here; every field rule of docs/api.md lives in this module, and every bad
//! field is reported. Fields are named as the API names them.

use std::collections::BTreeMap;

use crate::operation::OperationUrls;
use crate::{
    sanitize_requisites, Amount, Currency, Direction, HttpUrl, Kept, KeptObject,
    MerchantOperationId, PaymentMethod, UserData, UserId, ValidationErrors, WithdrawalRequisites,
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
    pub requisites: Option<&'a KeptObject>,
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
    /// As given, with card numbers masked and card security codes dropped
    /// ([`sanitize_requisites`]).
    pub requisites: Option<KeptObject>,
}

/// A valid withdrawal request.
#[derive(Debug, Clone, PartialEq)]
pub struct NewWithdrawal {
    pub common: Common,
    pub requisites: WithdrawalRequisites,
}

fn parse_common(
    direction: Direction,
    raw: &RawRequest<'_>,
    errors: &mut ValidationErrors,
) -> Option<Common> {
    // The currency decides the amount's fraction digits; a malformed one reads two.
    let amount_currency = raw
        .currency
        .and_then(|text| Currency::parse(text).ok())
        .unwrap_or(Currency::NONE);
    let amount = errors.required("amount", raw.amount, |text| {
        Amount::parse(text, amount_currency)
    });
    let currency = errors.required("currency", raw.currency, Currency::parse);
    let method = errors.required("paymentMethod", raw.payment_method, |t| {
        PaymentMethod::parse_for(direction, t)
    });
    let user_id = errors.required("userId", raw.user_id, UserId::parse);
    let merchant_operation_id = errors.optional(
        "merchantOperationId",
        raw.merchant_operation_id,
        MerchantOperationId::parse,
    );
    let urls = OperationUrls {
        callback: errors.optional("callbackUrl", raw.callback_url, HttpUrl::parse),
        success: errors.optional("successUrl", raw.success_url, HttpUrl::parse),
        fail: errors.optional("failUrl", raw.fail_url, HttpUrl::parse),
        processing: errors.optional("processingUrl", raw.processing_url, HttpUrl::parse),
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
        if let Some(requisites) = raw.requisites {
            check_deposit_requisites(requisites, &mut errors);
        }
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
        let without_page_urls = RawRequest {
            processing_url: None,
            success_url: None,
            fail_url: None,
            ..raw.clone()
        };
        let common = parse_common(Direction::Withdrawal, &without_page_urls, &mut errors);
        for (field, given) in [
            ("processingUrl", raw.processing_url),
            ("successUrl", raw.success_url),
            ("failUrl", raw.fail_url),
        ] {
            if given.is_some() {
                errors.push(field, "is not a field of withdrawals");
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
    map: &KeptObject,
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
    for (key, value) in map.iter() {
        let path = format!("requisites.{key}");
        if !known.contains(&key.as_str()) {
            errors.push(path, "is not a requisite of this payment method");
        } else if !matches!(value, Kept::Text(_) | Kept::Null) {
            errors.push(path, "must be a string");
        }
    }
    let text = |key: &str| map.text(key);
    let parsed = match method {
        PaymentMethod::Sbp => {
            WithdrawalRequisites::sbp(text("phone"), text("accountName"), text("bankName"))
        }
        PaymentMethod::Card => WithdrawalRequisites::card(text("pan"), text("cardholderName")),
        PaymentMethod::SbpQr
        | PaymentMethod::BankAPay
        | PaymentMethod::BankBPay
        | PaymentMethod::BankCPay => {
            errors.push("paymentMethod", "is not a payout method");
            return Err(errors);
        }
    };
    match parsed {
        Ok(requisites) if errors.is_empty() => Ok(requisites),
        Ok(_) => Err(errors),
        Err(more) => {
            errors.extend_unreported(more);
            Err(errors)
        }
    }
}

/// Deposit requisites are kept as given, so every key and string in them, at any depth, must
/// be text the gateway stores: no control characters. Errors are named by their dotted path
/// (`requisites.card.holder`, `requisites.list.0`).
fn check_deposit_requisites(map: &KeptObject, errors: &mut ValidationErrors) {
    fn walk(path: &str, value: &Kept, errors: &mut ValidationErrors) {
        match value {
            Kept::Text(text) => {
                if let Err(error) = crate::no_control_characters(text) {
                    errors.push(path, error.0);
                }
            }
            Kept::Object(map) => {
                for (key, value) in map.iter() {
                    if key.chars().any(crate::is_refused_control) {
                        errors.push(path, format!("keys {}", crate::CONTROL_CHARACTERS));
                    } else {
                        walk(&format!("{path}.{key}"), value, errors);
                    }
                }
            }
            Kept::List(items) => {
                for (index, item) in items.iter().enumerate() {
                    walk(&format!("{path}.{index}"), item, errors);
                }
            }
            Kept::Null | Kept::Bool(_) | Kept::Number(_) => {}
        }
    }
    for (key, value) in map.iter() {
        if key.chars().any(crate::is_refused_control) {
            errors.push("requisites", format!("keys {}", crate::CONTROL_CHARACTERS));
        } else {
            walk(&format!("requisites.{key}"), value, errors);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::{json, Value};

    use super::*;
    use crate::FieldError;

    fn kept(value: Value) -> KeptObject {
        serde_json::from_value(value).unwrap()
    }

    fn json_of(object: KeptObject) -> Value {
        serde_json::to_value(object).unwrap()
    }

    /// The fields every creation request must have, in the order they are reported.
    const REQUIRED: [&str; 4] = ["amount", "currency", "paymentMethod", "userId"];

    fn fields(errors: &ValidationErrors) -> Vec<&str> {
        errors.0.iter().map(|e| e.field.as_str()).collect()
    }

    fn deposit_raw() -> RawRequest<'static> {
        RawRequest {
            amount: Some("100.00"),
            currency: Some("RUB"),
            payment_method: Some("card"),
            user_id: Some("user-7"),
            ..RawRequest::default()
        }
    }

    fn sbp_requisites() -> KeptObject {
        kept(json!({"phone": "+79001234567", "accountName": "Ivan Ivanov", "bankName": "Bank A"}))
    }

    fn card_requisites() -> KeptObject {
        kept(json!({"pan": "4242424242424242", "cardholderName": "IVAN IVANOV"}))
    }

    fn withdrawal_errors(method: &str, requisites: &KeptObject) -> Vec<String> {
        let raw = RawRequest {
            payment_method: Some(method),
            requisites: Some(requisites),
            ..deposit_raw()
        };
        let errors = NewWithdrawal::parse(&raw).unwrap_err();
        errors.0.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn a_full_deposit_request_parses_into_values() {
        let user_data: BTreeMap<String, String> = [
            ("email".to_string(), "u@shop.example".to_string()),
            ("ipAddress".to_string(), "10.0.0.1".to_string()),
            ("country".to_string(), "RU".to_string()),
        ]
        .into();
        let raw = RawRequest {
            merchant_operation_id: Some("order-1"),
            callback_url: Some("https://shop.example/cb"),
            success_url: Some("https://shop.example/ok"),
            fail_url: Some("https://shop.example/fail"),
            processing_url: Some("https://shop.example/wait"),
            user_data: Some(&user_data),
            payment_method: Some("bank_c_pay"),
            ..deposit_raw()
        };

        let deposit = NewDeposit::parse(&raw).unwrap();

        let c = &deposit.common;
        assert_eq!(c.amount.minor(), 10_000);
        assert_eq!(c.currency, Currency::RUB);
        assert_eq!(c.method, PaymentMethod::BankCPay);
        assert_eq!(c.user_id.as_str(), "user-7");
        assert_eq!(
            c.merchant_operation_id.as_ref().map(|m| m.as_str()),
            Some("order-1")
        );
        let urls = &c.urls;
        for (url, given) in [
            (&urls.callback, "https://shop.example/cb"),
            (&urls.success, "https://shop.example/ok"),
            (&urls.fail, "https://shop.example/fail"),
            (&urls.processing, "https://shop.example/wait"),
        ] {
            assert_eq!(url.as_ref().map(|u| u.as_str()), Some(given));
        }
        assert_eq!(c.user_data.entries(), user_data);
        assert_eq!(deposit.requisites, None);
    }

    #[test]
    fn every_missing_required_field_is_reported_together() {
        let errors = NewDeposit::parse(&RawRequest::default()).unwrap_err();
        assert_eq!(fields(&errors), REQUIRED);
        assert!(errors.0.iter().all(|e| e.message == "is required"));

        let errors = NewWithdrawal::parse(&RawRequest::default()).unwrap_err();
        assert_eq!(fields(&errors), [&REQUIRED[..], &["requisites"]].concat());
    }

    #[test]
    fn every_bad_value_is_reported_together() {
        let user_data: BTreeMap<String, String> =
            [("email".to_string(), "not-an-address".to_string())].into();
        let long_url = format!("https://shop.example/{}", "x".repeat(2048));
        let raw = RawRequest {
            amount: Some("100"),
            currency: Some("rub"),
            payment_method: Some("cash"),
            user_id: Some(""),
            merchant_operation_id: Some("has space"),
            callback_url: Some("ftp://shop.example/cb"),
            success_url: Some("/relative"),
            fail_url: Some(&long_url),
            processing_url: Some("shop.example"),
            user_data: Some(&user_data),
            requisites: None,
        };

        let errors = NewDeposit::parse(&raw).unwrap_err();

        assert_eq!(fields(&errors)[..4], REQUIRED, "the required fields first");
        assert_eq!(
            fields(&errors)[4..],
            vec![
                "merchantOperationId",
                "callbackUrl",
                "successUrl",
                "failUrl",
                "processingUrl",
                "userData.email",
            ]
        );
        assert!(errors
            .to_string()
            .starts_with("amount: must be a decimal string"));
    }

    #[test]
    fn amounts_follow_the_two_digit_rule() {
        for (amount, ok) in [
            ("0.01", true),
            ("999999999999999.99", true),
            ("0.00", false),
            ("1.5", false),
            ("1.500", false),
            ("-1.00", false),
            ("01.00", false),
            ("1000000000000000.00", false),
        ] {
            let raw = RawRequest {
                amount: Some(amount),
                ..deposit_raw()
            };
            let result = NewDeposit::parse(&raw);
            assert_eq!(result.is_ok(), ok, "{amount}");
            if let Err(errors) = result {
                assert_eq!(fields(&errors), vec!["amount"], "{amount}");
            }
        }
    }

    #[test]
    fn any_well_formed_currency_parses_and_the_route_decides() {
        let raw = RawRequest {
            currency: Some("USD"),
            ..deposit_raw()
        };
        assert_eq!(
            NewDeposit::parse(&raw).unwrap().common.currency.as_str(),
            "USD"
        );
        for bad in ["usd", "RUBL", "R1B", ""] {
            let raw = RawRequest {
                currency: Some(bad),
                ..deposit_raw()
            };
            assert_eq!(
                fields(&NewDeposit::parse(&raw).unwrap_err()),
                vec!["currency"]
            );
        }
    }

    #[test]
    fn the_currency_decides_the_fraction_digits_of_the_amount() {
        let parse = |amount, currency| {
            NewDeposit::parse(&RawRequest {
                amount: Some(amount),
                currency: Some(currency),
                ..deposit_raw()
            })
            .map(|d| d.common.amount.minor())
            .map_err(|errors| {
                let named: Vec<String> = fields(&errors).into_iter().map(str::to_owned).collect();
                named
            })
        };
        assert_eq!(parse("1500", "JPY"), Ok(1500));
        assert_eq!(parse("1500.00", "JPY"), Err(vec!["amount".to_owned()]));
        assert_eq!(parse("1.250", "KWD"), Ok(1250));
        assert_eq!(parse("1.25", "KWD"), Err(vec!["amount".to_owned()]));
        // A code that is not active, or a malformed one, reads two digits.
        assert_eq!(parse("10.00", "XXX"), Ok(1000));
        assert_eq!(parse("10.00", "ABC"), Ok(1000));
        assert_eq!(parse("10.00", "jpy"), Err(vec!["currency".to_owned()]));
        assert_eq!(
            parse("10", "jpy"),
            Err(vec!["amount".to_owned(), "currency".to_owned()])
        );
    }

    #[test]
    fn payment_methods_depend_on_the_direction() {
        for method in Direction::Deposit.methods() {
            let raw = RawRequest {
                payment_method: Some(method.as_str()),
                ..deposit_raw()
            };
            assert_eq!(NewDeposit::parse(&raw).unwrap().common.method, *method);
        }
        let reqs = sbp_requisites();
        for method in ["sbp_qr", "bank_a_pay", "Card", "cash"] {
            let fields = withdrawal_errors(method, &reqs);
            assert_eq!(
                fields,
                vec!["paymentMethod"],
                "{method}: requisites not judged"
            );
        }
    }

    #[test]
    fn field_lengths_follow_the_contract() {
        let long_moid = "x".repeat(129);
        let long_user = "ж".repeat(129);
        let raw = RawRequest {
            merchant_operation_id: Some(&long_moid),
            user_id: Some(&long_user),
            ..deposit_raw()
        };
        assert_eq!(
            fields(&NewDeposit::parse(&raw).unwrap_err()),
            vec!["userId", "merchantOperationId"]
        );
        let moid = "!~".repeat(64);
        let user = "ж".repeat(128);
        let raw = RawRequest {
            merchant_operation_id: Some(&moid),
            user_id: Some(&user),
            ..deposit_raw()
        };
        assert!(NewDeposit::parse(&raw).is_ok());
    }

    #[test]
    fn user_data_errors_are_named_by_their_dotted_path() {
        let user_data: BTreeMap<String, String> = [
            ("email".to_string(), "a@b.example".to_string()),
            ("ipAddress".to_string(), "256.0.0.1".to_string()),
        ]
        .into();
        let raw = RawRequest {
            user_data: Some(&user_data),
            ..deposit_raw()
        };
        assert_eq!(
            fields(&NewDeposit::parse(&raw).unwrap_err()),
            vec!["userData.ipAddress"]
        );
    }

    #[test]
    fn sbp_payouts_take_phone_account_name_and_bank_name() {
        let reqs = sbp_requisites();
        let raw = RawRequest {
            payment_method: Some("sbp"),
            requisites: Some(&reqs),
            ..deposit_raw()
        };
        let payout = NewWithdrawal::parse(&raw).unwrap();
        assert_eq!(payout.common.method, PaymentMethod::Sbp);
        assert_eq!(
            payout.requisites,
            WithdrawalRequisites::sbp(Some("+79001234567"), Some("Ivan Ivanov"), Some("Bank A"))
                .unwrap()
        );
        assert_eq!(payout.requisites.to_kept(), reqs);
    }

    #[test]
    fn card_payouts_take_a_luhn_valid_pan_and_holder_and_store_it_masked() {
        let reqs = card_requisites();
        let raw = RawRequest {
            requisites: Some(&reqs),
            ..deposit_raw()
        };
        let payout = NewWithdrawal::parse(&raw).unwrap();
        assert_eq!(
            json_of(payout.requisites.to_kept()),
            json!({"pan": "424242******4242", "cardholderName": "IVAN IVANOV"})
        );
        assert!(!format!("{payout:?}").contains("4242424242424242"));
    }

    #[test]
    fn missing_and_bad_requisites_are_reported_per_field() {
        let empty = KeptObject::new();
        assert_eq!(
            withdrawal_errors("sbp", &empty),
            vec![
                "requisites.phone",
                "requisites.accountName",
                "requisites.bankName"
            ]
        );
        assert_eq!(
            withdrawal_errors("card", &empty),
            vec!["requisites.pan", "requisites.cardholderName"]
        );
        let bad = json!({"phone": "89001234567", "accountName": "", "bankName": "x".repeat(129)});
        assert_eq!(
            withdrawal_errors("sbp", &kept(bad)),
            vec![
                "requisites.phone",
                "requisites.accountName",
                "requisites.bankName"
            ]
        );
        let bad = json!({"pan": "4242424242424241", "cardholderName": "IVAN"});
        assert_eq!(
            withdrawal_errors("card", &kept(bad)),
            vec!["requisites.pan"]
        );
    }

    #[test]
    fn requisites_of_another_method_or_unknown_keys_are_refused() {
        let mut reqs = sbp_requisites();
        reqs.insert("pan", "4242424242424242");
        reqs.insert("memo", "hi");
        assert_eq!(
            withdrawal_errors("sbp", &reqs),
            vec!["requisites.memo", "requisites.pan"]
        );
        assert_eq!(
            withdrawal_errors("card", &sbp_requisites()),
            vec![
                "requisites.accountName",
                "requisites.bankName",
                "requisites.phone",
                "requisites.pan",
                "requisites.cardholderName",
            ]
        );
        assert_eq!(
            withdrawal_errors("sbp", &card_requisites()),
            vec![
                "requisites.cardholderName",
                "requisites.pan",
                "requisites.phone",
                "requisites.accountName",
                "requisites.bankName",
            ]
        );
    }

    #[test]
    fn a_bad_type_is_reported_once_and_other_requisites_still_judged() {
        let reqs = json!({"phone": 7, "accountName": "Ivan\u{0}"});
        let errors = {
            let map = kept(reqs);
            let raw = RawRequest {
                payment_method: Some("sbp"),
                requisites: Some(&map),
                ..deposit_raw()
            };
            NewWithdrawal::parse(&raw).unwrap_err()
        };
        assert_eq!(
            errors.0,
            vec![
                FieldError::new("requisites.phone", "must be a string"),
                FieldError::new("requisites.accountName", crate::CONTROL_CHARACTERS),
                FieldError::new("requisites.bankName", "is required"),
            ]
        );
    }

    #[test]
    fn deposit_requisites_refuse_control_characters_at_any_depth() {
        let given = json!({
            "note": "a\u{0}b",
            "card": {"holder": "IVAN\nIVANOV", "ok": "fine"},
            "list": ["x", "y\u{7f}"],
            "bad\u{1}key": "v",
            "n": 5,
        });
        let given = kept(given);
        let raw = RawRequest {
            requisites: Some(&given),
            ..deposit_raw()
        };
        let errors = NewDeposit::parse(&raw).unwrap_err();
        assert_eq!(
            fields(&errors),
            vec![
                "requisites",
                "requisites.card.holder",
                "requisites.list.1",
                "requisites.note"
            ]
        );
    }

    #[test]
    fn requisite_values_must_be_strings_and_null_means_missing() {
        let reqs = json!({"phone": 79001234567_u64, "accountName": ["Ivan"], "bankName": {"n": 1}});
        assert_eq!(
            withdrawal_errors("sbp", &kept(reqs)),
            vec![
                "requisites.accountName",
                "requisites.bankName",
                "requisites.phone"
            ]
        );
        let raw_errors = {
            let reqs = json!({"pan": null, "cardholderName": "IVAN"});
            let map = kept(reqs);
            let raw = RawRequest {
                requisites: Some(&map),
                ..deposit_raw()
            };
            NewWithdrawal::parse(&raw).unwrap_err()
        };
        assert_eq!(
            raw_errors.0,
            vec![FieldError::new("requisites.pan", "is required")]
        );
    }

    #[test]
    fn withdrawals_refuse_success_fail_and_processing_urls() {
        let reqs = card_requisites();
        let raw = RawRequest {
            requisites: Some(&reqs),
            callback_url: Some("https://shop.example/cb"),
            success_url: Some("https://shop.example/ok"),
            fail_url: Some("https://shop.example/fail"),
            processing_url: Some("https://shop.example/wait"),
            ..deposit_raw()
        };
        let errors = NewWithdrawal::parse(&raw).unwrap_err();
        assert_eq!(
            fields(&errors),
            vec!["processingUrl", "successUrl", "failUrl"]
        );
        assert!(errors
            .0
            .iter()
            .all(|e| e.message == "is not a field of withdrawals"));

        let raw = RawRequest {
            requisites: Some(&reqs),
            callback_url: Some("https://shop.example/cb"),
            ..deposit_raw()
        };
        let payout = NewWithdrawal::parse(&raw).unwrap();
        assert_eq!(
            payout.common.urls.callback.map(|u| u.to_string()),
            Some("https://shop.example/cb".into())
        );
    }

    #[test]
    fn deposit_requisites_are_stored_sanitized() {
        let given = json!({
            "card": {"number": "4000000000000002", "CVC": "123", "cid": "7319"},
            "note": "paid with 4242/4242/4242/4242 exp 12/28",
        });
        let given = kept(given);
        let raw = RawRequest {
            requisites: Some(&given),
            ..deposit_raw()
        };
        let deposit = NewDeposit::parse(&raw).unwrap();
        assert_eq!(
            deposit.requisites.map(json_of),
            Some(json!({
                "card": {"number": "400000******0002"},
                "note": "paid with 424242******4242 exp 12/28",
            }))
        );
    }

    #[test]
    fn user_data_is_kept_without_card_data_and_identifiers_as_given() {
        let user_data: BTreeMap<String, String> = [
            ("note", "card 5555-5555-5555-4444 thanks"),
            ("Cvc2", "737"),
            ("country", "RU"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let raw = RawRequest {
            user_id: Some("4242424242424242"),
            merchant_operation_id: Some("4000-0000-0000-0002"),
            user_data: Some(&user_data),
            ..deposit_raw()
        };

        let deposit = NewDeposit::parse(&raw).unwrap();

        let common = &deposit.common;
        assert_eq!(common.user_id.as_str(), "4242424242424242");
        assert_eq!(
            common.merchant_operation_id.as_ref().map(|m| m.as_str()),
            Some("4000-0000-0000-0002")
        );
        let kept: Vec<(&str, &str)> = common
            .user_data
            .extra
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            kept,
            [("country", "RU"), ("note", "card 555555******4444 thanks")]
        );
    }
}
