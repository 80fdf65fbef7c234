//! Authentication (the signing rules of docs/api.md) and the rate limit right after it.
//!
//! Every credential failure is the same `401 Unauthorized`: missing headers, an unknown or
//! disabled merchant, a wrong signature, a signature made with the other direction's secret
//! or a revoked one, a missing (when required), malformed or stale `x-timestamp`, an
//! `x-signature-version` other than `2`, and a version-1 signature where version 2 is
//! required (a POST naming an object, or a merchant that requires it).

use actix_web::HttpRequest;
use domain::merchant::{Merchant, Secret};
use domain::signature::{authenticate as check_credentials, verify, Binding, SignedRequest};
use domain::{Direction, MerchantId};

use crate::errors::ApiError;
use crate::rate_limit::retry_after_secs;
use crate::state::HttpState;

/// The header naming the merchant.
pub const MERCHANT_ID_HEADER: &str = "merchant-id";
/// The header carrying the hex HMAC-SHA256 signature.
pub const SIGNATURE_HEADER: &str = "x-signature";
/// The optional header of Unix seconds that the signature then covers too.
pub const TIMESTAMP_HEADER: &str = "x-timestamp";
/// The optional header naming the signing scheme: `2` binds the signature to the method and
/// path.
pub const SIGNATURE_VERSION_HEADER: &str = "x-signature-version";

/// What a GET signs: the path with its query string exactly as sent.
pub fn signed_target(req: &HttpRequest) -> &str {
    req.uri()
        .path_and_query()
        .map_or_else(|| req.uri().path(), |pq| pq.as_str())
}

fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// The merchant that signed the request (`body`: the raw body, empty for a GET) with its
/// secret for `direction`, under the versions `binding` allows; then the rate limit.
pub async fn authenticate(
    state: &HttpState,
    req: &HttpRequest,
    direction: Direction,
    body: &[u8],
    binding: Binding,
) -> Result<Merchant, ApiError> {
    let merchant = verify_signature(state, req, direction, body, binding).await?;
    tracing::Span::current().record("merchant.id", merchant.id.as_str());
    if let Err(wait) = state.limiter().check(&merchant.id) {
        tracing::info!(merchant.id = %merchant.id, "rate limit exceeded");
        return Err(ApiError::TooManyRequests {
            retry_after_secs: retry_after_secs(wait),
        });
    }
    Ok(merchant)
}

async fn verify_signature(
    state: &HttpState,
    req: &HttpRequest,
    direction: Direction,
    body: &[u8],
    binding: Binding,
) -> Result<Merchant, ApiError> {
    let (Some(id), Some(signature)) = (
        header(req, MERCHANT_ID_HEADER),
        header(req, SIGNATURE_HEADER),
    ) else {
        return Err(ApiError::Unauthorized);
    };
    let Ok(id) = MerchantId::parse(id) else {
        return Err(ApiError::Unauthorized);
    };
    // A header that is not visible ASCII is as malformed as one with a wrong value.
    let malformed = |name: &str| {
        req.headers()
            .get(name)
            .map(|value| value.to_str().unwrap_or("malformed"))
    };
    let request = SignedRequest {
        signature,
        timestamp: malformed(TIMESTAMP_HEADER),
        version: malformed(SIGNATURE_VERSION_HEADER),
        method: req.method().as_str(),
        target: signed_target(req),
        body,
        binding,
    };
    let gateway = state.gateway();
    let found = gateway.merchants().merchant(&id).await?;
    match found {
        Some(merchant) if merchant.enabled => {
            match check_credentials(&merchant, direction, &request, gateway.clock().now()) {
                Ok(()) => Ok(merchant),
                Err(refusal) => {
                    tracing::info!(merchant.id = %merchant.id, reason = refusal.reason(), "credentials refused");
                    Err(ApiError::Unauthorized)
                }
            }
        }
        _ => {
            // An HMAC on a decoy, as a real check spends. Not exact: a known merchant also costs
            // a key read and one HMAC per live secret.
            let version = request.version().unwrap_or(domain::signature::Version::V1);
            let _ = verify(&decoy_secret(), &request.message(version), signature);
            tracing::info!("unknown or disabled merchant refused");
            Err(ApiError::Unauthorized)
        }
    }
}

fn decoy_secret() -> Secret {
    Secret::new("0000000000000000000000000000000000000000000000000000000000000000")
}
