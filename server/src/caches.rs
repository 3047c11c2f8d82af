//! The caches of the read path, as named fields of one value made with the
//! services. The surfaces hand each to what reads through it: `Reads`
//! carries the price series and the legs; `get_ledger`, `get_positions` and
//! the share report take the kept pages and replays as arguments (so the
//! read context does not import the modules that read through it); the
//! share card handler and the metrics take theirs. Each keeps what a database read or
//! a replay already made, and each says below what makes an entry stale:
//! none of them can serve an answer that a fresh read would not give.
//! One `Caches` per `Services`, so two servers in one process (tests,
//! benchmarks) never share an entry.

use std::sync::Arc;

use crate::{
    analytics::positions::ReplayCache,
    prices::valuation::SeriesCache,
    reads::{ledger_page::PageCache, legs::LegsCache},
    share::card::CardCache,
};

/// Every cache of the read path.
#[derive(Default)]
pub struct Caches {
    /// Ledger pages by wallet, filters and cursor. Invalidation: an entry
    /// is served only while its wallet's ledger version (bumped by every
    /// write of legs) and its valuer's price fingerprint are those it was
    /// made with; bounded in bytes and pages, it starts over when full.
    pub pages: Arc<PageCache>,
    /// `get_positions` answers by wallet, method and spam choice.
    /// Invalidation: the same two keys as `pages` (ledger version and
    /// price fingerprint); bounded in answers and bytes.
    pub positions: Arc<ReplayCache>,
    /// Each wallet's legs at its latest ledger version read. Invalidation:
    /// a newer ledger version replaces the entry; bounded in legs in total,
    /// oldest wallet first out.
    pub legs: Arc<LegsCache>,
    /// Stored daily and hourly closes per mint. Invalidation: only closed
    /// buckets are kept, and a closed bucket's close never changes once
    /// stored; a span is re-read when a price range was stored since or the
    /// source's rest ended.
    pub series: Arc<SeriesCache>,
    /// Drawn share-page cards by link and view. Invalidation: served for a
    /// minute after drawing (`share::card::CARD_TTL_MS`), then drawn again;
    /// a revoked or expired link is refused before the cache is asked.
    pub cards: Arc<CardCache>,
}
