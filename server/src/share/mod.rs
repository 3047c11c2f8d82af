//! Share links (`/s/{token}`): a public, read-only view of one wallet's
//! report, minted by an account that can read the wallet now.
//!
//! A link is a random 32-byte token (base64url, 43 characters) of which
//! only the SHA-256 is stored; it lives `share.ttl_secs` unless revoked
//! sooner, and an account holds at most `share.max_live_links` live ones
//! (`snapshot_limit` beyond). Opening a link ([`open`]) checks it against
//! the time passed in and hands back a [`Principal::Link`]: the access
//! module lets that principal read the link's one wallet and nothing else,
//! so the page is built from the same read functions the tools use
//! (`report`) and can never show more than its owner could read.
//!
//! Nothing here knows of HTTP: `mcp::tools`, `v1`, `site::share` and the
//! portal are adapters over these functions.

pub mod card;
pub mod charts;
pub mod html;
pub mod report;
pub mod tx_rows;

use base64::Engine as _;
use rand::RngCore as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use crate::{
    accounts::{AccountId, Action, LinkReader, Principal},
    config::ShareConfig,
    error::{AppError, Code},
    payments::{self, PayArgs, PaymentBlock, Presented, Resource},
    reads::Reads,
    solana::WalletAddress,
    store::ShareLinkRecord,
    values::rfc3339,
};

/// What the share functions need: the paid-read context (store, clock,
/// paywall, prices) and the share settings.
#[derive(Clone, Copy)]
pub struct Sharing<'a> {
    pub reads: Reads<'a>,
    pub config: &'a ShareConfig,
}

/// The value chart's range a link opens on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
pub enum ChartRange {
    #[serde(rename = "30d")]
    Days30,
    #[default]
    #[serde(rename = "90d")]
    Days90,
    #[serde(rename = "1y")]
    Year,
    #[serde(rename = "all")]
    All,
}

/// Solana mainnet-beta's first day (2020-03-16), where `all` starts; the
/// chart drops the empty days before the wallet's first holding.
const ALL_FROM_SECS: i64 = 1_584_316_800;

impl ChartRange {
    pub const ALL: [ChartRange; 4] = [Self::Days30, Self::Days90, Self::Year, Self::All];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Days30 => "30d",
            Self::Days90 => "90d",
            Self::Year => "1y",
            Self::All => "all",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == text)
    }

    /// The range's first second, ending at `now_secs`.
    pub fn from_secs(self, now_secs: i64) -> i64 {
        const DAY: i64 = 86_400;
        match self {
            Self::Days30 => now_secs - 30 * DAY,
            Self::Days90 => now_secs - 90 * DAY,
            Self::Year => now_secs - 365 * DAY,
            Self::All => ALL_FROM_SECS.min(now_secs - DAY),
        }
    }

    /// In words, for headings.
    /// The range's tab on the report: `30 days`, `1 year`, `All`.
    pub fn tab(self) -> &'static str {
        match self {
            Self::Days30 => "30 days",
            Self::Days90 => "90 days",
            Self::Year => "1 year",
            Self::All => "All",
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Self::Days30 => "the last 30 days",
            Self::Days90 => "the last 90 days",
            Self::Year => "the last year",
            Self::All => "all time",
        }
    }
}

/// The currency a link's value chart is drawn in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Denomination {
    #[default]
    Usd,
    Sol,
}

impl Denomination {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Usd => "usd",
            Self::Sol => "sol",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "usd" => Some(Self::Usd),
            "sol" => Some(Self::Sol),
            _ => None,
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Self::Usd => "USD",
            Self::Sol => "SOL",
        }
    }
}

/// The arguments of `create_snapshot` and the body of `POST /v1/snapshots`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSnapshotArgs {
    /// The wallet's base58 public key.
    pub address: WalletAddress,
    /// usd (default) or sol.
    #[serde(default)]
    #[schemars(extend("default" = "usd"))]
    pub denominate: Option<Denomination>,
    /// Base64 X-PAYMENT for a read of the wallet, when your account cannot read it yet; name its quote in quote_id.
    #[serde(default)]
    pub payment: Option<String>,
    /// The quoteId of the challenge the payment was built for.
    #[serde(default)]
    pub quote_id: Option<String>,
    /// The value chart's range the link opens on: 30d | 90d | 1y | all.
    #[serde(default)]
    #[schemars(extend("default" = "90d"))]
    pub range: Option<ChartRange>,
    /// Receipt token of a payment that covers reads of this wallet.
    #[serde(default)]
    pub receipt: Option<String>,
}

/// The arguments of `revoke_snapshot`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevokeSnapshotArgs {
    /// The share link's token (the part after /s/).
    #[schemars(length(max = 128))]
    pub token: String,
}

/// `GET /v1/snapshots` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSnapshotsArgs {}

/// A share link as its owner sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema, utoipa::ToSchema)]
pub struct SnapshotView {
    /// The link's public name (`snap_…`): lists and the portal's revoke form.
    pub id: String,
    /// The token, the part after /s/: shown once, when the link is minted
    /// (only its hash is kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The token's first characters, to tell links apart.
    pub hint: String,
    /// The page (`{public_url}/s/{token}`); only when the token is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The card image (`/s/{token}/card.png`); only when the token is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card_url: Option<String>,
    pub address: String,
    /// 30d, 90d, 1y or all.
    pub range: String,
    /// usd or sol.
    pub denominate: String,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339: the link answers not_found from then on.
    pub expires_at: String,
    /// The payment this call settled (or replayed), with its receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub payment: Option<PaymentBlock>,
}

/// The account's live share links.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema, utoipa::ToSchema)]
pub struct Snapshots {
    /// Newest first.
    pub snapshots: Vec<SnapshotView>,
    /// Live links the account may hold at once.
    pub limit: u32,
}

/// A revoked share link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema, utoipa::ToSchema)]
pub struct RevokedSnapshot {
    /// The link's public name.
    pub id: String,
    pub address: String,
    /// Always true: the page, its reads and its card answer not_found now.
    pub revoked: bool,
}

/// A share link's token: 32 random bytes, base64url without padding.
#[derive(Clone, PartialEq, Eq)]
pub struct ShareToken(String);

/// Characters in a token.
pub const TOKEN_LEN: usize = 43;

impl ShareToken {
    /// A fresh token from the operating system's generator.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        Self(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }

    /// A token as presented: exactly the shape [`generate`](Self::generate)
    /// makes, else `None` (and no database is asked).
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        (text.len() == TOKEN_LEN
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
        .then(|| Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Lowercase hex SHA-256: what the store keeps.
    pub fn hash(&self) -> String {
        let digest = Sha256::digest(self.0.as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn hint(&self) -> String {
        self.0.chars().take(6).collect()
    }
}

impl std::fmt::Debug for ShareToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShareToken({}…)", self.hint())
    }
}

/// A live share link, opened.
#[derive(Clone, Debug)]
pub struct OpenLink {
    pub id: String,
    pub wallet: WalletAddress,
    pub range: ChartRange,
    pub denominate: Denomination,
    pub expires_at: i64,
}

impl OpenLink {
    /// The principal the link's reads run as: this wallet, nothing else.
    pub fn principal(&self) -> Principal {
        Principal::Link(LinkReader {
            wallet: self.wallet.clone(),
        })
    }
}

fn view(record: &ShareLinkRecord, token: Option<&ShareToken>, public_url: &str) -> SnapshotView {
    let base = public_url.trim_end_matches('/');
    SnapshotView {
        id: record.id.clone(),
        token: token.map(|t| t.as_str().to_owned()),
        hint: record.hint.clone(),
        url: token.map(|t| format!("{base}/s/{}", t.as_str())),
        card_url: token.map(|t| format!("{base}/s/{}/card.png", t.as_str())),
        address: record.wallet.clone(),
        range: record.chart_range.clone(),
        denominate: record.denominate.clone(),
        created_at: rfc3339(record.created_at),
        expires_at: rfc3339(record.expires_at),
        payment: None,
    }
}

fn limit_reached(limit: u32) -> AppError {
    AppError::new(
        Code::SnapshotLimit,
        format!(
            "your account holds as many live share links as it may ({limit}); revoke_snapshot one first"
        ),
    )
    .with("limit", serde_json::json!(limit))
}

/// `create_snapshot` and `POST /v1/snapshots`.
pub async fn create_snapshot(
    sharing: &Sharing<'_>,
    principal: &Principal,
    args: CreateSnapshotArgs,
    headers: &Presented,
) -> Result<SnapshotView, AppError> {
    let account = principal.require_account("create_snapshot")?;
    principal.permit(Action::PublishLink)?;
    let store = sharing.reads.store();
    let now = sharing.reads.now_ms();
    let limit = sharing.config.max_live_links;
    // Refuse before anything is paid for.
    if store
        .count_live_share_links(account.account_id.as_str(), now)
        .await?
        >= u64::from(limit)
    {
        return Err(limit_reached(limit));
    }
    let pay = PayArgs {
        payment: args.payment,
        quote_id: args.quote_id,
        receipt: args.receipt,
    };
    let presented = pay.presented(headers);
    let payment = payments::authorize_read(
        &sharing.reads.paywall,
        principal,
        &args.address,
        &presented,
        Resource {
            path: crate::routes::SNAPSHOTS_CREATE.path,
            tool: "create_snapshot",
        },
    )
    .await?;
    let mut out = mint(
        sharing,
        &account.account_id,
        &args.address,
        args.range.unwrap_or_default(),
        args.denominate.unwrap_or_default(),
    )
    .await?;
    out.payment = payment;
    Ok(out)
}

/// Store a new link for `account` to `wallet` (the caller checked the
/// account may read it), within the account's limit.
async fn mint(
    sharing: &Sharing<'_>,
    account: &AccountId,
    wallet: &WalletAddress,
    range: ChartRange,
    denominate: Denomination,
) -> Result<SnapshotView, AppError> {
    let now = sharing.reads.now_ms();
    let limit = sharing.config.max_live_links;
    let token = ShareToken::generate();
    let record = ShareLinkRecord {
        id: crate::ids::new_id("snap_", now),
        token_hash: token.hash(),
        hint: token.hint(),
        account_id: account.as_str().to_owned(),
        wallet: wallet.to_string(),
        chart_range: range.as_str().to_owned(),
        denominate: denominate.as_str().to_owned(),
        created_at: now,
        expires_at: sharing.config.expires_at(now),
        revoked_at: None,
    };
    // The insert checks the limit itself, so concurrent mints of one
    // account cannot pass it together.
    if !sharing
        .reads
        .store()
        .insert_share_link(&record, limit, now)
        .await?
    {
        return Err(limit_reached(limit));
    }
    tracing::info!(link = %record.id, wallet = %record.wallet, "share link minted");
    Ok(view(
        &record,
        Some(&token),
        sharing.reads.paywall.public_url,
    ))
}

/// The portal's share form: a signed-in account shares a wallet it
/// watches (the portal takes no payment, so watching is what lets it read).
pub async fn create_for_account(
    sharing: &Sharing<'_>,
    account: &AccountId,
    wallet: &WalletAddress,
    range: ChartRange,
    denominate: Denomination,
) -> Result<SnapshotView, AppError> {
    let store = sharing.reads.store();
    if !crate::accounts::watchlist::is_watching(store, account, wallet).await? {
        return Err(AppError::not_found(
            "your account does not watch this wallet",
        ));
    }
    if !store.wallet_scanned(wallet.as_str()).await? {
        return Err(AppError::not_found(
            "this wallet has never been scanned: scan it before sharing its report",
        ));
    }
    mint(sharing, account, wallet, range, denominate).await
}

/// `revoke_snapshot` and `DELETE /v1/snapshots/{token}`.
pub async fn revoke_snapshot(
    sharing: &Sharing<'_>,
    principal: &Principal,
    args: RevokeSnapshotArgs,
) -> Result<RevokedSnapshot, AppError> {
    let account = principal.require_account("revoke_snapshot")?;
    principal.permit(Action::RevokeLink)?;
    let not_found = || AppError::not_found("your account holds no live share link with this token");
    let token = ShareToken::parse(&args.token).ok_or_else(not_found)?;
    let store = sharing.reads.store();
    let now = sharing.reads.now_ms();
    let record = store
        .share_link_by_hash(&token.hash())
        .await?
        .filter(|r| r.account_id == account.account_id.as_str())
        .ok_or_else(not_found)?;
    revoke(sharing, &account.account_id, &record, now).await
}

/// The portal's revoke form: a link named by its id, on the wallet whose
/// page the form was posted to (a link to another wallet is not found).
pub async fn revoke_by_id(
    sharing: &Sharing<'_>,
    account: &AccountId,
    wallet: &WalletAddress,
    id: &str,
) -> Result<RevokedSnapshot, AppError> {
    let now = sharing.reads.now_ms();
    let record = sharing
        .reads
        .store()
        .live_share_links(account.as_str(), now)
        .await?
        .into_iter()
        .find(|r| r.id == id && r.wallet == wallet.as_str())
        .ok_or_else(|| AppError::not_found("your account holds no live share link with this id"))?;
    revoke(sharing, account, &record, now).await
}

async fn revoke(
    sharing: &Sharing<'_>,
    account: &AccountId,
    record: &ShareLinkRecord,
    now: i64,
) -> Result<RevokedSnapshot, AppError> {
    if !sharing
        .reads
        .store()
        .revoke_share_link(account.as_str(), &record.id, true, now)
        .await?
    {
        return Err(AppError::not_found(
            "this share link is no longer live: it expired or was revoked already",
        ));
    }
    tracing::info!(link = %record.id, "share link revoked");
    Ok(RevokedSnapshot {
        id: record.id.clone(),
        address: record.wallet.clone(),
        revoked: true,
    })
}

/// `GET /v1/snapshots`: the account's live links (without their tokens).
pub async fn list_snapshots(
    sharing: &Sharing<'_>,
    principal: &Principal,
) -> Result<Snapshots, AppError> {
    let account = principal.require_account("listing share links")?;
    principal.permit(Action::ReadAccount)?;
    list_for(sharing, &account.account_id).await
}

/// The live links of `account`, for the portal as for the API.
pub async fn list_for(sharing: &Sharing<'_>, account: &AccountId) -> Result<Snapshots, AppError> {
    let now = sharing.reads.now_ms();
    let rows = sharing
        .reads
        .store()
        .live_share_links(account.as_str(), now)
        .await?;
    Ok(Snapshots {
        snapshots: rows
            .iter()
            .map(|r| view(r, None, sharing.reads.paywall.public_url))
            .collect(),
        limit: sharing.config.max_live_links,
    })
}

/// Why a link does not open, in words for the person who followed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Closed {
    /// No link has this token (mistyped, or never minted).
    Unknown,
    /// Its owner revoked it.
    Revoked,
    /// It outlived the configured lifetime.
    Expired,
}

impl Closed {
    pub fn words(self) -> &'static str {
        match self {
            Closed::Unknown => {
                "There is no share link at this address. Check that the link was copied whole."
            }
            Closed::Revoked => {
                "This share link was revoked by its owner; it no longer shows the wallet."
            }
            Closed::Expired => "This share link has expired; ask its owner for a new one.",
        }
    }

    pub fn error(self) -> AppError {
        AppError::not_found(self.words())
    }
}

/// Open the link `token` names at `now_ms`: live, or why not. The stored
/// hash is compared again in constant time (the lookup found it by hash).
pub async fn open(
    store: &crate::store::Store,
    now_ms: i64,
    token: &str,
) -> Result<Result<OpenLink, Closed>, AppError> {
    let Some(token) = ShareToken::parse(token) else {
        return Ok(Err(Closed::Unknown));
    };
    let hash = token.hash();
    let Some(record) = store.share_link_by_hash(&hash).await? else {
        return Ok(Err(Closed::Unknown));
    };
    if !bool::from(record.token_hash.as_bytes().ct_eq(hash.as_bytes())) {
        return Ok(Err(Closed::Unknown));
    }
    if record.revoked_at.is_some() {
        return Ok(Err(Closed::Revoked));
    }
    if record.expires_at <= now_ms {
        return Ok(Err(Closed::Expired));
    }
    let wallet = WalletAddress::parse(&record.wallet)
        .map_err(|why| AppError::internal("share link wallet", why))?;
    Ok(Ok(OpenLink {
        id: record.id,
        wallet,
        range: ChartRange::parse(&record.chart_range).unwrap_or_default(),
        denominate: Denomination::parse(&record.denominate).unwrap_or_default(),
        expires_at: record.expires_at,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_43_base64url_characters_of_32_random_bytes() {
        let a = ShareToken::generate();
        let b = ShareToken::generate();
        assert_eq!(a.as_str().len(), TOKEN_LEN);
        assert_ne!(a, b);
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(a.as_str())
            .unwrap();
        assert_eq!(bytes.len(), 32);
        assert_eq!(ShareToken::parse(a.as_str()), Some(a.clone()));
    }

    #[test]
    fn a_token_of_another_shape_is_refused_before_any_lookup() {
        assert!(ShareToken::parse("short").is_none());
        assert!(ShareToken::parse(&"a".repeat(44)).is_none());
        assert!(ShareToken::parse(&format!("{}/", "a".repeat(42))).is_none());
        assert!(ShareToken::parse(&"a".repeat(43)).is_some());
    }

    #[test]
    fn the_hash_is_hex_sha256_of_the_token() {
        let t = ShareToken::parse(&"a".repeat(43)).unwrap();
        assert_eq!(t.hash().len(), 64);
        assert_ne!(t.hash(), t.as_str());
        assert!(!format!("{t:?}").contains(&"a".repeat(10)));
    }

    #[test]
    fn ranges_and_denominations_read_as_the_tool_names_them() {
        for r in ChartRange::ALL {
            assert_eq!(ChartRange::parse(r.as_str()), Some(r));
            let json = serde_json::to_value(r).unwrap();
            assert_eq!(json, r.as_str());
        }
        assert!(serde_json::from_value::<ChartRange>(serde_json::json!("7d")).is_err());
        assert!(serde_json::from_value::<Denomination>(serde_json::json!("eur")).is_err());
    }
}
