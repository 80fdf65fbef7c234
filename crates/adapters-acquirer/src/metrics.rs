//! Counters and latencies of calls to acquirers, for the app's `/metrics`.

use std::time::Duration;

use domain::acquirer::{
    AcquirerPayment, AcquirerRefund, CallResult, FailureMeaning, Lookup, PaymentStatus,
    RefundStatus,
};
use domain::Direction;
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};

/// Which Acquirer API call was made (the `call` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Create,
    Read,
    Cancel,
    Refund,
    /// A chargeback's evidence.
    Evidence,
}

impl Call {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Call::Create => "create",
            Call::Read => "read",
            Call::Cancel => "cancel",
            Call::Refund => "refund",
            Call::Evidence => "evidence",
        }
    }
}

/// How a call ended (the `outcome` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    Ok,
    /// A creation answered `failed` with a decline.
    Declined,
    /// A definite failure: nothing happened at the acquirer.
    Unavailable,
    /// No usable answer.
    Unknown,
}

impl CallOutcome {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::Declined => "declined",
            CallOutcome::Unavailable => "unavailable",
            CallOutcome::Unknown => "unknown",
        }
    }

    /// An answered payment's outcome: a `failed` one counts as what its code means.
    pub fn of_payment(payment: &AcquirerPayment, direction: Direction) -> Self {
        match payment.status {
            PaymentStatus::Failed => match payment.failure_meaning(direction) {
                FailureMeaning::Unavailable => CallOutcome::Unavailable,
                FailureMeaning::Declined(_) => CallOutcome::Declined,
            },
            PaymentStatus::Pending
            | PaymentStatus::ActionRequired
            | PaymentStatus::Succeeded
            | PaymentStatus::Canceled => CallOutcome::Ok,
        }
    }

    /// An answered refund's outcome: `declined` for a refund the acquirer answered `failed`.
    pub fn of_refund(refund: &AcquirerRefund) -> Self {
        match refund.status {
            RefundStatus::Failed => CallOutcome::Declined,
            RefundStatus::Pending | RefundStatus::Succeeded => CallOutcome::Ok,
        }
    }

    /// A creating call's outcome: an answer counts as `answered` says.
    pub fn of_call<T>(result: &CallResult<T>, answered: impl FnOnce(&T) -> Self) -> Self {
        match result {
            CallResult::Answered(object) => answered(object),
            CallResult::Unavailable(_) => CallOutcome::Unavailable,
            CallResult::Unknown(_) => CallOutcome::Unknown,
        }
    }

    /// A read's or cancel's outcome: any answer that says something is `ok`.
    pub fn of_lookup<T>(lookup: &Lookup<T>) -> Self {
        match lookup {
            Lookup::Found(_) | Lookup::NotFound => CallOutcome::Ok,
            Lookup::Failed(_) => CallOutcome::Unknown,
        }
    }
}

/// Upper bounds in seconds: provider timeouts go up to 55 s.
const DURATION_BUCKETS: [f64; 12] = [
    0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 55.0,
];

/// `gateway_provider_calls_total` and `gateway_provider_call_duration_seconds`.
#[derive(Debug, Clone)]
pub struct ProviderMetrics {
    /// `gateway_provider_calls_total{provider,call,outcome}`
    pub calls: IntCounterVec,
    /// `gateway_provider_call_duration_seconds{provider,call}`
    pub duration: HistogramVec,
}

impl ProviderMetrics {
    /// Fresh metrics, not yet registered anywhere.
    pub fn new() -> Self {
        // The names, labels and buckets are constant and valid, so creation cannot fail.
        let calls = IntCounterVec::new(
            Opts::new(
                "gateway_provider_calls_total",
                "Calls to acquirers, by provider, call and outcome.",
            ),
            &["provider", "call", "outcome"],
        )
        .unwrap_or_else(|e| unreachable!("gateway_provider_calls_total: {e}"));
        let duration = HistogramVec::new(
            HistogramOpts::new(
                "gateway_provider_call_duration_seconds",
                "How long calls to acquirers took, by provider and call.",
            )
            .buckets(DURATION_BUCKETS.to_vec()),
            &["provider", "call"],
        )
        .unwrap_or_else(|e| unreachable!("gateway_provider_call_duration_seconds: {e}"));
        Self { calls, duration }
    }

    /// Adds the metrics to `registry` (once per registry).
    pub fn register(&self, registry: &Registry) -> prometheus::Result<()> {
        registry.register(Box::new(self.calls.clone()))?;
        registry.register(Box::new(self.duration.clone()))?;
        Ok(())
    }

    /// Counts one finished call.
    pub fn observe(&self, provider: &str, call: Call, outcome: CallOutcome, took: Duration) {
        self.calls
            .with_label_values(&[provider, call.as_str(), outcome.as_str()])
            .inc();
        self.duration
            .with_label_values(&[provider, call.as_str()])
            .observe(took.as_secs_f64());
    }

    /// How many calls ended so, for tests and checks (creates the series at zero if new).
    pub fn count(&self, provider: &str, call: Call, outcome: CallOutcome) -> u64 {
        self.calls
            .with_label_values(&[provider, call.as_str(), outcome.as_str()])
            .get()
    }
}

impl Default for ProviderMetrics {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use domain::acquirer::AcquirerPayment;

    use super::*;

    fn answered(status: PaymentStatus, code: Option<&str>) -> CallResult<AcquirerPayment> {
        CallResult::Answered(AcquirerPayment {
            id: "acq_1".into(),
            status,
            redirect_url: None,
            failure: code.map(crate::words::failure),
        })
    }

    #[test]
    fn creation_outcomes_follow_the_failure_table() {
        use CallOutcome::*;
        use Direction::*;
        let cases = [
            (answered(PaymentStatus::Pending, None), Deposit, Ok),
            (answered(PaymentStatus::ActionRequired, None), Deposit, Ok),
            (answered(PaymentStatus::Succeeded, None), Withdrawal, Ok),
            (answered(PaymentStatus::Failed, None), Deposit, Declined),
            (
                answered(PaymentStatus::Failed, Some("card_declined")),
                Withdrawal,
                Declined,
            ),
            (
                answered(PaymentStatus::Failed, Some("insufficient_funds")),
                Deposit,
                Declined,
            ),
            (
                answered(PaymentStatus::Failed, Some("insufficient_funds")),
                Withdrawal,
                Unavailable,
            ),
            (
                answered(PaymentStatus::Failed, Some("issuer_unavailable")),
                Deposit,
                Unavailable,
            ),
            (
                CallResult::Unavailable("HTTP 503".into()),
                Deposit,
                Unavailable,
            ),
            (CallResult::Unknown("HTTP 502".into()), Deposit, Unknown),
        ];
        for (result, direction, outcome) in cases {
            assert_eq!(
                CallOutcome::of_call(
                    &result,
                    |payment: &AcquirerPayment| CallOutcome::of_payment(payment, direction)
                ),
                outcome,
                "{result:?}"
            );
        }
        assert_eq!(
            CallOutcome::of_lookup(&Lookup::<AcquirerPayment>::NotFound),
            Ok
        );
        assert_eq!(
            CallOutcome::of_lookup(&Lookup::<AcquirerPayment>::Failed("x".into())),
            Unknown
        );
    }

    #[test]
    fn counts_and_registers_once() {
        let metrics = ProviderMetrics::new();
        let took = Duration::from_millis(30);
        metrics.observe("bank-a", Call::Create, CallOutcome::Ok, took);
        metrics.observe("bank-a", Call::Create, CallOutcome::Ok, took);
        metrics.observe("bank-a", Call::Read, CallOutcome::Unknown, took);
        assert_eq!(metrics.count("bank-a", Call::Create, CallOutcome::Ok), 2);
        assert_eq!(metrics.count("bank-a", Call::Read, CallOutcome::Unknown), 1);
        assert_eq!(
            metrics
                .duration
                .with_label_values(&["bank-a", "create"])
                .get_sample_count(),
            2
        );

        let registry = Registry::new();
        metrics.register(&registry).expect("first registration");
        assert!(metrics.register(&registry).is_err());
        let names: Vec<String> = registry
            .gather()
            .iter()
            .map(|family| family.get_name().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "gateway_provider_call_duration_seconds",
                "gateway_provider_calls_total"
            ]
        );
    }
}
