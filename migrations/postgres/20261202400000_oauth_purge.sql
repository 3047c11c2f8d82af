-- The maintenance pass deletes OAuth tokens past their expiry and activity
-- past oauth.event_retention_secs (docs/oauth.md, "Storage"): both by time.
CREATE INDEX oauth_tokens_expires ON oauth_tokens (expires_at);
CREATE INDEX oauth_events_at ON oauth_events (at);
