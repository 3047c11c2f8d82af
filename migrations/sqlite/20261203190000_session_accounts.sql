-- The account an MCP session was opened for (NULL: anonymous, the admin
-- key), so the session quotas (quota.mcp_sessions_per_account) can count
-- an account's sessions across its tokens. Sessions opened before this
-- migration count for no account; they expire within mcp.session_ttl_secs.
ALTER TABLE mcp_sessions ADD COLUMN account_id TEXT;
CREATE INDEX mcp_sessions_account ON mcp_sessions (account_id, expires_at);
