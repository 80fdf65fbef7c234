//! Creating deposits and withdrawals: access -> idempotency -> route -> balance -> provider.

use super::{CreateError, Created, Gateway};
use crate::callback::callback_for;
use crate::ledger::{hold_for, moves_on_finish};
use crate::merchant::Merchant;
use crate::operation::{Operation, Outcome};
use crate::ports::{DepositStart, InsertError, NewOperation, PayoutStart};
use crate::request::{Common, NewDeposit, NewWithdrawal};
use crate::route::{select_route, Route};
use crate::signature::Fingerprint;
use crate::{Direction, MerchantOperationId, Status};

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
        let direction = Direction::Deposit;
        let fingerprint = self.admit(merchant, direction, &request.common, canonical)?;
        let route = self
            .route_for(merchant, direction, &request.common, fingerprint.as_ref())
            .await?;
        let route = match route {
            Ok(route) => route,
            Err(replay) => return Ok(replay),
        };
        let mut operation = self.new_operation(merchant, direction, request.common, &route);
        operation.requisites = request.requisites;
        operation.expires_at = Some(operation.created_at.plus_seconds(route.lifetime()));
        let mut new = NewOperation {
            operation,
            fingerprint,
            moves: Vec::new(),
            callback: None,
        };
        match self
            .ports
            .provider
            .start_deposit(&new.operation, &route)
            .await?
        {
            DepositStart::Wait(action) => new.operation.action = Some(action),
            DepositStart::Declined(decline) => self.decline_at_creation(&mut new, decline)?,
        }
        self.store_new(merchant, direction, new).await
    }

    /// Creates a withdrawal: the hold and the operation are written in one unit of work.
    #[tracing::instrument(skip_all, fields(merchant.id = %merchant.id, payment.method = %request.common.method))]
    pub async fn create_withdrawal(
        &self,
        merchant: &Merchant,
        request: NewWithdrawal,
        canonical: &[u8],
    ) -> Result<Created, CreateError> {
        let direction = Direction::Withdrawal;
        let fingerprint = self.admit(merchant, direction, &request.common, canonical)?;
        let route = match self
            .route_for(merchant, direction, &request.common, fingerprint.as_ref())
            .await?
        {
            Ok(route) => route,
            Err(replay) => return Ok(replay),
        };
        let mut operation = self.new_operation(merchant, direction, request.common, &route);
        operation.requisites = match request.requisites.to_stored_json() {
            serde_json::Value::Object(map) => Some(map),
            _ => None,
        };
        let hold = hold_for(&operation);
        let mut new = NewOperation {
            operation,
            fingerprint,
            moves: vec![hold],
            callback: None,
        };
        match self
            .ports
            .provider
            .start_payout(&new.operation, &request.requisites, &route)
            .await?
        {
            PayoutStart::Accepted { state, due_at } => {
                new.operation.provider_state = state;
                new.operation.due_at = Some(due_at);
            }
            PayoutStart::Declined(decline) => self.decline_at_creation(&mut new, decline)?,
        }
        self.store_new(merchant, direction, new).await
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
    async fn route_for(
        &self,
        merchant: &Merchant,
        direction: Direction,
        common: &Common,
        fingerprint: Option<&Fingerprint>,
    ) -> Result<Result<Route, Created>, CreateError> {
        let mut routes = self.ports.routes.routes().await?;
        routes.retain(|route| self.routable(&route.provider));
        if let Some(route) = select_route(
            &routes,
            direction,
            common.method,
            common.currency,
            common.amount,
        ) {
            return Ok(Ok(route.clone()));
        }
        let moid = common.merchant_operation_id.as_ref();
        match self.earlier(merchant, direction, moid, fingerprint).await? {
            Some(replay) => Ok(Err(replay)),
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

    fn new_operation(
        &self,
        merchant: &Merchant,
        direction: Direction,
        common: Common,
        route: &Route,
    ) -> Operation {
        let now = self.ports.clock.now();
        Operation {
            id: self.ports.ids.operation_id(),
            merchant_id: merchant.id.clone(),
            direction,
            method: common.method,
            status: Status::Processing,
            amount: common.amount,
            currency: common.currency,
            user_id: common.user_id,
            merchant_operation_id: common.merchant_operation_id,
            urls: common.urls,
            requisites: None,
            user_data: common.user_data,
            action: None,
            decline: None,
            route_id: route.id,
            expires_at: None,
            provider_state: None,
            due_at: None,
            created_at: now,
            updated_at: now,
        }
    }

    /// Finishes a new operation as declined, with its release moves and callback.
    fn decline_at_creation(
        &self,
        new: &mut NewOperation,
        decline: crate::operation::Decline,
    ) -> Result<(), CreateError> {
        let at = new.operation.created_at;
        let done = new
            .operation
            .finish(&Outcome::Decline(decline), at)
            .map_err(|e| CreateError::Unknown(e.into()))?;
        new.moves.extend(moves_on_finish(&done));
        new.callback = callback_for(&done);
        new.operation = done;
        Ok(())
    }

    async fn store_new(
        &self,
        merchant: &Merchant,
        direction: Direction,
        new: NewOperation,
    ) -> Result<Created, CreateError> {
        match self.ports.store.insert(&new).await {
            Ok(()) => {
                tracing::info!(operation.id = %new.operation.id, status = new.operation.status.name(), "operation created");
                Ok(Created {
                    operation: new.operation,
                    replayed: false,
                })
            }
            Err(InsertError::Duplicate) => {
                let moid = new.operation.merchant_operation_id.as_ref();
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
