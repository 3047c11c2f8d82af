-- x402 payments: one row per payment we co-signed, written before the
-- transaction is sent (status 'pending') and finished after it confirmed
-- ('settled') or could not land ('failed'). The row is the durable intent
-- that makes a crash between send and record recoverable (see
-- docs/payments.md, "Settlement and recovery").
CREATE TABLE payments (
    id              TEXT PRIMARY KEY NOT NULL,
    quote_id        TEXT NOT NULL REFERENCES quotes (id),
    -- SHA-256 (hex) of the payer-signed message: the payment's identity, so
    -- the same payment presented again is recognised whatever its wrapping.
    message_hash    TEXT NOT NULL UNIQUE,
    -- The transaction id (the fee payer's signature, base58) and the fully
    -- signed wire transaction (base64), kept so recovery can resend the
    -- very same bytes: the runtime never executes one signature twice.
    signature       TEXT NOT NULL UNIQUE,
    wire_tx         TEXT NOT NULL,
    payer           TEXT NOT NULL,
    network         TEXT NOT NULL,
    asset           TEXT NOT NULL,
    pay_to          TEXT NOT NULL,
    amount_atomic   INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
    error           TEXT,
    -- SHA-256 (hex) of the receipt; the receipt itself is never stored.
    receipt_hash    TEXT UNIQUE,
    -- What the payment bought: 'scan' (start the quote's scan once, then
    -- reads) or 'read' (reads of the wallet).
    entitlement     TEXT NOT NULL CHECK (entitlement IN ('scan', 'read')),
    wallet          TEXT NOT NULL,
    scope           TEXT NOT NULL,
    consumed_job_id TEXT,
    account_id      TEXT,
    -- Until when a live request owns the pending row; recovery takes only
    -- rows whose lease has run out.
    lease_until     INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    settled_at      INTEGER,
    expires_at      INTEGER
);
-- One live payment per quote: a second, different payment for a quote that
-- is paid (or being paid) is refused, so a quote is never charged twice.
CREATE UNIQUE INDEX payments_one_per_quote ON payments (quote_id) WHERE status <> 'failed';
-- One payment in flight per payer: a payer cannot have us co-sign a batch
-- of payments that would fail on chain at our fee payer's expense.
CREATE UNIQUE INDEX payments_one_pending_per_payer ON payments (payer) WHERE status = 'pending';
CREATE INDEX payments_pending ON payments (status, lease_until);
CREATE INDEX payments_wallet ON payments (wallet);
