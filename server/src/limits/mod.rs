//! How much one caller may ask of us, decided in one place: the rule that
//! turns a client address into a rate-limit key ([`ClientKey`]), what each
//! call costs ([`costs`]), and the rate limits that spend it ([`Limiter`]):
//! anonymous requests and failed bearers per client address, bearer
//! traffic per account and per address (weighted by cost), sign-in
//! challenges and sign-ups per address.
//!
//! Every rate is a GCRA bucket in the store (`store::ratelimit`), so the
//! API instances on one PostgreSQL database share them (on SQLite, one
//! host, they live in the process). Quotas (labels, tokens, MCP sessions,
//! pending consents) are counted by the insert that would exceed them, in
//! the module that owns the rows and under the owner's quota lock
//! (`store::in_quota_tx`), and refused with [`AppError::quota_reached`]
//! (MCP sessions end their class's least recently used instead). Nothing here knows HTTP: the edge
//! (`http`) finds the client address and the caller and asks.

pub mod costs;

use std::{
    fmt,
    net::{IpAddr, Ipv6Addr},
};

use crate::{
    accounts::AccountId,
    config::RateLimitConfig,
    error::AppError,
    store::{RateDecision, RateRule, Store},
};

/// A client address as rate limits and quotas key it: an IPv4 address (or
/// an IPv4-mapped IPv6 one) as itself, any other IPv6 address by its /64,
/// since one subscriber commonly holds a whole /64 and could otherwise step
/// through 2^64 fresh buckets. Every per-address limit keys by this one
/// rule: anonymous, failed bearers, bearer traffic, sign-in, OAuth.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientKey(String);

impl ClientKey {
    /// The one keying rule: the address that stands for `ip`'s block, an
    /// IPv4 address (an IPv4-mapped one as its IPv4) itself, an IPv6
    /// address its /64 with the host bits zero. Anything keyed per client
    /// address (a cap on connections too) takes its key from here.
    pub fn block(ip: IpAddr) -> IpAddr {
        match ip {
            IpAddr::V4(v4) => IpAddr::V4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => {
                    let s = v6.segments();
                    IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
                }
            },
        }
    }

    /// The key of `ip`: its [`ClientKey::block`], an IPv6 one written with
    /// `/64`.
    pub fn of(ip: IpAddr) -> Self {
        Self(match Self::block(ip) {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(prefix) => format!("{prefix}/64"),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The rate limits, over the store at one instant.
#[derive(Clone, Copy)]
pub struct Limiter<'a> {
    pub store: &'a Store,
    pub now_ms: i64,
    pub config: &'a RateLimitConfig,
}

/// `Retry-After` is whole seconds, rounded up, at least one.
fn whole_seconds(ms: i64) -> u64 {
    u64::try_from(ms.max(1)).unwrap_or(1).div_ceil(1000).max(1)
}

impl Limiter<'_> {
    /// Take `count` tokens from `bucket`: the seconds to wait when refused.
    async fn take(
        &self,
        bucket: &str,
        rule: RateRule,
        count: u32,
    ) -> Result<Option<u64>, AppError> {
        Ok(
            match self
                .store
                .take_rate_tokens(bucket, self.now_ms, rule, count)
                .await?
            {
                RateDecision::Allowed => None,
                RateDecision::Limited { retry_after_ms } => Some(whole_seconds(retry_after_ms)),
            },
        )
    }

    /// The anonymous budget of a client address (`rate_limit.anon_rps`,
    /// burst `rate_limit.anon_burst`): `requests` at once, all or none.
    pub async fn anonymous(&self, client: &ClientKey, requests: u32) -> Result<(), AppError> {
        let rule = RateRule {
            per_second: self.config.anon_rps,
            burst: self.config.anon_burst(),
        };
        match self.take(&format!("anon:{client}"), rule, requests).await? {
            None => Ok(()),
            Some(secs) => Err(AppError::rate_limited(secs)),
        }
    }

    /// Count one failed bearer (unknown, revoked, unreadable) of a client
    /// address; refused once the address has spent its allowance of them.
    /// Only failures are counted, so a valid bearer from the same address
    /// (another user behind the same NAT) is never refused by this.
    pub async fn bearer_failure(&self, client: &ClientKey) -> Result<(), AppError> {
        let rule = RateRule {
            per_second: self.config.bearer_failures_per_sec,
            burst: self.config.bearer_failure_burst,
        };
        match self
            .take(&format!("bearer-failures:{client}"), rule, 1)
            .await?
        {
            None => Ok(()),
            Some(secs) => {
                tracing::info!(client = %client, "refused a bearer: too many failed bearers from this address");
                Err(AppError::rate_limited_because(
                    secs,
                    "too many unknown or revoked bearers from this address",
                ))
            }
        }
    }

    /// Spend `units` ([`costs`]) of bearer traffic from both budgets it
    /// needs, the account's and its client address's (all accounts behind
    /// it together), or from neither: a refusal by one never spends the
    /// other. The account's is taken first; when the address's then
    /// refuses, the account's units are given back. (So an account over
    /// its budget never drains the address its neighbours share, and a
    /// spent address never drains the account it is refused for.)
    pub async fn bearer(
        &self,
        account: &AccountId,
        client: Option<&ClientKey>,
        units: u32,
    ) -> Result<(), AppError> {
        let c = self.config;
        let account_rule = RateRule {
            per_second: c.account_units_per_sec,
            burst: c.account_burst_units,
        };
        let account_bucket = format!("account:{}", account.as_str());
        if let Some(secs) = self.take(&account_bucket, account_rule, units).await? {
            tracing::info!(account = %account, units, "refused bearer traffic: the account's budget is spent");
            return Err(AppError::rate_limited_because(
                secs,
                &format!(
                    "this account may spend {} units per second, {} at once, across its tokens \
                     (this call costs {units}; a call to Solana RPC costs {})",
                    c.account_units_per_sec,
                    c.account_burst_units,
                    costs::CHAIN_UNITS
                ),
            ));
        }
        let Some(client) = client else {
            return Ok(());
        };
        let rule = RateRule {
            per_second: c.bearer_ip_units_per_sec,
            burst: c.bearer_ip_burst_units,
        };
        match self
            .take(&format!("bearer-ip:{client}"), rule, units)
            .await?
        {
            None => Ok(()),
            Some(secs) => {
                self.store
                    .give_back_rate_tokens(&account_bucket, account_rule, units)
                    .await?;
                tracing::info!(client = %client, units, "refused bearer traffic: the address's budget is spent");
                Err(AppError::rate_limited_because(
                    secs,
                    &format!(
                        "the bearers of this address may spend {} units per second together, {} at once",
                        c.bearer_ip_units_per_sec, c.bearer_ip_burst_units
                    ),
                ))
            }
        }
    }

    /// One Sign-In With Solana challenge for a client address
    /// (`rate_limit.siws_challenges_per_minute`).
    pub async fn siws_challenge(&self, client: &ClientKey) -> Result<(), AppError> {
        let c = self.config;
        let rule = RateRule::per_minute(c.siws_challenges_per_minute, c.siws_challenge_burst);
        match self
            .take(&format!("siws-challenge:{client}"), rule, 1)
            .await?
        {
            None => Ok(()),
            Some(secs) => {
                tracing::info!(client = %client, "refused a sign-in challenge: rate limited");
                Err(AppError::rate_limited_because(
                    secs,
                    &format!(
                        "sign-in challenges from this address are limited to {} a minute",
                        c.siws_challenges_per_minute
                    ),
                ))
            }
        }
    }

    /// One account created by a first sign-in from a client address
    /// (`rate_limit.signups_per_hour`). Signing in to an existing account
    /// is never counted.
    pub async fn sign_up(&self, client: &ClientKey) -> Result<(), AppError> {
        let c = self.config;
        let rule = RateRule::per_hour(c.signups_per_hour, c.signup_burst);
        match self.take(&format!("signup:{client}"), rule, 1).await? {
            None => Ok(()),
            Some(secs) => {
                tracing::info!(client = %client, "refused a sign-up: rate limited");
                Err(AppError::rate_limited_because(
                    secs,
                    &format!(
                        "sign-ups (a first sign-in, which creates an account) from this address \
                         are limited to {} an hour; signing in to an existing account is not",
                        c.signups_per_hour
                    ),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> String {
        ClientKey::of(s.parse().unwrap()).as_str().to_owned()
    }

    #[test]
    fn ipv4_is_keyed_as_itself_and_ipv6_by_its_64() {
        assert_eq!(key("203.0.113.7"), "203.0.113.7");
        assert_ne!(key("203.0.113.7"), key("203.0.113.8"));
        assert_eq!(key("::ffff:203.0.113.7"), "203.0.113.7");
        assert_eq!(key("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
        assert_eq!(key("2001:db8:1:2:ffff::1"), key("2001:db8:1:2::9"));
        assert_ne!(key("2001:db8:1:3::1"), key("2001:db8:1:2::1"));
        assert_eq!(key("::1"), "::/64");
        assert_eq!(
            ClientKey::block("2001:db8:1:2:3:4:5:6".parse().unwrap()),
            "2001:db8:1:2::".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            ClientKey::block("::ffff:203.0.113.7".parse().unwrap()),
            "203.0.113.7".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn retry_after_is_whole_seconds_rounded_up() {
        assert_eq!(whole_seconds(0), 1);
        assert_eq!(whole_seconds(1), 1);
        assert_eq!(whole_seconds(1000), 1);
        assert_eq!(whole_seconds(1001), 2);
    }
}
