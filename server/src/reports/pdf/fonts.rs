//! The PDF's two fonts, DejaVu Sans and DejaVu Sans Bold (server/assets/fonts,
//! with their licence), embedded as subsets so the file shows the same
//! glyphs on every reader and any character the fonts have prints (€, £,
//! →, names in other scripts), where the standard 14 fonts know only
//! WinAnsi.
//!
//! Each font is written as a Type 0 font over a CIDFontType2 descendant
//! with the Identity-H encoding, the form `subsetter` asks for: it drops
//! the font's own `cmap`, so the content streams address glyphs by their
//! new ids (two bytes each), and a `ToUnicode` map gives text extraction
//! (`pdftotext`, copy and paste, search) the characters back. Text is
//! measured with the fonts' own advance widths (`skrifa`, read once), the
//! same widths the PDF's `W` array declares, so what is measured is what
//! is drawn. No kerning or shaping: the report is Latin tables and labels.

use std::{
    collections::{BTreeMap, HashMap},
    sync::LazyLock,
};

use pdf_writer::{
    Filter, Finish, Name, Pdf, Rect, Ref, Str,
    types::{CidFontType, FontFlags, SystemInfo, UnicodeCmap},
};
use skrifa::{FontRef, MetadataProvider, instance::LocationRef, instance::Size};
use subsetter::GlyphRemapper;

const REGULAR_TTF: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
const BOLD_TTF: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-Bold.ttf");

/// Characters below this are measured from a table built once; the rest
/// are looked up in the font's character map as they come.
const TABLE: usize = 0x250;

/// Characters beyond the table the report itself writes (minus sign,
/// ellipsis, bullet, arrows, dashes, currency signs), read once too: a
/// ledger of 100,000 rows measures a minus sign in many of its cells.
const EXTRA: &[char] = &['−', '…', '•', '→', '≤', '–', '—', '€', '‘', '’', '“', '”'];

/// Which of the two fonts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Regular,
    Bold,
}

impl Style {
    pub fn resource(self) -> Name<'static> {
        match self {
            Style::Regular => Name(b"F1"),
            Style::Bold => Name(b"F2"),
        }
    }

    fn index(self) -> usize {
        match self {
            Style::Regular => 0,
            Style::Bold => 1,
        }
    }
}

/// One font file, read once: its glyph ids and advances (font units) for
/// the common characters, and the metrics its descriptor declares.
struct Face {
    data: &'static [u8],
    postscript: &'static [u8],
    units_per_em: f32,
    table: Vec<(u16, f32)>,
    extra: HashMap<char, (u16, f32)>,
    ascent: f32,
    descent: f32,
    cap_height: f32,
    bbox: [f32; 4],
}

impl Face {
    fn load(data: &'static [u8], postscript: &'static [u8]) -> Option<Face> {
        let font = FontRef::new(data).ok()?;
        let metrics = font.metrics(Size::unscaled(), LocationRef::default());
        let glyphs = font.glyph_metrics(Size::unscaled(), LocationRef::default());
        let charmap = font.charmap();
        let table = (0..TABLE as u32)
            .map(|c| {
                let gid = charmap.map(c).map_or(0, |g| g.to_u32());
                let gid = u16::try_from(gid).unwrap_or(0);
                let advance = glyphs
                    .advance_width(skrifa::GlyphId::new(u32::from(gid)))
                    .unwrap_or(0.0);
                (gid, advance)
            })
            .collect();
        let extra = EXTRA
            .iter()
            .map(|c| {
                let gid = charmap.map(*c).map_or(0, |g| g.to_u32());
                let gid = u16::try_from(gid).unwrap_or(0);
                let advance = glyphs
                    .advance_width(skrifa::GlyphId::new(u32::from(gid)))
                    .unwrap_or(0.0);
                (*c, (gid, advance))
            })
            .collect();
        let bounds = metrics.bounds.map_or([0.0, -240.0, 1000.0, 930.0], |b| {
            [b.x_min, b.y_min, b.x_max, b.y_max]
        });
        Some(Face {
            data,
            postscript,
            units_per_em: f32::from(metrics.units_per_em.max(1)),
            table,
            extra,
            ascent: metrics.ascent,
            descent: metrics.descent,
            cap_height: metrics.cap_height.unwrap_or(metrics.ascent),
            bbox: bounds,
        })
    }

    /// The glyph and advance (font units) of `c`; the missing glyph (0)
    /// for a character the font lacks.
    fn glyph(&self, c: char) -> (u16, f32) {
        if let Some(hit) = self.table.get(c as usize).or_else(|| self.extra.get(&c)) {
            return *hit;
        }
        let Ok(font) = FontRef::new(self.data) else {
            return (0, 0.0);
        };
        let gid = font.charmap().map(c).map_or(0, |g| g.to_u32());
        let gid = u16::try_from(gid).unwrap_or(0);
        let advance = font
            .glyph_metrics(Size::unscaled(), LocationRef::default())
            .advance_width(skrifa::GlyphId::new(u32::from(gid)))
            .unwrap_or(0.0);
        (gid, advance)
    }

    /// In PDF glyph space (1000 units per em).
    fn scale(&self, units: f32) -> f32 {
        units * 1000.0 / self.units_per_em
    }
}

static FACES: LazyLock<Option<[Face; 2]>> = LazyLock::new(|| {
    Some([
        Face::load(REGULAR_TTF, b"DejaVuSans")?,
        Face::load(BOLD_TTF, b"DejaVuSans-Bold")?,
    ])
});

/// The shipped fonts could not be read (a build with broken assets).
#[derive(Debug, thiserror::Error)]
pub enum FontError {
    #[error("the shipped DejaVu fonts could not be read")]
    Unreadable,
    #[error("subsetting the font failed: {0}")]
    Subset(String),
}

/// The glyphs one document uses of one font: their new ids (in the order
/// first used), what each stands for and its width.
#[derive(Default)]
struct Used {
    remapper: GlyphRemapper,
    /// new glyph id → (the character, width in glyph space)
    glyphs: BTreeMap<u16, (char, f32)>,
    /// character → new glyph id, so a character is looked up once
    cache: HashMap<char, (u16, f32)>,
}

/// The fonts of one document: measuring and encoding text, then writing
/// the embedded subsets.
pub struct Fonts {
    faces: &'static [Face; 2],
    used: [Used; 2],
}

impl Fonts {
    pub fn new() -> Result<Self, FontError> {
        let faces = FACES.as_ref().ok_or(FontError::Unreadable)?;
        Ok(Fonts {
            faces,
            used: [Used::default(), Used::default()],
        })
    }

    /// The width of `s` in points at `size`.
    pub fn width(&self, style: Style, size: f32, s: &str) -> f32 {
        let face = &self.faces[style.index()];
        let units: f32 = s
            .chars()
            .map(|c| match face.glyph(c) {
                (0, _) => face.glyph('?').1,
                (_, advance) => advance,
            })
            .sum();
        units * size / face.units_per_em
    }

    /// `s` as the content stream shows it: each character's new glyph id,
    /// two bytes big-endian. A character the font lacks shows as `?`.
    pub fn encode(&mut self, style: Style, s: &str) -> Vec<u8> {
        let face = &self.faces[style.index()];
        let used = &mut self.used[style.index()];
        let mut out = Vec::with_capacity(s.len() * 2);
        for c in s.chars() {
            let (new, _) = match used.cache.get(&c) {
                Some(hit) => *hit,
                None => {
                    let (mut gid, mut advance) = face.glyph(c);
                    let mut shown = c;
                    if gid == 0 {
                        (gid, advance) = face.glyph('?');
                        shown = '?';
                    }
                    let new = used.remapper.remap(gid);
                    used.glyphs
                        .entry(new)
                        .or_insert((shown, face.scale(advance)));
                    used.cache.insert(c, (new, advance));
                    (new, advance)
                }
            };
            out.extend_from_slice(&new.to_be_bytes());
        }
        out
    }

    /// `s` cut to `max` points at `size`, ending in an ellipsis when cut.
    pub fn fit(&self, style: Style, size: f32, s: &str, max: f32) -> String {
        if self.width(style, size, s) <= max {
            return s.to_owned();
        }
        let ellipsis = self.width(style, size, "…");
        let mut out = String::new();
        let mut used = 0.0;
        for c in s.chars() {
            let w = self.width(style, size, c.encode_utf8(&mut [0; 4]));
            if used + w + ellipsis > max {
                break;
            }
            used += w;
            out.push(c);
        }
        out.truncate(out.trim_end().len());
        out.push('…');
        out
    }

    /// `s` broken into lines of at most `max` points at `size`: at spaces,
    /// and inside a word only when the word alone is wider than a line.
    pub fn wrap(&self, style: Style, size: f32, s: &str, max: f32) -> Vec<String> {
        let mut lines = Vec::new();
        let mut line = String::new();
        for word in s.split(' ').filter(|w| !w.is_empty()) {
            let candidate = if line.is_empty() {
                word.to_owned()
            } else {
                format!("{line} {word}")
            };
            if self.width(style, size, &candidate) <= max {
                line = candidate;
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            // A word wider than a line is broken where it must be.
            let mut rest = word.to_owned();
            while self.width(style, size, &rest) > max {
                let mut head = String::new();
                for c in rest.chars() {
                    let mut next = head.clone();
                    next.push(c);
                    if self.width(style, size, &next) > max && !head.is_empty() {
                        break;
                    }
                    head = next;
                }
                rest = rest[head.len()..].to_owned();
                lines.push(head);
            }
            line = rest;
        }
        if !line.is_empty() || lines.is_empty() {
            lines.push(line);
        }
        lines
    }

    /// Write both fonts (those a page uses) into `pdf`: the Type 0 font at
    /// `ids[style][0]`, and four objects after it (descendant, descriptor,
    /// font file, ToUnicode).
    pub fn write(&self, pdf: &mut Pdf, ids: [[Ref; 5]; 2], level: u8) -> Result<(), FontError> {
        for style in [Style::Regular, Style::Bold] {
            let face = &self.faces[style.index()];
            let used = &self.used[style.index()];
            let [type0, cid, descriptor, file, unicode] = ids[style.index()];
            let subset = subsetter::subset(face.data, 0, &used.remapper)
                .map_err(|e| FontError::Subset(e.to_string()))?;
            // A subset's name carries a six-letter tag (PDF 32000-1,
            // 9.6.4): derived from the glyphs used, so two documents with
            // the same text name their subsets alike.
            let mut name = subset_tag(&used.glyphs).to_vec();
            name.push(b'+');
            name.extend_from_slice(face.postscript);
            let base = Name(&name);
            pdf.type0_font(type0)
                .base_font(base)
                .encoding_predefined(Name(b"Identity-H"))
                .descendant_font(cid)
                .to_unicode(unicode);
            let info = SystemInfo {
                registry: Str(b"Adobe"),
                ordering: Str(b"Identity"),
                supplement: 0,
            };
            let mut font = pdf.cid_font(cid);
            font.subtype(CidFontType::Type2)
                .base_font(base)
                .system_info(info)
                .font_descriptor(descriptor)
                .default_width(0.0)
                .cid_to_gid_map_predefined(Name(b"Identity"));
            {
                let mut widths = font.widths();
                for (gid, (_, w)) in &used.glyphs {
                    widths.consecutive(*gid, [*w]);
                }
            }
            font.finish();
            let [x0, y0, x1, y1] = face.bbox.map(|v| face.scale(v));
            pdf.font_descriptor(descriptor)
                .name(base)
                .flags(FontFlags::NON_SYMBOLIC)
                .bbox(Rect::new(x0, y0, x1, y1))
                .italic_angle(0.0)
                .ascent(face.scale(face.ascent))
                .descent(face.scale(face.descent))
                .cap_height(face.scale(face.cap_height))
                .stem_v(if style == Style::Bold { 120.0 } else { 80.0 })
                .font_file2(file);
            let deflated = miniz_oxide::deflate::compress_to_vec_zlib(&subset, level);
            pdf.stream(file, &deflated)
                .filter(Filter::FlateDecode)
                .pair(Name(b"Length1"), i32::try_from(subset.len()).unwrap_or(0));
            let mut cmap = UnicodeCmap::new(Name(b"Custom"), info);
            for (gid, (c, _)) in &used.glyphs {
                cmap.pair(*gid, *c);
            }
            pdf.cmap(unicode, &cmap.finish());
        }
        Ok(())
    }
}

/// Six capital letters from the glyphs a subset holds.
fn subset_tag(glyphs: &BTreeMap<u16, (char, f32)>) -> [u8; 6] {
    let mut hash: u32 = 2_166_136_261;
    for (gid, (c, _)) in glyphs {
        for b in gid
            .to_be_bytes()
            .into_iter()
            .chain((*c as u32).to_be_bytes())
        {
            hash = (hash ^ u32::from(b)).wrapping_mul(16_777_619);
        }
    }
    let mut tag = [b'A'; 6];
    for slot in &mut tag {
        *slot = b'A' + (hash % 26) as u8;
        hash /= 26;
    }
    tag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_measured_with_the_fonts_own_widths() {
        let fonts = Fonts::new().unwrap();
        // DejaVu Sans: 2048 units per em; "0" is 1303 units wide, a space 651.
        let zero = fonts.width(Style::Regular, 10.0, "0");
        assert!((zero - 1303.0 * 10.0 / 2048.0).abs() < 0.01, "{zero}");
        assert!(fonts.width(Style::Bold, 10.0, "0") > zero);
        assert!(fonts.width(Style::Regular, 10.0, "€£") > 0.0);
    }

    #[test]
    fn a_long_text_is_cut_with_an_ellipsis_within_its_width() {
        let fonts = Fonts::new().unwrap();
        let long = "71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6 and more words";
        let cut = fonts.fit(Style::Regular, 8.0, long, 100.0);
        assert!(cut.ends_with('…'), "{cut}");
        assert!(fonts.width(Style::Regular, 8.0, &cut) <= 100.0);
        assert_eq!(fonts.fit(Style::Regular, 8.0, "short", 100.0), "short");
    }

    #[test]
    fn wrapped_lines_each_fit_and_keep_every_word() {
        let fonts = Fonts::new().unwrap();
        let text = "Not tax advice: figures from on-chain data and the stated price sources; \
                    check them with a tax professional. 71WDyyCsZwyEYDV91Qrb212rdg6woCHYQhFnmZUBxiJ6";
        let lines = fonts.wrap(Style::Regular, 9.0, text, 120.0);
        assert!(lines.len() > 3);
        for line in &lines {
            assert!(fonts.width(Style::Regular, 9.0, line) <= 120.0, "{line}");
        }
        assert_eq!(lines.concat().replace(' ', ""), text.replace(' ', ""));
    }

    #[test]
    fn a_character_the_font_lacks_is_shown_as_a_question_mark() {
        let mut fonts = Fonts::new().unwrap();
        let question = fonts.encode(Style::Regular, "?");
        // U+F8FF (private use) is in no DejaVu font.
        assert_eq!(fonts.encode(Style::Regular, "\u{F8FF}"), question);
    }
}
