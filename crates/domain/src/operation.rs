//! The operation entity, the actions a deposit asks of its user, and the state machine.
//!
//! An [`Operation`]'s fields are private: it is made by [`Operation::open`] (processing) or
//! [`Operation::restore`] (from storage), and changed only by its transitions, each of which
//! checks that the operation is in a state that allows it. Its [`State`] carries the decline,
//! so status and decline cannot disagree, and what only deposits or only payouts have lives
//! in their own part ([`Part`]): a new kind of operation is a new part, not more optional
//! fields.

use crate::fee::Fee;
use crate::{
    Amount, Currency, Direction, HttpUrl, KeptObject, MerchantId, MerchantOperationId, OperationId,
    PaymentMethod, Status, Timestamp, UserData, UserId,
};

/// One choice of a `select` input field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectOption {
    pub value: String,
    pub label: String,
}

/// A field the user fills in during the input-fields flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputField {
    pub name: String,
    pub label: String,
    /// `string` or `select`.
    pub kind: String,
    pub required: bool,
    /// Present for `select` fields only.
    pub options: Option<Vec<SelectOption>>,
}

impl InputField {
    /// A required free-text (`string`) field.
    pub fn text(name: &str, label: &str) -> Self {
        Self {
            name: name.into(),
            label: label.into(),
            kind: "string".into(),
            required: true,
            options: None,
        }
    }

    /// A required `select` field with these (value, label) choices.
    pub fn select(name: &str, label: &str, options: &[(&str, &str)]) -> Self {
        let options = options
            .iter()
            .map(|(value, label)| SelectOption {
                value: (*value).into(),
                label: (*label).into(),
            })
            .collect();
        Self {
            kind: "select".into(),
            options: Some(options),
            ..Self::text(name, label)
        }
    }
}

/// One step of an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionStep {
    pub title: String,
    pub description: String,
}

/// What a processing deposit asks of its user (the deposit actions of docs/api.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send the user to `url`.
    Redirect { url: String },
    /// Show these requisites until the lifetime ends (also the `sbp_qr` QR code).
    Requisites { requisites: KeptObject },
    /// Ask the user for these fields, then post them to `/input`.
    InputFields { fields: Vec<InputField> },
    /// Show these steps.
    Instruction {
        category: String,
        steps: Vec<InstructionStep>,
    },
    /// Ask for a code sent over `channels`; `attempts_left` wrong codes decline it.
    Confirmation {
        channels: Vec<String>,
        attempts_left: u8,
    },
}

/// Wrong confirmation codes allowed before a deposit is declined.
pub const CONFIRMATION_ATTEMPTS: u8 = 3;

impl Action {
    /// Whether the creation and read answers show `lifetime` with this action.
    pub fn shows_lifetime(&self) -> bool {
        matches!(self, Action::Requisites { .. })
    }
}

/// Why an operation was declined; the code is one of a closed list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeclineCode {
    ProviderDeclined,
    CardDeclined,
    InsufficientFunds,
    PaymentRejected,
    Expired,
    ConfirmationFailed,
    RecipientNotFound,
    ProviderUnavailable,
    Canceled,
    /// A stored code this version does not know (a later version wrote it): shown as it is,
    /// never an error.
    Unrecognized(&'static str),
}

impl DeclineCode {
    /// Every code this version writes.
    pub const ALL: [DeclineCode; 9] = [
        DeclineCode::ProviderDeclined,
        DeclineCode::CardDeclined,
        DeclineCode::InsufficientFunds,
        DeclineCode::PaymentRejected,
        DeclineCode::Expired,
        DeclineCode::ConfirmationFailed,
        DeclineCode::RecipientNotFound,
        DeclineCode::ProviderUnavailable,
        DeclineCode::Canceled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DeclineCode::ProviderDeclined => "ProviderDeclined",
            DeclineCode::CardDeclined => "CardDeclined",
            DeclineCode::InsufficientFunds => "InsufficientFunds",
            DeclineCode::PaymentRejected => "PaymentRejected",
            DeclineCode::Expired => "Expired",
            DeclineCode::ConfirmationFailed => "ConfirmationFailed",
            DeclineCode::RecipientNotFound => "RecipientNotFound",
            DeclineCode::ProviderUnavailable => "ProviderUnavailable",
            DeclineCode::Canceled => "Canceled",
            DeclineCode::Unrecognized(code) => code,
        }
    }

    /// The default message for merchants.
    pub fn message(self) -> &'static str {
        match self {
            DeclineCode::ProviderDeclined => "The provider declined the operation",
            DeclineCode::CardDeclined => "The card was declined",
            DeclineCode::InsufficientFunds => "The card has insufficient funds",
            DeclineCode::PaymentRejected => "The user rejected the payment",
            DeclineCode::Expired => "The operation expired before it was completed",
            DeclineCode::ConfirmationFailed => "Too many wrong confirmation codes",
            DeclineCode::RecipientNotFound => "The recipient was not found",
            DeclineCode::ProviderUnavailable => "The provider is unavailable",
            DeclineCode::Canceled => "The operation was canceled",
            DeclineCode::Unrecognized(_) => "The operation was declined",
        }
    }

    /// The code for a name this version gives out; `None` for any other.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// The code for a stored name: one this version knows, or else the name as it is
    /// ([`DeclineCode::Unrecognized`]), so that an operation a later version declined still
    /// reads. Each distinct unknown name is kept once for the life of the process.
    pub fn from_stored(text: &str) -> Self {
        Self::parse(text).unwrap_or_else(|| DeclineCode::Unrecognized(intern(text)))
    }
}

/// `text` as a `&'static str`, allocated once per distinct text.
fn intern(text: &str) -> &'static str {
    use std::collections::BTreeSet;
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<BTreeSet<&'static str>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = seen.get(text) {
        return known;
    }
    let kept: &'static str = Box::leak(text.to_owned().into_boxed_str());
    seen.insert(kept);
    kept
}

/// A decline: its code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decline {
    pub code: DeclineCode,
    pub message: String,
}

impl Decline {
    pub fn new(code: DeclineCode) -> Self {
        Self {
            code,
            message: code.message().to_string(),
        }
    }
}

/// The merchant's URLs for one operation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperationUrls {
    pub callback: Option<HttpUrl>,
    pub success: Option<HttpUrl>,
    pub fail: Option<HttpUrl>,
    pub processing: Option<HttpUrl>,
}

/// What the provider keeps with an operation (for the sandbox: the planned payout result).
/// Opaque to the gateway: only the provider that wrote it reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderState(String);

impl ProviderState {
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Where an operation is in its life. A decline travels with its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Processing,
    Approved,
    Declined(Decline),
}

impl State {
    pub fn status(&self) -> Status {
        match self {
            State::Processing => Status::Processing,
            State::Approved => Status::Approved,
            State::Declined(_) => Status::Declined,
        }
    }

    pub fn decline(&self) -> Option<&Decline> {
        match self {
            State::Declined(decline) => Some(decline),
            State::Processing | State::Approved => None,
        }
    }
}

/// What only a deposit has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DepositPart {
    /// The requisites as given, card numbers masked and CVCs dropped.
    pub requisites: Option<KeptObject>,
    /// What the user must do while the deposit is processing.
    pub action: Option<Action>,
    /// When the deposit expires if it is still processing.
    pub expires_at: Option<Timestamp>,
}

/// What only a payout has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PayoutPart {
    /// The recipient's requisites, the card number masked.
    pub requisites: Option<KeptObject>,
    pub provider_state: Option<ProviderState>,
    /// When the provider next wants to look at the processing payout.
    pub due_at: Option<Timestamp>,
}

/// The part of an operation that depends on its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Deposit(DepositPart),
    Payout(PayoutPart),
}

impl Part {
    pub fn direction(&self) -> Direction {
        match self {
            Part::Deposit(_) => Direction::Deposit,
            Part::Payout(_) => Direction::Withdrawal,
        }
    }
}

/// What every operation is opened with, whatever its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Opening {
    pub id: OperationId,
    pub merchant_id: MerchantId,
    pub method: PaymentMethod,
    pub amount: Amount,
    pub currency: Currency,
    pub user_id: UserId,
    pub merchant_operation_id: Option<MerchantOperationId>,
    pub urls: OperationUrls,
    pub user_data: UserData,
    pub route_id: i64,
    /// The provider of the operation's current attempt (the route's, until failover).
    pub provider: String,
    pub created_at: Timestamp,
    /// What it pays the operator, fixed at creation with the tariff's terms.
    pub fee: Fee,
}

/// A deposit or withdrawal and everything known about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    opening: Opening,
    part: Part,
    state: State,
    updated_at: Timestamp,
}

/// The result asked of an operation that is still processing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Approve,
    Decline(Decline),
}

impl Outcome {
    /// Declined because the deposit's lifetime ran out.
    pub fn expired() -> Self {
        Outcome::Decline(Decline::new(DeclineCode::Expired))
    }

    pub fn status(&self) -> Status {
        match self {
            Outcome::Approve => Status::Approved,
            Outcome::Decline(_) => Status::Declined,
        }
    }

    pub(crate) fn state(&self) -> State {
        match self {
            Outcome::Approve => State::Approved,
            Outcome::Decline(decline) => State::Declined(decline.clone()),
        }
    }
}

/// The operation is final (or otherwise not waiting for what was asked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the operation is {0:?}, not waiting for this step")]
pub struct NotProcessing(pub Status);

/// A transition the operation's kind or state does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StepRefused {
    #[error(transparent)]
    NotProcessing(#[from] NotProcessing),
    #[error("a {0} has no such step")]
    WrongKind(Direction),
}

/// Parts that cannot make an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unfit {
    #[error("{method} is not a {direction} method")]
    Method {
        method: PaymentMethod,
        direction: Direction,
    },
}

impl Operation {
    /// A new, processing operation.
    pub fn open(opening: Opening, part: Part) -> Result<Operation, Unfit> {
        let updated_at = opening.created_at;
        Self::restore(opening, part, State::Processing, updated_at)
    }

    /// An operation as storage kept it, checked for the kind's rules.
    pub fn restore(
        opening: Opening,
        part: Part,
        state: State,
        updated_at: Timestamp,
    ) -> Result<Operation, Unfit> {
        let direction = part.direction();
        if !direction.methods().contains(&opening.method) {
            return Err(Unfit::Method {
                method: opening.method,
                direction,
            });
        }
        Ok(Operation {
            opening,
            part,
            state,
            updated_at,
        })
    }

    pub fn id(&self) -> OperationId {
        self.opening.id
    }

    pub fn merchant_id(&self) -> &MerchantId {
        &self.opening.merchant_id
    }

    pub fn direction(&self) -> Direction {
        self.part.direction()
    }

    pub fn method(&self) -> PaymentMethod {
        self.opening.method
    }

    pub fn amount(&self) -> Amount {
        self.opening.amount
    }

    pub fn currency(&self) -> Currency {
        self.opening.currency
    }

    pub fn user_id(&self) -> &UserId {
        &self.opening.user_id
    }

    pub fn merchant_operation_id(&self) -> Option<&MerchantOperationId> {
        self.opening.merchant_operation_id.as_ref()
    }

    pub fn urls(&self) -> &OperationUrls {
        &self.opening.urls
    }

    pub fn user_data(&self) -> &UserData {
        &self.opening.user_data
    }

    pub fn route_id(&self) -> i64 {
        self.opening.route_id
    }

    /// The provider of the current attempt.
    pub fn provider(&self) -> &str {
        &self.opening.provider
    }

    /// The operation as routing moved it on to another route and its provider (never across
    /// the sandbox and an acquirer).
    pub fn routed_to(&self, route_id: i64, provider: &str) -> Operation {
        let mut moved = self.clone();
        moved.opening.route_id = route_id;
        moved.opening.provider = provider.to_string();
        moved
    }

    /// Whether the current attempt is with the built-in sandbox.
    pub fn is_sandbox(&self) -> bool {
        self.opening.provider == crate::provider::SANDBOX
    }

    /// The fee fixed at creation.
    pub fn fee(&self) -> Fee {
        self.opening.fee
    }

    pub fn created_at(&self) -> Timestamp {
        self.opening.created_at
    }

    pub fn updated_at(&self) -> Timestamp {
        self.updated_at
    }

    pub fn opening(&self) -> &Opening {
        &self.opening
    }

    pub fn part(&self) -> &Part {
        &self.part
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    pub fn status(&self) -> Status {
        self.state.status()
    }

    pub fn decline(&self) -> Option<&Decline> {
        self.state.decline()
    }

    /// The deposit's part, if this is a deposit.
    pub fn deposit(&self) -> Option<&DepositPart> {
        match &self.part {
            Part::Deposit(deposit) => Some(deposit),
            Part::Payout(_) => None,
        }
    }

    /// The payout's part, if this is a payout.
    pub fn payout(&self) -> Option<&PayoutPart> {
        match &self.part {
            Part::Payout(payout) => Some(payout),
            Part::Deposit(_) => None,
        }
    }

    /// The requisites as stored (a deposit's as given but masked, a payout's masked).
    pub fn requisites(&self) -> Option<&KeptObject> {
        match &self.part {
            Part::Deposit(deposit) => deposit.requisites.as_ref(),
            Part::Payout(payout) => payout.requisites.as_ref(),
        }
    }

    /// What the user of a deposit must do.
    pub fn action(&self) -> Option<&Action> {
        self.deposit().and_then(|d| d.action.as_ref())
    }

    /// When a waiting deposit expires; payouts never expire.
    pub fn expires_at(&self) -> Option<Timestamp> {
        self.deposit().and_then(|d| d.expires_at)
    }

    pub fn provider_state(&self) -> Option<&ProviderState> {
        self.payout().and_then(|p| p.provider_state.as_ref())
    }

    /// When the provider next wants to look at a processing payout.
    pub fn due_at(&self) -> Option<Timestamp> {
        self.payout().and_then(|p| p.due_at)
    }

    fn processing(&self) -> Result<(), NotProcessing> {
        match self.state {
            State::Processing => Ok(()),
            State::Approved | State::Declined(_) => Err(NotProcessing(self.status())),
        }
    }

    /// Processing -> Approved | Declined; a final operation never changes again.
    pub fn finish(&self, outcome: &Outcome, at: Timestamp) -> Result<Operation, NotProcessing> {
        self.processing()?;
        let mut done = self.clone();
        done.state = outcome.state();
        done.updated_at = at;
        if let Part::Payout(payout) = &mut done.part {
            payout.due_at = None;
        }
        Ok(done)
    }

    /// A processing deposit now asking its user for `action`.
    pub fn wait_for(&self, action: Action, at: Timestamp) -> Result<Operation, StepRefused> {
        self.processing()?;
        let mut next = self.clone();
        match &mut next.part {
            Part::Deposit(deposit) => deposit.action = Some(action),
            Part::Payout(_) => return Err(StepRefused::WrongKind(self.direction())),
        }
        next.updated_at = at;
        Ok(next)
    }

    /// A processing payout the provider accepted: its state, and when to look at it again.
    pub fn accepted(
        &self,
        state: Option<ProviderState>,
        due_at: Timestamp,
    ) -> Result<Operation, StepRefused> {
        self.processing()?;
        let mut next = self.clone();
        match &mut next.part {
            Part::Payout(payout) => {
                payout.provider_state = state;
                payout.due_at = Some(due_at);
            }
            Part::Deposit(_) => return Err(StepRefused::WrongKind(self.direction())),
        }
        Ok(next)
    }

    /// Whether a processing deposit's lifetime has passed at `now`.
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.state == State::Processing && self.expires_at().is_some_and(|at| at <= now)
    }

    /// Seconds of lifetime left, for the answers' `lifetime` field.
    pub fn lifetime_left(&self, now: Timestamp) -> Option<i64> {
        self.expires_at().map(|at| at.seconds_after(now))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::testkit::{at, id, OperationBuilder};

    fn waiting() -> Operation {
        OperationBuilder::deposit(PaymentMethod::SbpQr)
            .id(id(7))
            .merchant("m-1")
            .amount("10.00")
            .user("u")
            .merchant_operation_id("o-1")
            .action(Action::Requisites {
                requisites: KeptObject::new(),
            })
            .route(3)
            .expires(at(600))
            .build()
    }

    #[test]
    fn all_holds_every_known_code_once_in_order() {
        // A new code fails to compile here until it is given its place in `ALL`.
        let place = |code: DeclineCode| match code {
            DeclineCode::ProviderDeclined => 0,
            DeclineCode::CardDeclined => 1,
            DeclineCode::InsufficientFunds => 2,
            DeclineCode::PaymentRejected => 3,
            DeclineCode::Expired => 4,
            DeclineCode::ConfirmationFailed => 5,
            DeclineCode::RecipientNotFound => 6,
            DeclineCode::ProviderUnavailable => 7,
            DeclineCode::Canceled => 8,
            DeclineCode::Unrecognized(_) => usize::MAX,
        };
        for (index, code) in DeclineCode::ALL.into_iter().enumerate() {
            assert_eq!(place(code), index, "{code:?}");
        }
    }

    #[test]
    fn processing_finishes_approved_with_the_time_of_the_change() {
        let op = waiting();

        let done = op.finish(&Outcome::Approve, at(30)).unwrap();

        assert_eq!(done.status(), Status::Approved);
        assert_eq!(done.decline(), None);
        assert_eq!(done.updated_at(), at(30));
        assert_eq!(done.created_at(), at(0));
        assert_eq!(done.due_at(), None);
        assert_eq!(done.opening(), op.opening(), "nothing else changes");
        assert_eq!(done.part(), op.part(), "nothing else changes");
    }

    #[test]
    fn processing_finishes_declined_with_its_reason() {
        let decline = Decline::new(DeclineCode::CardDeclined);

        let done = waiting()
            .finish(&Outcome::Decline(decline.clone()), at(30))
            .unwrap();

        assert_eq!(done.status(), Status::Declined);
        assert_eq!(done.decline(), Some(&decline));
        assert_eq!(done.state(), &State::Declined(decline));
    }

    #[test]
    fn a_final_operation_never_changes_again() {
        let approved = waiting().finish(&Outcome::Approve, at(1)).unwrap();
        let declined = waiting()
            .finish(&Outcome::Decline(Decline::new(DeclineCode::Expired)), at(1))
            .unwrap();
        for done in [approved, declined] {
            for outcome in [
                Outcome::Approve,
                Outcome::Decline(Decline::new(DeclineCode::PaymentRejected)),
            ] {
                assert_eq!(
                    done.finish(&outcome, at(2)),
                    Err(NotProcessing(done.status())),
                    "{:?} -> {outcome:?}",
                    done.status()
                );
            }
        }
        let error = NotProcessing(Status::Approved).to_string();
        assert!(error.contains("Approved"), "{error}");
    }

    #[test]
    fn outcomes_name_their_final_status() {
        assert_eq!(Outcome::Approve.status(), Status::Approved);
        assert_eq!(
            Outcome::Decline(Decline::new(DeclineCode::Expired)).status(),
            Status::Declined
        );
        assert!(Outcome::Approve.status().is_final());
    }

    #[test]
    fn a_processing_deposit_expires_when_its_lifetime_is_reached() {
        let op = waiting();
        assert!(!op.is_expired(at(599)));
        assert!(!op.is_expired(at(600).plus_millis(-1)));
        assert!(op.is_expired(at(600)));
        assert!(op.is_expired(at(6_000)));
    }

    #[test]
    fn final_operations_and_those_without_lifetime_never_expire() {
        let done = waiting().finish(&Outcome::Approve, at(1)).unwrap();
        assert!(!done.is_expired(at(6_000)));
        let payout = OperationBuilder::payout(PaymentMethod::Sbp).build();
        assert!(!payout.is_expired(at(1_000_000)));
        assert_eq!(payout.expires_at(), None);
    }

    #[test]
    fn lifetime_left_counts_whole_seconds_down_to_zero() {
        let op = waiting();
        assert_eq!(op.lifetime_left(at(0)), Some(600));
        assert_eq!(
            op.lifetime_left(at(0).plus_millis(1)),
            Some(600),
            "rounds up"
        );
        assert_eq!(op.lifetime_left(at(599)), Some(1));
        assert_eq!(op.lifetime_left(at(600)), Some(0));
        assert_eq!(op.lifetime_left(at(900)), Some(0), "never negative");
        let none = OperationBuilder::deposit(PaymentMethod::Card).build();
        assert_eq!(none.lifetime_left(at(0)), None);
    }

    #[test]
    fn decline_codes_round_trip_through_their_names() {
        let mut names = std::collections::HashSet::new();
        for code in DeclineCode::ALL {
            assert_eq!(DeclineCode::parse(code.as_str()), Some(code));
            assert!(!code.message().is_empty());
            assert_eq!(Decline::new(code).message, code.message());
            assert!(names.insert(code.as_str()), "{} twice", code.as_str());
        }
        assert_eq!(names.len(), 9);
        for unknown in ["", "expired", "EXPIRED", "Unknown"] {
            assert_eq!(DeclineCode::parse(unknown), None, "{unknown:?}");
            assert_eq!(DeclineCode::from_stored(unknown).as_str(), unknown);
        }
    }

    #[test]
    fn only_requisites_show_a_lifetime() {
        let requisites = Action::Requisites {
            requisites: KeptObject::new(),
        };
        assert!(requisites.shows_lifetime());
        for other in [
            Action::Redirect {
                url: "https://x.example".into(),
            },
            Action::InputFields { fields: Vec::new() },
            Action::Instruction {
                category: "DoPayment".into(),
                steps: Vec::new(),
            },
            Action::Confirmation {
                channels: vec!["sms".into()],
                attempts_left: CONFIRMATION_ATTEMPTS,
            },
        ] {
            assert!(!other.shows_lifetime(), "{other:?}");
        }
    }

    #[test]
    fn a_processing_payout_is_accepted_and_its_due_time_cleared_when_final() {
        let payout = OperationBuilder::payout(PaymentMethod::Card).build();
        let accepted = payout
            .accepted(Some(ProviderState::new("plan")), at(5))
            .unwrap();
        assert_eq!(accepted.due_at(), Some(at(5)));
        assert_eq!(
            accepted.provider_state().map(ProviderState::as_str),
            Some("plan")
        );
        let done = accepted.finish(&Outcome::Approve, at(6)).unwrap();
        assert_eq!(done.due_at(), None);
        assert_eq!(
            done.accepted(None, at(7)),
            Err(StepRefused::NotProcessing(NotProcessing(Status::Approved)))
        );
    }

    #[test]
    fn steps_of_the_other_kind_are_refused() {
        let deposit = OperationBuilder::deposit(PaymentMethod::Card).build();
        assert_eq!(
            deposit.accepted(None, at(1)),
            Err(StepRefused::WrongKind(Direction::Deposit))
        );
        let payout = OperationBuilder::payout(PaymentMethod::Card).build();
        let action = Action::Redirect {
            url: "https://x.example".into(),
        };
        assert_eq!(
            payout.wait_for(action.clone(), at(1)),
            Err(StepRefused::WrongKind(Direction::Withdrawal))
        );
        let waiting = deposit.wait_for(action.clone(), at(1)).unwrap();
        assert_eq!(waiting.action(), Some(&action));
        assert_eq!(waiting.updated_at(), at(1));
    }

    #[test]
    fn a_method_of_the_other_direction_cannot_make_an_operation() {
        let payout = OperationBuilder::payout(PaymentMethod::Card).build();
        let refused = Operation::open(
            Opening {
                method: PaymentMethod::SbpQr,
                ..payout.opening().clone()
            },
            payout.part().clone(),
        );
        assert_eq!(
            refused,
            Err(Unfit::Method {
                method: PaymentMethod::SbpQr,
                direction: Direction::Withdrawal
            })
        );
    }
}
