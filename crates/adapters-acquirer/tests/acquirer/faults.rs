//! Creations without an answer: failures to connect are definite, anything after the
//! request left is unknown.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use adapters_acquirer::AcquirerClient;
use domain::acquirer::{AcquirerPayment, CallResult, PaymentOrder};
use domain::ports::Acquirer;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use crate::helpers::{
    card_payout, closed_port, next_request, payin, payment, provider_at, provider_on, raw_server,
    read_request, write,
};

async fn create_on(port: u16, order: &PaymentOrder) -> CallResult<AcquirerPayment> {
    AcquirerClient::new()
        .create(&provider_on(port), order)
        .await
}

/// A raw server that reads each request whole, tells the test, then does `after` with it.
async fn reading_server<F, Fut>(after: F) -> (u16, mpsc::UnboundedReceiver<Vec<u8>>)
where
    F: Fn(TcpStream) -> Fut + Send + Sync + Copy + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (sent, read) = mpsc::unbounded_channel();
    let port = raw_server(move |mut stream| {
        let sent = sent.clone();
        async move {
            let request = read_request(&mut stream).await;
            let _ = sent.send(request);
            after(stream).await;
        }
    })
    .await;
    (port, read)
}

#[tokio::test]
async fn a_refused_connection_is_a_definite_failure() {
    let result = create_on(closed_port(), &payin()).await;
    assert_eq!(result, CallResult::Unavailable("connection refused".into()));
}

#[tokio::test]
async fn a_dns_failure_is_a_definite_failure() {
    let provider = provider_at("http://nowhere.invalid", Duration::from_secs(1));
    let result = AcquirerClient::new().create(&provider, &payin()).await;
    assert!(
        matches!(&result, CallResult::Unavailable(reason) if reason.starts_with("cannot connect") || reason == "connect timeout"),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_tls_failure_is_a_definite_failure() {
    // Speaks plain HTTP where a TLS handshake is expected.
    let port = raw_server(|mut stream| async move {
        write(
            &mut stream,
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n",
        )
        .await;
    })
    .await;
    let provider = provider_at(&format!("https://127.0.0.1:{port}"), Duration::from_secs(1));
    let result = AcquirerClient::new().create(&provider, &payin()).await;
    assert!(
        matches!(&result, CallResult::Unavailable(reason) if reason.starts_with("cannot connect")),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_timeout_after_the_request_was_sent_is_unknown() {
    let (port, mut requests) = reading_server(|stream| async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        drop(stream);
    })
    .await;
    let started = Instant::now();

    let result = create_on(port, &payin()).await;

    assert_eq!(
        result,
        CallResult::Unknown("timeout after the request was sent".into())
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert!(requests.try_recv().is_ok(), "the request arrived whole");
}

#[tokio::test]
async fn a_reset_after_the_request_was_sent_is_unknown() {
    let (port, mut requests) = reading_server(|stream| async move {
        // Linger 0: closing sends RST instead of FIN.
        let _ = stream.set_zero_linger();
        drop(stream);
    })
    .await;

    let result = create_on(port, &payin()).await;

    assert!(
        matches!(&result, CallResult::Unknown(reason) if reason.starts_with("connection failed after the request was sent")),
        "{result:?}"
    );
    assert!(requests.try_recv().is_ok(), "the request arrived whole");
}

#[tokio::test]
async fn a_close_without_an_answer_is_unknown() {
    let (port, _requests) = reading_server(|stream| async move { drop(stream) }).await;
    let result = create_on(port, &card_payout()).await;
    assert!(
        matches!(&result, CallResult::Unknown(reason) if reason.starts_with("connection failed after the request was sent")),
        "{result:?}"
    );
}

#[tokio::test]
async fn an_answer_cut_short_is_unknown() {
    let (port, _requests) = reading_server(|mut stream| async move {
        write(
            &mut stream,
            b"HTTP/1.1 201 Created\r\ncontent-length: 400\r\n\r\n{\"id\": \"acq_1\"",
        )
        .await;
    })
    .await;
    let result = create_on(port, &payin()).await;
    assert_eq!(result, CallResult::Unknown("answer cut off".into()));
}

#[tokio::test]
async fn a_body_slower_than_the_timeout_is_unknown() {
    let (port, _requests) = reading_server(|mut stream| async move {
        write(
            &mut stream,
            b"HTTP/1.1 201 Created\r\ncontent-length: 400\r\n\r\n{",
        )
        .await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    })
    .await;
    let result = create_on(port, &payin()).await;
    assert_eq!(
        result,
        CallResult::Unknown("timeout while reading the answer".into())
    );
}

#[tokio::test]
async fn a_slow_error_body_does_not_hide_a_definite_failure() {
    let (port, _requests) = reading_server(|mut stream| async move {
        write(
            &mut stream,
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 400\r\n\r\n{",
        )
        .await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    })
    .await;
    let result = create_on(port, &payin()).await;
    assert_eq!(result, CallResult::Unavailable("HTTP 503".into()));
}

#[tokio::test]
async fn a_payout_without_requisites_is_refused_without_a_call() {
    let (port, mut requests) = reading_server(|stream| async move { drop(stream) }).await;
    let order = PaymentOrder {
        payout: None,
        ..card_payout()
    };
    let result = create_on(port, &order).await;
    assert_eq!(
        result,
        CallResult::Unavailable("payout without requisites".into())
    );
    assert!(requests.try_recv().is_err(), "nothing was sent");
}

/// An acquirer that keeps every connection open and answers each request on it with
/// `answer`, counting the connections it accepted.
async fn keep_alive_server(answer: String) -> (u16, Arc<AtomicUsize>) {
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&accepted);
    let port = raw_server(move |mut stream| {
        counted.fetch_add(1, Ordering::SeqCst);
        let answer = answer.clone();
        async move {
            while next_request(&mut stream).await.is_some() {
                let head = format!(
                    "HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    answer.len()
                );
                write(&mut stream, head.as_bytes()).await;
                write(&mut stream, answer.as_bytes()).await;
            }
        }
    })
    .await;
    (port, accepted)
}

#[tokio::test]
async fn a_connection_idle_past_the_pool_limit_is_never_reused() {
    // A server may close an idle connection at any moment after its own keep-alive: a
    // creation written on it as it closes would be an unknown outcome. So the connector
    // reuses a connection while it is busy, and opens a new one once it sat idle for
    // POOL_IDLE_TIMEOUT, whatever the server would still allow.
    let order = payin();
    let (port, accepted) = keep_alive_server(payment(&order, "pending").to_string()).await;
    let client = AcquirerClient::new();
    let provider = provider_on(port);
    for _ in 0..3 {
        let result = client.create(&provider, &order).await;
        assert!(matches!(result, CallResult::Answered(_)), "{result:?}");
    }
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "one busy connection, reused"
    );

    tokio::time::sleep(adapters_acquirer::POOL_IDLE_TIMEOUT + Duration::from_millis(600)).await;
    let result = client.create(&provider, &order).await;
    assert!(matches!(result, CallResult::Answered(_)), "{result:?}");
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        2,
        "a connection idle past the limit is closed, not reused"
    );
}
