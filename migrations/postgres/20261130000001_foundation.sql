-- MCP sessions: the id is a secret, so only its SHA-256 (hex) is kept.
CREATE TABLE mcp_sessions (
    id_hash          TEXT PRIMARY KEY,
    protocol_version TEXT NOT NULL,
    client_name      TEXT NOT NULL,
    client_version   TEXT NOT NULL,
    principal        TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    last_seen_at     BIGINT NOT NULL,
    expires_at       BIGINT NOT NULL
);
CREATE INDEX mcp_sessions_expires_at ON mcp_sessions (expires_at);

-- Anonymous rate limits (GCRA): one theoretical arrival time per bucket,
-- shared by every API instance.
CREATE TABLE rate_limits (
    bucket TEXT PRIMARY KEY,
    tat_ms BIGINT NOT NULL
);
