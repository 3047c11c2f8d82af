-- What a leg says about the programs behind it (SPEC S7, issue 22): the
-- position (the program account holding an asset for the wallet: an order
-- escrow's order, a DCA account) a leg moves into, out of or from within,
-- and the venue (pools, order books) and router (aggregator, order program)
-- a swap went through, by the ledger's program registry names. NULL for
-- legs that have none, and for every leg written before this migration
-- until its wallet is scanned again.
ALTER TABLE legs ADD COLUMN position TEXT;
ALTER TABLE legs ADD COLUMN venue TEXT;
ALTER TABLE legs ADD COLUMN router TEXT;
