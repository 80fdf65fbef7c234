//! `GET /_sim/stats`: what has been paid out and refunded, so a test can spot money sent twice,
//! and the disputes with their evidence calls.

use std::collections::BTreeMap;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::model::{DisputeStatus, Kind, RefundStatus, Status};
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

/// Reads of payments (`GET /v1/payments/{id}` and `GET /v1/payments?reference=`) the API
/// answered, so a test can count how often the gateway asks about one payment.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reads {
    /// Every read answered.
    pub count: u64,
    /// Keyed by the payment's reference (for a read by reference, the one asked for, known or
    /// not).
    pub by_reference: BTreeMap<String, u64>,
}

impl Reads {
    /// Counts one read of `reference`.
    pub fn record(&mut self, reference: &str) {
        self.count += 1;
        *self.by_reference.entry(reference.to_owned()).or_default() += 1;
    }
}

/// A dispute's status and the evidence calls processed for it, so a test can prove the
/// gateway sent its evidence once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ByDispute {
    /// `open`, `won` or `lost`.
    pub status: DisputeStatus,
    /// Evidence calls the API processed for it.
    pub evidence: u64,
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
    /// Payment reads answered.
    pub reads: Reads,
    /// Every dispute, keyed by its id.
    pub disputes: BTreeMap<String, ByDispute>,
}

impl Total {
    /// Counts one more of `amount`.
    fn add(&mut self, amount: i64) {
        self.count += 1;
        self.amount += amount;
    }
}

/// Lower-case hex SHA-256 of a recipient, so stats never show a card number.
pub fn recipient_key(recipient: &str) -> String {
    hex::encode(Sha256::digest(recipient.as_bytes()))
}

/// Counts what has reached `succeeded`, with the payment reads answered so far and every
/// dispute.
pub fn collect(store: &Store, reads: Reads) -> Stats {
    let mut stats = Stats {
        reads,
        ..Stats::default()
    };
    let payouts = store.payments().iter().filter(|payment| {
        payment.order.kind == Kind::Payout && payment.progress.status == Status::Succeeded
    });
    for payment in payouts {
        let order = &payment.order;
        stats.payouts.add(order.amount);
        stats.by_reference(&order.reference).payouts += 1;
        if let Some(recipient) = &order.recipient {
            let entry = stats
                .by_recipient
                .entry(recipient_key(recipient.as_str()))
                .or_default();
            entry.payouts += 1;
            entry.amount += order.amount;
        }
    }
    let refunds = store
        .refunds()
        .iter()
        .filter(|refund| refund.progress.status == RefundStatus::Succeeded);
    for refund in refunds {
        stats.refunds.add(refund.amount);
        stats.by_reference(&refund.reference).refunds += 1;
    }
    for dispute in store.disputes().iter() {
        let entry = ByDispute {
            status: dispute.status,
            evidence: dispute.evidence,
        };
        stats.disputes.insert(dispute.id.clone(), entry);
    }
    stats
}

impl Stats {
    /// The counts under `reference`, new if there are none yet.
    fn by_reference(&mut self, reference: &str) -> &mut ByReference {
        self.by_reference.entry(reference.to_owned()).or_default()
    }
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
        let json =
            serde_json::to_value(collect(&Store::default(), Reads::default())).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({
                "payouts": {"count": 0, "amount": 0},
                "refunds": {"count": 0, "amount": 0},
                "byReference": {},
                "byRecipient": {},
                "reads": {"count": 0, "byReference": {}},
                "disputes": {}
            })
        );
    }

    #[test]
    fn reads_are_counted_per_reference() {
        let mut reads = Reads::default();
        for reference in ["op-1", "op-2", "op-1"] {
            reads.record(reference);
        }
        let json = serde_json::to_value(collect(&Store::default(), reads)).expect("serializes");
        assert_eq!(
            json["reads"],
            serde_json::json!({"count": 3, "byReference": {"op-1": 2, "op-2": 1}})
        );
    }
}
