//! The markers before the scan: frame, tables, restart interval, and the
//! scan header itself. Everything outside the supported subset is refused
//! here, before any pixel is decoded.

use crate::huffman::HuffmanTable;
use crate::types::Error;

/// `Component` is one colour component of the frame.
#[derive(Clone, Copy)]
pub(crate) struct Component {
    pub(crate) id: u8,
    pub(crate) horizontal: u8,
    pub(crate) vertical: u8,
    pub(crate) quant_table: u8,
}

/// `Frame` is what SOF0/SOF1 says.
pub(crate) struct Frame {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) components: Vec<Component>,
}

/// `ScanComponent` is a frame component as the scan codes it.
#[derive(Clone, Copy)]
pub(crate) struct ScanComponent {
    /// Index into `Frame::components`.
    pub(crate) frame_index: usize,
    pub(crate) dc_table: usize,
    pub(crate) ac_table: usize,
}

/// `Header` is everything read up to and including the scan header.
pub(crate) struct Header {
    pub(crate) frame: Frame,
    /// Quantisers in zigzag order.
    pub(crate) quant_tables: [Option<[u16; 64]>; 4],
    pub(crate) dc_tables: [Option<HuffmanTable>; 4],
    pub(crate) ac_tables: [Option<HuffmanTable>; 4],
    /// MCUs between restart markers; 0 when there are none.
    pub(crate) restart_interval: u32,
    /// In the scan's order, which is the order of blocks in an MCU.
    pub(crate) scan: Vec<ScanComponent>,
    /// Where the entropy-coded data starts.
    pub(crate) data_start: usize,
}

/// Reads markers from SOI to the end of the first scan header.
pub(crate) fn read(bytes: &[u8]) -> Result<Header, Error> {
    if bytes.get(..2) != Some(&[0xFF, 0xD8]) {
        return Err(Error::Corrupt("not a JPEG: no start-of-image marker"));
    }
    let mut position = 2;
    let mut frame = None;
    let mut quant_tables = [None; 4];
    let mut dc_tables = [None, None, None, None];
    let mut ac_tables = [None, None, None, None];
    let mut restart_interval = 0;
    let mut adobe_rgb = false;
    loop {
        if bytes.get(position) != Some(&0xFF) {
            return Err(Error::Corrupt("a marker was expected"));
        }
        while bytes.get(position) == Some(&0xFF) {
            position += 1;
        }
        let marker = *bytes
            .get(position)
            .ok_or(Error::Corrupt("the file ends before its scan"))?;
        position += 1;
        match marker {
            0xD8 | 0xD9 => return Err(Error::Corrupt("the file ends before its scan")),
            0x01 | 0xD0..=0xD7 => continue,
            _ => {}
        }
        let length = bytes
            .get(position..position + 2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
            .ok_or(Error::Corrupt("a marker segment is cut short"))?;
        let segment = length
            .checked_sub(2)
            .and_then(|body| bytes.get(position + 2..position + 2 + body))
            .ok_or(Error::Corrupt("a marker segment is cut short"))?;
        position += length;
        match marker {
            0xC0 | 0xC1 => {
                if frame.is_some() {
                    return Err(Error::Unsupported("more than one frame"));
                }
                frame = Some(read_frame(segment)?);
            }
            0xC2 | 0xC6 | 0xCA | 0xCE => return Err(Error::Unsupported("progressive JPEG")),
            0xC3 | 0xC7 | 0xCB | 0xCF => return Err(Error::Unsupported("lossless JPEG")),
            0xC5 => return Err(Error::Unsupported("hierarchical JPEG")),
            0xC9 | 0xCC | 0xCD => return Err(Error::Unsupported("arithmetic coding")),
            0xC4 => read_huffman_tables(segment, &mut dc_tables, &mut ac_tables)?,
            0xDB => read_quant_tables(segment, &mut quant_tables)?,
            0xDD => {
                let value = segment
                    .get(..2)
                    .ok_or(Error::Corrupt("a DRI segment is cut short"))?;
                restart_interval = u32::from(u16::from_be_bytes([value[0], value[1]]));
            }
            0xDC => return Err(Error::Unsupported("a DNL marker")),
            0xEE if segment.len() >= 12 && segment.starts_with(b"Adobe") && segment[11] == 0 => {
                adobe_rgb = true;
            }
            0xDA => {
                let frame = frame.ok_or(Error::Corrupt("a scan comes before its frame"))?;
                if frame.components.len() == 3 && (adobe_rgb || named_rgb(&frame)) {
                    return Err(Error::Unsupported("RGB rather than YCbCr"));
                }
                let scan = read_scan(segment, &frame)?;
                return Ok(Header {
                    frame,
                    quant_tables,
                    dc_tables,
                    ac_tables,
                    restart_interval,
                    scan,
                    data_start: position,
                });
            }
            _ => {}
        }
    }
}

/// Whether the components are named 'R', 'G', 'B', which marks an RGB JPEG
/// written without an Adobe segment.
fn named_rgb(frame: &Frame) -> bool {
    let ids: Vec<u8> = frame.components.iter().map(|c| c.id).collect();
    ids == b"RGB"
}

fn read_frame(segment: &[u8]) -> Result<Frame, Error> {
    let [precision, h0, h1, w0, w1, count, rest @ ..] = segment else {
        return Err(Error::Corrupt("a frame header is cut short"));
    };
    if *precision != 8 {
        return Err(Error::Unsupported("a sample precision other than 8 bits"));
    }
    let height = u32::from(u16::from_be_bytes([*h0, *h1]));
    let width = u32::from(u16::from_be_bytes([*w0, *w1]));
    if width == 0 || height == 0 {
        return Err(Error::Unsupported("a zero width or height"));
    }
    if !matches!(count, 1 | 3) {
        return Err(Error::Unsupported("a component count other than 1 or 3"));
    }
    let mut components = Vec::new();
    for chunk in rest.chunks_exact(3).take(usize::from(*count)) {
        let (horizontal, vertical) = (chunk[1] >> 4, chunk[1] & 15);
        if !(1..=4).contains(&horizontal) || !(1..=4).contains(&vertical) || chunk[2] > 3 {
            return Err(Error::Corrupt("a frame component is invalid"));
        }
        if components.iter().any(|c: &Component| c.id == chunk[0]) {
            return Err(Error::Corrupt("two frame components share an id"));
        }
        components.push(Component {
            id: chunk[0],
            horizontal,
            vertical,
            quant_table: chunk[2],
        });
    }
    if components.len() != usize::from(*count) {
        return Err(Error::Corrupt("a frame header is cut short"));
    }
    if components.len() == 3 {
        let luma = (components[0].horizontal, components[0].vertical);
        let chroma_plain = components[1..]
            .iter()
            .all(|c| c.horizontal == 1 && c.vertical == 1);
        if !chroma_plain || !matches!(luma, (1 | 2, 1 | 2)) {
            return Err(Error::Unsupported("this chroma subsampling"));
        }
    } else {
        // A single component is coded block by block whatever it says.
        components[0].horizontal = 1;
        components[0].vertical = 1;
    }
    Ok(Frame {
        width,
        height,
        components,
    })
}

fn read_quant_tables(mut segment: &[u8], tables: &mut [Option<[u16; 64]>; 4]) -> Result<(), Error> {
    while let [info, rest @ ..] = segment {
        let (precision, id) = (info >> 4, usize::from(info & 15));
        let size = match precision {
            0 => 64,
            1 => 128,
            _ => {
                return Err(Error::Corrupt(
                    "a quantisation table's precision is invalid",
                ));
            }
        };
        let values = rest
            .get(..size)
            .ok_or(Error::Corrupt("a DQT segment is cut short"))?;
        let table = tables
            .get_mut(id)
            .ok_or(Error::Corrupt("a quantisation table id is past 3"))?;
        *table = Some(std::array::from_fn(|k| {
            if precision == 0 {
                u16::from(values[k])
            } else {
                u16::from_be_bytes([values[2 * k], values[2 * k + 1]])
            }
        }));
        segment = &rest[size..];
    }
    Ok(())
}

fn read_huffman_tables(
    mut segment: &[u8],
    dc_tables: &mut [Option<HuffmanTable>; 4],
    ac_tables: &mut [Option<HuffmanTable>; 4],
) -> Result<(), Error> {
    while let [info, rest @ ..] = segment {
        let counts: [u8; 16] = rest
            .get(..16)
            .and_then(|c| c.try_into().ok())
            .ok_or(Error::Corrupt("a DHT segment is cut short"))?;
        let total: usize = counts.iter().map(|&c| usize::from(c)).sum();
        let symbols = rest
            .get(16..16 + total)
            .ok_or(Error::Corrupt("a DHT segment is cut short"))?;
        let table = HuffmanTable::new(&counts, symbols)?;
        let slot = match info >> 4 {
            0 => dc_tables.get_mut(usize::from(info & 15)),
            1 => ac_tables.get_mut(usize::from(info & 15)),
            _ => None,
        }
        .ok_or(Error::Corrupt("a Huffman table's class or id is invalid"))?;
        *slot = Some(table);
        segment = &rest[16 + total..];
    }
    Ok(())
}

fn read_scan(segment: &[u8], frame: &Frame) -> Result<Vec<ScanComponent>, Error> {
    let [count, rest @ ..] = segment else {
        return Err(Error::Corrupt("a scan header is cut short"));
    };
    let count = usize::from(*count);
    if count != frame.components.len() {
        return Err(Error::Unsupported("a scan that holds only some components"));
    }
    let entries = rest
        .get(..2 * count)
        .ok_or(Error::Corrupt("a scan header is cut short"))?;
    let mut scan: Vec<ScanComponent> = Vec::new();
    for entry in entries.chunks_exact(2) {
        let frame_index = frame
            .components
            .iter()
            .position(|c| c.id == entry[0])
            .ok_or(Error::Corrupt("a scan names a component not in the frame"))?;
        if scan.iter().any(|s| s.frame_index == frame_index) {
            return Err(Error::Corrupt("a scan names a component twice"));
        }
        scan.push(ScanComponent {
            frame_index,
            dc_table: usize::from(entry[1] >> 4),
            ac_table: usize::from(entry[1] & 15),
        });
    }
    let spectral = rest
        .get(2 * count..2 * count + 3)
        .ok_or(Error::Corrupt("a scan header is cut short"))?;
    if spectral != [0, 63, 0] {
        return Err(Error::Unsupported("a scan that is not sequential"));
    }
    Ok(scan)
}
