use std::collections::BTreeMap;
use std::time::Duration;

use domain::operation::{
    Action, Decline, DeclineCode, Operation, ProviderState, CONFIRMATION_ATTEMPTS,
};
use domain::ports::{DepositStart, PaymentProvider, PayoutStart, ProviderVerdict};
use domain::route::{Flow, Route};
use domain::testkit::OperationBuilder;
use domain::{Currency, Direction, OperationId, PaymentMethod, Timestamp, WithdrawalRequisites};
use futures::executor::block_on;

use super::{SandboxConfig, SandboxProvider};
use crate::qr::tests::decode_data_uri;
use crate::rules::{CARD_APPROVE, CARD_DECLINED, PHONE_RECIPIENT_NOT_FOUND, RECEIVING_CARD_NUMBER};

const PUBLIC_URL: &str = "http://127.0.0.1:8080";
const CREATED_MS: i64 = 1_790_000_000_000;
const SETTLE_MS: i64 = 2_000;

fn provider() -> SandboxProvider {
    SandboxProvider::new(SandboxConfig {
        public_url: format!("{PUBLIC_URL}/"),
        settle_after: Duration::from_millis(SETTLE_MS as u64),
    })
}

fn operation(direction: Direction, method: PaymentMethod, minor: i64) -> Operation {
    let op = match direction {
        Direction::Deposit => OperationBuilder::deposit(method),
        Direction::Withdrawal => OperationBuilder::payout(method),
    };
    op.id(OperationId::from_uuid(uuid::Uuid::new_v4()))
        .minor(minor)
        .route(7)
        .created(Timestamp::from_millis(CREATED_MS))
        .build()
}

fn deposit(minor: i64) -> Operation {
    operation(Direction::Deposit, PaymentMethod::Card, minor)
}

fn payout(minor: i64) -> Operation {
    operation(Direction::Withdrawal, PaymentMethod::Card, minor)
}

fn route(direction: Direction, flow: Flow) -> Route {
    Route {
        id: 7,
        direction,
        method: PaymentMethod::Card,
        currency: Currency::RUB,
        min_amount: 1,
        max_amount: 1_000_000_000,
        priority: 100,
        provider: "sandbox".into(),
        flow,
        lifetime_secs: None,
        enabled: true,
    }
}

fn start(deposit: &Operation, flow: Flow) -> Action {
    match block_on(provider().start_deposit(deposit, &route(Direction::Deposit, flow))) {
        Ok(DepositStart::Wait(action)) => action,
        other => panic!("expected an action for {flow:?}, got {other:?}"),
    }
}

fn card(pan: &str) -> WithdrawalRequisites {
    WithdrawalRequisites::card(Some(pan), Some("IVAN IVANOV")).expect("valid")
}

fn sbp(phone: &str) -> WithdrawalRequisites {
    WithdrawalRequisites::sbp(Some(phone), Some("Ivan"), Some("Bank A")).expect("valid")
}

/// Starts a payout and returns it as the domain would store it.
fn accepted(requisites: &WithdrawalRequisites) -> Operation {
    let payout = payout(10_000);
    let started = block_on(provider().start_payout(
        &payout,
        requisites,
        &route(Direction::Withdrawal, Flow::Payout),
    ));
    let Ok(PayoutStart::Accepted { state, due_at }) = started else {
        panic!("expected an accepted payout, got {started:?}");
    };
    payout.accepted(state, due_at).expect("a processing payout")
}

fn poll(payout: &Operation, now_ms: i64) -> ProviderVerdict {
    block_on(provider().poll_payout(payout, Timestamp::from_millis(now_ms))).expect("pollable")
}

#[test]
fn deposits_ending_in_05_are_declined_whatever_the_flow() {
    for flow in [Flow::Redirect, Flow::Qr, Flow::Confirmation] {
        let started =
            block_on(provider().start_deposit(&deposit(10_005), &route(Direction::Deposit, flow)));
        assert_eq!(
            started.expect("answered"),
            DepositStart::Declined(Decline::new(DeclineCode::ProviderDeclined))
        );
    }
}

#[test]
fn redirect_goes_to_the_hosted_page() {
    let deposit = deposit(10_000);
    let url = format!("{PUBLIC_URL}/pay/{}", deposit.id());
    assert_eq!(start(&deposit, Flow::Redirect), Action::Redirect { url });
}

#[test]
fn qr_requisites_hold_a_real_qr_code_of_the_bank_app_page() {
    let deposit = operation(Direction::Deposit, PaymentMethod::SbpQr, 10_000);
    let Action::Requisites { requisites } = start(&deposit, Flow::Qr) else {
        panic!("expected requisites");
    };
    assert_eq!(requisites.len(), 1);
    let uri = requisites.text("qr").expect("a string");
    assert!(uri.starts_with("data:image/png;base64,"));
    let expected = format!("{PUBLIC_URL}/sandbox/qr/{}", deposit.id());
    assert_eq!(decode_data_uri(uri), vec![expected]);
}

#[test]
fn requisites_show_the_receiving_card_in_full() {
    let Action::Requisites { requisites } = start(&deposit(10_000), Flow::Requisites) else {
        panic!("expected requisites");
    };
    assert_eq!(requisites.text("cardNumber"), Some(RECEIVING_CARD_NUMBER));
    assert!(domain::luhn_valid(RECEIVING_CARD_NUMBER));
    assert_eq!(requisites.text("bankName"), Some("Sandbox Bank"));
    assert_eq!(requisites.text("holderName"), Some("SANDBOX MERCHANT"));
    assert_eq!(requisites.len(), 3);
}

#[test]
fn input_fields_are_a_string_and_a_select() {
    let Action::InputFields { fields } = start(&deposit(10_000), Flow::InputFields) else {
        panic!("expected input fields");
    };
    let kinds: Vec<_> = fields.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["string", "select"]);
    assert!(fields.iter().all(|f| f.required && !f.label.is_empty()));
    assert_eq!(fields[0].name, "payerName");
    assert!(fields[0].options.is_none());
    let options = fields[1].options.as_ref().expect("select options");
    assert!(options.len() >= 2);
    assert_eq!(options[0].value, "bank_a");
    assert_eq!(options[0].label, "Bank A");
}

#[test]
fn instruction_is_a_few_do_payment_steps() {
    let deposit = deposit(12_345);
    let Action::Instruction { category, steps } = start(&deposit, Flow::Instruction) else {
        panic!("expected an instruction");
    };
    assert_eq!(category, "DoPayment");
    assert!((2..=3).contains(&steps.len()));
    assert!(steps
        .iter()
        .all(|s| !s.title.is_empty() && !s.description.is_empty()));
    assert!(steps.iter().any(|s| s.description.contains("123.45 RUB")));
}

#[test]
fn confirmation_asks_for_an_sms_code() {
    assert_eq!(
        start(&deposit(10_000), Flow::Confirmation),
        Action::Confirmation {
            channels: vec!["sms".into()],
            attempts_left: CONFIRMATION_ATTEMPTS,
        }
    );
}

#[test]
fn payout_flow_on_a_deposit_is_a_provider_error() {
    let started = block_on(
        provider().start_deposit(&deposit(10_000), &route(Direction::Deposit, Flow::Payout)),
    );
    assert!(started.is_err());
}

#[test]
fn wrong_direction_is_a_provider_error() {
    let started = block_on(
        provider().start_deposit(&payout(10_000), &route(Direction::Deposit, Flow::Redirect)),
    );
    assert!(started.is_err());
    let started = block_on(provider().start_payout(
        &deposit(10_000),
        &card(CARD_APPROVE),
        &route(Direction::Withdrawal, Flow::Payout),
    ));
    assert!(started.is_err());
}

#[test]
fn payouts_ending_in_05_are_declined_at_creation() {
    let started = block_on(provider().start_payout(
        &payout(100_005),
        &card(CARD_APPROVE),
        &route(Direction::Withdrawal, Flow::Payout),
    ));
    assert_eq!(
        started.expect("answered"),
        PayoutStart::Declined(Decline::new(DeclineCode::ProviderDeclined))
    );
}

#[test]
fn accepted_payouts_are_due_after_the_settle_time() {
    let payout = accepted(&card(CARD_APPROVE));
    assert_eq!(
        payout.due_at(),
        Some(Timestamp::from_millis(CREATED_MS + SETTLE_MS))
    );
}

#[test]
fn payouts_settle_as_planned_from_the_requisites() {
    let cases = [
        (card(CARD_APPROVE), ProviderVerdict::Approve),
        (
            card(CARD_DECLINED),
            ProviderVerdict::Decline(Decline::new(DeclineCode::CardDeclined)),
        ),
        (sbp("+79001234567"), ProviderVerdict::Approve),
        (
            sbp(PHONE_RECIPIENT_NOT_FOUND),
            ProviderVerdict::Decline(Decline::new(DeclineCode::RecipientNotFound)),
        ),
    ];
    for (requisites, verdict) in cases {
        let payout = accepted(&requisites);
        assert_eq!(
            poll(&payout, CREATED_MS + SETTLE_MS),
            verdict,
            "{requisites:?}"
        );
    }
}

#[test]
fn provider_state_never_holds_the_full_card_number() {
    for pan in [CARD_APPROVE, CARD_DECLINED] {
        let payout = accepted(&card(pan));
        let state = payout.provider_state().expect("a planned state").as_str();
        assert!(!state.contains(pan), "{state}");
        assert!(!state.contains(&pan[pan.len() - 4..]), "{state}");
    }
}

#[test]
fn polling_before_the_due_time_is_pending() {
    let payout = accepted(&card(CARD_DECLINED));
    let due = Timestamp::from_millis(CREATED_MS + SETTLE_MS);
    assert_eq!(poll(&payout, CREATED_MS), ProviderVerdict::Pending(due));
    assert_eq!(
        poll(&payout, CREATED_MS + SETTLE_MS - 1),
        ProviderVerdict::Pending(due)
    );
    assert!(matches!(
        poll(&payout, CREATED_MS + SETTLE_MS + 60_000),
        ProviderVerdict::Decline(_)
    ));
}

#[test]
fn missing_or_garbled_state_is_an_error_not_an_approval() {
    let planned = payout(10_000);
    let now = Timestamp::from_millis(CREATED_MS + SETTLE_MS);
    for state in [
        None,
        Some(ProviderState::new(r#"{"sandbox":{"outcome":"sure"}}"#)),
    ] {
        let payout = planned.accepted(state, now).expect("a processing payout");
        assert!(block_on(provider().poll_payout(&payout, now)).is_err());
    }
}

#[test]
fn input_values_approve() {
    let values = BTreeMap::from([
        ("payerName".to_string(), "Ivan".to_string()),
        ("bank".to_string(), "bank_a".to_string()),
    ]);
    let verdict = block_on(provider().submit_input(&deposit(10_000), &values));
    assert_eq!(verdict.expect("answered"), ProviderVerdict::Approve);
}

#[test]
fn only_123456_is_the_right_code() {
    let deposit = deposit(10_000);
    let check = |code: &str| block_on(provider().check_code(&deposit, code)).expect("answered");
    assert!(check("123456"));
    for wrong in ["654321", "", "1234567", " 123456", "12345"] {
        assert!(!check(wrong), "{wrong:?}");
    }
}

#[test]
fn public_url_loses_its_trailing_slash() {
    assert_eq!(provider().public_url(), PUBLIC_URL);
}
