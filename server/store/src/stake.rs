//! The stake accounts of a wallet and how far their rewards have been read
//! (`wallet_stake_accounts`, `wallet_reward_gaps`). A scan notes every stake
//! account it finds, current or from history, and after reading rewards
//! records the last epoch asked per account and the epochs the provider
//! would not serve, so the next (incremental) scan asks only what is new
//! or still missing. It also keeps every lamport flow of each stake
//! account the scan saw (`stake_account_flows`) and what the last
//! reconciliation of each found (`balance_lamports`,
//! `difference_lamports`): docs/ledger.md, "Staking".

use ledger_core::ledger::protocols::stake::Flow;

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
    /// When its withdraw authority moved to the wallet from someone else
    /// (a stake account received, bought or given): before it, the
    /// account and what it earned were the former owner's.
    pub acquired_slot: Option<u64>,
    /// The last epoch whose reward was asked for it.
    pub rewards_read_through: Option<u64>,
    /// The balance the last reconciliation checked against (None: never
    /// reconciled).
    pub balance_lamports: Option<u64>,
    /// That balance minus deposits + rewards − withdrawals (0: reconciled).
    pub difference_lamports: Option<i64>,
}

/// One lamport flow of one stake account: a transaction's (with the
/// account's balance after it) or an epoch's reward (`lamports_after`
/// None), under the reward leg's signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StakeFlowRow {
    pub account: String,
    pub signature: String,
    pub slot: u64,
    pub flow: Flow,
    pub lamports_after: Option<u64>,
}

/// What a scan learned of a stake account: merged into what is stored (the
/// earliest first slot, the latest handover and receipt, any activation
/// epoch).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StakeAccountSeen<'a> {
    pub account: &'a str,
    pub first_slot: Option<u64>,
    pub activation_epoch: Option<u64>,
    pub handover_slot: Option<u64>,
    pub acquired_slot: Option<u64>,
}

impl StakeAccountRow {
    /// Whether the account was the wallet's at `slot`: after it received
    /// the account (`acquired_slot`, exclusive: the receiving transaction
    /// itself is where it becomes the wallet's) and before it handed it
    /// over (`handover_slot`, exclusive: the handing-over transaction names
    /// the wallet as the authority that signs it away). With both, the
    /// later one says where it stands now: received then handed over is
    /// the wallet's in between; handed over then received back is the
    /// wallet's before the one and after the other.
    pub fn owned_at(&self, slot: u64) -> bool {
        match (self.acquired_slot, self.handover_slot) {
            (None, None) => true,
            (None, Some(h)) => slot < h,
            (Some(a), None) => slot > a,
            (Some(a), Some(h)) if a < h => a < slot && slot < h,
            (Some(a), Some(h)) => slot < h || slot > a,
        }
    }

    /// Whether it is someone else's now: its withdraw authority left the
    /// wallet, and did not come back after.
    pub fn handed_over_now(&self) -> bool {
        match (self.acquired_slot, self.handover_slot) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(a), Some(h)) => h > a,
        }
    }
}

type Row = (
    String,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
);

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
        let rows: Vec<Row> = on_pool!(&self.pool, |pool| {
            sqlx::query_as(
            "SELECT account, first_slot, activation_epoch, handover_slot, rewards_read_through, \
             balance_lamports, difference_lamports, acquired_slot \
             FROM wallet_stake_accounts WHERE wallet = $1 ORDER BY account"
        )
        .bind(wallet)
        .fetch_all(pool)
        .await?
        });
        Ok(rows
            .into_iter()
            .map(
                |(account, first, activation, handover, read, balance, difference, acquired)| {
                    StakeAccountRow {
                        account,
                        first_slot: to_u64(first),
                        activation_epoch: to_u64(activation),
                        handover_slot: to_u64(handover),
                        acquired_slot: to_u64(acquired),
                        rewards_read_through: to_u64(read),
                        balance_lamports: to_u64(balance),
                        difference_lamports: difference,
                    }
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
            acquired_slot: None,
            rewards_read_through: None,
            balance_lamports: None,
            difference_lamports: None,
        });
        let first_slot = earliest(known.first_slot, seen.first_slot);
        let activation_epoch = seen.activation_epoch.or(known.activation_epoch);
        let handover_slot = known.handover_slot.max(seen.handover_slot);
        let acquired_slot = known.acquired_slot.max(seen.acquired_slot);
        on_pool!(&self.pool, |pool| {
            sqlx::query(
                "INSERT INTO wallet_stake_accounts \
             (wallet, account, first_slot, activation_epoch, handover_slot, acquired_slot) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (wallet, account) DO UPDATE SET first_slot = $3, activation_epoch = $4, \
             handover_slot = $5, acquired_slot = $6",
            )
            .bind(wallet)
            .bind(seen.account)
            .bind(to_i64(first_slot))
            .bind(to_i64(activation_epoch))
            .bind(to_i64(handover_slot))
            .bind(to_i64(acquired_slot))
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

    /// Remove what a stake account the wallet received did while it was not
    /// the wallet's, as scans before receipts were read kept it: its reward
    /// legs credited then (and their ledger rows), and its lamport flows
    /// then (the receipt's own flow, its opening balance, and a handover's,
    /// its closing one, stay). `accounts` are the wallet's stake accounts as
    /// [`Store::stake_accounts`] gave them. Idempotent; returns the reward
    /// legs removed, and a removal bumps the wallet's ledger version.
    pub async fn purge_before_receipts(
        &self,
        wallet: &str,
        accounts: &[StakeAccountRow],
    ) -> Result<u64, StoreError> {
        let received: Vec<(&str, i64, i64)> = accounts
            .iter()
            .filter_map(|row| {
                let at = row.acquired_slot?;
                // Not the wallet's from `from` through the receipt: from the
                // start, or from a handover before it.
                let from = row.handover_slot.filter(|h| *h < at).unwrap_or(0);
                Some((row.account.as_str(), to_i64(Some(from))?, to_i64(Some(at))?))
            })
            .collect();
        if received.is_empty() {
            return Ok(0);
        }
        let removed = on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            let mut removed = 0u64;
            for (account, from, at) in &received {
                let rewards = format!("reward:%:{account}");
                removed += sqlx::query(
                    "DELETE FROM legs WHERE wallet = $1 AND signature LIKE $2 \
                     AND slot >= $3 AND slot <= $4",
                )
                .bind(wallet)
                .bind(&rewards)
                .bind(from)
                .bind(at)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                sqlx::query(
                    "DELETE FROM wallet_transactions WHERE wallet = $1 AND signature LIKE $2 \
                     AND slot >= $3 AND slot <= $4",
                )
                .bind(wallet)
                .bind(&rewards)
                .bind(from)
                .bind(at)
                .execute(&mut *tx)
                .await?;
                sqlx::query(
                    "DELETE FROM stake_account_flows WHERE wallet = $1 AND account = $2 \
                     AND slot > $3 AND slot < $4",
                )
                .bind(wallet)
                .bind(account)
                .bind(if *from == 0 { -1 } else { *from })
                .bind(at)
                .execute(&mut *tx)
                .await?;
            }
            if removed > 0 {
                sqlx::query(crate::BUMP_LEDGER_VERSION)
                    .bind(wallet)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            removed
        });
        Ok(removed)
    }

    /// Record whether the RPC provider listed the wallet's current stake
    /// accounts at this scan (`refused`: it would not, at `now`).
    pub async fn set_stake_listing_refused(
        &self,
        wallet: &str,
        refused: bool,
        now: i64,
    ) -> Result<(), StoreError> {
        if refused {
            on_pool!(&self.pool, |pool| sqlx::query(
                "INSERT INTO wallet_stake_listing (wallet, refused_at) VALUES ($1, $2) \
                 ON CONFLICT (wallet) DO UPDATE SET refused_at = $2"
            )
            .bind(wallet)
            .bind(now)
            .execute(pool)
            .await
            .map(drop)?);
        } else {
            on_pool!(&self.pool, |pool| sqlx::query(
                "DELETE FROM wallet_stake_listing WHERE wallet = $1"
            )
            .bind(wallet)
            .execute(pool)
            .await
            .map(drop)?);
        }
        Ok(())
    }

    /// Whether the provider refused to list the wallet's current stake
    /// accounts at its last scan.
    pub async fn stake_listing_refused(&self, wallet: &str) -> Result<bool, StoreError> {
        let at: Option<i64> = on_pool!(&self.pool, |pool| sqlx::query_scalar(
            "SELECT refused_at FROM wallet_stake_listing WHERE wallet = $1"
        )
        .bind(wallet)
        .fetch_optional(pool)
        .await?);
        Ok(at.is_some())
    }

    /// Keep stake account flows, in one database transaction; a (stake
    /// account, signature) already kept is left as it is, so a resumed or
    /// repeated scan adds nothing twice.
    pub async fn write_stake_flows(
        &self,
        wallet: &str,
        flows: &[StakeFlowRow],
    ) -> Result<(), StoreError> {
        if flows.is_empty() {
            return Ok(());
        }
        on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            for f in flows {
                let (kind, lamports) = f.flow.parts();
                sqlx::query(
                    "INSERT INTO stake_account_flows \
                     (wallet, account, signature, slot, kind, lamports, lamports_after) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7) \
                     ON CONFLICT (wallet, account, signature) DO NOTHING",
                )
                .bind(wallet)
                .bind(&f.account)
                .bind(&f.signature)
                .bind(to_i64(Some(f.slot)))
                .bind(kind)
                .bind(to_i64(Some(lamports)))
                .bind(to_i64(f.lamports_after))
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// Every kept flow of the wallet's stake accounts, by account then
    /// slot. A row of a kind this version does not know is left out.
    pub async fn stake_flows(&self, wallet: &str) -> Result<Vec<StakeFlowRow>, StoreError> {
        type FlowRow = (String, String, i64, String, i64, Option<i64>);
        let rows: Vec<FlowRow> = on_pool!(&self.pool, |pool| sqlx::query_as(
            "SELECT account, signature, slot, kind, lamports, lamports_after \
             FROM stake_account_flows WHERE wallet = $1 ORDER BY account, slot, signature"
        )
        .bind(wallet)
        .fetch_all(pool)
        .await?);
        Ok(rows
            .into_iter()
            .filter_map(|(account, signature, slot, kind, lamports, after)| {
                Some(StakeFlowRow {
                    account,
                    signature,
                    slot: u64::try_from(slot).ok()?,
                    flow: Flow::from_parts(&kind, u64::try_from(lamports).ok()?)?,
                    lamports_after: to_u64(after),
                })
            })
            .collect())
    }

    /// Record one stake account's reconciliation. When it changes what was
    /// recorded, the wallet's ledger version moves too: positions are kept
    /// on that version and show the reconciliation.
    pub async fn set_stake_reconciliation(
        &self,
        wallet: &str,
        account: &str,
        balance: u64,
        difference: i64,
    ) -> Result<(), StoreError> {
        let before = self
            .stake_accounts(wallet)
            .await?
            .into_iter()
            .find(|r| r.account == account);
        if before.as_ref().is_some_and(|r| {
            r.balance_lamports == Some(balance) && r.difference_lamports == Some(difference)
        }) {
            return Ok(());
        }
        on_pool!(&self.pool, |pool| {
            let mut tx = pool.begin().await?;
            sqlx::query(
                "UPDATE wallet_stake_accounts SET balance_lamports = $3, difference_lamports = $4 \
                 WHERE wallet = $1 AND account = $2",
            )
            .bind(wallet)
            .bind(account)
            .bind(to_i64(Some(balance)))
            .bind(difference)
            .execute(&mut *tx)
            .await?;
            sqlx::query(crate::BUMP_LEDGER_VERSION)
                .bind(wallet)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        });
        Ok(())
    }
}
