//! The real clock and id generator.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;

use domain::ports::{Clock, IdGenerator};
use domain::{MerchantId, OperationId, RefundId, Timestamp};

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        Timestamp::from_millis(millis)
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// Operations and refunds get time-ordered (v7) UUIDs: a new row's key sorts after the
/// previous ones, so each insert lands on the right-hand page of the primary key and of
/// every index that leads with the id, instead of a random page of each (fewer pages
/// touched, far fewer full-page images in the write-ahead log after each checkpoint).
/// Merchants, created rarely, get random (v4) ones.
#[derive(Debug, Clone, Copy, Default)]
pub struct UuidIds;

impl IdGenerator for UuidIds {
    fn operation_id(&self) -> OperationId {
        OperationId::from_uuid(uuid::Uuid::now_v7())
    }

    fn merchant_id(&self) -> MerchantId {
        MerchantId::from_uuid(uuid::Uuid::new_v4())
    }

    fn refund_id(&self) -> RefundId {
        RefundId::from_uuid(uuid::Uuid::now_v7())
    }

    fn dispute_id(&self) -> domain::DisputeId {
        domain::DisputeId::from_uuid(uuid::Uuid::now_v7())
    }

    fn change_id(&self) -> uuid::Uuid {
        uuid::Uuid::now_v7()
    }
}

/// 32 random bytes as 64 hex characters.
pub fn new_secret() -> String {
    hex::encode(rand::random::<[u8; 32]>())
}

/// A generated console password: 20 characters of an alphabet without look-alikes
/// (about 110 bits).
pub fn new_password() -> String {
    use rand::seq::SliceRandom;
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::thread_rng();
    (0..20)
        .filter_map(|_| ALPHABET.choose(&mut rng).map(|&b| char::from(b)))
        .collect()
}
