//! Running a scan job: list the wallet's signatures page by page (newest
//! first, from where the job left off), fetch the transactions the ledger
//! does not hold yet, decode them into legs and write them, then move on.
//! One page is in memory at a time, so memory stays flat however long the
//! history. Progress (and the lease) is recorded after every batch; a job
//! resumed after a crash re-lists its current page and skips what it
//! already wrote. Besides its own signatures a scan lists those of its
//! token accounts and stake accounts, then reads its stake accounts'
//! rewards epoch by epoch ([`super::staking`]).

pub use super::context::{ScanContext, ScanError, ScanSettings};
use super::{
    context::{legs_of, note_unknown_programs, record},
    rescan, staking,
};
use crate::{
    ledger::{self, TxView},
    payments::Scope,
    solana::RpcCost,
    store::{JobProgress, JobRecord, TransactionLegs},
};

/// How a scan ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every listed transaction is in the ledger.
    Completed,
    /// Some transactions could not be fetched or read (`missing`), the
    /// provider would not serve some epochs' staking rewards
    /// (`missing_epochs`), some stake accounts do not reconcile to the
    /// lamport (`unreconciled`), or the provider would not list the
    /// wallet's current stake accounts (`stake_listing_refused`).
    Partial {
        missing: i64,
        missing_epochs: Vec<u64>,
        unreconciled: Vec<staking::Unreconciled>,
        stake_listing_refused: bool,
    },
}

const TOKEN_PROGRAMS: [&str; 2] = [
    crate::ledger::tx::TOKEN_PROGRAM,
    crate::ledger::tx::TOKEN_2022_PROGRAM,
];

/// The addresses the job lists: the wallet, then (except for a preview)
/// its token accounts, since a token received into an associated token
/// account does not name the wallet, and its stake accounts (current ones
/// and those earlier scans found in its history), since a stake account's
/// own transactions need not name it. Fixed on the first run; stake
/// accounts found in the wallet's history are added once the wallet's own
/// signatures are listed ([`add_found_stake_accounts`]).
async fn sources(
    ctx: &ScanContext<'_>,
    job: &JobRecord,
    scope: Scope,
    cost: &RpcCost,
) -> Result<Vec<String>, ScanError> {
    if let Some(fixed) = job
        .sources
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok())
    {
        return Ok(fixed);
    }
    let mut sources = vec![job.address.clone()];
    if scope != Scope::Preview {
        for program in TOKEN_PROGRAMS {
            for account in ctx.rpc.token_accounts(&job.address, program, cost).await? {
                if !sources.contains(&account) {
                    sources.push(account);
                }
            }
        }
        for account in staking::current_accounts(ctx, &job.address, cost).await? {
            if !sources.contains(&account) {
                sources.push(account);
            }
        }
        for known in ctx.store.stake_accounts(&job.address).await? {
            if !sources.contains(&known.account) {
                sources.push(known.account);
            }
        }
    }
    fix_sources(ctx, job, &sources).await?;
    Ok(sources)
}

async fn fix_sources(
    ctx: &ScanContext<'_>,
    job: &JobRecord,
    sources: &[String],
) -> Result<(), ScanError> {
    let text = serde_json::to_string(&sources).unwrap_or_else(|_| "[]".to_owned());
    if !ctx.store.set_job_sources(&job.id, ctx.owner, &text).await? {
        return Err(ScanError::LeaseLost);
    }
    Ok(())
}

/// After the wallet's own signatures: list the stake accounts its history
/// showed too (closed or handed over ones are not found otherwise).
async fn add_found_stake_accounts(
    ctx: &ScanContext<'_>,
    job: &JobRecord,
    sources: &mut Vec<String>,
) -> Result<(), ScanError> {
    let before = sources.len();
    for known in ctx.store.stake_accounts(&job.address).await? {
        if !sources.contains(&known.account) {
            sources.push(known.account);
        }
    }
    if sources.len() > before {
        fix_sources(ctx, job, sources).await?;
    }
    Ok(())
}

/// Fetch a chunk of transactions, decode them for the wallet and write
/// their legs; count what could not be fetched or read.
async fn fetch_and_write(
    ctx: &ScanContext<'_>,
    job: &JobRecord,
    address: &str,
    chunk: &[String],
    cost: &RpcCost,
    progress: &mut JobProgress,
    scan_stake_accounts: bool,
) -> Result<(), ScanError> {
    let fetched = ctx.rpc.transactions(chunk, cost).await?;
    let mut views = Vec::with_capacity(chunk.len());
    let mut read = Vec::with_capacity(chunk.len());
    let mut kept = Vec::with_capacity(chunk.len());
    for (signature, tx) in chunk.iter().zip(&fetched) {
        match tx.as_ref().map(|tx| (tx, TxView::parse(tx))) {
            Some((tx, Ok(view))) => {
                // The compact view a later decoder derives the legs from
                // again (ledger::stored); one it cannot keep is fetched
                // again by that rescan.
                match ledger::stored::encode(tx) {
                    Ok(bytes) => kept.push((signature.as_str(), bytes)),
                    Err(error) => tracing::warn!(%signature, %error, "transaction view not kept"),
                }
                views.push(view);
                read.push(tx);
            }
            Some((_, Err(error))) => {
                tracing::warn!(%signature, %error, "transaction not readable; left out");
                progress.transactions_missing += 1;
            }
            None => {
                tracing::warn!(%signature, "transaction not available from RPC; left out");
                progress.transactions_missing += 1;
            }
        }
    }
    let mut known = Vec::new();
    if scan_stake_accounts {
        let pairs: Vec<(&serde_json::Value, &TxView)> = read.into_iter().zip(&views).collect();
        staking::note_history(ctx, address, &pairs).await?;
        known = ctx.store.stake_accounts(address).await?;
        staking::note_flows(ctx, address, &views, &known).await?;
    }
    let views_kept: Vec<(&str, &[u8])> = kept.iter().map(|(s, b)| (*s, b.as_slice())).collect();
    ctx.store.write_views(&views_kept).await?;
    let legs = legs_of(&views, address, &known);
    let batch: Vec<TransactionLegs<'_>> = views
        .iter()
        .zip(&legs)
        .map(|(v, legs)| TransactionLegs::new(v, legs))
        .collect();
    let written = ctx.store.write_legs(address, &batch).await?;
    note_unknown_programs(ctx, job, &views).await?;
    progress.transactions_fetched += views.len() as i64;
    progress.legs_written += i64::try_from(written).unwrap_or(i64::MAX);
    record(ctx, job, cost, progress).await
}

/// Run `job` until it ends, the lease is lost, or a stop is asked for.
pub async fn run(ctx: &ScanContext<'_>, job: &JobRecord) -> Result<Outcome, ScanError> {
    let scope = Scope::parse(&job.scope).ok_or_else(|| ScanError::BadScope(job.scope.clone()))?;
    let address = job.address.as_str();
    let cost = RpcCost::default();
    let mut progress = JobProgress {
        phase: "scanning".to_owned(),
        source_index: job.source_index,
        resume_before: job.resume_before.clone(),
        signatures_listed: job.signatures_listed,
        transactions_fetched: job.transactions_fetched,
        transactions_missing: job.transactions_missing,
        legs_written: job.legs_written,
        rpc_calls: job.rpc_calls,
        rpc_credits: job.rpc_credits,
    };
    let (page_size, one_page) = match scope {
        Scope::Preview => (ctx.settings.preview_signatures, true),
        _ => (ctx.settings.page_size, false),
    };
    record(ctx, job, &cost, &progress).await?;
    let staking = scope != Scope::Preview;
    // Every scan but a preview first derives again the legs an older
    // decoder read (docs/ledger.md, "Decoder versions").
    if scope != Scope::Preview {
        rescan::rederive(ctx, job, &cost, &mut progress).await?;
    }
    let mut sources = sources(ctx, job, scope, &cost).await?;
    let mut index = usize::try_from(job.source_index).unwrap_or(0);
    while let Some(source) = sources.get(index).cloned() {
        let source = source.as_str();
        // The wallet itself stops at the newest signature an earlier scan
        // holds (incremental); a token account has no such marker, so an
        // incremental scan stops at its first page that holds nothing new.
        let until = if index == 0 {
            job.stop_at.as_deref()
        } else {
            None
        };
        let stop_when_known = index > 0 && scope == Scope::Incremental;
        loop {
            if (ctx.should_stop)() {
                return Err(ScanError::Stopped);
            }
            let page = ctx
                .rpc
                .signatures(
                    source,
                    progress.resume_before.as_deref(),
                    until,
                    page_size,
                    &cost,
                )
                .await?;
            let signatures: Vec<String> = page.iter().map(|s| s.signature.clone()).collect();
            let known = ctx.store.known_signatures(address, &signatures).await?;
            let todo: Vec<String> = signatures
                .iter()
                .filter(|s| !known.contains(*s))
                .cloned()
                .collect();
            for chunk in todo.chunks(ctx.settings.fetch_batch.max(1)) {
                fetch_and_write(ctx, job, address, chunk, &cost, &mut progress, staking).await?;
            }
            progress.signatures_listed += page.len() as i64;
            progress.resume_before = page.last().map(|s| s.signature.clone());
            record(ctx, job, &cost, &progress).await?;
            if one_page || page.len() < page_size || (stop_when_known && todo.is_empty()) {
                break;
            }
        }
        if index == 0 && staking {
            add_found_stake_accounts(ctx, job, &mut sources).await?;
        }
        index += 1;
        progress.source_index = i32::try_from(index).unwrap_or(i32::MAX);
        progress.resume_before = None;
        record(ctx, job, &cost, &progress).await?;
    }
    // The spam rule over the whole stored history: a token the wallet
    // dealt in anywhere is never airdrop_spam (ledger::spam).
    let unmarked = ctx.store.unmark_spam(address).await?;
    if unmarked > 0 {
        tracing::info!(
            address,
            unmarked,
            "spam legs of tokens the wallet dealt in re-read"
        );
    }
    // Lending interest over the whole stored history: what a position
    // paid out beyond what went in (ledger::interest).
    let split = ctx.store.split_interest(address).await?;
    if split > 0 {
        tracing::info!(
            address,
            split,
            "lending withdrawals split into principal and interest"
        );
    }
    let (missing_epochs, unreconciled, stake_listing_refused) = if staking {
        let missing = staking::read_rewards(ctx, job, scope, &cost, &mut progress).await?;
        let unreconciled = staking::reconcile(ctx, address, &cost).await?;
        record(ctx, job, &cost, &progress).await?;
        let refused = staking::listing_refused(ctx, address).await?;
        (missing, unreconciled, refused)
    } else {
        (Vec::new(), Vec::new(), false)
    };
    Ok(
        if progress.transactions_missing > 0
            || !missing_epochs.is_empty()
            || !unreconciled.is_empty()
            || stake_listing_refused
        {
            Outcome::Partial {
                missing: progress.transactions_missing,
                missing_epochs,
                unreconciled,
                stake_listing_refused,
            }
        } else {
            Outcome::Completed
        },
    )
}
