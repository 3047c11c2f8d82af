//! The command line: `ledger [--config PATH] [serve|worker|migrate]`, and
//! `ledger basis`, the offline cost-basis replay of a CSV, which needs
//! neither configuration nor database and so runs before either is read.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::ExitCode,
    sync::Arc,
};

use clap::{Parser, Subcommand};

use crate::{
    basis::{self, Method},
    clock::SystemClock,
    config::Config,
    startup::{Application, shutdown_signal},
    state::{Parts, Services},
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
    /// Replay a CSV of acquisitions and disposals offline; print the
    /// realized disposals and open lots as CSV (docs/cost-basis.md).
    Basis {
        /// fifo, lifo, hifo or average (average is not accepted for US filings).
        #[arg(long, default_value_t = Method::Fifo)]
        method: Method,
        /// The input CSV (`-` for standard input).
        #[arg(long, value_name = "FILE.csv")]
        input: PathBuf,
    },
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(Command::Basis { method, input }) = &cli.command {
        return basis_command(*method, input);
    }
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
        // Answered in `main` before any configuration is read.
        Command::Basis { .. } => {}
        Command::Worker => {
            let store = Store::open(&config.database_url, &config.database).await?;
            let public_url = config.public_url();
            let rpc = crate::solana::RpcClient::new(config.solana.rpc_settings())?;
            let payments = crate::payments::Runtime::load(&config.x402)?;
            let prices = crate::prices::Prices::new(&config.prices)?;
            let services = Services::new(Parts {
                payments,
                rpc,
                prices,
                public_url,
                store: store.clone(),
                clock: Arc::new(SystemClock),
                config,
            });
            let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
            let worker = tokio::spawn(crate::worker::run(services, stop_rx));
            shutdown_signal().await;
            let _ = stop_tx.send(true);
            let _ = worker.await;
            store.close().await;
        }
    }
    Ok(())
}

/// `ledger basis`: 0 on success, 2 for input the replay refuses (the
/// message names the line), 1 when the file cannot be read or the output
/// written.
fn basis_command(method: Method, input: &Path) -> ExitCode {
    let events = if input == Path::new("-") {
        basis::csv_io::read_events(std::io::stdin().lock())
    } else {
        match std::fs::File::open(input) {
            Ok(file) => basis::csv_io::read_events(std::io::BufReader::new(file)),
            Err(err) => {
                eprintln!("ledger basis: {}: {err}", input.display());
                return ExitCode::FAILURE;
            }
        }
    };
    let events = match events {
        Ok(events) => events,
        Err(err @ basis::csv_io::InputError::Invalid { .. }) => {
            eprintln!("ledger basis: {}: {err}", input.display());
            return ExitCode::from(2);
        }
        Err(err) => {
            eprintln!("ledger basis: {}: {err}", input.display());
            return ExitCode::FAILURE;
        }
    };
    let replay = basis::replay(&events, method);
    let stdout = std::io::stdout().lock();
    if let Err(err) = basis::csv_io::write_report(stdout, &replay) {
        eprintln!("ledger basis: writing the report: {err}");
        return ExitCode::FAILURE;
    }
    let total = &replay.total;
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "ledger basis: {method}: {} realized rows, proceeds {}, basis {}, gain {} (short {}, long {}); {} rows left out of totals (unpriced or uncovered)",
        total.rows,
        total.proceeds.normalize(),
        total.basis.normalize(),
        total.gain.normalize(),
        total.short_term_gain.normalize(),
        total.long_term_gain.normalize(),
        total.incomplete_rows,
    );
    if !method.accepted_for_us_filings() {
        let _ = writeln!(
            stderr,
            "ledger basis: average cost is not accepted for US filings"
        );
    }
    ExitCode::SUCCESS
}
