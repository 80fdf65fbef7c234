//! Builds the running gateway: database, provider, service, HTTP server and workers.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use adapters_acquirer::AcquirerClient;
use adapters_callback::{owner_id, CallbackConfig, CallbackWorker};
use adapters_console::{ConsolePorts, ConsoleState, Zone};
use adapters_db::{Backend, Database, DbOptions, MasterKey};
use adapters_http::{JsonCallbackFormat, ReadyFn};
use adapters_sandbox::{PngQr, SandboxConfig, SandboxProvider};
use anyhow::Context;
use domain::operator::Operator;
use domain::ports::{Chain, Clock};
use domain::service::{AcquirerSettings, Answers, Checkout, Gateway, Ports};
use prometheus::Registry;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::{AdminListener, ServeConfig};
use crate::processes::{ProcessReporter, REPORT_EVERY};
use crate::protocols::Protocols;
use crate::signals::ProviderSignals;
use crate::system::{SystemClock, UuidIds};

/// A gateway bound to its port, not yet running.
pub struct Application {
    port: u16,
    server: actix_web::dev::Server,
    database: Database,
    gateway: Gateway,
    config: ServeConfig,
    callbacks: CallbackWorker,
    signals: ProviderSignals,
    reporter: ProcessReporter,
    /// The console's own listener and its address, with `GATEWAY_ADMIN=HOST:PORT`.
    console: Option<(actix_web::dev::Server, std::net::SocketAddr)>,
    /// Where the console is reached (`http://HOST:PORT`), when it is on.
    console_url: Option<String>,
}

impl Application {
    /// Connects and migrates the database, binds the listener (port 0 picks a free one) and
    /// builds the server.
    pub async fn build(mut config: ServeConfig) -> anyhow::Result<Self> {
        let database = open_database(
            &config.database_url,
            config.database_read_url.clone(),
            config.master_key.clone(),
        )
        .await?;
        if config.master_key.is_none() && database.backend() == Backend::Postgres {
            tracing::warn!("GATEWAY_MASTER_KEY is not set: merchant secrets and provider credentials are stored in clear in PostgreSQL");
        }
        let listener = TcpListener::bind(config.bind)
            .with_context(|| format!("cannot listen on {} (GATEWAY_BIND)", config.bind))?;
        let address = listener.local_addr()?;
        if config.bind.port() == 0 && config.public_url == format!("http://{}", config.bind) {
            config.public_url = format!("http://{address}");
        }
        let provider = Arc::new(SandboxProvider::new(SandboxConfig {
            public_url: config.public_url.clone(),
            settle_after: config.sandbox_settle,
        }));
        let acquirer = Arc::new(AcquirerClient::new());
        let settings = AcquirerSettings {
            public_url: config.public_url.clone(),
            reconcile_after: config.reconcile_after,
            routing_budget: config.routing_budget,
        };
        let mut gateway = gateway_on(&database, provider.clone(), acquirer.clone(), settings);
        // With GATEWAY_SANDBOX=false the sandbox takes no new operations, but the ones it
        // already has (payouts settling) still finish.
        if !config.sandbox {
            gateway = gateway.without_sandbox();
        }
        let registry = Registry::new();
        acquirer.register(&registry)?;
        let signals = ProviderSignals::register(&registry)?;
        signals.refresh(&database, SystemClock.now()).await;
        // One id per process run: its leases (callbacks, reconciler) and its reports.
        let process_id: Arc<str> = owner_id().into();
        let reporter =
            ProcessReporter::register(&registry, process_id, gateway.clone(), database.clone())?;
        let ready_db = database.clone();
        let readiness = ReadyFn(move || {
            let db = ready_db.clone();
            async move { db.ping().await }
        });
        let state = adapters_http::HttpState::with_registry(
            gateway.clone(),
            Arc::new(readiness),
            adapters_http::HttpSettings {
                rate_limit_per_sec: config.rate_limit,
                public_url: config.public_url.clone(),
            },
            registry.clone(),
        )?;
        let callbacks = callback_worker(&database, &config, reporter.id())?;
        callbacks.metrics().register(&registry)?;
        // The sandbox's pages and /sandbox paths exist only while it is in service; acquirer
        // deposits keep their /pay pages either way.
        let checkout = config
            .sandbox
            .then(|| Checkout::new(gateway.steps(), provider));
        let pages = adapters_http::pages::mount(checkout.clone(), gateway.clone());
        let console_state = match config.admin {
            AdminListener::Off => None,
            _ => Some(console_state(&database, &config, &gateway, checkout)?),
        };
        let (console, console_url) = match (config.admin, console_state.clone()) {
            (AdminListener::Own(bind), Some(state)) => {
                let listener = TcpListener::bind(bind)
                    .with_context(|| format!("cannot listen on {bind} (GATEWAY_ADMIN)"))?;
                let address = listener.local_addr()?;
                let server = adapters_console::server(listener, state)?;
                (Some((server, address)), Some(format!("http://{address}")))
            }
            (AdminListener::Main, Some(_)) => (None, Some(config.public_url.clone())),
            _ => (None, None),
        };
        let on_main = (config.admin == AdminListener::Main)
            .then_some(console_state)
            .flatten()
            .map(adapters_console::mount);
        let server = adapters_http::server(listener, state, config.http_workers, move |cfg| {
            pages(cfg);
            if let Some(console) = &on_main {
                console(cfg);
            }
        })?;
        Ok(Self {
            port: address.port(),
            server,
            database,
            gateway,
            config,
            callbacks,
            signals,
            reporter,
            console,
            console_url,
        })
    }

    /// Where the operator console is reached (`http://HOST:PORT`, then `/admin`), when it is
    /// on.
    pub fn console_url(&self) -> Option<&str> {
        self.console_url.as_deref()
    }

    /// The port of the console's own listener, with `GATEWAY_ADMIN=HOST:PORT`.
    pub fn console_port(&self) -> Option<u16> {
        self.console.as_ref().map(|(_, address)| address.port())
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The use cases, for tests and the demo set-up.
    pub fn gateway(&self) -> &Gateway {
        &self.gateway
    }

    /// The configuration the gateway runs with (public URL resolved for port 0).
    pub fn config(&self) -> &ServeConfig {
        &self.config
    }

    pub fn database(&self) -> &Database {
        &self.database
    }

    /// The operator's use cases (merchants, routes, manual balance moves) on this database.
    pub fn operator(&self) -> Operator {
        operator(&self.database)
    }

    /// Serves until SIGINT/SIGTERM (actix handles the signals): in-flight requests finish,
    /// then the workers stop, the callback worker releases its leases and the process's
    /// report is deleted.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let (stop, stopped) = watch::channel(false);
        let mut workers = spawn_sweepers(self.gateway.answers(), stopped.clone());
        workers.push(spawn_reconciler(
            self.gateway.answers(),
            self.reporter.id().into(),
            stopped.clone(),
        ));
        workers.push(spawn_signals(
            self.signals.clone(),
            self.database.clone(),
            stopped.clone(),
        ));
        workers.push(spawn_reports(self.reporter.clone(), stopped.clone()));
        workers.push(tokio::spawn(self.callbacks.run(wait_for_stop(stopped))));
        // The console's own listener stops with the main one.
        let console = self.console.map(|(server, _)| server);
        let console_handle = console.as_ref().map(|server| server.handle());
        let console_task = console.map(tokio::spawn);
        let result = self.server.await;
        if let Some(handle) = console_handle {
            handle.stop(true).await;
        }
        if let Some(task) = console_task {
            if let Ok(Err(error)) = task.await {
                tracing::error!(%error, "the console's listener failed");
            }
        }
        let _ = stop.send(true);
        for worker in workers {
            if let Err(error) = worker.await {
                tracing::error!(%error, "a background worker failed");
            }
        }
        self.reporter.forget().await;
        result.context("the HTTP server failed")
    }
}

/// The operator console over `database` and the running gateway, in the configured zone.
fn console_state(
    database: &Database,
    config: &ServeConfig,
    gateway: &Gateway,
    checkout: Option<Checkout>,
) -> anyhow::Result<ConsoleState> {
    let zone = Zone::parse(&config.console_timezone).map_err(|e| {
        anyhow::anyhow!(
            "GATEWAY_CONSOLE_TIMEZONE (--console-timezone): invalid value {:?}: {e}",
            config.console_timezone
        )
    })?;
    let store = Arc::new(database.clone());
    let ports = ConsolePorts {
        store: store.clone(),
        outbox: store.clone(),
        processes: store,
        operator: operator(database),
        gateway: gateway.clone(),
        tariffs: tariffs_of(database),
        checkout,
        clock: Arc::new(SystemClock),
        read_shape: adapters_http::read_shape,
    };
    Ok(ConsoleState::new(ports, zone))
}

/// How often the sweepers look for expired deposits and due payouts.
const SWEEP_EVERY: Duration = Duration::from_millis(500);

/// The operator's use cases over `database`, on the system clock and random ids.
pub fn operator(database: &Database) -> Operator {
    let store = Arc::new(database.clone());
    Operator::new(
        store.clone(),
        store,
        Arc::new(SystemClock),
        Arc::new(UuidIds),
    )
}

/// The tariff use cases over `database`, on the system clock.
pub fn tariffs_of(database: &Database) -> domain::tariffs::Tariffs {
    let store = Arc::new(database.clone());
    domain::tariffs::Tariffs::new(store.clone(), store, Arc::new(SystemClock))
}

/// The use cases over `database`, with the sandbox and the Acquirer API's connector given
/// (every provider protocol through [`Protocols`]), on the system clock and random ids.
pub fn gateway_on(
    database: &Database,
    sandbox: Arc<SandboxProvider>,
    acquirer: Arc<AcquirerClient>,
    settings: AcquirerSettings,
) -> Gateway {
    let acquirer = Arc::new(Protocols::new(acquirer));
    let store = Arc::new(database.clone());
    Gateway::new(Ports {
        store: store.clone(),
        refunds: store.clone(),
        disputes: store.clone(),
        merchants: store.clone(),
        routes: store.clone(),
        tariffs: store.clone(),
        ledger: store.clone(),
        provider: sandbox,
        providers: store.clone(),
        acquirer,
        clock: Arc::new(SystemClock),
        ids: Arc::new(UuidIds),
        callback_format: Arc::new(JsonCallbackFormat),
        callbacks: store,
        qr: Arc::new(PngQr),
    })
    .with_acquirer_settings(settings)
}

/// Opens and migrates the database, then checks its stored secrets against `master_key`: a
/// wrong key, or none while secrets are encrypted, stops here with a message naming
/// GATEWAY_MASTER_KEY. Diesel is synchronous: this runs off the async executor.
pub async fn open_database(
    url: &str,
    read_url: Option<String>,
    master_key: Option<MasterKey>,
) -> anyhow::Result<Database> {
    let url = url.to_string();
    tokio::task::spawn_blocking(move || {
        let keyed = master_key.is_some();
        let options = DbOptions {
            master_key,
            read_url,
            ..DbOptions::default()
        };
        let database = Database::connect_with(&url, options)
            .context("cannot open the database named by GATEWAY_DATABASE_URL")?;
        database.migrate().context("cannot migrate the database")?;
        let secrets = database.check_secrets()?;
        if keyed && secrets.clear > 0 {
            tracing::warn!(
                clear = secrets.clear,
                "secrets are stored in clear although GATEWAY_MASTER_KEY is set; run `gateway secrets encrypt` with the gateway stopped"
            );
        }
        Ok(database)
    })
    .await?
}

fn callback_worker(
    database: &Database,
    config: &ServeConfig,
    owner: &str,
) -> anyhow::Result<CallbackWorker> {
    let callback_config = CallbackConfig {
        schedule: config.callback_schedule.clone(),
        timeout: config.callback_timeout,
        allow_private: config.callback_allow_private,
        lease: adapters_callback::lease_for(config.callback_timeout),
        ..CallbackConfig::default()
    };
    let store = Arc::new(database.clone());
    CallbackWorker::new(
        store.clone(),
        store,
        Arc::new(SystemClock),
        callback_config,
        owner.to_string(),
    )
}

/// The expiry sweeper and the payout settler; every instance runs them, guarded writes make
/// their work happen once.
fn spawn_sweepers(answers: &Answers, stopped: watch::Receiver<bool>) -> Vec<JoinHandle<()>> {
    let sweeper = every(
        SWEEP_EVERY,
        stopped.clone(),
        answers.clone(),
        |answers| async move {
            match answers.expire_overdue().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(expired = n, "expired overdue deposits"),
                Err(error) => tracing::warn!(error = %Chain(&error), "expiry sweep failed"),
            }
        },
    );
    let settler = every(
        SWEEP_EVERY,
        stopped,
        answers.clone(),
        |answers| async move {
            match answers.settle_due_payouts().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(settled = n, "settled due payouts"),
                Err(error) => tracing::warn!(error = %Chain(&error), "payout settlement failed"),
            }
        },
    );
    vec![tokio::spawn(sweeper), tokio::spawn(settler)]
}

/// How often the reconciler looks for acquirer operations to read or cancel.
const RECONCILE_EVERY: Duration = Duration::from_millis(500);

/// The reconciler, the refund pass (sandbox refunds settling, acquirer refunds read) and the
/// chargeback pass (undecided chargebacks read);
/// every instance runs them, their work is leased so each item is done once.
fn spawn_reconciler(
    answers: &Answers,
    owner: Arc<str>,
    stopped: watch::Receiver<bool>,
) -> JoinHandle<()> {
    let state = (answers.clone(), owner);
    tokio::spawn(every(
        RECONCILE_EVERY,
        stopped,
        state,
        |(answers, owner)| async move {
            match answers.reconcile(&owner).await {
                Ok(0) => {}
                Ok(n) => tracing::debug!(checked = n, "reconciler pass"),
                Err(error) => tracing::warn!(error = %Chain(&error), "reconciler pass failed"),
            }
            // Refunds due: the sandbox's settle, an acquirer's are read.
            match answers.settle_refunds(&owner).await {
                Ok(0) => {}
                Ok(n) => tracing::debug!(checked = n, "refund pass"),
                Err(error) => tracing::warn!(error = %Chain(&error), "refund pass failed"),
            }
            // Chargebacks due: quiet ones and those whose evidence's answer was lost are read.
            match answers.check_chargebacks(&owner).await {
                Ok(0) => {}
                Ok(n) => tracing::debug!(checked = n, "chargeback pass"),
                Err(error) => tracing::warn!(error = %Chain(&error), "chargeback pass failed"),
            }
        },
    ))
}

/// How often the provider metrics are read from storage.
const SIGNALS_EVERY: Duration = Duration::from_secs(5);

fn spawn_signals(
    signals: ProviderSignals,
    database: Database,
    stopped: watch::Receiver<bool>,
) -> JoinHandle<()> {
    let state = (signals, database);
    tokio::spawn(every(
        SIGNALS_EVERY,
        stopped,
        state,
        |(signals, database)| async move { signals.refresh(&database, SystemClock.now()).await },
    ))
}

/// This process's reports and circuit gauge, from the moment it serves.
fn spawn_reports(reporter: ProcessReporter, stopped: watch::Receiver<bool>) -> JoinHandle<()> {
    tokio::spawn(every(
        REPORT_EVERY,
        stopped,
        reporter,
        |reporter| async move { reporter.tick().await },
    ))
}

async fn wait_for_stop(mut stopped: watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}

/// Runs `tick` with a clone of `state` every `period` until stopped.
async fn every<S, F, Fut>(period: Duration, stopped: watch::Receiver<bool>, state: S, tick: F)
where
    S: Clone + Send + 'static,
    F: Fn(S) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let mut interval = tokio::time::interval(period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = interval.tick() => tick(state.clone()).await,
            () = wait_for_stop(stopped.clone()) => return,
        }
    }
}
