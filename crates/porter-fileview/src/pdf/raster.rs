//! A region of a PDF page drawn to grey pixels (hayro, pure Rust), for the
//! table model: only the region, at the size the model reads, so a table
//! costs the same whatever the page holds around it.

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_interpret::util::TransformExt as _;
use hayro::hayro_syntax::Pdf;
use hayro::kurbo::{Affine, Point};
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::vello_cpu::{self, Pixmap, RenderContext};
use hayro::{RenderCache, RenderSettings};

use super::layout::Region;

/// A drawn region: grey pixels row by row, and the transform from pixels
/// back to the layout's points (x right, y down from the page's origin).
pub(crate) struct Drawn {
    pub width: usize,
    pub height: usize,
    pub grey: Vec<u8>,
    to_layout: Affine,
}

impl Drawn {
    /// A pixel position in the layout's points.
    pub(crate) fn layout_point(&self, x: f32, y: f32) -> (f32, f32) {
        let p = self.to_layout * Point::new(f64::from(x), f64::from(y));
        // The layout's y is the PDF's, negated.
        (p.x as f32, -(p.y as f32))
    }
}

/// A parsed document for drawing, opened once per file on first need.
pub(crate) struct Canvas {
    pdf: Pdf,
}

impl Canvas {
    /// The document of `bytes`, or `None` when hayro cannot open it.
    pub(crate) fn open(bytes: &[u8]) -> Option<Self> {
        let pdf = Pdf::new(bytes.to_vec()).ok()?;
        Some(Self { pdf })
    }

    /// Page `index`'s `region` (layout points: y downwards, the PDF's y
    /// negated) drawn so that its longer side is `longer` pixels, on
    /// white; `None` for a page it does not have or an empty region.
    pub(crate) fn draw(&self, index: usize, region: Region, longer: usize) -> Option<Drawn> {
        let page = self.pdf.pages().get(index)?;
        let initial = page.initial_transform(true).to_kurbo();
        // The region's corners in device space (points, y down from the
        // top of the page as drawn, rotation applied).
        let corners = [
            (region[0], region[1]),
            (region[2], region[1]),
            (region[0], region[3]),
            (region[2], region[3]),
        ]
        .map(|(x, y)| initial * Point::new(f64::from(x), -f64::from(y)));
        let x0 = corners.iter().map(|p| p.x).fold(f64::INFINITY, f64::min);
        let y0 = corners.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
        let x1 = corners
            .iter()
            .map(|p| p.x)
            .fold(f64::NEG_INFINITY, f64::max);
        let y1 = corners
            .iter()
            .map(|p| p.y)
            .fold(f64::NEG_INFINITY, f64::max);
        let (w, h) = (x1 - x0, y1 - y0);
        if !(w.is_finite() && h.is_finite()) || w < 1.0 || h < 1.0 {
            return None;
        }
        let scale = longer as f64 / w.max(h);
        let width = ((w * scale).round() as usize).clamp(1, longer);
        let height = ((h * scale).round() as usize).clamp(1, longer);
        let transform = Affine::scale(scale) * Affine::translate((-x0, -y0)) * initial;
        let mut ctx = RenderContext::new(width as u16, height as u16);
        let cache = RenderCache::new();
        hayro::render_into(
            page,
            &cache,
            &InterpreterSettings::default(),
            &RenderSettings::default(),
            &mut ctx,
            transform,
        );
        ctx.flush();
        let mut pixmap = Pixmap::new(width as u16, height as u16);
        ctx.render_with(
            &mut pixmap,
            &mut vello_cpu::Resources::default(),
            vello_cpu::RasterizerSettings {
                target_init: vello_cpu::TargetInit::Clear(WHITE),
                ..Default::default()
            },
        );
        let grey = pixmap
            .data()
            .iter()
            .map(|p| {
                // On an opaque white ground the colours are straight.
                let luma = 299 * u32::from(p.r) + 587 * u32::from(p.g) + 114 * u32::from(p.b);
                (luma / 1000) as u8
            })
            .collect();
        Some(Drawn {
            width,
            height,
            grey,
            to_layout: transform.inverse(),
        })
    }
}
