//! Disputes: `POST /v1/disputes/{id}/evidence`, `GET /v1/disputes/{id}`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};

use super::evidence::{EvidenceBody, BODY_LIMIT};
use super::{json_config, Answer};
use crate::error::ApiError;
use crate::sim::Sim;
use crate::store::Evidence;

/// Mounts the dispute routes; evidence bodies may be up to [`BODY_LIMIT`].
pub fn routes(config: &mut web::ServiceConfig) {
    config
        .service(
            web::resource("/disputes/{id}/evidence")
                .app_data(json_config().limit(BODY_LIMIT))
                .route(web::post().to(evidence)),
        )
        .route("/disputes/{id}", web::get().to(by_id));
}

#[tracing::instrument(skip_all, fields(dispute.id = %id))]
async fn evidence(
    sim: web::Data<Sim>,
    id: web::Path<String>,
    body: web::Json<EvidenceBody>,
) -> Answer {
    let summary = body.check()?;
    Ok(match sim.add_evidence(&id).ok_or(ApiError::NotFound)? {
        Evidence::Accepted(dispute) => {
            tracing::info!(
                text = summary.text,
                files = summary.files,
                bytes = summary.bytes,
                evidence = dispute.evidence,
                "evidence received"
            );
            HttpResponse::Ok().json(dispute.view())
        }
        Evidence::Closed(dispute) | Evidence::Late(dispute) => {
            HttpResponse::build(StatusCode::CONFLICT).json(dispute.view())
        }
    })
}

async fn by_id(sim: web::Data<Sim>, id: web::Path<String>) -> Answer {
    let dispute = sim.dispute(&id).ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(dispute.view()))
}
