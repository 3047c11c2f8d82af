-- Sign-in proofs in flight. Both kinds are short-lived and single use;
-- expired rows are deleted opportunistically when new ones are written.

-- Sign-In With Solana: a nonce handed to one wallet address. used_at is set
-- by the one verify that consumes it; the row stays until it expires so a
-- replay is told apart from an unknown nonce.
CREATE TABLE siws_nonces (
    nonce      TEXT PRIMARY KEY NOT NULL,
    address    TEXT NOT NULL,
    issued_at  INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX siws_nonces_expires_at ON siws_nonces (expires_at);

-- Google (OpenID Connect): a pending authorization-code flow, keyed by the
-- SHA-256 of its state. The PKCE verifier and the ID-token nonce are needed
-- in clear to finish the flow; the row is deleted when the flow finishes.
CREATE TABLE oidc_flows (
    state_hash    TEXT PRIMARY KEY NOT NULL,
    pkce_verifier TEXT NOT NULL,
    nonce         TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
);
CREATE INDEX oidc_flows_expires_at ON oidc_flows (expires_at);
