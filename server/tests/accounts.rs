//! The accounts layer against a real store: tokens (mint, resolve, revoke,
//! hash-only storage, last-used throttling), identities (one identity, one
//! account), the watchlist, address labels and an account's payments.
//!
//! Each test gets a fresh database: SQLite in a temporary directory, or,
//! when `TEST_DATABASE_URL` names a PostgreSQL server, a database created
//! on it and dropped afterwards (the same rule as `tests/api/helpers.rs`),
//! so running the binary twice covers both.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use server::{
    accounts::{
        self, AccountId, AccountsError, AddressCategory, Identity, Scope, Scopes, TokenKind,
        TokenPrefix,
    },
    config::DatabaseConfig,
    error::Code,
    ledger::{Leg, OperationType},
    solana::WalletAddress,
    store::{PaymentRecord, QuoteRecord, Store, TokenRecord, TransactionLegs},
};
use sqlx::{Connection, Executor, PgConnection, Row};

const T0: i64 = 1_800_000_000_000;
const MINUTE: i64 = 60_000;

struct Db {
    store: Store,
    url: String,
    guard: Guard,
}

enum Guard {
    Sqlite(tempfile::TempDir),
    Postgres { admin_url: String, name: String },
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Guard::Postgres { admin_url, name } = self {
            let (admin_url, name) = (admin_url.clone(), name.clone());
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async {
                    if let Ok(mut admin) = PgConnection::connect(&admin_url).await {
                        let sql = format!(r#"DROP DATABASE IF EXISTS "{name}" WITH (FORCE)"#);
                        let _ = admin.execute(sql.as_str()).await;
                    }
                });
            })
            .join();
        }
    }
}

async fn db() -> Db {
    let (url, guard) = match std::env::var("TEST_DATABASE_URL") {
        Ok(admin_url) if admin_url.starts_with("postgres") => {
            use rand::Rng;
            let suffix: String = (0..12)
                .map(|_| char::from(b'a' + rand::thread_rng().gen_range(0..26)))
                .collect();
            let name = format!("ledger_test_{suffix}");
            let mut admin = PgConnection::connect(&admin_url).await.unwrap();
            admin
                .execute(format!(r#"CREATE DATABASE "{name}""#).as_str())
                .await
                .unwrap();
            let (server, _) = admin_url.rsplit_once('/').unwrap();
            (
                format!("{server}/{name}"),
                Guard::Postgres { admin_url, name },
            )
        }
        _ => {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}/ledger.db", dir.path().display());
            (url, Guard::Sqlite(dir))
        }
    };
    let config = DatabaseConfig {
        max_connections: 4,
        busy_timeout_ms: 5_000,
    };
    let store = Store::open(&url, &config).await.unwrap();
    Db { store, url, guard }
}

fn wallet(n: u8) -> WalletAddress {
    WalletAddress::parse(&bs58::encode([n; 32]).into_string()).unwrap()
}

fn google(subject: &str) -> Identity {
    Identity::Google {
        issuer: "https://accounts.google.com".to_owned(),
        subject: subject.to_owned(),
        email: Some(format!("{subject}@example.com")),
    }
}

async fn account(db: &Db) -> AccountId {
    accounts::create_account(&db.store, T0, "test")
        .await
        .unwrap()
}

fn code(err: AccountsError) -> Code {
    server::error::AppError::from(err).code()
}

// Tokens ---------------------------------------------------------------

#[tokio::test]
async fn a_minted_token_resolves_to_its_account_kind_and_scopes() {
    let db = db().await;
    let acct = account(&db).await;
    for (kind, prefix, scopes) in [
        (TokenKind::Mcp, "lm_", "read,scan"),
        (TokenKind::Api, "lk_", "read"),
    ] {
        let scopes = Scopes::parse(scopes).unwrap();
        let minted = accounts::mint(&db.store, T0, &acct, kind, scopes, "agent")
            .await
            .unwrap();
        assert!(minted.plaintext.starts_with(prefix), "{}", minted.plaintext);
        assert!(minted.plaintext.starts_with(minted.prefix.as_str()));
        assert_eq!(minted.prefix.as_str().len(), 11);
        // 32 random bytes in base58.
        let body = &minted.plaintext[3..];
        assert_eq!(bs58::decode(body).into_vec().unwrap().len(), 32);
        let credential = accounts::resolve(&db.store, T0, &minted.plaintext)
            .await
            .unwrap()
            .expect("resolves");
        assert_eq!(credential.account_id, acct);
        assert_eq!(credential.token_id, minted.token_id);
        assert_eq!(credential.kind, kind);
        assert_eq!(credential.scopes, scopes);
    }
}

#[tokio::test]
async fn two_minted_tokens_differ() {
    let db = db().await;
    let acct = account(&db).await;
    let a = accounts::mint(&db.store, T0, &acct, TokenKind::Mcp, Scopes::ALL, "")
        .await
        .unwrap();
    let b = accounts::mint(&db.store, T0, &acct, TokenKind::Mcp, Scopes::ALL, "")
        .await
        .unwrap();
    assert_ne!(a.plaintext, b.plaintext);
    assert_ne!(a.token_id, b.token_id);
}

#[tokio::test]
async fn a_revoked_token_resolves_none_on_the_next_call() {
    let db = db().await;
    let acct = account(&db).await;
    let minted = accounts::mint(&db.store, T0, &acct, TokenKind::Mcp, Scopes::ALL, "")
        .await
        .unwrap();
    assert!(
        accounts::resolve(&db.store, T0, &minted.plaintext)
            .await
            .unwrap()
            .is_some()
    );
    accounts::revoke(&db.store, T0 + 1, &acct, &minted.token_id)
        .await
        .unwrap();
    assert_eq!(
        accounts::resolve(&db.store, T0 + 2, &minted.plaintext)
            .await
            .unwrap(),
        None
    );
    // Revoking again is refused: it is no longer a live token.
    let err = accounts::revoke(&db.store, T0 + 3, &acct, &minted.token_id)
        .await
        .unwrap_err();
    assert_eq!(code(err), Code::NotFound);
}

#[tokio::test]
async fn an_unknown_token_of_the_right_shape_resolves_none() {
    let db = db().await;
    let unknown = format!("lm_{}", bs58::encode([7u8; 32]).into_string());
    assert_eq!(
        accounts::resolve(&db.store, T0, &unknown).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn a_token_under_the_other_kinds_prefix_resolves_none() {
    let db = db().await;
    let acct = account(&db).await;
    let minted = accounts::mint(&db.store, T0, &acct, TokenKind::Mcp, Scopes::ALL, "")
        .await
        .unwrap();
    let swapped = minted.plaintext.replacen("lm_", "lk_", 1);
    assert_eq!(
        accounts::resolve(&db.store, T0, &swapped).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn a_bearer_not_shaped_like_a_token_resolves_none() {
    let db = db().await;
    let acct = account(&db).await;
    let minted = accounts::mint(&db.store, T0, &acct, TokenKind::Api, Scopes::ALL, "")
        .await
        .unwrap();
    let body = &minted.plaintext[3..];
    for bearer in [
        String::new(),
        body.to_owned(),
        format!("xx_{body}"),
        format!("{}0", minted.plaintext),
        minted.plaintext[..20].to_owned(),
        format!(" {}", minted.plaintext),
        minted.plaintext.to_uppercase(),
    ] {
        assert_eq!(
            accounts::resolve(&db.store, T0, &bearer).await.unwrap(),
            None,
            "{bearer:?}"
        );
    }
}

/// A copy of the database holds no usable token: neither the plaintext
/// nor its random part is stored anywhere, only its SHA-256.
#[tokio::test]
async fn the_database_holds_only_the_hash_of_a_token() {
    let db = db().await;
    let acct = account(&db).await;
    let minted = accounts::mint(&db.store, T0, &acct, TokenKind::Mcp, Scopes::ALL, "label")
        .await
        .unwrap();
    accounts::resolve(&db.store, T0, &minted.plaintext)
        .await
        .unwrap()
        .unwrap();
    let body = minted.plaintext[3..].to_owned();
    let secret_part = &body[8..]; // what the display prefix does not show
    let dump = database_text(&db).await;
    assert!(!dump.is_empty());
    assert!(!dump.contains(secret_part), "the plaintext is stored");
    use sha2::Digest;
    let hash: String = sha2::Sha256::digest(minted.plaintext.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(dump.contains(&hash), "the hash is what is stored");
}

/// Every byte the database keeps, as text: the SQLite files (with the
/// write-ahead log), or every row of every PostgreSQL table.
async fn database_text(db: &Db) -> String {
    match &db.guard {
        Guard::Sqlite(dir) => {
            let mut text = String::new();
            for entry in std::fs::read_dir(dir.path()).unwrap() {
                let bytes = std::fs::read(entry.unwrap().path()).unwrap();
                text.push_str(&String::from_utf8_lossy(&bytes));
            }
            text
        }
        Guard::Postgres { .. } => {
            let mut conn = PgConnection::connect(&db.url).await.unwrap();
            let tables: Vec<String> = sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = 'public'",
            )
            .fetch_all(&mut conn)
            .await
            .unwrap();
            let mut text = String::new();
            for table in tables {
                let rows = sqlx::query(&format!(r#"SELECT t::text FROM "{table}" t"#))
                    .fetch_all(&mut conn)
                    .await
                    .unwrap();
                for row in rows {
                    text.push_str(&row.get::<String, _>(0));
                }
            }
            text
        }
    }
}

#[tokio::test]
async fn last_used_is_written_at_most_once_a_minute() {
    let db = db().await;
    let acct = account(&db).await;
    let minted = accounts::mint(&db.store, T0, &acct, TokenKind::Mcp, Scopes::ALL, "")
        .await
        .unwrap();
    let last_used =
        || async { accounts::list_tokens(&db.store, &acct).await.unwrap()[0].last_used_at };
    assert_eq!(last_used().await, None);
    let resolve = |at: i64| {
        let plaintext = minted.plaintext.clone();
        let store = db.store.clone();
        async move {
            accounts::resolve(&store, at, &plaintext)
                .await
                .unwrap()
                .unwrap()
        }
    };
    resolve(T0 + 1_000).await;
    assert_eq!(last_used().await, Some(T0 + 1_000));
    resolve(T0 + 30_000).await;
    resolve(T0 + 1_000 + MINUTE - 1).await;
    assert_eq!(
        last_used().await,
        Some(T0 + 1_000),
        "written within a minute"
    );
    resolve(T0 + 1_000 + MINUTE).await;
    assert_eq!(last_used().await, Some(T0 + 1_000 + MINUTE));
}

#[tokio::test]
async fn minting_for_an_unknown_account_is_refused() {
    let db = db().await;
    let ghost = AccountId::parse("acct_01J9X4A7M3ABCDEFGHJKMNPQRS").unwrap();
    let err = accounts::mint(&db.store, T0, &ghost, TokenKind::Mcp, Scopes::ALL, "")
        .await
        .unwrap_err();
    assert!(matches!(err, AccountsError::NoAccount(_)), "{err}");
    assert_eq!(code(err), Code::NotFound);
}

#[tokio::test]
async fn a_token_label_over_64_characters_is_refused() {
    let db = db().await;
    let acct = account(&db).await;
    let ok = "é".repeat(64);
    accounts::mint(&db.store, T0, &acct, TokenKind::Api, Scopes::ALL, &ok)
        .await
        .unwrap();
    let err = accounts::mint(
        &db.store,
        T0,
        &acct,
        TokenKind::Api,
        Scopes::ALL,
        &"a".repeat(65),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "label: at most 64 characters (this one has 65)"
    );
    assert_eq!(code(err), Code::InvalidParams);
}

/// What an operator or a portal form types is refused with the argument
/// and the rule named, as invalid_params.
#[tokio::test]
async fn bad_kind_scopes_and_ids_are_refused_by_name() {
    for (err, argument) in [
        (TokenKind::parse("admin").unwrap_err(), "kind"),
        (Scopes::parse("").unwrap_err(), "scopes"),
        (Scopes::parse("read,write").unwrap_err(), "scopes"),
        (Scopes::parse("read scan").unwrap_err(), "scopes"),
        (AccountId::parse("acct_nope").unwrap_err(), "account"),
        (TokenPrefix::parse("lm_").unwrap_err(), "prefix"),
    ] {
        let rendered = server::error::AppError::from(err);
        assert_eq!(rendered.code(), Code::InvalidParams);
        assert!(
            rendered.message().starts_with(&format!("{argument}: ")),
            "{}",
            rendered.message()
        );
    }
}

#[tokio::test]
async fn list_tokens_shows_the_live_tokens_of_the_account_only() {
    let db = db().await;
    let acct = account(&db).await;
    let other = account(&db).await;
    let read = Scopes::parse("read").unwrap();
    let first = accounts::mint(&db.store, T0, &acct, TokenKind::Mcp, read, "laptop")
        .await
        .unwrap();
    let second = accounts::mint(&db.store, T0 + 1, &acct, TokenKind::Api, Scopes::ALL, "ci")
        .await
        .unwrap();
    accounts::mint(&db.store, T0, &other, TokenKind::Mcp, Scopes::ALL, "theirs")
        .await
        .unwrap();
    let listed = accounts::list_tokens(&db.store, &acct).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].token_id, second.token_id, "newest first");
    assert_eq!(listed[1].label, "laptop");
    assert_eq!(listed[1].kind, TokenKind::Mcp);
    assert_eq!(listed[1].scopes, read);
    assert!(!listed[1].scopes.allows(Scope::Scan));
    assert_eq!(listed[1].prefix, first.prefix);
    assert_eq!(listed[1].created_at, T0);
    accounts::revoke(&db.store, T0 + 2, &acct, &first.token_id)
        .await
        .unwrap();
    let listed = accounts::list_tokens(&db.store, &acct).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].token_id, second.token_id);
}

#[tokio::test]
async fn revoking_another_accounts_token_is_refused_and_leaves_it_live() {
    let db = db().await;
    let owner = account(&db).await;
    let intruder = account(&db).await;
    let minted = accounts::mint(&db.store, T0, &owner, TokenKind::Mcp, Scopes::ALL, "")
        .await
        .unwrap();
    let err = accounts::revoke(&db.store, T0, &intruder, &minted.token_id)
        .await
        .unwrap_err();
    assert_eq!(code(err), Code::NotFound);
    assert!(
        accounts::resolve(&db.store, T0, &minted.plaintext)
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn revoke_by_prefix_revokes_the_one_token_it_names() {
    let db = db().await;
    let acct = account(&db).await;
    let keep = accounts::mint(&db.store, T0, &acct, TokenKind::Mcp, Scopes::ALL, "keep")
        .await
        .unwrap();
    let gone = accounts::mint(&db.store, T0, &acct, TokenKind::Mcp, Scopes::ALL, "gone")
        .await
        .unwrap();
    let prefix = TokenPrefix::parse(gone.prefix.as_str()).unwrap();
    let revoked = accounts::revoke_by_prefix(&db.store, T0 + 1, &prefix)
        .await
        .unwrap();
    assert_eq!(revoked.token_id, gone.token_id);
    assert_eq!(revoked.account_id, acct);
    assert_eq!(revoked.label, "gone");
    assert_eq!(
        accounts::resolve(&db.store, T0 + 2, &gone.plaintext)
            .await
            .unwrap(),
        None
    );
    assert!(
        accounts::resolve(&db.store, T0 + 2, &keep.plaintext)
            .await
            .unwrap()
            .is_some()
    );
}

/// Two stored tokens that share their first characters (written straight
/// to the store: random ones would take thousands of mints to collide).
async fn two_tokens_sharing_a_prefix(db: &Db, acct: &AccountId) {
    for (i, prefix) in ["lm_AAAAbbbb", "lm_AAAAcccc"].into_iter().enumerate() {
        db.store
            .insert_token(&TokenRecord {
                id: server::ids::new_id("tok_", T0 + i as i64),
                account_id: acct.as_str().to_owned(),
                kind: "mcp".to_owned(),
                prefix: prefix.to_owned(),
                hash: format!("{i:064}"),
                scopes: "read".to_owned(),
                label: String::new(),
                created_at: T0,
                last_used_at: None,
                revoked_at: None,
            })
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn revoke_by_prefix_refuses_an_ambiguous_prefix() {
    let db = db().await;
    let acct = account(&db).await;
    two_tokens_sharing_a_prefix(&db, &acct).await;
    let err = accounts::revoke_by_prefix(&db.store, T0, &TokenPrefix::parse("lm_AAAA").unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(err, AccountsError::AmbiguousPrefix { count: 2, .. }),
        "{err}"
    );
    assert_eq!(code(err), Code::Conflict);
    assert_eq!(
        accounts::list_tokens(&db.store, &acct).await.unwrap().len(),
        2
    );
    // A longer prefix names one.
    accounts::revoke_by_prefix(&db.store, T0, &TokenPrefix::parse("lm_AAAAb").unwrap())
        .await
        .unwrap();
    let left = accounts::list_tokens(&db.store, &acct).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].prefix.as_str(), "lm_AAAAcccc");
}

#[tokio::test]
async fn revoke_by_prefix_refuses_a_prefix_no_live_token_has() {
    let db = db().await;
    let acct = account(&db).await;
    two_tokens_sharing_a_prefix(&db, &acct).await;
    // `_` is no wildcard, and another kind's prefix is another token.
    for prefix in ["lm_BBBB", "lk_AAAA"] {
        let err = accounts::revoke_by_prefix(&db.store, T0, &TokenPrefix::parse(prefix).unwrap())
            .await
            .unwrap_err();
        assert!(matches!(err, AccountsError::NoTokenWithPrefix(_)), "{err}");
        assert_eq!(code(err), Code::NotFound);
    }
}

// Identities -----------------------------------------------------------

#[tokio::test]
async fn the_first_sign_in_creates_the_account_and_the_next_finds_it() {
    let db = db().await;
    for identity in [google("alice"), Identity::Solana { address: wallet(1) }] {
        let (first, created) = accounts::sign_in(&db.store, T0, identity.clone())
            .await
            .unwrap();
        assert!(created);
        let (again, created) = accounts::sign_in(&db.store, T0 + 1, identity.clone())
            .await
            .unwrap();
        assert!(!created);
        assert_eq!(again, first);
        let linked = accounts::identities(&db.store, &first).await.unwrap();
        assert_eq!(linked.len(), 1);
        assert_eq!(linked[0].identity, identity);
        assert_eq!(linked[0].linked_at, T0);
    }
}

#[tokio::test]
async fn racing_first_sign_ins_of_one_identity_create_one_account() {
    let db = db().await;
    let identity = Identity::Solana { address: wallet(2) };
    let (a, b) = tokio::join!(
        accounts::sign_in(&db.store, T0, identity.clone()),
        accounts::sign_in(&db.store, T0, identity.clone()),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.0, b.0);
    assert!(a.1 ^ b.1, "exactly one created it: {a:?} {b:?}");
}

#[tokio::test]
async fn a_google_subject_is_its_issuers_alone() {
    let db = db().await;
    let (a, _) = accounts::sign_in(&db.store, T0, google("sub1"))
        .await
        .unwrap();
    let other_issuer = Identity::Google {
        issuer: "accounts.google.com".to_owned(),
        subject: "sub1".to_owned(),
        email: None,
    };
    let (b, created) = accounts::sign_in(&db.store, T0, other_issuer)
        .await
        .unwrap();
    assert!(created);
    assert_ne!(a, b);
}

#[tokio::test]
async fn a_google_sign_in_refreshes_the_email() {
    let db = db().await;
    let (acct, _) = accounts::sign_in(&db.store, T0, google("bob"))
        .await
        .unwrap();
    let renamed = Identity::Google {
        issuer: "https://accounts.google.com".to_owned(),
        subject: "bob".to_owned(),
        email: Some("robert@example.com".to_owned()),
    };
    accounts::sign_in(&db.store, T0 + 1, renamed.clone())
        .await
        .unwrap();
    let linked = accounts::identities(&db.store, &acct).await.unwrap();
    assert_eq!(linked[0].identity, renamed);
}

#[tokio::test]
async fn a_linked_identity_signs_in_to_the_account_it_was_linked_to() {
    let db = db().await;
    let (acct, _) = accounts::sign_in(&db.store, T0, google("carol"))
        .await
        .unwrap();
    let wallet_identity = Identity::Solana { address: wallet(3) };
    assert!(
        accounts::link_identity(&db.store, T0 + 1, &acct, wallet_identity.clone())
            .await
            .unwrap()
    );
    let (signed_in, created) = accounts::sign_in(&db.store, T0 + 2, wallet_identity.clone())
        .await
        .unwrap();
    assert_eq!(signed_in, acct);
    assert!(!created);
    let linked = accounts::identities(&db.store, &acct).await.unwrap();
    assert_eq!(
        linked
            .iter()
            .map(|l| l.identity.clone())
            .collect::<Vec<_>>(),
        vec![google("carol"), wallet_identity]
    );
}

#[tokio::test]
async fn linking_an_identity_again_to_its_own_account_changes_nothing() {
    let db = db().await;
    let (acct, _) = accounts::sign_in(&db.store, T0, google("dave"))
        .await
        .unwrap();
    assert!(
        !accounts::link_identity(&db.store, T0, &acct, google("dave"))
            .await
            .unwrap()
    );
    assert_eq!(
        accounts::identities(&db.store, &acct).await.unwrap().len(),
        1
    );
}

#[tokio::test]
async fn linking_an_identity_of_another_account_is_refused() {
    let db = db().await;
    let (theirs, _) = accounts::sign_in(&db.store, T0, Identity::Solana { address: wallet(4) })
        .await
        .unwrap();
    let mine = account(&db).await;
    let err = accounts::link_identity(
        &db.store,
        T0,
        &mine,
        Identity::Solana { address: wallet(4) },
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "this Solana wallet is already linked to another account; sign in with it to use that account"
    );
    assert_eq!(code(err), Code::Conflict);
    assert!(
        accounts::identities(&db.store, &mine)
            .await
            .unwrap()
            .is_empty()
    );
    let (still, _) = accounts::sign_in(&db.store, T0, Identity::Solana { address: wallet(4) })
        .await
        .unwrap();
    assert_eq!(still, theirs);
}

#[tokio::test]
async fn linking_to_an_unknown_account_is_refused() {
    let db = db().await;
    let ghost = AccountId::parse("acct_01J9X4A7M3ABCDEFGHJKMNPQRS").unwrap();
    let err = accounts::link_identity(&db.store, T0, &ghost, google("erin"))
        .await
        .unwrap_err();
    assert_eq!(code(err), Code::NotFound);
}

#[tokio::test]
async fn an_account_label_over_64_characters_is_refused() {
    let db = db().await;
    let err = accounts::create_account(&db.store, T0, &"x".repeat(65))
        .await
        .unwrap_err();
    assert_eq!(code(err), Code::InvalidParams);
}

// Watchlist ------------------------------------------------------------

#[tokio::test]
async fn a_watched_wallet_is_listed_with_no_scan_and_no_legs() {
    let db = db().await;
    let acct = account(&db).await;
    accounts::add_wallet(&db.store, T0, &acct, wallet(10), "cold storage")
        .await
        .unwrap();
    assert!(
        accounts::is_watching(&db.store, &acct, &wallet(10))
            .await
            .unwrap()
    );
    assert!(
        !accounts::is_watching(&db.store, &acct, &wallet(11))
            .await
            .unwrap()
    );
    let listed = accounts::list_wallets(&db.store, &acct).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].address, wallet(10));
    assert_eq!(listed[0].label, "cold storage");
    assert_eq!(listed[0].added_at, T0);
    assert_eq!(listed[0].last_scan, None);
    assert_eq!(listed[0].ledger_legs, 0);
}

#[tokio::test]
async fn adding_a_watched_wallet_again_replaces_its_label_and_keeps_added_at() {
    let db = db().await;
    let acct = account(&db).await;
    accounts::add_wallet(&db.store, T0, &acct, wallet(10), "old")
        .await
        .unwrap();
    accounts::add_wallet(&db.store, T0 + 5, &acct, wallet(10), "new")
        .await
        .unwrap();
    let listed = accounts::list_wallets(&db.store, &acct).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].label, "new");
    assert_eq!(listed[0].added_at, T0);
}

#[tokio::test]
async fn a_wallet_label_over_128_characters_is_refused() {
    let db = db().await;
    let acct = account(&db).await;
    accounts::add_wallet(&db.store, T0, &acct, wallet(10), &"w".repeat(128))
        .await
        .unwrap();
    let err = accounts::add_wallet(&db.store, T0, &acct, wallet(11), &"w".repeat(129))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "label: at most 128 characters (this one has 129)"
    );
    assert_eq!(code(err), Code::InvalidParams);
    assert!(
        !accounts::is_watching(&db.store, &acct, &wallet(11))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn a_removed_wallet_is_no_longer_watched() {
    let db = db().await;
    let acct = account(&db).await;
    accounts::add_wallet(&db.store, T0, &acct, wallet(10), "")
        .await
        .unwrap();
    assert!(
        accounts::remove_wallet(&db.store, &acct, &wallet(10))
            .await
            .unwrap()
    );
    assert!(
        !accounts::is_watching(&db.store, &acct, &wallet(10))
            .await
            .unwrap()
    );
    assert!(
        !accounts::remove_wallet(&db.store, &acct, &wallet(10))
            .await
            .unwrap()
    );
    assert!(
        accounts::list_wallets(&db.store, &acct)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_watchlist_is_its_accounts_alone() {
    let db = db().await;
    let a = account(&db).await;
    let b = account(&db).await;
    accounts::add_wallet(&db.store, T0, &a, wallet(10), "")
        .await
        .unwrap();
    assert!(
        !accounts::is_watching(&db.store, &b, &wallet(10))
            .await
            .unwrap()
    );
    assert!(
        accounts::list_wallets(&db.store, &b)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        !accounts::remove_wallet(&db.store, &b, &wallet(10))
            .await
            .unwrap()
    );
    assert!(
        accounts::is_watching(&db.store, &a, &wallet(10))
            .await
            .unwrap()
    );
}

async fn quote(db: &Db, address: &str, at: i64) -> String {
    let id = server::ids::new_id("q_", at);
    db.store
        .insert_quote(&QuoteRecord {
            id: id.clone(),
            address: address.to_owned(),
            scope: "full".to_owned(),
            tier: "small".to_owned(),
            price_micros: 10_000,
            signatures: Some(3),
            created_at: at,
            expires_at: at + 600_000,
        })
        .await
        .unwrap();
    id
}

fn leg(signature: &str, index: u32) -> Leg {
    Leg {
        signature: signature.to_owned(),
        slot: 100,
        block_time: Some(1_700_000_000),
        index,
        operation_type: OperationType::TransferIn,
        mint: "sol".to_owned(),
        amount: 1_000,
        decimals: 9,
        counterparties: Vec::new(),
        position: None,
        venue: None,
        router: None,
    }
}

#[tokio::test]
async fn list_wallets_shows_the_newest_scan_and_the_ledger_size() {
    let db = db().await;
    let acct = account(&db).await;
    let scanned = wallet(20);
    let address = scanned.as_str();
    accounts::add_wallet(&db.store, T0, &acct, scanned.clone(), "")
        .await
        .unwrap();
    accounts::add_wallet(&db.store, T0 + 1, &acct, wallet(21), "never scanned")
        .await
        .unwrap();

    // A finished scan and its legs.
    let q = quote(&db, address, T0).await;
    let first = server::ids::new_id("job_", T0);
    db.store
        .create_scan_job(&server::store::NewScanJob {
            id: &first,
            address,
            scope: "full",
            quote_id: &q,
            stop_at: None,
            account_id: None,
            now: T0,
        })
        .await
        .unwrap();
    db.store.claim_job("w", T0, 60_000).await.unwrap().unwrap();
    let legs = [leg("s1", 0), leg("s1", 1), leg("s2", 0)];
    db.store
        .write_legs(
            address,
            &[
                TransactionLegs {
                    signature: "s1",
                    slot: 100,
                    block_time: Some(1_700_000_000),
                    failed: false,
                    legs: &legs[..2],
                },
                TransactionLegs {
                    signature: "s2",
                    slot: 100,
                    block_time: Some(1_700_000_000),
                    failed: false,
                    legs: &legs[2..],
                },
            ],
        )
        .await
        .unwrap();
    assert!(
        db.store
            .finish_job(&first, "w", "completed", None, T0 + 10)
            .await
            .unwrap()
    );
    let listed = accounts::list_wallets(&db.store, &acct).await.unwrap();
    let scan = listed[0].last_scan.clone().expect("scanned");
    assert_eq!(scan.job_id, first);
    assert_eq!(scan.status, "completed");
    assert_eq!(scan.finished_at, Some(T0 + 10));
    assert_eq!(listed[0].ledger_legs, 3);
    assert_eq!(listed[1].address, wallet(21));
    assert_eq!(listed[1].last_scan, None);

    // A newer scan, still running, is the one shown.
    let q = quote(&db, address, T0 + 20).await;
    let second = server::ids::new_id("job_", T0 + 20);
    db.store
        .create_scan_job(&server::store::NewScanJob {
            id: &second,
            address,
            scope: "incremental",
            quote_id: &q,
            stop_at: None,
            account_id: None,
            now: T0 + 20,
        })
        .await
        .unwrap();
    let listed = accounts::list_wallets(&db.store, &acct).await.unwrap();
    let scan = listed[0].last_scan.clone().expect("scanned");
    assert_eq!(scan.job_id, second);
    assert_eq!(scan.status, "running");
    assert_eq!(scan.finished_at, None);
    assert_eq!(listed[0].ledger_legs, 3);
}

// Address labels -------------------------------------------------------

#[tokio::test]
async fn an_address_label_is_set_replaced_and_removed_by_an_empty_label() {
    let db = db().await;
    let acct = account(&db).await;
    accounts::set_address_label(
        &db.store,
        T0,
        &acct,
        wallet(30),
        "Coinbase deposit",
        AddressCategory::Exchange,
        1000,
    )
    .await
    .unwrap();
    let labels = accounts::address_labels(&db.store, &acct).await.unwrap();
    assert_eq!(
        labels.get(wallet(30).as_str()),
        Some(&("Coinbase deposit".to_owned(), AddressCategory::Exchange))
    );
    accounts::set_address_label(
        &db.store,
        T0 + 1,
        &acct,
        wallet(30),
        "my other wallet",
        AddressCategory::OwnWallet,
        1000,
    )
    .await
    .unwrap();
    let labels = accounts::address_labels(&db.store, &acct).await.unwrap();
    assert_eq!(labels.len(), 1);
    assert_eq!(
        labels[wallet(30).as_str()],
        ("my other wallet".to_owned(), AddressCategory::OwnWallet)
    );
    accounts::set_address_label(
        &db.store,
        T0 + 2,
        &acct,
        wallet(30),
        "  ",
        AddressCategory::External,
        1000,
    )
    .await
    .unwrap();
    assert!(
        accounts::address_labels(&db.store, &acct)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn an_address_label_over_64_characters_is_refused() {
    let db = db().await;
    let acct = account(&db).await;
    accounts::set_address_label(
        &db.store,
        T0,
        &acct,
        wallet(30),
        &"l".repeat(64),
        AddressCategory::Dex,
        1000,
    )
    .await
    .unwrap();
    let err = accounts::set_address_label(
        &db.store,
        T0,
        &acct,
        wallet(31),
        &"l".repeat(65),
        AddressCategory::Dex,
        1000,
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "label: at most 64 characters (this one has 65)"
    );
    assert_eq!(code(err), Code::InvalidParams);
    assert_eq!(
        accounts::address_labels(&db.store, &acct)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn address_labels_are_their_accounts_alone() {
    let db = db().await;
    let a = account(&db).await;
    let b = account(&db).await;
    accounts::set_address_label(
        &db.store,
        T0,
        &a,
        wallet(30),
        "mine",
        AddressCategory::OwnWallet,
        1000,
    )
    .await
    .unwrap();
    assert!(
        accounts::address_labels(&db.store, &b)
            .await
            .unwrap()
            .is_empty()
    );
    // Removing through another account removes nothing of a's.
    accounts::set_address_label(
        &db.store,
        T0,
        &b,
        wallet(30),
        "",
        AddressCategory::External,
        1000,
    )
    .await
    .unwrap();
    assert_eq!(
        accounts::address_labels(&db.store, &a).await.unwrap().len(),
        1
    );
}

// Payments -------------------------------------------------------------

async fn payment(db: &Db, n: u8, at: i64) -> String {
    let payer = wallet(40 + n);
    let q = quote(db, wallet(50).as_str(), at).await;
    let id = server::ids::new_id("pay_", at);
    let record = PaymentRecord {
        id: id.clone(),
        quote_id: q,
        message_hash: format!("{n:064}"),
        signature: format!("sig{n}"),
        wire_tx: "AA==".to_owned(),
        payer: payer.to_string(),
        network: "solana-devnet".to_owned(),
        asset: "usdc".to_owned(),
        pay_to: wallet(60).to_string(),
        amount_atomic: 10_000 + i64::from(n),
        status: "settled".to_owned(),
        error: None,
        receipt_hash: Some(format!("r{n}")),
        entitlement: "scan".to_owned(),
        wallet: wallet(50).to_string(),
        scope: "full".to_owned(),
        consumed_job_id: None,
        account_id: None,
        lease_until: at,
        created_at: at,
        settled_at: Some(at),
        expires_at: Some(at + 86_400_000),
    };
    assert!(matches!(
        db.store.record_payment_intent(&record).await.unwrap(),
        server::store::Intent::New
    ));
    id
}

#[tokio::test]
async fn an_accounts_payments_are_listed_newest_first() {
    let db = db().await;
    let acct = account(&db).await;
    let older = payment(&db, 1, T0).await;
    let newer = payment(&db, 2, T0 + 1_000).await;
    let unassigned = payment(&db, 3, T0 + 2_000).await;
    assert!(
        accounts::list_payments(&db.store, &acct)
            .await
            .unwrap()
            .is_empty()
    );
    accounts::assign_payment(&db.store, &older, &acct)
        .await
        .unwrap();
    accounts::assign_payment(&db.store, &newer, &acct)
        .await
        .unwrap();
    // Assigning again to the same account changes nothing.
    accounts::assign_payment(&db.store, &newer, &acct)
        .await
        .unwrap();
    let listed = accounts::list_payments(&db.store, &acct).await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|p| p.payment_id.as_str()).collect();
    assert_eq!(ids, vec![newer.as_str(), older.as_str()]);
    assert!(!ids.contains(&unassigned.as_str()));
    let p = &listed[0];
    assert_eq!(p.status, "settled");
    assert_eq!(p.entitlement, "scan");
    assert_eq!(p.wallet, wallet(50).to_string());
    assert_eq!(p.amount_atomic, "10002");
    assert_eq!(p.network, "solana-devnet");
    assert_eq!(p.transaction, "sig2");
    assert!(p.quote_id.starts_with("q_"));
    assert_eq!(p.created_at, "2027-01-15T08:00:01Z");
}

#[tokio::test]
async fn assigning_another_accounts_payment_is_refused() {
    let db = db().await;
    let owner = account(&db).await;
    let other = account(&db).await;
    let paid = payment(&db, 1, T0).await;
    accounts::assign_payment(&db.store, &paid, &owner)
        .await
        .unwrap();
    let err = accounts::assign_payment(&db.store, &paid, &other)
        .await
        .unwrap_err();
    assert!(matches!(err, AccountsError::PaymentTaken(_)), "{err}");
    assert_eq!(code(err), Code::Forbidden);
    assert!(
        accounts::list_payments(&db.store, &other)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        accounts::list_payments(&db.store, &owner)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn assigning_an_unknown_payment_is_refused() {
    let db = db().await;
    let acct = account(&db).await;
    for id in ["pay_01J9X4A7M3ABCDEFGHJKMNPQRS", "not-an-id"] {
        let err = accounts::assign_payment(&db.store, id, &acct)
            .await
            .unwrap_err();
        assert_eq!(code(err), Code::NotFound, "{id}");
    }
}
