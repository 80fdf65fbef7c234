//! The Acquirer API listener, which `down` closes and reopens.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use actix_web::dev::ServerHandle;
use actix_web::{web, App, HttpServer};

use crate::sim::Sim;

/// The Acquirer API listener at a fixed address, closed while `down`.
pub struct ApiServer {
    sim: Arc<Sim>,
    addr: SocketAddr,
    running: tokio::sync::Mutex<Option<ServerHandle>>,
    runtime: tokio::runtime::Handle,
}

impl ApiServer {
    /// A listener manager for `addr` (already resolved, port included); servers run on `runtime`.
    pub fn new(sim: Arc<Sim>, addr: SocketAddr, runtime: tokio::runtime::Handle) -> Arc<Self> {
        Arc::new(Self {
            sim,
            addr,
            running: tokio::sync::Mutex::new(None),
            runtime,
        })
    }

    /// The address it listens on when up.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves on `listener` (or binds the address again when `None`); no-op when up.
    pub async fn up(&self, listener: Option<TcpListener>) -> std::io::Result<()> {
        let mut running = self.running.lock().await;
        if running.is_some() {
            return Ok(());
        }
        let listener = match listener {
            Some(listener) => listener,
            None => TcpListener::bind(self.addr)?,
        };
        let sim = web::Data::from(self.sim.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(sim.clone())
                .configure(crate::api::configure)
        })
        .workers(2)
        .disable_signals()
        .shutdown_timeout(0)
        .listen(listener)?
        .run();
        *running = Some(server.handle());
        // On the main runtime, not on the worker of the control call that reopened it.
        self.runtime.spawn(server);
        tracing::info!(addr = %self.addr, "api listener up");
        Ok(())
    }

    /// Closes the listener and cuts open connections; no-op when down.
    pub async fn down(&self) {
        let mut running = self.running.lock().await;
        if let Some(handle) = running.take() {
            handle.stop(false).await;
            tracing::info!(addr = %self.addr, "api listener down");
        }
    }
}
