-- The account a portal scan offer (/wallets/{address}/scan) priced its
-- quote for (docs/pricing.md, "Scans paid with credits"): the scan form
-- starts a scan only on a quote made for the signed-in account, so a
-- quote id copied from another account's page (or from quote_wallet,
-- which no account owns: NULL) starts nothing and moves no credit.
-- Set once, after the quote is written; expired quotes nothing refers
-- to are purged with it.
ALTER TABLE quotes ADD COLUMN account_id TEXT;
