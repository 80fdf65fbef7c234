//! `GET /api/v1/balance` and `GET /api/v1/balance/transactions`, signed with the withdrawal
//! secret.

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};
use domain::signature::Binding;
use domain::Direction;

use super::ok;
use crate::auth::authenticate;
use crate::dto::transactions::{read_query, TransactionsView};
use crate::dto::view::Balances;
use crate::errors::ApiError;
use crate::state::HttpState;

/// The merchant's balances per currency.
pub async fn balance(
    state: web::Data<HttpState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let merchant = authenticate(&state, &req, Direction::Withdrawal, b"", Binding::Any).await?;
    let balances = state.gateway().reads().balances(&merchant.id).await?;
    Ok(ok(Balances::new(&balances)))
}

/// The header of an answer read from a replica: how far behind the primary it was.
const REPLICA_LAG: &str = "x-replica-lag-ms";

/// A page of the merchant's balance transactions in one currency, newest first. Read from a
/// replica when the gateway has one; the answer then says how far behind it was.
pub async fn transactions(
    state: web::Data<HttpState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let merchant = authenticate(&state, &req, Direction::Withdrawal, b"", Binding::Any).await?;
    let query = read_query(&merchant.id, req.query_string())?;
    let statements = state.gateway().statements();
    let page = statements.transactions(&query).await?;
    let lag = statements.read_lag().await?;
    let mut response = ok(TransactionsView::new(&page, query.currency));
    if let Some(lag) = lag {
        response
            .headers_mut()
            .insert(HeaderName::from_static(REPLICA_LAG), HeaderValue::from(lag));
    }
    Ok(response)
}
