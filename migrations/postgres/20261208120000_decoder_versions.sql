-- Versioned readings (issue 22 item 6). Each transaction of a wallet's
-- ledger records the decoder version (ledger_core::ledger::DECODER_VERSION)
-- its legs were read with; rows written before this migration read as 0.
-- A scan re-derives the legs of rows below the current version.
ALTER TABLE wallet_transactions ADD COLUMN decoder_version INTEGER NOT NULL DEFAULT 0;
CREATE INDEX wallet_transactions_decoder ON wallet_transactions (wallet, decoder_version);

-- The stored transaction view (ledger_core::ledger::stored): what the
-- decoder reads of a transaction, in a compact versioned binary form, kept
-- at scan time so legs can be derived again without the RPC provider.
-- Keyed by signature alone: a transaction is the same for every wallet it
-- touches, so wallets that share one share its view.
CREATE TABLE transaction_views (
    signature TEXT PRIMARY KEY NOT NULL,
    view      BYTEA NOT NULL
);
