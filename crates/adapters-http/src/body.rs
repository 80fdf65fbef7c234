//! Request bodies as raw bytes: the content-type rule (415) and the 64 KiB limit (413; 4 MiB
//! on the paths that take files), checked before anything is authenticated or parsed.

use actix_web::http::header;
use actix_web::web::{Bytes, BytesMut, Payload};
use actix_web::HttpRequest;
use futures::StreamExt;

use crate::errors::ApiError;

/// Largest body accepted, in bytes.
pub const BODY_LIMIT: usize = 64 * 1024;

/// Largest body accepted on a path that takes a file (an appeal's receipt, evidence).
pub const FILE_BODY_LIMIT: usize = 4 * 1024 * 1024;

/// Whether a `Content-Type` value is `application/json`, optionally with `charset=utf-8`
/// (case-insensitive; any other parameter or charset is refused).
pub fn is_json_content_type(value: &str) -> bool {
    let mut parts = value.split(';');
    let essence = parts.next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return false;
    }
    parts.all(|parameter| {
        let Some((name, value)) = parameter.split_once('=') else {
            return false;
        };
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        name.trim().eq_ignore_ascii_case("charset") && value.eq_ignore_ascii_case("utf-8")
    })
}

/// 415 unless the request says its body is JSON.
pub fn require_json(req: &HttpRequest) -> Result<(), ApiError> {
    let ok = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(is_json_content_type);
    if ok {
        Ok(())
    } else {
        Err(ApiError::UnsupportedMediaType)
    }
}

/// Reads the body as received, refusing more than [`BODY_LIMIT`] bytes with 413.
pub async fn read_limited(req: &HttpRequest, payload: Payload) -> Result<Bytes, ApiError> {
    read_within(req, payload, BODY_LIMIT).await
}

/// Reads the body as received, refusing more than `limit` bytes with 413.
async fn read_within(
    req: &HttpRequest,
    mut payload: Payload,
    limit: usize,
) -> Result<Bytes, ApiError> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(ApiError::PayloadTooLarge);
    }
    let capacity = declared.map_or(1024, |n| n as usize);
    let mut body = BytesMut::with_capacity(capacity);
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| match e {
            actix_web::error::PayloadError::Overflow => ApiError::PayloadTooLarge,
            _ => ApiError::BadBody("body: could not be read".into()),
        })?;
        if body.len() + chunk.len() > limit {
            return Err(ApiError::PayloadTooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// A JSON body: the content type, then the size limit; the bytes are returned unparsed so
/// that the signature is verified over them first.
pub async fn json_bytes(req: &HttpRequest, payload: Payload) -> Result<Bytes, ApiError> {
    json_bytes_within(req, payload, BODY_LIMIT).await
}

/// [`json_bytes`] with another size limit.
pub async fn json_bytes_within(
    req: &HttpRequest,
    payload: Payload,
    limit: usize,
) -> Result<Bytes, ApiError> {
    require_json(req)?;
    read_within(req, payload, limit).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types_follow_the_contract() {
        for good in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            "application/json;charset=UTF-8",
            "application/json; charset=\"utf-8\"",
            " application/json ",
        ] {
            assert!(is_json_content_type(good), "{good:?}");
        }
        for bad in [
            "",
            "text/plain",
            "application/jsonx",
            "application/x-www-form-urlencoded",
            "application/json; charset=latin1",
            "application/json; charset=utf-16",
            "application/json; boundary=x",
            "application/json; charset",
            "text/json",
        ] {
            assert!(!is_json_content_type(bad), "{bad:?}");
        }
    }
}
