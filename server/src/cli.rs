//! The command line: `ledger [--config PATH] [serve|worker|migrate]`.

use std::{path::PathBuf, process::ExitCode, sync::Arc};

use clap::{Parser, Subcommand};

use crate::{
    clock::SystemClock,
    config::Config,
    startup::{Application, shutdown_signal},
    state::{AppState, Inner},
    store::Store,
    telemetry,
};

#[derive(Debug, Parser)]
#[command(
    name = "ledger",
    version,
    about = "Ledger: Solana wallet reports for people and agents"
)]
pub struct Cli {
    /// A TOML configuration file; environment variables override it.
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve HTTP (MCP, REST, portal) with in-process workers. The default.
    Serve,
    /// Run the workers only.
    Worker,
    /// Create or migrate the database, then exit.
    Migrate,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    telemetry::init();
    let config = match Config::load(cli.config.as_deref()) {
        Ok(config) => config,
        Err(err) => {
            eprintln!("ledger: {err}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("ledger: starting the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(run(cli.command.unwrap_or(Command::Serve), config));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!(error = %err, "ledger stopped with an error");
            eprintln!("ledger: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command, config: Config) -> Result<(), Box<dyn std::error::Error>> {
    match command {
        Command::Serve => {
            let app = Application::build(config, Arc::new(SystemClock)).await?;
            app.run_until(shutdown_signal()).await?;
        }
        Command::Migrate => {
            let store = Store::open(&config.database_url, &config.database).await?;
            let applied = store.applied_migrations().await?;
            println!("database ready: {applied} migrations applied");
            store.close().await;
        }
        Command::Worker => {
            let store = Store::open(&config.database_url, &config.database).await?;
            let public_url = config.public_url();
            let rpc = crate::solana::RpcClient::new(config.solana.rpc_settings())?;
            let prices = crate::prices::Prices::new(&config.prices)?;
            let state = AppState::new(Inner {
                rpc,
                prices,
                leptos: crate::site::leptos_options(config.listen),
                registry: crate::mcp::tools::registry(),
                public_url,
                store: store.clone(),
                clock: Arc::new(SystemClock),
                hydrate: false,
                config,
            });
            let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
            let worker = tokio::spawn(crate::worker::run(state, stop_rx));
            shutdown_signal().await;
            let _ = stop_tx.send(true);
            let _ = worker.await;
            store.close().await;
        }
    }
    Ok(())
}
