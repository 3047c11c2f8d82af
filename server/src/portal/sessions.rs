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
    // A flash left before sign-in could not be opened under the new id.
    session
        .remove::<Flash>(FLASH_KEY)
        .await
        .map_err(session_failed)?;
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

/// How long a flash waits for its page: ten minutes, in milliseconds.
/// The 303 is followed at once; a flash older than this is dropped unread.
pub const FLASH_LIFETIME_MS: i64 = 10 * 60 * 1000;

/// What a form just did, kept in the session between its POST and the GET
/// its 303 leads to (post/redirect/get), for the page at `page` and the
/// account at `account_id` only, for [`FLASH_LIFETIME_MS`], and taken the
/// first time that page shows it: a reload shows the page without it and
/// never repeats the action.
///
/// The outcome itself is sealed: `sealed` is ChaCha20-Poly1305 over the
/// JSON of a [`Flashed`], under a key derived (HKDF-SHA256) from the raw
/// session id, which only the browser's cookie holds; the store keeps
/// only the id's SHA-256. A copy of the database therefore holds no usable
/// token or share link, even while a flash waits. The page, account, id
/// and expiry are the cipher's associated data, so none can be swapped.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flash {
    /// The path of the page that shows it (`/keys`, `/wallets/{address}`).
    pub page: String,
    /// The account it was left for.
    pub account_id: String,
    /// Random, once: taking it records this id as consumed, so a stale
    /// write of the session row by a concurrent request cannot show it
    /// again.
    pub id: String,
    /// The service clock's ms after which it is dropped unread.
    pub expires_at_ms: i64,
    /// base64url(nonce ‖ ciphertext ‖ tag).
    pub sealed: String,
}

impl std::fmt::Debug for Flash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flash")
            .field("page", &self.page)
            .field("account_id", &self.account_id)
            .field("expires_at_ms", &self.expires_at_ms)
            .finish_non_exhaustive()
    }
}

/// The outcome a [`Flash`] carries.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Flashed {
    /// What happened, in words.
    Notice(String),
    /// A token just minted: its plaintext, shown once. Sealed in the
    /// session row (never in a URL) until the Keys page shows it.
    Minted(app::views::MintedToken),
    /// A share link just minted: its URL (the token is in it), shown once.
    NewLink { url: String, notice: String },
}

/// Redacted: a token shows its display prefix, a link its path's start.
impl std::fmt::Debug for Flashed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Notice(notice) => f.debug_tuple("Notice").field(notice).finish(),
            Self::Minted(minted) => f.debug_tuple("Minted").field(minted).finish(),
            Self::NewLink { url, notice } => {
                let hint: String = url
                    .rsplit_once("/s/")
                    .map(|(_, token)| token.chars().take(6).collect())
                    .unwrap_or_default();
                f.debug_struct("NewLink")
                    .field("url", &format_args!("/s/{hint}…"))
                    .field("notice", notice)
                    .finish()
            }
        }
    }
}

/// The flash key of the session `id`: HKDF-SHA256 of its raw id (which
/// the store never sees) for this one purpose.
fn flash_key(id: &Id) -> Result<ring::aead::LessSafeKey, AppError> {
    let failed = |what: &str| AppError::internal("flash key", what.to_owned());
    let mut key = [0u8; 32];
    hkdf::Hkdf::<Sha256>::new(None, id.to_string().as_bytes())
        .expand(b"ledger/portal-flash/v1", &mut key)
        .map_err(|_| failed("HKDF refused 32 bytes"))?;
    let key = ring::aead::UnboundKey::new(&ring::aead::CHACHA20_POLY1305, &key)
        .map_err(|_| failed("not a ChaCha20-Poly1305 key"))?;
    Ok(ring::aead::LessSafeKey::new(key))
}

/// The associated data binding a sealed flash to where it may be shown.
fn flash_aad(page: &str, account_id: &str, id: &str, expires_at_ms: i64) -> Vec<u8> {
    format!("{page}\n{account_id}\n{id}\n{expires_at_ms}").into_bytes()
}

const NONCE_LEN: usize = ring::aead::NONCE_LEN;

fn seal(key: &ring::aead::LessSafeKey, aad: &[u8], what: &Flashed) -> Result<String, AppError> {
    let mut data = serde_json::to_vec(what).map_err(|e| AppError::internal("flash", e))?;
    let mut nonce = [0u8; NONCE_LEN];
    rand::rngs::OsRng.fill_bytes(&mut nonce);
    key.seal_in_place_append_tag(
        ring::aead::Nonce::assume_unique_for_key(nonce),
        ring::aead::Aad::from(aad),
        &mut data,
    )
    .map_err(|_| AppError::internal("flash", "sealing failed"))?;
    let mut out = nonce.to_vec();
    out.extend_from_slice(&data);
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(out))
}

/// The flash's outcome, or `None` when it cannot be opened (another
/// session id, a changed field, a damaged row).
fn open(key: &ring::aead::LessSafeKey, aad: &[u8], sealed: &str) -> Option<Flashed> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(sealed)
        .ok()?;
    if bytes.len() < NONCE_LEN {
        return None;
    }
    let (nonce, data) = bytes.split_at(NONCE_LEN);
    let nonce = ring::aead::Nonce::try_assume_unique_for_key(nonce).ok()?;
    let mut data = data.to_vec();
    let plain = key
        .open_in_place(nonce, ring::aead::Aad::from(aad), &mut data)
        .ok()?;
    serde_json::from_slice(plain).ok()
}

/// The ids of flashes already taken, each with its expiry: a flash whose
/// id is here is never shown again, whatever a stale session write put
/// back. Entries are dropped once their flash would have expired anyway,
/// so the set stays as small as the flashes of the last ten minutes. It is
/// this process's: the service runs as one process per database.
static CONSUMED: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<String, i64>>> =
    std::sync::LazyLock::new(Default::default);

/// Record `id` as taken; false when it already was (a concurrent or stale
/// copy of the same flash).
fn consume(id: &str, expires_at_ms: i64, now_ms: i64) -> bool {
    let mut consumed = CONSUMED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    consumed.retain(|_, expires| *expires > now_ms);
    consumed.insert(id.to_owned(), expires_at_ms).is_none()
}

/// Keep `what` for the next GET of `page` by `account` (within
/// [`FLASH_LIFETIME_MS`] of `now_ms`), sealed under this session's id,
/// replacing any earlier flash.
pub async fn flash(
    session: &Session,
    account: &AccountId,
    now_ms: i64,
    page: &str,
    what: Flashed,
) -> Result<(), AppError> {
    let Some(session_id) = session.id() else {
        // No stored session (never signed in): nowhere to keep it.
        return Ok(());
    };
    let mut id = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut id);
    let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id);
    let expires_at_ms = now_ms.saturating_add(FLASH_LIFETIME_MS);
    let aad = flash_aad(page, account.as_str(), &id, expires_at_ms);
    let flash = Flash {
        page: page.to_owned(),
        account_id: account.as_str().to_owned(),
        sealed: seal(&flash_key(&session_id)?, &aad, &what)?,
        id,
        expires_at_ms,
    };
    session
        .insert(FLASH_KEY, flash)
        .await
        .map_err(session_failed)
}

/// The flash kept for `page` and `account`, removed from the session as it
/// is taken; a flash for another page stays for that page. A flash that
/// expired, belongs to another account, was taken already or cannot be
/// opened under this session's id is removed and not shown.
pub async fn take_flash(
    session: &Session,
    account: &AccountId,
    now_ms: i64,
    page: &str,
) -> Result<Option<Flashed>, AppError> {
    let Some(flash) = session
        .get::<Flash>(FLASH_KEY)
        .await
        .map_err(session_failed)?
    else {
        return Ok(None);
    };
    let live = flash.expires_at_ms > now_ms && flash.account_id == account.as_str();
    if live && flash.page != page {
        return Ok(None);
    }
    session
        .remove::<Flash>(FLASH_KEY)
        .await
        .map_err(session_failed)?;
    if !live || !consume(&flash.id, flash.expires_at_ms, now_ms) {
        return Ok(None);
    }
    let Some(session_id) = session.id() else {
        return Ok(None);
    };
    let aad = flash_aad(
        &flash.page,
        &flash.account_id,
        &flash.id,
        flash.expires_at_ms,
    );
    Ok(open(&flash_key(&session_id)?, &aad, &flash.sealed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minted() -> Flashed {
        Flashed::Minted(app::views::MintedToken {
            plaintext: "lm_abcdefgh_THE-SECRET-PART".to_owned(),
            kind: "mcp".to_owned(),
            label: "laptop".to_owned(),
        })
    }

    #[test]
    fn a_sealed_flash_opens_only_under_its_session_id_and_fields() {
        let (one, two) = (Id::default(), Id::default());
        let aad = flash_aad("/keys", "acct", "id", 5);
        let (one_key, two_key) = (flash_key(&one).unwrap(), flash_key(&two).unwrap());
        let sealed = seal(&one_key, &aad, &minted()).unwrap();
        assert!(!sealed.contains("THE-SECRET"));
        assert_eq!(open(&one_key, &aad, &sealed), Some(minted()));
        assert_eq!(open(&two_key, &aad, &sealed), None);
        let moved = flash_aad("/wallets", "acct", "id", 5);
        assert_eq!(open(&one_key, &moved, &sealed), None);
        let later = flash_aad("/keys", "acct", "id", 6);
        assert_eq!(open(&one_key, &later, &sealed), None);
    }

    #[test]
    fn a_flash_id_is_consumed_once() {
        assert!(consume("flash-once", 100, 0));
        assert!(!consume("flash-once", 100, 50));
    }

    #[test]
    fn debug_never_prints_a_secret() {
        let shown = format!("{:?}", minted());
        assert!(!shown.contains("THE-SECRET"), "{shown}");
        let link = Flashed::NewLink {
            url: "https://ledger.example/s/sh_abcdefSECRETTOKEN".to_owned(),
            notice: "made".to_owned(),
        };
        let shown = format!("{link:?}");
        assert!(!shown.contains("SECRETTOKEN"), "{shown}");
    }
}
