-- The account a scan was started by (NULL for an anonymous payer), so the
-- job's own account may read it (docs/accounts.md).
ALTER TABLE jobs ADD COLUMN account_id TEXT;
