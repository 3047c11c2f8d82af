-- Share links (/s/{token}): a public, read-only view of one wallet's
-- report, minted by an account. Only the SHA-256 of the token is kept
-- (token_hash, lowercase hex), so a copy of this table opens no page; id is
-- the link's public name (lists, the portal's revoke form) and hint the
-- token's first characters, so a person can tell their links apart.
-- A link is live while revoked_at is NULL and expires_at is in the future.
CREATE TABLE share_links (
    id          TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,
    hint        TEXT NOT NULL,
    account_id  TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    wallet      TEXT NOT NULL,
    chart_range TEXT NOT NULL,
    denominate  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);
CREATE INDEX share_links_account ON share_links (account_id, expires_at);
