//! What follows an attempt: delivered, retried on the schedule, or given up.

use domain::callback::RetrySchedule;
use domain::ports::{AttemptResult, PendingCallback};
use domain::Timestamp;

use crate::notifier::Verdict;

/// The result to record for `callback` after an attempt ending in `verdict` at `now`.
///
/// A retryable failure is retried after the schedule's next delay; when the schedule is
/// exhausted (N delays allow N + 1 attempts in a run) the callback is failed with the last error.
pub fn decide(
    callback: &PendingCallback,
    verdict: &Verdict,
    now: Timestamp,
    schedule: &RetrySchedule,
) -> AttemptResult {
    match verdict {
        Verdict::Delivered => AttemptResult::Delivered,
        Verdict::Refused(reason) => AttemptResult::Failed(reason.clone()),
        Verdict::Retryable(error) => {
            let failures = callback.failures_in_run.saturating_add(1);
            match schedule.next_delay(failures) {
                Some(delay) => AttemptResult::RetryAt(
                    now.plus_millis(i64::try_from(delay.as_millis()).unwrap_or(i64::MAX)),
                ),
                None => AttemptResult::Failed(format!(
                    "gave up after {failures} attempt{}: last error {error}",
                    if failures == 1 { "" } else { "s" }
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use domain::{Direction, MerchantId, OperationId};

    use super::*;

    fn pending(failures_in_run: u32) -> PendingCallback {
        PendingCallback {
            operation_id: OperationId::from_uuid(uuid::Uuid::nil()),
            refund_id: None,
            dispute: None,
            merchant_id: MerchantId::parse("m1").expect("valid"),
            direction: Direction::Deposit,
            url: "https://merchant.example/cb".into(),
            body: "{}".into(),
            attempt: failures_in_run + 1,
            failures_in_run,
        }
    }

    fn schedule() -> RetrySchedule {
        RetrySchedule(vec![Duration::from_secs(10), Duration::from_secs(30)])
    }

    #[test]
    fn follows_the_schedule_then_gives_up() {
        let now = Timestamp::from_millis(1_000_000);
        let error = Verdict::Retryable("HTTP 500".into());
        assert_eq!(
            decide(&pending(0), &error, now, &schedule()),
            AttemptResult::RetryAt(now.plus_seconds(10))
        );
        assert_eq!(
            decide(&pending(1), &error, now, &schedule()),
            AttemptResult::RetryAt(now.plus_seconds(30))
        );
        assert_eq!(
            decide(&pending(2), &error, now, &schedule()),
            AttemptResult::Failed("gave up after 3 attempts: last error HTTP 500".into())
        );
    }

    #[test]
    fn an_empty_schedule_allows_one_attempt() {
        let now = Timestamp::from_millis(0);
        let result = decide(
            &pending(0),
            &Verdict::Retryable("HTTP 302".into()),
            now,
            &RetrySchedule(vec![]),
        );
        assert_eq!(
            result,
            AttemptResult::Failed("gave up after 1 attempt: last error HTTP 302".into())
        );
    }

    #[test]
    fn delivered_and_refused_ignore_the_schedule() {
        let now = Timestamp::from_millis(0);
        assert_eq!(
            decide(&pending(5), &Verdict::Delivered, now, &schedule()),
            AttemptResult::Delivered
        );
        assert_eq!(
            decide(
                &pending(0),
                &Verdict::Refused("no".into()),
                now,
                &schedule()
            ),
            AttemptResult::Failed("no".into())
        );
    }
}
