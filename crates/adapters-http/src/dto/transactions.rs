//! `GET /api/v1/balance/transactions`: its query read into a domain query, and its answer.

use domain::transactions::{
    BalanceTransaction, Cursor, TransactionPage, TransactionQuery, TransactionType,
};
use domain::{format_minor, Currency, MerchantId, Timestamp, ValidationErrors, ValueError};
use serde::Serialize;

use super::query::{given_once, limit};

/// The query string's parameters, each at most once; unknown ones are left alone.
const PARAMETERS: [&str; 5] = ["currency", "from", "to", "after", "limit"];

/// The page `query` asks of `merchant`'s transactions; every bad parameter is reported.
pub fn read_query(
    merchant: &MerchantId,
    query: &str,
) -> Result<TransactionQuery, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let given = given_once(query, &PARAMETERS, &mut errors);
    let text = |name: &str| given.get(name).map(String::as_str);
    let currency = errors.required("currency", text("currency"), Currency::parse_active);
    let from = errors.optional("from", text("from"), Timestamp::parse_rfc3339);
    let to = errors.optional("to", text("to"), Timestamp::parse_rfc3339);
    let after = errors.optional("after", text("after"), |t| {
        Cursor::parse(t)
            .ok_or_else(|| ValueError::new("must be a `next` cursor of an earlier page"))
    });
    let limit = errors
        .optional("limit", text("limit"), |t| {
            limit(t, TransactionQuery::MAX_LIMIT)
        })
        .unwrap_or(TransactionQuery::DEFAULT_LIMIT);
    if let (Some(from), Some(to)) = (from, to) {
        if to < from {
            errors.push("to", "must not be before from");
        }
    }
    errors.into_result()?;
    Ok(TransactionQuery {
        merchant_id: merchant.clone(),
        // Reported above when missing or malformed.
        currency: currency.unwrap_or(Currency::RUB),
        from,
        to,
        after,
        limit,
    })
}

/// `{"transactions": [...], "next": CURSOR}` (`next` left out on the last page).
#[derive(Debug, Serialize)]
pub struct TransactionsView {
    transactions: Vec<TransactionView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TransactionView {
    id: i64,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    operation_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    refund_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dispute_id: Option<String>,
    amount: String,
    available_after: String,
    held_after: String,
    created_at: String,
}

impl TransactionsView {
    /// `page`'s transactions in `currency`'s form.
    pub fn new(page: &TransactionPage, currency: Currency) -> Self {
        Self {
            transactions: page
                .transactions
                .iter()
                .filter_map(|t| TransactionView::new(t, currency))
                .collect(),
            next: page.next.map(Cursor::encode),
        }
    }
}

impl TransactionView {
    /// The view of a merchant's entry; `None` for the fee account's, which the store never
    /// hands out here.
    fn new(t: &BalanceTransaction, currency: Currency) -> Option<Self> {
        Some(Self {
            id: t.id,
            kind: TransactionType::of(t.kind)?.as_str(),
            operation_id: t.operation_id.map(|id| id.to_string()),
            refund_id: t.refund_id.map(|id| id.to_string()),
            dispute_id: t.dispute_id.map(|id| id.to_string()),
            amount: format_minor(t.amount(), currency),
            available_after: format_minor(t.available_after, currency),
            held_after: format_minor(t.held_after, currency),
            created_at: t.created_at.to_rfc3339(),
        })
    }
}

#[cfg(test)]
#[path = "transactions_tests.rs"]
mod tests;
