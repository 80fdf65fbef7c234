//! The checks before the domain on the real server: 404, 405, 415, 413, 429, the
//! operational endpoints, and no framework text body anywhere.

use domain::signature::sign;
use reqwest::Method;

use crate::helpers::{deposit_body, each_backend, signed_headers, Setup, UNKNOWN_PATHS};

#[tokio::test]
async fn unknown_paths_and_wrong_methods_answer_json_before_authentication() {
    each_backend(Setup::default(), |app| async move {
        let nested = (Method::GET, "/api/v1/deposits/x/y");
        for (method, path) in UNKNOWN_PATHS.into_iter().chain([nested]) {
            app.raw(method, path, &[], Vec::new())
                .await
                .assert_error(404, "NotFound");
        }
        for (method, path) in [
            (Method::DELETE, "/api/v1/deposits"),
            (Method::PUT, "/api/v1/withdrawals"),
            (Method::POST, "/api/v1/deposits/abc"),
            (Method::GET, "/api/v1/deposits/abc/confirm"),
            (Method::PATCH, "/api/v1/balance"),
            (Method::POST, "/healthz"),
            (Method::HEAD, "/api/v1/balance"),
        ] {
            let answer = app.raw(method.clone(), path, &[], Vec::new()).await;
            assert_eq!(answer.status, 405, "{method} {path}");
            assert!(answer.headers.contains_key("allow"));
            if method != Method::HEAD {
                answer.assert_error(405, "MethodNotAllowed");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn posts_need_json_and_at_most_64_kib_before_authentication() {
    each_backend(Setup::default(), |app| async move {
        let body = deposit_body("card", "1.00").to_string();
        for content_type in [
            None,
            Some("text/plain"),
            Some("application/json; charset=latin1"),
            Some("multipart/form-data; boundary=x"),
        ] {
            let headers: Vec<(&str, &str)> = content_type
                .map(|c| ("content-type", c))
                .into_iter()
                .collect();
            app.raw(Method::POST, "/api/v1/deposits", &headers, body.clone())
                .await
                .assert_error(415, "UnsupportedMediaType");
        }
        let signature = sign(app.shop.deposit_secret(), body.as_bytes());
        for content_type in ["application/json; charset=UTF-8", "Application/Json"] {
            let headers = signed_headers(&app.shop, &signature, content_type);
            let answer = app
                .raw(Method::POST, "/api/v1/deposits", &headers, body.clone())
                .await;
            assert_eq!(answer.status, 200, "{content_type}: {}", answer.text);
        }
        let json = [("content-type", "application/json")];
        let big = format!("{{\"userId\": \"{}\"}}", "x".repeat(64 * 1024));
        app.raw(Method::POST, "/api/v1/withdrawals", &json, big)
            .await
            .assert_error(413, "PayloadTooLarge");
        let exactly = format!("{{\"u\": \"{}\"}}", "x".repeat(64 * 1024 - 9));
        assert_eq!(exactly.len(), 64 * 1024);
        let signature = sign(app.shop.deposit_secret(), exactly.as_bytes());
        let headers = signed_headers(&app.shop, &signature, "application/json");
        let answer = app
            .raw(Method::POST, "/api/v1/deposits", &headers, exactly)
            .await;
        answer.assert_error(400, "InvalidRequest");
        assert!(
            answer.detail_fields().contains(&"u".to_string()),
            "{}",
            answer.text
        );
    })
    .await;
}

#[tokio::test]
async fn the_rate_limit_answers_429_with_retry_after_per_merchant() {
    let setup = Setup {
        rate_limit: 3,
        ..Setup::default()
    };
    each_backend(setup, |app| async move {
        let mut limited = None;
        for _ in 0..10 {
            let answer = app.get("/api/v1/balance").await;
            if answer.status == 429 {
                limited = Some(answer);
                break;
            }
            answer.assert_ok();
        }
        let limited = limited.expect("limited within 10 requests");
        limited.assert_error(429, "TooManyRequests");
        let retry = limited
            .headers
            .get("retry-after")
            .and_then(|v| v.to_str().ok());
        assert_eq!(retry, Some("1"));
        let theirs = app.get_as(&app.other, "/api/v1/balance").await;
        assert_eq!(theirs.status, 200, "other merchants have their own bucket");
        assert_eq!(
            app.raw(Method::GET, "/healthz", &[], Vec::new())
                .await
                .status,
            200
        );
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        assert_eq!(app.get("/api/v1/balance").await.status, 200, "refilled");
    })
    .await;
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    each_backend(Setup::default(), |app| async move {
        let health = app.raw(Method::GET, "/healthz", &[], Vec::new()).await;
        assert_eq!((health.status, health.text.as_str()), (200, r#"{"status":"ok"}"#));
        let ready = app.raw(Method::GET, "/readyz", &[], Vec::new()).await;
        ready.assert_ok();
        let created = app.deposit(&deposit_body("card", "1.00")).await;
        app.deposit_read(&created.operation_id()).await;
        app.raw(Method::GET, "/nope/123", &[], Vec::new()).await;
        let metrics = app.raw(Method::GET, "/metrics", &[], Vec::new()).await;
        assert_eq!(metrics.status, 200);
        for line in [
            r#"http_requests_total{method="POST",route="/api/v1/deposits",status="200"} 1"#,
            r#"http_requests_total{method="GET",route="/api/v1/deposits/{id}",status="200"} 1"#,
            r#"http_requests_total{method="GET",route="unmatched",status="404"} 1"#,
            r#"operations_created_total{direction="deposit",method="card",status="processing"} 1"#,
            r#"http_request_duration_seconds_bucket{method="POST",route="/api/v1/deposits",le="+Inf"} 1"#,
        ] {
            assert!(metrics.text.contains(line), "{line} in\n{}", metrics.text);
        }
    })
    .await;
}

#[tokio::test]
async fn every_answer_carries_a_request_id_and_errors_are_never_text() {
    each_backend(Setup::default(), |app| async move {
        let json = ("content-type", "application/json");
        let cases = [
            (
                Method::GET,
                "/api/v1/deposits?merchantOperationId=%ZZ",
                vec![],
            ),
            (Method::POST, "/api/v1/deposits/%ZZ/input", vec![json]),
            (Method::GET, "/api/v1/deposits/%00", vec![]),
            (Method::OPTIONS, "/api/v1/deposits", vec![]),
        ];
        for (method, path, headers) in cases {
            let answer = app.raw(method.clone(), path, &headers, Vec::new()).await;
            assert!(answer.status >= 400, "{method} {path}");
            assert!(
                answer.body["errorCode"].is_string(),
                "{method} {path}: {}",
                answer.text
            );
            assert!(answer.headers.contains_key("x-request-id"));
        }
    })
    .await;
}

/// Sends raw bytes over one connection and returns the whole answer as text.
fn raw_http(address: &str, request: Vec<u8>) -> String {
    use std::io::{Read, Write};
    let host = address.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .expect("timeout");
    stream.write_all(&request).expect("write");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn a_chunked_body_over_64_kib_is_413_json() {
    each_backend(Setup::default(), |app| async move {
        let mut request = b"POST /api/v1/deposits HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
        for _ in 0..9 {
            request.extend_from_slice(format!("{:x}\r\n", 8192).as_bytes());
            request.extend_from_slice(&[b' '; 8192]);
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"0\r\n\r\n");
        let address = app.address.clone();
        let answer = tokio::task::spawn_blocking(move || raw_http(&address, request))
            .await
            .expect("answered");
        assert!(answer.starts_with("HTTP/1.1 413"), "{answer:.200}");
        assert!(answer.contains(r#""errorCode":"PayloadTooLarge""#), "{answer:.400}");
    })
    .await;
}

#[tokio::test]
async fn a_connection_idle_for_longer_than_five_seconds_is_kept_open() {
    // actix-web's default closes it after 5 s, while clients keep theirs pooled for longer:
    // a request sent as the server closes the connection fails without an answer.
    each_backend(Setup::default(), |app| async move {
        let address = app.address.trim_start_matches("http://").to_string();
        let answers = tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut stream = std::net::TcpStream::connect(&address).expect("connects");
            stream
                .set_read_timeout(Some(std::time::Duration::from_secs(10)))
                .expect("a read timeout");
            let request = format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\n\r\n");
            let mut answers = Vec::new();
            for idle in [0, 7] {
                std::thread::sleep(std::time::Duration::from_secs(idle));
                // A closed connection fails the write or reads nothing.
                let mut answer = vec![0; 1024];
                let read = stream
                    .write_all(request.as_bytes())
                    .and_then(|()| stream.read(&mut answer))
                    .unwrap_or(0);
                answers.push(String::from_utf8_lossy(&answer[..read]).into_owned());
            }
            answers
        })
        .await
        .expect("the client's thread");
        for (answer, when) in answers.iter().zip(["at once", "after 7 s idle"]) {
            assert!(answer.starts_with("HTTP/1.1 200"), "{when}: {answer:?}");
        }
    })
    .await;
}
