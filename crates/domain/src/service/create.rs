//! Creating deposits and withdrawals: access -> idempotency -> route -> balance -> provider.
//!
//! The provider is called in the order its [`CreationOrder`] asks: the sandbox answers before
//! anything is stored (and nothing is stored if it fails); a provider over a network is
//! called only once the processing operation and its hold are committed, and its answer is
//! written with a guarded update, so that a crash or a lost answer leaves a processing
//! operation to resolve by reading, never a payment the gateway does not know of.

use super::{CompleteError, CreateError, Created, Gateway};
use crate::callback::callback_for;
use crate::ledger::{hold_for, moves_on_finish};
use crate::merchant::Merchant;
use crate::operation::{Decline, DepositPart, Opening, Operation, Outcome, Part, PayoutPart};
use crate::ports::{
    CreationOrder, DepositStart, FinishError, InsertError, NewOperation, PayoutStart, ProviderError,
};
use crate::request::{Common, NewDeposit, NewWithdrawal};
use crate::route::{select_route, Route};
use crate::signature::Fingerprint;
use crate::{Direction, KeptObject, MerchantOperationId, WithdrawalRequisites};

/// With [`CreationOrder::StoreFirst`], a payout is stored due this many seconds after its
/// creation: if the provider's answer is never written (a crash, a lost answer), the payout
/// poller reads its outcome from the provider then, once the creation call has surely ended.
pub const UNANSWERED_PAYOUT_GRACE_SECS: i64 = 60;

/// What admitting a request found: a route to create it on, or an earlier operation that
/// answers it (the same merchantOperationId with the same request).
enum Admission {
    Route(Route),
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

/// The provider call that starts a new operation.
enum Start<'a> {
    Deposit(&'a Route),
    Payout(&'a WithdrawalRequisites, &'a Route),
}

/// What the provider's first answer makes of a new operation.
enum Answer {
    /// It goes on processing, at the step the provider gave it.
    Next(Box<Operation>),
    Declined(Decline),
    /// No answer: the provider failed or could not be reached. Whether it started anything is
    /// not known.
    Unknown(ProviderError),
}

impl Gateway {
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
        let route = match self
            .admit_route(merchant, direction, &common, fingerprint.as_ref())
            .await?
        {
            Admission::Route(route) => route,
            Admission::Replay(replay) => return Ok(*replay),
        };
        let opening = self.opening(merchant, common, &route);
        let (part, start) = match &request {
            Request::Deposit(requisites) => (
                Part::Deposit(DepositPart {
                    requisites: requisites.clone(),
                    action: None,
                    expires_at: Some(opening.created_at.plus_seconds(route.lifetime())),
                }),
                Start::Deposit(&route),
            ),
            Request::Payout(requisites) => (
                Part::Payout(PayoutPart {
                    requisites: Some(requisites.to_kept()),
                    provider_state: None,
                    due_at: None,
                }),
                Start::Payout(requisites, &route),
            ),
        };
        let operation = Operation::open(opening, part).map_err(bug)?;
        let moves = match &request {
            Request::Deposit(_) => Vec::new(),
            Request::Payout(_) => vec![hold_for(&operation)],
        };
        let new = NewOperation {
            operation,
            fingerprint,
            moves,
            callback: None,
            attempt: None,
        };
        self.create(merchant, new, start).await
    }

    /// Stores `new` and asks the provider to start it, in the provider's order.
    async fn create(
        &self,
        merchant: &Merchant,
        mut new: NewOperation,
        start: Start<'_>,
    ) -> Result<Created, CreateError> {
        match self.ports.provider.creation_order() {
            CreationOrder::ProviderFirst => {
                match self.start(&new.operation, &start).await? {
                    Answer::Next(next) => new.operation = *next,
                    Answer::Declined(decline) => self.decline_at_creation(&mut new, decline)?,
                    Answer::Unknown(error) => return Err(error.into()),
                }
                self.store_new(merchant, new).await
            }
            CreationOrder::StoreFirst => {
                if let Part::Payout(_) = new.operation.part() {
                    let due = new
                        .operation
                        .created_at()
                        .plus_seconds(UNANSWERED_PAYOUT_GRACE_SECS);
                    new.operation = new.operation.accepted(None, due).map_err(bug)?;
                }
                let created = self.store_new(merchant, new).await?;
                if created.replayed {
                    return Ok(created);
                }
                // Committed: from here on the merchant gets the operation (200), whatever
                // happens to the provider's answer.
                let answer = match self.start(&created.operation, &start).await {
                    Ok(answer) => answer,
                    Err(error) => {
                        tracing::error!(
                            operation.id = %created.operation.id(),
                            error = %crate::ports::Chain(&error),
                            "provider answer not understood; the operation stays processing"
                        );
                        return Ok(created);
                    }
                };
                let operation = self.write_answer(created.operation, answer).await;
                Ok(Created {
                    operation,
                    replayed: false,
                })
            }
        }
    }

    /// The provider's answer to starting `operation`.
    async fn start(&self, operation: &Operation, start: &Start<'_>) -> Result<Answer, CreateError> {
        let provider = &self.ports.provider;
        let at = operation.created_at();
        Ok(match start {
            Start::Deposit(route) => match provider.start_deposit(operation, route).await {
                Ok(DepositStart::Wait(action)) => {
                    Answer::Next(Box::new(operation.wait_for(action, at).map_err(bug)?))
                }
                Ok(DepositStart::Declined(decline)) => Answer::Declined(decline),
                Err(error) => Answer::Unknown(error),
            },
            Start::Payout(requisites, route) => {
                match provider.start_payout(operation, requisites, route).await {
                    Ok(PayoutStart::Accepted { state, due_at }) => {
                        Answer::Next(Box::new(operation.accepted(state, due_at).map_err(bug)?))
                    }
                    Ok(PayoutStart::Declined(decline)) => Answer::Declined(decline),
                    Err(error) => Answer::Unknown(error),
                }
            }
        })
    }

    /// Writes the provider's answer to a committed, processing operation with a guarded
    /// update, and returns the operation as it now stands. The operation is committed: from
    /// here on the merchant gets it (200), whatever happens to the answer.
    async fn write_answer(&self, stored: Operation, answer: Answer) -> Operation {
        let id = stored.id();
        let written = match answer {
            Answer::Next(next) => match self.ports.store.advance(&next).await {
                Ok(()) => return *next,
                Err(FinishError::NotProcessing) => None,
                Err(error) => Some(CompleteError::from(error)),
            },
            Answer::Declined(decline) => {
                match self.finish(&stored, Outcome::Decline(decline)).await {
                    Ok(done) => return done,
                    Err(CompleteError::InvalidState) => None,
                    Err(error) => Some(error),
                }
            }
            Answer::Unknown(error) => {
                tracing::warn!(
                    operation.id = %id,
                    error = %crate::ports::Chain(&error),
                    "provider outcome unknown at creation; the operation stays processing"
                );
                return stored;
            }
        };
        if let Some(error) = written {
            tracing::error!(
                operation.id = %id,
                error = %crate::ports::Chain(&error),
                "provider answer not written; the operation stays processing"
            );
            return stored;
        }
        // Another writer finished it first: answer with what is stored now, or, if it cannot
        // be read, the operation as committed (still processing).
        match self.ports.store.get(id).await {
            Ok(Some(current)) => current,
            Ok(None) => stored,
            Err(error) => {
                tracing::warn!(operation.id = %id, error = %crate::ports::Chain(&error), "operation not re-read");
                stored
            }
        }
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
            .map(|_| Fingerprint::of(merchant.secret_for(direction), canonical)))
    }

    /// The route for the request; when none fits, an earlier operation with the same
    /// merchantOperationId still answers first (idempotency is checked before routing).
    async fn admit_route(
        &self,
        merchant: &Merchant,
        direction: Direction,
        common: &Common,
        fingerprint: Option<&Fingerprint>,
    ) -> Result<Admission, CreateError> {
        let mut routes = self.ports.routes.routes().await?;
        routes.retain(|route| self.routable(&route.provider));
        if let Some(route) = select_route(
            &routes,
            direction,
            common.method,
            common.currency,
            common.amount,
        ) {
            return Ok(Admission::Route(route.clone()));
        }
        let moid = common.merchant_operation_id.as_ref();
        match self.earlier(merchant, direction, moid, fingerprint).await? {
            Some(replay) => Ok(Admission::Replay(Box::new(replay))),
            None => Err(CreateError::NoRouteFound),
        }
    }

    /// The earlier operation with this request's merchantOperationId: a replay if the request
    /// is the same, `DuplicateOperation` if not, `None` if there is none.
    async fn earlier(
        &self,
        merchant: &Merchant,
        direction: Direction,
        moid: Option<&MerchantOperationId>,
        fingerprint: Option<&Fingerprint>,
    ) -> Result<Option<Created>, CreateError> {
        let Some(moid) = moid else {
            return Ok(None);
        };
        let found = self
            .ports
            .store
            .find_by_merchant_operation_id(&merchant.id, direction, moid)
            .await?;
        match found {
            None => Ok(None),
            Some((operation, stored)) if stored.as_ref() == fingerprint => Ok(Some(Created {
                operation,
                replayed: true,
            })),
            Some(_) => Err(CreateError::DuplicateOperation),
        }
    }

    /// What the new operation opens with: a fresh id, the request's fields, the route, now.
    fn opening(&self, merchant: &Merchant, common: Common, route: &Route) -> Opening {
        Opening {
            id: self.ports.ids.operation_id(),
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
            created_at: self.ports.clock.now(),
        }
    }

    /// Finishes a new operation as declined, with its release moves and callback.
    fn decline_at_creation(
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
        new.callback = callback_for(&done, self.ports.callback_format.as_ref());
        new.operation = done;
        Ok(())
    }

    async fn store_new(
        &self,
        merchant: &Merchant,
        new: NewOperation,
    ) -> Result<Created, CreateError> {
        let direction = new.operation.direction();
        match self.ports.store.insert(&new).await {
            Ok(()) => {
                tracing::info!(operation.id = %new.operation.id(), status = new.operation.status().name(), "operation created");
                Ok(Created {
                    operation: new.operation,
                    replayed: false,
                })
            }
            Err(InsertError::Duplicate) => {
                let moid = new.operation.merchant_operation_id();
                self.earlier(merchant, direction, moid, new.fingerprint.as_ref())
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
