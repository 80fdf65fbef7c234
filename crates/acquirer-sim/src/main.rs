//! `acquirer-sim`: a bank's Acquirer API in test mode, with fault injection (docs/acquirer-sim.md).

mod api;
mod config;
mod control;
mod dice;
mod error;
mod faults;
mod model;
mod money;
mod notify;
mod page;
mod rules;
mod secret;
mod server;
mod signature;
mod sim;
mod stats;
mod store;

use std::io::Write;
use std::net::TcpListener;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;

use crate::config::Config;
use crate::notify::Notifier;
use crate::server::ApiServer;
use crate::sim::{Settings, Sim};

fn main() -> ExitCode {
    let config = Config::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    // A multi-threaded runtime with I/O and time enabled.
    let result = tokio::runtime::Runtime::new()
        .context("cannot start the async runtime")
        .and_then(|runtime| runtime.block_on(run(config)));
    if let Err(error) = result {
        eprintln!("error: {error:#}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

async fn run(config: Config) -> anyhow::Result<()> {
    let faults = config.faults().context("bad fault flag")?;
    let api_listener =
        TcpListener::bind(config.bind).with_context(|| format!("cannot bind {}", config.bind))?;
    let api_addr = api_listener.local_addr()?;
    let control_listener = TcpListener::bind(config.control_bind)
        .with_context(|| format!("cannot bind {}", config.control_bind))?;
    let control_addr = control_listener.local_addr()?;
    let seed = config.seed.unwrap_or_else(dice::fresh_seed);
    tracing::info!(seed, "fault dice seeded");

    let runtime = tokio::runtime::Handle::current();
    let hold = Duration::from_millis(config.hold_ms);
    let notifier = Notifier::new(
        config.webhook_secret.expose().to_owned(),
        config.retries(),
        hold,
        runtime.clone(),
    );
    let settings = Settings {
        settle: Duration::from_millis(config.settle_ms),
        hold,
        page_base: config
            .public_url
            .clone()
            .map(|url| url.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| format!("http://{api_addr}")),
        api_key: config.api_key.clone(),
    };
    let down = faults.down;
    let sim = Sim::new(
        settings,
        faults,
        dice::Dice::seeded(seed),
        notifier,
        runtime.clone(),
    );
    let api = ApiServer::new(sim.clone(), api_addr, runtime);
    if down {
        // The port stays known: it is bound again when `down` is lifted.
        drop(api_listener);
    } else {
        api.up(Some(api_listener)).await?;
    }
    let control = control::serve(control_listener, sim, api.clone())?;

    // The one line on stdout: scripts and tests read the ports from it.
    let mut stdout = std::io::stdout();
    writeln!(
        stdout,
        "acquirer-sim listening api={api_addr} control={control_addr}"
    )?;
    stdout.flush()?;
    tracing::info!(api = %api_addr, control = %control_addr, "listening");

    tokio::select! {
        result = control => result.context("control listener failed")?,
        result = tokio::signal::ctrl_c() => result.context("cannot wait for Ctrl-C")?,
    }
    api.down().await;
    Ok(())
}
