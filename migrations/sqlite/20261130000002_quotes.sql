-- Quotes: a price fixed for a wallet and a scope until expires_at.
CREATE TABLE quotes (
    id           TEXT PRIMARY KEY NOT NULL,
    address      TEXT NOT NULL,
    scope        TEXT NOT NULL,
    tier         TEXT NOT NULL,
    price_micros INTEGER NOT NULL,
    signatures   INTEGER,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX quotes_address ON quotes (address);
