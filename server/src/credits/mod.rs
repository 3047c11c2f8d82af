//! Research credits (SPEC P10): a prepaid balance per account, in atomic
//! USDC units, that pays for the follow-the-money tools.
//!
//! The balance is the sum of an append-only ledger of movements (top-up,
//! grant, charge, refund), so every unit of it can be explained line by
//! line; the store keeps the running total beside the lines and takes a
//! charge only when the total covers it, in one transaction, so concurrent
//! charges never overdraw (`store/credits.rs` says how).
//!
//! A research action is charged before it fetches anything, under the
//! caller's `action_id`: [`Credits::begin`] records the action and takes
//! its cost at once; a retry of the same action with the same arguments is
//! answered from the stored result without a second charge (`cost_atomic`
//! 0), other arguments or a refunded action are `action_conflict`, and too
//! little credit is `insufficient_credit` with nothing recorded. A failed
//! action is refunded once ([`Credits::refund`]).
//!
//! A portal scan paid from credits is not charged that way: its action,
//! its charge and its job are one database transaction
//! ([`Credits::pay_scan`]), so no state holds the money without the job;
//! pending scan debits an earlier version left behind are settled once by
//! [`settle_stale_scan_debits`] (docs/pricing.md).
//!
//! The `follow_the_money` feature gates the tools per account; until an
//! operator switches it on (or `graph.enabled_for_all`), the tools answer
//! `not_found`, as if they did not exist.

pub mod topup;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::{
    accounts::AccountId,
    config::GraphConfig,
    error::{AppError, Code},
    store::{
        ActionRow, Begun, Credited, JobRecord, NewAction, NewCredit, NewPaidScan, NewScanJob,
        PaidScan, RateDecision, RateRule, Store,
    },
    values::Usd,
};

/// The per-account feature the research tools sit behind.
pub const FOLLOW_THE_MONEY: &str = "follow_the_money";

/// Features an operator can switch per account.
pub const FEATURES: [&str; 1] = [FOLLOW_THE_MONEY];

/// The most one operator grant adds: 10,000 USD. A grant is typed by hand
/// (`ledger credits grant --usd …`); a slip of the keyboard should be
/// refused, not credited.
pub const MAX_GRANT: Usd = Usd::from_micros(10_000 * 1_000_000);

/// The most a balance holds: 100,000 USD, some twenty million of the
/// cheapest research calls. Grants and top-ups that would pass it are
/// refused before anything is credited (a top-up before it is paid), so a
/// balance stays a sum the database adds without overflowing: it once
/// saturated at `i64::MAX` and every later credit failed.
pub const MAX_BALANCE: Usd = Usd::from_micros(100_000 * 1_000_000);

/// What the credit domain is given: the store, the research config and
/// the time of the call.
#[derive(Clone, Copy)]
pub struct Credits<'a> {
    pub store: &'a Store,
    pub config: &'a GraphConfig,
    pub now_ms: i64,
}

/// A caller's idempotency key: 1 to 128 characters of letters, digits and
/// `-_.:`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ActionId(String);

impl ActionId {
    pub fn parse(text: &str) -> Result<Self, String> {
        let ok = (1..=128).contains(&text.len())
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'));
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err("must be 1 to 128 characters of letters, digits and - _ . :".to_owned())
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for ActionId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for ActionId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ActionId".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "minLength": 1,
            "maxLength": 128,
            "pattern": "^[A-Za-z0-9_.:-]+$",
        })
    }
}

/// A charge about to be taken.
pub struct Charge<'a> {
    pub account: &'a AccountId,
    pub action_id: &'a ActionId,
    pub tool: &'a str,
    /// The SHA-256 of the normalised arguments ([`args_hash`]).
    pub args_hash: String,
    pub cost: Usd,
    /// What the movement line says (`expand_graph live of 7xKX…`).
    pub note: String,
}

/// How [`Credits::begin`] went.
#[derive(Debug)]
pub enum Started {
    /// Charged; go and fetch. The balance the charge left.
    Charged { balance_atomic: i64 },
    /// The same action again: its stored result, nothing charged.
    Replay { result: Value },
}

/// How [`Credits::pay_scan`] went; nothing is charged but in `Started`.
#[derive(Debug)]
pub enum ScanDebit {
    /// Charged and queued, in one commit.
    Started(JobRecord),
    /// The account has an action under this id already: what it holds.
    Exists(ActionRow),
    /// A scan of the wallet is running: this one.
    AlreadyRunning(JobRecord),
}

/// The state of a recorded action, parsed from the store's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionState {
    /// Charged, its work not finished (or, for a scan paid by an earlier
    /// version, its job not recorded yet).
    Pending,
    /// Finished; its result is kept.
    Done,
    /// Failed, and its cost given back.
    Refunded,
}

impl ActionState {
    /// A stored state; `None` for text no action is ever given.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "pending" => Some(Self::Pending),
            "done" => Some(Self::Done),
            "refunded" => Some(Self::Refunded),
            _ => None,
        }
    }
}

/// Portal scan debits an earlier version left `pending` (it took the
/// debit and created the job in two commits, so a crash between them kept
/// the money with no job), begun before `before`: each is settled once.
/// One whose quote has a job of the account is marked `done` with that
/// job (the scan ran; it keeps its charge); one without is refunded
/// (a `refund` movement, the balance the sum of the movements). Run by
/// every maintenance pass (`worker::maintenance_pass`: at start and
/// then periodically); idempotent, since both steps apply only to a
/// `pending` action. Answers how many pending debits it found.
pub async fn settle_stale_scan_debits(
    store: &Store,
    tool: &str,
    before: i64,
    now: i64,
) -> Result<usize, crate::store::StoreError> {
    let mut settled = 0;
    for stale in store.stale_scan_debits(tool, before).await? {
        match &stale.job_id {
            Some(job_id) => {
                let result = crate::store::paid_job_result(job_id);
                store
                    .finish_action(&stale.account_id, &stale.action_id, &result, now)
                    .await?;
                tracing::info!(account = %stale.account_id, action = %stale.action_id, job = %job_id, "a pending scan debit's job recorded");
            }
            None => {
                let movement_id = crate::ids::new_id("cm_", now);
                if let Some(balance) = store
                    .refund_stale_scan_debit(&stale.account_id, &stale.action_id, &movement_id, now)
                    .await?
                {
                    tracing::warn!(account = %stale.account_id, action = %stale.action_id, balance, "a pending scan debit with no job refunded");
                }
            }
        }
        settled += 1;
    }
    Ok(settled)
}

/// Give back the credits a portal scan took when its job `job_id` ended
/// `failed` (the RPC endpoint kept failing after its retries): the scan
/// did not deliver the ledger it was paid for, so its price is not kept
/// (the transactions it had read stay stored, and the next scan skips
/// them). Once: the action goes from
/// `done` to `refunded` in the refund's own transaction, and only while
/// the job is failed (`Store::refund_failed_scan`). A scan that ended
/// `partial` delivered its ledger and keeps its charge. The balance it
/// left, or `None` when there was nothing to give back (not credit-paid,
/// or already refunded).
pub async fn refund_failed_scan(
    store: &Store,
    tool: &str,
    account_id: &str,
    quote_id: &str,
    job_id: &str,
    now: i64,
) -> Result<Option<i64>, crate::store::StoreError> {
    let action_id = format!("scan:{quote_id}");
    let movement_id = crate::ids::new_id("cm_", now);
    let balance = store
        .refund_failed_scan(account_id, &action_id, tool, job_id, &movement_id, now)
        .await?;
    if let Some(balance) = balance {
        tracing::info!(account = account_id, action = %action_id, job = job_id, balance, "a failed scan's credits given back");
    }
    Ok(balance)
}

/// Every credit-paid scan whose job failed and was not refunded yet
/// (a crash between the failure and the refund): refunded now, once each.
/// Run by every maintenance pass. Answers how many it refunded.
pub async fn refund_failed_scans(
    store: &Store,
    tool: &str,
    now: i64,
) -> Result<usize, crate::store::StoreError> {
    let mut refunded = 0;
    for failed in store.failed_paid_scans(tool).await? {
        let movement_id = crate::ids::new_id("cm_", now);
        // One row that cannot be settled does not hold up the others.
        match store
            .refund_failed_scan(
                &failed.account_id,
                &failed.action_id,
                tool,
                &failed.job_id,
                &movement_id,
                now,
            )
            .await
        {
            Ok(Some(_)) => {
                tracing::warn!(account = %failed.account_id, action = %failed.action_id, job = %failed.job_id, "a failed scan's credits given back by maintenance");
                refunded += 1;
            }
            Ok(None) => {}
            Err(e) => {
                tracing::error!(account = %failed.account_id, action = %failed.action_id, job = %failed.job_id, error = %e, "a failed scan's credits could not be given back; the next pass tries again");
            }
        }
    }
    Ok(refunded)
}

/// The SHA-256 (hex) of `normalised`, the arguments with every default
/// filled in, so `{}` and the spelled-out defaults are the same action.
pub fn args_hash(normalised: &Value) -> String {
    let digest = Sha256::digest(normalised.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `usd` in atomic units as the store keeps them; `None` past `i64::MAX`
/// (never saturated: a saturated amount is a wrong amount).
fn atomic(usd: Usd) -> Option<i64> {
    i64::try_from(usd.usdc_atomic()).ok()
}

/// [`MAX_BALANCE`] in atomic units.
fn max_balance_atomic() -> i64 {
    atomic(MAX_BALANCE).unwrap_or(i64::MAX)
}

/// Refuse an amount that would take `balance` past [`MAX_BALANCE`].
fn over_limit(what: &str, amount: Usd, balance: i64) -> AppError {
    AppError::invalid_params(format!(
        "{what}: {amount} USD would take the balance ({} USD) past the most an account may hold, \
         {MAX_BALANCE} USD; nothing was credited",
        usd_text(balance)
    ))
}

/// `amount` atomic units as dollars (`"0.005"`), never through a float.
pub fn usd_text(amount: i64) -> String {
    let sign = if amount < 0 { "-" } else { "" };
    format!("{sign}{}", Usd::from_micros(amount.unsigned_abs()))
}

impl Credits<'_> {
    /// Refuse (`not_found`) unless the feature is on for the account.
    pub async fn require_feature(&self, account: &AccountId) -> Result<(), AppError> {
        if self.config.enabled_for_all
            || self
                .store
                .feature_enabled(account.as_str(), FOLLOW_THE_MONEY)
                .await?
        {
            Ok(())
        } else {
            Err(AppError::not_found(
                "no such tool for this account: follow the money is not switched on for it",
            ))
        }
    }

    /// The per-account limits: a short-term rate (`rate_limited`) and a
    /// daily count of actions (`too_many_expansions`). A retry counts
    /// against the rate, not the daily count.
    pub async fn check_limits(&self, account: &AccountId) -> Result<(), AppError> {
        let rule = RateRule {
            per_second: self.config.rate_per_sec,
            burst: self.config.rate_burst,
        };
        let bucket = format!("research:{}", account.as_str());
        if let RateDecision::Limited { retry_after_ms } = self
            .store
            .take_rate_token(&bucket, self.now_ms, rule)
            .await?
        {
            let secs = u64::try_from(retry_after_ms.max(0))
                .unwrap_or(0)
                .div_ceil(1000)
                .max(1);
            return Err(AppError::new(
                Code::RateLimited,
                format!(
                    "rate limited: research calls are limited to {} per second per account, \
                     burst {}; retry after {secs} s",
                    self.config.rate_per_sec, self.config.rate_burst
                ),
            )
            .with_retry_after(secs));
        }
        let day_ago = self.now_ms - 24 * 3600 * 1000;
        let used = self
            .store
            .count_actions_since(account.as_str(), day_ago)
            .await?;
        if used >= i64::from(self.config.daily_max_actions) {
            return Err(AppError::new(
                Code::TooManyExpansions,
                format!(
                    "too many expansions: your account began {used} research actions in the last \
                     24 hours, the most it may; retry later"
                ),
            )
            .with_retry_after(3600));
        }
        Ok(())
    }

    /// Record the action and take its cost, or answer its earlier result.
    pub async fn begin(&self, charge: &Charge<'_>) -> Result<Started, AppError> {
        let movement_id = crate::ids::new_id("cm_", self.now_ms);
        let cost = atomic(charge.cost)
            .ok_or_else(|| AppError::internal("a research price", "above i64::MAX atomic"))?;
        let begun = self
            .store
            .begin_action(&NewAction {
                account_id: charge.account.as_str(),
                action_id: charge.action_id.as_str(),
                tool: charge.tool,
                args_hash: &charge.args_hash,
                cost_atomic: cost,
                movement_id: &movement_id,
                note: &charge.note,
                now: self.now_ms,
            })
            .await?;
        match begun {
            Begun::Charged { balance_after } => Ok(Started::Charged {
                balance_atomic: balance_after,
            }),
            Begun::Insufficient { balance } => Err(insufficient(charge, cost, balance)),
            Begun::Exists(row) => {
                if row.tool != charge.tool || row.args_hash != charge.args_hash {
                    return Err(conflict(
                        "this action_id was used for other arguments; choose a new action_id",
                    ));
                }
                match (ActionState::parse(&row.state), row.result) {
                    (Some(ActionState::Done), Some(text)) => {
                        let result = serde_json::from_str(&text)
                            .map_err(|e| AppError::internal("a stored research result", e))?;
                        Ok(Started::Replay { result })
                    }
                    (Some(ActionState::Refunded), _) => Err(conflict(
                        "this action_id failed and was refunded; retry with a new action_id",
                    )),
                    _ => Err(conflict(
                        "this action_id is still running; retry it in a moment",
                    )),
                }
            }
        }
    }

    /// A portal scan paid from credits: record the action, take its cost
    /// and queue `job`, all in one database transaction
    /// ([`Store::begin_paid_scan`]), so a crash or an error between the
    /// debit and the job keeps no money: either both are committed or
    /// neither. The action is kept `done` with the job's id as its result
    /// (`{"job_id": …}`), for the same form sent again. Too little credit
    /// is `insufficient_credit` with nothing recorded.
    pub async fn pay_scan(
        &self,
        charge: &Charge<'_>,
        job: NewScanJob<'_>,
    ) -> Result<ScanDebit, AppError> {
        let movement_id = crate::ids::new_id("cm_", self.now_ms);
        let cost = atomic(charge.cost)
            .ok_or_else(|| AppError::internal("a scan's price", "above i64::MAX atomic"))?;
        let result = crate::store::paid_job_result(job.id);
        let paid = self
            .store
            .begin_paid_scan(&NewPaidScan {
                action: NewAction {
                    account_id: charge.account.as_str(),
                    action_id: charge.action_id.as_str(),
                    tool: charge.tool,
                    args_hash: &charge.args_hash,
                    cost_atomic: cost,
                    movement_id: &movement_id,
                    note: &charge.note,
                    now: self.now_ms,
                },
                job,
                result: &result,
            })
            .await?;
        match paid {
            PaidScan::Started { job, .. } => Ok(ScanDebit::Started(job)),
            PaidScan::Exists(row) => Ok(ScanDebit::Exists(row)),
            PaidScan::AlreadyRunning(job) => Ok(ScanDebit::AlreadyRunning(job)),
            PaidScan::Insufficient { balance } => Err(insufficient(charge, cost, balance)),
        }
    }

    /// The action succeeded: keep its result (as answered) for retries.
    pub async fn finish(
        &self,
        account: &AccountId,
        action_id: &ActionId,
        result: &Value,
    ) -> Result<(), AppError> {
        self.store
            .finish_action(
                account.as_str(),
                action_id.as_str(),
                &result.to_string(),
                self.now_ms,
            )
            .await?;
        Ok(())
    }

    /// The action failed: give its cost back, once. Logged when the refund
    /// itself fails (the action stays pending and shows in the ledger).
    pub async fn refund(&self, account: &AccountId, action_id: &ActionId) {
        let movement_id = crate::ids::new_id("cm_", self.now_ms);
        if let Err(error) = self
            .store
            .refund_action(
                account.as_str(),
                action_id.as_str(),
                &movement_id,
                self.now_ms,
            )
            .await
        {
            tracing::error!(%error, account = account.as_str(), action = action_id.as_str(), "refunding a failed research action");
        }
    }

    pub async fn balance(&self, account: &AccountId) -> Result<i64, AppError> {
        Ok(self.store.credit_balance(account.as_str()).await?)
    }

    /// An operator's grant; answers the balance after it. Above zero, at
    /// most [`MAX_GRANT`], and never past [`MAX_BALANCE`] (`invalid_params`,
    /// nothing credited).
    pub async fn grant(
        &self,
        account: &AccountId,
        amount: Usd,
        note: &str,
    ) -> Result<i64, AppError> {
        if amount.micros() == 0 {
            return Err(AppError::invalid_params("usd: a grant must be above zero"));
        }
        let Some(amount_atomic) = atomic(amount).filter(|_| amount <= MAX_GRANT) else {
            return Err(AppError::invalid_params(format!(
                "usd: a grant is at most {MAX_GRANT} USD; grant more in several steps"
            )));
        };
        let id = crate::ids::new_id("cm_", self.now_ms);
        let credited = self
            .store
            .credit(&NewCredit {
                id: &id,
                account_id: account.as_str(),
                kind: "grant",
                amount_atomic,
                max_balance: max_balance_atomic(),
                reference: None,
                note,
                now: self.now_ms,
            })
            .await?;
        match credited {
            Credited::Applied { balance_after } => Ok(balance_after),
            Credited::OverLimit { balance } => Err(over_limit("usd", amount, balance)),
            Credited::AlreadyApplied => Err(AppError::internal(
                "a grant",
                "the movement was not written",
            )),
        }
    }

    /// Refuse a top-up of `amount` before it is priced or paid when it
    /// would take the balance past [`MAX_BALANCE`].
    pub async fn check_top_up(&self, account: &AccountId, amount: Usd) -> Result<(), AppError> {
        let balance = self.balance(account).await?;
        let room = max_balance_atomic().saturating_sub(balance);
        match atomic(amount) {
            Some(a) if a <= room => Ok(()),
            _ => Err(over_limit("amount_usd", amount, balance)),
        }
    }

    /// A settled top-up payment's credit, applied once per payment:
    /// `None` when this payment was already credited. The payer has paid,
    /// so the credit is not held to [`MAX_BALANCE`] (checked before the
    /// challenge, [`Credits::check_top_up`]; two racing top-ups may pass
    /// it by one amount), only to what the column holds.
    pub async fn top_up(
        &self,
        account: &AccountId,
        amount: Usd,
        payment_id: &str,
    ) -> Result<Option<i64>, AppError> {
        let id = crate::ids::new_id("cm_", self.now_ms);
        let reference = format!("topup:{payment_id}");
        let amount_atomic = atomic(amount)
            .ok_or_else(|| AppError::internal("a top-up", "above i64::MAX atomic"))?;
        let credited = self
            .store
            .credit(&NewCredit {
                id: &id,
                account_id: account.as_str(),
                kind: "topup",
                amount_atomic,
                max_balance: i64::MAX,
                reference: Some(&reference),
                note: "x402 top-up",
                now: self.now_ms,
            })
            .await?;
        match credited {
            Credited::Applied { balance_after } => Ok(Some(balance_after)),
            Credited::AlreadyApplied => Ok(None),
            Credited::OverLimit { balance } => Err(AppError::internal(
                "a top-up",
                format!("crediting {amount_atomic} atomic to a balance of {balance} overflows"),
            )),
        }
    }

    /// Balance and the most recent movements, as `GET /v1/credits` and the
    /// portal show them.
    pub async fn view(&self, account: &AccountId) -> Result<CreditsView, AppError> {
        topup::sweep(self, account).await?;
        let balance = self.balance(account).await?;
        let movements = self
            .store
            .credit_movements(account.as_str(), 200)
            .await?
            .into_iter()
            .map(|m| MovementView {
                id: m.id,
                kind: m.kind,
                amount_atomic: m.amount_atomic.to_string(),
                amount_usd: usd_text(m.amount_atomic),
                balance_after_atomic: m.balance_after.to_string(),
                action_id: m.action_id,
                note: m.note,
                at: crate::values::rfc3339(m.created_at),
            })
            .collect();
        let enabled = self.config.enabled_for_all
            || self
                .store
                .feature_enabled(account.as_str(), FOLLOW_THE_MONEY)
                .await?;
        Ok(CreditsView {
            balance_atomic: balance.to_string(),
            balance_usd: usd_text(balance),
            follow_the_money: enabled,
            prices: PricesView::from(self.config),
            topup_usd: self
                .config
                .topup_usd
                .iter()
                .map(ToString::to_string)
                .collect(),
            movements,
        })
    }
}

/// Too little credit for `charge`: `insufficient_credit`, what it costs
/// and what the balance holds; nothing was recorded or charged.
fn insufficient(charge: &Charge<'_>, cost: i64, balance: i64) -> AppError {
    AppError::new(
        Code::InsufficientCredit,
        format!(
            "insufficient credit: this {} costs {} USD ({cost} atomic USDC) and your \
             balance is {} USD ({balance} atomic); nothing was fetched or charged. Top up \
             with POST /v1/credits or on the portal's Credits page",
            charge.tool,
            charge.cost,
            usd_text(balance)
        ),
    )
    .with("cost_atomic", Value::String(cost.to_string()))
    .with("balance_atomic", Value::String(balance.to_string()))
}

fn conflict(message: &str) -> AppError {
    AppError::new(Code::ActionConflict, format!("action_conflict: {message}"))
}

/// One movement line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema, utoipa::ToSchema)]
pub struct MovementView {
    pub id: String,
    /// topup, grant, charge or refund.
    pub kind: String,
    /// Signed atomic USDC (a charge is negative), as a string.
    pub amount_atomic: String,
    pub amount_usd: String,
    /// The balance this movement left.
    pub balance_after_atomic: String,
    /// The research action a charge or refund belongs to.
    pub action_id: Option<String>,
    pub note: String,
    /// RFC 3339.
    pub at: String,
}

/// What each research call costs, in USD.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema, utoipa::ToSchema)]
pub struct PricesView {
    pub expand_graph_ledger: String,
    pub expand_graph_live: String,
    pub expand_graph_cached_live: String,
    pub find_first_funder: String,
    pub find_first_funder_cached: String,
}

impl From<&GraphConfig> for PricesView {
    fn from(c: &GraphConfig) -> Self {
        Self {
            expand_graph_ledger: c.ledger_usd.to_string(),
            expand_graph_live: c.live_usd.to_string(),
            expand_graph_cached_live: c.cached_live_usd.to_string(),
            find_first_funder: c.funder_usd.to_string(),
            find_first_funder_cached: c.cached_funder_usd.to_string(),
        }
    }
}

/// An account's credits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema, utoipa::ToSchema)]
pub struct CreditsView {
    /// Atomic USDC, as a string; the sum of every movement.
    pub balance_atomic: String,
    pub balance_usd: String,
    /// Whether the follow-the-money tools are on for this account.
    pub follow_the_money: bool,
    pub prices: PricesView,
    /// The amounts POST /v1/credits accepts, in USD.
    pub topup_usd: Vec<String>,
    /// Newest first, the most recent 200.
    pub movements: Vec<MovementView>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_ids_are_short_and_plain() {
        assert!(ActionId::parse("run-1:step.2_a").is_ok());
        for bad in ["", "has space", "ünïcode", &"x".repeat(129)] {
            assert!(ActionId::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn amounts_read_as_dollars_without_floats() {
        assert_eq!(usd_text(5_000), "0.005");
        assert_eq!(usd_text(-1_500_000), "-1.50");
        assert_eq!(usd_text(0), "0.00");
    }
}
