-- Ledger as the OAuth 2.1 authorization server of its own MCP endpoint
-- (docs/oauth.md). Secrets (client secrets, codes, access and refresh
-- tokens) are stored only as their SHA-256 in hex; a copy of the database
-- holds nothing a client could present.

-- A client: registered through POST /register (kind 'registered', id
-- oc_…), or a Client ID Metadata Document (kind 'metadata', id the https
-- URL of the document, with the fetched document cached until
-- cache_until). redirect_uris is a JSON array of strings. last_used_at is
-- set when a code is first issued to it: a registered client never used
-- is purged after oauth.unused_client_ttl_secs.
CREATE TABLE oauth_clients (
    id            TEXT PRIMARY KEY NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('registered', 'metadata')),
    name          TEXT NOT NULL DEFAULT '',
    redirect_uris TEXT NOT NULL,
    auth_method   TEXT NOT NULL CHECK (auth_method IN ('none', 'client_secret_post', 'client_secret_basic')),
    secret_hash   TEXT,
    scope         TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    last_used_at  INTEGER,
    cache_until   INTEGER
);
CREATE INDEX oauth_clients_unused ON oauth_clients (created_at) WHERE last_used_at IS NULL;

-- An authorization request waiting for the signed-in person's decision.
-- The consent form carries only its id; every parameter is read back from
-- here, bound to the account that saw the page.
CREATE TABLE oauth_requests (
    id             TEXT PRIMARY KEY NOT NULL,
    client_id      TEXT NOT NULL,
    account_id     TEXT NOT NULL REFERENCES accounts (id),
    redirect_uri   TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    scope          TEXT NOT NULL,
    resource       TEXT NOT NULL,
    state          TEXT,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    decided_at     INTEGER
);

-- One approval: the code it issued and every token issued from that code
-- (the refresh family). Revoking the grant revokes all of them: a code
-- used twice, a rotated refresh token presented again, a disconnect.
CREATE TABLE oauth_grants (
    id             TEXT PRIMARY KEY NOT NULL,
    client_id      TEXT NOT NULL,
    account_id     TEXT NOT NULL REFERENCES accounts (id),
    scope          TEXT NOT NULL,
    resource       TEXT NOT NULL,
    redirect_uri   TEXT NOT NULL,
    code_hash      TEXT NOT NULL UNIQUE,
    code_challenge TEXT NOT NULL,
    code_expires_at INTEGER NOT NULL,
    code_used_at   INTEGER,
    created_at     INTEGER NOT NULL,
    last_used_at   INTEGER,
    revoked_at     INTEGER
);
CREATE INDEX oauth_grants_account ON oauth_grants (account_id, client_id);

-- Access (kind 'access') and refresh (kind 'refresh') tokens of a grant.
-- A refresh token is used once: rotated_at is set when it is exchanged,
-- and presenting it again revokes the grant.
CREATE TABLE oauth_tokens (
    hash       TEXT PRIMARY KEY NOT NULL,
    grant_id   TEXT NOT NULL REFERENCES oauth_grants (id),
    kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    scope      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    rotated_at INTEGER,
    revoked_at INTEGER
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);

-- What happened on an account's clients and tokens, for the Keys page.
CREATE TABLE oauth_events (
    id         TEXT PRIMARY KEY NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    client_id  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    at         INTEGER NOT NULL
);
CREATE INDEX oauth_events_account ON oauth_events (account_id, at);
