//! The tools, each a thin adapter over a domain function. A tool's
//! `structuredContent` is exactly what its REST twin returns.

use schemars::JsonSchema;
use serde::Deserialize;

use super::registry::{Annotations, Registry, Tier, ToolDef, ToolMeta};
use crate::{
    accounts::api::{
        self as account_api, AddWalletArgs, AddressLabel, ListWalletsArgs, SetAddressLabelArgs,
        WalletView, Wallets,
    },
    analytics::{
        flows::{Flows, GetFlowsArgs},
        positions::{GetPositionsArgs, Positions},
        value_history::{GetValueHistoryArgs, ValueHistory},
    },
    auth::{self, PingResult},
    jobs::{self, GetJobArgs, JobView, ScanWalletArgs},
    payments::{self, Quote, QuoteWalletArgs},
    prices::api::{GetPriceHistoryArgs, GetPricesArgs, PriceHistory, PricesView},
    reads::ledger_page::{self, GetLedgerArgs, LedgerPage},
    routes,
};

/// Every tool this server offers.
/// Every tool, built once: the surfaces borrow it, nothing owns it.
pub fn registry() -> &'static Registry {
    static REGISTRY: std::sync::LazyLock<Registry> = std::sync::LazyLock::new(|| {
        Registry::new([
            ping(),
            quote_wallet(),
            scan_wallet(),
            get_job(),
            get_ledger(),
            get_prices(),
            get_price_history(),
            get_positions(),
            get_value_history(),
            get_flows(),
            super::report_tool::get_report(),
            list_wallets(),
            add_wallet(),
            set_address_label(),
            super::research::expand_graph(),
            super::research::find_first_funder(),
            create_snapshot(),
            revoke_snapshot(),
        ])
    });
    &REGISTRY
}

fn get_ledger() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "get_ledger",
            title: "Read a wallet's ledger",
            // The guide's text first and whole; what Ledger adds follows.
            description: "One page of a scanned wallet's ledger (every leg: transfers, swaps, fees, \
                rent, airdrops), newest first, with a next_cursor for the following page. Paid \
                cached read: covered by a receipt from the wallet's scan, by your account watching \
                the wallet, or by a payment against the challenge the tool returns as \
                payment_required (retry with payment set to the base64 X-PAYMENT and quote_id set \
                to the challenge's quoteId; the settled payment's receipt then covers later reads \
                of the wallet). Each entry has signature, slot, block_time, operation_type \
                (transfer_in, transfer_out, swap, network_fee, rent_deposit, rent_refund, airdrop, \
                airdrop_spam, stake_deposit, stake_withdraw, staking_reward, mev_reward), mint (\"sol\" for native SOL), amount (signed atomic units, as a \
                string), decimals, usd_value (its USD worth at its block time, a decimal string) \
                and priced (false when no price covers it). Filters: from/to (RFC 3339 or \
                YYYY-MM-DD, inclusive), mint, operation_type, exclude, min_usd_value (legs without \
                a price are kept only when it is absent); include_counterparties adds who paid or \
                was paid. A wallet never scanned is not_found: quote_wallet, scan_wallet, poll \
                get_job, then read. While the server runs with payments off, reads are free.",
            tier: Tier::PaidCachedRead,
            annotations: Annotations::READ,
            rest: Some(routes::LEDGER),
        },
        |page: &LedgerPage| {
            let more = match &page.next_cursor {
                Some(cursor) => format!("more follow: pass cursor {cursor}"),
                None => "this is the last page".to_owned(),
            };
            format!(
                "{} ledger entries for {}; {}.",
                page.entries.len(),
                page.address,
                more
            )
        },
        |ctx, args: GetLedgerArgs| async move {
            ledger_page::get_ledger(
                &ctx.state.reads(),
                &ctx.state.services().caches().pages,
                &ctx.principal,
                args,
                &ctx.presented,
            )
            .await
        },
    )
}

fn get_positions() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "get_positions",
            title: "A wallet's positions",
            description: "A scanned wallet's positions under a cost-basis method (fifo default; \
                lifo, hifo, average): open lots per mint, realized PnL summary, rent-locked SOL. \
                exclude_spam (default true) leaves airdrop dust out. Paid cached read, paid for \
                like get_ledger.",
            tier: Tier::PaidCachedRead,
            annotations: Annotations::READ_OPEN_WORLD,
            rest: Some(routes::POSITIONS),
        },
        |p: &Positions| {
            format!(
                "Positions of {} ({}): {} mints, {} open lots; realized gain {} USD over {} rows \
                 ({} incomplete); {} SOL rent-locked.{}",
                p.address,
                p.method,
                p.positions.len(),
                p.positions.iter().map(|x| x.lots.len()).sum::<usize>(),
                p.realized.gain,
                p.realized.rows,
                p.realized.incomplete_rows,
                p.rent_locked_sol,
                if p.accepted_for_us_filings {
                    ""
                } else {
                    " Average cost is not accepted for US filings of digital assets."
                }
            )
        },
        |ctx, args: GetPositionsArgs| async move {
            crate::analytics::positions::get_positions(
                &ctx.state.reads(),
                &ctx.state.services().caches().positions,
                &ctx.principal,
                args,
                &ctx.presented,
            )
            .await
        },
    )
}

fn get_value_history() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "get_value_history",
            title: "A wallet's value through time",
            description: "A scanned wallet's portfolio value at the close of every bucket in a \
                range, in USD and SOL, with the holdings behind each point. granularity 1d \
                (default) or 1h; from/to default to the last 90 days. Mints with no price series \
                are listed in unpriced_mints and left out of the value (coverage_pct says how much \
                of the ledger was priced); the last point may be valued at spot (estimated). Paid \
                cached read, paid for like get_ledger.",
            tier: Tier::PaidCachedRead,
            annotations: Annotations::READ_OPEN_WORLD,
            rest: Some(routes::VALUE_HISTORY),
        },
        |h: &ValueHistory| {
            let last = h.points.last().map(|p| {
                format!(
                    "; last {} USD{}{}",
                    p.usd,
                    p.sol
                        .as_ref()
                        .map(|s| format!(" ({s} SOL)"))
                        .unwrap_or_default(),
                    if p.estimated {
                        " at spot, estimated"
                    } else {
                        ""
                    }
                )
            });
            format!(
                "{} {} points of {} from {} to {}{}; {}% of the ledger priced{}.{}",
                h.points.len(),
                h.granularity,
                h.address,
                h.from,
                h.to,
                last.unwrap_or_default(),
                h.coverage_pct,
                if h.unpriced_mints.is_empty() {
                    String::new()
                } else {
                    format!("; {} mints unpriced", h.unpriced_mints.len())
                },
                match &h.backfill_job_id {
                    Some(job) =>
                        format!(" Prices are being backfilled by {job}; read again later."),
                    None => String::new(),
                }
            )
        },
        |ctx, args: GetValueHistoryArgs| async move {
            crate::analytics::value_history::get_value_history(
                &ctx.state.reads(),
                &ctx.principal,
                args,
                &ctx.presented,
            )
            .await
        },
    )
}

fn get_flows() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "get_flows",
            title: "A wallet's counterparty graph",
            description: "A scanned wallet's transfers aggregated by counterparty and mint as a \
                graph: nodes (the wallet, each counterparty named from your labels, your watchlist \
                as own_wallet, or the program registry; the rest external) and edges (source, \
                target, mint, amount, usd when priced, legs). top (default 10) counterparties per \
                direction are kept, the rest collapse into an other node. Optional from/to and \
                mint. Paid cached read, paid for like get_ledger.",
            tier: Tier::PaidCachedRead,
            annotations: Annotations::READ_OPEN_WORLD,
            rest: Some(routes::FLOWS),
        },
        |f: &Flows| {
            format!(
                "Flow graph of {}: {} counterparty nodes, {} edges.",
                f.address,
                f.nodes.len().saturating_sub(1),
                f.edges.len()
            )
        },
        |ctx, args: GetFlowsArgs| async move {
            crate::analytics::flows::get_flows(
                &ctx.state.reads(),
                &ctx.principal,
                args,
                &ctx.presented,
            )
            .await
        },
    )
}

fn get_prices() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "get_prices",
            title: "Current prices",
            // The guide's text first and whole; what Ledger adds follows.
            description: "Current USD prices. Free. mints is a list of token mints; empty or \
                omitted means native SOL. Each answer carries usd, change_24h_pct (when the source \
                knows it), source (coinbase, jupiter, stablecoin, or none when nothing prices the \
                mint) and at. Prices are cached briefly server-side; a report's \
                meta.sol_usd_at_generation is this SOL price. source is unavailable when the \
                mint's price source did not answer: try again later.",
            tier: Tier::Free,
            annotations: Annotations::READ_OPEN_WORLD,
            rest: Some(routes::PRICES),
        },
        |view: &PricesView| {
            let parts: Vec<String> = view
                .prices
                .iter()
                .map(|p| match &p.usd {
                    Some(usd) => format!("{} {usd} USD ({})", p.mint, p.source.as_str()),
                    None => format!("{} unpriced", p.mint),
                })
                .collect();
            format!("Prices: {}.", parts.join("; "))
        },
        |ctx, args: GetPricesArgs| async move {
            crate::prices::api::get_prices(&ctx.state.price_query(), args).await
        },
    )
}

fn get_price_history() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "get_price_history",
            title: "Price history",
            description: "USD price series of a mint. Free. mint empty or \"sol\" is native SOL; \
                granularity 1d (default) or 1h; from/to default to the last 30 days. Returns points \
                as [unix seconds, usd] pairs, oldest first, with coverage. Only mints with a \
                configured price source are served (SOL out of the box, stablecoins flat at $1); \
                others are not_found. A large gap is filled by a background job: complete is false, \
                backfill_job_id names it, read again later.",
            tier: Tier::Free,
            annotations: Annotations::READ_OPEN_WORLD,
            rest: Some(routes::PRICE_HISTORY),
        },
        |h: &PriceHistory| {
            let tail = match &h.backfill_job_id {
                Some(job) => {
                    format!(" Incomplete: backfill job {job} is filling the gap; read again later.")
                }
                None => String::new(),
            };
            format!(
                "{} {} closes of {} from {} to {} ({}% of buckets priced, source {}).{}",
                h.points.len(),
                h.granularity,
                h.mint,
                h.from,
                h.to,
                h.coverage.pct,
                h.source.as_str(),
                tail
            )
        },
        |ctx, args: GetPriceHistoryArgs| async move {
            crate::prices::api::get_price_history(&ctx.state.price_query(), args).await
        },
    )
}

fn job_summary(job: &JobView) -> String {
    let p = &job.progress;
    format!(
        "Job {} ({} scan of {}): {}; {} signatures listed, {} transactions fetched, {} legs written{}{}.{}",
        job.job_id,
        job.scope,
        job.address,
        job.status,
        p.signatures_listed,
        p.transactions_fetched,
        p.legs_written,
        if p.transactions_missing > 0 {
            format!(", {} missing", p.transactions_missing)
        } else {
            String::new()
        },
        if job.unknown_programs.is_empty() {
            String::new()
        } else {
            format!(
                "; {} unknown programs read from balance changes only (unknown_programs)",
                job.unknown_programs.len()
            )
        },
        if job.status == "running" {
            format!(
                " Poll get_job job_id={} until the status leaves running.",
                job.job_id
            )
        } else {
            String::new()
        }
    )
}

fn scan_wallet() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "scan_wallet",
            title: "Scan a wallet",
            // The guide's text first and whole; what Ledger adds follows.
            description: "Start the scan a quote_wallet quote priced. Paid: without an \
                entitlement the tool fails with code payment_required and an x402 challenge in \
                structuredContent.x402 — retry with payment set to the base64 X-PAYMENT built for \
                that challenge (an X-PAYMENT header on the MCP POST works too), or pass the \
                receipt of an earlier payment for this wallet and scope. A settled payment is \
                reported in structuredContent.payment with the receipt to reuse. Returns the \
                running job; poll get_job. The quote fixes the wallet and the scope, so an \
                incremental quote starts an incremental scan. Reads of the wallet are covered by \
                the scan's receipt while it lives. job_already_running names the scan already running for the wallet; \
                quote_not_found and quote_expired mean: quote it again. While the server runs \
                with payments off, scans are free.",
            tier: Tier::Paid,
            annotations: Annotations::CREATE_FROM_CHAIN,
            rest: Some(routes::SCANS),
        },
        job_summary,
        |ctx, args: ScanWalletArgs| async move {
            jobs::start_scan(&ctx.state.paywall(), &ctx.principal, args, &ctx.presented).await
        },
    )
}

fn get_job() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "get_job",
            title: "Read a scan job",
            description: "Read a scan job by id: status (running, completed, partial, failed, \
                cancelled), progress, RPC cost, and the quote it was bought against. Free, but \
                scoped: the job's own account, an admin key, or the receipt of the payment the \
                scan was started on (the receipt argument); anything else is not_found.",
            tier: Tier::Free,
            annotations: Annotations::READ,
            rest: Some(routes::JOB),
        },
        job_summary,
        |ctx, args: GetJobArgs| async move {
            jobs::get_job(&ctx.state.paywall(), &ctx.principal, args, &ctx.presented).await
        },
    )
}

fn quote_wallet() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "quote_wallet",
            title: "Quote a wallet scan",
            // The guide's text first and whole; what Ledger adds follows.
            description: "Price a scan of a Solana wallet. Free. Returns the quote (quote_id, tier, \
                price_usd, amount_atomic, expires_at) and the tier table. scope is \"full\" (whole \
                history, default), \"preview\" (the most recent signatures only), \"incremental\" \
                (only what is new since the last scan — the cheap way to keep an already-scanned \
                wallet current, and near-free for a wallet that has not moved), \"refresh\" \
                (re-lists the whole history and fetches only what is missing) or \"read\" (what a \
                cached read of an already-scanned wallet costs). A quote expires; scan_wallet \
                needs a live one. A quote fixes the wallet, the scope and the price for fifteen \
                minutes.",
            tier: Tier::Free,
            annotations: Annotations::CREATE_FROM_CHAIN,
            rest: Some(routes::QUOTES),
        },
        |q: &Quote| {
            let size = q
                .signatures
                .map(|s| {
                    format!(
                        ", {}{} signatures counted",
                        s.counted,
                        if s.complete { "" } else { "+" }
                    )
                })
                .unwrap_or_default();
            // A read quote is paid on the read itself; scan_wallet refuses it.
            let next = if q.scope == payments::Scope::Read {
                format!(
                    "Pay it on the read: call get_ledger (or get_positions, get_value_history, \
                     get_flows, get_report) for this wallet with quote_id={} and payment set to \
                     the X-PAYMENT built for it; the receipt then covers later reads",
                    q.quote_id
                )
            } else {
                format!("Start it with scan_wallet quote_id={}", q.quote_id)
            };
            let what = if q.scope == payments::Scope::Read {
                "cached read".to_owned()
            } else {
                format!("{} scan", q.scope.as_str())
            };
            // Said only when the scan derives stored legs again.
            let rederive = q
                .rederive
                .map(|r| {
                    format!(
                        " It derives again the legs of {} transactions an older decoder read: \
                         {} from stored views, {} fetched again ({} getTransaction requests).",
                        r.transactions, r.from_stored_views, r.refetched, r.rpc_credits
                    )
                })
                .unwrap_or_default();
            format!(
                "Quote {} for a {what} of {}: tier {}, {} USD ({} atomic USDC){}; expires {}.{rederive} \
                 {next}.",
                q.quote_id,
                q.address.short(),
                q.tier,
                q.price_usd,
                q.amount_atomic,
                size,
                q.expires_at,
            )
        },
        |ctx, args: QuoteWalletArgs| async move { payments::quote(&ctx.state.paywall(), args).await },
    )
}

fn list_wallets() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "list_wallets",
            title: "Your watched wallets",
            description: "The wallets your account watches, with each one's last scan and ledger \
                size. Free; needs an account (an mcp or api key), not anonymous.",
            tier: Tier::FreeAccountOnly,
            annotations: Annotations::READ,
            rest: Some(routes::WALLETS_LIST),
        },
        |w: &Wallets| match w.wallets.len() {
            0 => "Your account watches no wallet yet: add one with add_wallet.".to_owned(),
            n => format!(
                "Your account watches {n} wallet{}: {}.",
                if n == 1 { "" } else { "s" },
                w.wallets
                    .iter()
                    .map(|x| {
                        let scan = x
                            .last_scan
                            .as_ref()
                            .map_or("never scanned".to_owned(), |s| format!("scan {}", s.status));
                        format!("{} ({scan}, {} legs)", x.address, x.ledger_legs)
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        },
        |ctx, _args: ListWalletsArgs| async move {
            account_api::list_wallets(ctx.state.store(), &ctx.principal).await
        },
    )
}

fn add_wallet() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "add_wallet",
            title: "Watch a wallet",
            description: "Watch a wallet from your account, with an optional label. Watching \
                unlocks free reads of the wallet's ledger, positions and reports for your account \
                (owner reads). Free; needs an account.",
            tier: Tier::FreeAccountOnly,
            annotations: Annotations::WRITE_OWN,
            rest: Some(routes::WALLETS_ADD),
        },
        |w: &WalletView| {
            let scan = match &w.last_scan {
                Some(s) => format!("its last scan is {} ({} legs)", s.status, w.ledger_legs),
                None => "it was never scanned: quote_wallet, then scan_wallet".to_owned(),
            };
            format!("Your account now watches {}; {scan}.", w.address)
        },
        |ctx, args: AddWalletArgs| async move {
            account_api::add_wallet(ctx.state.store(), ctx.state.now_ms(), &ctx.principal, args)
                .await
        },
    )
}

fn set_address_label() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "set_address_label",
            title: "Name an address",
            description: "Name a counterparty address in your own reports: get_flows and the flow \
                graph show your label and category on that node from then on. category is one of \
                the server's address categories (exchange, own_wallet, external, …; default \
                external), label at most 64 characters, and an empty label removes the name \
                again. The label is your account's alone — no other account sees it, and the \
                wallet's shared chain data is untouched. Free; needs an account.",
            tier: Tier::FreeAccountOnly,
            annotations: Annotations::WRITE_OWN,
            rest: Some(routes::LABELS),
        },
        |l: &AddressLabel| {
            if l.removed {
                format!("{} has no label of yours any more.", l.address)
            } else {
                format!(
                    "{} is now {:?} ({}) in your reports.",
                    l.address, l.label, l.category
                )
            }
        },
        |ctx, args: SetAddressLabelArgs| async move {
            account_api::set_address_label(
                ctx.state.store(),
                ctx.state.now_ms(),
                &ctx.principal,
                args,
                ctx.state.config().quota.labels_per_account,
            )
            .await
        },
    )
}

fn create_snapshot() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "create_snapshot",
            title: "Share a wallet's report",
            description: "Mint a public, read-only share link (/s/{token}) to a wallet's report: \
                value chart, allocation, flows, ledger, positions. Your account must be able to \
                read the wallet now (it watches it, or a receipt/payment covers the read); the link \
                never grants more than that and only reads. Optional range (30d|90d|1y|all) and \
                denominate (usd|sol) set the view it opens on. Links expire after the configured \
                TTL unless revoked. Free; needs an account.",
            tier: Tier::FreeAccountOnly,
            annotations: Annotations::WRITE_OWN,
            rest: Some(routes::SNAPSHOTS_CREATE),
        },
        |s: &crate::share::SnapshotView| {
            format!(
                "Share link for {} ({}, {}): {}; it expires {}. Anyone with the link reads this \
                 wallet's report, nothing more; revoke_snapshot with its token ends it.",
                s.address,
                s.range,
                s.denominate,
                s.url.as_deref().unwrap_or(""),
                s.expires_at
            )
        },
        |ctx, args: crate::share::CreateSnapshotArgs| async move {
            crate::share::create_snapshot(
                &ctx.state.sharing(),
                &ctx.principal,
                args,
                &ctx.presented,
            )
            .await
        },
    )
}

fn revoke_snapshot() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "revoke_snapshot",
            title: "Revoke a share link",
            description: "Revoke one of your share links by token; the page, its reads and its \
                card answer not_found from then on. Free; needs an account.",
            tier: Tier::FreeAccountOnly,
            annotations: Annotations::WRITE_OWN,
            rest: Some(routes::SNAPSHOTS_REVOKE),
        },
        |r: &crate::share::RevokedSnapshot| {
            format!(
                "Share link {} of {} is revoked: its page, reads and card answer not_found now.",
                r.id, r.address
            )
        },
        |ctx, args: crate::share::RevokeSnapshotArgs| async move {
            crate::share::revoke_snapshot(&ctx.state.sharing(), &ctx.principal, args).await
        },
    )
}

/// `ping` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PingArgs {}

fn ping() -> ToolDef {
    ToolDef::new(
        ToolMeta {
            name: "ping",
            title: "Ping",
            description: "Answers ok with the principal this session's credential resolves to. Free.",
            tier: Tier::Free,
            annotations: Annotations::READ,
            rest: Some(routes::PING),
        },
        |out: &PingResult| {
            let who = match &out.principal {
                crate::accounts::PrincipalView::Anonymous => {
                    "connected anonymously (no bearer token)".to_owned()
                }
                crate::accounts::PrincipalView::Account {
                    account_id,
                    credential,
                    scopes,
                } => format!(
                    "connected as account {account_id} with {} (scopes: {})",
                    match credential {
                        crate::accounts::CredentialView::McpToken => "an MCP token",
                        crate::accounts::CredentialView::ApiKey => "an API key",
                    },
                    scopes.join(", ")
                ),
                crate::accounts::PrincipalView::Admin => "connected with the admin key".to_owned(),
            };
            format!("ok: {who}; {}.", out.payments.sentence())
        },
        |ctx, _args: PingArgs| async move { Ok(auth::ping(&ctx.principal, ctx.state.payments_view())) },
    )
}
