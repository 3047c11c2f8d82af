-- The stake accounts a wallet controls or controlled (SPEC S6): found by
-- getProgramAccounts (current ones, with the delegation's activation
-- epoch) or in the wallet's own Stake instructions (first_slot: the
-- earliest such transaction seen). handover_slot is the slot of the
-- transaction that moved the withdraw authority to someone else: rewards
-- credited from then on are not the wallet's. rewards_read_through is the
-- last epoch whose inflation reward was asked for this account (NULL:
-- never), so an incremental scan asks only newer epochs.
CREATE TABLE wallet_stake_accounts (
    wallet               TEXT NOT NULL,
    account              TEXT NOT NULL,
    first_slot           BIGINT,
    activation_epoch     BIGINT,
    handover_slot        BIGINT,
    rewards_read_through BIGINT,
    PRIMARY KEY (wallet, account)
);

-- Epochs whose rewards the RPC provider would not serve at the wallet's
-- last scan (a JSON array of epoch numbers): asked again by the next scan,
-- and named in the job's error until then, never a silent gap.
CREATE TABLE wallet_reward_gaps (
    wallet         TEXT NOT NULL PRIMARY KEY,
    missing_epochs TEXT NOT NULL
);
