-- Accounts and what belongs to them (docs/accounts.md). An account is an
-- id and a label; people reach it through identities (a Google account or
-- a Solana wallet), agents and scripts through tokens.
CREATE TABLE accounts (
    id         TEXT PRIMARY KEY NOT NULL,
    label      TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);

-- A way to sign in. issuer is the OpenID issuer for google and '' for
-- solana (never NULL: NULLs are distinct in a UNIQUE constraint, so a NULL
-- issuer would let one wallet sign in to two accounts). subject is the
-- OpenID `sub` or the wallet address. One identity, one account.
CREATE TABLE identities (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    kind       TEXT NOT NULL CHECK (kind IN ('google', 'solana')),
    issuer     TEXT NOT NULL,
    subject    TEXT NOT NULL,
    email      TEXT,
    created_at BIGINT NOT NULL,
    UNIQUE (kind, issuer, subject)
);
CREATE INDEX identities_account ON identities (account_id);

-- MCP tokens (lm_…) and API keys (lk_…). Only the SHA-256 (hex) of the
-- plaintext is kept; prefix is its first characters, what a list shows and
-- `ledger tokens revoke` takes. A revoked row stays (revoked_at set), so
-- its prefix still reads in an audit.
CREATE TABLE tokens (
    id           TEXT PRIMARY KEY NOT NULL,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    kind         TEXT NOT NULL CHECK (kind IN ('mcp', 'api')),
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    scopes       TEXT NOT NULL,
    label        TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX tokens_account ON tokens (account_id, created_at);
CREATE INDEX tokens_prefix ON tokens (prefix);

-- The wallets an account watches (free owner reads), with its label.
CREATE TABLE watchlist (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    address    TEXT NOT NULL,
    label      TEXT NOT NULL DEFAULT '' CHECK (length(label) <= 128),
    added_at   BIGINT NOT NULL,
    PRIMARY KEY (account_id, address)
);

-- An account's own names for counterparty addresses (get_flows shows them).
CREATE TABLE address_labels (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    address    TEXT NOT NULL,
    label      TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 64),
    category   TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, address)
);

-- payments.account_id exists since the payments migration (nullable: an
-- anonymous payer has no account); listing an account's payments, newest
-- first, needs this index.
CREATE INDEX payments_account ON payments (account_id, created_at) WHERE account_id IS NOT NULL;
