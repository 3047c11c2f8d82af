//! The account pages and their forms. A GET renders the page for the
//! signed-in account (a signed-out visitor is sent to `/signin`); a form
//! POST checks the session's CSRF token first (a refusal is a 403 page and
//! nothing changes), then does one domain call and answers a 303 back to
//! the page with what it did kept in the session's one-time flash
//! (post/redirect/get: a reload shows the page again and never repeats the
//! action), or the page again with the error next to its field. A minted
//! token's plaintext rides in that flash, sealed under the session id (the
//! database cannot read it; see `sessions::Flash`), and is taken the first
//! time the Keys page shows it (`Cache-Control: no-store`); it is never in
//! a URL. Destructive actions (revoke a token, disconnect an
//! OAuth client, remove a wallet) are a GET of a confirm page first that
//! names what they act on; its form does the POST.

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
    render,
    sessions::{Flashed, flash, take_flash},
    viewer,
};
use app::{
    frame::{Portal, PortalPage},
    views::{
        ConfirmView, FieldError, KeysView, MintForm, MintedToken, OAuthActivityRow, OAuthClientRow,
        PaymentRow, SignInView, TokenRow, WalletRow, WalletsView,
    },
};

use crate::{
    accounts::{self, AccountId, AccountsError, Scopes, TokenId, TokenKind},
    error::AppError,
    solana::WalletAddress,
    state::AppState,
};

/// A time for people: `1 Dec 2026, 12:00 UTC`.
pub(super) fn when(ms: i64) -> String {
    crate::values::format::date_time(ms)
}

/// The 303 a form answers once it acted: back to `page`, with `what` in
/// the session's flash for that page's next GET.
pub(super) async fn done(
    state: &AppState,
    session: &Session,
    account: &AccountId,
    page: &str,
    what: Flashed,
) -> Response {
    match flash(session, account, state.now_ms(), page, what).await {
        Ok(()) => Redirect::to(page).into_response(),
        Err(err) => err.into_response(),
    }
}

/// The confirm page of a destructive action, rendered at `path` (the GET
/// of the action's own path).
pub(super) async fn confirm_page(
    state: &AppState,
    viewer: app::frame::Viewer,
    path: &str,
    confirm: ConfirmView,
) -> Response {
    let portal = Portal {
        viewer,
        page: PortalPage::Confirm(confirm),
    };
    render(state, path, StatusCode::OK, portal).await
}

/// Where a signed-out visitor to `uri` is sent: the sign-in page, with
/// `next` set to the page they asked for so the sign-in returns there
/// (when it is a path `http::safe_next` accepts; else plain `/signin`).
pub(super) fn sign_in_first(uri: &axum::http::Uri) -> Response {
    let asked = uri.path_and_query().map_or("/", |pq| pq.as_str());
    match crate::http::safe_next(asked) {
        Some(next) => {
            let next: String = url::form_urlencoded::byte_serialize(next.as_bytes()).collect();
            Redirect::to(&format!("/signin?next={next}")).into_response()
        }
        None => Redirect::to("/signin").into_response(),
    }
}

/// The signed-in account of a page request (`uri`), or where to send the
/// visitor ([`sign_in_first`]).
pub(super) async fn account_page(
    state: &AppState,
    parts: &Parts,
    session: &Session,
    uri: &axum::http::Uri,
) -> Result<(app::frame::Viewer, AccountId), Response> {
    let (viewer, signed_in) = viewer(state, parts, session)
        .await
        .map_err(IntoResponse::into_response)?;
    match signed_in {
        Some(signed) => Ok((
            viewer,
            signed.account().map_err(IntoResponse::into_response)?,
        )),
        None => Err(sign_in_first(uri)),
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
            created_day: crate::values::format::date(t.created_at),
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

/// `GET /keys`, with what the last form did (a token minted: its
/// plaintext, this once).
pub async fn keys(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(page) => page,
        Err(response) => return response,
    };
    let mut view = KeysView::default();
    match take_flash(&session, &account, state.now_ms(), "/keys").await {
        Ok(Some(Flashed::Minted(minted))) => view.minted = Some(minted),
        Ok(Some(Flashed::Notice(notice))) => view.notice = Some(notice),
        Ok(Some(Flashed::NewLink { .. }) | None) => {}
        Err(err) => return err.into_response(),
    }
    keys_response(&state, viewer, &account, StatusCode::OK, view).await
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

/// `POST /keys`: mint a token; 303 to the Keys page, which shows the
/// plaintext once (from the session's flash).
pub async fn mint(
    State(state): State<AppState>,
    CheckedForm {
        viewer,
        account,
        form,
        session,
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
            let minted = MintedToken {
                plaintext: minted.plaintext,
                kind: minted.kind.as_str().to_owned(),
                label: minted.label,
            };
            done(&state, &session, &account, "/keys", Flashed::Minted(minted)).await
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

/// How a token is named to people: its label, else its prefix.
fn token_name(row: &TokenRow) -> String {
    if row.label.is_empty() {
        format!("{}…", row.prefix)
    } else {
        row.label.clone()
    }
}

/// The Keys page answering that `field` names nothing live on the account.
async fn keys_not_found(
    state: &AppState,
    viewer: app::frame::Viewer,
    account: &AccountId,
    field: &str,
    message: &str,
) -> Response {
    let view = KeysView {
        error: Some(FieldError {
            field: field.to_owned(),
            message: message.to_owned(),
        }),
        ..KeysView::default()
    };
    keys_response(state, viewer, account, StatusCode::NOT_FOUND, view).await
}

const NO_TOKEN: &str = "no such live token on this account; it may have been revoked already";

#[derive(Deserialize)]
pub struct TokenQuery {
    #[serde(default)]
    token_id: String,
}

/// `GET /keys/revoke?token_id=…`: ask before revoking, naming the token.
pub async fn confirm_revoke(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
    axum::extract::Query(query): axum::extract::Query<TokenQuery>,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(page) => page,
        Err(response) => return response,
    };
    let rows = match token_rows(&state, &account).await {
        Ok(rows) => rows,
        Err(err) => return err.into_response(),
    };
    let Some(row) = rows.into_iter().find(|t| t.id == query.token_id) else {
        return keys_not_found(&state, viewer, &account, "token_id", NO_TOKEN).await;
    };
    let name = token_name(&row);
    let kind = if row.kind == "api" {
        "API key"
    } else {
        "MCP token"
    };
    let confirm = ConfirmView {
        title: "Ledger: revoke a token".to_owned(),
        question: format!("Revoke {kind} `{name}` (created {})?", row.created_day),
        consequence: format!(
            "Anything using it ({} scopes, {}…) is refused from now on. This cannot be undone; mint another to replace it.",
            row.scopes, row.prefix
        ),
        action: "/keys/revoke".to_owned(),
        fields: vec![("token_id".to_owned(), row.id.clone())],
        button: format!("Revoke {name}"),
        cancel: "/keys".to_owned(),
    };
    confirm_page(&state, viewer, "/keys/revoke", confirm).await
}

/// `POST /keys/revoke`: revoke one of the account's tokens, 303 to /keys.
pub async fn revoke(
    State(state): State<AppState>,
    CheckedForm {
        viewer,
        account,
        form,
        session,
    }: CheckedForm<RevokeRequest>,
) -> Response {
    let name = match token_rows(&state, &account).await {
        Ok(rows) => rows
            .iter()
            .find(|t| t.id == form.token_id)
            .map(token_name)
            .unwrap_or_default(),
        Err(err) => return err.into_response(),
    };
    let result = match TokenId::parse(&form.token_id) {
        Ok(id) => accounts::revoke(state.store(), state.now_ms(), &account, &id).await,
        Err(err) => Err(err),
    };
    match result {
        Ok(()) => {
            let notice = format!("Revoked `{name}`: it no longer works.");
            done(&state, &session, &account, "/keys", Flashed::Notice(notice)).await
        }
        Err(err @ (AccountsError::Invalid { .. } | AccountsError::NoToken(_))) => {
            tracing::debug!(error = %err, "revoke refused");
            keys_not_found(&state, viewer, &account, "token_id", NO_TOKEN).await
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

const NO_CLIENT: &str = "no such connected client on this account";

#[derive(Deserialize)]
pub struct ClientQuery {
    #[serde(default)]
    client_id: String,
}

/// `GET /keys/oauth/disconnect?client_id=…`: ask before disconnecting,
/// naming the client.
pub async fn confirm_disconnect(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
    axum::extract::Query(query): axum::extract::Query<ClientQuery>,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(page) => page,
        Err(response) => return response,
    };
    let clients = match oauth_rows(&state, &account).await {
        Ok((clients, _)) => clients,
        Err(err) => return AppError::from(err).into_response(),
    };
    let Some(client) = clients.into_iter().find(|c| c.client_id == query.client_id) else {
        return keys_not_found(&state, viewer, &account, "client_id", NO_CLIENT).await;
    };
    let confirm = ConfirmView {
        title: "Ledger: disconnect an app".to_owned(),
        question: format!(
            "Disconnect {} (connected {})?",
            client.name, client.connected
        ),
        consequence: format!(
            "Every token {} holds for your account ({}) stops working at once; it must ask you again to reconnect.",
            client.name, client.scopes
        ),
        action: "/keys/oauth/disconnect".to_owned(),
        fields: vec![("client_id".to_owned(), client.client_id.clone())],
        button: format!("Disconnect {}", client.name),
        cancel: "/keys".to_owned(),
    };
    confirm_page(&state, viewer, "/keys/oauth/disconnect", confirm).await
}

/// `POST /keys/oauth/disconnect`: revoke every token of one OAuth client
/// for this account, 303 to /keys.
pub async fn disconnect_oauth_client(
    State(state): State<AppState>,
    CheckedForm {
        viewer,
        account,
        form,
        session,
    }: CheckedForm<DisconnectRequest>,
) -> Response {
    let name = match oauth_rows(&state, &account).await {
        Ok((clients, _)) => clients
            .into_iter()
            .find(|c| c.client_id == form.client_id)
            .map(|c| c.name)
            .unwrap_or_default(),
        Err(err) => return AppError::from(err).into_response(),
    };
    match crate::oauth::flow::disconnect(state.oauth(), &account, &form.client_id).await {
        Ok(true) => {
            let notice = format!("Disconnected {name}: its tokens no longer work.");
            done(&state, &session, &account, "/keys", Flashed::Notice(notice)).await
        }
        Ok(false) => keys_not_found(&state, viewer, &account, "client_id", NO_CLIENT).await,
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

/// `GET /wallets`, with what the last form did.
pub async fn wallets(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(page) => page,
        Err(response) => return response,
    };
    let mut view = WalletsView::default();
    match take_flash(&session, &account, state.now_ms(), "/wallets").await {
        Ok(Some(Flashed::Notice(notice))) => view.notice = Some(notice),
        Ok(_) => {}
        Err(err) => return err.into_response(),
    }
    wallets_response(&state, viewer, &account, StatusCode::OK, view).await
}

/// A watched wallet as people name it: `main (7xKX…gAsU)`, or the
/// shortened address alone.
fn wallet_name(label: &str, address: &WalletAddress) -> String {
    let short = crate::values::format::short_address(address.as_str());
    if label.is_empty() {
        short
    } else {
        format!("`{label}` ({short})")
    }
}

#[derive(Deserialize)]
pub struct AddressQuery {
    #[serde(default)]
    address: String,
}

/// `GET /wallets/remove?address=…`: ask before removing, naming the
/// wallet.
pub async fn confirm_remove_wallet(
    State(state): State<AppState>,
    axum::Extension(parts): axum::Extension<Parts>,
    session: Session,
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
    axum::extract::Query(query): axum::extract::Query<AddressQuery>,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
        Ok(page) => page,
        Err(response) => return response,
    };
    let watched = match accounts::list_wallets(state.store(), &account).await {
        Ok(wallets) => wallets
            .into_iter()
            .find(|w| w.address.as_str() == query.address.trim()),
        Err(err) => return AppError::from(err).into_response(),
    };
    let Some(wallet) = watched else {
        let view = WalletsView {
            error: Some(FieldError {
                field: "address".to_owned(),
                message: "this wallet is not on your list".to_owned(),
            }),
            ..WalletsView::default()
        };
        return wallets_response(&state, viewer, &account, StatusCode::NOT_FOUND, view).await;
    };
    let button_name = if wallet.label.is_empty() {
        crate::values::format::short_address(wallet.address.as_str())
    } else {
        wallet.label.clone()
    };
    let confirm = ConfirmView {
        title: "Ledger: remove a wallet".to_owned(),
        question: format!(
            "Remove wallet {} (added {}) from your list?",
            wallet_name(&wallet.label, &wallet.address),
            crate::values::format::date(wallet.added_at)
        ),
        consequence: format!(
            "Your account stops watching {}: its reads are no longer free for your tokens, and its report and share links leave the portal. You can add it again at any time.",
            wallet.address
        ),
        action: "/wallets/remove".to_owned(),
        fields: vec![("address".to_owned(), wallet.address.to_string())],
        button: format!("Remove {button_name}"),
        cancel: "/wallets".to_owned(),
    };
    confirm_page(&state, viewer, "/wallets/remove", confirm).await
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
        session,
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
        WalletAction::Remove => match accounts::remove_wallet(store, &account, &address).await {
            Ok(true) => Ok(()),
            // Not on this account's list: nothing was removed, so say so.
            Ok(false) => {
                let view = WalletsView {
                    error: Some(FieldError {
                        field: "address".to_owned(),
                        message: "this wallet is not on your list".to_owned(),
                    }),
                    ..WalletsView::default()
                };
                return wallets_response(&state, viewer, &account, StatusCode::NOT_FOUND, view)
                    .await;
            }
            Err(err) => Err(err),
        },
    };
    match result {
        Ok(()) => {
            let name = wallet_name(form.label.trim(), &address);
            let notice = match action {
                WalletAction::Add => format!("Added wallet {name}."),
                WalletAction::Relabel => format!("Relabelled wallet {name}."),
                WalletAction::Remove => format!(
                    "Removed wallet {} from your list.",
                    crate::values::format::short_address(address.as_str())
                ),
            };
            done(
                &state,
                &session,
                &account,
                "/wallets",
                Flashed::Notice(notice),
            )
            .await
        }
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
    axum::extract::OriginalUri(uri): axum::extract::OriginalUri,
) -> Response {
    let (viewer, account) = match account_page(&state, &parts, &session, &uri).await {
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
        assert_eq!(when(1_796_126_400_000), "1 Dec 2026, 12:00 UTC");
    }
}
