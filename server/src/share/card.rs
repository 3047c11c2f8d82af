//! The share card (`/s/{token}/card.png`): a 1200x630 PNG for Open Graph
//! and Twitter previews, drawn on the server. It is an SVG we write (the
//! wallet shortened, its value, its change over the range, a sparkline)
//! rendered by `resvg` with DejaVu Sans, which is embedded in the binary
//! (`server/assets/fonts`, Bitstream Vera license), so the card looks the
//! same on every machine and needs no system fonts.
//!
//! Drawing costs CPU and reading the report costs the database, and a
//! link posted somewhere busy has its card fetched by every preview bot,
//! so a drawn card is kept briefly ([`CardCache`]).

use std::{
    collections::HashMap,
    sync::{Arc, LazyLock, Mutex, PoisonError},
};

use rust_decimal::prelude::ToPrimitive as _;

use super::{
    ChartRange, Denomination,
    html::esc,
    report::{Report, grouped, mint_label, point_value},
};
use bytes::Bytes;

use crate::telemetry::CacheStats;

/// How long a drawn card is served again (milliseconds): a minute, so a
/// burst of previews draws it once while a new scan or price shows soon.
pub const CARD_TTL_MS: i64 = 60_000;
/// At most this many cards are kept (a card is some tens of KB).
const MAX_KEPT_CARDS: usize = 256;

/// What a card is drawn for: the link (by its id) and its view.
pub type CardKey = (String, ChartRange, Denomination);

/// Drawn cards kept (`Caches::cards`) by [`CardKey`],
/// each served for [`CARD_TTL_MS`] after it was drawn, then drawn again.
/// Only what the link check lets through reaches it: a revoked or expired
/// link is refused before the cache is asked, so it never outlives its
/// link. Full, it forgets what has run out, then the oldest.
#[derive(Default)]
pub struct CardCache(Mutex<HashMap<CardKey, (i64, Bytes)>>, CacheStats);

impl CardCache {
    /// Cards served from here, and cards drawn.
    pub fn stats(&self) -> &CacheStats {
        &self.1
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CardKey, (i64, Bytes)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The card kept for `key`, if it was drawn less than [`CARD_TTL_MS`]
    /// before `now`.
    pub fn get(&self, key: &CardKey, now: i64) -> Option<Bytes> {
        let kept = self
            .lock()
            .get(key)
            .filter(|(drawn, _)| now - drawn < CARD_TTL_MS)
            .map(|(_, png)| png.clone());
        match kept {
            Some(_) => self.1.hit(),
            None => self.1.miss(),
        }
        kept
    }

    /// Keep `png`, drawn at `now`, for `key`.
    pub fn keep(&self, key: CardKey, now: i64, png: Bytes) {
        let mut kept = self.lock();
        if kept.len() >= MAX_KEPT_CARDS && !kept.contains_key(&key) {
            kept.retain(|_, (drawn, _)| now - *drawn < CARD_TTL_MS);
            if kept.len() >= MAX_KEPT_CARDS
                && let Some(oldest) = kept
                    .iter()
                    .min_by_key(|(_, (drawn, _))| *drawn)
                    .map(|(k, _)| k.clone())
            {
                kept.remove(&oldest);
            }
        }
        kept.insert(key, (now, png));
    }
}

pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 630;

static FONTS: LazyLock<Arc<resvg::usvg::fontdb::Database>> = LazyLock::new(|| {
    let mut db = resvg::usvg::fontdb::Database::new();
    db.load_font_data(include_bytes!("../../assets/fonts/DejaVuSans.ttf").to_vec());
    db.load_font_data(include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf").to_vec());
    db.set_sans_serif_family("DejaVu Sans");
    Arc::new(db)
});

/// Why a card could not be drawn (never the caller's fault).
#[derive(Debug, thiserror::Error)]
pub enum CardError {
    #[error("card svg: {0}")]
    Svg(#[from] resvg::usvg::Error),
    #[error("card pixmap")]
    Pixmap,
    #[error("card png: {0}")]
    Png(String),
}

/// The sparkline's path through `values`, inside `(x, y, w, h)`.
fn sparkline(values: &[f64], (x, y, w, h): (f64, f64, f64, f64)) -> Option<String> {
    if values.len() < 2 {
        return None;
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = if (max - min).abs() < f64::EPSILON {
        1.0
    } else {
        max - min
    };
    let step = w / (values.len() - 1) as f64;
    let mut d = String::new();
    for (i, v) in values.iter().enumerate() {
        let px = x + step * i as f64;
        let py = y + h - (v - min) / span * h;
        d.push_str(&format!(
            "{}{px:.1},{py:.1}",
            if i == 0 { "M" } else { " L" }
        ));
    }
    Some(d)
}

/// The card's SVG.
pub fn svg(report: &Report) -> String {
    let s = &report.summary;
    let value = s.value_end.as_ref().map_or("no value yet".to_owned(), |v| {
        format!("{} {}", grouped(v), s.unit)
    });
    let (change, colour) = match (&s.change, &s.change_pct) {
        (Some(c), pct) => {
            let up = !c.starts_with('-');
            let c = if up {
                format!("+{c}")
            } else {
                c.replacen('-', "−", 1)
            };
            let pct = pct.as_ref().map_or(String::new(), |p| {
                if p.starts_with('-') {
                    format!(" ({}%)", p.replacen('-', "−", 1))
                } else {
                    format!(" (+{p}%)")
                }
            });
            (
                format!("{c} {}{pct} over {}", s.unit, report.range.words()),
                if up { "#1a7f37" } else { "#b42318" },
            )
        }
        (None, _) => (format!("over {}", report.range.words()), "#3d4a66"),
    };
    let values: Vec<f64> = report
        .value
        .points
        .iter()
        .filter_map(|p| point_value(p, report.denominate).and_then(|d| d.to_f64()))
        .collect();
    let line = sparkline(&values, (80.0, 360.0, 1040.0, 190.0))
        .map(|d| {
            format!(
                "<path d=\"{d}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"6\" \
                 stroke-linejoin=\"round\" stroke-linecap=\"round\"/>"
            )
        })
        .unwrap_or_default();
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\">\
         <rect width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"#fbfaf7\"/>\
         <rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"14\" fill=\"#fca311\"/>\
         <text x=\"80\" y=\"100\" font-family=\"DejaVu Sans\" font-size=\"34\" fill=\"#3d4a66\">Ledger · wallet report</text>\
         <text x=\"80\" y=\"170\" font-family=\"DejaVu Sans\" font-weight=\"bold\" font-size=\"56\" fill=\"#14213d\">Wallet {wallet}</text>\
         <text x=\"80\" y=\"262\" font-family=\"DejaVu Sans\" font-weight=\"bold\" font-size=\"84\" fill=\"#14213d\">{value}</text>\
         <text x=\"80\" y=\"325\" font-family=\"DejaVu Sans\" font-size=\"38\" fill=\"{colour}\">{change}</text>\
         {line}\
         <text x=\"80\" y=\"600\" font-family=\"DejaVu Sans\" font-size=\"24\" fill=\"#3d4a66\">Read-only share link · {range} · {unit}</text>\
         </svg>",
        wallet = esc(&mint_label(&report.address)),
        value = esc(&value),
        change = esc(&change),
        range = esc(report.range.as_str()),
        unit = esc(&s.unit),
    )
}

/// The card as PNG bytes.
pub fn png(report: &Report) -> Result<Vec<u8>, CardError> {
    render_svg(&svg(report))
}

/// Render one of our SVGs at the card's size.
pub fn render_svg(svg: &str) -> Result<Vec<u8>, CardError> {
    let options = resvg::usvg::Options {
        fontdb: FONTS.clone(),
        font_family: "DejaVu Sans".to_owned(),
        ..resvg::usvg::Options::default()
    };
    let tree = resvg::usvg::Tree::from_str(svg, &options)?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(WIDTH, HEIGHT).ok_or(CardError::Pixmap)?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::identity(),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| CardError::Png(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_card_is_served_for_a_minute_then_drawn_again() {
        let cache = CardCache::default();
        let key: CardKey = ("shl_1".to_owned(), ChartRange::default(), Denomination::Usd);
        assert!(cache.get(&key, 0).is_none());
        cache.keep(key.clone(), 0, Bytes::from_static(&[1, 2, 3]));
        assert_eq!(
            cache.get(&key, CARD_TTL_MS - 1).as_deref(),
            Some(&[1u8, 2, 3][..])
        );
        assert!(cache.get(&key, CARD_TTL_MS).is_none(), "run out");
        let other = ("shl_1".to_owned(), ChartRange::default(), Denomination::Sol);
        assert!(
            cache.get(&other, 0).is_none(),
            "another view is another card"
        );
        assert_eq!((cache.stats().hits(), cache.stats().misses()), (1, 3));
    }

    #[test]
    fn a_full_cache_forgets_the_oldest_card() {
        let cache = CardCache::default();
        let key = |i: usize| (format!("shl_{i}"), ChartRange::default(), Denomination::Usd);
        for i in 0..MAX_KEPT_CARDS {
            cache.keep(key(i), i64::try_from(i).unwrap(), Bytes::new());
        }
        cache.keep(key(MAX_KEPT_CARDS), 1_000, Bytes::new());
        assert!(cache.get(&key(0), 1_000).is_none(), "the oldest went");
        assert!(cache.get(&key(1), 1_000).is_some());
        assert!(cache.get(&key(MAX_KEPT_CARDS), 1_000).is_some());
    }

    #[test]
    fn a_sparkline_spans_its_box_from_lowest_to_highest() {
        let d = sparkline(&[1.0, 3.0, 2.0], (0.0, 0.0, 100.0, 10.0)).unwrap();
        assert_eq!(d, "M0.0,10.0 L50.0,0.0 L100.0,5.0");
        assert!(sparkline(&[1.0], (0.0, 0.0, 1.0, 1.0)).is_none());
    }

    #[test]
    fn the_card_renders_1200_by_630_with_the_embedded_font() {
        let png = render_svg(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\" height=\"630\">\
             <text x=\"10\" y=\"100\" font-size=\"80\">Wallet</text></svg>",
        )
        .unwrap();
        let pixmap = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((pixmap.width(), pixmap.height()), (1200, 630));
        // The text was drawn: some pixel is not transparent.
        assert!(pixmap.pixels().iter().any(|p| p.alpha() > 0));
    }
}
