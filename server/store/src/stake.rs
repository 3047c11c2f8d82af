//! The stake accounts of a wallet and how far their rewards have been read
//! (`wallet_stake_accounts`, `wallet_reward_gaps`). A scan notes every stake
//! account it finds, current or from history, and after reading rewards
//! records the last epoch asked per account and the epochs the provider
//! would not serve, so the next (incremental) scan asks only what is new
//! or still missing.

use super::{Pool, Store, StoreError};

/// One stake account of a wallet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StakeAccountRow {
    pub account: String,
    /// The earliest transaction of the wallet's history that touched it.
    pub first_slot: Option<u64>,
    /// The delegation's activation epoch, when read from the account.
    pub activation_epoch: Option<u64>,
    /// When its withdraw authority moved to someone else.
    pub handover_slot: Option<u64>,
    /// The last epoch whose reward was asked for it.
    pub rewards_read_through: Option<u64>,
}

/// What a scan learned of a stake account: merged into what is stored (the
/// earliest first slot, the latest handover, any activation epoch).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StakeAccountSeen<'a> {
    pub account: &'a str,
    pub first_slot: Option<u64>,
    pub activation_epoch: Option<u64>,
    pub handover_slot: Option<u64>,
}

type Row = (String, Option<i64>, Option<i64>, Option<i64>, Option<i64>);

fn to_u64(v: Option<i64>) -> Option<u64> {
    v.and_then(|v| u64::try_from(v).ok())
}

fn to_i64(v: Option<u64>) -> Option<i64> {
    v.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
}

fn earliest(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl Store {
    /// The wallet's stake accounts, by address.
    pub async fn stake_accounts(&self, wallet: &str) -> Result<Vec<StakeAccountRow>, StoreError> {
        let rows: Vec<Row> = on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT account, first_slot, activation_epoch, handover_slot, rewards_read_through \
             FROM wallet_stake_accounts WHERE wallet = $1 ORDER BY account"
        )
        .bind(wallet)
        .fetch_all(pool)
        .await?);
        Ok(rows
            .into_iter()
            .map(
                |(account, first, activation, handover, read)| StakeAccountRow {
                    account,
                    first_slot: to_u64(first),
                    activation_epoch: to_u64(activation),
                    handover_slot: to_u64(handover),
                    rewards_read_through: to_u64(read),
                },
            )
            .collect())
    }

    /// Note a stake account of the wallet, merging with what is known.
    /// Returns whether it was new.
    pub async fn note_stake_account(
        &self,
        wallet: &str,
        seen: &StakeAccountSeen<'_>,
    ) -> Result<bool, StoreError> {
        let known = self
            .stake_accounts(wallet)
            .await?
            .into_iter()
            .find(|r| r.account == seen.account);
        let fresh = known.is_none();
        let known = known.unwrap_or(StakeAccountRow {
            account: seen.account.to_owned(),
            first_slot: None,
            activation_epoch: None,
            handover_slot: None,
            rewards_read_through: None,
        });
        let first_slot = earliest(known.first_slot, seen.first_slot);
        let activation_epoch = seen.activation_epoch.or(known.activation_epoch);
        let handover_slot = known.handover_slot.max(seen.handover_slot);
        on_pool!(&self.pool, |pool| {
            sqlx::query(
            "INSERT INTO wallet_stake_accounts (wallet, account, first_slot, activation_epoch, handover_slot) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (wallet, account) DO UPDATE SET first_slot = $3, activation_epoch = $4, \
             handover_slot = $5"
        )
        .bind(wallet)
        .bind(seen.account)
        .bind(to_i64(first_slot))
        .bind(to_i64(activation_epoch))
        .bind(to_i64(handover_slot))
        .execute(pool)
        .await
        .map(drop)?
        });
        Ok(fresh)
    }

    /// Record that rewards were asked through `epoch` for `accounts`.
    pub async fn set_rewards_read_through(
        &self,
        wallet: &str,
        accounts: &[String],
        epoch: u64,
    ) -> Result<(), StoreError> {
        for account in accounts {
            on_pool!(&self.pool, |pool| sqlx::query(
                "UPDATE wallet_stake_accounts SET rewards_read_through = $3 \
                 WHERE wallet = $1 AND account = $2"
            )
            .bind(wallet)
            .bind(account)
            .bind(to_i64(Some(epoch)))
            .execute(pool)
            .await
            .map(drop)?);
        }
        Ok(())
    }

    /// The epochs whose rewards the provider would not serve last time.
    pub async fn missing_reward_epochs(&self, wallet: &str) -> Result<Vec<u64>, StoreError> {
        let text: Option<String> = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT missing_epochs FROM wallet_reward_gaps WHERE wallet = $1"
        )
        .bind(wallet)
        .fetch_optional(pool)
        .await?);
        Ok(text
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default())
    }

    /// Replace the wallet's missing reward epochs.
    pub async fn set_missing_reward_epochs(
        &self,
        wallet: &str,
        epochs: &[u64],
    ) -> Result<(), StoreError> {
        let text = serde_json::to_string(epochs).unwrap_or_else(|_| "[]".to_owned());
        on_pool!(&self.pool, |pool| sqlx::query(
            "INSERT INTO wallet_reward_gaps (wallet, missing_epochs) VALUES ($1, $2) \
             ON CONFLICT (wallet) DO UPDATE SET missing_epochs = $2"
        )
        .bind(wallet)
        .bind(&text)
        .execute(pool)
        .await
        .map(drop)?);
        Ok(())
    }
}
