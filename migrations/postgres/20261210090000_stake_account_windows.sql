-- A stake account the wallet received (another authority moved its
-- withdraw authority to the wallet) is the wallet's only from that
-- transaction on: acquired_slot is its slot (the latest such one), and
-- what the account did or earned before it is the former owner's
-- (docs/ledger.md, Staking). Together with handover_slot it gives the
-- slots at which the account was the wallet's.
ALTER TABLE wallet_stake_accounts ADD COLUMN acquired_slot BIGINT;

-- Whether the RPC provider refused to list the wallet's current stake
-- accounts (getProgramAccounts) at its last scan: stake accounts others
-- created for it and its history never names may then be missing, which
-- the job's outcome says (partial) instead of a silent gap.
CREATE TABLE wallet_stake_listing (
    wallet     TEXT NOT NULL PRIMARY KEY,
    refused_at BIGINT NOT NULL
);
