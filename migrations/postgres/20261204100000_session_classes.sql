-- The client address (limits::ClientKey) an anonymous MCP session was
-- opened from; NULL for a session opened with a bearer. Anonymous sessions
-- have quotas of their own (quota.mcp_anonymous_sessions_per_ip and
-- quota.mcp_anonymous_sessions_total) and never count against bearer ones.
-- Anonymous sessions opened before this migration get an empty address:
-- they count as anonymous, under one address of their own, and expire
-- within mcp.session_ttl_secs.
ALTER TABLE mcp_sessions ADD COLUMN client_key TEXT;
UPDATE mcp_sessions SET client_key = '' WHERE principal = 'anonymous';
CREATE INDEX mcp_sessions_client ON mcp_sessions (client_key, last_seen_at);
