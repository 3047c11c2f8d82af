-- An account's defaults for the tax section of get_report and get_positions
-- (issue 24, item 5): the jurisdiction, the reporting currency (NULL: the
-- jurisdiction's own) and how a transfer to or from an unlabelled address
-- is read (NULL: the core's default, at market value). A call's own
-- arguments win; an account with no row reads as before.
CREATE TABLE account_tax_settings (
    account_id   TEXT NOT NULL PRIMARY KEY REFERENCES accounts (id),
    jurisdiction TEXT NOT NULL,
    currency     TEXT,
    unlabelled   TEXT,
    updated_at   BIGINT NOT NULL
);
