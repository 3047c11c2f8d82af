//! `quote_wallet`: price a scan (or a cached read) of a wallet. A quote
//! fixes the wallet, the scope and the price for `pricing.quote_ttl_secs`;
//! `scan_wallet` and the paywall accept nothing else.
//!
//! The size of a wallet is estimated by counting its signatures page by
//! page (1000 a page), up to `pricing.estimate_max_pages` pages; a wallet
//! with more is priced at the tier beyond what was counted.

use serde::{Deserialize, Serialize};

use super::UnknownText;
use crate::values::{Usd, rfc3339};
use crate::{
    config::{PriceTier, PricingConfig},
    ids,
    solana::{RpcClient, RpcCost, RpcError, WalletAddress},
    store::{PaymentRecord, QuoteRecord, Store, StoreError},
};

// The same words on the wire (`quote_wallet`) and in the `quotes.scope`
// and `payments.scope` columns. A top-up's scope is never asked for by
// `quote_wallet`: `POST /v1/credits` makes that quote itself, so the
// variant is neither read from a caller nor listed in the schemas. (The
// doc line below is the schemas' description.)
/// What a quote prices.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The most recent signatures only.
    Preview,
    /// The whole history.
    #[default]
    Full,
    /// Only what is new since the last scan.
    Incremental,
    /// Re-list the whole history, fetch only what is missing.
    Refresh,
    /// A cached read of an already-scanned wallet.
    Read,
    /// Research credits for the account the quote's address names.
    #[serde(rename = "topup", skip_deserializing)]
    #[schemars(skip)]
    TopUp,
}

impl Scope {
    const ALL: [Scope; 6] = [
        Scope::Preview,
        Scope::Full,
        Scope::Incremental,
        Scope::Refresh,
        Scope::Read,
        Scope::TopUp,
    ];

    /// The word on the wire and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Preview => "preview",
            Scope::Full => "full",
            Scope::Incremental => "incremental",
            Scope::Refresh => "refresh",
            Scope::Read => "read",
            Scope::TopUp => "topup",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// A stored scope: text that names none is an error, never a default.
    pub fn of_column(text: &str) -> Result<Self, UnknownText> {
        Self::parse(text).ok_or_else(|| UnknownText::new("scope", text))
    }

    /// Whether a quote of this scope prices a scan (`scan_wallet` takes
    /// it); a read or a top-up prices none.
    pub fn is_scan(self) -> bool {
        self.entitlement() == Entitlement::Scan
    }

    /// What a payment for a quote of this scope buys.
    pub fn entitlement(self) -> Entitlement {
        match self {
            Scope::Preview | Scope::Full | Scope::Incremental | Scope::Refresh => Entitlement::Scan,
            Scope::Read => Entitlement::Read,
            Scope::TopUp => Entitlement::TopUp,
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a payment buys: a scan of its quote's wallet and scope (and reads
/// of the wallet while its receipt lives), reads of the wallet, or
/// research credits for the account a top-up quote names. A quote's scope
/// decides it ([`Scope::entitlement`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entitlement {
    Scan,
    Read,
    TopUp,
}

impl Entitlement {
    /// As the `payments.entitlement` column stores it, `GET /v1/payments`
    /// lists it and the settled-payments metric counts it. The column
    /// predates top-ups and holds `scan` or `read` only, so a top-up's row
    /// says `read` (its receipt covers no wallet: its quote's address is
    /// the account) and its scope, `topup`, tells it apart
    /// ([`Entitlement::of_record`]).
    pub fn as_str(self) -> &'static str {
        match self {
            Entitlement::Scan => "scan",
            Entitlement::Read | Entitlement::TopUp => "read",
        }
    }

    /// What a stored payment bought, from its entitlement and scope
    /// columns. Text this server never writes is an error, never a
    /// default.
    pub fn of_record(record: &PaymentRecord) -> Result<Self, UnknownText> {
        let scope = Scope::of_column(&record.scope)?;
        let stored = [Entitlement::Scan, Entitlement::Read]
            .into_iter()
            .find(|e| e.as_str() == record.entitlement)
            .ok_or_else(|| UnknownText::new("payments.entitlement", &record.entitlement))?;
        // The stored word must be the one the scope's entitlement writes:
        // a `scan` row of a read scope (or the reverse) was never written
        // by this server.
        let bought = scope.entitlement();
        if bought.as_str() != stored.as_str() {
            return Err(UnknownText::new(
                "payments.entitlement",
                &record.entitlement,
            ));
        }
        Ok(bought)
    }
}

/// How many signatures were counted, and whether that is all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SignatureEstimate {
    pub counted: u64,
    /// False when counting stopped at the page cap: there are more.
    pub complete: bool,
}

/// What a scan of a wallet whose stored legs an older decoder read does
/// besides listing: it derives those transactions' legs again with the
/// current decoder (docs/ledger.md, "Decoder versions"), from their stored
/// views where kept, otherwise fetching them again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RederiveEstimate {
    /// Transactions whose legs are derived again.
    pub transactions: u64,
    /// Of those, read from their stored views: no RPC request.
    pub from_stored_views: u64,
    /// Of those, fetched again (no view was kept): one getTransaction each.
    pub refetched: u64,
    /// The RPC requests (credits) the refetch costs: getTransaction, one
    /// per refetched transaction.
    pub rpc_credits: u64,
}

/// One row of the tier table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TierRow {
    pub tier: String,
    /// Largest history the tier covers; null for the last tier.
    pub max_signatures: Option<u64>,
    pub price_usd: Usd,
}

/// A priced quote, as `quote_wallet` and `POST /v1/quotes` answer it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Quote {
    /// Pass this to scan_wallet (or as the x402 quoteId).
    pub quote_id: String,
    pub address: WalletAddress,
    pub scope: Scope,
    pub tier: String,
    pub price_usd: Usd,
    /// The price in USDC atomic units (6 decimals), as a string.
    pub amount_atomic: String,
    /// RFC 3339; scan_wallet needs a live quote.
    pub expires_at: String,
    /// The size estimate behind the tier (absent for read quotes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signatures: Option<SignatureEstimate>,
    /// Transactions the scan derives again because an older decoder read
    /// them, and what that costs in RPC requests (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rederive: Option<RederiveEstimate>,
    /// The whole tier table for scans.
    pub tiers: Vec<TierRow>,
    pub preview_usd: Usd,
    pub cached_read_usd: Usd,
}

/// Why a quote could not be made.
#[derive(Debug, thiserror::Error)]
pub enum QuoteError {
    #[error(transparent)]
    Rpc(#[from] RpcError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A scope `quote_wallet` does not price (a top-up, which no caller
    /// can name: the route prices its own).
    #[error("quote_wallet prices no {0} quote")]
    NotPriced(Scope),
}

/// Count signatures newest first, stopping at `until` (exclusive) or after
/// `max_pages` pages of 1000.
pub async fn count_signatures(
    rpc: &RpcClient,
    address: &WalletAddress,
    until: Option<&str>,
    max_pages: usize,
    page_size: usize,
    cost: &RpcCost,
) -> Result<SignatureEstimate, RpcError> {
    let mut counted = 0u64;
    let mut before: Option<String> = None;
    for _ in 0..max_pages.max(1) {
        let page = rpc
            .signatures(address.as_str(), before.as_deref(), until, page_size, cost)
            .await?;
        counted += page.len() as u64;
        if page.len() < page_size {
            return Ok(SignatureEstimate {
                counted,
                complete: true,
            });
        }
        before = page.last().map(|s| s.signature.clone());
    }
    Ok(SignatureEstimate {
        counted,
        complete: false,
    })
}

/// The tier for a history of `estimate` signatures.
pub fn tier_for(tiers: &[PriceTier], estimate: SignatureEstimate) -> Option<&PriceTier> {
    tiers.iter().find(|t| match t.max_signatures {
        None => true,
        Some(max) if estimate.complete => estimate.counted <= max,
        // Counting stopped early: the history is larger than what we saw.
        Some(max) => estimate.counted < max,
    })
}

/// Everything a quote needs.
pub struct Quoting<'a> {
    pub rpc: &'a RpcClient,
    pub store: &'a Store,
    pub pricing: &'a PricingConfig,
    pub now_ms: i64,
}

/// Price `scope` for `address`, store the quote and return it.
pub async fn quote_wallet(
    q: Quoting<'_>,
    address: WalletAddress,
    scope: Scope,
) -> Result<Quote, QuoteError> {
    let pricing = q.pricing;
    let cost = RpcCost::default();
    let (tier, price, signatures) = match scope {
        Scope::Read => ("read".to_owned(), pricing.cached_read_usd, None),
        Scope::TopUp => return Err(QuoteError::NotPriced(scope)),
        Scope::Preview => {
            let estimate =
                count_signatures(q.rpc, &address, None, 1, pricing.preview_signatures, &cost)
                    .await?;
            ("preview".to_owned(), pricing.preview_usd, Some(estimate))
        }
        Scope::Full | Scope::Refresh | Scope::Incremental => {
            // Incremental counts only what is newer than the last scan
            // (`until` = the newest scanned signature). No scan is stored
            // yet, so today that is the whole history.
            let until: Option<&str> = None;
            let estimate = count_signatures(
                q.rpc,
                &address,
                until,
                pricing.estimate_max_pages,
                1000,
                &cost,
            )
            .await?;
            let tier = tier_for(&pricing.tiers, estimate);
            let (name, mut price) = tier
                .map(|t| (t.name.clone(), t.price_usd))
                .unwrap_or_else(|| ("unpriced".to_owned(), Usd::default()));
            if scope == Scope::Incremental {
                price = price.max(pricing.incremental_min_usd);
                if estimate.counted == 0 {
                    price = pricing.incremental_min_usd;
                }
            }
            (name, price, Some(estimate))
        }
    };
    // Every scan but a preview derives again what an older decoder read.
    // The tier already counts every signature of the history, those among
    // them, so the price covers the refetch; the quote shows its cost.
    let rederive = match scope {
        Scope::Full | Scope::Refresh | Scope::Incremental => {
            let stale = q
                .store
                .stale_counts(address.as_str(), crate::ledger::DECODER_VERSION)
                .await?;
            let transactions = u64::try_from(stale.transactions).unwrap_or(0);
            let refetched = u64::try_from(stale.without_view).unwrap_or(0);
            (transactions > 0).then_some(RederiveEstimate {
                transactions,
                from_stored_views: transactions - refetched,
                refetched,
                rpc_credits: refetched,
            })
        }
        _ => None,
    };
    let expires_ms =
        q.now_ms + i64::try_from(pricing.quote_ttl_secs * 1000).unwrap_or(i64::MAX / 2);
    let record = QuoteRecord {
        id: ids::new_id("q_", q.now_ms),
        address: address.as_str().to_owned(),
        scope: scope.as_str().to_owned(),
        tier: tier.clone(),
        price_micros: i64::try_from(price.micros()).unwrap_or(i64::MAX),
        signatures: signatures.map(|s| i64::try_from(s.counted).unwrap_or(i64::MAX)),
        created_at: q.now_ms,
        expires_at: expires_ms,
    };
    q.store.insert_quote(&record).await?;
    tracing::info!(quote = %record.id, %address, scope = scope.as_str(), %tier, %price, rpc_calls = cost.calls(), "quoted");
    Ok(Quote {
        quote_id: record.id,
        address,
        scope,
        tier,
        price_usd: price,
        amount_atomic: price.usdc_atomic().to_string(),
        expires_at: rfc3339(expires_ms),
        signatures,
        rederive,
        tiers: pricing
            .tiers
            .iter()
            .map(|t| TierRow {
                tier: t.name.clone(),
                max_signatures: t.max_signatures,
                price_usd: t.price_usd,
            })
            .collect(),
        preview_usd: pricing.preview_usd,
        cached_read_usd: pricing.cached_read_usd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiers() -> Vec<PriceTier> {
        PricingConfig::default().tiers
    }

    #[test]
    fn tiers_cover_every_size() {
        let t = tiers();
        let at = |counted, complete| {
            tier_for(&t, SignatureEstimate { counted, complete }).map(|t| t.name.as_str())
        };
        assert_eq!(at(0, true), Some("small"));
        assert_eq!(at(1000, true), Some("small"));
        assert_eq!(at(1001, true), Some("medium"));
        assert_eq!(
            at(10_000, false),
            Some("large"),
            "10,000 counted and more to come"
        );
        assert_eq!(at(5_000_000, true), Some("whale"));
    }

    #[test]
    fn scopes_read_back_their_own_words_and_refuse_any_other() {
        for scope in Scope::ALL {
            assert_eq!(Scope::of_column(scope.as_str()), Ok(scope));
            assert_eq!(scope.to_string(), scope.as_str());
        }
        for unknown in ["", "Read", "scan", "top_up", "read "] {
            assert_eq!(
                Scope::of_column(unknown),
                Err(UnknownText::new("scope", unknown))
            );
        }
    }

    #[test]
    fn callers_name_every_scope_but_a_top_up() {
        let read = |text: &str| serde_json::from_value::<Scope>(serde_json::json!(text));
        assert_eq!(read("incremental").unwrap(), Scope::Incremental);
        let refused = read("topup").unwrap_err().to_string();
        assert_eq!(
            refused,
            "unknown variant `topup`, expected one of `preview`, `full`, `incremental`, \
             `refresh`, `read`"
        );
        assert_eq!(serde_json::to_value(Scope::TopUp).unwrap(), "topup");
        let schema = serde_json::to_value(schemars::schema_for!(Scope)).unwrap();
        assert!(!schema.to_string().contains("topup"), "{schema}");
    }

    #[test]
    fn each_scope_buys_one_entitlement() {
        assert!(Scope::ALL.iter().filter(|s| s.is_scan()).count() == 4);
        assert_eq!(Scope::Read.entitlement(), Entitlement::Read);
        assert_eq!(Scope::TopUp.entitlement(), Entitlement::TopUp);
        assert!(!Scope::TopUp.is_scan() && !Scope::Read.is_scan());
    }

    #[test]
    fn rfc3339_is_utc_to_the_second() {
        assert_eq!(rfc3339(1_800_000_000_123), "2027-01-15T08:00:00Z");
    }
}
