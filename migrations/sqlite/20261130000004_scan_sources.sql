-- A scan lists the wallet's own signatures and those of its token accounts
-- (a token received into an associated token account does not name the
-- wallet). The list is fixed on the job's first run; source_index is where
-- a resumed job picks up.
ALTER TABLE jobs ADD COLUMN sources TEXT;
ALTER TABLE jobs ADD COLUMN source_index INTEGER NOT NULL DEFAULT 0;
