//! What comes before the handlers, for every documented operation: unknown paths and
//! undocumented methods (404, 405), content type and size (415, 413), credentials (401) and
//! the rate limit (429); and the operational endpoints.

use reqwest::Method;
use serde_json::json;

use super::Checked;
use crate::helpers::UNKNOWN_PATHS;

const JSON: (&str, &str) = ("content-type", "application/json");

/// `template` with a fresh UUID for each of its ids (`{operationId}`, `{refundId}`) and a value
/// for each required query parameter of `method` on it: its example when it has one (a
/// parameter read before anything else, as `direction`, must be valid for what follows to be
/// reached), else `probe`.
fn concrete(api: &Checked<'_>, template: &str, method: &str) -> String {
    let mut path = fresh_ids(template);
    let parameters = api.spec.operation(template, method)["parameters"].clone();
    for (index, _) in parameters.as_array().into_iter().flatten().enumerate() {
        let pointer = format!(
            "/paths/{}/{method}/parameters/{index}",
            super::spec::escape(template)
        );
        let parameter = api.spec.resolve(&pointer).1;
        if parameter["in"] == "query" && parameter["required"] == true {
            let name = parameter["name"].as_str().unwrap_or_default();
            let value = parameter["example"].as_str().unwrap_or("probe");
            path = format!("{path}?{name}={value}");
        }
    }
    path
}

/// Whether `template` takes a file, and so a body of up to 4 MiB.
fn takes_files(template: &str) -> bool {
    template.ends_with("/appeals") || template.ends_with("/evidence")
}

/// `template` with a fresh UUID for each of its ids.
fn fresh_ids(template: &str) -> String {
    ["{operationId}", "{refundId}", "{disputeId}", "{callbackId}"]
        .iter()
        .fold(template.to_string(), |path, id| {
            path.replace(id, &uuid::Uuid::new_v4().to_string())
        })
}

/// Whether `method` on `template` needs the merchant's signature.
fn signed(api: &Checked<'_>, template: &str, method: &str) -> bool {
    let own = &api.spec.operation(template, method)["security"];
    !own.as_array().is_some_and(Vec::is_empty)
}

/// Unknown paths, undocumented methods on documented paths, and the operational endpoints.
pub async fn outside_the_operations(api: &Checked<'_>) {
    for (template, methods) in api.spec.operations() {
        let path = fresh_ids(&template);
        for method in [Method::PUT, Method::DELETE, Method::OPTIONS] {
            let name = method.as_str().to_ascii_lowercase();
            if !methods.contains(&name) {
                let answer = api.raw(method, &path, &[], Vec::new()).await;
                answer.assert_error(405, "MethodNotAllowed");
            }
        }
    }
    for (method, path) in UNKNOWN_PATHS {
        api.raw(method, path, &[], Vec::new())
            .await
            .assert_error(404, "NotFound");
    }
    for path in ["/healthz", "/readyz", "/metrics"] {
        let answer = api.raw(Method::GET, path, &[], Vec::new()).await;
        assert_eq!(answer.status, 200, "{path}");
    }
}

/// For every documented operation: a wrong or missing content type, an oversized body, and
/// no credentials, each before anything else is looked at.
pub async fn every_operation_refuses_bad_requests(api: &Checked<'_>) {
    let big = format!("{{\"userId\": \"{}\"}}", "x".repeat(64 * 1024));
    // The paths that take a file allow 4 MiB.
    let bigger = format!("{{\"comment\": \"{}\"}}", "x".repeat(4 * 1024 * 1024));
    for (template, methods) in api.spec.operations() {
        for method in methods {
            let path = concrete(api, &template, &method);
            let post = method == "post";
            if post {
                let answer = api.raw(Method::POST, &path, &[], "{}").await;
                answer.assert_error(415, "UnsupportedMediaType");
                let text = [("content-type", "text/plain")];
                let answer = api.raw(Method::POST, &path, &text, "{}").await;
                answer.assert_error(415, "UnsupportedMediaType");
                let limit = if takes_files(&template) {
                    &bigger
                } else {
                    &big
                };
                let answer = api.raw(Method::POST, &path, &[JSON], limit.clone()).await;
                answer.assert_error(413, "PayloadTooLarge");
            }
            if signed(api, &template, &method) {
                let (verb, headers) = if post {
                    (Method::POST, vec![JSON, ("merchant-id", api.app.shop.id())])
                } else {
                    (Method::GET, vec![("merchant-id", api.app.shop.id())])
                };
                let body = if post { "{}" } else { "" };
                let answer = api.raw(verb.clone(), &path, &headers, body).await;
                answer.assert_error(401, "Unauthorized");
                let wrong = "00".repeat(32);
                let headers: Vec<(&str, &str)> = headers
                    .into_iter()
                    .chain([("x-signature", wrong.as_str())])
                    .collect();
                let answer = api.raw(verb, &path, &headers, body).await;
                answer.assert_error(401, "Unauthorized");
            }
        }
    }
}

/// With a limit of one request a second, every signed operation soon answers 429.
pub async fn every_operation_is_rate_limited(api: &Checked<'_>) {
    for (template, methods) in api.spec.operations() {
        for method in methods {
            if !signed(api, &template, &method) {
                continue;
            }
            let path = concrete(api, &template, &method);
            let mut limited = None;
            for _ in 0..10 {
                let answer = if method == "post" {
                    api.post(&path, &json!({})).await
                } else {
                    api.get(&path).await
                };
                if answer.status == 429 {
                    limited = Some(answer);
                    break;
                }
            }
            let limited = limited.unwrap_or_else(|| panic!("{method} {path} was never limited"));
            limited.assert_error(429, "TooManyRequests");
        }
    }
}
