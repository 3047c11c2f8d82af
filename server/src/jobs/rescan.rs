//! Deriving a wallet's stored legs again with the current decoder
//! (docs/ledger.md, "Decoder versions"). Every transaction of a wallet's
//! ledger records the decoder version that read it; a scan (any but a
//! preview) first takes those read by an older version, a batch at a time,
//! reads each from its stored view (`ledger::stored`, no RPC request) or,
//! where none was kept, fetches it again (and keeps its view), and replaces
//! its legs in one database transaction with the new version
//! (`Store::replace_legs`): a transaction has its old legs until its new
//! ones are written, so a rescan that stops half way loses nothing and the
//! next run goes on from what is still old. Progress is counted in the
//! job's existing counters: `transactions_fetched` (read again, from a view
//! or the provider), `transactions_missing` (could not be fetched or read:
//! its old legs stay) and `legs_written`.

use super::context::{ScanContext, ScanError, legs_of, note_unknown_programs, record};
use crate::{
    ledger::{DECODER_VERSION, TxView, protocols::stake, stored},
    solana::RpcCost,
    store::{JobProgress, JobRecord, StakeAccountSeen, TransactionLegs},
};

/// Note the stake accounts the wallet received among its stale
/// transactions, from their stored views, before any leg is derived again:
/// a wallet scanned before receipts were read (decoder 1) then has each
/// received account's window (`StakeAccountRow::owned_at`) when its legs,
/// the former owner's transactions among them, are read again. A transaction with no readable view is read
/// by the scan's own pass when fetched again.
async fn note_receipts(
    ctx: &ScanContext<'_>,
    address: &str,
    batch_size: i64,
) -> Result<(), ScanError> {
    let mut after: Option<String> = None;
    loop {
        let page = ctx
            .store
            .stale_transactions(address, DECODER_VERSION, after.as_deref(), batch_size)
            .await?;
        let Some(last) = page.last() else {
            break;
        };
        after = Some(last.signature.clone());
        for view in page
            .iter()
            .filter_map(|t| t.view.as_deref().and_then(|v| stored::decode(v).ok()))
        {
            for account in stake::received_stake_accounts(&view, address) {
                ctx.store
                    .note_stake_account(
                        address,
                        &StakeAccountSeen {
                            account: &account,
                            first_slot: Some(view.slot),
                            acquired_slot: Some(view.slot),
                            ..StakeAccountSeen::default()
                        },
                    )
                    .await?;
            }
        }
    }
    Ok(())
}

/// Derive again every transaction of the job's wallet that an older
/// decoder read.
pub(super) async fn rederive(
    ctx: &ScanContext<'_>,
    job: &JobRecord,
    cost: &RpcCost,
    progress: &mut JobProgress,
) -> Result<(), ScanError> {
    let address = job.address.as_str();
    let batch_size = i64::try_from(ctx.settings.fetch_batch.max(1)).unwrap_or(50);
    // What those accounts earned and moved before they were the wallet's
    // goes at the scan's reconciliation (`staking::reconcile`); their
    // transactions' legs are derived again below.
    note_receipts(ctx, address, batch_size).await?;
    let mut after: Option<String> = None;
    let mut total = 0usize;
    loop {
        if (ctx.should_stop)() {
            return Err(ScanError::Stopped);
        }
        let page = ctx
            .store
            .stale_transactions(address, DECODER_VERSION, after.as_deref(), batch_size)
            .await?;
        let Some(last) = page.last() else {
            break;
        };
        after = Some(last.signature.clone());
        let mut views: Vec<TxView> = Vec::with_capacity(page.len());
        let mut refetch: Vec<String> = Vec::new();
        for stale in page {
            match stale.view.as_deref().map(stored::decode) {
                Some(Ok(view)) => views.push(view),
                Some(Err(error)) => {
                    tracing::warn!(signature = %stale.signature, %error, "stored view not readable; fetching again");
                    refetch.push(stale.signature);
                }
                None => refetch.push(stale.signature),
            }
        }
        if !refetch.is_empty() {
            let fetched = ctx.rpc.transactions(&refetch, cost).await?;
            let mut kept: Vec<(&str, Vec<u8>)> = Vec::with_capacity(refetch.len());
            for (signature, tx) in refetch.iter().zip(&fetched) {
                match tx.as_ref().map(|tx| (tx, TxView::parse(tx))) {
                    Some((tx, Ok(view))) => {
                        if let Ok(bytes) = stored::encode(tx) {
                            kept.push((signature.as_str(), bytes));
                        }
                        views.push(view);
                    }
                    Some((_, Err(error))) => {
                        tracing::warn!(%signature, %error, "transaction not readable; its old legs stay");
                        progress.transactions_missing += 1;
                    }
                    None => {
                        tracing::warn!(%signature, "transaction not available from RPC; its old legs stay");
                        progress.transactions_missing += 1;
                    }
                }
            }
            let kept: Vec<(&str, &[u8])> = kept.iter().map(|(s, b)| (*s, b.as_slice())).collect();
            ctx.store.write_views(&kept).await?;
        }
        let known = ctx.store.stake_accounts(address).await?;
        let legs = legs_of(&views, address, &known);
        let batch: Vec<TransactionLegs<'_>> = views
            .iter()
            .zip(&legs)
            .map(|(v, legs)| TransactionLegs::new(v, legs))
            .collect();
        let written = ctx
            .store
            .replace_legs(address, &batch, DECODER_VERSION)
            .await?;
        note_unknown_programs(ctx, job, &views).await?;
        total += views.len();
        progress.transactions_fetched += views.len() as i64;
        progress.legs_written += i64::try_from(written).unwrap_or(i64::MAX);
        record(ctx, job, cost, progress).await?;
    }
    if total > 0 {
        tracing::info!(
            address,
            transactions = total,
            version = DECODER_VERSION,
            "legs derived again with the current decoder"
        );
    }
    Ok(())
}
