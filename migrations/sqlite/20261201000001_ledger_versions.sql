-- A counter per wallet, bumped in the transaction that writes its legs, so
-- a reader can tell with one key lookup whether a wallet's ledger changed
-- since it last computed something from the whole of it (positions are
-- cached on it). A wallet without a row is at version 0.
CREATE TABLE ledger_versions (
    wallet  TEXT PRIMARY KEY NOT NULL,
    version BIGINT NOT NULL
);
