-- Per-stake-account reconciliation (SPEC S6, issue 21 item 3): every
-- lamport flow into or out of one of a wallet's stake accounts that a scan
-- saw, one row per (stake account, transaction) or (stake account, epoch's
-- reward). Transaction rows come from the transaction's own balances of the
-- stake account (postBalances - preBalances: kind 'deposit' when it rose,
-- 'withdrawal' when it fell, 'deposit' of 0 when it was only named), with
-- lamports_after its balance after the transaction (the balance a handed-
-- over account is checked against); reward rows ('reward') come from
-- getInflationReward, under the reward leg's signature
-- `reward:<epoch>:<stake account>`. lamports is always >= 0.
CREATE TABLE stake_account_flows (
    wallet         TEXT NOT NULL,
    account        TEXT NOT NULL,
    signature      TEXT NOT NULL,
    slot           BIGINT NOT NULL,
    kind           TEXT NOT NULL,
    lamports       BIGINT NOT NULL,
    lamports_after BIGINT,
    PRIMARY KEY (wallet, account, signature)
);

-- What the last scan's reconciliation found per stake account:
-- balance_lamports is the balance checked against (getMultipleAccounts now,
-- 0 when closed, or the balance at the handover), difference_lamports that
-- balance minus deposits + rewards - withdrawals (0: reconciled). NULL
-- until a scan has reconciled the account.
ALTER TABLE wallet_stake_accounts ADD COLUMN balance_lamports BIGINT;
ALTER TABLE wallet_stake_accounts ADD COLUMN difference_lamports BIGINT;
