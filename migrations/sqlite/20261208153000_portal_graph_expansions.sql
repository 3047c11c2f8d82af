-- The expansions a person paid for on a wallet's graph page
-- (/wallets/{address}/graph, docs/follow-the-money.md#in-the-portal):
-- which research action (its stored result is the hop) was made from
-- which wallet's page, so the page shows every kept hop again on reload.
-- The hop itself stays in research_actions.result, stored once.
CREATE TABLE portal_graph_expansions (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    wallet     TEXT NOT NULL,
    action_id  TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, wallet, action_id)
);
