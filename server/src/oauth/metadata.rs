//! Client ID Metadata Documents: a `client_id` that is an https URL names
//! a JSON document the client hosts, which says its name and redirect URIs
//! and must name itself as `client_id`.
//!
//! Fetching a URL a stranger chose is a server-side request forgery
//! risk, so [`HttpFetcher`] resolves the host itself, refuses any address
//! in a private, loopback, link-local, shared, multicast or reserved
//! range, and then connects to exactly the addresses it checked (no second
//! DNS answer can point it elsewhere). It follows no redirects, reads at
//! most `metadata_max_bytes`, gives up after `metadata_timeout_ms`, and
//! reports the response's `Cache-Control` so the caller can cache the
//! document. The test-only `metadata_allow_loopback` admits loopback
//! addresses, over plain http or https with a self-signed certificate, so
//! tests can serve documents on 127.0.0.1.
//! The fetch is behind [`MetadataFetcher`] so the flow does not depend on
//! the network to be exercised.

use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    time::Duration,
};

use url::Url;

/// Why a document could not be had.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FetchError {
    #[error("the metadata document's URL is not allowed: {0}")]
    Url(String),
    #[error("the metadata document's host resolves to an address that is not public")]
    Address,
    #[error("the metadata document answered a redirect; it must be served directly")]
    Redirect,
    #[error("the metadata document answered HTTP {0}")]
    Status(u16),
    #[error("the metadata document is larger than {0} bytes")]
    TooLarge(usize),
    #[error("the metadata document could not be fetched in time")]
    Timeout,
    #[error("the metadata document could not be fetched")]
    Unreachable,
}

/// A fetched document: its bytes and how long it may be cached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub body: Vec<u8>,
    /// `None`: do not cache (`no-store`, `no-cache`); `Some(secs)` from
    /// `max-age`, or the default when the response says nothing.
    pub max_age_secs: Option<u64>,
}

/// Cache a document this long when its response says nothing.
pub const DEFAULT_CACHE_SECS: u64 = 300;

#[async_trait::async_trait]
pub trait MetadataFetcher: Send + Sync {
    async fn fetch(&self, url: &Url) -> Result<Fetched, FetchError>;
}

/// The real fetcher, over HTTPS.
#[derive(Clone, Debug)]
pub struct HttpFetcher {
    pub max_bytes: usize,
    pub timeout: Duration,
    pub allow_loopback: bool,
}

impl HttpFetcher {
    pub fn new(settings: &super::Settings) -> Self {
        Self {
            max_bytes: settings.metadata_max_bytes,
            timeout: Duration::from_millis(settings.metadata_timeout_ms),
            allow_loopback: settings.metadata_allow_loopback,
        }
    }
}

/// Whether an address is one a server on the internet may have.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return is_public_v4(v4);
            }
            let seg = v6.segments();
            let first = seg[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || seg[..6] == [0; 6] // ::/96, IPv4-compatible (deprecated)
                || first == 0x2002 // 6to4 2002::/16: reaches any IPv4 address
                || (first == 0x2001 && seg[1] == 0) // Teredo 2001::/32
                || (first == 0x0100 && seg[1..4] == [0; 3]) // discard-only 100::/64
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link-local
                || (first & 0xffc0) == 0xfec0 // site-local (deprecated)
                || (first == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
                || first == 0x0064 // NAT64 / discard prefixes
                || v6 == Ipv6Addr::LOCALHOST)
        }
    }
}

/// The IPv4 address an IPv6 one stands for: IPv4-mapped (`::ffff:a.b.c.d`)
/// or the NAT64 well-known prefix (`64:ff9b::a.b.c.d`), which are checked
/// as the IPv4 address they reach.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let seg = v6.segments();
    if seg[..6] == [0x0064, 0xff9b, 0, 0, 0, 0] {
        let [.., a, b, c, d] = v6.octets();
        return Some(Ipv4Addr::new(a, b, c, d));
    }
    None
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space
        || (a == 192 && b == 0) // IETF protocol assignments
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || a >= 240)
}

/// The `Cache-Control` of a response as a cache lifetime.
pub fn cache_lifetime(cache_control: Option<&str>) -> Option<u64> {
    let Some(value) = cache_control else {
        return Some(DEFAULT_CACHE_SECS);
    };
    let mut max_age = None;
    for directive in value.split(',').map(|d| d.trim().to_ascii_lowercase()) {
        if directive == "no-store" || directive == "no-cache" || directive == "private" {
            return None;
        }
        if let Some(secs) = directive.strip_prefix("max-age=") {
            max_age = secs.trim_matches('"').parse::<u64>().ok();
        }
    }
    Some(max_age.unwrap_or(DEFAULT_CACHE_SECS))
}

#[async_trait::async_trait]
impl MetadataFetcher for HttpFetcher {
    async fn fetch(&self, url: &Url) -> Result<Fetched, FetchError> {
        let host = url
            .host_str()
            .ok_or_else(|| FetchError::Url("no host".to_owned()))?
            .to_owned();
        let port = url
            .port_or_known_default()
            .ok_or_else(|| FetchError::Url("no port".to_owned()))?;
        let lookup_host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let addrs: Vec<SocketAddr> =
            tokio::time::timeout(self.timeout, tokio::net::lookup_host((lookup_host, port)))
                .await
                .map_err(|_| FetchError::Timeout)?
                .map_err(|_| FetchError::Unreachable)?
                .collect();
        let allowed = |ip: IpAddr| is_public(ip) || (self.allow_loopback && ip.is_loopback());
        if addrs.is_empty() || !addrs.iter().all(|a| allowed(a.ip())) {
            tracing::info!(%host, "refused a metadata document on a non-public address");
            return Err(FetchError::Address);
        }
        // Test-only: a document served on loopback may use a self-signed
        // certificate (the SDKs insist on https for metadata URLs, and a
        // test has no public certificate). Never for any other address.
        let loopback_only = addrs.iter().all(|a| a.ip().is_loopback());
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // HTTP(S)_PROXY would send the request to the proxy, which
            // resolves the host again: the address checks above would be
            // for nothing.
            .no_proxy()
            .timeout(self.timeout)
            .resolve_to_addrs(&host, &addrs)
            .danger_accept_invalid_certs(self.allow_loopback && loopback_only)
            .build()
            .map_err(|_| FetchError::Unreachable)?;
        let work = async {
            let mut response = client
                .get(url.clone())
                .header(reqwest::header::ACCEPT, "application/json")
                .send()
                .await
                .map_err(|e| {
                    if e.is_timeout() {
                        FetchError::Timeout
                    } else {
                        FetchError::Unreachable
                    }
                })?;
            let status = response.status();
            if status.is_redirection() {
                return Err(FetchError::Redirect);
            }
            if status != reqwest::StatusCode::OK {
                return Err(FetchError::Status(status.as_u16()));
            }
            if response
                .content_length()
                .is_some_and(|n| n > self.max_bytes as u64)
            {
                return Err(FetchError::TooLarge(self.max_bytes));
            }
            let max_age_secs = cache_lifetime(
                response
                    .headers()
                    .get(reqwest::header::CACHE_CONTROL)
                    .and_then(|v| v.to_str().ok()),
            );
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|_| FetchError::Unreachable)?
            {
                if body.len() + chunk.len() > self.max_bytes {
                    return Err(FetchError::TooLarge(self.max_bytes));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Fetched { body, max_age_secs })
        };
        tokio::time::timeout(self.timeout, work)
            .await
            .map_err(|_| FetchError::Timeout)?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_loopback_and_link_local_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["1.1.1.1", "8.8.8.8", "2606:4700:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn ipv6_transition_and_reserved_ranges_are_not_public() {
        for ip in [
            "2002:7f00:1::1",      // 6to4 of 127.0.0.1
            "2002:a9fe:a9fe::1",   // 6to4 of 169.254.169.254
            "2001:0:4136:e378::1", // Teredo
            "::7f00:1",            // IPv4-compatible ::/96
            "::a9fe:a9fe",
            "100::1", // discard-only 100::/64
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        // A NAT64 address of a public IPv4 host is checked as that host.
        assert!(is_public("64:ff9b::808:808".parse().unwrap()));
        assert!(is_public("2001:4860:4860::8888".parse().unwrap()));
    }

    #[test]
    fn cache_control_sets_the_lifetime() {
        assert_eq!(cache_lifetime(None), Some(DEFAULT_CACHE_SECS));
        assert_eq!(cache_lifetime(Some("public, max-age=3600")), Some(3600));
        assert_eq!(cache_lifetime(Some("no-store")), None);
        assert_eq!(cache_lifetime(Some("max-age=60, no-cache")), None);
        assert_eq!(cache_lifetime(Some("public")), Some(DEFAULT_CACHE_SECS));
    }
}
