//! Portal sessions: tower-sessions over our own [`Store`], and what a
//! session holds once someone signs in ([`SignedIn`]).
//!
//! [`PortalSessions`] implements `tower_sessions::SessionStore` with the
//! store's `portal_sessions` methods, so the pool stays behind `Store` and
//! one table serves SQLite and PostgreSQL. Expiry is decided here, by the
//! service clock (not by tower-sessions' wall clock): a session is over
//! `session.idle_secs` after its last request, or `session.absolute_secs`
//! after its row was created (sign-in and linking draw a new id, hence a new
//! row). The cookie's `Max-Age` is the idle lifetime, refreshed on every
//! response; the row decides. Only the SHA-256 of a session id is stored.

use async_trait::async_trait;
use base64::Engine;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tower_sessions::{
    Expiry, Session, SessionManagerLayer,
    cookie::SameSite,
    session::{Id, Record},
    session_store::{self, SessionStore},
};

use crate::{accounts::AccountId, error::AppError, state::Services};

/// The session cookie's name.
pub const COOKIE_NAME: &str = "ledger_session";
/// The session key [`SignedIn`] is kept under.
const SIGNED_IN_KEY: &str = "signed_in";

/// The session layer the portal's routes sit behind: `ledger_session`,
/// HttpOnly, SameSite=Lax, Secure when the public URL is https, Max-Age
/// the idle lifetime, saved on every response (which slides the idle
/// deadline).
pub fn layer(services: &Services) -> SessionManagerLayer<PortalSessions> {
    let idle = i64::try_from(services.config().session.idle_secs).unwrap_or(i64::MAX);
    SessionManagerLayer::new(PortalSessions(services.clone()))
        .with_name(COOKIE_NAME)
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(services.public_url().starts_with("https://"))
        .with_path("/")
        .with_expiry(Expiry::OnInactivity(time::Duration::seconds(idle)))
        .with_always_save(true)
}

/// The session store over [`crate::store::Store`].
#[derive(Clone)]
pub struct PortalSessions(Services);

impl std::fmt::Debug for PortalSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PortalSessions")
    }
}

fn id_hash(id: &Id) -> String {
    Sha256::digest(id.to_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn backend(err: impl std::fmt::Display) -> session_store::Error {
    session_store::Error::Backend(err.to_string())
}

impl PortalSessions {
    fn deadlines(&self) -> (i64, i64, i64) {
        let now = self.0.now_ms();
        let session = &self.0.config().session;
        (
            now,
            session.idle_deadline(now),
            session.absolute_cutoff(now),
        )
    }
}

#[async_trait]
impl SessionStore for PortalSessions {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        let data = serde_json::to_string(&record.data).map_err(backend)?;
        let (now, idle_deadline, _) = self.deadlines();
        // A 128-bit random id collides only in theory; draw again if so.
        while !(self.0.store())
            .insert_portal_session(&id_hash(&record.id), &data, now, idle_deadline)
            .await
            .map_err(backend)?
        {
            record.id = Id::default();
        }
        Ok(())
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        let data = serde_json::to_string(&record.data).map_err(backend)?;
        let (now, idle_deadline, cutoff) = self.deadlines();
        // A session that ended meanwhile (signed out in another tab, or
        // expired) stays ended: nothing is written.
        (self.0.store())
            .save_portal_session(&id_hash(&record.id), &data, now, idle_deadline, cutoff)
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let (now, _, cutoff) = self.deadlines();
        let Some(data) = (self.0.store())
            .load_portal_session(&id_hash(id), now, cutoff)
            .await
            .map_err(backend)?
        else {
            return Ok(None);
        };
        let data = serde_json::from_str(&data).map_err(backend)?;
        let idle = i64::try_from(self.0.config().session.idle_secs).unwrap_or(i64::MAX);
        Ok(Some(Record {
            id: *id,
            data,
            expiry_date: time::OffsetDateTime::now_utc() + time::Duration::seconds(idle),
        }))
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        (self.0.store())
            .delete_portal_session(&id_hash(id))
            .await
            .map_err(backend)
    }
}

/// What a signed-in session holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SignedIn {
    pub account_id: String,
    /// The per-session CSRF token every portal form carries.
    pub csrf: String,
    pub signed_in_at: i64,
}

impl SignedIn {
    pub fn account(&self) -> Result<AccountId, AppError> {
        AccountId::parse(&self.account_id)
            .map_err(|e| AppError::internal("portal session", e.to_string()))
    }

    /// Whether `presented` is this session's CSRF token (constant time).
    pub fn csrf_matches(&self, presented: &str) -> bool {
        !self.csrf.is_empty() && bool::from(self.csrf.as_bytes().ct_eq(presented.as_bytes()))
    }
}

fn session_failed(err: tower_sessions::session::Error) -> AppError {
    AppError::internal("portal session", err)
}

/// Who the session is signed in as, if anyone.
pub async fn signed_in(session: &Session) -> Result<Option<SignedIn>, AppError> {
    session
        .get::<SignedIn>(SIGNED_IN_KEY)
        .await
        .map_err(session_failed)
}

/// Sign the session in as `account`: a new session id (so an id planted
/// before sign-in is worth nothing after it) and a new CSRF token.
pub async fn begin(session: &Session, account: &AccountId, now_ms: i64) -> Result<(), AppError> {
    session.cycle_id().await.map_err(session_failed)?;
    let mut csrf = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut csrf);
    let signed_in = SignedIn {
        account_id: account.as_str().to_owned(),
        csrf: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(csrf),
        signed_in_at: now_ms,
    };
    session
        .insert(SIGNED_IN_KEY, signed_in)
        .await
        .map_err(session_failed)
}

/// End the session: its row is deleted and the cookie removed.
pub async fn end(session: &Session) -> Result<(), AppError> {
    session.flush().await.map_err(session_failed)
}

/// The session key the one-time [`Flash`] is kept under.
const FLASH_KEY: &str = "flash";

/// What a form just did, kept in the session between its POST and the GET
/// its 303 leads to (post/redirect/get), for the page at `page` only, and
/// removed the first time that page shows it: a reload shows the page
/// without it and never repeats the action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flash {
    /// The path of the page that shows it (`/keys`, `/wallets/{address}`).
    pub page: String,
    pub what: Flashed,
}

/// The outcome a [`Flash`] carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Flashed {
    /// What happened, in words.
    Notice(String),
    /// A token just minted: its plaintext, shown once. Kept server-side in
    /// the session row (never in a URL) until the Keys page shows it.
    Minted(app::views::MintedToken),
    /// A share link just minted: its URL (the token is in it), shown once.
    NewLink { url: String, notice: String },
}

/// Keep `what` for the next GET of `page`, replacing any earlier flash.
pub async fn flash(session: &Session, page: &str, what: Flashed) -> Result<(), AppError> {
    let flash = Flash {
        page: page.to_owned(),
        what,
    };
    session
        .insert(FLASH_KEY, flash)
        .await
        .map_err(session_failed)
}

/// The flash kept for `page`, removed from the session as it is taken; a
/// flash for another page stays for that page.
pub async fn take_flash(session: &Session, page: &str) -> Result<Option<Flashed>, AppError> {
    let kept: Option<Flash> = session.get(FLASH_KEY).await.map_err(session_failed)?;
    match kept {
        Some(flash) if flash.page == page => {
            session
                .remove::<Flash>(FLASH_KEY)
                .await
                .map_err(session_failed)?;
            Ok(Some(flash.what))
        }
        _ => Ok(None),
    }
}
