-- Quotes: a price fixed for a wallet and a scope until expires_at.
CREATE TABLE quotes (
    id           TEXT PRIMARY KEY,
    address      TEXT NOT NULL,
    scope        TEXT NOT NULL,
    tier         TEXT NOT NULL,
    price_micros BIGINT NOT NULL,
    signatures   BIGINT,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX quotes_address ON quotes (address);
