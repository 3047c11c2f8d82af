//! The command line: `ledger [--config PATH] [serve|worker|migrate]`, and
//! `ledger basis`, the offline cost-basis replay of a CSV, which needs
//! neither configuration nor database and so runs before either is read.
//! The operator's `ledger accounts …` and `ledger tokens …` need the
//! configuration and the store, never the application state.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::ExitCode,
    sync::Arc,
};

use clap::{Parser, Subcommand};

use crate::{
    basis::{self, Method, jurisdiction::Jurisdiction},
    clock::SystemClock,
    config::Config,
    startup::{self, Application, shutdown_signal},
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
        /// us, uk, ca, de or au: the country whose rules, tax year and
        /// civil time the replay follows.
        #[arg(long, default_value_t = Jurisdiction::Us)]
        jurisdiction: Jurisdiction,
        /// fifo, lifo, hifo, lofo or average; defaults to the
        /// jurisdiction's own (us, de, au fifo; uk share matching; ca
        /// average). A method the jurisdiction does not allow exits 2.
        #[arg(long)]
        method: Option<Method>,
        /// The input CSV (`-` for standard input).
        #[arg(long, value_name = "FILE.csv")]
        input: PathBuf,
    },
    /// Manage accounts (docs/accounts.md).
    Accounts {
        #[command(subcommand)]
        command: AccountsCommand,
    },
    /// Mint and revoke MCP tokens and API keys (docs/accounts.md).
    Tokens {
        #[command(subcommand)]
        command: TokensCommand,
    },
    /// Research credits (docs/follow-the-money.md).
    Credits {
        #[command(subcommand)]
        command: CreditsCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum CreditsCommand {
    /// Grant research credits to an account; print its balance after, in
    /// atomic USDC.
    Grant {
        /// The account (acct_…).
        #[arg(long, value_name = "ID")]
        account: String,
        /// The amount in USD, at most 6 decimals (`5`, `0.25`); at most
        /// 10000 per grant, and never past a balance of 100000.
        #[arg(long, value_name = "N")]
        usd: String,
        /// What the movement line says.
        #[arg(long, default_value = "operator grant")]
        note: String,
    },
    /// Print an account's balance and its movements, newest first.
    Show {
        /// The account (acct_…).
        #[arg(long, value_name = "ID")]
        account: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum AccountsCommand {
    /// Create an account; print its id.
    Create {
        /// A label for the account (at most 64 characters).
        #[arg(long, default_value = "")]
        label: String,
    },
    /// Switch a feature on or off for an account (follow_the_money).
    Feature {
        /// The account (acct_…).
        #[arg(long, value_name = "ID")]
        account: String,
        /// The feature: follow_the_money.
        #[arg(value_name = "FEATURE")]
        feature: String,
        /// on or off.
        #[arg(value_name = "on|off")]
        state: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum TokensCommand {
    /// Mint a token; print its plaintext (shown this once) and nothing else.
    Mint {
        /// The account the token acts as (acct_…).
        #[arg(long, value_name = "ID")]
        account: String,
        /// mcp (an agent's MCP token, lm_…) or api (a script's API key, lk_…).
        #[arg(long)]
        kind: String,
        /// Comma-separated: read, scan.
        #[arg(long, value_name = "read,scan")]
        scopes: String,
        /// A label for the token (at most 64 characters).
        #[arg(long, default_value = "")]
        label: String,
    },
    /// List an account's live tokens, newest first: one tab-separated line
    /// each (id, prefix, kind, scopes, created, last used or -, label).
    List {
        /// The account (acct_…).
        #[arg(long, value_name = "ID")]
        account: String,
    },
    /// Revoke a live token, named by its id (tok_…, as `ledger tokens mint`
    /// and `ledger tokens list` print it) or by the start of its plaintext
    /// (lm_…/lk_…, at least 4 characters after the underscore, as the Keys
    /// page and `ledger tokens list` show it); a start that matches several
    /// live tokens is refused. Prints the revoked token's id.
    Revoke {
        /// tok_… or the start of lm_…/lk_….
        #[arg(value_name = "TOKEN_ID|PREFIX")]
        token: String,
    },
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(Command::Basis {
        jurisdiction,
        method,
        input,
    }) = &cli.command
    {
        return basis_command(*jurisdiction, *method, input);
    }
    let config = match telemetry::while_configuring(|| Config::load(cli.config.as_deref())) {
        Ok(config) => config,
        Err(err) => {
            eprintln!("ledger: {err}");
            return ExitCode::from(2);
        }
    };
    telemetry::init(config.log_format);
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
    let command = cli.command.unwrap_or(Command::Serve);
    if let Command::Accounts { .. } | Command::Tokens { .. } | Command::Credits { .. } = &command {
        return runtime.block_on(operator_command(command, config));
    }
    let outcome = runtime.block_on(run(command, config));
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
        // Answered in `main` by `operator_command`.
        Command::Accounts { .. } | Command::Tokens { .. } | Command::Credits { .. } => {}
        Command::Worker => {
            let store = Store::open(&config.database_url, &config.database).await?;
            let migrations = store.applied_migrations().await?;
            let public_url = config.public_url();
            let metrics_listener = startup::bind_metrics(&config).await?;
            let grace = std::time::Duration::from_secs(config.shutdown_grace_secs);
            let caches = std::sync::Arc::new(crate::caches::Caches::default());
            let metrics = startup::metrics_for(&config, &caches);
            let rpc = crate::solana::RpcClient::instrumented(
                config.solana.rpc_settings(),
                metrics.clone(),
            )?;
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
                caches,
                metrics,
                migrations,
            });
            let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
            let metrics_server = metrics_listener.map(|listener| {
                tokio::spawn(startup::serve_metrics(
                    listener,
                    services.clone(),
                    stop_rx.clone(),
                ))
            });
            let worker = tokio::spawn(crate::worker::run(services, stop_rx));
            shutdown_signal().await;
            let _ = stop_tx.send(true);
            let _ = worker.await;
            if let Some(metrics_server) = metrics_server {
                let _ = tokio::time::timeout(grace, metrics_server).await;
            }
            store.close().await;
        }
    }
    Ok(())
}

/// `ledger basis`: 0 on success, 2 for input the replay refuses (the
/// message names the line) or a method the jurisdiction does not allow
/// (the message says why), 1 when the file cannot be read or the output
/// written.
fn basis_command(jurisdiction: Jurisdiction, method: Option<Method>, input: &Path) -> ExitCode {
    use basis::jurisdiction::{Matching, Taxpayer, Zone};

    // Refused before reading: the reason is the jurisdiction's, not the file's.
    let matching = match jurisdiction.matching(method) {
        Ok(matching) => matching,
        Err(refused) => {
            eprintln!("ledger basis: {refused}");
            return ExitCode::from(2);
        }
    };
    // Read row by row into compact rows and replayed with each realized row
    // written as it is made (basis::stream): the same output as the books'
    // replay, in a fraction of its memory.
    let books = if input == Path::new("-") {
        basis::stream::read(std::io::stdin().lock())
    } else {
        match std::fs::File::open(input) {
            Ok(file) => basis::stream::read(std::io::BufReader::with_capacity(1 << 16, file)),
            Err(err) => {
                eprintln!("ledger basis: {}: {err}", input.display());
                return ExitCode::FAILURE;
            }
        }
    };
    let books = match books {
        Ok(books) => books,
        Err(err @ basis::csv_io::InputError::Invalid { .. }) => {
            eprintln!("ledger basis: {}: {err}", input.display());
            return ExitCode::from(2);
        }
        Err(err) => {
            eprintln!("ledger basis: {}: {err}", input.display());
            return ExitCode::FAILURE;
        }
    };
    let currency = jurisdiction.currency();
    if books.in_usd && jurisdiction != Jurisdiction::Us {
        eprintln!(
            "ledger basis: {}: {jurisdiction} reports in {}: give `value` and `fee` in {} instead of \
             `usd_value` and `fee_usd` (the offline replay converts nothing)",
            input.display(),
            currency.code(),
            currency.code(),
        );
        return ExitCode::from(2);
    }
    // Issue 24: US dates in UTC unless the account sets a zone (offline
    // there is no account); the others in their civil time.
    let zone = match jurisdiction {
        Jurisdiction::Us => Zone::Utc,
        other => other.zone(),
    };
    let taxpayer = Taxpayer {
        zone,
        ..Taxpayer::of(jurisdiction)
    };
    let stdout = std::io::stdout().lock();
    let outcome = match books.assess_to(stdout, jurisdiction, &taxpayer, method) {
        Ok(outcome) => outcome,
        Err(basis::stream::StreamError::Refused(refused)) => {
            eprintln!("ledger basis: {refused}");
            return ExitCode::from(2);
        }
        Err(basis::stream::StreamError::Write(err)) => {
            eprintln!("ledger basis: writing the report: {err}");
            return ExitCode::FAILURE;
        }
    };
    let matched = match matching {
        Matching::Lots(method) => method.as_str(),
        Matching::ShareMatching => "share matching",
        Matching::AdjustedCostBase => "adjusted cost base",
    };
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "ledger basis: {jurisdiction} ({matched}, {}): {} realized rows, proceeds {}, basis {}, gain {}; {} rows left out of totals (unpriced or uncovered); {} moves between own wallets",
        currency.code(),
        outcome.rows,
        outcome.proceeds.normalize(),
        outcome.basis.normalize(),
        outcome.gain.normalize(),
        outcome.incomplete,
        outcome.moves,
    );
    for u in &outcome.unallocated {
        let _ = writeln!(
            stderr,
            "ledger basis: {} {} left unallocated at the change to per-wallet pools (basis {})",
            u.quantity.normalize(),
            u.asset,
            u.basis
                .map(|b| b.normalize().to_string())
                .unwrap_or_else(|| "unknown".into()),
        );
    }
    ExitCode::SUCCESS
}

/// `ledger accounts …` and `ledger tokens …`: 0 on success, 2 for an
/// argument the accounts layer refuses (the message names it and the rule),
/// 1 for anything else (no such account or token, an ambiguous prefix, the
/// database). Only what a script captures goes to stdout: the account id,
/// the token's plaintext, the revoked token's id; the rest to stderr.
async fn operator_command(command: Command, config: Config) -> ExitCode {
    use crate::accounts::{self, AccountId, AccountsError, Scopes, TokenKind, TokenRef};

    let store = match Store::open(&config.database_url, &config.database).await {
        Ok(store) => store,
        Err(err) => {
            eprintln!("ledger: opening the database: {err}");
            return ExitCode::FAILURE;
        }
    };
    let now = crate::clock::Clock::now_ms(&SystemClock);
    if matches!(
        &command,
        Command::Credits { .. }
            | Command::Accounts {
                command: AccountsCommand::Feature { .. }
            }
    ) {
        let code = research_command(command, &store, &config, now).await;
        store.close().await;
        return code;
    }
    let outcome: Result<(), (&str, AccountsError)> = match command {
        Command::Accounts {
            command: AccountsCommand::Create { label },
        } => {
            let name = "ledger accounts create";
            accounts::create_account(&store, now, &label)
                .await
                .map(|id| {
                    println!("{id}");
                    eprintln!("{name}: created account {id}");
                })
                .map_err(|e| (name, e))
        }
        Command::Tokens {
            command:
                TokensCommand::Mint {
                    account,
                    kind,
                    scopes,
                    label,
                },
        } => {
            let name = "ledger tokens mint";
            let minted = async {
                let account = AccountId::parse(&account)?;
                let kind = TokenKind::parse(&kind)?;
                let scopes = Scopes::parse(&scopes)?;
                let minted = accounts::mint(&store, now, &account, kind, scopes, &label).await?;
                Ok::<_, AccountsError>((account, minted))
            };
            minted
                .await
                .map(|(account, minted)| {
                    println!("{}", minted.plaintext);
                    eprintln!(
                        "{name}: {} token {} ({}) for {account}, scopes {}; the plaintext above is \
                         shown this once and stored only as a hash",
                        minted.kind, minted.token_id, minted.prefix, minted.scopes
                    );
                })
                .map_err(|e| (name, e))
        }
        Command::Tokens {
            command: TokensCommand::List { account },
        } => {
            let name = "ledger tokens list";
            let listed = async {
                let account = AccountId::parse(&account)?;
                if !store.account_exists(account.as_str()).await? {
                    return Err(AccountsError::NoAccount(account.to_string()));
                }
                let tokens = accounts::list_tokens(&store, &account).await?;
                Ok::<_, AccountsError>((account, tokens))
            };
            listed
                .await
                .map(|(account, tokens)| {
                    for t in &tokens {
                        println!(
                            "{}\t{}\t{}\t{}\t{}\t{}\t{}",
                            t.token_id,
                            t.prefix,
                            t.kind,
                            t.scopes,
                            crate::values::rfc3339(t.created_at),
                            t.last_used_at
                                .map_or_else(|| "-".to_owned(), crate::values::rfc3339),
                            // Labels hold no control characters (accounts::check_label).
                            t.label,
                        );
                    }
                    eprintln!("{name}: {} live tokens of {account}", tokens.len());
                })
                .map_err(|e| (name, e))
        }
        Command::Tokens {
            command: TokensCommand::Revoke { token },
        } => {
            let name = "ledger tokens revoke";
            let revoked = async {
                let token = TokenRef::parse(&token)?;
                accounts::revoke_by_ref(&store, now, &token).await
            };
            revoked
                .await
                .map(|r| {
                    println!("{}", r.token_id);
                    eprintln!(
                        "{name}: revoked {} token {} ({}) of {}",
                        r.kind, r.token_id, r.prefix, r.account_id
                    );
                })
                .map_err(|e| (name, e))
        }
        Command::Serve
        | Command::Worker
        | Command::Migrate
        | Command::Basis { .. }
        | Command::Credits { .. }
        | Command::Accounts {
            command: AccountsCommand::Feature { .. },
        } => Ok(()),
    };
    store.close().await;
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err((name, err @ AccountsError::Invalid { .. })) => {
            eprintln!("{name}: {err}");
            ExitCode::from(2)
        }
        Err((name, err)) => {
            eprintln!("{name}: {err}");
            ExitCode::FAILURE
        }
    }
}

/// `ledger credits …` and `ledger accounts feature …`: 0 on success, 2 for
/// an argument refused (the message names it), 1 for anything else (no
/// such account, the database). stdout carries what a script captures
/// (the balance in atomic USDC; the movements as tab-separated lines).
async fn research_command(command: Command, store: &Store, config: &Config, now: i64) -> ExitCode {
    use crate::{
        accounts::AccountId,
        credits::{Credits, FEATURES},
        values::Usd,
    };
    let credits = Credits {
        store,
        config: &config.graph,
        now_ms: now,
    };
    let account_of = |text: &str| -> Result<AccountId, (u8, String)> {
        AccountId::parse(text).map_err(|e| (2, e.to_string()))
    };
    let exists = |account: AccountId| async move {
        match store.account_exists(account.as_str()).await {
            Ok(true) => Ok(account),
            Ok(false) => Err((1, format!("no account {}", account.as_str()))),
            Err(e) => Err((1, format!("the database: {e}"))),
        }
    };
    let (name, outcome): (&str, Result<(), (u8, String)>) = match command {
        Command::Credits {
            command: CreditsCommand::Grant { account, usd, note },
        } => {
            let run = async {
                let account = exists(account_of(&account)?).await?;
                let amount = Usd::parse(&usd).map_err(|e| (2, format!("--usd: {e}")))?;
                let balance = credits.grant(&account, amount, &note).await.map_err(|e| {
                    (
                        if e.code() == crate::error::Code::InvalidParams {
                            2
                        } else {
                            1
                        },
                        e.message().to_owned(),
                    )
                })?;
                println!("{balance}");
                eprintln!(
                    "ledger credits grant: granted {amount} USD to {account}; balance {} USD",
                    crate::credits::usd_text(balance)
                );
                Ok(())
            };
            ("ledger credits grant", run.await)
        }
        Command::Credits {
            command: CreditsCommand::Show { account },
        } => {
            let run = async {
                let account = exists(account_of(&account)?).await?;
                let view = credits
                    .view(&account)
                    .await
                    .map_err(|e| (1, e.message().to_owned()))?;
                println!("{}", view.balance_atomic);
                for m in &view.movements {
                    println!(
                        "{}\t{}\t{}\t{}\t{}\t{}",
                        m.at,
                        m.kind,
                        m.amount_atomic,
                        m.balance_after_atomic,
                        m.action_id.as_deref().unwrap_or("-"),
                        m.note
                    );
                }
                Ok(())
            };
            ("ledger credits show", run.await)
        }
        Command::Accounts {
            command:
                AccountsCommand::Feature {
                    account,
                    feature,
                    state,
                },
        } => {
            let run = async {
                let account = exists(account_of(&account)?).await?;
                if !FEATURES.contains(&feature.as_str()) {
                    return Err((
                        2,
                        format!("FEATURE: {feature:?} is none of {}", FEATURES.join(", ")),
                    ));
                }
                let on = match state.as_str() {
                    "on" => true,
                    "off" => false,
                    other => return Err((2, format!("on|off: {other:?} is neither on nor off"))),
                };
                let changed = store
                    .set_feature(account.as_str(), &feature, on, now)
                    .await
                    .map_err(|e| (1, format!("the database: {e}")))?;
                println!("{}", if on { "on" } else { "off" });
                eprintln!(
                    "ledger accounts feature: {feature} is {state} for {account}{}",
                    if changed { "" } else { " (it already was)" }
                );
                Ok(())
            };
            ("ledger accounts feature", run.await)
        }
        _ => ("ledger", Ok(())),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, message)) => {
            eprintln!("{name}: {message}");
            ExitCode::from(code)
        }
    }
}
