//! Creating deposits and withdrawals: access -> idempotency -> route -> balance -> provider.
//!
//! The built-in sandbox answers before anything is stored (and nothing is stored if it
//! fails). An acquirer over the network is called only once the processing operation, its
//! hold and its first attempt are committed, and its answer is written with a guarded update:
//! a crash or a lost answer leaves a processing operation for the reconciler to resolve by
//! reading, never a payment the gateway does not know of.

use super::creation::Creation;
use super::keys::KeyCheck;
use super::routing::Candidate;
use super::{CreateError, Created};
use crate::fee::Fee;
use crate::ledger::{hold_for, moves_on_finish};
use crate::merchant::Merchant;
use crate::operation::{
    Action, Decline, DepositPart, Opening, Operation, Outcome, Part, PayoutPart,
};
use crate::ports::{DepositStart, InsertError, NewOperation, PayoutStart, TariffKey};
use crate::request::{Common, NewDeposit, NewWithdrawal};
use crate::route::{candidates, Route};
use crate::service::callbacks::callback_for;
use crate::signature::Fingerprint;
use crate::{Direction, KeptObject, MerchantOperationId, PaymentMethod, WithdrawalRequisites};

/// What admitting a request found: the sandbox's route to create it on, the acquirer routes
/// to try it on in order, or an earlier operation that answers it (the same
/// merchantOperationId with the same request).
enum Admission {
    Sandbox(Route),
    Acquirers(Vec<Candidate>),
    Replay(Box<Created>),
}

/// What a creation request adds to the fields every request has.
enum Request {
    /// A deposit's requisites, as kept.
    Deposit(Option<KeptObject>),
    /// A payout's full requisites (the provider sees them once; storage keeps them masked).
    Payout(WithdrawalRequisites),
}

impl Request {
    fn direction(&self) -> Direction {
        match self {
            Request::Deposit(_) => Direction::Deposit,
            Request::Payout(_) => Direction::Withdrawal,
        }
    }
}

/// What the sandbox's first answer makes of a new operation.
enum Answer {
    /// It goes on processing, at the step the provider gave it.
    Next(Box<Operation>),
    Declined(Decline),
}

impl Creation {
    /// Creates a deposit for an authenticated merchant. `canonical` is the canonical JSON of
    /// the request, kept only as a keyed hash to recognise replays.
    #[tracing::instrument(skip_all, fields(merchant.id = %merchant.id, payment.method = %request.common.method))]
    pub async fn create_deposit(
        &self,
        merchant: &Merchant,
        request: NewDeposit,
        canonical: &[u8],
    ) -> Result<Created, CreateError> {
        let NewDeposit { common, requisites } = request;
        self.open_new(merchant, common, Request::Deposit(requisites), canonical)
            .await
    }

    /// Creates a withdrawal: the hold and the operation are written in one unit of work.
    #[tracing::instrument(skip_all, fields(merchant.id = %merchant.id, payment.method = %request.common.method))]
    pub async fn create_withdrawal(
        &self,
        merchant: &Merchant,
        request: NewWithdrawal,
        canonical: &[u8],
    ) -> Result<Created, CreateError> {
        let NewWithdrawal { common, requisites } = request;
        self.open_new(merchant, common, Request::Payout(requisites), canonical)
            .await
    }

    /// Admits the request (access, idempotency, route) and creates its operation: a deposit
    /// waiting for its first step, or a payout with its hold.
    async fn open_new(
        &self,
        merchant: &Merchant,
        common: Common,
        request: Request,
        canonical: &[u8],
    ) -> Result<Created, CreateError> {
        let direction = request.direction();
        let fingerprint = self.admit(merchant, direction, &common, canonical)?;
        let fee = match self.fee(merchant, direction, &common, canonical).await? {
            Ok(fee) => fee,
            Err(replay) => return Ok(*replay),
        };
        let (route, candidates) = match self
            .admit_route(merchant, direction, &common, canonical)
            .await?
        {
            Admission::Sandbox(route) => (route, Vec::new()),
            Admission::Acquirers(candidates) => match candidates.first() {
                Some(first) => (first.route.clone(), candidates),
                None => return Err(CreateError::NoRouteFound),
            },
            Admission::Replay(replay) => return Ok(*replay),
        };
        let opening = self.opening(merchant, common, &route, fee);
        let part = match &request {
            Request::Deposit(requisites) => Part::Deposit(DepositPart {
                requisites: requisites.clone(),
                action: None,
                expires_at: Some(opening.created_at.plus_seconds(route.lifetime())),
            }),
            Request::Payout(requisites) => Part::Payout(PayoutPart {
                requisites: Some(requisites.to_kept()),
                provider_state: None,
                due_at: None,
            }),
        };
        let operation = Operation::open(opening, part).map_err(bug)?;
        let moves = match &request {
            Request::Deposit(_) => Vec::new(),
            Request::Payout(_) => vec![hold_for(&operation)],
        };
        let mut new = NewOperation {
            operation,
            fingerprint,
            moves,
            callback: None,
            attempts: Vec::new(),
        };
        if candidates.is_empty() {
            return self
                .create_at_sandbox(merchant, canonical, new, &request, &route)
                .await;
        }
        if let Part::Deposit(_) = new.operation.part() {
            let action = self.pay_page_action(&new.operation)?;
            let at = new.operation.created_at();
            new.operation = new.operation.wait_for(action, at).map_err(bug)?;
        }
        let payout = match request {
            Request::Payout(requisites) => Some(requisites),
            Request::Deposit(_) => None,
        };
        self.create_at_acquirers(merchant, canonical, new, payout, candidates)
            .await
    }

    /// Asks the sandbox to start `new`, then stores it with the answer in one unit of work; if
    /// the sandbox fails, nothing is stored.
    async fn create_at_sandbox(
        &self,
        merchant: &Merchant,
        canonical: &[u8],
        mut new: NewOperation,
        request: &Request,
        route: &Route,
    ) -> Result<Created, CreateError> {
        match self.start(&new.operation, request, route).await? {
            Answer::Next(next) => new.operation = *next,
            Answer::Declined(decline) => self.decline_at_creation(&mut new, decline)?,
        }
        self.store_new(merchant, new, canonical).await
    }

    /// What an acquirer deposit shows its user: the gateway's own `/pay/{id}` page, which
    /// sends them on to the acquirer (for `sbp_qr`, a QR code of it).
    fn pay_page_action(&self, deposit: &Operation) -> Result<Action, CreateError> {
        let url = self.calls.pay_url(deposit.id());
        if deposit.method() != PaymentMethod::SbpQr {
            return Ok(Action::Redirect { url });
        }
        let qr = self
            .qr
            .data_uri(&url)
            .map_err(|error| CreateError::Unknown(anyhow::anyhow!(error)))?;
        Ok(Action::Requisites {
            requisites: KeptObject::new().with("qr", qr),
        })
    }

    /// The sandbox's answer to starting `operation`. A failure means nothing started.
    async fn start(
        &self,
        operation: &Operation,
        request: &Request,
        route: &Route,
    ) -> Result<Answer, CreateError> {
        let provider = &self.calls.provider;
        let at = operation.created_at();
        Ok(match request {
            Request::Deposit(_) => match provider.start_deposit(operation, route).await? {
                DepositStart::Wait(action) => {
                    Answer::Next(Box::new(operation.wait_for(action, at).map_err(bug)?))
                }
                DepositStart::Declined(decline) => Answer::Declined(decline),
            },
            Request::Payout(requisites) => {
                match provider.start_payout(operation, requisites, route).await? {
                    PayoutStart::Accepted { state, due_at } => {
                        Answer::Next(Box::new(operation.accepted(state, due_at).map_err(bug)?))
                    }
                    PayoutStart::Declined(decline) => Answer::Declined(decline),
                }
            }
        })
    }

    /// Access check, then the request's fingerprint if it carries a merchantOperationId.
    fn admit(
        &self,
        merchant: &Merchant,
        direction: Direction,
        common: &Common,
        canonical: &[u8],
    ) -> Result<Option<Fingerprint>, CreateError> {
        if !merchant.may_use(direction, common.method) {
            return Err(CreateError::Forbidden);
        }
        Ok(common
            .merchant_operation_id
            .as_ref()
            .map(|_| Fingerprint::of(merchant.keys(direction).newest(), canonical)))
    }

    /// The fee the merchant's tariff puts on the request, fixed now. A deposit whose fee would
    /// be at least its amount is `AmountTooSmall`, unless an earlier operation with the same
    /// merchantOperationId answers it (`Err`: that replay).
    async fn fee(
        &self,
        merchant: &Merchant,
        direction: Direction,
        common: &Common,
        canonical: &[u8],
    ) -> Result<Result<Fee, Box<Created>>, CreateError> {
        let key = TariffKey {
            merchant_id: merchant.id.clone(),
            direction: direction.into(),
            method: common.method,
            currency: common.currency,
        };
        let fee = Fee::of(self.tariffs.terms(&key).await?, common.amount);
        if direction == Direction::Deposit && fee.amount >= common.amount.minor() {
            let moid = common.merchant_operation_id.as_ref();
            return match self.earlier(merchant, direction, moid, canonical).await? {
                Some(replay) => Ok(Err(Box::new(replay))),
                None => Err(CreateError::AmountTooSmall),
            };
        }
        Ok(Ok(fee))
    }

    /// The route for the request; when none fits, an earlier operation with the same
    /// merchantOperationId still answers first (idempotency is checked before routing).
    async fn admit_route(
        &self,
        merchant: &Merchant,
        direction: Direction,
        common: &Common,
        canonical: &[u8],
    ) -> Result<Admission, CreateError> {
        let mut routes = self.routes.routes().await?;
        let acquirers = if routes.iter().any(|route| !route.is_sandbox()) {
            self.calls.providers.acquirers().await?
        } else {
            Vec::new()
        };
        routes.retain(|route| {
            if route.is_sandbox() {
                self.calls.sandbox
            } else {
                acquirers
                    .iter()
                    .any(|a| a.enabled && a.name.as_str() == route.provider)
            }
        });
        let fitting = candidates(
            &routes,
            direction,
            common.method,
            common.currency,
            common.amount,
        );
        if let Some(best) = fitting.first() {
            if best.is_sandbox() {
                return Ok(Admission::Sandbox(Route::clone(best)));
            }
            let candidates = fitting
                .into_iter()
                .filter_map(|route| {
                    let acquirer = acquirers
                        .iter()
                        .find(|a| a.name.as_str() == route.provider)?;
                    Some(Candidate {
                        route: route.clone(),
                        acquirer: acquirer.clone(),
                    })
                })
                .collect();
            return Ok(Admission::Acquirers(candidates));
        }
        let moid = common.merchant_operation_id.as_ref();
        match self.earlier(merchant, direction, moid, canonical).await? {
            Some(replay) => Ok(Admission::Replay(Box::new(replay))),
            None => Err(CreateError::NoRouteFound),
        }
    }

    /// The earlier operation with this request's merchantOperationId: a replay if the request
    /// is the same (its `canonical` form, hashed with the secret that keyed the earlier one,
    /// revoked or not), `DuplicateOperation` if not, `None` if there is none.
    async fn earlier(
        &self,
        merchant: &Merchant,
        direction: Direction,
        moid: Option<&MerchantOperationId>,
        canonical: &[u8],
    ) -> Result<Option<Created>, CreateError> {
        let Some(moid) = moid else {
            return Ok(None);
        };
        let found = self
            .core
            .store
            .find_by_merchant_operation_id(&merchant.id, direction, moid)
            .await?;
        match found {
            None => Ok(None),
            Some((operation, Some(stored)))
                if KeyCheck::of(self.merchants.as_ref(), merchant, direction, &stored)
                    .await?
                    .matches(&stored, canonical) =>
            {
                Ok(Some(Created {
                    operation,
                    replayed: true,
                }))
            }
            Some(_) => Err(CreateError::DuplicateOperation),
        }
    }

    /// What the new operation opens with: a fresh id, the request's fields, the route, now.
    fn opening(&self, merchant: &Merchant, common: Common, route: &Route, fee: Fee) -> Opening {
        Opening {
            fee,
            id: self.ids.operation_id(),
            merchant_id: merchant.id.clone(),
            method: common.method,
            amount: common.amount,
            currency: common.currency,
            user_id: common.user_id,
            merchant_operation_id: common.merchant_operation_id,
            urls: common.urls,
            user_data: common.user_data,
            route_id: route.id,
            provider: route.provider.clone(),
            created_at: self.core.clock.now(),
        }
    }

    /// Finishes a new operation as declined, with its release moves and callback.
    pub(super) fn decline_at_creation(
        &self,
        new: &mut NewOperation,
        decline: Decline,
    ) -> Result<(), CreateError> {
        let at = new.operation.created_at();
        let done = new
            .operation
            .finish(&Outcome::Decline(decline), at)
            .map_err(bug)?;
        new.moves.extend(moves_on_finish(&done));
        new.callback = callback_for(&done, self.core.callback_format.as_ref());
        new.operation = done;
        Ok(())
    }

    pub(super) async fn store_new(
        &self,
        merchant: &Merchant,
        new: NewOperation,
        canonical: &[u8],
    ) -> Result<Created, CreateError> {
        let direction = new.operation.direction();
        match self.core.store.insert(&new).await {
            Ok(()) => {
                tracing::info!(operation.id = %new.operation.id(), status = new.operation.status().name(), "operation created");
                Ok(Created {
                    operation: new.operation,
                    replayed: false,
                })
            }
            Err(InsertError::Duplicate) => {
                let moid = new.operation.merchant_operation_id();
                self.earlier(merchant, direction, moid, canonical)
                    .await?
                    .ok_or_else(|| {
                        CreateError::Unknown(anyhow::anyhow!(
                            "duplicate reported but no operation found"
                        ))
                    })
            }
            Err(InsertError::InsufficientBalance) => Err(CreateError::InsufficientBalance),
            Err(InsertError::Store(e)) => Err(e.into()),
        }
    }
}

/// A new operation that its own parts cannot make, or a step it refuses, is a bug here.
fn bug(error: impl std::error::Error + Send + Sync + 'static) -> CreateError {
    CreateError::Unknown(error.into())
}
