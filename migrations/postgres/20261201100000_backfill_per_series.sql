-- One price backfill job per series, ever: a read that finds a gap again
-- re-queues the series' row (prices::series) instead of adding one, so a
-- price source that keeps failing cannot pile failed jobs up. Rows from
-- before keep only the newest per series (a running one first); nobody
-- bought a backfill, so nothing refers to the others.
DELETE FROM jobs
WHERE kind = 'price_backfill'
  AND status <> 'running'
  AND EXISTS (
      SELECT 1 FROM jobs AS other
      WHERE other.kind = 'price_backfill'
        AND other.address = jobs.address
        AND other.id <> jobs.id
        AND (other.status = 'running'
             OR other.created_at > jobs.created_at
             OR (other.created_at = jobs.created_at AND other.id > jobs.id))
  );

CREATE UNIQUE INDEX jobs_one_backfill_per_series ON jobs (address) WHERE kind = 'price_backfill';
