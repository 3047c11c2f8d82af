-- Every maintenance pass looks for portal scan debits an earlier version
-- left `pending` (credits::settle_stale_scan_debits); this version writes
-- none, so the index stays near empty and the look never reads the whole
-- table of research actions.
CREATE INDEX research_actions_pending ON research_actions (created_at) WHERE state = 'pending';
