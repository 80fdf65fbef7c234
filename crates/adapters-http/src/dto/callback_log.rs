//! `/api/v1/callbacks`: the `direction` every path takes in its query (read first: it picks
//! the secret), a page's query, a replay's body, and the answers.

use domain::callback::CallbackState;
use domain::callback_log::{
    CallbackCursor, CallbackOwner, CallbackPage, CallbackQuery, LoggedAttempt, LoggedCallback,
    ReplayState, Requeue,
};
use domain::{Direction, Timestamp, ValidationErrors, ValueError};
use serde::Serialize;
use serde_json::{Map, Value};

use super::create::{string, unknown_fields};
use super::query::{given_once, limit};

/// The query string's parameters, each at most once; unknown ones are left alone.
const PARAMETERS: [&str; 5] = ["direction", "status", "since", "after", "limit"];

/// The direction whose secret signs a request under `/api/v1/callbacks`: `direction` in its
/// query, `deposit` or `withdrawal`, given once.
pub fn direction(query: &str) -> Result<Direction, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let given = given_once(query, &PARAMETERS, &mut errors);
    errors.0.retain(|e| e.field == "direction");
    let direction = errors.required(
        "direction",
        given.get("direction").map(String::as_str),
        Direction::parse,
    );
    errors.into_result()?;
    // Reported above when missing or malformed.
    Ok(direction.unwrap_or(Direction::Deposit))
}

/// The page `query` asks of `owner`'s callbacks; every bad parameter is reported.
pub fn read_query(owner: CallbackOwner, query: &str) -> Result<CallbackQuery, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let given = given_once(query, &PARAMETERS, &mut errors);
    let text = |name: &str| given.get(name).map(String::as_str);
    let state = errors.optional("status", text("status"), |t| {
        CallbackState::parse(t)
            .ok_or_else(|| ValueError::new("must be pending, held, failed or delivered"))
    });
    let since = errors.optional("since", text("since"), Timestamp::parse_rfc3339);
    let after = errors.optional("after", text("after"), |t| {
        CallbackCursor::parse(t)
            .ok_or_else(|| ValueError::new("must be a `next` cursor of an earlier page"))
    });
    let limit = errors
        .optional("limit", text("limit"), |t| {
            limit(t, CallbackQuery::MAX_LIMIT)
        })
        .unwrap_or(CallbackQuery::DEFAULT_LIMIT);
    errors.into_result()?;
    Ok(CallbackQuery {
        owner,
        state,
        since,
        after,
        limit,
    })
}

/// The fields a replay's body has.
const REPLAY_FIELDS: [&str; 2] = ["since", "status"];

/// A replay from its body `{"since": RFC3339, "status": "failed"|"held"}`, both required.
pub fn replay(body: &Map<String, Value>) -> Result<Requeue, ValidationErrors> {
    let mut errors = ValidationErrors::default();
    unknown_fields(body, &REPLAY_FIELDS, "", &mut errors);
    let since = string(body, "since", &mut errors);
    let status = string(body, "status", &mut errors);
    let mut values = ValidationErrors::default();
    let since = values.required("since", since, Timestamp::parse_rfc3339);
    let state = values.required("status", status, |t| {
        ReplayState::parse(t).ok_or_else(|| ValueError::new("must be failed or held"))
    });
    errors.extend_unreported(values);
    match (since, state) {
        (Some(since), Some(state)) if errors.is_empty() => Ok(Requeue::Since { since, state }),
        _ => Err(errors),
    }
}

/// A retry's body: exactly `{}`.
pub fn retry(body: &Map<String, Value>) -> Result<(), ValidationErrors> {
    let mut errors = ValidationErrors::default();
    unknown_fields(body, &[], "", &mut errors);
    errors.into_result()
}

/// `{"requeued": N}`.
#[derive(Debug, Serialize)]
pub struct Requeued {
    pub requeued: u64,
}

/// `{"callbacks": [...], "next": CURSOR}` (`next` left out on the last page).
#[derive(Debug, Serialize)]
pub struct CallbacksView {
    callbacks: Vec<CallbackView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

impl CallbacksView {
    pub fn new(page: &CallbackPage) -> Self {
        Self {
            callbacks: page.callbacks.iter().map(CallbackView::new).collect(),
            next: page.next.map(CallbackCursor::encode),
        }
    }
}

/// One callback: every field present, `null` when it has no value.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CallbackView {
    callback_id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    operation_id: String,
    refund_id: Option<String>,
    dispute_id: Option<String>,
    status: &'static str,
    sequence: u64,
    created_at: String,
    attempts: Vec<AttemptView>,
}

impl CallbackView {
    fn new(callback: &LoggedCallback) -> Self {
        Self {
            callback_id: callback.callback_id.hyphenated().to_string(),
            kind: callback.kind.as_str(),
            operation_id: callback.operation_id.to_string(),
            refund_id: callback.refund_id.map(|id| id.to_string()),
            dispute_id: callback.dispute_id.map(|id| id.to_string()),
            status: callback.state.as_str(),
            sequence: callback.sequence,
            created_at: callback.created_at.to_rfc3339(),
            attempts: callback.attempts.iter().map(AttemptView::new).collect(),
        }
    }
}

/// One attempt: when, the HTTP status if an answer came, why it failed if it did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AttemptView {
    at: String,
    http_status: Option<u16>,
    error: Option<String>,
}

impl AttemptView {
    fn new(attempt: &LoggedAttempt) -> Self {
        Self {
            at: attempt.at.to_rfc3339(),
            http_status: attempt.http_status,
            error: attempt.error.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fields(errors: &ValidationErrors) -> Vec<&str> {
        errors.0.iter().map(|e| e.field.as_str()).collect()
    }

    fn owner() -> CallbackOwner {
        CallbackOwner {
            merchant_id: domain::MerchantId::parse("m1").expect("an id"),
            direction: Direction::Withdrawal,
        }
    }

    #[test]
    fn the_direction_is_required_once_and_named_when_wrong() {
        assert_eq!(
            direction("direction=withdrawal&x=1").ok(),
            Some(Direction::Withdrawal)
        );
        for bad in [
            "",
            "status=failed",
            "direction=refund",
            "direction=deposit&direction=deposit",
        ] {
            let errors = direction(bad).expect_err(bad);
            assert_eq!(fields(&errors), ["direction"], "{bad}");
        }
    }

    #[test]
    fn a_page_query_reports_every_bad_parameter() {
        let read =
            read_query(owner(), "direction=withdrawal&status=held&limit=7").expect("a valid query");
        assert_eq!(
            (read.state, read.limit, read.after),
            (Some(CallbackState::Held), 7, None)
        );
        let errors = read_query(owner(), "status=sent&since=yesterday&after=zz&limit=0")
            .expect_err("all bad");
        assert_eq!(fields(&errors), ["status", "since", "after", "limit"]);
    }

    #[test]
    fn a_replay_needs_a_time_and_failed_or_held() {
        let body = |v: Value| v.as_object().cloned().unwrap_or_default();
        let read = replay(&body(
            json!({"since": "2026-12-01T00:00:00Z", "status": "held"}),
        ))
        .expect("valid");
        assert!(matches!(
            read,
            Requeue::Since {
                state: ReplayState::Held,
                ..
            }
        ));
        let errors = replay(&body(json!({"status": "delivered", "extra": 1}))).expect_err("bad");
        assert_eq!(fields(&errors), ["extra", "since", "status"]);
        assert_eq!(
            fields(&retry(&body(json!({"a": 1}))).expect_err("not {}")),
            ["a"]
        );
    }
}
