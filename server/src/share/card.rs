//! The share card (`/s/{token}/card.png`): a 1200x630 PNG for Open Graph
//! and Twitter previews, drawn on the server. It is an SVG we write (the
//! wallet shortened, its value, its change over the range, a sparkline)
//! rendered by `resvg` with DejaVu Sans, which is embedded in the binary
//! (`server/assets/fonts`, Bitstream Vera license), so the card looks the
//! same on every machine and needs no system fonts.

use std::sync::{Arc, LazyLock};

use rust_decimal::prelude::ToPrimitive as _;

use super::{
    html::esc,
    report::{Report, grouped, mint_label, point_value},
};

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
