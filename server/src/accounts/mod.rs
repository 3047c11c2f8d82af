//! Accounts: who a signed-in person or an agent's token is, and what the
//! account keeps (its identities, tokens, watchlist, address labels and
//! payments). This is the identity layer's domain; the credential
//! resolver, `ping`, the MCP tools and the REST routes are adapters over
//! it and live elsewhere.
//!
//! Every function takes a [`Store`] and, where it writes, the time as
//! `now_ms`: nothing here reads a clock, knows HTTP or sees the application
//! state, so the CLI, a worker and a request handler call the same code.
//! Values are parsed once at the edge into the newtypes below
//! ([`AccountId`], [`TokenKind`], [`Scopes`], [`TokenPrefix`], …) and every
//! refusal is one [`AccountsError`], which renders as the application error.
//!
//! An account is only an id and a label. People reach it through
//! identities (a Google account or a Solana wallet; one identity belongs to
//! one account, the first sign-in creates the account), agents and scripts
//! through tokens ([`tokens`]), which are stored only as hashes.

pub mod action;
pub mod api;
pub mod labels;
pub mod payments;
pub mod principal;
pub mod tax_settings;
pub mod tokens;
pub mod watchlist;

use std::fmt;

pub use action::Action;
pub use labels::{ADDRESS_LABEL_MAX, AddressCategory, address_labels, set_address_label};
pub use payments::{PaymentView, assign_payment, list_payments};
pub use principal::{AccountCaller, CredentialView, LinkReader, Principal, PrincipalView};
pub use tokens::{
    Credential, Minted, Revoked, Scope, Scopes, TokenId, TokenKind, TokenPrefix, TokenRef,
    TokenSummary, list_tokens, mint, mint_within, resolve, revoke, revoke_by_id, revoke_by_prefix,
    revoke_by_ref,
};
pub use watchlist::{
    LastScan, WALLET_LABEL_MAX, WatchedWallet, add_wallet, is_watching, list_wallets, remove_wallet,
};

use crate::{
    error::{AppError, Code},
    ids,
    solana::WalletAddress,
    store::{IdentityRecord, Store, StoreError},
};

/// The longest account label.
pub const ACCOUNT_LABEL_MAX: usize = 64;
/// The longest Google issuer, subject or email we keep.
const IDENTITY_FIELD_MAX: usize = 255;

/// Every refusal and failure of the accounts layer.
#[derive(Debug, thiserror::Error)]
pub enum AccountsError {
    /// An argument breaks a rule; the message names both.
    #[error("{argument}: {rule}")]
    Invalid {
        argument: &'static str,
        rule: String,
    },
    #[error("no account {0}")]
    NoAccount(String),
    #[error("this account has no live token {0}")]
    NoToken(String),
    #[error("no live token starts with {0}")]
    NoTokenWithPrefix(String),
    #[error("no live token has the id {0}")]
    NoLiveToken(String),
    #[error(
        "{count} live tokens start with {prefix}; give more of the prefix (up to {} characters)",
        tokens::PREFIX_LEN
    )]
    AmbiguousPrefix { prefix: String, count: usize },
    #[error("this {0} is already linked to another account; sign in with it to use that account")]
    IdentityTaken(&'static str),
    #[error("no payment {0}")]
    NoPayment(String),
    #[error("payment {0} belongs to another account")]
    PaymentTaken(String),
    /// The account holds as many of something as its quota allows.
    #[error("your account holds as many {what} as it may ({limit}, {setting}); {remedy}")]
    QuotaReached {
        what: &'static str,
        limit: u32,
        /// The setting that sets it.
        setting: &'static str,
        /// How to make room.
        remedy: &'static str,
    },
    /// A stored value does not parse: a bug or a hand-edited row.
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl AccountsError {
    fn invalid(argument: &'static str, rule: impl Into<String>) -> Self {
        Self::Invalid {
            argument,
            rule: rule.into(),
        }
    }
}

impl From<AccountsError> for AppError {
    fn from(err: AccountsError) -> Self {
        match &err {
            AccountsError::Invalid { .. } => AppError::invalid_params(err.to_string()),
            AccountsError::NoAccount(_)
            | AccountsError::NoToken(_)
            | AccountsError::NoTokenWithPrefix(_)
            | AccountsError::NoLiveToken(_)
            | AccountsError::NoPayment(_) => AppError::not_found(err.to_string()),
            AccountsError::AmbiguousPrefix { .. } | AccountsError::IdentityTaken(_) => {
                AppError::new(Code::Conflict, err.to_string())
            }
            AccountsError::PaymentTaken(_) => AppError::new(Code::Forbidden, err.to_string()),
            AccountsError::QuotaReached { limit, .. } => {
                AppError::quota_reached(err.to_string(), *limit)
            }
            AccountsError::Corrupt(_) | AccountsError::Store(_) => {
                AppError::internal("accounts", err)
            }
        }
    }
}

/// An account id: `acct_` and a ULID.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AccountId(String);

const ACCOUNT_PREFIX: &str = "acct_";

impl AccountId {
    pub fn parse(input: &str) -> Result<Self, AccountsError> {
        let input = input.trim();
        if ids::is_id(ACCOUNT_PREFIX, input) {
            Ok(Self(input.to_owned()))
        } else {
            Err(AccountsError::invalid(
                "account",
                "an account id is acct_ followed by 26 base32 characters",
            ))
        }
    }

    fn mint(now_ms: i64) -> Self {
        Self(ids::new_id(ACCOUNT_PREFIX, now_ms))
    }

    /// An id read back from the store.
    fn stored(id: String) -> Result<Self, AccountsError> {
        Self::parse(&id).map_err(|_| AccountsError::Corrupt(format!("account id {id:?}")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A label as people type it: trimmed, at most `max` characters, no
/// control characters. Empty is allowed (no label).
fn check_label(argument: &'static str, label: &str, max: usize) -> Result<String, AccountsError> {
    let label = label.trim();
    let chars = label.chars().count();
    if chars > max {
        return Err(AccountsError::invalid(
            argument,
            format!("at most {max} characters (this one has {chars})"),
        ));
    }
    if label.chars().any(char::is_control) {
        return Err(AccountsError::invalid(
            argument,
            "must not contain control characters (newlines, tabs, …)",
        ));
    }
    Ok(label.to_owned())
}

/// A way to sign in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Identity {
    /// A verified Google ID token: its `iss`, `sub` and `email`.
    Google {
        issuer: String,
        subject: String,
        email: Option<String>,
    },
    /// A wallet that signed our sign-in message.
    Solana { address: WalletAddress },
}

/// An identity and when it was linked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkedIdentity {
    pub identity: Identity,
    pub linked_at: i64,
}

impl Identity {
    fn kind(&self) -> &'static str {
        match self {
            Identity::Google { .. } => "google",
            Identity::Solana { .. } => "solana",
        }
    }

    /// What a person calls it, for messages.
    fn noun(&self) -> &'static str {
        match self {
            Identity::Google { .. } => "Google account",
            Identity::Solana { .. } => "Solana wallet",
        }
    }

    /// (issuer, subject) as stored: a wallet's issuer is `''`.
    fn key(&self) -> (&str, &str) {
        match self {
            Identity::Google {
                issuer, subject, ..
            } => (issuer.as_str(), subject.as_str()),
            Identity::Solana { address } => ("", address.as_str()),
        }
    }

    fn email(&self) -> Option<&str> {
        match self {
            Identity::Google { email, .. } => email.as_deref(),
            Identity::Solana { .. } => None,
        }
    }

    /// The label a first sign-in gives the account it creates.
    fn default_label(&self) -> String {
        let label = match self {
            Identity::Google { email, .. } => email.clone().unwrap_or_default(),
            Identity::Solana { address } => address.short(),
        };
        label.chars().take(ACCOUNT_LABEL_MAX).collect()
    }

    fn check(&self) -> Result<(), AccountsError> {
        if let Identity::Google {
            issuer,
            subject,
            email,
        } = self
        {
            for (argument, value) in [("issuer", issuer.as_str()), ("subject", subject.as_str())] {
                if value.trim().is_empty() {
                    return Err(AccountsError::invalid(argument, "must not be empty"));
                }
                if value.len() > IDENTITY_FIELD_MAX {
                    return Err(AccountsError::invalid(
                        argument,
                        format!("at most {IDENTITY_FIELD_MAX} bytes"),
                    ));
                }
            }
            if email.as_ref().is_some_and(|e| e.len() > IDENTITY_FIELD_MAX) {
                return Err(AccountsError::invalid(
                    "email",
                    format!("at most {IDENTITY_FIELD_MAX} bytes"),
                ));
            }
        }
        Ok(())
    }

    fn record(&self, account_id: &AccountId, now_ms: i64) -> IdentityRecord {
        let (issuer, subject) = self.key();
        IdentityRecord {
            account_id: account_id.as_str().to_owned(),
            kind: self.kind().to_owned(),
            issuer: issuer.to_owned(),
            subject: subject.to_owned(),
            email: self.email().map(str::to_owned),
            created_at: now_ms,
        }
    }

    fn stored(row: IdentityRecord) -> Result<LinkedIdentity, AccountsError> {
        let identity = match row.kind.as_str() {
            "google" => Identity::Google {
                issuer: row.issuer,
                subject: row.subject,
                email: row.email,
            },
            "solana" => Identity::Solana {
                address: WalletAddress::parse(&row.subject).map_err(|e| {
                    AccountsError::Corrupt(format!("solana identity {:?}: {e}", row.subject))
                })?,
            },
            other => return Err(AccountsError::Corrupt(format!("identity kind {other:?}"))),
        };
        Ok(LinkedIdentity {
            identity,
            linked_at: row.created_at,
        })
    }
}

/// Create an account with `label` (empty for none, at most
/// [`ACCOUNT_LABEL_MAX`] characters).
pub async fn create_account(
    store: &Store,
    now_ms: i64,
    label: &str,
) -> Result<AccountId, AccountsError> {
    let label = check_label("label", label, ACCOUNT_LABEL_MAX)?;
    let id = AccountId::mint(now_ms);
    store.insert_account(id.as_str(), &label, now_ms).await?;
    Ok(id)
}

/// Whether account `id` exists.
pub async fn account_exists(store: &Store, id: &AccountId) -> Result<bool, AccountsError> {
    Ok(store.account_exists(id.as_str()).await?)
}

/// Account `id`'s label (empty for none); `None` when there is no such account.
pub async fn account_label(store: &Store, id: &AccountId) -> Result<Option<String>, AccountsError> {
    Ok(store.account_label(id.as_str()).await?)
}

/// The account `identity` already signs in to, if any: `None` means its
/// first sign-in would create one (the caller may want to limit that).
pub async fn signs_in_to(
    store: &Store,
    identity: &Identity,
) -> Result<Option<AccountId>, AccountsError> {
    let (issuer, subject) = identity.key();
    match store.identity(identity.kind(), issuer, subject).await? {
        Some(row) => Ok(Some(AccountId::stored(row.account_id)?)),
        None => Ok(None),
    }
}

/// The account `identity` signs in to, and whether this sign-in created it
/// (the first sign-in of an identity does). A Google identity's email is
/// refreshed on every sign-in.
pub async fn sign_in(
    store: &Store,
    now_ms: i64,
    identity: Identity,
) -> Result<(AccountId, bool), AccountsError> {
    identity.check()?;
    let kind = identity.kind();
    let (issuer, subject) = identity.key();
    if let Some(row) = store.identity(kind, issuer, subject).await? {
        if matches!(identity, Identity::Google { .. }) && row.email.as_deref() != identity.email() {
            store
                .set_identity_email(kind, issuer, subject, identity.email())
                .await?;
        }
        return Ok((AccountId::stored(row.account_id)?, false));
    }
    let id = AccountId::mint(now_ms);
    let record = identity.record(&id, now_ms);
    if store
        .create_account_with_identity(id.as_str(), &identity.default_label(), &record)
        .await?
    {
        return Ok((id, true));
    }
    // A concurrent first sign-in of the same identity won: use its account.
    let row = store
        .identity(kind, issuer, subject)
        .await?
        .ok_or(StoreError::Vanished)?;
    Ok((AccountId::stored(row.account_id)?, false))
}

/// Link another identity to `account`, so it signs in there too. True when
/// newly linked, false when it already was; refused when the identity
/// belongs to another account.
pub async fn link_identity(
    store: &Store,
    now_ms: i64,
    account: &AccountId,
    identity: Identity,
) -> Result<bool, AccountsError> {
    identity.check()?;
    if !store.account_exists(account.as_str()).await? {
        return Err(AccountsError::NoAccount(account.to_string()));
    }
    if store
        .insert_identity(&identity.record(account, now_ms))
        .await?
    {
        return Ok(true);
    }
    let (issuer, subject) = identity.key();
    let owner = store
        .identity(identity.kind(), issuer, subject)
        .await?
        .ok_or(StoreError::Vanished)?;
    if owner.account_id == account.as_str() {
        Ok(false)
    } else {
        Err(AccountsError::IdentityTaken(identity.noun()))
    }
}

/// An account's identities, oldest first.
pub async fn identities(
    store: &Store,
    account: &AccountId,
) -> Result<Vec<LinkedIdentity>, AccountsError> {
    store
        .identities_of(account.as_str())
        .await?
        .into_iter()
        .map(Identity::stored)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_ids_are_prefixed_ulids() {
        let id = AccountId::mint(1_700_000_000_000);
        assert!(id.as_str().starts_with("acct_"));
        assert_eq!(AccountId::parse(id.as_str()).unwrap(), id);
    }

    #[test]
    fn an_account_id_without_its_prefix_is_refused() {
        for input in [
            "",
            "acct_",
            "tok_01J9X4A7M3ABCDEFGHJKMNPQRS",
            "01J9X4A7M3ABCDEFGHJKMNPQRS",
        ] {
            let err = AccountId::parse(input).unwrap_err();
            assert!(err.to_string().starts_with("account: "), "{input}: {err}");
        }
    }

    #[test]
    fn labels_are_trimmed_and_bounded_in_characters() {
        assert_eq!(check_label("label", "  mine ", 8).unwrap(), "mine");
        assert_eq!(check_label("label", "ééééé", 5).unwrap(), "ééééé");
        let err = check_label("label", "ééééé", 4).unwrap_err();
        assert_eq!(
            err.to_string(),
            "label: at most 4 characters (this one has 5)"
        );
    }

    #[test]
    fn a_label_with_a_newline_is_refused() {
        let err = check_label("label", "a\nb", 8).unwrap_err();
        assert!(err.to_string().contains("control characters"), "{err}");
    }

    #[test]
    fn an_empty_google_subject_is_refused() {
        let identity = Identity::Google {
            issuer: "https://accounts.google.com".to_owned(),
            subject: " ".to_owned(),
            email: None,
        };
        assert_eq!(
            identity.check().unwrap_err().to_string(),
            "subject: must not be empty"
        );
    }

    #[test]
    fn errors_render_with_their_wire_codes() {
        let cases = [
            (AccountsError::invalid("scopes", "x"), Code::InvalidParams),
            (AccountsError::NoAccount("acct_x".into()), Code::NotFound),
            (
                AccountsError::IdentityTaken("Google account"),
                Code::Conflict,
            ),
            (
                AccountsError::AmbiguousPrefix {
                    prefix: "lm_ab".into(),
                    count: 2,
                },
                Code::Conflict,
            ),
            (AccountsError::PaymentTaken("pay_x".into()), Code::Forbidden),
            (AccountsError::Store(StoreError::Vanished), Code::Internal),
        ];
        for (err, code) in cases {
            assert_eq!(AppError::from(err).code(), code);
        }
    }

    #[test]
    fn an_internal_error_hides_its_cause() {
        let err = AppError::from(AccountsError::Corrupt("account id \"secret\"".into()));
        assert!(!err.message().contains("secret"));
    }
}
