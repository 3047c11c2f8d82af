//! `get_ledger`: one page of a scanned wallet's legs, newest first, with
//! filters and an opaque cursor bound to the wallet and the filters. A paid
//! read, so it sits beside the paid-read prelude (`reads`) and above the
//! ledger it reads (`ledger::{model, cursor}`), which knows no paywall.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
};

use bytes::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ReadKind, Reads};
use crate::{
    accounts::Principal,
    error::AppError,
    ledger::{
        cursor::{self, Position},
        model::{Counterparty, OperationType, SOL},
    },
    payments::{PayArgs, PaymentBlock, Presented},
    prices::valuation::Valuer,
    solana::WalletAddress,
    store::{LedgerQuery, LegRow},
    telemetry::CacheStats,
    values::{KeptJson, TimeBound, rfc3339, time::optional_bound},
};

/// The paywall names this read so.
const READ: ReadKind = ReadKind {
    route: crate::routes::LEDGER,
    tool: "get_ledger",
};

pub const DEFAULT_LIMIT: u32 = 100;
pub const MAX_LIMIT: u32 = 1000;

/// The arguments of `get_ledger`; the REST route takes the same as query
/// parameters (`exclude` comma-separated).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct GetLedgerArgs {
    /// The wallet's base58 public key.
    pub address: WalletAddress,
    /// next_cursor from the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Operation types to leave out, e.g. ["airdrop_spam"].
    #[serde(default)]
    #[schemars(with = "Option<Vec<crate::params::Operation>>")]
    pub exclude: Option<Vec<String>>,
    /// Inclusive lower bound on block time: RFC 3339 or YYYY-MM-DD.
    #[serde(default, deserialize_with = "optional_bound")]
    pub from: Option<TimeBound>,
    /// Add each leg's counterparties: who paid the wallet or was paid by it
    /// (address, direction in|out, kind wallet|program|token_account).
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub include_counterparties: Option<bool>,
    /// Page size, 1..1000; default 100.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000), extend("default" = 100))]
    pub limit: Option<u32>,
    /// Leave out legs worth less than this many USD.
    #[serde(default)]
    pub min_usd_value: Option<crate::params::MinUsd>,
    /// Keep only legs in this mint ("sol" for native SOL).
    #[serde(default)]
    #[schemars(with = "Option<crate::params::Mint>")]
    pub mint: Option<String>,
    /// Keep only this operation type.
    #[serde(default)]
    #[schemars(with = "Option<crate::params::Operation>")]
    pub operation_type: Option<String>,
    #[serde(flatten)]
    pub pay: PayArgs,
    /// Inclusive upper bound on block time: RFC 3339 or YYYY-MM-DD.
    #[serde(default, deserialize_with = "optional_bound")]
    pub to: Option<TimeBound>,
}

/// One leg as the ledger shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Entry {
    pub signature: String,
    pub slot: u64,
    /// RFC 3339, when the node knows the block time.
    pub block_time: Option<String>,
    /// Position of the leg within its transaction.
    pub index: u32,
    pub operation_type: String,
    /// A mint address, or "sol" for native SOL.
    pub mint: String,
    /// Signed amount in atomic units, as a string: positive into the wallet.
    pub amount: String,
    pub decimals: u8,
    /// USD value at the block time, signed like amount, as a decimal
    /// string: the hour's close, else the day's (docs/prices.md); null when
    /// unpriced.
    pub usd_value: Option<String>,
    /// False when no price series covers the leg's mint at its time.
    pub priced: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterparties: Option<Vec<Counterparty>>,
    /// The program account that holds the asset for the wallet (a limit
    /// order or DCA account) when the leg moves into, out of or from within
    /// such a position; absent otherwise (docs/ledger.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// For a swap: the pools and order books it went through, by name
    /// (docs/ledger.md, program registry); absent when none is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub venue: Option<String>,
    /// For a swap: the aggregator or order program that routed it, by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub router: Option<String>,
}

/// A page of the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LedgerPage {
    pub address: String,
    pub entries: Vec<Entry>,
    /// Pass as cursor for the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// The payment this call settled (or replayed), with its receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<PaymentBlock>,
}

fn invalid(message: impl Into<String>) -> AppError {
    AppError::invalid_params(message)
}

fn operation(text: &str) -> Result<String, AppError> {
    OperationType::parse(text.trim())
        .map(|op| op.as_str().to_owned())
        .ok_or_else(|| {
            invalid(format!(
                "unknown operation type {text:?}; one of {}",
                OperationType::ALL.map(OperationType::as_str).join(", ")
            ))
        })
}

/// A row's USD value under `valuer`.
fn row_value(valuer: &Valuer, row: &LegRow) -> Option<rust_decimal::Decimal> {
    let amount: i128 = row.amount.parse().ok()?;
    valuer.value(
        &row.mint,
        amount,
        u32::try_from(row.decimals).unwrap_or(0),
        row.block_time,
    )
}

/// What a valuer for `rows` must cover: their mints and block-time span.
fn valued_by(rows: &[LegRow]) -> (Vec<String>, Option<(i64, i64)>) {
    let times = rows.iter().filter_map(|r| r.block_time);
    let span = times.clone().min().zip(times.max());
    let mut mints: Vec<String> = rows.iter().map(|r| r.mint.clone()).collect();
    mints.sort();
    mints.dedup();
    (mints, span)
}

fn entry(row: LegRow, usd: Option<rust_decimal::Decimal>, with_counterparties: bool) -> Entry {
    Entry {
        usd_value: usd.map(|u| u.to_string()),
        priced: usd.is_some(),
        signature: row.signature,
        slot: u64::try_from(row.slot).unwrap_or(0),
        block_time: row.block_time.map(|t| rfc3339(t.saturating_mul(1000))),
        index: u32::try_from(row.leg_index).unwrap_or(0),
        operation_type: row.operation_type,
        mint: row.mint,
        amount: row.amount,
        decimals: u8::try_from(row.decimals).unwrap_or(0),
        counterparties: with_counterparties
            .then(|| serde_json::from_str(&row.counterparties).unwrap_or_default()),
        position: row.position,
        venue: row.venue,
        router: row.router,
    }
}

/// `get_ledger` for the MCP tool (and the share page).
pub async fn get_ledger(
    reads: &Reads<'_>,
    pages: &PageCache,
    principal: &Principal,
    args: GetLedgerArgs,
    presented: &Presented,
) -> Result<LedgerPage, AppError> {
    let (kept, payment) = kept_page(reads, pages, principal, args, presented).await?;
    let mut page = kept.page.clone();
    page.payment = payment;
    Ok(page)
}

/// `get_ledger` for the REST route: the page serialised, with the payment
/// block when the call settled one (also returned, for the headers).
pub async fn get_ledger_json(
    reads: &Reads<'_>,
    pages: &PageCache,
    principal: &Principal,
    args: GetLedgerArgs,
    presented: &Presented,
) -> Result<(Arc<KeptJson>, Option<PaymentBlock>), AppError> {
    let (kept, payment) = kept_page(reads, pages, principal, args, presented).await?;
    let body = crate::payments::x402::kept_answer(&kept.json, payment.as_ref())?;
    Ok((body, payment))
}

/// A page as made, with what it was made from: the ledger version, and the
/// mints and time span its valuer covered with that valuer's fingerprint.
struct KeptPage {
    version: i64,
    mints: Vec<String>,
    span: Option<(i64, i64)>,
    fingerprint: u64,
    /// The page without a payment block, and the same serialised.
    page: LedgerPage,
    json: Arc<KeptJson>,
}

/// Which page: the wallet, the filters' digest, where it starts, its size
/// and whether it carries counterparties.
type PageKey = (String, String, Option<(i64, String, i32)>, u32, bool);

/// At most this many bytes of pages are kept (as [`PageCache::charge`]
/// counts them); past it the cache starts over.
const MAX_KEPT_BYTES: usize = 32 << 20;
/// At most this many pages are kept.
const MAX_KEPT_PAGES: usize = 4096;

/// Pages kept (`Caches::pages`) by [`PageKey`]. A page is
/// served again only while its wallet's ledger version and its valuer's
/// fingerprint are those it was made with, so a kept page is exactly the
/// page a new query would make. Pages filtered by `min_usd_value` are not
/// kept (they may read several batches, each with its own valuer).
#[derive(Default)]
pub struct PageCache(Mutex<KeptPages>, CacheStats);

#[derive(Default)]
struct KeptPages {
    pages: HashMap<PageKey, Arc<KeptPage>>,
    bytes: usize,
}

impl PageCache {
    /// Pages served from here, and pages made.
    pub fn stats(&self) -> &CacheStats {
        &self.1
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, KeptPages> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, key: &PageKey) -> Option<Arc<KeptPage>> {
        self.lock().pages.get(key).cloned()
    }

    /// What a kept page is charged: its JSON, about as much again for the
    /// page it was serialised from, and room for its gzip.
    fn charge(page: &KeptPage) -> usize {
        page.json.json().len().saturating_mul(3)
    }

    fn keep(&self, key: PageKey, page: Arc<KeptPage>) {
        let size = Self::charge(&page);
        if size > MAX_KEPT_BYTES {
            return;
        }
        let mut kept = self.lock();
        // A slower call that read an older version must not replace a
        // newer page.
        if kept
            .pages
            .get(&key)
            .is_some_and(|k| k.version > page.version)
        {
            return;
        }
        if let Some(old) = kept.pages.remove(&key) {
            kept.bytes -= Self::charge(&old);
        }
        if kept.bytes + size > MAX_KEPT_BYTES || kept.pages.len() >= MAX_KEPT_PAGES {
            kept.pages.clear();
            kept.bytes = 0;
        }
        kept.bytes += size;
        kept.pages.insert(key, page);
    }
}

/// Check every argument, pass the paywall, then answer the kept page when
/// it is still exact, else read it (and keep it).
async fn kept_page(
    reads: &Reads<'_>,
    cache: &PageCache,
    principal: &Principal,
    args: GetLedgerArgs,
    presented: &Presented,
) -> Result<(Arc<KeptPage>, Option<PaymentBlock>), AppError> {
    let address = args.address;
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(invalid(format!(
            "limit: must be an integer from 1 to {MAX_LIMIT}"
        )));
    }
    let (from, to) =
        crate::values::time::range(args.from.as_ref(), args.to.as_ref()).map_err(invalid)?;
    let mint = match args.mint.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(m) if m.eq_ignore_ascii_case(SOL) => Some(SOL.to_owned()),
        Some(m) => Some(
            WalletAddress::parse(m)
                .map_err(|why| invalid(format!("mint: {why}")))?
                .to_string(),
        ),
    };
    let operation_type = args.operation_type.as_deref().map(operation).transpose()?;
    let mut exclude = args
        .exclude
        .unwrap_or_default()
        .iter()
        .map(|op| operation(op))
        .collect::<Result<Vec<_>, _>>()?;
    exclude.sort();
    exclude.dedup();

    let min_usd = args.min_usd_value.map(|u| u.to_string());
    let (from_s, to_s) = (from.map(|f| f.to_string()), to.map(|t| t.to_string()));
    let excluded = exclude.join(",");
    let digest = cursor::query_digest(&[
        address.as_str(),
        from_s.as_deref().unwrap_or(""),
        to_s.as_deref().unwrap_or(""),
        mint.as_deref().unwrap_or(""),
        operation_type.as_deref().unwrap_or(""),
        &excluded,
        min_usd.as_deref().unwrap_or(""),
    ]);
    let secret = reads.store().server_secret("ledger-cursor").await?;
    let after = match args.cursor.as_deref().filter(|c| !c.trim().is_empty()) {
        None => None,
        Some(c) => {
            let p = cursor::decode(secret.as_bytes(), &digest, c).ok_or_else(|| {
                invalid(
                    "cursor is not valid for this query: it was altered, or belongs to another \
                     wallet or other filters; start again without it",
                )
            })?;
            Some((p.slot, p.signature, p.index))
        }
    };
    // Every argument is checked; only now may the call be paid for.
    let payment = reads
        .authorize(principal, &address, &args.pay, presented, READ)
        .await?;
    let with_counterparties = args.include_counterparties.unwrap_or(false);
    let floor = args.min_usd_value.map(crate::params::MinUsd::decimal);
    let store = reads.store();
    let key: PageKey = (
        address.to_string(),
        digest.clone(),
        after.clone(),
        limit,
        with_counterparties,
    );
    // Read before the legs: legs written after this bump it, so a page kept
    // under it holds what that version held.
    let version = match floor {
        None => Some(store.ledger_version(address.as_str()).await?),
        Some(_) => None,
    };
    if let Some(version) = version
        && let Some(kept) = cache.get(&key).filter(|k| k.version == version)
    {
        let valuer = reads.valuer(kept.mints.clone(), kept.span).await?;
        if valuer.fingerprint() == kept.fingerprint {
            cache.stats().hit();
            return Ok((kept, payment));
        }
    }
    cache.stats().miss();
    let mut query = LedgerQuery {
        wallet: address.to_string(),
        from,
        to,
        mint,
        operation_type,
        exclude,
        priced_only: floor.is_some(),
        after,
        limit: limit + 1,
    };
    // Values come from the price series, not the table, so a USD floor is
    // applied here: read batches until a page's worth clears it.
    let mut rows: Vec<(LegRow, Option<rust_decimal::Decimal>)> = Vec::new();
    let (mints, span, fingerprint) = loop {
        let batch = reads.store().ledger_page(&query).await?;
        let exhausted = batch.len() < query.limit as usize;
        let (mints, span) = valued_by(&batch);
        let valuer = reads.valuer(mints.clone(), span).await?;
        let fingerprint = valuer.fingerprint();
        if let Some(last) = batch.last() {
            query.after = Some((last.slot, last.signature.clone(), last.leg_index));
        }
        for row in batch {
            let usd = row_value(&valuer, &row);
            let keep = match floor {
                None => true,
                Some(floor) => usd.is_some_and(|u| u.abs() >= floor),
            };
            if keep && rows.len() <= limit as usize {
                rows.push((row, usd));
            }
        }
        if floor.is_none() || exhausted || rows.len() > limit as usize {
            break (mints, span, fingerprint);
        }
    };
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next_cursor = match (more, rows.last().map(|(r, _)| r)) {
        (true, Some(last)) => Some(cursor::encode(
            secret.as_bytes(),
            &digest,
            Position {
                slot: last.slot,
                signature: last.signature.clone(),
                index: last.leg_index,
            },
        )),
        _ => None,
    };
    let page = LedgerPage {
        address: address.to_string(),
        entries: rows
            .into_iter()
            .map(|(r, usd)| entry(r, usd, with_counterparties))
            .collect(),
        next_cursor,
        payment: None,
    };
    let json = Arc::new(KeptJson::new(Bytes::from(
        serde_json::to_vec(&page).map_err(|e| AppError::internal("serialising a page", e))?,
    )));
    let kept = Arc::new(KeptPage {
        version: version.unwrap_or(-1),
        mints,
        span,
        fingerprint,
        page,
        json,
    });
    if version.is_some() {
        cache.keep(key, kept.clone());
    }
    Ok((kept, payment))
}
