//! Which page an operation calls for right now.

use domain::operation::{Action, Operation};
use domain::{PaymentMethod, Status, Timestamp};

/// What a hosted page shows for an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage<'a> {
    /// Approved or declined: the result, and nothing more can be done.
    Final,
    /// Still processing, but its lifetime has passed (the expiry sweep declines it soon).
    Expired,
    /// A card deposit waiting for the card form.
    Card,
    /// An SBP deposit waiting for the payer to pick a bank.
    SbpBanks,
    /// A bank-pay deposit waiting for Confirm or Reject.
    Bank(BankPay),
    /// An `sbp_qr` deposit waiting for the QR code to be scanned; `qr` is its image, if any.
    Qr { qr: Option<&'a str> },
    /// Processing, but its flow is not finished on a hosted page (requisites, input fields, ...)
    /// or it is a payout.
    Elsewhere,
}

/// The three bank-pay methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BankPay {
    A,
    B,
    C,
}

impl BankPay {
    /// The bank's name on its page.
    pub fn name(self) -> &'static str {
        match self {
            BankPay::A => "Bank A Pay",
            BankPay::B => "Bank B Pay",
            BankPay::C => "Bank C Pay",
        }
    }
}

/// The stage of `op` at `now`.
pub fn stage(op: &Operation, now: Timestamp) -> Stage<'_> {
    match op.status() {
        Status::Approved | Status::Declined => return Stage::Final,
        Status::Processing => {}
    }
    if op.direction() != domain::Direction::Deposit {
        return Stage::Elsewhere;
    }
    if op.is_expired(now) {
        return Stage::Expired;
    }
    match (&op.action(), op.method()) {
        (Some(Action::Redirect { .. }), method) => match method {
            PaymentMethod::Card => Stage::Card,
            PaymentMethod::Sbp => Stage::SbpBanks,
            PaymentMethod::BankAPay => Stage::Bank(BankPay::A),
            PaymentMethod::BankBPay => Stage::Bank(BankPay::B),
            PaymentMethod::BankCPay => Stage::Bank(BankPay::C),
            PaymentMethod::SbpQr => Stage::Elsewhere,
        },
        (Some(Action::Requisites { requisites }), PaymentMethod::SbpQr) => Stage::Qr {
            qr: requisites
                .text("qr")
                .filter(|uri| uri.starts_with("data:image/png;base64,")),
        },
        _ => Stage::Elsewhere,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use domain::operation::{Decline, DeclineCode, Outcome};
    use domain::testkit::OperationBuilder;
    use domain::{KeptObject, OperationId, PaymentMethod};

    use super::*;

    pub(crate) const NOW: i64 = 1_795_255_200_000;

    /// A waiting deposit of 100.00 RUB paid by `method` with a redirect (or QR) action.
    pub(crate) fn deposit(method: PaymentMethod) -> Operation {
        deposit_builder(method).build()
    }

    /// [`deposit`], to change before building.
    pub(crate) fn deposit_builder(method: PaymentMethod) -> OperationBuilder {
        let at = Timestamp::from_millis(NOW);
        let action = match method {
            PaymentMethod::SbpQr => Action::Requisites {
                requisites: qr("data:image/png;base64,iVBORw0KGgo="),
            },
            _ => Action::Redirect {
                url: "http://gw.example/pay/x".into(),
            },
        };
        OperationBuilder::deposit(method)
            .id(OperationId::parse("6f1c2a4e-1d2b-4c5d-8e9f-001122334455").expect("uuid"))
            .action(action)
            .created(at)
            .expires(at.plus_seconds(600))
    }

    fn qr(uri: &str) -> KeptObject {
        KeptObject::new().with("qr", uri)
    }

    fn now() -> Timestamp {
        Timestamp::from_millis(NOW).plus_seconds(1)
    }

    #[test]
    fn waiting_deposits_get_their_method_page() {
        let cases = [
            (PaymentMethod::Card, Stage::Card),
            (PaymentMethod::Sbp, Stage::SbpBanks),
            (PaymentMethod::BankAPay, Stage::Bank(BankPay::A)),
            (PaymentMethod::BankBPay, Stage::Bank(BankPay::B)),
            (PaymentMethod::BankCPay, Stage::Bank(BankPay::C)),
        ];
        for (method, expected) in cases {
            assert_eq!(stage(&deposit(method), now()), expected, "{method}");
        }
        let qr = deposit(PaymentMethod::SbpQr);
        assert!(
            matches!(stage(&qr, now()), Stage::Qr { qr: Some(uri) } if uri.starts_with("data:image/png"))
        );
    }

    #[test]
    fn final_expired_and_other_flows_get_no_form() {
        let done = deposit(PaymentMethod::Card)
            .finish(
                &Outcome::Decline(Decline::new(DeclineCode::CardDeclined)),
                now(),
            )
            .expect("processing");
        assert_eq!(stage(&done, now()), Stage::Final);
        let late = Timestamp::from_millis(NOW).plus_seconds(600);
        assert_eq!(stage(&deposit(PaymentMethod::Sbp), late), Stage::Expired);
        let requisites = deposit_builder(PaymentMethod::Card)
            .action(Action::Requisites {
                requisites: KeptObject::new(),
            })
            .build();
        assert_eq!(stage(&requisites, now()), Stage::Elsewhere);
        let payout = OperationBuilder::payout(PaymentMethod::Card)
            .created(Timestamp::from_millis(NOW))
            .build();
        assert_eq!(stage(&payout, now()), Stage::Elsewhere);
    }

    #[test]
    fn a_qr_that_is_not_a_png_data_uri_is_not_shown() {
        let op = deposit_builder(PaymentMethod::SbpQr)
            .action(Action::Requisites {
                requisites: qr("javascript:alert(1)"),
            })
            .build();
        assert_eq!(stage(&op, now()), Stage::Qr { qr: None });
    }
}
