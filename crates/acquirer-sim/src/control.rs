//! The control API (`--control-bind`, no auth): `/_sim/faults`, `/_sim/stats`, payin completion,
//! disputes.

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::http::StatusCode;
use actix_web::{web, App, HttpResponse, HttpServer};
use serde::Deserialize;

use crate::error::ApiError;
use crate::faults::FaultsPatch;
use crate::page::parse_decision;
use crate::server::ApiServer;
use crate::sim::Sim;

mod disputes;

/// Mounts the control routes.
pub fn routes(config: &mut web::ServiceConfig) {
    let fault_set = web::resource("/_sim/faults")
        .route(web::get().to(faults))
        .route(web::post().to(update_faults));
    config
        .service(fault_set)
        .route("/_sim/stats", web::get().to(stats))
        .route(
            "/_sim/payins/{reference}/complete",
            web::post().to(complete),
        )
        .configure(disputes::routes);
}

async fn faults(sim: web::Data<Sim>) -> HttpResponse {
    HttpResponse::Ok().json(sim.faults())
}

async fn update_faults(
    sim: web::Data<Sim>,
    api: web::Data<ApiServer>,
    patch: web::Json<serde_json::Value>,
) -> Result<HttpResponse, ApiError> {
    let patch: FaultsPatch = serde_json::from_value(patch.into_inner())
        .map_err(|error| ApiError::BadRequest(error.to_string()))?;
    let faults = sim
        .update_faults(patch)
        .map_err(|error| ApiError::BadRequest(error.to_string()))?;
    if faults.down {
        api.down().await;
    } else {
        api.up(None).await.map_err(|error| {
            ApiError::Internal(format!("cannot reopen {}: {error}", api.addr()))
        })?;
    }
    tracing::info!(faults = ?faults, "faults updated");
    Ok(HttpResponse::Ok().json(faults))
}

async fn stats(sim: web::Data<Sim>) -> HttpResponse {
    HttpResponse::Ok().json(sim.stats())
}

#[derive(Debug, Deserialize)]
struct CompleteBody {
    decision: String,
    pan: Option<String>,
}

async fn complete(
    sim: web::Data<Sim>,
    reference: web::Path<String>,
    body: web::Json<CompleteBody>,
) -> Result<HttpResponse, ApiError> {
    let decision = parse_decision(&body.decision)
        .ok_or_else(|| ApiError::BadRequest("decision must be confirm or reject".into()))?;
    let payment = sim
        .payment_by_reference(&reference)
        .ok_or(ApiError::NotFound)?;
    let (result, _) = sim
        .complete_payin(&payment.id, decision, body.pan.as_deref())
        .ok_or(ApiError::NotFound)?;
    let page_base = &sim.settings().page_base;
    Ok(match result {
        Ok(payment) => HttpResponse::Ok().json(payment.view(page_base)),
        Err(payment) => HttpResponse::build(StatusCode::CONFLICT).json(payment.view(page_base)),
    })
}

/// The control listener: faults, stats, payin completion and disputes.
pub fn serve(listener: TcpListener, sim: Arc<Sim>, api: Arc<ApiServer>) -> std::io::Result<Server> {
    let sim = web::Data::from(sim);
    let api = web::Data::from(api);
    Ok(HttpServer::new(move || {
        App::new()
            .app_data(sim.clone())
            .app_data(api.clone())
            .app_data(crate::api::json_config())
            .configure(routes)
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(0)
    .listen(listener)?
    .run())
}
