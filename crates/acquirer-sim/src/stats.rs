//! `GET /_sim/stats`: what has been paid out and refunded, so a test can spot money sent twice.

use std::collections::BTreeMap;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::model::{Kind, RefundStatus, Status};
use crate::store::Store;

/// A count and a sum of minor units.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Total {
    /// How many.
    pub count: u64,
    /// Their minor units.
    pub amount: i64,
}

/// Succeeded payouts and refunds under one reference.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct ByReference {
    /// Succeeded payouts.
    pub payouts: u64,
    /// Succeeded refunds.
    pub refunds: u64,
}

/// Succeeded payouts to one recipient.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct ByRecipient {
    /// How many.
    pub payouts: u64,
    /// Their minor units.
    pub amount: i64,
}

/// The whole stats answer.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Succeeded payouts.
    pub payouts: Total,
    /// Succeeded refunds.
    pub refunds: Total,
    /// Keyed by payout or refund reference.
    pub by_reference: BTreeMap<String, ByReference>,
    /// Keyed by the lower-case hex SHA-256 of the PAN or phone.
    pub by_recipient: BTreeMap<String, ByRecipient>,
}

/// Lower-case hex SHA-256 of a recipient, so stats never show a card number.
pub fn recipient_key(recipient: &str) -> String {
    hex::encode(Sha256::digest(recipient.as_bytes()))
}

/// Counts what has reached `succeeded`.
pub fn collect(store: &Store) -> Stats {
    let mut stats = Stats::default();
    for payment in store.payments() {
        if payment.kind != Kind::Payout || payment.status != Status::Succeeded {
            continue;
        }
        stats.payouts.count += 1;
        stats.payouts.amount += payment.amount;
        stats
            .by_reference
            .entry(payment.reference.clone())
            .or_default()
            .payouts += 1;
        if let Some(recipient) = &payment.recipient {
            let entry = stats
                .by_recipient
                .entry(recipient_key(recipient.as_str()))
                .or_default();
            entry.payouts += 1;
            entry.amount += payment.amount;
        }
    }
    for refund in store.refunds() {
        if refund.status != RefundStatus::Succeeded {
            continue;
        }
        stats.refunds.count += 1;
        stats.refunds.amount += refund.amount;
        stats
            .by_reference
            .entry(refund.reference.clone())
            .or_default()
            .refunds += 1;
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipient_key_is_hex_sha256() {
        assert_eq!(
            recipient_key("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn empty_store_has_empty_stats() {
        let json = serde_json::to_value(collect(&Store::default())).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({
                "payouts": {"count": 0, "amount": 0},
                "refunds": {"count": 0, "amount": 0},
                "byReference": {},
                "byRecipient": {}
            })
        );
    }
}
