-- The portal's account settings page (issues 23 and 24): beside the tax
-- defaults, the cost-basis method the report view and the tax section use
-- when a call names none (NULL: the jurisdiction's own), and the locale
-- numbers are written in (a BCP 47 tag of the supported set; NULL: the
-- request's Accept-Language).
ALTER TABLE account_tax_settings ADD COLUMN method TEXT;
ALTER TABLE account_tax_settings ADD COLUMN locale TEXT;
