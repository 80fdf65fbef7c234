//! Balances and the ledger: every balance change is one entry, written with the change.

use crate::dispute::Dispute;
use crate::fee::Fee;
use crate::names::names;
use crate::operation::Operation;
use crate::refund::Refund;
use crate::{Currency, Direction, DisputeId, MerchantId, OperationId, RefundId, Status, Timestamp};

/// A merchant's money in one currency, in minor units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balance {
    pub currency: Currency,
    pub available: i64,
    pub held: i64,
}

names! {
    /// Why a balance changed. Stored by name; an unknown stored name is an error, never a
    /// default.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum EntryKind {
        /// An approved deposit: available += amount.
        DepositApproved = "deposit_approved",
        /// A payout was created: available -= amount, held += amount (only if available suffices).
        WithdrawalHold = "withdrawal_hold",
        /// A payout was declined: held -= amount, available += amount.
        WithdrawalReleased = "withdrawal_released",
        /// A payout was approved: held -= amount.
        WithdrawalPaid = "withdrawal_paid",
        /// An operator's credit: available += amount.
        ManualCredit = "manual_credit",
        /// An operator's debit: available -= amount (only if available suffices).
        ManualDebit = "manual_debit",
        /// A refund was created: available -= amount, held += amount (only if available suffices).
        RefundHold = "refund_hold",
        /// A refund was declined: held -= amount, available += amount.
        RefundReleased = "refund_released",
        /// A refund was approved: held -= amount.
        RefundPaid = "refund_paid",
        /// The merchant paid an approved operation's or refund's fee: available -= fee (a
        /// deposit's, out of what it credited) or held -= fee (a payout's or refund's, out of its
        /// hold).
        Fee = "fee",
        /// The operator's fee account of the currency earned that fee. The account is the sum of
        /// these entries (it has no balance row); the entry names the merchant who paid, whose
        /// own balance it does not move.
        FeeIncome = "fee_income",
        /// An accepted appeal: available += the amount it corrects (negative when the deposit
        /// was credited too much: then only if available suffices). Its fee, or the change
        /// of the deposit's fee, is a `fee` entry of the appeal beside it.
        Appeal = "appeal",
        /// A chargeback was opened: available -= amount, held += amount (available may go
        /// below zero this way, and only this way).
        DisputeHold = "dispute_hold",
        /// A chargeback was won: held -= amount, available += amount.
        DisputeReturned = "dispute_returned",
        /// A chargeback was lost: held -= amount (the money went back to the payer).
        DisputeLost = "dispute_lost",
    }
}

impl EntryKind {
    /// Whether the entry moves the operator's fee account rather than the merchant's
    /// balance.
    pub fn is_fee_income(self) -> bool {
        self == EntryKind::FeeIncome
    }
}

/// One balance change and its ledger entry; applied atomically with the status change that caused it.
///
/// A move with a negative `available` must only apply if the available balance covers it
/// (one conditional statement); otherwise the whole unit of work fails with insufficient balance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceMove {
    pub merchant_id: MerchantId,
    pub currency: Currency,
    pub kind: EntryKind,
    /// Change of the available balance, in minor units.
    pub available: i64,
    /// Change of the held balance, in minor units.
    pub held: i64,
    pub operation_id: Option<OperationId>,
    /// The refund that moved it (its `operation_id` is then the refunded deposit's).
    pub refund_id: Option<RefundId>,
    /// The dispute that moved it (its `operation_id` is then the disputed deposit's).
    pub dispute_id: Option<DisputeId>,
    pub at: Timestamp,
}

fn move_for(
    op: &Operation,
    kind: EntryKind,
    available: i64,
    held: i64,
    at: Timestamp,
) -> BalanceMove {
    BalanceMove {
        merchant_id: op.merchant_id().clone(),
        currency: op.currency(),
        kind,
        available,
        held,
        operation_id: Some(op.id()),
        refund_id: None,
        dispute_id: None,
        at,
    }
}

/// The hold a new payout places on the balance: its amount and its fee.
pub fn hold_for(payout: &Operation) -> BalanceMove {
    let a = payout.amount().minor() + payout.fee().amount;
    move_for(
        payout,
        EntryKind::WithdrawalHold,
        -a,
        a,
        payout.created_at(),
    )
}

/// The balance moves caused by `done` reaching its final status (the balance and ledger
/// rules of docs/api.md). An approved deposit credits its amount, then pays its fee out of
/// it; an approved payout pays its amount and its fee out of its hold; a declined payout
/// gives the whole hold back. A fee paid is earned by the fee account in the same moves.
pub fn moves_on_finish(done: &Operation) -> Vec<BalanceMove> {
    let a = done.amount().minor();
    let f = done.fee().amount;
    let at = done.updated_at();
    let fee = |from_held: bool| {
        fee_moves(f, from_held, |kind, available, held| {
            move_for(done, kind, available, held, at)
        })
    };
    match (done.direction(), done.status()) {
        (Direction::Deposit, Status::Approved) => {
            let mut moves = vec![move_for(done, EntryKind::DepositApproved, a, 0, at)];
            moves.extend(fee(false));
            moves
        }
        (Direction::Deposit, Status::Declined) | (_, Status::Processing) => Vec::new(),
        (Direction::Withdrawal, Status::Approved) => {
            let mut moves = vec![move_for(done, EntryKind::WithdrawalPaid, 0, -a, at)];
            moves.extend(fee(true));
            moves
        }
        (Direction::Withdrawal, Status::Declined) => {
            vec![move_for(
                done,
                EntryKind::WithdrawalReleased,
                a + f,
                -(a + f),
                at,
            )]
        }
    }
}

/// A fee of `f` paid out of the merchant's available balance or, with `from_held`, out of
/// its hold, and earned by the fee account; nothing for no fee.
fn fee_moves(
    f: i64,
    from_held: bool,
    make: impl Fn(EntryKind, i64, i64) -> BalanceMove,
) -> Vec<BalanceMove> {
    if f == 0 {
        return Vec::new();
    }
    let paid = match from_held {
        true => make(EntryKind::Fee, 0, -f),
        false => make(EntryKind::Fee, -f, 0),
    };
    vec![paid, make(EntryKind::FeeIncome, f, 0)]
}

fn refund_move(
    refund: &Refund,
    kind: EntryKind,
    available: i64,
    held: i64,
    at: Timestamp,
) -> BalanceMove {
    BalanceMove {
        merchant_id: refund.merchant_id.clone(),
        currency: refund.currency,
        kind,
        available,
        held,
        operation_id: Some(refund.operation_id),
        refund_id: Some(refund.id),
        dispute_id: None,
        at,
    }
}

/// The hold a new refund places on the balance, as a payout's does: its amount and its fee.
pub fn refund_hold(refund: &Refund) -> BalanceMove {
    let a = refund.amount.minor() + refund.fee.amount;
    refund_move(refund, EntryKind::RefundHold, -a, a, refund.created_at)
}

/// The balance moves caused by `done`, a refund, reaching its final status: approved pays
/// the amount and the fee out of the hold (the fee to the fee account), declined gives the
/// whole hold back to available.
pub fn moves_on_refund_finish(done: &Refund) -> Vec<BalanceMove> {
    let a = done.amount.minor();
    let f = done.fee.amount;
    let at = done.updated_at;
    match done.status() {
        Status::Processing => Vec::new(),
        Status::Approved => {
            let mut moves = vec![refund_move(done, EntryKind::RefundPaid, 0, -a, at)];
            moves.extend(fee_moves(f, true, |kind, available, held| {
                refund_move(done, kind, available, held, at)
            }));
            moves
        }
        Status::Declined => vec![refund_move(
            done,
            EntryKind::RefundReleased,
            a + f,
            -(a + f),
            at,
        )],
    }
}

/// An operator's manual credit (`positive`) or debit of a balance.
pub fn manual_move(
    merchant_id: MerchantId,
    currency: Currency,
    amount: crate::Amount,
    credit: bool,
    at: Timestamp,
) -> BalanceMove {
    let (kind, delta) = if credit {
        (EntryKind::ManualCredit, amount.minor())
    } else {
        (EntryKind::ManualDebit, -amount.minor())
    };
    BalanceMove {
        merchant_id,
        currency,
        kind,
        available: delta,
        held: 0,
        operation_id: None,
        refund_id: None,
        dispute_id: None,
        at,
    }
}

/// What accepting an appeal moves, or why it cannot be accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppealMoves {
    /// The moves (none when the accepted amount changes nothing).
    Moves(Vec<BalanceMove>),
    /// The deposit's fee on the accepted amount would be at least the amount.
    AmountTooSmall,
}

/// The moves of accepting `done` (an appeal, decided at its accepted amount) of `deposit`,
/// with the fee the deposit's stored tariff gives: for `paid_not_credited`, the amount is
/// credited and its fee paid out of it; for `wrong_amount`, the difference between the right
/// amount and the deposit's is credited (or debited), and the difference of their fees paid
/// (or given back). The fee account earns (or gives back) the fee in the same moves.
pub fn appeal_moves(done: &Dispute, deposit: &Operation) -> AppealMoves {
    let accepted = done.amount;
    let terms = deposit.fee().terms;
    let fee = Fee::of(terms, accepted).amount;
    if fee >= accepted.minor() {
        return AppealMoves::AmountTooSmall;
    }
    let (amount, fee) = match done.appeal_reason() {
        Some(crate::dispute::AppealReason::WrongAmount) => (
            accepted.minor() - deposit.amount().minor(),
            fee - deposit.fee().amount,
        ),
        _ => (accepted.minor(), fee),
    };
    let make = |kind, available| BalanceMove {
        merchant_id: done.merchant_id.clone(),
        currency: done.currency,
        kind,
        available,
        held: 0,
        operation_id: Some(done.operation_id),
        refund_id: None,
        dispute_id: Some(done.id),
        at: done.updated_at,
    };
    let mut moves = Vec::new();
    if amount != 0 {
        moves.push(make(EntryKind::Appeal, amount));
    }
    if fee != 0 {
        let fee_moves = [make(EntryKind::Fee, -fee), make(EntryKind::FeeIncome, fee)];
        // A debit goes last, after the fee given back: the available balance must cover the
        // net debit only.
        let at = if amount < 0 { 0 } else { moves.len() };
        moves.splice(at..at, fee_moves);
    }
    AppealMoves::Moves(moves)
}

/// A chargeback's move of `kind` (`dispute_hold`, `dispute_returned`, `dispute_lost`) of its
/// amount, dated `at`: the hold takes it from available to held (available may go below zero
/// this way, and only this way), a won one gives it back, a lost one removes it from held.
pub fn chargeback_move(dispute: &Dispute, kind: EntryKind, at: Timestamp) -> BalanceMove {
    let amount = dispute.amount.minor();
    let (available, held) = match kind {
        EntryKind::DisputeHold => (-amount, amount),
        EntryKind::DisputeReturned => (amount, -amount),
        _ => (0, -amount),
    };
    BalanceMove {
        merchant_id: dispute.merchant_id.clone(),
        currency: dispute.currency,
        kind,
        available,
        held,
        operation_id: Some(dispute.operation_id),
        refund_id: None,
        dispute_id: Some(dispute.id),
        at,
    }
}

/// The amount an accepted appeal gives the merchant in all, in minor units: what
/// [`appeal_moves`] credit less the fee they pay.
pub fn appeal_net(moves: &[BalanceMove]) -> i64 {
    moves
        .iter()
        .filter(|m| !m.kind.is_fee_income())
        .map(|m| m.available)
        .sum()
}

/// Who made a manual ledger entry and why; both are stored on the entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManualNote {
    pub actor: crate::console::Actor,
    /// What the operator gave, trimmed; `manual` when they gave nothing.
    pub reason: String,
}

impl ManualNote {
    /// The longest reason, in characters.
    pub const MAX_REASON: usize = 500;

    /// A note with `reason` trimmed (`manual` if empty); refused over 500 characters or with
    /// control characters.
    pub fn new(
        actor: crate::console::Actor,
        reason: Option<&str>,
    ) -> Result<ManualNote, crate::ValueError> {
        let reason = reason.map(str::trim).unwrap_or("");
        if reason.chars().count() > Self::MAX_REASON {
            return Err(crate::ValueError::new("must be at most 500 characters"));
        }
        if reason.chars().any(|c| c.is_control()) {
            return Err(crate::ValueError::new("must not hold control characters"));
        }
        let reason = if reason.is_empty() { "manual" } else { reason };
        Ok(ManualNote {
            actor,
            reason: reason.to_string(),
        })
    }
}

/// A manual entry as written: the balance after it, the entry's number, and the
/// discrepancies of the operation it names that it resolved (none when it names none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManualEntry {
    pub balance: Balance,
    /// The entry's number in the ledger.
    pub entry_id: i64,
    /// The ids of the discrepancies it resolved, ascending.
    pub resolved: Vec<i64>,
}

/// A merchant and currency whose balance differs from the sum of its ledger entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerMismatch {
    pub merchant_id: MerchantId,
    pub currency: Currency,
    pub balance_available: i64,
    pub balance_held: i64,
    pub ledger_available: i64,
    pub ledger_held: i64,
}

/// One currency's money at the gateway's edge: what the merchants hold (available and held)
/// and what the operator's fee account earned, against what came in (approved deposits,
/// manual credits) and went out (approved payouts and refunds, manual debits), in minor
/// units. Nothing else creates or destroys money, so the two sides are equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flows {
    pub currency: Currency,
    pub merchants: i64,
    pub fees: i64,
    pub came_in: i64,
    pub went_out: i64,
}

impl Flows {
    /// Whether the merchants' balances plus the fee account equal what came in less what
    /// went out.
    pub fn balanced(&self) -> bool {
        self.merchants + self.fees == self.came_in - self.went_out
    }
}

/// A merchant entry that does not record the balance it left: what it records is not the
/// entry before it plus its own change, or it is dated before an entry numbered after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenEntry {
    pub merchant_id: MerchantId,
    pub currency: Currency,
    /// The entry's number in the ledger.
    pub entry_id: i64,
}

/// What `ledger verify` finds: the balances that differ from their ledger entries, the
/// entries whose recorded balances do not follow from the ones before them, and each
/// currency's flows (balanced or not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerReport {
    pub mismatches: Vec<LedgerMismatch>,
    pub broken: Vec<BrokenEntry>,
    pub flows: Vec<Flows>,
}

impl LedgerReport {
    /// The currencies whose flows do not balance.
    pub fn unbalanced(&self) -> impl Iterator<Item = &Flows> {
        self.flows.iter().filter(|f| !f.balanced())
    }

    /// How many things are wrong: mismatched balances, broken entries and unbalanced
    /// currencies.
    pub fn problems(&self) -> usize {
        self.mismatches.len() + self.broken.len() + self.unbalanced().count()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::operation::{Decline, DeclineCode, Operation, Outcome};
    use crate::testkit::{at, id, OperationBuilder};
    use crate::{Amount, PaymentMethod};

    fn merchant() -> MerchantId {
        MerchantId::parse("m-1").unwrap()
    }

    fn op(n: u128, direction: Direction, amount: &str) -> Operation {
        let op = match direction {
            Direction::Deposit => OperationBuilder::deposit(PaymentMethod::Sbp),
            Direction::Withdrawal => OperationBuilder::payout(PaymentMethod::Sbp),
        };
        op.id(id(n))
            .merchant("m-1")
            .amount(amount)
            .user("u")
            .build()
    }

    fn finished(op: &Operation, approve: bool) -> Operation {
        let outcome = if approve {
            Outcome::Approve
        } else {
            Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined))
        };
        op.finish(&outcome, at(60)).unwrap()
    }

    fn deltas(moves: &[BalanceMove]) -> Vec<(EntryKind, i64, i64)> {
        moves
            .iter()
            .map(|m| (m.kind, m.available, m.held))
            .collect()
    }

    #[test]
    fn an_approved_deposit_credits_available() {
        let done = finished(&op(1, Direction::Deposit, "12.34"), true);
        let moves = moves_on_finish(&done);
        assert_eq!(deltas(&moves), vec![(EntryKind::DepositApproved, 1_234, 0)]);
        assert_eq!(moves[0].operation_id, Some(done.id()));
        assert_eq!(moves[0].merchant_id, merchant());
        assert_eq!(moves[0].currency, Currency::RUB);
        assert_eq!(moves[0].at, at(60), "written with the status change");
    }

    #[test]
    fn a_declined_deposit_moves_nothing() {
        let done = finished(&op(1, Direction::Deposit, "12.34"), false);
        assert!(moves_on_finish(&done).is_empty());
    }

    #[test]
    fn an_approved_payout_pays_out_the_held_amount() {
        let done = finished(&op(1, Direction::Withdrawal, "12.34"), true);
        assert_eq!(
            deltas(&moves_on_finish(&done)),
            vec![(EntryKind::WithdrawalPaid, 0, -1_234)]
        );
    }

    #[test]
    fn a_declined_payout_releases_the_hold() {
        let done = finished(&op(1, Direction::Withdrawal, "12.34"), false);
        assert_eq!(
            deltas(&moves_on_finish(&done)),
            vec![(EntryKind::WithdrawalReleased, 1_234, -1_234)]
        );
    }

    #[test]
    fn a_processing_operation_moves_nothing() {
        for direction in Direction::ALL {
            assert!(moves_on_finish(&op(1, direction, "1.00")).is_empty());
        }
    }

    #[test]
    fn a_new_payout_holds_its_amount_when_created() {
        let payout = op(1, Direction::Withdrawal, "250.00");
        let hold = hold_for(&payout);
        assert_eq!(
            deltas(std::slice::from_ref(&hold)),
            vec![(EntryKind::WithdrawalHold, -25_000, 25_000)]
        );
        assert_eq!(hold.at, payout.created_at());
        assert_eq!(hold.operation_id, Some(payout.id()));
    }

    #[test]
    fn operators_credit_and_debit_available_only() {
        let amount = Amount::parse("5.00", Currency::RUB).unwrap();
        let credit = manual_move(merchant(), Currency::RUB, amount, true, at(1));
        let debit = manual_move(merchant(), Currency::RUB, amount, false, at(2));
        assert_eq!(
            deltas(&[credit.clone(), debit.clone()]),
            vec![
                (EntryKind::ManualCredit, 500, 0),
                (EntryKind::ManualDebit, -500, 0)
            ]
        );
        assert_eq!((credit.operation_id, credit.at), (None, at(1)));
        assert_eq!((debit.merchant_id, debit.at), (merchant(), at(2)));
    }

    #[test]
    fn entry_kinds_round_trip_through_their_names() {
        for kind in EntryKind::ALL {
            assert_eq!(EntryKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(EntryKind::parse("deposit"), None);
        assert_eq!(EntryKind::parse(""), None);
    }

    /// Applies moves the way storage must: a move taking from `available` only if it suffices.
    fn apply(
        balance: &mut Balance,
        ledger: &mut Vec<BalanceMove>,
        moves: Vec<BalanceMove>,
    ) -> bool {
        let mut next = *balance;
        for m in &moves {
            if m.available < 0 && next.available + m.available < 0 {
                return false;
            }
            next.available += m.available;
            next.held += m.held;
        }
        *balance = next;
        ledger.extend(moves);
        true
    }

    #[test]
    fn a_full_lifecycle_keeps_the_balance_equal_to_the_ledger() {
        let mut balance = Balance {
            currency: Currency::RUB,
            available: 0,
            held: 0,
        };
        let mut ledger = Vec::new();
        let five_hundred = Amount::parse("500.00", Currency::RUB).unwrap();

        assert!(apply(
            &mut balance,
            &mut ledger,
            vec![manual_move(
                merchant(),
                Currency::RUB,
                five_hundred,
                true,
                at(0)
            )]
        ));
        let deposit = op(1, Direction::Deposit, "100.00");
        assert!(apply(
            &mut balance,
            &mut ledger,
            moves_on_finish(&finished(&deposit, true))
        ));
        let lost = op(2, Direction::Deposit, "999.00");
        assert!(apply(
            &mut balance,
            &mut ledger,
            moves_on_finish(&finished(&lost, false))
        ));
        let paid = op(3, Direction::Withdrawal, "250.00");
        assert!(apply(&mut balance, &mut ledger, vec![hold_for(&paid)]));
        let refused = op(4, Direction::Withdrawal, "300.00");
        assert!(apply(&mut balance, &mut ledger, vec![hold_for(&refused)]));
        assert_eq!((balance.available, balance.held), (5_000, 55_000));
        let too_big = op(5, Direction::Withdrawal, "50.01");
        assert!(
            !apply(&mut balance, &mut ledger, vec![hold_for(&too_big)]),
            "available never goes negative"
        );
        assert!(apply(
            &mut balance,
            &mut ledger,
            moves_on_finish(&finished(&paid, true))
        ));
        assert!(apply(
            &mut balance,
            &mut ledger,
            moves_on_finish(&finished(&refused, false))
        ));
        let declined_at_creation = op(6, Direction::Withdrawal, "10.00");
        let mut both = vec![hold_for(&declined_at_creation)];
        both.extend(moves_on_finish(&finished(&declined_at_creation, false)));
        assert!(apply(&mut balance, &mut ledger, both));

        assert_eq!((balance.available, balance.held), (35_000, 0));
        let sum: i64 = ledger.iter().map(|m| m.available + m.held).sum();
        assert_eq!(balance.available + balance.held, sum);
        assert_eq!(sum, 50_000 + 10_000 - 25_000);
        assert_eq!(ledger.len(), 8);
    }

    fn paying(op: Operation, fee: i64) -> Operation {
        let terms = crate::fee::FeeTerms::new(crate::fee::Percent::ZERO, fee, None, None).unwrap();
        let opening = crate::operation::Opening {
            fee: crate::fee::Fee {
                amount: fee,
                terms: Some(terms),
            },
            ..op.opening().clone()
        };
        Operation::restore(
            opening,
            op.part().clone(),
            op.state().clone(),
            op.updated_at(),
        )
        .unwrap()
    }

    #[test]
    fn an_approved_deposit_credits_its_amount_then_pays_its_fee_to_the_fee_account() {
        let deposit = paying(op(1, Direction::Deposit, "100.00"), 1_500);
        let moves = moves_on_finish(&finished(&deposit, true));
        assert_eq!(
            deltas(&moves),
            vec![
                (EntryKind::DepositApproved, 10_000, 0),
                (EntryKind::Fee, -1_500, 0),
                (EntryKind::FeeIncome, 1_500, 0),
            ]
        );
        assert!(moves
            .iter()
            .all(|m| m.merchant_id == merchant() && m.operation_id == Some(id(1))));
        assert!(moves_on_finish(&finished(&deposit, false)).is_empty());
    }

    #[test]
    fn a_payout_holds_its_amount_and_fee_and_pays_or_releases_both() {
        let payout = paying(op(2, Direction::Withdrawal, "1000.00"), 1_000);
        assert_eq!(
            deltas(&[hold_for(&payout)]),
            vec![(EntryKind::WithdrawalHold, -101_000, 101_000)]
        );
        assert_eq!(
            deltas(&moves_on_finish(&finished(&payout, true))),
            vec![
                (EntryKind::WithdrawalPaid, 0, -100_000),
                (EntryKind::Fee, 0, -1_000),
                (EntryKind::FeeIncome, 1_000, 0),
            ]
        );
        assert_eq!(
            deltas(&moves_on_finish(&finished(&payout, false))),
            vec![(EntryKind::WithdrawalReleased, 101_000, -101_000)]
        );
    }

    #[test]
    fn a_refund_holds_its_amount_and_fee_and_pays_or_releases_both() {
        let deposit = op(3, Direction::Deposit, "100.00");
        let fee = crate::fee::Fee {
            amount: 50,
            terms: None,
        };
        let refund = crate::testkit::refund_of(9, &deposit, 3_000, fee);
        assert_eq!(
            deltas(&[refund_hold(&refund)]),
            vec![(EntryKind::RefundHold, -3_050, 3_050)]
        );
        let approved = refund.finish(&Outcome::Approve, at(9)).unwrap();
        let moves = moves_on_refund_finish(&approved);
        assert_eq!(
            deltas(&moves),
            vec![
                (EntryKind::RefundPaid, 0, -3_000),
                (EntryKind::Fee, 0, -50),
                (EntryKind::FeeIncome, 50, 0),
            ]
        );
        assert!(moves.iter().all(|m| m.refund_id == Some(refund.id)));
        let declined = Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined));
        let declined = refund.finish(&declined, at(9)).unwrap();
        assert_eq!(
            deltas(&moves_on_refund_finish(&declined)),
            vec![(EntryKind::RefundReleased, 3_050, -3_050)]
        );
    }

    /// What the ledger rules keep true whatever happens: the merchant's balance plus the fee
    /// account equal the money that came in minus the money that went out, and the held
    /// balance is exactly what the processing payouts and refunds hold.
    mod flows {
        use proptest::prelude::*;

        use super::*;

        /// One step of a random history: a movement of `amount` with `fee`, and how it ends
        /// (`None`: it stays processing).
        #[derive(Debug, Clone)]
        enum Step {
            Deposit(i64, i64, Option<bool>),
            Payout(i64, i64, Option<bool>),
            Refund(i64, i64, Option<bool>),
            Manual(i64, bool),
        }

        fn step() -> impl Strategy<Value = Step> {
            let movement = || {
                (
                    1i64..100_000,
                    0i64..5_000,
                    proptest::option::of(any::<bool>()),
                )
            };
            prop_oneof![
                movement().prop_map(|(a, f, end)| Step::Deposit(a, f, end)),
                movement().prop_map(|(a, f, end)| Step::Payout(a, f, end)),
                movement().prop_map(|(a, f, end)| Step::Refund(a, f, end)),
                (1i64..100_000, any::<bool>()).prop_map(|(a, credit)| Step::Manual(a, credit)),
            ]
        }

        /// The merchant's balance and the fee account as the store keeps them, and the
        /// flows across the gateway's edge.
        #[derive(Default)]
        struct Books {
            available: i64,
            held: i64,
            fees: i64,
            came_in: i64,
            went_out: i64,
            holding: i64,
        }

        impl Books {
            /// Applies `moves` as the store does: all or none, refused when a move that
            /// takes from the available balance finds too little.
            fn apply(&mut self, moves: &[BalanceMove]) -> bool {
                let merchants = || moves.iter().filter(|m| !m.kind.is_fee_income());
                let takes = merchants().any(|m| m.available < 0);
                let change: i64 = merchants().map(|m| m.available).sum();
                if takes && self.available + change < 0 {
                    return false;
                }
                for m in moves {
                    if m.kind.is_fee_income() {
                        self.fees += m.available;
                    } else {
                        self.available += m.available;
                        self.held += m.held;
                    }
                }
                true
            }

            /// A hold, then its end: `None` keeps it held.
            fn held_then(
                &mut self,
                hold: BalanceMove,
                total: i64,
                end: Option<Vec<BalanceMove>>,
                paid: i64,
            ) {
                if !self.apply(&[hold]) {
                    return;
                }
                match end {
                    None => self.holding += total,
                    Some(moves) => {
                        assert!(self.apply(&moves), "an end never needs more money");
                        self.went_out += paid;
                    }
                }
            }
        }

        fn outcome(approved: bool) -> Outcome {
            match approved {
                true => Outcome::Approve,
                false => Outcome::Decline(Decline::new(DeclineCode::ProviderDeclined)),
            }
        }

        fn amount_text(minor: i64) -> String {
            format!("{}.{:02}", minor / 100, minor % 100)
        }

        proptest! {
            #[test]
            fn balances_and_fee_accounts_equal_the_external_flows(
                steps in proptest::collection::vec(step(), 1..40),
            ) {
                let mut books = Books::default();
                for (n, step) in (1u128..).zip(steps) {
                    match step {
                        Step::Deposit(a, f, end) => {
                            // A deposit's fee is below its amount (else AmountTooSmall).
                            let deposit = paying(op(n, Direction::Deposit, &amount_text(a)), f.min(a - 1));
                            if let Some(approved) = end {
                                let done = deposit.finish(&outcome(approved), at(60)).unwrap();
                                prop_assert!(books.apply(&moves_on_finish(&done)));
                                if approved {
                                    books.came_in += a;
                                }
                            }
                        }
                        Step::Payout(a, f, end) => {
                            let payout = paying(op(n, Direction::Withdrawal, &amount_text(a)), f);
                            let ended = end.map(|approved| {
                                let done = payout.finish(&outcome(approved), at(60)).unwrap();
                                (moves_on_finish(&done), if approved { a } else { 0 })
                            });
                            let paid = ended.as_ref().map_or(0, |(_, paid)| *paid);
                            books.held_then(hold_for(&payout), a + f, ended.map(|(m, _)| m), paid);
                        }
                        Step::Refund(a, f, end) => {
                            let deposit = op(n, Direction::Deposit, "1.00");
                            let fee = crate::fee::Fee { amount: f, terms: None };
                            let refund = crate::testkit::refund_of(n, &deposit, a, fee);
                            let ended = end.map(|approved| {
                                let done = refund.finish(&outcome(approved), at(60)).unwrap();
                                (moves_on_refund_finish(&done), if approved { a } else { 0 })
                            });
                            let paid = ended.as_ref().map_or(0, |(_, paid)| *paid);
                            books.held_then(refund_hold(&refund), a + f, ended.map(|(m, _)| m), paid);
                        }
                        Step::Manual(a, credit) => {
                            let units = Amount::from_minor(a).unwrap();
                            let entry = manual_move(merchant(), crate::Currency::RUB, units, credit, at(1));
                            if books.apply(&[entry]) {
                                if credit { books.came_in += a } else { books.went_out += a }
                            }
                        }
                    }
                    prop_assert!(books.available >= 0 && books.held >= 0 && books.fees >= 0);
                    prop_assert_eq!(
                        books.available + books.held + books.fees,
                        books.came_in - books.went_out
                    );
                    prop_assert_eq!(books.held, books.holding);
                }
            }
        }
    }

    fn tariff_of_two_percent() -> crate::fee::FeeTerms {
        crate::fee::FeeTerms::new(crate::fee::Percent::parse("2").unwrap(), 0, None, None).unwrap()
    }

    fn accepted(reason: crate::dispute::AppealReason, amount: &str) -> crate::dispute::Dispute {
        let appeal = crate::testkit::appeal_of(9, "1.00", reason);
        let amount = Amount::parse(amount, Currency::RUB).unwrap();
        appeal
            .decide(
                crate::dispute::DisputeStatus::Accepted,
                amount,
                None,
                at(70),
            )
            .unwrap()
    }

    fn moves_of(outcome: AppealMoves) -> Vec<BalanceMove> {
        match outcome {
            AppealMoves::Moves(moves) => moves,
            AppealMoves::AmountTooSmall => panic!("refused"),
        }
    }

    #[test]
    fn an_accepted_paid_not_credited_appeal_credits_its_amount_less_the_deposits_fee() {
        use crate::dispute::AppealReason;
        let deposit = OperationBuilder::deposit(PaymentMethod::Sbp)
            .id(id(1))
            .merchant("m-1")
            .amount("100.00")
            .fee(crate::fee::Fee::of(
                Some(tariff_of_two_percent()),
                Amount::parse("100.00", Currency::RUB).unwrap(),
            ))
            .build();
        let done = accepted(AppealReason::PaidNotCredited, "100.00");
        let moves = moves_of(appeal_moves(&done, &deposit));
        assert_eq!(
            deltas(&moves),
            vec![
                (EntryKind::Appeal, 10_000, 0),
                (EntryKind::Fee, -200, 0),
                (EntryKind::FeeIncome, 200, 0)
            ]
        );
        assert_eq!(appeal_net(&moves), 9_800);
        assert!(moves
            .iter()
            .all(|m| m.dispute_id == Some(done.id) && m.operation_id == Some(deposit.id())));
        assert_eq!(moves[0].at, at(70));
    }

    #[test]
    fn an_accepted_wrong_amount_appeal_moves_the_difference_of_the_net_amounts() {
        use crate::dispute::AppealReason;
        let paid = |amount: &str| {
            OperationBuilder::deposit(PaymentMethod::Sbp)
                .id(id(1))
                .merchant("m-1")
                .amount(amount)
                .fee(crate::fee::Fee::of(
                    Some(tariff_of_two_percent()),
                    Amount::parse(amount, Currency::RUB).unwrap(),
                ))
                .build()
        };
        // Approved at 100.00 (98.00 credited), paid 150.00: 49.00 more (147.00 in all).
        let more = moves_of(appeal_moves(
            &accepted(AppealReason::WrongAmount, "150.00"),
            &paid("100.00"),
        ));
        assert_eq!(
            deltas(&more),
            vec![
                (EntryKind::Appeal, 5_000, 0),
                (EntryKind::Fee, -100, 0),
                (EntryKind::FeeIncome, 100, 0)
            ]
        );
        assert_eq!(appeal_net(&more), 4_900);
        // Approved at 100.00, paid 50.00: 49.00 less, and the fee account gives 1.00 back.
        let less = moves_of(appeal_moves(
            &accepted(AppealReason::WrongAmount, "50.00"),
            &paid("100.00"),
        ));
        assert_eq!(appeal_net(&less), -4_900);
        assert_eq!(
            deltas(&less),
            vec![
                (EntryKind::Fee, 100, 0),
                (EntryKind::FeeIncome, -100, 0),
                (EntryKind::Appeal, -5_000, 0)
            ],
            "the fee given back before the debit"
        );
        // The right amount was the deposit's: nothing moves.
        let same = moves_of(appeal_moves(
            &accepted(AppealReason::WrongAmount, "100.00"),
            &paid("100.00"),
        ));
        assert!(same.is_empty());
    }

    #[test]
    fn an_appeal_whose_fee_would_take_its_whole_amount_is_refused() {
        let terms =
            crate::fee::FeeTerms::new(crate::fee::Percent::ZERO, 1_000, None, None).unwrap();
        let deposit = OperationBuilder::deposit(PaymentMethod::Sbp)
            .id(id(1))
            .merchant("m-1")
            .amount("100.00")
            .fee(crate::fee::Fee::of(
                Some(terms),
                Amount::parse("100.00", Currency::RUB).unwrap(),
            ))
            .build();
        let done = accepted(crate::dispute::AppealReason::PaidNotCredited, "10.00");
        assert_eq!(appeal_moves(&done, &deposit), AppealMoves::AmountTooSmall);
    }
}
