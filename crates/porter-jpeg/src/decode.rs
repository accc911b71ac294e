//! The scan, MCU row by MCU row, into the output image.
//!
//! Each component's blocks are transformed at the output scale into a
//! short ring of MCU rows: two for luma, three for chroma, because a row of
//! output is written one MCU row late, when the chroma rows just below it
//! (needed by the vertical filter) have been decoded too.

use crate::header::Header;
use crate::huffman::{BitReader, HuffmanTable};
use crate::idct::{self, ZIGZAG};
use crate::types::{Error, Image};

/// `Plane` is a component's ring of decoded MCU rows at the output scale.
struct Plane {
    horizontal: usize,
    vertical: usize,
    /// Samples in a line: every block of an MCU row.
    width: usize,
    /// Lines in an MCU row.
    rows: usize,
    slots: usize,
    samples: Vec<u8>,
    /// Quantisers in natural order, multiplied by the transform's factors.
    quant: [f32; 64],
    dc: HuffmanTable,
    ac: HuffmanTable,
}

impl Plane {
    fn line(&self, row: usize) -> &[u8] {
        let slot = (row / self.rows) % self.slots;
        let start = (slot * self.rows + row % self.rows) * self.width;
        &self.samples[start..start + self.width]
    }
}

/// `Geometry` is the sizes that follow from the frame and the scale.
pub(crate) struct Geometry {
    /// Samples per block side at the output scale: 1, 2, 4 or 8.
    pub(crate) block: usize,
    pub(crate) out_width: usize,
    pub(crate) out_height: usize,
    pub(crate) mcus_across: usize,
    pub(crate) mcus_down: usize,
    pub(crate) max_horizontal: usize,
    pub(crate) max_vertical: usize,
    /// Chroma samples across and down at the output scale.
    pub(crate) chroma_width: usize,
    pub(crate) chroma_height: usize,
}

impl Geometry {
    pub(crate) fn new(header: &Header, block: usize) -> Self {
        let frame = &header.frame;
        let max_horizontal = usize::from(frame.components[0].horizontal);
        let max_vertical = usize::from(frame.components[0].vertical);
        let (width, height) = (frame.width as usize, frame.height as usize);
        let scaled = |full: usize| (full * block).div_ceil(8);
        Self {
            block,
            out_width: scaled(width),
            out_height: scaled(height),
            mcus_across: width.div_ceil(8 * max_horizontal),
            mcus_down: height.div_ceil(8 * max_vertical),
            max_horizontal,
            max_vertical,
            chroma_width: scaled(width.div_ceil(max_horizontal)),
            chroma_height: scaled(height.div_ceil(max_vertical)),
        }
    }

    /// Blocks in the scan.
    pub(crate) fn blocks(&self, components: usize) -> usize {
        let luma = self.max_horizontal * self.max_vertical;
        self.mcus_across * self.mcus_down * (luma + components - 1)
    }
}

/// Decodes the scan that starts at `header.data_start` into an image.
pub(crate) fn decode(
    bytes: &[u8],
    header: &Header,
    geometry: &Geometry,
    cancelled: &dyn Fn() -> bool,
) -> Result<Image, Error> {
    let block = geometry.block;
    let mut planes = Vec::new();
    for component in &header.frame.components {
        let quantisers = header.quant_tables[usize::from(component.quant_table)].ok_or(
            Error::Corrupt("a component's quantisation table is missing"),
        )?;
        let horizontal = usize::from(component.horizontal);
        let vertical = usize::from(component.vertical);
        let width = geometry.mcus_across * horizontal * block;
        let rows = vertical * block;
        let slots = if planes.is_empty() { 2 } else { 3 };
        planes.push(Plane {
            horizontal,
            vertical,
            width,
            rows,
            slots,
            samples: vec![0; width * rows * slots],
            quant: {
                let mut quant = [0.0; 64];
                for (&natural, &quantiser) in ZIGZAG.iter().zip(&quantisers) {
                    let natural = usize::from(natural);
                    quant[natural] = f32::from(quantiser) * idct::factor(block, natural);
                }
                quant
            },
            // Placeholders until the scan's tables are known.
            dc: HuffmanTable::new(&[0; 16], &[])?,
            ac: HuffmanTable::new(&[0; 16], &[])?,
        });
    }
    for component in &header.scan {
        let plane = &mut planes[component.frame_index];
        plane.dc = header
            .dc_tables
            .get(component.dc_table)
            .and_then(Option::clone)
            .ok_or(Error::Corrupt("a scan's DC Huffman table is missing"))?;
        plane.ac = header
            .ac_tables
            .get(component.ac_table)
            .and_then(Option::clone)
            .ok_or(Error::Corrupt("a scan's AC Huffman table is missing"))?;
    }
    let order: Vec<usize> = header.scan.iter().map(|c| c.frame_index).collect();
    let channels = if planes.len() == 1 { 1 } else { 3 };
    let mut image = Image {
        width: geometry.out_width as u32,
        height: geometry.out_height as u32,
        channels: channels as u8,
        data: vec![0; geometry.out_width * geometry.out_height * channels],
    };
    let mut reader = BitReader::new(bytes, header.data_start);
    let mut predictions = [0i32; 3];
    let mut coefficients = [0i32; 64];
    let interval = header.restart_interval;
    let mut until_restart = interval;
    let mut next_restart = 0u8;
    let mut output = Output::new(geometry);
    for mcu_row in 0..geometry.mcus_down {
        if cancelled() {
            return Err(Error::Cancelled);
        }
        let bases: Vec<usize> = planes
            .iter()
            .map(|p| (mcu_row % p.slots) * p.rows * p.width)
            .collect();
        for mcu_column in 0..geometry.mcus_across {
            if interval > 0 {
                if until_restart == 0 {
                    reader.restart(next_restart)?;
                    next_restart = (next_restart + 1) & 7;
                    predictions = [0; 3];
                    until_restart = interval;
                }
                until_restart -= 1;
            }
            for &index in &order {
                let plane = &mut planes[index];
                for y in 0..plane.vertical {
                    for x in 0..plane.horizontal {
                        let column = (mcu_column * plane.horizontal + x) * block;
                        let start = bases[index] + y * block * plane.width + column;
                        decode_block(
                            &mut reader,
                            plane,
                            &mut predictions[index],
                            &mut coefficients,
                            block,
                            start,
                        )?;
                    }
                }
            }
        }
        if reader.overran() {
            return Err(Error::Corrupt("the data ends before the last block"));
        }
        if mcu_row > 0 {
            output.write_mcu_row(mcu_row - 1, &planes, &mut image.data);
        }
    }
    // A file cut after its last block but before its end marker is as cut
    // short as any other: jpeg-decoder refuses it too.
    if !reader.end_marker_follows() {
        return Err(Error::Corrupt("the file ends before its end marker"));
    }
    output.write_mcu_row(geometry.mcus_down - 1, &planes, &mut image.data);
    Ok(image)
}

/// Decodes one block and writes its samples at `start` in the plane. The
/// coefficients are gathered in zigzag order.
#[inline]
fn decode_block(
    reader: &mut BitReader,
    plane: &mut Plane,
    prediction: &mut i32,
    coefficients: &mut [i32; 64],
    block: usize,
    start: usize,
) -> Result<(), Error> {
    let stride = plane.width;
    let out = plane
        .samples
        .get_mut(start..)
        .ok_or(Error::Corrupt("a block lies outside its plane"))?;
    let (difference, last) = if block == 1 {
        // Only the DC is needed: the AC values are read past.
        reader.block(&plane.dc, &plane.ac, |_, _| {})?
    } else {
        reader.block(&plane.dc, &plane.ac, |k, value| {
            coefficients[k & 63] = value;
        })?
    };
    *prediction = prediction.wrapping_add(difference);
    let dc = *prediction as f32 * plane.quant[0];
    if last == 0 || block == 1 {
        idct::fill(dc, block, out, stride);
        return Ok(());
    }
    coefficients[0] = *prediction;
    match block {
        8 => idct::eight(coefficients, &plane.quant, out, stride),
        4 => idct::four(coefficients, &plane.quant, out, stride),
        _ => idct::two(coefficients, &plane.quant, out, stride),
    }
    *coefficients = [0; 64];
    Ok(())
}

/// `Output` turns decoded MCU rows into rows of the image: chroma
/// upsampled to luma size by the centred triangle filter (3/4 of the
/// nearest chroma sample, 1/4 of the next one, across and down), then
/// YCbCr converted to RGB.
struct Output {
    width: usize,
    height: usize,
    block: usize,
    max_horizontal: usize,
    max_vertical: usize,
    chroma_width: usize,
    chroma_height: usize,
    /// A chroma line after the vertical filter, times 4 (times 16 once the
    /// horizontal one is applied too).
    blended: Vec<u16>,
    upsampled: [Vec<u8>; 2],
}

impl Output {
    fn new(geometry: &Geometry) -> Self {
        Self {
            width: geometry.out_width,
            height: geometry.out_height,
            block: geometry.block,
            max_horizontal: geometry.max_horizontal,
            max_vertical: geometry.max_vertical,
            chroma_width: geometry.chroma_width,
            chroma_height: geometry.chroma_height,
            blended: Vec::new(),
            upsampled: [vec![0; geometry.out_width], vec![0; geometry.out_width]],
        }
    }

    /// Writes the image rows of MCU row `mcu_row`; the MCU row below it
    /// must be decoded already when there is one.
    fn write_mcu_row(&mut self, mcu_row: usize, planes: &[Plane], image: &mut [u8]) {
        let rows = self.max_vertical * self.block;
        let first = mcu_row * rows;
        let last = (first + rows).min(self.height);
        let channels = if planes.len() == 1 { 1 } else { 3 };
        let row_bytes = self.width * channels;
        for y in first..last {
            let Some(out) = image.get_mut(y * row_bytes..(y + 1) * row_bytes) else {
                return;
            };
            let luma = &planes[0].line(y)[..self.width];
            if channels == 1 {
                out.copy_from_slice(luma);
                continue;
            }
            if self.max_horizontal == 1 && self.max_vertical == 1 {
                convert(luma, planes[1].line(y), planes[2].line(y), out);
                continue;
            }
            for (index, plane) in planes[1..].iter().enumerate() {
                self.upsample(y, plane, index);
            }
            convert(luma, &self.upsampled[0], &self.upsampled[1], out);
        }
    }

    /// Fills `upsampled[index]` with the chroma of image row `y`.
    fn upsample(&mut self, y: usize, plane: &Plane, index: usize) {
        let columns = self.chroma_width;
        let blended = &mut self.blended;
        blended.resize(columns, 0);
        if self.max_vertical == 2 {
            let row = y / 2;
            let other = if y.is_multiple_of(2) {
                row.saturating_sub(1)
            } else {
                (row + 1).min(self.chroma_height - 1)
            };
            let near = &plane.line(row)[..columns];
            let far = &plane.line(other)[..columns];
            for ((value, &n), &f) in blended.iter_mut().zip(near).zip(far) {
                *value = 3 * u16::from(n) + u16::from(f);
            }
        } else {
            let line = &plane.line(y)[..columns];
            for (value, &n) in blended.iter_mut().zip(line) {
                *value = 4 * u16::from(n);
            }
        }
        let out = &mut self.upsampled[index];
        if self.max_horizontal == 2 {
            // Each pair of neighbouring chroma samples gives the luma pixel
            // right of the first one's centre and the one left of the
            // second one's; the first and last pixels have one neighbour.
            let edge = |value: u16| ((4 * value + 8) >> 4) as u8;
            out[0] = edge(blended[0]);
            for (pair, two) in out[1..].chunks_exact_mut(2).zip(blended.windows(2)) {
                pair[0] = ((3 * two[0] + two[1] + 8) >> 4) as u8;
                pair[1] = ((3 * two[1] + two[0] + 8) >> 4) as u8;
            }
            if out.len() >= 2 * columns {
                out[2 * columns - 1] = edge(blended[columns - 1]);
            }
        } else {
            for (pixel, &value) in out.iter_mut().zip(blended.iter()) {
                *pixel = ((value + 2) >> 2) as u8;
            }
        }
    }
}

/// YCbCr to RGB by the JFIF equations in 14-bit fixed point, rounded and
/// clamped. Pixels go in groups of `LANES`, each channel computed for the
/// whole group before they are interleaved, so that the arithmetic runs on
/// vectors.
fn convert<'a>(luma: &'a [u8], cb: &'a [u8], cr: &'a [u8], out: &mut [u8]) {
    const LANES: usize = 16;
    let groups = out.len() / (3 * LANES);
    let (group_out, rest_out) = out.split_at_mut(groups * 3 * LANES);
    let split = groups * LANES;
    for (((pixels, y), cb), cr) in group_out
        .chunks_exact_mut(3 * LANES)
        .zip(luma.chunks_exact(LANES))
        .zip(cb.chunks_exact(LANES))
        .zip(cr.chunks_exact(LANES))
    {
        let mut rgb = [[0u8; LANES]; 3];
        for i in 0..LANES {
            [rgb[0][i], rgb[1][i], rgb[2][i]] = ycc_to_rgb(y[i], cb[i], cr[i]);
        }
        for (i, pixel) in pixels.chunks_exact_mut(3).enumerate() {
            pixel.copy_from_slice(&[rgb[0][i], rgb[1][i], rgb[2][i]]);
        }
    }
    let rest = |plane: &'a [u8]| plane.get(split..).unwrap_or(&[]);
    let (luma, cb, cr) = (rest(luma), rest(cb), rest(cr));
    for (((pixel, &y), &cb), &cr) in rest_out.chunks_exact_mut(3).zip(luma).zip(cb).zip(cr) {
        pixel.copy_from_slice(&ycc_to_rgb(y, cb, cr));
    }
}

/// One pixel's YCbCr as RGB.
#[inline]
fn ycc_to_rgb(y: u8, cb: u8, cr: u8) -> [u8; 3] {
    // 14-bit constants, so that each product is of two 16-bit numbers.
    const R_CR: i16 = 22_970; // 1.402
    const G_CB: i16 = 5_638; // 0.344136
    const G_CR: i16 = 11_700; // 0.714136
    const B_CB: i16 = 29_032; // 1.772
    let y = (i32::from(y) << 14) + (1 << 13);
    let cb = i16::from(cb) - 128;
    let cr = i16::from(cr) - 128;
    let product = |a: i16, b: i16| i32::from(a) * i32::from(b);
    [
        ((y + product(R_CR, cr)) >> 14).clamp(0, 255) as u8,
        ((y - product(G_CB, cb) - product(G_CR, cr)) >> 14).clamp(0, 255) as u8,
        ((y + product(B_CB, cb)) >> 14).clamp(0, 255) as u8,
    ]
}
