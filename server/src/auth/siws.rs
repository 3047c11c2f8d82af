//! Sign-In With Solana: a wallet proves it holds an address by signing a
//! message the server wrote, in the SIWS / CAIP-122 text layout wallets
//! display. The server hands out a nonce bound to one address for five
//! minutes ([`challenge`]); [`verify`] parses the signed message strictly,
//! checks it was written for this site, network and moment, checks the
//! ed25519 signature over the exact bytes, and only then consumes the nonce
//! in one statement, so a proof is good once, even under two concurrent
//! verifies, and a garbage signature cannot burn someone else's nonce.
//!
//! The nonce is not a secret (it is in the message a wallet shows and signs):
//! the signature is the proof. It is stored in clear so a verify can tell a
//! replay from an unknown nonce in the log.

use std::fmt::Write as _;

use chrono::{DateTime, SecondsFormat, Utc};
use rand::{Rng, distributions::Alphanumeric, rngs::OsRng};

use super::signin::{Refusal, SignInError, refuse};
use crate::clock::UnixMillis;
use crate::solana::WalletAddress;
use crate::store::{NewSiwsNonce, NonceUse, Store};

/// How long a challenge can be signed and verified.
pub const NONCE_TTL_MS: i64 = 5 * 60 * 1000;
/// How far a message's Issued At may be ahead of the server's clock.
pub const CLOCK_SKEW_MS: i64 = 60 * 1000;
/// The statement line of every message.
pub const STATEMENT: &str = "Sign in to Ledger.";
/// The chain id the messages name unless configured otherwise.
pub const DEFAULT_CHAIN_ID: &str = "mainnet";
/// Alphanumeric characters in a nonce (about 190 bits).
const NONCE_LEN: usize = 32;

const HEADER_SUFFIX: &str = " wants you to sign in with your Solana account:";

/// Where the messages say they are for, built once from the configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiwsSettings {
    /// `host[:port]` of the public URL.
    pub domain: String,
    /// The public URL itself.
    pub uri: String,
    /// The chain id the messages name (`mainnet`, `devnet`, …).
    pub chain_id: String,
}

impl SiwsSettings {
    /// Settings for a server reachable at `public_url` (http or https).
    pub fn new(public_url: &str, chain_id: &str) -> Result<Self, String> {
        let url = url::Url::parse(public_url).map_err(|e| format!("public url: {e}"))?;
        let host = url
            .host_str()
            .ok_or_else(|| "public url has no host".to_owned())?;
        let domain = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        if chain_id.is_empty() || chain_id.contains(char::is_whitespace) {
            return Err("chain id must be one word".to_owned());
        }
        Ok(Self {
            domain,
            uri: public_url.to_owned(),
            chain_id: chain_id.to_owned(),
        })
    }
}

/// What a SIWS check needs: the store, the settings, and the time.
#[derive(Clone, Copy)]
pub struct SiwsContext<'a> {
    pub store: &'a Store,
    pub settings: &'a SiwsSettings,
    pub now_ms: UnixMillis,
}

/// A message for the wallet to sign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    pub message: String,
    pub nonce: String,
    /// RFC 3339, the message's Expiration Time.
    pub expires_at: String,
}

/// The address a verified message proved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedWallet {
    pub address: WalletAddress,
}

/// The fields of a message, as written in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiwsMessage {
    pub domain: String,
    pub address: WalletAddress,
    pub statement: String,
    pub uri: String,
    pub chain_id: String,
    pub nonce: String,
    /// The Issued At text and its value.
    pub issued_at: (String, UnixMillis),
    /// The Expiration Time text and its value.
    pub expiration_time: (String, UnixMillis),
}

impl SiwsMessage {
    /// The message text: exactly what a wallet shows and signs.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = write!(
            out,
            "{domain}{HEADER_SUFFIX}\n{address}\n\n{statement}\n\nURI: {uri}\nVersion: 1\n\
             Chain ID: {chain_id}\nNonce: {nonce}\nIssued At: {issued_at}\nExpiration Time: {expiration_time}",
            domain = self.domain,
            address = self.address,
            statement = self.statement,
            uri = self.uri,
            chain_id = self.chain_id,
            nonce = self.nonce,
            issued_at = self.issued_at.0,
            expiration_time = self.expiration_time.0,
        );
        out
    }

    /// Parse a message in exactly the layout [`render`](Self::render)
    /// writes: every line present, in order, nothing added. Parsing then
    /// rendering must give back the same bytes, so no stray whitespace,
    /// carriage return or extra field can hide in what was signed.
    pub fn parse(text: &str) -> Result<Self, SignInError> {
        let malformed = SignInError::MalformedMessage;
        let lines: Vec<&str> = text.split('\n').collect();
        let [
            header,
            address,
            blank1,
            statement,
            blank2,
            uri,
            version,
            chain_id,
            nonce,
            issued_at,
            expiration_time,
        ] = lines.as_slice()
        else {
            return Err(malformed(
                "it does not have the lines of a Sign-In With Solana message",
            ));
        };
        let domain = header
            .strip_suffix(HEADER_SUFFIX)
            .filter(|d| !d.is_empty())
            .ok_or(malformed(
                "the first line must be `{domain} wants you to sign in with your Solana account:`",
            ))?;
        let address = WalletAddress::parse(address)
            .map_err(|_| malformed("the second line must be the wallet's base58 address"))?;
        if !blank1.is_empty() || !blank2.is_empty() {
            return Err(malformed(
                "the statement must stand between two empty lines",
            ));
        }
        if statement.is_empty() {
            return Err(malformed("the statement is empty"));
        }
        if domain.contains(char::is_whitespace) {
            return Err(malformed("the domain must be one word"));
        }
        let uri = uri
            .strip_prefix("URI: ")
            .filter(|u| !u.contains(char::is_whitespace) && url::Url::parse(u).is_ok())
            .ok_or(malformed("expected `URI: ` and a URL"))?;
        if *version != "Version: 1" {
            return Err(malformed("expected `Version: 1`"));
        }
        let chain_id = chain_id
            .strip_prefix("Chain ID: ")
            .filter(|c| !c.is_empty() && !c.contains(char::is_whitespace))
            .ok_or(malformed("expected `Chain ID: ` and one word"))?;
        let nonce = nonce
            .strip_prefix("Nonce: ")
            .ok_or(malformed("expected `Nonce: `"))?;
        if !(8..=64).contains(&nonce.len()) || !nonce.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(malformed("the nonce must be 8 to 64 letters and digits"));
        }
        let issued_at = issued_at
            .strip_prefix("Issued At: ")
            .ok_or(malformed("expected `Issued At: `"))?;
        let expiration_time = expiration_time
            .strip_prefix("Expiration Time: ")
            .ok_or(malformed("expected `Expiration Time: `"))?;
        let issued_ms = parse_time(issued_at).ok_or(malformed("Issued At must be RFC 3339"))?;
        let expires_ms =
            parse_time(expiration_time).ok_or(malformed("Expiration Time must be RFC 3339"))?;
        if expires_ms <= issued_ms {
            return Err(malformed("Expiration Time must be after Issued At"));
        }
        let message = Self {
            domain: (*domain).to_owned(),
            address,
            statement: (*statement).to_owned(),
            uri: uri.to_owned(),
            chain_id: chain_id.to_owned(),
            nonce: nonce.to_owned(),
            issued_at: (issued_at.to_owned(), issued_ms),
            expiration_time: (expiration_time.to_owned(), expires_ms),
        };
        if message.render() != text {
            return Err(malformed(
                "it is not in the exact layout (stray whitespace?)",
            ));
        }
        Ok(message)
    }
}

fn parse_time(text: &str) -> Option<UnixMillis> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp_millis())
}

fn format_time(ms: UnixMillis) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Issue a challenge for `address`: a fresh nonce, stored for five minutes,
/// and the message the wallet is to sign.
pub async fn challenge(ctx: SiwsContext<'_>, address: &str) -> Result<Challenge, SignInError> {
    let address = WalletAddress::parse(address).map_err(SignInError::InvalidAddress)?;
    let nonce: String = OsRng
        .sample_iter(&Alphanumeric)
        .take(NONCE_LEN)
        .map(char::from)
        .collect();
    let expires_ms = ctx.now_ms + NONCE_TTL_MS;
    ctx.store
        .insert_siws_nonce(&NewSiwsNonce {
            nonce: nonce.clone(),
            address: address.as_str().to_owned(),
            issued_at: ctx.now_ms,
            expires_at: expires_ms,
        })
        .await?;
    let expires_at = format_time(expires_ms);
    let message = SiwsMessage {
        domain: ctx.settings.domain.clone(),
        address,
        statement: STATEMENT.to_owned(),
        uri: ctx.settings.uri.clone(),
        chain_id: ctx.settings.chain_id.clone(),
        nonce: nonce.clone(),
        issued_at: (format_time(ctx.now_ms), ctx.now_ms),
        expiration_time: (expires_at.clone(), expires_ms),
    };
    Ok(Challenge {
        message: message.render(),
        nonce,
        expires_at,
    })
}

/// Verify a signed message and consume its nonce. The checks that need no
/// database run first; the nonce is consumed last, so only a proof that
/// would otherwise succeed can use it up.
pub async fn verify(
    ctx: SiwsContext<'_>,
    message: &str,
    signature_b58: &str,
) -> Result<VerifiedWallet, SignInError> {
    let refused = |reason| refuse("solana", reason);
    let signature = parse_signature(signature_b58)?;
    let parsed = SiwsMessage::parse(message)?;
    let settings = ctx.settings;
    if parsed.domain != settings.domain {
        return Err(refused(Refusal::OtherDomain));
    }
    if parsed.uri != settings.uri {
        return Err(refused(Refusal::OtherUri));
    }
    if parsed.chain_id != settings.chain_id {
        return Err(refused(Refusal::OtherChain));
    }
    if parsed.statement != STATEMENT {
        return Err(SignInError::MalformedMessage(
            "the statement is not the one this server writes",
        ));
    }
    if parsed.expiration_time.1 <= ctx.now_ms {
        return Err(refused(Refusal::Expired));
    }
    if parsed.issued_at.1 > ctx.now_ms + CLOCK_SKEW_MS {
        return Err(refused(Refusal::IssuedInFuture));
    }
    if !signed_by(&parsed.address, message.as_bytes(), &signature) {
        return Err(refused(Refusal::BadSignature));
    }
    match ctx
        .store
        .consume_siws_nonce(&parsed.nonce, parsed.address.as_str(), ctx.now_ms)
        .await?
    {
        NonceUse::Consumed => Ok(VerifiedWallet {
            address: parsed.address,
        }),
        NonceUse::Unknown => Err(refused(Refusal::UnknownNonce)),
        NonceUse::AlreadyUsed => Err(refused(Refusal::NonceUsed)),
        NonceUse::Expired => Err(refused(Refusal::Expired)),
        NonceUse::OtherAddress => Err(refused(Refusal::NonceForOtherAddress)),
    }
}

fn parse_signature(text: &str) -> Result<ed25519_dalek::Signature, SignInError> {
    // 64 bytes are at most 88 base58 characters.
    if text.is_empty() || text.len() > 88 {
        return Err(SignInError::MalformedSignature(
            "must be the base58 of a 64-byte ed25519 signature",
        ));
    }
    let bytes = bs58::decode(text)
        .into_vec()
        .map_err(|_| SignInError::MalformedSignature("is not base58"))?;
    let bytes: [u8; 64] = bytes.try_into().map_err(|_| {
        SignInError::MalformedSignature("must decode to 64 bytes (an ed25519 signature)")
    })?;
    Ok(ed25519_dalek::Signature::from_bytes(&bytes))
}

/// Whether `signature` is `address`'s ed25519 signature of `bytes`. An
/// address that is not a curve point (a program-derived address) cannot
/// sign anything.
fn signed_by(address: &WalletAddress, bytes: &[u8], signature: &ed25519_dalek::Signature) -> bool {
    let Ok(key) = bs58::decode(address.as_str()).into_vec() else {
        return false;
    };
    let Ok(key) = <[u8; 32]>::try_from(key) else {
        return false;
    };
    let Ok(key) = ed25519_dalek::VerifyingKey::from_bytes(&key) else {
        return false;
    };
    key.verify_strict(bytes, signature).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADDRESS: &str = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU";

    fn sample() -> String {
        format!(
            "ledger.example:8443 wants you to sign in with your Solana account:\n{ADDRESS}\n\n\
             Sign in to Ledger.\n\nURI: https://ledger.example:8443\nVersion: 1\nChain ID: mainnet\n\
             Nonce: abcDEF0123456789\nIssued At: 2026-12-01T12:00:00.000Z\n\
             Expiration Time: 2026-12-01T12:05:00.000Z"
        )
    }

    #[test]
    fn a_message_parses_into_its_fields_and_renders_back_byte_for_byte() {
        let text = sample();
        let m = SiwsMessage::parse(&text).unwrap();
        assert_eq!(m.domain, "ledger.example:8443");
        assert_eq!(m.address.as_str(), ADDRESS);
        assert_eq!(m.statement, STATEMENT);
        assert_eq!(m.uri, "https://ledger.example:8443");
        assert_eq!(m.chain_id, "mainnet");
        assert_eq!(m.nonce, "abcDEF0123456789");
        assert_eq!(m.issued_at.1, 1_796_126_400_000);
        assert_eq!(m.expiration_time.1 - m.issued_at.1, NONCE_TTL_MS);
        assert_eq!(m.render(), text);
    }

    #[test]
    fn any_rfc3339_time_is_kept_as_written() {
        let text = sample().replace("2026-12-01T12:00:00.000Z", "2026-12-01T13:00:00+01:00");
        let m = SiwsMessage::parse(&text).unwrap();
        assert_eq!(m.issued_at.1, 1_796_126_400_000);
        assert_eq!(m.render(), text);
    }

    fn refused(text: &str) -> &'static str {
        match SiwsMessage::parse(text) {
            Err(SignInError::MalformedMessage(why)) => why,
            other => panic!("{text:?} parsed: {other:?}"),
        }
    }

    #[test]
    fn every_line_is_required_in_order() {
        let text = sample();
        let lines: Vec<&str> = text.split('\n').collect();
        for skip in 0..lines.len() {
            let mut fewer = lines.clone();
            fewer.remove(skip);
            refused(&fewer.join("\n"));
        }
        let mut swapped = lines.clone();
        swapped.swap(8, 9);
        refused(&swapped.join("\n"));
    }

    #[test]
    fn stray_whitespace_or_line_endings_are_refused() {
        let text = sample();
        refused(&format!("{text}\n"));
        refused(&text.replace('\n', "\r\n"));
        refused(&text.replace("Version: 1", "Version: 1 "));
        refused(&text.replace("URI: ", "URI:  "));
        refused(&text.replace("Chain ID: mainnet", "Chain ID: main net"));
        refused(&text.replace("ledger.example:8443 wants", "ledger example wants"));
        refused(&text.replace(ADDRESS, &format!(" {ADDRESS}")));
        refused(&format!(" {text}"));
    }

    #[test]
    fn each_field_is_checked() {
        let text = sample();
        assert!(refused(&text.replace(" wants you", " want you")).contains("first line"));
        assert!(refused(&text.replace(ADDRESS, "not-an-address")).contains("address"));
        assert!(refused(&text.replace("Sign in to Ledger.", "")).contains("statement"));
        assert!(refused(&text.replace("Version: 1", "Version: 2")).contains("Version"));
        assert!(
            refused(&text.replace("URI: https://ledger.example:8443", "URI: ledger"))
                .contains("URI")
        );
        assert!(refused(&text.replace("Chain ID: ", "Chain: ")).contains("Chain ID"));
        assert!(refused(&text.replace("abcDEF0123456789", "short")).contains("nonce"));
        assert!(refused(&text.replace("abcDEF0123456789", "abc-DEF_0123456789")).contains("nonce"));
        assert!(refused(&text.replace("2026-12-01T12:00:00.000Z", "yesterday")).contains("Issued"));
        assert!(
            refused(&text.replace("2026-12-01T12:05:00.000Z", "2026-12-01 12:05"))
                .contains("Expiration")
        );
        assert!(
            refused(&text.replace("2026-12-01T12:05:00.000Z", "2026-12-01T11:05:00.000Z"))
                .contains("after")
        );
        assert!(
            refused(&text.replace("ledger.example:8443 wants", " wants")).contains("first line")
        );
    }

    #[test]
    fn settings_take_the_domain_from_the_public_url() {
        let s = SiwsSettings::new("https://ledger.example", "mainnet").unwrap();
        assert_eq!(s.domain, "ledger.example");
        assert_eq!(s.uri, "https://ledger.example");
        let s = SiwsSettings::new("http://127.0.0.1:3000", "devnet").unwrap();
        assert_eq!(s.domain, "127.0.0.1:3000");
        assert!(SiwsSettings::new("not a url", "mainnet").is_err());
        assert!(SiwsSettings::new("https://ledger.example", "main net").is_err());
    }

    #[test]
    fn malformed_signatures_are_refused_before_anything_else() {
        for bad in ["", "0OIl", "abc", &"1".repeat(89)] {
            assert!(
                matches!(
                    parse_signature(bad),
                    Err(SignInError::MalformedSignature(_))
                ),
                "{bad}"
            );
        }
        let short = bs58::encode([7u8; 63]).into_string();
        assert!(matches!(
            parse_signature(&short),
            Err(SignInError::MalformedSignature(_))
        ));
        let right = bs58::encode([7u8; 64]).into_string();
        assert!(parse_signature(&right).is_ok());
    }
}
