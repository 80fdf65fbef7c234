//! A merchant's callbacks as it reads and requeues them (`GET /api/v1/callbacks`, `POST
//! /api/v1/callbacks/{id}/retry`, `POST /api/v1/callbacks/replay`): one direction's at a
//! time, the direction whose secret signed the request (a deposit's refunds and disputes are
//! signed as the deposit).

use crate::callback::CallbackState;
use crate::{Direction, DisputeId, MerchantId, OperationId, RefundId, Timestamp};

/// What a callback reports: an operation (`deposit`, `withdrawal`), a refund or a dispute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackKind {
    Operation(Direction),
    Refund,
    Dispute,
}

impl CallbackKind {
    /// Its `type`, as the callback's body names it.
    pub fn as_str(self) -> &'static str {
        match self {
            CallbackKind::Operation(direction) => direction.as_str(),
            CallbackKind::Refund => "refund",
            CallbackKind::Dispute => "dispute",
        }
    }
}

/// One attempt at a callback, as its merchant reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedAttempt {
    pub at: Timestamp,
    /// The HTTP status, if an answer came.
    pub http_status: Option<u16>,
    /// Why the attempt failed, if it did.
    pub error: Option<String>,
}

/// One callback, as its merchant reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedCallback {
    /// Its id, its `webhook-id` ([`crate::callback::callback_id`]).
    pub callback_id: uuid::Uuid,
    pub kind: CallbackKind,
    /// The operation, or the refunded or disputed deposit.
    pub operation_id: OperationId,
    pub refund_id: Option<RefundId>,
    pub dispute_id: Option<DisputeId>,
    pub state: CallbackState,
    /// Its number among its operation's callbacks (those queued before callbacks were
    /// numbered were numbered by the upgrade).
    pub sequence: u64,
    pub created_at: Timestamp,
    /// Oldest first.
    pub attempts: Vec<LoggedAttempt>,
}

impl LoggedCallback {
    pub fn cursor(&self) -> CallbackCursor {
        CallbackCursor {
            created_at: self.created_at,
            callback_id: self.callback_id,
        }
    }
}

/// A position in a merchant's callbacks, newest first: the page after it holds the callbacks
/// queued before the one it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallbackCursor {
    pub created_at: Timestamp,
    pub callback_id: uuid::Uuid,
}

impl CallbackCursor {
    /// Its text: 48 lower-case hex digits, safe in a URL and opaque to the merchant.
    pub fn encode(self) -> String {
        let mut bytes = [0u8; 24];
        bytes[..8].copy_from_slice(&self.created_at.millis().to_be_bytes());
        bytes[8..].copy_from_slice(self.callback_id.as_bytes());
        hex::encode(bytes)
    }

    /// The cursor `text` encodes; `None` for anything [`CallbackCursor::encode`] did not
    /// write.
    pub fn parse(text: &str) -> Option<CallbackCursor> {
        if text.len() != 48 || text.bytes().any(|b| b.is_ascii_uppercase()) {
            return None;
        }
        let bytes: [u8; 24] = hex::decode(text).ok()?.try_into().ok()?;
        let (at, id) = bytes.split_at(8);
        Some(CallbackCursor {
            created_at: Timestamp::from_millis(i64::from_be_bytes(at.try_into().ok()?)),
            callback_id: uuid::Uuid::from_slice(id).ok()?,
        })
    }
}

/// Whose callbacks: one merchant's, signed with its secret for one direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackOwner {
    pub merchant_id: MerchantId,
    pub direction: Direction,
}

/// Which callbacks a page holds: one owner's, in state `state` when given, queued at or after
/// `since` when given, older than `after` when given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackQuery {
    pub owner: CallbackOwner,
    pub state: Option<CallbackState>,
    pub since: Option<Timestamp>,
    pub after: Option<CallbackCursor>,
    /// At most this many, 1 to [`CallbackQuery::MAX_LIMIT`].
    pub limit: u32,
}

impl CallbackQuery {
    /// The most callbacks a page holds.
    pub const MAX_LIMIT: u32 = 200;
    /// How many a page holds when the merchant does not say.
    pub const DEFAULT_LIMIT: u32 = 50;
}

/// One page of callbacks, newest first, and where the next one starts (none: this was the
/// last).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackPage {
    pub callbacks: Vec<LoggedCallback>,
    pub next: Option<CallbackCursor>,
}

impl CallbackPage {
    /// The page of `query` out of `found`, which holds up to one more callback than the page
    /// does: that one's presence says there is a next page.
    pub fn of(query: &CallbackQuery, found: Vec<LoggedCallback>) -> CallbackPage {
        let (callbacks, next) = crate::keyset::page_of(query.limit, found, LoggedCallback::cursor);
        CallbackPage { callbacks, next }
    }
}

/// Which callbacks a requeue sends again, each on a fresh schedule, due at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requeue {
    /// One callback, by its id: whatever its state, unless an attempt at it is under way.
    One(uuid::Uuid),
    /// Every callback in `state` (failed or held) queued at or after `since`.
    Since {
        since: Timestamp,
        state: ReplayState,
    },
}

/// The states a replay takes callbacks from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayState {
    Failed,
    Held,
}

impl ReplayState {
    /// The text a replay's `status` names it by; `None` for anything else.
    pub fn parse(text: &str) -> Option<ReplayState> {
        match text {
            "failed" => Some(ReplayState::Failed),
            "held" => Some(ReplayState::Held),
            _ => None,
        }
    }

    pub fn state(self) -> CallbackState {
        match self {
            ReplayState::Failed => CallbackState::Failed,
            ReplayState::Held => CallbackState::Held,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_what_it_wrote_and_nothing_else() {
        let cursor = CallbackCursor {
            created_at: Timestamp::from_millis(1_764_000_000_123),
            callback_id: uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef),
        };
        let text = cursor.encode();
        assert_eq!(text.len(), 48);
        assert_eq!(CallbackCursor::parse(&text), Some(cursor));
        assert_eq!(CallbackCursor::parse(&text.to_uppercase()), None);
        assert_eq!(CallbackCursor::parse(&text[..46]), None);
        assert_eq!(CallbackCursor::parse("zz"), None);
    }

    fn logged(n: u128) -> LoggedCallback {
        LoggedCallback {
            callback_id: uuid::Uuid::from_u128(n),
            kind: CallbackKind::Refund,
            operation_id: crate::testkit::id(1),
            refund_id: None,
            dispute_id: None,
            state: CallbackState::Failed,
            sequence: 1,
            created_at: Timestamp::from_millis(1_000 - n as i64),
            attempts: Vec::new(),
        }
    }

    #[test]
    fn a_page_says_where_the_next_starts_only_when_one_more_was_found() {
        let query = CallbackQuery {
            owner: CallbackOwner {
                merchant_id: crate::MerchantId::parse("m1").expect("an id"),
                direction: Direction::Deposit,
            },
            state: None,
            since: None,
            after: None,
            limit: 2,
        };
        let full = CallbackPage::of(&query, vec![logged(1), logged(2), logged(3)]);
        assert_eq!(full.callbacks.len(), 2);
        assert_eq!(full.next, Some(logged(2).cursor()));
        let last = CallbackPage::of(&query, vec![logged(1), logged(2)]);
        assert_eq!(last.next, None);
    }

    #[test]
    fn a_replay_takes_failed_or_held_callbacks_only() {
        assert_eq!(ReplayState::parse("failed"), Some(ReplayState::Failed));
        assert_eq!(
            ReplayState::parse("held").map(ReplayState::state),
            Some(CallbackState::Held)
        );
        assert_eq!(ReplayState::parse("delivered"), None);
        assert_eq!(
            CallbackKind::Operation(Direction::Withdrawal).as_str(),
            "withdrawal"
        );
    }
}
