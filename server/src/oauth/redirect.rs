//! Redirect URIs: what a client may register, and whether the one an
//! authorization request names is one of them.
//!
//! Allowed: `https` anywhere; `http` on a loopback host only (`localhost`,
//! `127.0.0.1`, `[::1]`), where the port is ignored when matching because
//! a native app picks a free port each time (RFC 8252 §7.3); and
//! private-use schemes of native apps, which RFC 8252 §7.1 says are "a
//! domain name under their control, expressed in reverse order"
//! (`com.example.app:/cb`; [`is_reverse_domain`] holds a scheme to that),
//! or one of the few MCP hosts whose scheme has none
//! ([`DOTLESS_APP_SCHEMES`]: `cursor://anysphere.cursor-mcp/oauth/callback`).
//! Any other scheme is refused: one the OS hands to a handler (`ms-msdt:`,
//! `search-ms:`, `x-apple.systempreferences:`, `microsoft.windows.camera:`)
//! or a browser runs (`javascript:`, `data:`, `file:`) is no place to send
//! a code. Never a fragment, a wildcard or user info. Everything else
//! matches exactly, after URL normalisation.

use std::fmt;

use url::{Host, Url};

use super::OAuthError;

/// The longest redirect URI accepted.
const MAX_LEN: usize = 2000;

/// Private-use schemes of known MCP hosts that are not reverse domain
/// names.
pub const DOTLESS_APP_SCHEMES: [&str; 5] =
    ["cursor", "vscode", "vscode-insiders", "windsurf", "claude"];

/// Reverse domains that belong to operating-system vendors, whose systems
/// ship their own handlers under them (`microsoft.windows.camera:`,
/// `microsoft.windows.photos.crop:` on Windows). No client controls these
/// domains, so none may claim a scheme under them (RFC 8252 §7.1).
const OS_VENDOR_DOMAINS: [&[&str]; 7] = [
    &["microsoft"],
    &["windows"],
    &["apple"],
    &["android"],
    &["com", "microsoft"],
    &["com", "apple"],
    &["com", "android"],
];

/// Whether `scheme` (already lowercase, as `url` keeps it) is a private-use
/// scheme a native app may own: a reverse domain, or an allowlisted MCP
/// host's.
fn is_app_scheme(scheme: &str) -> bool {
    is_reverse_domain(scheme) || DOTLESS_APP_SCHEMES.contains(&scheme)
}

/// Whether `scheme` reads as a domain name in reverse order that a client
/// could control (RFC 8252 §7.1): at least two labels; each a DNS label
/// (letters, digits and inner hyphens, at most 63; RFC 1035 §2.3.1); the
/// first a plausible top-level domain, which is letters only (every
/// delegated TLD is, RFC 1123 §2.1) or an internationalised one
/// (`xn--…`). That refuses the OS handlers a dot alone let in:
/// `x-apple.systempreferences:` and `ms-msdt.x:` begin with no TLD. And
/// never a domain of an operating-system vendor ([`OS_VENDOR_DOMAINS`]).
fn is_reverse_domain(scheme: &str) -> bool {
    let labels: Vec<&str> = scheme.split('.').collect();
    let dns_label = |l: &&str| {
        (1..=63).contains(&l.len())
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let plausible_tld = |l: &str| {
        (l.len() >= 2 && l.bytes().all(|b| b.is_ascii_lowercase()))
            || l.strip_prefix("xn--").is_some_and(|rest| !rest.is_empty())
    };
    labels.len() >= 2
        && scheme.len() <= 253
        && labels.iter().all(dns_label)
        && plausible_tld(labels[0])
        && !OS_VENDOR_DOMAINS
            .iter()
            .any(|vendor| labels.starts_with(vendor))
}

/// A redirect URI that passed the rules above.
#[derive(Clone, PartialEq, Eq)]
pub struct RedirectUri {
    url: Url,
    loopback: bool,
}

impl RedirectUri {
    /// Check `input` against the rules; `invalid_redirect_uri` says which
    /// one it broke.
    pub fn parse(input: &str) -> Result<Self, OAuthError> {
        let refuse = |why: &str| OAuthError::InvalidRedirectUri(format!("{input:?}: {why}"));
        if input.is_empty() || input.len() > MAX_LEN {
            return Err(refuse("must be 1 to 2000 characters"));
        }
        if input.contains('#') {
            return Err(refuse("must not contain a fragment"));
        }
        if input.contains('*') {
            return Err(refuse("must not contain a wildcard"));
        }
        if input.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(refuse("must not contain spaces or control characters"));
        }
        let url = Url::parse(input).map_err(|_| refuse("is not an absolute URL"))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(refuse("must not carry user information"));
        }
        let loopback = match url.scheme() {
            "https" => {
                if url.host().is_none() {
                    return Err(refuse("an https redirect URI needs a host"));
                }
                false
            }
            "http" => {
                if !is_loopback_host(url.host()) {
                    return Err(refuse(
                        "http is allowed only on a loopback host (localhost, 127.0.0.1, [::1]); use https",
                    ));
                }
                true
            }
            scheme if is_app_scheme(scheme) => false,
            _ => {
                return Err(refuse(
                    "a private-use scheme must be a reverse domain name (com.example.app:/callback)",
                ));
            }
        };
        Ok(Self { url, loopback })
    }

    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Whether a request's `redirect_uri` (already parsed) is this
    /// registered one: exactly, or, on loopback http, with any port.
    pub fn matches(&self, requested: &RedirectUri) -> bool {
        if self.loopback && requested.loopback {
            let (a, b) = (&self.url, &requested.url);
            return a.scheme() == b.scheme()
                && a.host() == b.host()
                && a.path() == b.path()
                && a.query() == b.query();
        }
        self.url == requested.url
    }

    /// Where a person is sent back to, as the consent page names it: a
    /// web site by its host (`https://claude.ai/…`: `claude.ai`), and
    /// anything else by its scheme alone. A private-use scheme is whatever
    /// app on the device claimed it, and what follows it is the app's to
    /// read: `com.evil.app://claude.ai/cb` has a "host" of `claude.ai`
    /// that means nothing, and must never be shown as the destination.
    pub fn destination(&self) -> Destination {
        match (self.url.scheme(), self.url.host_str()) {
            ("https" | "http", Some(host)) if !host.is_empty() => Destination::Site {
                host: host.to_owned(),
            },
            (scheme, _) => Destination::App {
                scheme: scheme.to_owned(),
            },
        }
    }
}

/// Where an authorization's answer sends the browser ([`RedirectUri::destination`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// A web site (`https`, or `http` on loopback), by its host.
    Site { host: String },
    /// An app on this device, by the private-use scheme it claimed.
    App { scheme: String },
}

fn is_loopback_host(host: Option<Host<&str>>) -> bool {
    match host {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback() && ip.octets() == [127, 0, 0, 1],
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

impl fmt::Debug for RedirectUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.url.as_str())
    }
}

impl fmt::Display for RedirectUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.url.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> RedirectUri {
        RedirectUri::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn the_real_hosts_redirect_uris_are_accepted() {
        for uri in [
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.com/api/mcp/auth_callback",
            "http://localhost:33418/callback",
            "http://127.0.0.1:5173/callback",
            "http://[::1]:8080/oauth/callback",
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "com.example.app:/oauth2redirect",
        ] {
            ok(uri);
        }
    }

    #[test]
    fn http_off_loopback_is_refused() {
        for uri in [
            "http://example.com/callback",
            "http://127.0.0.2/callback",
            "http://localhost.evil.example/cb",
            "http://10.0.0.1/cb",
        ] {
            let err = RedirectUri::parse(uri).unwrap_err();
            assert_eq!(err.code(), "invalid_redirect_uri", "{uri}");
        }
    }

    #[test]
    fn fragments_wildcards_and_user_info_are_refused() {
        for uri in [
            "https://claude.ai/cb#frag",
            "https://*.claude.ai/cb",
            "https://claude.ai/*",
            "https://user:pw@claude.ai/cb",
            "https://claude.ai/a b",
            "callback",
            "",
        ] {
            assert!(RedirectUri::parse(uri).is_err(), "{uri}");
        }
    }

    #[test]
    fn schemes_a_browser_runs_are_refused() {
        for uri in [
            "javascript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "JavaScript:alert(1)",
        ] {
            assert!(RedirectUri::parse(uri).is_err(), "{uri}");
        }
    }

    #[test]
    fn only_reverse_dns_or_allowlisted_app_schemes_are_accepted() {
        for uri in [
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "vscode://vscode.github-authentication/did-authenticate",
            "vscode-insiders://callback",
            "windsurf://codeium.windsurf/callback",
            "claude://oauth/callback",
            "com.example.app:/oauth2redirect",
            "io.modelcontextprotocol.inspector:/cb",
        ] {
            ok(uri);
        }
        for uri in [
            "ms-msdt:/id PCWDiagnostic",
            "ms-msdt:/id",
            "search-ms:query=x",
            "mailto:a@example.com",
            "javascript:alert(1)",
            "data:text/html,x",
            "file:///etc/passwd",
            "myapp://callback",
            "ftp://example.com/cb",
            "com..example:/cb",
        ] {
            let err = RedirectUri::parse(uri).unwrap_err();
            assert_eq!(err.code(), "invalid_redirect_uri", "{uri}");
        }
    }

    /// The two schemes: a dot is not a reverse domain. Neither
    /// begins with a top-level domain, so neither is a domain a client
    /// could control.
    #[test]
    fn os_handler_schemes_with_a_dot_are_refused() {
        for uri in [
            "x-apple.systempreferences:com.apple.preference.security",
            "ms-msdt.x:/id PCWDiagnostic",
            "ms-msdt.x:/cb",
            "microsoft.windows.camera:",
            "microsoft.windows.camera.picker:/cb",
            "com.apple.reminders:/cb",
            "com.microsoft.edge:/cb",
            "android.intent:/cb",
        ] {
            let err = RedirectUri::parse(uri).unwrap_err();
            assert_eq!(err.code(), "invalid_redirect_uri", "{uri}");
        }
    }

    /// What a reverse domain is, label by label.
    #[test]
    fn a_reverse_domain_begins_with_a_plausible_tld_and_has_dns_labels() {
        for good in [
            "com.example.app",
            "io.modelcontextprotocol.inspector",
            "com.googleusercontent.apps.123-abc",
            "org.example.my-app",
            "xn--p1ai.example.app",
            "dev.zed",
        ] {
            assert!(is_reverse_domain(good), "{good}");
        }
        for bad in [
            "example",
            "x-apple.systempreferences",
            "ms-msdt.x",
            "1com.example",
            "c.example",
            "com.-example",
            "com.example-",
            "com.ex+ample",
            "com.",
            "xn--.example",
            "microsoft.windows.camera",
        ] {
            assert!(!is_reverse_domain(bad), "{bad}");
        }
    }

    #[test]
    fn a_private_use_scheme_is_shown_as_an_app_never_as_the_host_it_names() {
        assert_eq!(
            ok("com.evil.app://claude.ai/cb").destination(),
            Destination::App {
                scheme: "com.evil.app".to_owned()
            }
        );
        assert_eq!(
            ok("cursor://anysphere.cursor-mcp/oauth/callback").destination(),
            Destination::App {
                scheme: "cursor".to_owned()
            }
        );
        assert_eq!(
            ok("com.example.app:/oauth2redirect").destination(),
            Destination::App {
                scheme: "com.example.app".to_owned()
            }
        );
        assert_eq!(
            ok("https://claude.ai/api/mcp/auth_callback").destination(),
            Destination::Site {
                host: "claude.ai".to_owned()
            }
        );
        assert_eq!(
            ok("http://localhost:33418/callback").destination(),
            Destination::Site {
                host: "localhost".to_owned()
            }
        );
    }

    #[test]
    fn loopback_matches_any_port_and_nothing_else_loosely() {
        let registered = ok("http://localhost:3000/callback");
        assert!(registered.matches(&ok("http://localhost:49152/callback")));
        assert!(registered.matches(&ok("http://localhost/callback")));
        assert!(!registered.matches(&ok("http://localhost:3000/other")));
        assert!(!registered.matches(&ok("http://127.0.0.1:3000/callback")));
        let https = ok("https://claude.ai/api/mcp/auth_callback");
        assert!(https.matches(&ok("https://claude.ai/api/mcp/auth_callback")));
        assert!(!https.matches(&ok("https://claude.ai:8443/api/mcp/auth_callback")));
        assert!(!https.matches(&ok("https://claude.ai/api/mcp/auth_callback?x=1")));
        assert!(!https.matches(&ok("https://claude.com/api/mcp/auth_callback")));
    }
}
