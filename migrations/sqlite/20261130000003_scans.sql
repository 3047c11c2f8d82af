-- Scan jobs. A job is `running` until it ends; workers claim it with a
-- lease (lease_owner, lease_until) and renew it while they work, so a job
-- whose worker died is claimed again when the lease runs out.
CREATE TABLE jobs (
    id                   TEXT PRIMARY KEY NOT NULL,
    kind                 TEXT NOT NULL,
    address              TEXT NOT NULL,
    scope                TEXT NOT NULL,
    quote_id             TEXT NOT NULL REFERENCES quotes (id),
    status               TEXT NOT NULL,
    phase                TEXT NOT NULL,
    lease_owner          TEXT,
    lease_until          INTEGER,
    attempts             INTEGER NOT NULL DEFAULT 0,
    resume_before        TEXT,
    stop_at              TEXT,
    signatures_listed    INTEGER NOT NULL DEFAULT 0,
    transactions_fetched INTEGER NOT NULL DEFAULT 0,
    transactions_missing INTEGER NOT NULL DEFAULT 0,
    legs_written         INTEGER NOT NULL DEFAULT 0,
    rpc_calls            INTEGER NOT NULL DEFAULT 0,
    rpc_credits          INTEGER NOT NULL DEFAULT 0,
    error                TEXT,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL,
    finished_at          INTEGER
);
CREATE INDEX jobs_claimable ON jobs (status, lease_until, created_at);
CREATE INDEX jobs_address ON jobs (address, status);

-- Transactions of a wallet already turned into legs: what makes scans
-- resumable and incremental without duplicating a leg.
CREATE TABLE wallet_transactions (
    wallet     TEXT NOT NULL,
    signature  TEXT NOT NULL,
    slot       INTEGER NOT NULL,
    block_time INTEGER,
    failed     BOOLEAN NOT NULL,
    PRIMARY KEY (wallet, signature)
);
CREATE INDEX wallet_transactions_newest ON wallet_transactions (wallet, slot);

-- Legs: amounts are signed integers in atomic units, kept as text because
-- they can exceed 64 bits.
CREATE TABLE legs (
    wallet         TEXT NOT NULL,
    signature      TEXT NOT NULL,
    leg_index      INTEGER NOT NULL,
    slot           INTEGER NOT NULL,
    block_time     INTEGER,
    operation_type TEXT NOT NULL,
    mint           TEXT NOT NULL,
    amount         TEXT NOT NULL,
    decimals       INTEGER NOT NULL,
    counterparties TEXT NOT NULL,
    PRIMARY KEY (wallet, signature, leg_index)
);
CREATE INDEX legs_newest ON legs (wallet, slot DESC, signature DESC, leg_index);

-- Secrets the server derives keys from (cursor signing), shared by every
-- instance on the same database.
CREATE TABLE server_secrets (
    name   TEXT PRIMARY KEY NOT NULL,
    secret TEXT NOT NULL
);

-- At most one running scan per wallet (job_already_running).
CREATE UNIQUE INDEX jobs_one_running ON jobs (address) WHERE status = 'running';
