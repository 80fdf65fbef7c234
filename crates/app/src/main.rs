//! `gateway`: the payment gateway's one binary.

use std::process::ExitCode;

use clap::Parser;

use app::cli::{Cli, Command};

/// GATEWAY_MASTER_KEY, read from the environment only: a key on the command line would end
/// up in shell history and process lists. A value that is not UTF-8 is kept as one that
/// cannot parse, so it is refused like any malformed key.
fn master_key() -> Option<String> {
    std::env::var_os("GATEWAY_MASTER_KEY")
        .map(|value| value.into_string().unwrap_or_else(|_| "not UTF-8".into()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let master_key = master_key();
    app::telemetry::init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::from(1);
        }
    };
    let result = match cli.command {
        Command::Serve(args) => {
            // actix-web's server runs on its own system inside the runtime.
            runtime.block_on(app::commands::serve(
                &cli.database_url,
                master_key.as_deref(),
                &args,
            ))
        }
        command => runtime.block_on(app::commands::run(
            &cli.database_url,
            master_key.as_deref(),
            command,
        )),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            if error.downcast_ref::<app::commands::Usage>().is_some() {
                ExitCode::from(app::commands::EXIT_USAGE)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
