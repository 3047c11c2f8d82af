-- Research credits (docs/follow-the-money.md): a prepaid balance per
-- account in atomic USDC units, kept as an append-only ledger of
-- movements. credit_balances holds each account's running total, the sum
-- of its movements; a charge is one conditional UPDATE of that row
-- (balance_atomic >= cost), so concurrent charges queue on the row and
-- none takes the balance below zero (the CHECK is the last line).
CREATE TABLE credit_balances (
    account_id     TEXT PRIMARY KEY NOT NULL REFERENCES accounts (id),
    balance_atomic BIGINT NOT NULL CHECK (balance_atomic >= 0)
);

-- One line per movement: kind topup | grant | charge | refund; amount is
-- signed (a charge is negative); balance_after is the balance once it was
-- applied, so a balance reads line by line. reference makes a movement
-- happen once: a top-up's payment id, a refund's action. seq orders an
-- account's lines: each is written after its balance row is locked, so
-- seq follows the order the balance moved in. Never updated.
CREATE TABLE credit_movements (
    seq            BIGSERIAL PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    account_id     TEXT NOT NULL REFERENCES accounts (id),
    kind           TEXT NOT NULL CHECK (kind IN ('topup', 'grant', 'charge', 'refund')),
    amount_atomic  BIGINT NOT NULL,
    balance_after  BIGINT NOT NULL,
    action_id      TEXT,
    reference      TEXT UNIQUE,
    note           TEXT NOT NULL DEFAULT '',
    created_at     BIGINT NOT NULL
);
CREATE INDEX credit_movements_account ON credit_movements (account_id, seq);

-- A research action (expand_graph, find_first_funder) under the caller's
-- action_id: what was asked (args_hash), what it cost, how it ended
-- (pending, done, refunded) and, once done, its result to answer a retry.
CREATE TABLE research_actions (
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    action_id    TEXT NOT NULL,
    tool         TEXT NOT NULL,
    args_hash    TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('pending', 'done', 'refunded')),
    cost_atomic  BIGINT NOT NULL,
    result       TEXT,
    created_at   BIGINT NOT NULL,
    finished_at  BIGINT,
    PRIMARY KEY (account_id, action_id)
);
CREATE INDEX research_actions_created ON research_actions (account_id, created_at);

-- Features switched on per account by an operator (follow_the_money).
CREATE TABLE account_features (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    feature    TEXT NOT NULL,
    enabled_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, feature)
);

-- What a live expansion or a funder lookup fetched from the chain, kept
-- for graph.live_cache_secs / graph.funder_cache_secs: shared chain data,
-- not an account's.
CREATE TABLE graph_cache (
    cache_key  TEXT PRIMARY KEY NOT NULL,
    value      TEXT NOT NULL,
    fetched_at BIGINT NOT NULL
);
