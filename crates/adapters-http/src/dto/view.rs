//! Answers: operations (docs/api.md: creation and read shapes) and
//! balances. Optional fields are left out, never `null`.

use domain::dispute::Dispute;
use domain::ledger::Balance;
use domain::operation::{Action, InputField, InstructionStep, Operation, SelectOption};
use domain::refund::{refunded_minor, Refund};
use domain::{format_minor, Direction, KeptObject, Timestamp};
use serde::Serialize;

use super::dispute::DisputeView;
use super::movement::{Movement, Side};
use super::refund::RefundView;

/// `{"data": ...}`, the envelope of every successful answer.
#[derive(Debug, Serialize)]
pub struct Data<T> {
    pub data: T,
}

/// An operation as answered; see [`OperationView::creation`] and [`OperationView::read`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationView<'a> {
    operation_id: String,
    status: u8,
    #[serde(flatten)]
    movement: Movement<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    redirect_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    requisites: Option<&'a KeptObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lifetime: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instruction: Option<Instruction<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_fields: Option<Vec<FieldView<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    confirm_required: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    confirmation: Option<Confirmation<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    merchant_operation_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payment_method: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_at: Option<String>,
    /// A deposit's read shape only: the sum of its approved refunds.
    #[serde(skip_serializing_if = "Option::is_none")]
    refunded_amount: Option<String>,
    /// A deposit's read shape only: every refund, oldest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    refunds: Option<Vec<RefundView<'a>>>,
    /// A deposit's read shape only: every dispute, oldest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    disputes: Option<Vec<DisputeView>>,
}

#[derive(Debug, Serialize)]
struct Instruction<'a> {
    category: &'a str,
    steps: Vec<StepView<'a>>,
}

#[derive(Debug, Serialize)]
struct StepView<'a> {
    title: &'a str,
    description: &'a str,
}

impl<'a> From<&'a InstructionStep> for StepView<'a> {
    fn from(step: &'a InstructionStep) -> Self {
        Self {
            title: &step.title,
            description: &step.description,
        }
    }
}

/// An input field: `type` is `string` or `select`; `options` only for `select`.
#[derive(Debug, Serialize)]
struct FieldView<'a> {
    name: &'a str,
    label: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<Vec<OptionView<'a>>>,
}

#[derive(Debug, Serialize)]
struct OptionView<'a> {
    value: &'a str,
    label: &'a str,
}

impl<'a> From<&'a InputField> for FieldView<'a> {
    fn from(field: &'a InputField) -> Self {
        Self {
            name: &field.name,
            label: &field.label,
            kind: &field.kind,
            required: field.required,
            options: field.options.as_ref().map(|options| {
                options
                    .iter()
                    .map(|o: &'a SelectOption| OptionView {
                        value: &o.value,
                        label: &o.label,
                    })
                    .collect()
            }),
        }
    }
}

#[derive(Debug, Serialize)]
struct Confirmation<'a> {
    channels: &'a [String],
}

impl<'a> OperationView<'a> {
    /// The creation answer of a deposit (with its action while it waits) or of a withdrawal.
    /// `now` is the gateway clock, for `lifetime`.
    pub fn creation(op: &'a Operation, now: Timestamp) -> Self {
        let mut view = Self {
            operation_id: op.id().to_string(),
            status: op.status().number(),
            movement: Movement::new(
                op.amount(),
                &op.opening().currency,
                op.fee().amount,
                Side::of(op.direction()),
                op.decline(),
            ),
            redirect_url: None,
            requisites: None,
            lifetime: None,
            instruction: None,
            input_fields: None,
            confirm_required: None,
            confirmation: None,
            merchant_operation_id: None,
            payment_method: None,
            user_id: None,
            created_at: None,
            updated_at: None,
            refunded_amount: None,
            refunds: None,
            disputes: None,
        };
        if op.direction() == Direction::Deposit && !op.status().is_final() {
            if let Some(action) = op.action() {
                view.set_action(op, action, now);
            }
        }
        view
    }

    /// The read (and replay) answer: the creation answer plus merchantOperationId,
    /// paymentMethod, userId, createdAt, updatedAt, a deposit's `refundedAmount` and
    /// `refunds` (`refunds`: the deposit's, oldest first), its `disputes` (oldest first), and
    /// a withdrawal's masked requisites.
    pub fn read(
        op: &'a Operation,
        refunds: &'a [Refund],
        disputes: &[Dispute],
        now: Timestamp,
    ) -> Self {
        let mut view = Self::creation(op, now);
        view.merchant_operation_id = op.merchant_operation_id().map(|m| m.as_str());
        view.payment_method = Some(op.method().as_str());
        view.user_id = Some(op.user_id().as_str());
        view.created_at = Some(op.created_at().to_rfc3339());
        view.updated_at = Some(op.updated_at().to_rfc3339());
        match op.direction() {
            Direction::Deposit => {
                view.refunded_amount = Some(format_minor(refunded_minor(refunds), op.currency()));
                view.refunds = Some(refunds.iter().map(RefundView::new).collect());
                view.disputes = Some(disputes.iter().map(DisputeView::new).collect());
            }
            Direction::Withdrawal => view.requisites = op.requisites(),
        }
        view
    }

    fn set_action(&mut self, op: &'a Operation, action: &'a Action, now: Timestamp) {
        match action {
            Action::Redirect { url } => self.redirect_url = Some(url),
            Action::Requisites { requisites } => self.requisites = Some(requisites),
            Action::InputFields { fields } => {
                self.input_fields = Some(fields.iter().map(FieldView::from).collect())
            }
            Action::Instruction { category, steps } => {
                self.instruction = Some(Instruction {
                    category,
                    steps: steps.iter().map(StepView::from).collect(),
                })
            }
            Action::Confirmation { channels, .. } => {
                self.confirm_required = Some(true);
                self.confirmation = Some(Confirmation { channels });
            }
        }
        if action.shows_lifetime() {
            self.lifetime = op.lifetime_left(now);
        }
    }
}

/// `{"balances": [...]}` of `GET /balance`.
#[derive(Debug, Serialize)]
pub struct Balances {
    balances: Vec<BalanceView>,
}

#[derive(Debug, Serialize)]
struct BalanceView {
    currency: String,
    available: String,
    held: String,
}

impl Balances {
    /// The merchant's balances, amounts in each currency's form.
    pub fn new(balances: &[Balance]) -> Self {
        Self {
            balances: balances
                .iter()
                .map(|b| BalanceView {
                    currency: b.currency.as_str().to_string(),
                    available: format_minor(b.available, b.currency),
                    held: format_minor(b.held, b.currency),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
