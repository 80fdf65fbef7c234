//! A real HTTP server for a test's fake peers: every request goes to one handler.

use std::future::Future;
use std::sync::Arc;

use actix_web::dev::ServerHandle;
use actix_web::web::{self, Bytes};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer};

/// Serves every request on 127.0.0.1:0 with `answer`, which gets the request, its body and
/// `state`, on `workers` threads within the test's Tokio runtime (no signal handling, a
/// one-second shutdown, room for many connections): the port and the handle that stops it.
pub fn serve_every_request<S, A, Fut>(
    state: Arc<S>,
    workers: usize,
    answer: A,
) -> (u16, ServerHandle)
where
    S: Send + Sync + 'static,
    A: Fn(HttpRequest, Bytes, web::Data<Arc<S>>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = HttpResponse> + 'static,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("local address").port();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(web::Data::new(state.clone()))
            .default_service(web::to(answer.clone()))
    })
    .workers(workers)
    .max_connections(100_000)
    .backlog(4096)
    .disable_signals()
    .shutdown_timeout(1)
    .listen(listener)
    .expect("listen")
    .run();
    let handle = server.handle();
    tokio::spawn(server);
    (port, handle)
}
