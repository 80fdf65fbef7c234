//! One sort of record (payments or refunds) by id, with the indexes by idempotency key and
//! by reference, and the idempotency rule they share.
//!
//! The maps are B-trees, not hash maps: a hash map grows by moving every record at once, under
//! the store's one lock, and at a few hundred thousand payments that stalled every request to
//! the simulator for 100 to 350 ms (seen in the benchmark as a stall of whichever run crossed
//! the size). A B-tree grows a node at a time.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Created, Store};
use crate::model::{Ends, Payment, Progress, Refund, RefundStatus, Status};

/// A payment or a refund, as a [`Ledger`] keeps it.
pub trait Record: Clone {
    /// Its status.
    type Status: Ends;
    /// Its id, `Idempotency-Key`, reference and creation body as received.
    fn names(&self) -> (&str, &str, &str, &Value);
    /// The store's ledger of its sort.
    fn ledger(store: &mut Store) -> &mut Ledger<Self>;
    /// Where it stands, to be moved on.
    fn progress_mut(&mut self) -> &mut Progress<Self::Status>;
}

impl Record for Payment {
    type Status = Status;
    fn names(&self) -> (&str, &str, &str, &Value) {
        let order = &self.order;
        (&self.id, &order.key, &order.reference, &order.request)
    }
    fn ledger(store: &mut Store) -> &mut Ledger<Self> {
        &mut store.payments
    }
    fn progress_mut(&mut self) -> &mut Progress<Status> {
        &mut self.progress
    }
}

impl Record for Refund {
    type Status = RefundStatus;
    fn names(&self) -> (&str, &str, &str, &Value) {
        (
            &self.id,
            &self.idempotency_key,
            &self.reference,
            &self.request,
        )
    }
    fn ledger(store: &mut Store) -> &mut Ledger<Self> {
        &mut store.refunds
    }
    fn progress_mut(&mut self) -> &mut Progress<RefundStatus> {
        &mut self.progress
    }
}

/// Records of one sort by id, with their indexes.
#[derive(Debug)]
pub struct Ledger<T> {
    by_id: BTreeMap<String, T>,
    by_key: BTreeMap<String, String>,
    by_reference: BTreeMap<String, String>,
}

impl<T> Default for Ledger<T> {
    fn default() -> Self {
        Self {
            by_id: BTreeMap::new(),
            by_key: BTreeMap::new(),
            by_reference: BTreeMap::new(),
        }
    }
}

impl<T: Record> Ledger<T> {
    /// A record by id.
    pub fn get(&self, id: &str) -> Option<&T> {
        self.by_id.get(id)
    }

    /// A record by reference.
    pub fn by_reference(&self, reference: &str) -> Option<&T> {
        self.by_reference.get(reference).and_then(|id| self.get(id))
    }

    /// Every record.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.by_id.values()
    }

    /// The answer to a creation under `key` of `reference` with `request` when one is known:
    /// the same key and body (and `same` holds) repeat it, any other match conflicts.
    pub(super) fn existing(
        &self,
        key: &str,
        reference: &str,
        request: &Value,
        same: impl FnOnce(&T) -> bool,
    ) -> Option<Created<T>> {
        if let Some(known) = self.by_key.get(key).and_then(|id| self.get(id)) {
            return Some(if known.names().3 == request && same(known) {
                Created::Repeat(known.clone())
            } else {
                Created::Conflict(known.clone())
            });
        }
        self.by_reference(reference)
            .map(|known| Created::Conflict(known.clone()))
    }

    /// Keeps a new record and answers it as created.
    pub(super) fn insert(&mut self, record: T) -> Created<T> {
        let (id, key, reference, _) = record.names();
        self.by_key.insert(key.to_owned(), id.to_owned());
        self.by_reference
            .insert(reference.to_owned(), id.to_owned());
        self.by_id.insert(id.to_owned(), record.clone());
        Created::New(record)
    }

    /// Applies `change` to a record's progress; the record if `change` says it moved.
    pub(super) fn update(
        &mut self,
        id: &str,
        change: impl FnOnce(&mut Progress<T::Status>) -> bool,
    ) -> Option<T> {
        let record = self.by_id.get_mut(id)?;
        change(record.progress_mut()).then(|| record.clone())
    }

    /// A record to change in place.
    pub(super) fn get_mut(&mut self, id: &str) -> Option<&mut T> {
        self.by_id.get_mut(id)
    }
}
