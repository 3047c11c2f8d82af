-- Price series: one row per closed bucket of a mint at a granularity
-- (3600 or 86400 seconds), the bucket's close as decimal text (never a
-- float), and the source that answered. Keyed so a bucket is stored once.
CREATE TABLE price_points (
    mint         TEXT NOT NULL,
    granularity  BIGINT NOT NULL,
    bucket_start BIGINT NOT NULL,
    close        TEXT NOT NULL,
    source       TEXT NOT NULL,
    PRIMARY KEY (mint, granularity, bucket_start)
);

-- The ranges of buckets already asked of a source, [range_start, range_end)
-- in unix seconds. A bucket the source had no candle for (no trades) is
-- covered by its range too, so nothing is fetched twice.
CREATE TABLE price_ranges (
    mint        TEXT NOT NULL,
    granularity BIGINT NOT NULL,
    range_start BIGINT NOT NULL,
    range_end   BIGINT NOT NULL,
    PRIMARY KEY (mint, granularity, range_start)
);

-- Price backfills run in the jobs queue (kind 'price_backfill'), with the
-- same leases as scans. A job row names a quote; a backfill is bought by
-- nobody, so backfills name this one sentinel quote.
INSERT INTO quotes (id, address, scope, tier, price_micros, signatures, created_at, expires_at)
VALUES ('q_price_backfill', '', 'backfill', 'none', 0, NULL, 0, 0);
