//! `GET /api/v1/balance` and `GET /api/v1/balance/transactions`, signed with the withdrawal
//! secret.

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

/// A page of the merchant's balance transactions in one currency, newest first.
pub async fn transactions(
    state: web::Data<HttpState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let merchant = authenticate(&state, &req, Direction::Withdrawal, b"", Binding::Any).await?;
    let query = read_query(&merchant.id, req.query_string())?;
    let page = state.gateway().statements().transactions(&query).await?;
    Ok(ok(TransactionsView::new(&page, query.currency)))
}
