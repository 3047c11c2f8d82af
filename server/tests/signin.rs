//! The two sign-in methods against a real store (SQLite, or PostgreSQL when
//! `TEST_DATABASE_URL` names one, as the API harness does): Sign-In With
//! Solana with real ed25519 keys, and Google's OpenID Connect flow against
//! the local stand-in. One test per refusal, named for what it proves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "api/helpers.rs"]
mod helpers;
#[path = "support/oidc_standin.rs"]
mod oidc_standin;

use ed25519_dalek::{Signer, SigningKey};
use server::{
    auth::{
        oidc::{FLOW_TTL_MS, Oidc, OidcSettings},
        signin::{Refusal, SignInError},
        siws::{self, NONCE_TTL_MS, SiwsContext, SiwsMessage, SiwsSettings},
    },
    clock::{Clock, SystemClock},
    config::DatabaseConfig,
    error::{AppError, Code},
    store::Store,
};

use helpers::{TestDatabase, fresh_database};
use oidc_standin::{Fault, Standin};

/// 2026-12-01T12:00:00Z.
const NOW: i64 = 1_796_126_400_000;

struct Db {
    store: Store,
    _guard: TestDatabase,
}

async fn store() -> Db {
    let (url, guard) = fresh_database().await;
    let store = Store::open(&url, &DatabaseConfig::default())
        .await
        .expect("store opens");
    Db {
        store,
        _guard: guard,
    }
}

// ---------------------------------------------------------------- SIWS

fn settings() -> SiwsSettings {
    SiwsSettings::new("https://ledger.example", "mainnet").unwrap()
}

fn wallet() -> (SigningKey, String) {
    let key = SigningKey::from_bytes(&rand::random::<[u8; 32]>());
    let address = bs58::encode(key.verifying_key().as_bytes()).into_string();
    (key, address)
}

fn sign(key: &SigningKey, message: &str) -> String {
    bs58::encode(key.sign(message.as_bytes()).to_bytes()).into_string()
}

fn ctx<'a>(store: &'a Store, settings: &'a SiwsSettings, now_ms: i64) -> SiwsContext<'a> {
    SiwsContext {
        store,
        settings,
        now_ms,
    }
}

/// A challenge for a fresh wallet: the key, its address and the message.
async fn challenged(store: &Store, settings: &SiwsSettings) -> (SigningKey, String, String) {
    let (key, address) = wallet();
    let challenge = siws::challenge(ctx(store, settings, NOW), &address)
        .await
        .unwrap();
    (key, address, challenge.message)
}

fn refusal(result: Result<siws::VerifiedWallet, SignInError>) -> Refusal {
    match result {
        Err(SignInError::Refused(r)) => r,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// The message with one field's text replaced (still a well-formed message).
fn edit(message: &str, from: &str, to: &str) -> String {
    assert!(message.contains(from), "{from:?} not in {message:?}");
    message.replacen(from, to, 1)
}

fn time(ms: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[tokio::test]
async fn siws_a_signed_challenge_signs_its_wallet_in() {
    let db = store().await;
    let settings = settings();
    let (key, address) = wallet();
    let challenge = siws::challenge(ctx(&db.store, &settings, NOW), &address)
        .await
        .unwrap();
    assert_eq!(
        challenge.message,
        format!(
            "ledger.example wants you to sign in with your Solana account:\n{address}\n\n\
             Sign in to Ledger.\n\nURI: https://ledger.example\nVersion: 1\nChain ID: mainnet\n\
             Nonce: {}\nIssued At: 2026-12-01T12:00:00.000Z\n\
             Expiration Time: 2026-12-01T12:05:00.000Z",
            challenge.nonce
        )
    );
    assert_eq!(challenge.expires_at, "2026-12-01T12:05:00.000Z");
    assert!(challenge.nonce.len() >= 22, "at least 128 bits");
    assert!(challenge.nonce.bytes().all(|b| b.is_ascii_alphanumeric()));

    let signature = sign(&key, &challenge.message);
    let verified = siws::verify(
        ctx(&db.store, &settings, NOW + 1_000),
        &challenge.message,
        &signature,
    )
    .await
    .unwrap();
    assert_eq!(verified.address.as_str(), address);
}

#[tokio::test]
async fn siws_two_challenges_get_different_nonces() {
    let db = store().await;
    let settings = settings();
    let (_, address) = wallet();
    let a = siws::challenge(ctx(&db.store, &settings, NOW), &address)
        .await
        .unwrap();
    let b = siws::challenge(ctx(&db.store, &settings, NOW), &address)
        .await
        .unwrap();
    assert_ne!(a.nonce, b.nonce);
}

#[tokio::test]
async fn siws_a_malformed_address_is_refused_at_challenge() {
    let db = store().await;
    let settings = settings();
    for bad in [
        "",
        "0OIl0OIl",
        "abc",
        "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU7xKX",
    ] {
        let err = siws::challenge(ctx(&db.store, &settings, NOW), bad)
            .await
            .unwrap_err();
        assert!(
            matches!(err, SignInError::InvalidAddress(_)),
            "{bad}: {err:?}"
        );
        assert_eq!(AppError::from(err).code(), Code::InvalidParams);
    }
}

#[tokio::test]
async fn siws_a_message_for_another_domain_is_refused() {
    let db = store().await;
    let settings = settings();
    let (key, _, message) = challenged(&db.store, &settings).await;
    let message = edit(&message, "ledger.example wants", "ledger.evil wants");
    let result = siws::verify(
        ctx(&db.store, &settings, NOW),
        &message,
        &sign(&key, &message),
    )
    .await;
    assert_eq!(refusal(result), Refusal::OtherDomain);
}

#[tokio::test]
async fn siws_a_message_for_another_uri_is_refused() {
    let db = store().await;
    let settings = settings();
    let (key, _, message) = challenged(&db.store, &settings).await;
    let message = edit(
        &message,
        "URI: https://ledger.example",
        "URI: https://evil.example",
    );
    let result = siws::verify(
        ctx(&db.store, &settings, NOW),
        &message,
        &sign(&key, &message),
    )
    .await;
    assert_eq!(refusal(result), Refusal::OtherUri);
}

#[tokio::test]
async fn siws_a_message_for_another_chain_is_refused() {
    let db = store().await;
    let settings = settings();
    let (key, _, message) = challenged(&db.store, &settings).await;
    let message = edit(&message, "Chain ID: mainnet", "Chain ID: devnet");
    let result = siws::verify(
        ctx(&db.store, &settings, NOW),
        &message,
        &sign(&key, &message),
    )
    .await;
    assert_eq!(refusal(result), Refusal::OtherChain);
}

#[tokio::test]
async fn siws_a_message_past_its_expiration_time_is_refused() {
    let db = store().await;
    let settings = settings();
    let (key, _, message) = challenged(&db.store, &settings).await;
    let result = siws::verify(
        ctx(&db.store, &settings, NOW + NONCE_TTL_MS),
        &message,
        &sign(&key, &message),
    )
    .await;
    assert_eq!(refusal(result), Refusal::Expired);
}

#[tokio::test]
async fn siws_a_nonce_older_than_five_minutes_is_refused_whatever_the_message_says() {
    let db = store().await;
    let settings = settings();
    let (key, _, message) = challenged(&db.store, &settings).await;
    // The wallet signs a message that claims to live for an hour.
    let message = edit(
        &message,
        &format!("Expiration Time: {}", time(NOW + NONCE_TTL_MS)),
        &format!("Expiration Time: {}", time(NOW + 3_600_000)),
    );
    let result = siws::verify(
        ctx(&db.store, &settings, NOW + NONCE_TTL_MS + 1),
        &message,
        &sign(&key, &message),
    )
    .await;
    assert_eq!(refusal(result), Refusal::Expired);
}

#[tokio::test]
async fn siws_a_message_issued_in_the_future_is_refused() {
    let db = store().await;
    let settings = settings();
    let (key, _, message) = challenged(&db.store, &settings).await;
    let message = edit(
        &message,
        &format!("Issued At: {}", time(NOW)),
        &format!("Issued At: {}", time(NOW + 2 * 60_000)),
    );
    let result = siws::verify(
        ctx(&db.store, &settings, NOW),
        &message,
        &sign(&key, &message),
    )
    .await;
    assert_eq!(refusal(result), Refusal::IssuedInFuture);
}

#[tokio::test]
async fn siws_a_wallet_clock_slightly_ahead_is_accepted() {
    let db = store().await;
    let settings = settings();
    let (key, _, message) = challenged(&db.store, &settings).await;
    let message = edit(
        &message,
        &format!("Issued At: {}", time(NOW)),
        &format!("Issued At: {}", time(NOW + 30_000)),
    );
    let result = siws::verify(
        ctx(&db.store, &settings, NOW),
        &message,
        &sign(&key, &message),
    )
    .await;
    assert!(result.is_ok(), "{result:?}");
}

#[tokio::test]
async fn siws_an_unknown_nonce_is_refused() {
    let db = store().await;
    let settings = settings();
    let (key, _, message) = challenged(&db.store, &settings).await;
    let nonce = SiwsMessage::parse(&message).unwrap().nonce;
    let message = edit(&message, &nonce, "NeverIssuedNonce0123456789abcdef");
    let result = siws::verify(
        ctx(&db.store, &settings, NOW),
        &message,
        &sign(&key, &message),
    )
    .await;
    assert_eq!(refusal(result), Refusal::UnknownNonce);
}

#[tokio::test]
async fn siws_a_used_nonce_is_refused() {
    let db = store().await;
    let settings = settings();
    let (key, _, message) = challenged(&db.store, &settings).await;
    let signature = sign(&key, &message);
    siws::verify(ctx(&db.store, &settings, NOW), &message, &signature)
        .await
        .unwrap();
    let replay = siws::verify(ctx(&db.store, &settings, NOW + 1), &message, &signature).await;
    assert_eq!(refusal(replay), Refusal::NonceUsed);
}

#[tokio::test]
async fn siws_two_concurrent_verifies_consume_the_nonce_once() {
    let db = store().await;
    let settings = settings();
    for _ in 0..5 {
        let (key, _, message) = challenged(&db.store, &settings).await;
        let signature = sign(&key, &message);
        let (a, b) = tokio::join!(
            siws::verify(ctx(&db.store, &settings, NOW), &message, &signature),
            siws::verify(ctx(&db.store, &settings, NOW), &message, &signature),
        );
        let wins = [&a, &b].iter().filter(|r| r.is_ok()).count();
        assert_eq!(wins, 1, "{a:?} {b:?}");
        let loser = if a.is_ok() { b } else { a };
        assert_eq!(refusal(loser), Refusal::NonceUsed);
    }
}

#[tokio::test]
async fn siws_a_nonce_issued_for_another_address_is_refused() {
    let db = store().await;
    let settings = settings();
    let (_, victim, message) = challenged(&db.store, &settings).await;
    let (attacker_key, attacker) = wallet();
    let message = edit(&message, &victim, &attacker);
    let result = siws::verify(
        ctx(&db.store, &settings, NOW),
        &message,
        &sign(&attacker_key, &message),
    )
    .await;
    assert_eq!(refusal(result), Refusal::NonceForOtherAddress);
}

#[tokio::test]
async fn siws_a_signature_by_another_key_is_refused() {
    let db = store().await;
    let settings = settings();
    let (_, _, message) = challenged(&db.store, &settings).await;
    let (other, _) = wallet();
    let result = siws::verify(
        ctx(&db.store, &settings, NOW),
        &message,
        &sign(&other, &message),
    )
    .await;
    assert_eq!(refusal(result), Refusal::BadSignature);
}

#[tokio::test]
async fn siws_a_message_edited_after_signing_is_refused() {
    let db = store().await;
    let settings = settings();
    let (key, _, message) = challenged(&db.store, &settings).await;
    let signature = sign(&key, &message);
    // Still a valid message for this site, nonce and address: only the
    // signature no longer covers it.
    let edited = edit(
        &message,
        &format!("Expiration Time: {}", time(NOW + NONCE_TTL_MS)),
        &format!("Expiration Time: {}", time(NOW + NONCE_TTL_MS - 1_000)),
    );
    let result = siws::verify(ctx(&db.store, &settings, NOW), &edited, &signature).await;
    assert_eq!(refusal(result), Refusal::BadSignature);
    // The refused attempt did not burn the nonce.
    siws::verify(ctx(&db.store, &settings, NOW), &message, &signature)
        .await
        .unwrap();
}

#[tokio::test]
async fn siws_a_malformed_signature_is_refused_and_burns_nothing() {
    let db = store().await;
    let settings = settings();
    let (key, _, message) = challenged(&db.store, &settings).await;
    let good = sign(&key, &message);
    let short = bs58::encode([1u8; 63]).into_string();
    let long = bs58::encode([1u8; 65]).into_string();
    for bad in ["", "not base58 0OIl", short.as_str(), long.as_str()] {
        let err = siws::verify(ctx(&db.store, &settings, NOW), &message, bad)
            .await
            .unwrap_err();
        assert!(
            matches!(err, SignInError::MalformedSignature(_)),
            "{bad}: {err:?}"
        );
        assert_eq!(AppError::from(err).code(), Code::InvalidParams);
    }
    siws::verify(ctx(&db.store, &settings, NOW), &message, &good)
        .await
        .unwrap();
}

#[tokio::test]
async fn siws_a_malformed_message_or_address_in_it_is_refused() {
    let db = store().await;
    let settings = settings();
    let (key, address, message) = challenged(&db.store, &settings).await;
    for bad in [
        String::new(),
        format!("{message}\n"),
        message.replace('\n', "\r\n"),
        edit(&message, &address, "0OIl0OIl0OIl"),
        edit(&message, &address, &address[..20]),
        edit(&message, "Sign in to Ledger.", "Send all your SOL."),
    ] {
        let err = siws::verify(ctx(&db.store, &settings, NOW), &bad, &sign(&key, &bad))
            .await
            .unwrap_err();
        assert!(
            matches!(err, SignInError::MalformedMessage(_)),
            "{bad:?}: {err:?}"
        );
        assert_eq!(AppError::from(err).code(), Code::InvalidParams);
    }
}

#[tokio::test]
async fn siws_refusals_answer_unauthenticated_without_internals() {
    let db = store().await;
    let settings = settings();
    let (_, _, message) = challenged(&db.store, &settings).await;
    let (other, _) = wallet();
    let err = siws::verify(
        ctx(&db.store, &settings, NOW),
        &message,
        &sign(&other, &message),
    )
    .await
    .unwrap_err();
    let err = AppError::from(err);
    assert_eq!(err.code(), Code::Unauthenticated);
    assert_eq!(
        err.message(),
        "the signature is not this wallet's signature of this message"
    );
}

#[tokio::test]
async fn siws_expired_nonces_are_deleted_when_new_ones_are_issued() {
    let db = store().await;
    let settings = settings();
    challenged(&db.store, &settings).await;
    challenged(&db.store, &settings).await;
    assert_eq!(db.store.count_signin_rows().await.unwrap().0, 2);
    let (_, address) = wallet();
    siws::challenge(ctx(&db.store, &settings, NOW + NONCE_TTL_MS), &address)
        .await
        .unwrap();
    assert_eq!(db.store.count_signin_rows().await.unwrap().0, 1);
}

// ---------------------------------------------------------------- OIDC

const REDIRECT_URI: &str = "https://ledger.example/auth/google/callback";

async fn google(fault: Fault) -> (Standin, Oidc) {
    let standin = oidc_standin::start(oidc_standin::Options {
        fault,
        ..oidc_standin::Options::default()
    })
    .await;
    let oidc = Oidc::new(OidcSettings {
        issuer: standin.issuer.clone(),
        client_id: oidc_standin::CLIENT_ID.to_owned(),
        client_secret: oidc_standin::CLIENT_SECRET.to_owned(),
        redirect_uri: REDIRECT_URI.to_owned(),
    })
    .unwrap();
    (standin, oidc)
}

fn now() -> i64 {
    SystemClock.now_ms()
}

/// Follow the authorize URL as a browser would, up to the callback: the
/// callback's code and state.
async fn authorize(url: &str) -> (String, String) {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = client.get(url).send().await.unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::FOUND, "{url}");
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.starts_with(REDIRECT_URI), "{location}");
    let location = url::Url::parse(&location).unwrap();
    let param = |name: &str| {
        location
            .query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
            .unwrap()
    };
    (param("code"), param("state"))
}

/// Begin, authorize, finish.
async fn sign_in(
    oidc: &Oidc,
    store: &Store,
) -> Result<server::auth::oidc::OidcIdentity, SignInError> {
    let start = oidc.begin(store, now()).await.unwrap();
    let (code, state) = authorize(&start.authorize_url).await;
    assert_eq!(state, start.state);
    oidc.finish(store, now(), &state, &code).await
}

fn oidc_refusal<T: std::fmt::Debug>(result: Result<T, SignInError>) -> Refusal {
    match result {
        Err(SignInError::Refused(r)) => r,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn oidc_google_sign_in_answers_the_verified_identity() {
    let db = store().await;
    let (standin, oidc) = google(Fault::None).await;
    let identity = sign_in(&oidc, &db.store).await.unwrap();
    assert_eq!(identity.issuer, standin.issuer);
    assert_eq!(identity.subject, oidc_standin::SUBJECT);
    assert_eq!(identity.email.as_deref(), Some(oidc_standin::EMAIL));
    assert!(identity.email_verified);
    // A second sign-in reuses the discovered provider and keys.
    sign_in(&oidc, &db.store).await.unwrap();
    assert_eq!(standin.discovery_requests(), 1);
    assert_eq!(standin.jwks_requests(), 1);
    // Finished flows leave nothing behind.
    assert_eq!(db.store.count_signin_rows().await.unwrap().1, 0);
}

#[tokio::test]
async fn oidc_the_authorize_url_carries_pkce_state_nonce_and_the_redirect_uri() {
    let db = store().await;
    let (standin, oidc) = google(Fault::None).await;
    let start = oidc.begin(&db.store, now()).await.unwrap();
    let url = url::Url::parse(&start.authorize_url).unwrap();
    assert!(
        start
            .authorize_url
            .starts_with(&format!("{}/authorize?", standin.issuer))
    );
    let q: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["client_id"], oidc_standin::CLIENT_ID);
    assert_eq!(q["redirect_uri"], REDIRECT_URI);
    assert_eq!(q["state"], start.state);
    assert_eq!(q["code_challenge_method"], "S256");
    assert!(q["code_challenge"].len() >= 43);
    assert!(q["nonce"].len() >= 16);
    assert!(q["scope"].split(' ').any(|s| s == "openid"));
    assert!(q["scope"].split(' ').any(|s| s == "email"));
}

#[tokio::test]
async fn oidc_a_token_for_another_audience_is_refused() {
    let db = store().await;
    let (_standin, oidc) = google(Fault::WrongAudience).await;
    assert_eq!(
        oidc_refusal(sign_in(&oidc, &db.store).await),
        Refusal::WrongAudience
    );
}

#[tokio::test]
async fn oidc_a_token_from_another_issuer_is_refused() {
    let db = store().await;
    let (_standin, oidc) = google(Fault::WrongIssuer).await;
    assert_eq!(
        oidc_refusal(sign_in(&oidc, &db.store).await),
        Refusal::WrongIssuer
    );
}

#[tokio::test]
async fn oidc_an_expired_token_is_refused() {
    let db = store().await;
    let (_standin, oidc) = google(Fault::Expired).await;
    assert_eq!(
        oidc_refusal(sign_in(&oidc, &db.store).await),
        Refusal::TokenExpired
    );
}

#[tokio::test]
async fn oidc_a_token_signed_by_another_key_is_refused() {
    let db = store().await;
    let (standin, oidc) = google(Fault::BadSignature).await;
    assert_eq!(
        oidc_refusal(sign_in(&oidc, &db.store).await),
        Refusal::TokenSignature
    );
    // The key id is known: no reason to refetch the keys.
    assert_eq!(standin.jwks_requests(), 1);
}

#[tokio::test]
async fn oidc_a_token_with_another_nonce_is_refused() {
    let db = store().await;
    let (_standin, oidc) = google(Fault::OtherNonce).await;
    assert_eq!(
        oidc_refusal(sign_in(&oidc, &db.store).await),
        Refusal::NonceMismatch
    );
}

#[tokio::test]
async fn oidc_a_replayed_state_is_refused() {
    let db = store().await;
    let (_standin, oidc) = google(Fault::None).await;
    let start = oidc.begin(&db.store, now()).await.unwrap();
    let (code, state) = authorize(&start.authorize_url).await;
    oidc.finish(&db.store, now(), &state, &code).await.unwrap();
    let replay = oidc.finish(&db.store, now(), &state, &code).await;
    assert_eq!(oidc_refusal(replay), Refusal::UnknownState);
}

#[tokio::test]
async fn oidc_two_concurrent_callbacks_finish_the_flow_once() {
    let db = store().await;
    let (_standin, oidc) = google(Fault::None).await;
    let start = oidc.begin(&db.store, now()).await.unwrap();
    let (code, state) = authorize(&start.authorize_url).await;
    let (a, b) = tokio::join!(
        oidc.finish(&db.store, now(), &state, &code),
        oidc.finish(&db.store, now(), &state, &code),
    );
    assert_eq!(
        [&a, &b].iter().filter(|r| r.is_ok()).count(),
        1,
        "{a:?} {b:?}"
    );
    let loser = if a.is_ok() { b } else { a };
    assert_eq!(oidc_refusal(loser), Refusal::UnknownState);
}

#[tokio::test]
async fn oidc_an_unknown_state_is_refused() {
    let db = store().await;
    let (_standin, oidc) = google(Fault::None).await;
    let start = oidc.begin(&db.store, now()).await.unwrap();
    let (code, _) = authorize(&start.authorize_url).await;
    for state in ["never-issued", "", &"x".repeat(600)] {
        let result = oidc.finish(&db.store, now(), state, &code).await;
        assert_eq!(oidc_refusal(result), Refusal::UnknownState, "{state}");
    }
    let err = AppError::from(SignInError::Refused(Refusal::UnknownState));
    assert_eq!(err.code(), Code::Unauthenticated);
}

#[tokio::test]
async fn oidc_a_flow_older_than_ten_minutes_is_refused() {
    let db = store().await;
    let (_standin, oidc) = google(Fault::None).await;
    let begun = now();
    let start = oidc.begin(&db.store, begun).await.unwrap();
    let (code, state) = authorize(&start.authorize_url).await;
    let result = oidc
        .finish(&db.store, begun + FLOW_TTL_MS, &state, &code)
        .await;
    assert_eq!(oidc_refusal(result), Refusal::StateExpired);
}

#[tokio::test]
async fn oidc_a_code_the_provider_rejects_is_refused() {
    let db = store().await;
    let (_standin, oidc) = google(Fault::None).await;
    let start = oidc.begin(&db.store, now()).await.unwrap();
    let (_, state) = authorize(&start.authorize_url).await;
    let result = oidc.finish(&db.store, now(), &state, "forged-code").await;
    assert_eq!(oidc_refusal(result), Refusal::CodeRejected);
}

#[tokio::test]
async fn oidc_a_code_finished_with_another_flows_verifier_is_refused() {
    let db = store().await;
    let (_standin, oidc) = google(Fault::None).await;
    let first = oidc.begin(&db.store, now()).await.unwrap();
    let second = oidc.begin(&db.store, now()).await.unwrap();
    let (code, _) = authorize(&first.authorize_url).await;
    // The code of the first flow under the second flow's state (and so its
    // PKCE verifier): the provider refuses the exchange.
    let result = oidc.finish(&db.store, now(), &second.state, &code).await;
    assert_eq!(oidc_refusal(result), Refusal::CodeRejected);
}

#[tokio::test]
async fn oidc_a_rotated_signing_key_is_fetched_once_and_accepted() {
    let db = store().await;
    let (standin, oidc) = google(Fault::None).await;
    sign_in(&oidc, &db.store).await.unwrap();
    assert_eq!(standin.jwks_requests(), 1);
    standin.set_fault(Fault::RotatedKey);
    sign_in(&oidc, &db.store).await.unwrap();
    sign_in(&oidc, &db.store).await.unwrap();
    assert_eq!(standin.jwks_requests(), 2, "one refetch, then cached");
    assert_eq!(standin.discovery_requests(), 1);
}

#[tokio::test]
async fn oidc_a_failed_discovery_is_retried_on_the_next_call() {
    let db = store().await;
    let (standin, oidc) = google(Fault::DiscoveryDown).await;
    let err = oidc.begin(&db.store, now()).await.unwrap_err();
    assert!(matches!(err, SignInError::ProviderUnavailable), "{err:?}");
    let err = AppError::from(err);
    assert_eq!(err.code(), Code::Unavailable);
    assert!(!err.message().contains("127.0.0.1"), "{}", err.message());
    standin.set_fault(Fault::None);
    sign_in(&oidc, &db.store).await.unwrap();
    assert_eq!(standin.discovery_requests(), 2);
}

#[tokio::test]
async fn oidc_expired_flows_are_deleted_when_new_ones_begin() {
    let db = store().await;
    let (_standin, oidc) = google(Fault::None).await;
    let begun = now();
    oidc.begin(&db.store, begun).await.unwrap();
    oidc.begin(&db.store, begun).await.unwrap();
    assert_eq!(db.store.count_signin_rows().await.unwrap().1, 2);
    oidc.begin(&db.store, begun + FLOW_TTL_MS).await.unwrap();
    assert_eq!(db.store.count_signin_rows().await.unwrap().1, 1);
}
