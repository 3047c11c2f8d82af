//! The account pages and their forms. A GET renders the page for the
//! signed-in account (a signed-out visitor is sent to `/signin`); a form
//! POST checks the session's CSRF token first (a refusal is a 403 page and
//! nothing changes), then does one domain call and answers a 303 back to
//! the page, or the page again with the error next to its field. Minting
//! answers the page itself with the new token in it: the plaintext lives
//! in that one response and nowhere else (never in the session).

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
};
use serde::Deserialize;
use tower_sessions::Session;

use super::{
    Parts,
    form::{CheckedForm, PortalForm},
    render, viewer,
};
use app::{
    frame::{Portal, PortalPage},
    views::{
        FieldError, KeysView, MintForm, MintedToken, OAuthActivityRow, OAuthClientRow, PaymentRow,
        SignInView, TokenRow, WalletRow, WalletsView,
    },
};

use crate::{
    accounts::{self, AccountId, AccountsError, Scopes, TokenId, TokenKind},
    error::AppError,
    solana::WalletAddress,
    state::AppState,
};

/// A time for people: `2026-12-01 12:00 UTC`.
pub(super) fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

/// The signed-in account of a page request, or where to send the visitor.
pub(super) async fn account_page(
    state: &AppState,
    parts: &Parts,
    session: &Session,
) -> Result<(app::frame::Viewer, AccountId), Response> {
    let (viewer, signed_in) = viewer(state, parts, session)
        .await
        .map_err(IntoResponse::into_response)?;
    match signed_in {
        Some(signed) => Ok((
            viewer,
            signed.account().map_err(IntoResponse::into_response)?,
        )),
        None => Err(Redirect::to("/signin").into_response()),
    }
}

/// The sign-in page with `message` as its error.
pub async fn sign_in_error(
    state: &AppState,
    parts: &Parts,
    session: Option<&Session>,
    status: StatusCode,
    message: &str,
) -> Response {
    let viewer = match session {
        Some(session) => match viewer(state, parts, session).await {
            Ok((viewer, _)) => viewer,
            Err(err) => return err.into_response(),
        },
        None => app::frame::Viewer {
            google: parts.google.is_some(),
            public_url: state.public_url().to_owned(),
            ..Default::default()
        },
    };
    let portal = Portal {
        viewer,
        page: PortalPage::SignIn(SignInView {
            error: Some(message.to_owned()),
            next: None,
        }),
    };
    render(state, "/signin", status, portal).await
}

/// `next` of a query string, when it is a same-origin relative path.
pub fn next_of(query: Option<&str>) -> Option<String> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(query.unwrap_or(""))
        .ok()?
        .into_iter()
        .find(|(k, _)| k == "next")
        .and_then(|(_, v)| crate::http::safe_next(&v).map(str::to_owned))
}

/// `GET /signin[?next=/path]`: `next` (a same-origin path only) is where
/// a sign-in returns to, such as the `/authorize` request that sent the
/// visitor here.
pub async fn sign_in_page(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    uri: axum::http::Uri,
) -> Response {
    let viewer = match viewer(&state, &parts, &session).await {
        Ok((viewer, _)) => viewer,
        Err(err) => return err.into_response(),
    };
    let portal = Portal {
        viewer,
        page: PortalPage::SignIn(SignInView {
            error: None,
            next: next_of(uri.query()),
        }),
    };
    render(&state, "/signin", StatusCode::OK, portal).await
}

// ---- Keys --------------------------------------------------------------

async fn token_rows(state: &AppState, account: &AccountId) -> Result<Vec<TokenRow>, AppError> {
    Ok(accounts::list_tokens(state.store(), account)
        .await?
        .into_iter()
        .map(|t| TokenRow {
            id: t.token_id.to_string(),
            label: t.label,
            kind: t.kind.as_str().to_owned(),
            scopes: t.scopes.to_string(),
            prefix: t.prefix.as_str().to_owned(),
            created: when(t.created_at),
            last_used: t.last_used_at.map(when),
        })
        .collect())
}

async fn keys_response(
    state: &AppState,
    viewer: app::frame::Viewer,
    account: &AccountId,
    status: StatusCode,
    mut view: KeysView,
) -> Response {
    view.tokens = match token_rows(state, account).await {
        Ok(rows) => rows,
        Err(err) => return err.into_response(),
    };
    match oauth_rows(state, account).await {
        Ok((clients, activity)) => {
            view.oauth_clients = clients;
            view.oauth_activity = activity;
        }
        Err(err) => return AppError::from(err).into_response(),
    }
    let portal = Portal {
        viewer,
        page: PortalPage::Keys(view),
    };
    render(state, "/keys", status, portal).await
}

/// `GET /keys`.
pub async fn keys(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
) -> Response {
    match account_page(&state, &parts, &session).await {
        Ok((viewer, account)) => {
            keys_response(
                &state,
                viewer,
                &account,
                StatusCode::OK,
                KeysView::default(),
            )
            .await
        }
        Err(response) => response,
    }
}

#[derive(Deserialize)]
pub struct MintRequest {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    scope_read: Option<String>,
    #[serde(default)]
    scope_scan: Option<String>,
    #[serde(default)]
    label: String,
    #[serde(default, rename = "csrf")]
    _csrf: String,
}

impl PortalForm for MintRequest {
    const PAGE: &'static str = "/keys";
}

/// The field an accounts refusal is about, for the form's error.
fn field_of(err: &AccountsError, default: &str) -> String {
    match err {
        AccountsError::Invalid { argument, .. } => (*argument).to_owned(),
        _ => default.to_owned(),
    }
}

/// `POST /keys`: mint a token; the response is the Keys page with the
/// plaintext in it, once.
pub async fn mint(
    State(state): State<AppState>,
    CheckedForm {
        viewer,
        account,
        form,
    }: CheckedForm<MintRequest>,
) -> Response {
    let echo = MintForm {
        kind: form.kind.clone(),
        read: form.scope_read.is_some(),
        scan: form.scope_scan.is_some(),
        label: form.label.clone(),
    };
    let invalid = |field: &str, message: String| KeysView {
        error: Some(FieldError {
            field: field.to_owned(),
            message,
        }),
        form: echo.clone(),
        ..KeysView::default()
    };
    let kind = match TokenKind::parse(&form.kind) {
        Ok(kind) => kind,
        Err(_) => {
            let view = invalid("kind", "choose an MCP token or an API key".to_owned());
            return keys_response(&state, viewer, &account, StatusCode::BAD_REQUEST, view).await;
        }
    };
    let names: Vec<&str> = [echo.read.then_some("read"), echo.scan.then_some("scan")]
        .into_iter()
        .flatten()
        .collect();
    let scopes = match Scopes::parse(&names.join(",")) {
        Ok(scopes) if !names.is_empty() => scopes,
        _ => {
            let view = invalid("scopes", "choose at least one scope".to_owned());
            return keys_response(&state, viewer, &account, StatusCode::BAD_REQUEST, view).await;
        }
    };
    match accounts::mint_within(
        state.store(),
        state.now_ms(),
        &account,
        kind,
        scopes,
        &form.label,
        state.config().quota.tokens_per_account,
    )
    .await
    {
        Ok(minted) => {
            let view = KeysView {
                minted: Some(MintedToken {
                    plaintext: minted.plaintext,
                    kind: minted.kind.as_str().to_owned(),
                    label: minted.label,
                }),
                ..KeysView::default()
            };
            keys_response(&state, viewer, &account, StatusCode::OK, view).await
        }
        Err(err @ AccountsError::Invalid { .. }) => {
            let view = invalid(&field_of(&err, "label"), err.to_string());
            keys_response(&state, viewer, &account, StatusCode::BAD_REQUEST, view).await
        }
        Err(err @ AccountsError::QuotaReached { .. }) => {
            let view = invalid("kind", err.to_string());
            keys_response(&state, viewer, &account, StatusCode::CONFLICT, view).await
        }
        Err(err) => AppError::from(err).into_response(),
    }
}

#[derive(Deserialize)]
pub struct RevokeRequest {
    #[serde(default)]
    token_id: String,
    #[serde(default, rename = "csrf")]
    _csrf: String,
}

impl PortalForm for RevokeRequest {
    const PAGE: &'static str = "/keys";
}

/// `POST /keys/revoke`: revoke one of the account's tokens, 303 to /keys.
pub async fn revoke(
    State(state): State<AppState>,
    CheckedForm {
        viewer,
        account,
        form,
    }: CheckedForm<RevokeRequest>,
) -> Response {
    let result = match TokenId::parse(&form.token_id) {
        Ok(id) => accounts::revoke(state.store(), state.now_ms(), &account, &id).await,
        Err(err) => Err(err),
    };
    match result {
        Ok(()) => Redirect::to("/keys").into_response(),
        Err(err @ (AccountsError::Invalid { .. } | AccountsError::NoToken(_))) => {
            let view = KeysView {
                error: Some(FieldError {
                    field: "token_id".to_owned(),
                    message: "no such live token on this account; it may have been revoked already"
                        .to_owned(),
                }),
                ..KeysView::default()
            };
            tracing::debug!(error = %err, "revoke refused");
            keys_response(&state, viewer, &account, StatusCode::NOT_FOUND, view).await
        }
        Err(err) => AppError::from(err).into_response(),
    }
}

/// How many OAuth events the Keys page lists.
const OAUTH_ACTIVITY_SHOWN: i64 = 20;

fn activity_words(kind: &str) -> &'static str {
    match kind {
        "authorized" => "was authorized",
        "denied" => "was denied",
        "refreshed" => "refreshed its token",
        "revoked" => "revoked a token",
        "disconnected" => "was disconnected",
        "code_reused" => "presented a used authorization code: its tokens were revoked",
        "refresh_reused" => {
            "presented a used refresh token: every token of that connection was revoked"
        }
        _ => "did something",
    }
}

async fn oauth_rows(
    state: &AppState,
    account: &AccountId,
) -> Result<(Vec<OAuthClientRow>, Vec<OAuthActivityRow>), crate::oauth::OAuthError> {
    let clients = crate::oauth::flow::connected(state.store(), account, state.now_ms())
        .await?
        .into_iter()
        .map(|c| OAuthClientRow {
            client_id: c.client_id,
            name: c.name,
            from: c.from,
            scopes: c.scope,
            connected: when(c.connected_at),
            last_used: c.last_used_at.map(when),
        })
        .collect();
    let activity = crate::oauth::flow::activity(state.store(), account, OAUTH_ACTIVITY_SHOWN)
        .await?
        .into_iter()
        .map(|a| OAuthActivityRow {
            client: a.client,
            what: activity_words(&a.kind).to_owned(),
            at: when(a.at),
        })
        .collect();
    Ok((clients, activity))
}

#[derive(Deserialize)]
pub struct DisconnectRequest {
    #[serde(default)]
    client_id: String,
    #[serde(default, rename = "csrf")]
    _csrf: String,
}

impl PortalForm for DisconnectRequest {
    const PAGE: &'static str = "/keys";
}

/// `POST /keys/oauth/disconnect`: revoke every token of one OAuth client
/// for this account, 303 to /keys.
pub async fn disconnect_oauth_client(
    State(state): State<AppState>,
    CheckedForm {
        viewer,
        account,
        form,
    }: CheckedForm<DisconnectRequest>,
) -> Response {
    match crate::oauth::flow::disconnect(state.oauth(), &account, &form.client_id).await {
        Ok(true) => Redirect::to("/keys").into_response(),
        Ok(false) => {
            let view = KeysView {
                error: Some(FieldError {
                    field: "client_id".to_owned(),
                    message: "no such connected client on this account".to_owned(),
                }),
                ..KeysView::default()
            };
            keys_response(&state, viewer, &account, StatusCode::NOT_FOUND, view).await
        }
        Err(err) => AppError::from(err).into_response(),
    }
}

// ---- Wallets -----------------------------------------------------------

async fn wallets_response(
    state: &AppState,
    viewer: app::frame::Viewer,
    account: &AccountId,
    status: StatusCode,
    mut view: WalletsView,
) -> Response {
    let wallets = match accounts::list_wallets(state.store(), account).await {
        Ok(wallets) => wallets,
        Err(err) => return AppError::from(err).into_response(),
    };
    view.wallets = wallets
        .into_iter()
        .map(|w| WalletRow {
            address: w.address.to_string(),
            label: w.label,
            added: when(w.added_at),
            last_scan: match w.last_scan {
                None => "never scanned".to_owned(),
                Some(scan) => match scan.finished_at {
                    Some(at) => format!("{} {}", scan.status, when(at)),
                    None => scan.status,
                },
            },
            ledger_legs: w.ledger_legs,
        })
        .collect();
    let portal = Portal {
        viewer,
        page: PortalPage::Wallets(view),
    };
    render(state, "/wallets", status, portal).await
}

/// `GET /wallets`.
pub async fn wallets(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
) -> Response {
    match account_page(&state, &parts, &session).await {
        Ok((viewer, account)) => {
            wallets_response(
                &state,
                viewer,
                &account,
                StatusCode::OK,
                WalletsView::default(),
            )
            .await
        }
        Err(response) => response,
    }
}

#[derive(Deserialize)]
pub struct WalletRequest {
    #[serde(default)]
    address: String,
    #[serde(default)]
    label: String,
    #[serde(default, rename = "csrf")]
    _csrf: String,
}

impl PortalForm for WalletRequest {
    const PAGE: &'static str = "/wallets";
}

/// The wallet forms: add, relabel, remove.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WalletAction {
    Add,
    Relabel,
    Remove,
}

async fn wallet_form(
    state: AppState,
    CheckedForm {
        viewer,
        account,
        form,
    }: CheckedForm<WalletRequest>,
    action: WalletAction,
) -> Response {
    let refuse = |field: String, message: String| WalletsView {
        error: Some(FieldError { field, message }),
        address: if action == WalletAction::Add {
            form.address.clone()
        } else {
            String::new()
        },
        label: if action == WalletAction::Add {
            form.label.clone()
        } else {
            String::new()
        },
        ..WalletsView::default()
    };
    let address = match WalletAddress::parse(form.address.trim()) {
        Ok(address) => address,
        Err(err) => {
            let view = refuse("address".to_owned(), format!("address: {err}"));
            return wallets_response(&state, viewer, &account, StatusCode::BAD_REQUEST, view).await;
        }
    };
    let store = state.store();
    let result = match action {
        WalletAction::Add => {
            accounts::add_wallet(
                store,
                state.now_ms(),
                &account,
                address.clone(),
                &form.label,
            )
            .await
        }
        WalletAction::Relabel => match accounts::is_watching(store, &account, &address).await {
            Ok(true) => {
                accounts::add_wallet(
                    store,
                    state.now_ms(),
                    &account,
                    address.clone(),
                    &form.label,
                )
                .await
            }
            Ok(false) => Err(AccountsError::Invalid {
                argument: "address",
                rule: "this wallet is not on your list".to_owned(),
            }),
            Err(err) => Err(err),
        },
        WalletAction::Remove => accounts::remove_wallet(store, &account, &address)
            .await
            .map(|_| ()),
    };
    match result {
        Ok(()) => Redirect::to("/wallets").into_response(),
        Err(err @ AccountsError::Invalid { .. }) => {
            let field = match action {
                WalletAction::Add => field_of(&err, "label"),
                _ => format!("relabel-{address}"),
            };
            let view = refuse(field, err.to_string());
            wallets_response(&state, viewer, &account, StatusCode::BAD_REQUEST, view).await
        }
        Err(err) => AppError::from(err).into_response(),
    }
}

/// `POST /wallets`: add a wallet (address, label).
pub async fn add_wallet(
    State(state): State<AppState>,
    form: CheckedForm<WalletRequest>,
) -> Response {
    wallet_form(state, form, WalletAction::Add).await
}

/// `POST /wallets/relabel`.
pub async fn relabel_wallet(
    State(state): State<AppState>,
    form: CheckedForm<WalletRequest>,
) -> Response {
    wallet_form(state, form, WalletAction::Relabel).await
}

/// `POST /wallets/remove`.
pub async fn remove_wallet(
    State(state): State<AppState>,
    form: CheckedForm<WalletRequest>,
) -> Response {
    wallet_form(state, form, WalletAction::Remove).await
}

// ---- Payments ----------------------------------------------------------

fn amount(atomic: &str, decimals: u8) -> String {
    match atomic.parse::<i64>() {
        Ok(n) => format!(
            "{} USDC",
            rust_decimal::Decimal::new(n, u32::from(decimals)).normalize()
        ),
        Err(_) => atomic.to_owned(),
    }
}

/// `GET /payments`.
pub async fn payments(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session).await {
        Ok(page) => page,
        Err(response) => return response,
    };
    let payments = match accounts::list_payments(state.store(), &account).await {
        Ok(payments) => payments,
        Err(err) => return AppError::from(err).into_response(),
    };
    let decimals = state.config().x402.asset_decimals;
    let rows = payments
        .into_iter()
        .map(|p| PaymentRow {
            amount: amount(&p.amount_atomic, decimals),
            date: chrono::DateTime::parse_from_rfc3339(&p.created_at)
                .map(|t| when(t.timestamp_millis()))
                .unwrap_or(p.created_at),
            payment_id: p.payment_id,
            quote_id: p.quote_id,
            entitlement: p.entitlement,
            wallet: p.wallet,
            status: p.status,
            transaction: p.transaction,
        })
        .collect();
    let portal = Portal {
        viewer,
        page: PortalPage::Payments(rows),
    };
    render(&state, "/payments", StatusCode::OK, portal).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_in_usdc() {
        assert_eq!(amount("50000", 6), "0.05 USDC");
        assert_eq!(amount("1000000", 6), "1 USDC");
    }

    #[test]
    fn times_read_in_utc_minutes() {
        assert_eq!(when(1_796_126_400_000), "2026-12-01 12:00 UTC");
    }
}
