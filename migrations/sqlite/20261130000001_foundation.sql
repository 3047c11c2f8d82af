-- MCP sessions: the id is a secret, so only its SHA-256 (hex) is kept.
CREATE TABLE mcp_sessions (
    id_hash          TEXT PRIMARY KEY NOT NULL,
    protocol_version TEXT NOT NULL,
    client_name      TEXT NOT NULL,
    client_version   TEXT NOT NULL,
    principal        TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    last_seen_at     INTEGER NOT NULL,
    expires_at       INTEGER NOT NULL
);
CREATE INDEX mcp_sessions_expires_at ON mcp_sessions (expires_at);

-- Anonymous rate limits (GCRA). Used by PostgreSQL deployments; kept in the
-- SQLite schema too so both databases hold the same tables.
CREATE TABLE rate_limits (
    bucket TEXT PRIMARY KEY NOT NULL,
    tat_ms INTEGER NOT NULL
);
