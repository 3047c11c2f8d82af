-- Portal (cookie) sessions, the store behind tower-sessions. Keyed by the
-- SHA-256 of the session id the cookie carries, so a copy of this table
-- signs nobody in. data is the session's JSON; expires_at is the idle
-- deadline, moved forward on every save; created_at starts the absolute
-- lifetime (a new id, at sign-in or linking, starts a new row).
CREATE TABLE portal_sessions (
    id_hash    TEXT PRIMARY KEY NOT NULL,
    data       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX portal_sessions_expires_at ON portal_sessions (expires_at);
