//! MCP tokens (`lm_…`) and API keys (`lk_…`): bearer credentials of an
//! account, with scopes. The plaintext is 32 random bytes from the OS in
//! base58 after the kind's prefix; it is shown once, when minted, and only
//! its SHA-256 is stored, so a copy of the database holds no usable token.
//!
//! [`resolve`] is the lookup behind every bearer: one indexed read by hash,
//! then a constant-time comparison of the stored hash. It reads
//! `revoked_at` on every call and keeps no cache, so a revocation is in
//! force for the very next request. `last_used_at` is written at most once
//! a minute per token, so a busy agent does not turn every read into a
//! write.

use std::fmt;

use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{AccountId, AccountsError, check_label};
use crate::{
    ids,
    store::{Store, TokenRecord},
};

/// Random bytes in a token.
const SECRET_BYTES: usize = 32;
/// Characters of the plaintext kept as its display prefix (`lm_` and 8).
pub const PREFIX_LEN: usize = 11;
/// The fewest characters after `lm_`/`lk_` a revocation prefix may have.
const PREFIX_MIN_BODY: usize = 4;
/// The longest token label.
pub const TOKEN_LABEL_MAX: usize = 64;
/// `last_used_at` is at most this stale, and written at most this often.
pub const LAST_USED_RESOLUTION_MS: i64 = 60_000;

const TOKEN_ID_PREFIX: &str = "tok_";

/// MCP token or API key: the same powers, different intent (an agent's
/// connection or a script's key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Mcp,
    Api,
}

impl TokenKind {
    /// `mcp` or `api`.
    pub fn parse(input: &str) -> Result<Self, AccountsError> {
        match input.trim() {
            "mcp" => Ok(TokenKind::Mcp),
            "api" => Ok(TokenKind::Api),
            _ => Err(AccountsError::invalid("kind", "must be mcp or api")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TokenKind::Mcp => "mcp",
            TokenKind::Api => "api",
        }
    }

    /// What the plaintext starts with.
    pub fn plaintext_prefix(self) -> &'static str {
        match self {
            TokenKind::Mcp => "lm_",
            TokenKind::Api => "lk_",
        }
    }

    /// The kind a plaintext claims by its prefix, and the rest of it.
    fn split(plaintext: &str) -> Option<(Self, &str)> {
        [TokenKind::Mcp, TokenKind::Api]
            .into_iter()
            .find_map(|k| plaintext.strip_prefix(k.plaintext_prefix()).map(|r| (k, r)))
    }
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One permission a token carries. Which actions need which scopes is
/// `accounts::Action`'s table; [`Scope::words`] says it to people.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Reading: wallets, reports, the account's payments, credits and
    /// links; keeping the watchlist and labels.
    Read,
    /// Spending and publishing: scans; with `Read`, research credits and
    /// share links.
    Scan,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Scan => "scan",
        }
    }

    /// What the scope allows, in the words the consent page and the Keys
    /// page show (`app::scopes`, the one source).
    pub fn words(self) -> &'static str {
        match self {
            Scope::Read => app::scopes::READ,
            Scope::Scan => app::scopes::SCAN,
        }
    }
}

/// A token's scopes: at least one of read and scan. Written `read,scan`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scopes {
    read: bool,
    scan: bool,
}

impl Scopes {
    /// Every scope.
    pub const ALL: Scopes = Scopes {
        read: true,
        scan: true,
    };

    /// A comma-separated list of `read` and `scan` (spaces around the
    /// commas are ignored; a scope given twice counts once).
    pub fn parse(input: &str) -> Result<Self, AccountsError> {
        let mut scopes = Scopes {
            read: false,
            scan: false,
        };
        for item in input.split(',').map(str::trim) {
            match item {
                "read" => scopes.read = true,
                "scan" => scopes.scan = true,
                "" => {
                    return Err(AccountsError::invalid(
                        "scopes",
                        "a comma-separated list of read and scan, at least one (e.g. read,scan)",
                    ));
                }
                other => {
                    return Err(AccountsError::invalid(
                        "scopes",
                        format!("unknown scope {other:?}; the scopes are read and scan"),
                    ));
                }
            }
        }
        Ok(scopes)
    }

    pub fn allows(self, scope: Scope) -> bool {
        match scope {
            Scope::Read => self.read,
            Scope::Scan => self.scan,
        }
    }

    /// The scopes, in their canonical order.
    pub fn iter(self) -> impl Iterator<Item = Scope> {
        [Scope::Read, Scope::Scan]
            .into_iter()
            .filter(move |s| self.allows(*s))
    }
}

impl fmt::Display for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Scope::as_str).collect();
        f.write_str(&names.join(","))
    }
}

/// A token's id: `tok_` and a ULID. Not a secret (it names the row).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TokenId(String);

impl TokenId {
    pub fn parse(input: &str) -> Result<Self, AccountsError> {
        let input = input.trim();
        if ids::is_id(TOKEN_ID_PREFIX, input) {
            Ok(Self(input.to_owned()))
        } else {
            Err(AccountsError::invalid(
                "token_id",
                "a token id is tok_ followed by 26 base32 characters",
            ))
        }
    }

    fn stored(id: String) -> Result<Self, AccountsError> {
        Self::parse(&id).map_err(|_| AccountsError::Corrupt(format!("token id {id:?}")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TokenId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The first characters of a plaintext (`lm_3fQ9x2Ab`): what lists show and
/// one of the two things `ledger tokens revoke` takes ([`TokenRef`]). Parsed from input it may be shorter
/// than a stored prefix (at least four characters after `lm_`/`lk_`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TokenPrefix(String);

impl TokenPrefix {
    pub fn parse(input: &str) -> Result<Self, AccountsError> {
        let input = input.trim();
        let rule = || {
            AccountsError::invalid(
                "prefix",
                format!(
                    "lm_ or lk_ followed by {PREFIX_MIN_BODY} to {} base58 characters, as the \
                     token list shows it (e.g. lm_3fQ9x2Ab)",
                    PREFIX_LEN - 3
                ),
            )
        };
        let (_, body) = TokenKind::split(input).ok_or_else(rule)?;
        if body.len() < PREFIX_MIN_BODY || input.len() > PREFIX_LEN || !is_base58(body) {
            return Err(rule());
        }
        Ok(Self(input.to_owned()))
    }

    fn of(plaintext: &str) -> Self {
        Self(plaintext.chars().take(PREFIX_LEN).collect())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TokenPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which token an operator names: its id (`tok_…`, what `ledger tokens
/// mint` and `ledger tokens list` print) or the start of its plaintext
/// (`lm_…`/`lk_…`, what the Keys page lists). Parsed at the edge, so
/// `ledger tokens revoke` takes either.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenRef {
    Id(TokenId),
    Prefix(TokenPrefix),
}

impl TokenRef {
    pub fn parse(input: &str) -> Result<Self, AccountsError> {
        let input = input.trim();
        if input.starts_with(TOKEN_ID_PREFIX) {
            return TokenId::parse(input).map(TokenRef::Id);
        }
        if TokenKind::split(input).is_some() {
            return TokenPrefix::parse(input).map(TokenRef::Prefix);
        }
        Err(AccountsError::invalid(
            "token",
            format!(
                "a token id (tok_ followed by 26 base32 characters, as `ledger tokens mint` and \
                 `ledger tokens list` print it) or the start of the token (lm_ or lk_ followed by \
                 {PREFIX_MIN_BODY} to {} base58 characters, e.g. lm_3fQ9x2Ab)",
                PREFIX_LEN - 3
            ),
        ))
    }
}

fn is_base58(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() && !matches!(b, b'0' | b'O' | b'I' | b'l'))
}

fn sha256_hex(plaintext: &str) -> String {
    Sha256::digest(plaintext.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A freshly minted token. The plaintext is here and nowhere else: show it
/// once. `Debug` leaves it out.
#[derive(Clone, PartialEq, Eq)]
pub struct Minted {
    pub token_id: TokenId,
    pub plaintext: String,
    pub prefix: TokenPrefix,
    pub kind: TokenKind,
    pub scopes: Scopes,
    pub label: String,
    pub created_at: i64,
}

impl fmt::Debug for Minted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Minted")
            .field("token_id", &self.token_id)
            .field("plaintext", &"<redacted>")
            .field("prefix", &self.prefix)
            .field("kind", &self.kind)
            .field("scopes", &self.scopes)
            .field("label", &self.label)
            .field("created_at", &self.created_at)
            .finish()
    }
}

/// What a live bearer token resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credential {
    pub account_id: AccountId,
    pub token_id: TokenId,
    pub kind: TokenKind,
    pub scopes: Scopes,
}

/// A live token as its account's list shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenSummary {
    pub token_id: TokenId,
    pub label: String,
    pub kind: TokenKind,
    pub scopes: Scopes,
    pub prefix: TokenPrefix,
    pub created_at: i64,
    /// Within [`LAST_USED_RESOLUTION_MS`] of the last use.
    pub last_used_at: Option<i64>,
}

/// The token `revoke_by_prefix` revoked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revoked {
    pub token_id: TokenId,
    pub account_id: AccountId,
    pub kind: TokenKind,
    pub prefix: TokenPrefix,
    pub label: String,
}

fn stored_kind(kind: &str) -> Result<TokenKind, AccountsError> {
    TokenKind::parse(kind).map_err(|_| AccountsError::Corrupt(format!("token kind {kind:?}")))
}

fn stored_scopes(scopes: &str) -> Result<Scopes, AccountsError> {
    Scopes::parse(scopes).map_err(|_| AccountsError::Corrupt(format!("token scopes {scopes:?}")))
}

fn summary(row: TokenRecord) -> Result<TokenSummary, AccountsError> {
    Ok(TokenSummary {
        token_id: TokenId::stored(row.id)?,
        label: row.label,
        kind: stored_kind(&row.kind)?,
        scopes: stored_scopes(&row.scopes)?,
        prefix: TokenPrefix(row.prefix),
        created_at: row.created_at,
        last_used_at: row.last_used_at,
    })
}

/// Mint a token of `kind` with `scopes` for `account` (which must exist).
/// `label` is optional (empty), at most [`TOKEN_LABEL_MAX`] characters.
/// No quota: this is the operator's (`ledger tokens mint`); people mint
/// through [`mint_within`].
pub async fn mint(
    store: &Store,
    now_ms: i64,
    account: &AccountId,
    kind: TokenKind,
    scopes: Scopes,
    label: &str,
) -> Result<Minted, AccountsError> {
    let (minted, record) = prepare(store, now_ms, account, kind, scopes, label).await?;
    store.insert_token(&record).await?;
    Ok(minted)
}

/// [`mint`] within the account's quota of live tokens (`max_live`,
/// `quota.tokens_per_account`), MCP tokens and API keys together: the Keys
/// page's. Revoking one makes room.
pub async fn mint_within(
    store: &Store,
    now_ms: i64,
    account: &AccountId,
    kind: TokenKind,
    scopes: Scopes,
    label: &str,
    max_live: u32,
) -> Result<Minted, AccountsError> {
    let (minted, record) = prepare(store, now_ms, account, kind, scopes, label).await?;
    if !store.insert_token_within(&record, max_live).await? {
        return Err(AccountsError::QuotaReached {
            what: "live tokens (MCP tokens and API keys together)",
            limit: max_live,
            setting: "quota.tokens_per_account",
            remedy: "revoke one on the Keys page first",
        });
    }
    Ok(minted)
}

/// A new token and the row that stores it (its hash, never the plaintext).
async fn prepare(
    store: &Store,
    now_ms: i64,
    account: &AccountId,
    kind: TokenKind,
    scopes: Scopes,
    label: &str,
) -> Result<(Minted, TokenRecord), AccountsError> {
    let label = check_label("label", label, TOKEN_LABEL_MAX)?;
    if !store.account_exists(account.as_str()).await? {
        return Err(AccountsError::NoAccount(account.to_string()));
    }
    let mut secret = [0u8; SECRET_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    let plaintext = format!(
        "{}{}",
        kind.plaintext_prefix(),
        bs58::encode(secret).into_string()
    );
    let token_id = TokenId(ids::new_id(TOKEN_ID_PREFIX, now_ms));
    let prefix = TokenPrefix::of(&plaintext);
    let record = TokenRecord {
        id: token_id.as_str().to_owned(),
        account_id: account.as_str().to_owned(),
        kind: kind.as_str().to_owned(),
        prefix: prefix.as_str().to_owned(),
        hash: sha256_hex(&plaintext),
        scopes: scopes.to_string(),
        label: label.clone(),
        created_at: now_ms,
        last_used_at: None,
        revoked_at: None,
    };
    Ok((
        Minted {
            token_id,
            plaintext,
            prefix,
            kind,
            scopes,
            label,
            created_at: now_ms,
        },
        record,
    ))
}

/// The credential a bearer plaintext stands for. `None` when it is not the
/// shape of a token, unknown, or revoked: the caller refuses all three the
/// same way.
pub async fn resolve(
    store: &Store,
    now_ms: i64,
    plaintext: &str,
) -> Result<Option<Credential>, AccountsError> {
    let Some((kind, body)) = TokenKind::split(plaintext) else {
        return Ok(None);
    };
    // Not what `mint` makes: not worth a database read.
    if body.len() > 44
        || !bs58::decode(body)
            .into_vec()
            .is_ok_and(|b| b.len() == SECRET_BYTES)
    {
        return Ok(None);
    }
    let hash = sha256_hex(plaintext);
    let Some(row) = store.token_by_hash(&hash).await? else {
        return Ok(None);
    };
    if !bool::from(row.hash.as_bytes().ct_eq(hash.as_bytes()))
        || row.revoked_at.is_some()
        || row.kind != kind.as_str()
    {
        return Ok(None);
    }
    let stale = now_ms - LAST_USED_RESOLUTION_MS;
    if row.last_used_at.is_none_or(|at| at <= stale) {
        store.touch_token(&row.id, now_ms, stale).await?;
    }
    Ok(Some(Credential {
        account_id: AccountId::stored(row.account_id)?,
        token_id: TokenId::stored(row.id)?,
        kind,
        scopes: stored_scopes(&row.scopes)?,
    }))
}

/// An account's live tokens, newest first.
pub async fn list_tokens(
    store: &Store,
    account: &AccountId,
) -> Result<Vec<TokenSummary>, AccountsError> {
    store
        .live_tokens_of(account.as_str())
        .await?
        .into_iter()
        .map(summary)
        .collect()
}

/// Revoke one of `account`'s own tokens. Another account's token, or one
/// already revoked, is [`AccountsError::NoToken`].
pub async fn revoke(
    store: &Store,
    now_ms: i64,
    account: &AccountId,
    token_id: &TokenId,
) -> Result<(), AccountsError> {
    if store
        .revoke_token(account.as_str(), token_id.as_str(), now_ms)
        .await?
    {
        Ok(())
    } else {
        Err(AccountsError::NoToken(token_id.to_string()))
    }
}

/// Revoke the token an operator named, whatever its account (`ledger
/// tokens revoke`): by id, or by the start of its plaintext.
pub async fn revoke_by_ref(
    store: &Store,
    now_ms: i64,
    token: &TokenRef,
) -> Result<Revoked, AccountsError> {
    match token {
        TokenRef::Id(id) => revoke_by_id(store, now_ms, id).await,
        TokenRef::Prefix(prefix) => revoke_by_prefix(store, now_ms, prefix).await,
    }
}

/// Revoke the live token `id`, whatever its account. Refused when no live
/// token has that id (unknown, or already revoked).
pub async fn revoke_by_id(
    store: &Store,
    now_ms: i64,
    id: &TokenId,
) -> Result<Revoked, AccountsError> {
    let Some(row) = store.live_token_by_id(id.as_str()).await? else {
        return Err(AccountsError::NoLiveToken(id.to_string()));
    };
    revoke_row(store, now_ms, row, || {
        AccountsError::NoLiveToken(id.to_string())
    })
    .await
}

/// Revoke the one live token whose prefix starts with `prefix`, whatever
/// its account (the operator's `ledger tokens revoke`). Refused when no
/// live token or more than one matches.
pub async fn revoke_by_prefix(
    store: &Store,
    now_ms: i64,
    prefix: &TokenPrefix,
) -> Result<Revoked, AccountsError> {
    let mut matches = store.live_tokens_with_prefix(prefix.as_str()).await?;
    let row = match matches.len() {
        0 => return Err(AccountsError::NoTokenWithPrefix(prefix.to_string())),
        1 => matches.remove(0),
        count => {
            return Err(AccountsError::AmbiguousPrefix {
                prefix: prefix.to_string(),
                count,
            });
        }
    };
    revoke_row(store, now_ms, row, || {
        AccountsError::NoTokenWithPrefix(prefix.to_string())
    })
    .await
}

/// Revoke the live token `row` names; `gone` is the refusal when it was
/// revoked by someone else between our read and our write.
async fn revoke_row(
    store: &Store,
    now_ms: i64,
    row: TokenRecord,
    gone: impl FnOnce() -> AccountsError,
) -> Result<Revoked, AccountsError> {
    let revoked = Revoked {
        token_id: TokenId::stored(row.id)?,
        account_id: AccountId::stored(row.account_id)?,
        kind: stored_kind(&row.kind)?,
        prefix: TokenPrefix(row.prefix),
        label: row.label,
    };
    if !store
        .revoke_token(
            revoked.account_id.as_str(),
            revoked.token_id.as_str(),
            now_ms,
        )
        .await?
    {
        return Err(gone());
    }
    Ok(revoked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_and_display_canonically() {
        assert_eq!(Scopes::parse("read,scan").unwrap().to_string(), "read,scan");
        assert_eq!(
            Scopes::parse("scan, read").unwrap().to_string(),
            "read,scan"
        );
        assert_eq!(Scopes::parse("read").unwrap().to_string(), "read");
        assert_eq!(Scopes::parse("scan,scan").unwrap().to_string(), "scan");
        let read = Scopes::parse("read").unwrap();
        assert!(read.allows(Scope::Read) && !read.allows(Scope::Scan));
        assert_eq!(Scopes::ALL, Scopes::parse("read,scan").unwrap());
    }

    #[test]
    fn a_token_is_named_by_its_id_or_the_start_of_its_plaintext() {
        let id = "tok_01JD8X5B7M3Q2W5E8R1T6Y9Z0P";
        assert_eq!(
            TokenRef::parse(&format!(" {id} ")).unwrap(),
            TokenRef::Id(TokenId::parse(id).unwrap())
        );
        assert_eq!(
            TokenRef::parse("lm_3fQ9x2Ab").unwrap(),
            TokenRef::Prefix(TokenPrefix::parse("lm_3fQ9x2Ab").unwrap())
        );
        assert!(matches!(
            TokenRef::parse("lk_3fQ9").unwrap(),
            TokenRef::Prefix(_)
        ));
        // A malformed id is refused as an id, a short prefix as a prefix,
        // anything else naming both forms.
        let err = TokenRef::parse("tok_nope").unwrap_err().to_string();
        assert!(err.starts_with("token_id: "), "{err}");
        let err = TokenRef::parse("lm_3f").unwrap_err().to_string();
        assert!(err.starts_with("prefix: "), "{err}");
        let err = TokenRef::parse("3fQ9x2Ab").unwrap_err().to_string();
        assert!(
            err.starts_with("token: a token id (tok_") && err.contains("lm_ or lk_"),
            "{err}"
        );
    }

    #[test]
    fn empty_scopes_are_refused() {
        for input in ["", " ", ","] {
            let err = Scopes::parse(input).unwrap_err();
            assert!(err.to_string().contains("at least one"), "{input:?}: {err}");
        }
    }

    #[test]
    fn an_unknown_scope_is_refused_by_name() {
        let err = Scopes::parse("read,admin").unwrap_err();
        assert_eq!(
            err.to_string(),
            "scopes: unknown scope \"admin\"; the scopes are read and scan"
        );
    }

    #[test]
    fn space_separated_scopes_are_refused() {
        assert!(Scopes::parse("read scan").is_err());
    }

    #[test]
    fn kinds_parse_and_name_their_prefix() {
        assert_eq!(TokenKind::parse("mcp").unwrap().plaintext_prefix(), "lm_");
        assert_eq!(TokenKind::parse("api").unwrap().plaintext_prefix(), "lk_");
        assert_eq!(
            TokenKind::parse("admin").unwrap_err().to_string(),
            "kind: must be mcp or api"
        );
    }

    #[test]
    fn prefixes_parse_within_bounds() {
        assert!(TokenPrefix::parse("lm_3fQ9").is_ok());
        assert!(TokenPrefix::parse("lk_3fQ9x2Ab").is_ok());
    }

    #[test]
    fn a_too_short_prefix_is_refused() {
        assert!(TokenPrefix::parse("lm_").is_err());
        assert!(TokenPrefix::parse("lm_3fQ").is_err());
    }

    #[test]
    fn a_prefix_longer_than_the_displayed_one_is_refused() {
        assert!(TokenPrefix::parse("lm_3fQ9x2Abc").is_err());
    }

    #[test]
    fn a_prefix_of_another_shape_is_refused() {
        for input in ["xx_3fQ9x2", "lm_3fQ0x2", "lm-3fQ9x2", "3fQ9x2Ab"] {
            let err = TokenPrefix::parse(input).unwrap_err();
            assert!(err.to_string().starts_with("prefix: "), "{input}: {err}");
        }
    }

    #[test]
    fn token_ids_are_checked() {
        let id = ids::new_id(TOKEN_ID_PREFIX, 1);
        assert!(TokenId::parse(&id).is_ok());
        assert!(TokenId::parse("acct_01J9X4A7M3ABCDEFGHJKMNPQRS").is_err());
    }

    #[test]
    fn minted_debug_leaves_the_plaintext_out() {
        let minted = Minted {
            token_id: TokenId(ids::new_id(TOKEN_ID_PREFIX, 1)),
            plaintext: "lm_secretsecret".to_owned(),
            prefix: TokenPrefix::of("lm_secretsecret"),
            kind: TokenKind::Mcp,
            scopes: Scopes::ALL,
            label: String::new(),
            created_at: 1,
        };
        assert!(!format!("{minted:?}").contains("secretsecret"));
    }

    #[test]
    fn the_hash_is_hex_sha256() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
