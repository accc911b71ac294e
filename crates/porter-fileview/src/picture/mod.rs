//! Images: returned as they are when they fit, else decoded, turned upright,
//! scaled and re-encoded until they fit.
//!
//! An image is returned as its own bytes only when every client can show it
//! as it is: one frame, upright, PNG/JPEG/GIF/WebP, within the byte and edge
//! limits. It is still decoded once, because a client that cannot decode an
//! image may fail the whole request. Anything else is decoded (the first
//! frame or page), turned upright from its EXIF orientation, scaled so its
//! long edge fits, and encoded as JPEG (a lossy, opaque source) or PNG,
//! shrinking further until the bytes fit.
//!
//! Sizes are read from the header before any pixel is decoded, so an image
//! over the decode limit costs nothing but its header. JPEGs are decoded
//! with DCT-domain scaling (1/2, 1/4, 1/8), so a camera photo is never
//! decoded at full size only to be thrown away.

mod clean;
mod container;
mod encode;
mod format;
mod jpeg;
mod other;
mod pixels;

use image::metadata::Orientation;

use self::container::Sequence;
use self::encode::Encoding;
pub(crate) use self::format::Format;
use self::jpeg::Jpeg;
use self::other::Other;
use self::pixels::{fit_edge, swaps_sides};
use crate::bounds::{Cancel, Failure};
use crate::content::ImageRecord;
use crate::describe::human_size;
use crate::ocr::lines::{Looked, look};
use crate::options::Options;

/// An image ready to return.
pub(crate) struct Picture {
    /// The image bytes: the file's own, or the re-encoded picture.
    pub bytes: Vec<u8>,
    /// What the image was and what it became.
    pub record: ImageRecord,
    /// One text block for the model: kind, sizes, and what was done.
    pub note: String,
    /// When asked for: the picture as shown (upright, scaled to fit, a
    /// JPEG passed on as it is decoded at a DCT scale of at least
    /// [`GREY_EDGE_PX`]) in grey, looked at for lines of text while the
    /// picture is encoded.
    pub looked: Option<Looked>,
}

/// `GREY_EDGE_PX` is the long edge a JPEG passed on as it is is decoded at
/// (at least; at the smallest DCT scale that gives it) for its grey copy:
/// body text of a page photographed or scanned stays five pixels tall or
/// more there.
const GREY_EDGE_PX: u32 = 1024;

/// `Source` is an image whose header has been read, by the decoder its
/// format needs.
enum Source<'a> {
    /// A JPEG, decoded with DCT-domain scaling (`porter-jpeg`, or
    /// `jpeg-decoder` for what that leaves).
    Jpeg(Box<Jpeg<'a>>),
    /// Any other format, read by the `image` crate.
    Other(Other<'a>),
}

/// `Facts` is what the header says, before any pixel is decoded.
struct Facts {
    /// Width as stored.
    width: u32,
    /// Height as stored.
    height: u32,
    /// What the EXIF data says; upright when absent or broken.
    orientation: Orientation,
    /// Whether further frames or pages follow the first.
    sequence: Sequence,
    /// Whether the file's bytes can be passed on when everything else fits.
    passable: bool,
    /// Whether the source is lossy, so JPEG is the fitting re-encoding.
    lossy: bool,
    /// Whether it is a CMYK JPEG (said in the note when converted).
    cmyk: bool,
}

/// Turns an image file's bytes into an image a client can show, within the
/// limits of `options`: as it is when it fits, else decoded, turned upright,
/// scaled and re-encoded. Fails with the reason when it cannot be decoded,
/// is over the decode limit or cannot be made small enough.
pub(crate) fn picture(
    bytes: &[u8],
    format: Format,
    name: &str,
    options: &Options,
    cancel: &Cancel,
    want_look: bool,
) -> Result<Picture, Failure> {
    let (source, facts) = open(bytes, format, options, cancel)?;

    let fits = facts.passable
        && facts.sequence == Sequence::Single
        && facts.orientation == Orientation::NoTransforms
        && bytes.len() <= options.image_bytes
        && facts.width.max(facts.height) <= options.image_edge_px;
    let (target_width, target_height) = fit_edge(facts.width, facts.height, options.image_edge_px);

    // What of the file may be passed on: its picture without what rides
    // along, or nothing, and then it is re-encoded.
    let kept = if fits {
        clean::passable(bytes, format)
    } else {
        None
    };
    // Even a file passed on as it is gets decoded once, to prove it decodes.
    let decoded = match (source, kept) {
        (Source::Jpeg(jpeg), Some(kept)) => {
            let looked = if want_look {
                let (w, h) = fit_edge(facts.width, facts.height, GREY_EDGE_PX);
                Some(look(jpeg.decode_at_least(w, h, cancel)?.grey()))
            } else {
                jpeg.validate(cancel)?;
                None
            };
            return Ok(as_is(bytes.len(), kept, format, name, &facts).with_look(looked));
        }
        (Source::Jpeg(jpeg), None) => jpeg.decode_at_least(target_width, target_height, cancel)?,
        (Source::Other(other), kept) => {
            let decoded = other.decode(format)?;
            if let Some(kept) = kept {
                let looked = want_look.then(|| look(decoded.grey()));
                return Ok(as_is(bytes.len(), kept, format, name, &facts).with_look(looked));
            }
            decoded
        }
    };
    cancel.check()?;

    let scaled = decoded.into_size(target_width, target_height)?;
    cancel.check()?;
    let upright = scaled.oriented(facts.orientation);
    let encoding = if facts.lossy && upright.is_opaque() {
        Encoding::Jpeg
    } else {
        Encoding::Png
    };
    // The grey copy is looked at for text on a second thread while the
    // picture is encoded: a worker has the cores, and both take tens of
    // milliseconds for a camera's photo.
    // (Looked at after the encoding, on this thread, when no thread can be
    // started.)
    let (fitted, looked) = std::thread::scope(|scope| {
        let looking = want_look
            .then(|| {
                std::thread::Builder::new()
                    .name("fileview-look".to_owned())
                    .spawn_scoped(scope, || look(upright.grey()))
                    .ok()
            })
            .flatten();
        let fitted = encode::fit(&upright, encoding, options.image_bytes, cancel);
        let looked = match looking {
            Some(handle) => handle.join().ok(),
            None => want_look.then(|| look(upright.grey())),
        };
        (fitted, looked)
    });
    let fitted = fitted?;

    let upright_size = if swaps_sides(facts.orientation) {
        (facts.height, facts.width)
    } else {
        (facts.width, facts.height)
    };
    let record = ImageRecord {
        original_width: facts.width,
        original_height: facts.height,
        width: fitted.width,
        height: fitted.height,
        turned_upright: facts.orientation != Orientation::NoTransforms,
        scaled: (fitted.width, fitted.height) != upright_size,
        reencoded: true,
        mime_type: fitted.encoding.mime_type().to_owned(),
        bytes: fitted.bytes.len() as u64,
    };
    let note = converted_note(name, format, bytes.len(), &facts, &fitted, &record, options);
    Ok(Picture {
        bytes: fitted.bytes,
        record,
        note,
        looked,
    })
}

/// The picture upright in grey, decoded (at a JPEG's least DCT scale that
/// gives it) and scaled so that its long edge is `edge` pixels, never
/// larger than it is: what OCR reads, at the resolution its text needs.
#[cfg_attr(not(feature = "ocr"), allow(dead_code))]
pub(crate) fn grey_at(
    bytes: &[u8],
    format: Format,
    edge: u32,
    options: &Options,
    cancel: &Cancel,
) -> Result<image::GrayImage, Failure> {
    let (source, facts) = open(bytes, format, options, cancel)?;
    let (width, height) = fit_edge(facts.width, facts.height, edge.max(1));
    let decoded = match source {
        Source::Jpeg(jpeg) => jpeg.decode_at_least(width, height, cancel)?,
        Source::Other(other) => other.decode(format)?,
    };
    cancel.check()?;
    let grey = decoded.grey_pixels().into_size(width, height)?;
    Ok(grey.oriented(facts.orientation).grey())
}

/// Reads an image's header with the decoder its format needs, and what it
/// says, refusing one past the decode limit before any pixel is decoded.
fn open<'a>(
    bytes: &'a [u8],
    format: Format,
    options: &Options,
    cancel: &Cancel,
) -> Result<(Source<'a>, Facts), Failure> {
    cancel.check()?;
    let max_pixels = options.image_decode_pixels;
    // PNG and GIF declare their size at a fixed place: refuse a huge one
    // before any decoder is built.
    let declared = match format {
        Format::Png => container::png_size(bytes),
        Format::Gif => container::gif_size(bytes),
        _ => None,
    };
    if let Some((width, height)) = declared {
        check_pixels(width, height, max_pixels)?;
    }
    let source = match format {
        Format::Jpeg => Source::Jpeg(Box::new(Jpeg::open(bytes, max_pixels)?)),
        _ => Source::Other(Other::open(bytes, format, max_pixels, cancel)?),
    };
    let facts = match &source {
        Source::Jpeg(jpeg) => {
            let (width, height) = jpeg.size();
            Facts {
                width,
                height,
                orientation: jpeg.orientation,
                sequence: Sequence::Single,
                passable: jpeg.passable(),
                lossy: true,
                cmyk: jpeg.is_cmyk(),
            }
        }
        Source::Other(other) => {
            let (width, height) = other.size();
            Facts {
                width,
                height,
                orientation: other.orientation,
                sequence: other.sequence,
                passable: format.shown_as_is() && !other.animated,
                lossy: other.lossy,
                cmyk: false,
            }
        }
    };
    check_pixels(facts.width, facts.height, max_pixels)?;
    cancel.check()?;
    Ok((source, facts))
}

/// The picture made of the file's own bytes, which fit every limit, less
/// any metadata [`clean::passable`] cut out of them.
fn as_is(
    file_bytes: usize,
    kept: std::borrow::Cow<'_, [u8]>,
    format: Format,
    name: &str,
    facts: &Facts,
) -> Picture {
    let cut = matches!(kept, std::borrow::Cow::Owned(_));
    let note = format!(
        "{}{} It is shown as it is{}.",
        prefix(name),
        described(format, facts, file_bytes),
        if cut {
            ", without the metadata it carried (text, colour profile, EXIF)"
        } else {
            ""
        }
    );
    let bytes = kept.into_owned();
    Picture {
        record: ImageRecord {
            original_width: facts.width,
            original_height: facts.height,
            width: facts.width,
            height: facts.height,
            turned_upright: false,
            scaled: false,
            reencoded: cut,
            mime_type: format.mime_type().to_owned(),
            bytes: bytes.len() as u64,
        },
        note,
        bytes,
        looked: None,
    }
}

impl Picture {
    fn with_look(self, looked: Option<Looked>) -> Self {
        Self { looked, ..self }
    }
}

/// The note for a converted picture: what it was, and each thing done to it.
fn converted_note(
    name: &str,
    format: Format,
    file_bytes: usize,
    facts: &Facts,
    fitted: &encode::Fitted,
    record: &ImageRecord,
    options: &Options,
) -> String {
    let mut done = Vec::new();
    if !format.shown_as_is() {
        done.push(format!("converted from {}", format.label()));
    } else if facts.cmyk {
        done.push("converted from CMYK".to_owned());
    }
    match facts.sequence {
        Sequence::Animation => done.push("reduced to the first frame of its animation".to_owned()),
        Sequence::Pages => done.push("reduced to its first page".to_owned()),
        Sequence::Single => {}
    }
    if record.turned_upright {
        done.push("turned upright from its EXIF orientation".to_owned());
    }
    if record.scaled {
        done.push(if fitted.shrunk_for_bytes {
            format!(
                "scaled to {}×{} to fit in {}",
                fitted.width,
                fitted.height,
                human_size(options.image_bytes as u64)
            )
        } else {
            format!("scaled to {}×{}", fitted.width, fitted.height)
        });
    }
    done.push(format!(
        "re-encoded as {} of {}",
        fitted.encoding.label(),
        human_size(fitted.bytes.len() as u64)
    ));
    let mut note = format!(
        "{}{} It was {}.",
        prefix(name),
        described(format, facts, file_bytes),
        joined(&done)
    );
    if record.scaled {
        note.push_str(" Small text may no longer be legible at this size.");
    }
    note
}

/// "name: " before a note, or nothing for a nameless file.
fn prefix(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!("{name}: ")
    }
}

/// The sentence that says what the file is: kind, pixel size, file size.
/// A picture its EXIF orientation turns a quarter is given both ways, as
/// stored and as shown upright, because the model sees the upright one.
fn described(format: Format, facts: &Facts, file_bytes: usize) -> String {
    let kind = match facts.sequence {
        Sequence::Animation => format!("animated {} image", format.label()),
        Sequence::Pages => format!("multi-page {} image", format.label()),
        Sequence::Single => format!("{} image", format.label()),
    };
    let size = if swaps_sides(facts.orientation) {
        format!(
            "{}×{} pixels as stored, {}×{} as shown upright",
            facts.width, facts.height, facts.height, facts.width
        )
    } else {
        format!("{}×{} pixels", facts.width, facts.height)
    };
    format!("{kind}, {size}, {}.", human_size(file_bytes as u64))
}

/// Clauses joined as English lists them: "a", "a and b", "a, b and c".
fn joined(clauses: &[String]) -> String {
    match clauses {
        [] => String::new(),
        [only] => only.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Refuses an image of more than `max_pixels` pixels, before its pixels
/// are allocated.
fn check_pixels(width: u32, height: u32, max_pixels: u64) -> Result<(), Failure> {
    let pixels = u64::from(width) * u64::from(height);
    if pixels > max_pixels {
        return Err(Failure::unreadable(format!(
            "it is {width}×{height} pixels, more than the {} megapixels decoded to scale",
            megapixels(max_pixels)
        )));
    }
    if pixels == 0 {
        return Err(Failure::unreadable(format!(
            "it declares a size of {width}×{height} pixels, which holds no picture"
        )));
    }
    Ok(())
}

/// A pixel count in megapixels, without a needless fraction ("50", "12.5").
fn megapixels(pixels: u64) -> String {
    if pixels.is_multiple_of(1_000_000) {
        (pixels / 1_000_000).to_string()
    } else {
        let tenths = (pixels + 50_000) / 100_000;
        format!("{}.{}", tenths / 10, tenths % 10)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;
    use std::time::{Duration, Instant};

    use image::codecs::gif::GifEncoder;
    use image::codecs::jpeg::JpegEncoder;
    use image::codecs::webp::WebPEncoder;
    use image::{
        DynamicImage, Frame, GrayImage, ImageFormat, Luma, Rgb, RgbImage, Rgba, RgbaImage,
    };

    use super::*;

    /// The pixel colours the fixtures are painted with.
    const RED: [u8; 3] = [230, 20, 20];
    const GREEN: [u8; 3] = [20, 200, 20];
    const GREY: [u8; 3] = [128, 128, 128];

    fn view(bytes: &[u8], format: Format) -> Result<Picture, Failure> {
        picture(
            bytes,
            format,
            "picture",
            &Options::default(),
            &Cancel::new(),
            false,
        )
    }

    fn view_with(bytes: &[u8], format: Format, options: &Options) -> Result<Picture, Failure> {
        picture(bytes, format, "picture", options, &Cancel::new(), false)
    }

    fn encoded(image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        image
            .write_to(&mut out, format)
            .expect("an in-memory image encodes");
        out.into_inner()
    }

    fn jpeg_of(image: &RgbImage) -> Vec<u8> {
        let mut out = Vec::new();
        JpegEncoder::new_with_quality(&mut out, 92)
            .encode_image(image)
            .expect("an in-memory image encodes as JPEG");
        out
    }

    /// A TIFF-headed EXIF block whose IFD0 holds one entry: orientation.
    fn exif_block(orientation: u16) -> Vec<u8> {
        let mut tiff = b"II*\0".to_vec();
        tiff.extend(8u32.to_le_bytes());
        tiff.extend(1u16.to_le_bytes());
        tiff.extend(0x0112u16.to_le_bytes());
        tiff.extend(3u16.to_le_bytes());
        tiff.extend(1u32.to_le_bytes());
        tiff.extend(orientation.to_le_bytes());
        tiff.extend([0, 0]);
        tiff.extend(0u32.to_le_bytes());
        tiff
    }

    /// `jpeg` with an APP1 segment carrying `payload` right after its SOI.
    fn with_app1(jpeg: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut segment = b"Exif\0\0".to_vec();
        segment.extend(payload);
        let length = u16::try_from(segment.len() + 2).expect("a test segment is small");
        let mut out = jpeg[..2].to_vec();
        out.extend([0xFF, 0xE1]);
        out.extend(length.to_be_bytes());
        out.extend(segment);
        out.extend(&jpeg[2..]);
        out
    }

    /// A PNG chunk with its length and CRC.
    fn png_chunk(kind: [u8; 4], data: &[u8]) -> Vec<u8> {
        let mut crc = flate2::Crc::new();
        crc.update(&kind);
        crc.update(data);
        let mut out = u32::try_from(data.len())
            .expect("a test chunk is small")
            .to_be_bytes()
            .to_vec();
        out.extend(kind);
        out.extend(data);
        out.extend(crc.sum().to_be_bytes());
        out
    }

    /// An uncompressed RGB TIFF of `pages` identical pages, with an
    /// orientation tag when given.
    fn tiff_of(image: &RgbImage, orientation: Option<u16>, pages: u32) -> Vec<u8> {
        let pixels = image.as_raw();
        let count = |n: usize| u32::try_from(n).expect("a test TIFF is small");
        let mut out = b"II*\0".to_vec();
        let bits_at = 8 + count(pixels.len());
        let first_ifd = bits_at + 6;
        out.extend(first_ifd.to_le_bytes());
        out.extend(pixels);
        out.extend([8, 0, 8, 0, 8, 0]);
        let mut entries: Vec<(u16, u16, u32)> = vec![
            (256, 4, image.width()),
            (257, 4, image.height()),
            (258, 3, bits_at),
            (259, 3, 1),
            (262, 3, 2),
            (273, 4, 8),
            (277, 3, 3),
            (278, 4, image.height()),
            (279, 4, count(pixels.len())),
        ];
        if let Some(orientation) = orientation {
            entries.push((274, 3, u32::from(orientation)));
        }
        entries.sort_unstable();
        let ifd_len = 2 + 12 * count(entries.len()) + 4;
        for page in 0..pages {
            out.extend(
                u16::try_from(entries.len())
                    .expect("few entries")
                    .to_le_bytes(),
            );
            for &(tag, kind, value) in &entries {
                out.extend(tag.to_le_bytes());
                out.extend(kind.to_le_bytes());
                out.extend(if tag == 258 { 3u32 } else { 1 }.to_le_bytes());
                if kind == 3 && tag != 258 {
                    out.extend(u16::try_from(value).expect("a short").to_le_bytes());
                    out.extend([0, 0]);
                } else {
                    out.extend(value.to_le_bytes());
                }
            }
            let next = if page + 1 < pages {
                first_ifd + (page + 1) * ifd_len
            } else {
                0
            };
            out.extend(next.to_le_bytes());
        }
        out
    }

    /// A grey picture with a red block at `red` and a green block at
    /// `green`, each a corner given as (right, bottom).
    fn cornered(width: u32, height: u32, red: (bool, bool), green: (bool, bool)) -> RgbImage {
        let block = 12;
        let inside = |x: u32, y: u32, (right, bottom): (bool, bool)| {
            let in_x = if right { x >= width - block } else { x < block };
            let in_y = if bottom {
                y >= height - block
            } else {
                y < block
            };
            in_x && in_y
        };
        RgbImage::from_fn(width, height, |x, y| {
            if inside(x, y, red) {
                Rgb(RED)
            } else if inside(x, y, green) {
                Rgb(GREEN)
            } else {
                Rgb(GREY)
            }
        })
    }

    fn decoded(bytes: &[u8]) -> DynamicImage {
        image::load_from_memory(bytes).expect("the returned bytes decode")
    }

    fn close(pixel: [u8; 3], expected: [u8; 3]) -> bool {
        pixel
            .iter()
            .zip(expected)
            .all(|(&got, want)| got.abs_diff(want) <= 40)
    }

    /// Noise no encoder can squeeze much: a worst case for byte limits.
    fn noise(width: u32, height: u32, alpha: bool) -> DynamicImage {
        let mut state = 0x2545_F491_u32;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state.to_le_bytes()
        };
        if alpha {
            DynamicImage::ImageRgba8(RgbaImage::from_fn(width, height, |_, _| {
                let [r, g, b, a] = next();
                Rgba([r, g, b, a / 2 + 64])
            }))
        } else {
            DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |_, _| {
                let [r, g, b, _] = next();
                Rgb([r, g, b])
            }))
        }
    }

    #[test]
    fn each_format_is_passed_as_it_is_or_converted_as_the_spec_says() {
        let small = DynamicImage::ImageRgb8(cornered(40, 30, (false, false), (true, false)));
        let mut webp = Vec::new();
        WebPEncoder::new_lossless(&mut webp)
            .encode(small.as_bytes(), 40, 30, image::ExtendedColorType::Rgb8)
            .expect("a lossless WebP encodes");
        let cases: [(&str, Vec<u8>, Format, &str, bool); 6] = [
            (
                "png",
                encoded(&small, ImageFormat::Png),
                Format::Png,
                "image/png",
                false,
            ),
            (
                "jpeg",
                jpeg_of(&small.to_rgb8()),
                Format::Jpeg,
                "image/jpeg",
                false,
            ),
            (
                "gif",
                encoded(&small, ImageFormat::Gif),
                Format::Gif,
                "image/gif",
                false,
            ),
            ("webp", webp, Format::Webp, "image/webp", false),
            (
                "bmp",
                encoded(&small, ImageFormat::Bmp),
                Format::Bmp,
                "image/png",
                true,
            ),
            (
                "tiff",
                encoded(&small, ImageFormat::Tiff),
                Format::Tiff,
                "image/png",
                true,
            ),
        ];
        for (label, bytes, format, mime, converted) in cases {
            let picture = view(&bytes, format).unwrap_or_else(|e| panic!("{label}: {e:?}"));
            assert_eq!(picture.record.mime_type, mime, "{label}");
            assert_eq!(picture.record.reencoded, converted, "{label}");
            assert_eq!(
                (picture.record.width, picture.record.height),
                (40, 30),
                "{label}"
            );
            assert_eq!(picture.record.bytes, picture.bytes.len() as u64, "{label}");
            if converted {
                let from = format!("converted from {}", format.label());
                assert!(picture.note.contains(&from), "{label}: {}", picture.note);
                let out = decoded(&picture.bytes).to_rgb8();
                assert!(close(out.get_pixel(2, 2).0, RED), "{label}");
            } else {
                assert_eq!(picture.bytes, bytes, "{label}");
                assert!(picture.note.contains("shown as it is"), "{label}");
            }
            assert!(picture.note.starts_with("picture: "), "{label}");
            assert!(
                picture.note.contains("40×30 pixels"),
                "{label}: {}",
                picture.note
            );
        }
    }

    #[test]
    fn every_exif_orientation_of_a_jpeg_comes_out_upright() {
        // (orientation, stored corner of red, stored corner of green): the
        // corners that land at the upright top-left and top-right.
        let cases = [
            (1, (false, false), (true, false)),
            (2, (true, false), (false, false)),
            (3, (true, true), (false, true)),
            (4, (false, true), (true, true)),
            (5, (false, false), (false, true)),
            (6, (false, true), (false, false)),
            (7, (true, true), (true, false)),
            (8, (true, false), (true, true)),
        ];
        let (width, height) = (64, 40);
        for (orientation, red, green) in cases {
            let jpeg = jpeg_of(&cornered(width, height, red, green));
            let bytes = with_app1(&jpeg, &exif_block(orientation));
            let picture = view(&bytes, Format::Jpeg).expect("a small JPEG is shown");
            let out = decoded(&picture.bytes).to_rgb8();
            let expected = if orientation >= 5 {
                (height, width)
            } else {
                (width, height)
            };
            assert_eq!(out.dimensions(), expected, "orientation {orientation}");
            let right = out.width() - 5;
            assert!(
                close(out.get_pixel(4, 4).0, RED),
                "orientation {orientation}: top-left"
            );
            assert!(
                close(out.get_pixel(right, 4).0, GREEN),
                "orientation {orientation}: top-right"
            );
            assert_eq!(
                picture.record.turned_upright,
                orientation != 1,
                "orientation {orientation}"
            );
            // Upright ones are passed on less their EXIF; the others re-encoded.
            assert!(picture.record.reencoded, "orientation {orientation}");
            assert_eq!(
                picture
                    .note
                    .contains("shown as it is, without the metadata"),
                orientation == 1,
                "orientation {orientation}: {}",
                picture.note
            );
            if orientation != 1 {
                assert!(picture.note.contains("turned upright"), "{}", picture.note);
                assert!(!picture.note.contains("legible"), "{}", picture.note);
            }
        }
    }

    #[test]
    fn a_broken_or_meaningless_exif_orientation_means_upright() {
        let jpeg = jpeg_of(&cornered(32, 24, (false, false), (true, false)));
        let mut cut_short = exif_block(6);
        cut_short.truncate(12);
        let mut offset_past_the_end = exif_block(6);
        offset_past_the_end[4..8].copy_from_slice(&9000u32.to_le_bytes());
        let payloads: [(&str, Vec<u8>); 5] = [
            ("zero", exif_block(0)),
            ("nine", exif_block(9)),
            ("cut short", cut_short),
            ("offset past the end", offset_past_the_end),
            ("not TIFF at all", b"hello, world".to_vec()),
        ];
        for (label, payload) in payloads {
            let bytes = with_app1(&jpeg, &payload);
            let picture = view(&bytes, Format::Jpeg).unwrap_or_else(|e| panic!("{label}: {e:?}"));
            assert!(!picture.record.turned_upright, "{label}");
            assert_eq!(
                picture.bytes, jpeg,
                "{label}: passed as it is, less its APP1"
            );
        }
    }

    #[test]
    fn png_exif_and_webp_exif_and_tiff_orientation_are_all_honoured() {
        let stored = cornered(48, 32, (false, true), (false, false));
        // PNG: an eXIf chunk with orientation 6, placed before the image data.
        let png = encoded(&DynamicImage::ImageRgb8(stored.clone()), ImageFormat::Png);
        let ihdr_end = 8 + 25;
        let mut png_rotated = png[..ihdr_end].to_vec();
        png_rotated.extend(png_chunk(*b"eXIf", &exif_block(6)));
        png_rotated.extend(&png[ihdr_end..]);

        // WebP: the lossless bitstream wrapped in an extended file with an
        // EXIF chunk.
        let mut simple = Vec::new();
        WebPEncoder::new_lossless(&mut simple)
            .encode(stored.as_raw(), 48, 32, image::ExtendedColorType::Rgb8)
            .expect("a lossless WebP encodes");
        let mut body = b"WEBP".to_vec();
        body.extend(b"VP8X");
        body.extend(10u32.to_le_bytes());
        body.extend([0x08, 0, 0, 0]);
        body.extend(&47u32.to_le_bytes()[..3]);
        body.extend(&31u32.to_le_bytes()[..3]);
        body.extend(&simple[12..]);
        let exif = exif_block(6);
        body.extend(b"EXIF");
        body.extend(u32::try_from(exif.len()).expect("small").to_le_bytes());
        body.extend(&exif);
        let mut webp_rotated = b"RIFF".to_vec();
        webp_rotated.extend(u32::try_from(body.len()).expect("small").to_le_bytes());
        webp_rotated.extend(body);

        let tiff_rotated = tiff_of(&stored, Some(6), 1);

        for (label, bytes, format) in [
            ("png", png_rotated, Format::Png),
            ("webp", webp_rotated, Format::Webp),
            ("tiff", tiff_rotated, Format::Tiff),
        ] {
            let picture = view(&bytes, format).unwrap_or_else(|e| panic!("{label}: {e:?}"));
            let out = decoded(&picture.bytes).to_rgb8();
            assert_eq!(out.dimensions(), (32, 48), "{label}");
            assert!(close(out.get_pixel(4, 4).0, RED), "{label}");
            assert!(close(out.get_pixel(27, 4).0, GREEN), "{label}");
            assert!(picture.record.turned_upright, "{label}");
            assert_eq!(
                picture.record.mime_type, "image/png",
                "{label}: lossless stays PNG"
            );
        }
    }

    #[test]
    fn a_multi_page_tiff_shows_its_first_page_and_says_so() {
        let page = cornered(30, 20, (false, false), (true, false));
        let picture = view(&tiff_of(&page, None, 3), Format::Tiff).expect("a TIFF is shown");
        assert!(picture.note.contains("multi-page TIFF"), "{}", picture.note);
        assert!(picture.note.contains("first page"), "{}", picture.note);
        assert!(
            picture.note.contains("converted from TIFF"),
            "{}",
            picture.note
        );
        assert_eq!((picture.record.width, picture.record.height), (30, 20));
    }

    #[test]
    fn the_edge_limit_passes_2048_and_scales_2049() {
        for (width, passed, expected) in [(2048, true, (2048, 8)), (2049, false, (2048, 8))] {
            let image = DynamicImage::ImageLuma8(GrayImage::from_fn(width, 8, |x, _| {
                Luma([(x % 251) as u8])
            }));
            let bytes = encoded(&image, ImageFormat::Png);
            let picture = view(&bytes, Format::Png).expect("a thin PNG is shown");
            assert_eq!(picture.bytes == bytes, passed, "width {width}");
            assert_eq!((picture.record.width, picture.record.height), expected);
            assert_eq!(picture.record.scaled, !passed, "width {width}");
            assert_eq!(
                picture.note.contains("legible"),
                !passed,
                "{}",
                picture.note
            );
        }
    }

    #[test]
    fn a_small_byte_limit_shrinks_the_picture_until_it_fits() {
        let bytes = encoded(&noise(400, 300, true), ImageFormat::Png);
        let options = Options {
            image_bytes: 60_000,
            ..Options::default()
        };
        let picture = view_with(&bytes, Format::Png, &options).expect("noise can shrink");
        assert!(picture.bytes.len() <= 60_000);
        assert!(picture.record.scaled);
        assert!(picture.record.width < 400 && picture.record.height < 300);
        assert_eq!(picture.record.mime_type, "image/png", "alpha keeps it PNG");
        assert!(picture.note.contains("to fit in"), "{}", picture.note);
    }

    #[test]
    fn a_byte_limit_no_picture_can_meet_is_a_reason_not_a_picture() {
        let bytes = encoded(&noise(64, 64, false), ImageFormat::Png);
        let options = Options {
            image_bytes: 10,
            ..Options::default()
        };
        match view_with(&bytes, Format::Png, &options) {
            Err(Failure::Unreadable(reason)) => {
                assert!(
                    reason.contains("could not be made small enough"),
                    "{reason}"
                );
            }
            other => panic!("expected a reason, got {:?}", other.map(|p| p.note)),
        }
    }

    #[test]
    fn an_opaque_png_too_big_for_the_limit_becomes_a_jpeg() {
        let bytes = encoded(&noise(600, 400, false), ImageFormat::Png);
        assert!(bytes.len() > 600_000, "noise does not compress");
        let options = Options {
            image_bytes: 400_000,
            ..Options::default()
        };
        let picture = view_with(&bytes, Format::Png, &options).expect("a JPEG of noise fits");
        assert_eq!(picture.record.mime_type, "image/jpeg");
        assert!(picture.bytes.len() <= 400_000);
        assert_eq!((picture.record.width, picture.record.height), (600, 400));
        assert!(
            picture.note.contains("re-encoded as JPEG"),
            "{}",
            picture.note
        );
    }

    #[test]
    fn a_transparent_png_stays_a_png_with_its_alpha() {
        let image = RgbaImage::from_fn(3000, 100, |x, _| {
            if x < 1500 {
                Rgba([0, 0, 255, 0])
            } else {
                Rgba([255, 0, 0, 255])
            }
        });
        let bytes = encoded(&DynamicImage::ImageRgba8(image), ImageFormat::Png);
        let picture = view(&bytes, Format::Png).expect("a wide PNG is scaled");
        assert_eq!(picture.record.mime_type, "image/png");
        assert_eq!((picture.record.width, picture.record.height), (2048, 68));
        let out = decoded(&picture.bytes).to_rgba8();
        assert_eq!(
            out.get_pixel(10, 10).0[3],
            0,
            "transparent stays transparent"
        );
        assert_eq!(out.get_pixel(2000, 10).0, [255, 0, 0, 255]);
    }

    #[test]
    fn an_animated_gif_becomes_its_first_frame_as_a_png() {
        let mut bytes = Vec::new();
        {
            let mut encoder = GifEncoder::new(&mut bytes);
            for colour in [Rgba([255, 0, 0, 255]), Rgba([0, 0, 255, 255])] {
                encoder
                    .encode_frame(Frame::new(RgbaImage::from_pixel(20, 10, colour)))
                    .expect("a GIF frame encodes");
            }
        }
        let picture = view(&bytes, Format::Gif).expect("an animated GIF is shown");
        assert_eq!(picture.record.mime_type, "image/png");
        assert_eq!((picture.record.width, picture.record.height), (20, 10));
        assert_eq!(
            decoded(&picture.bytes).to_rgba8().get_pixel(5, 5).0,
            [255, 0, 0, 255]
        );
        assert!(picture.note.contains("animated GIF"), "{}", picture.note);
        assert!(picture.note.contains("first frame"), "{}", picture.note);
        assert!(!picture.record.scaled);
    }

    #[test]
    fn a_gif_of_100000_frames_is_answered_without_walking_them_all() {
        let mut bytes = b"GIF89a".to_vec();
        bytes.extend([1, 0, 1, 0, 0x80, 0, 0]);
        bytes.extend([0, 0, 0, 255, 255, 255]);
        for _ in 0..100_000 {
            bytes.extend([0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0]);
            bytes.extend([2, 2, 0x44, 0x01, 0]);
        }
        bytes.push(0x3B);
        let started = Instant::now();
        let picture = view(&bytes, Format::Gif).expect("a many-frame GIF is shown");
        assert!(
            started.elapsed() < Duration::from_millis(500),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(picture.record.mime_type, "image/png");
        assert!(picture.note.contains("first frame"), "{}", picture.note);
    }

    #[test]
    fn a_60000_by_60000_png_header_is_refused_before_any_pixel() {
        let mut ihdr = 60_000u32.to_be_bytes().to_vec();
        ihdr.extend(60_000u32.to_be_bytes());
        ihdr.extend([8, 6, 0, 0, 0]);
        let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
        bytes.extend(png_chunk(*b"IHDR", &ihdr));
        bytes.extend(png_chunk(*b"IDAT", &[0x78, 0x9C, 0x03, 0, 0, 0, 0, 1]));
        bytes.extend(png_chunk(*b"IEND", &[]));
        let started = Instant::now();
        let result = view(&bytes, Format::Png);
        assert!(
            started.elapsed() < Duration::from_millis(50),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            result.err(),
            Some(Failure::unreadable(
                "it is 60000×60000 pixels, more than the 50 megapixels decoded to scale"
            ))
        );
    }

    #[test]
    fn huge_declared_sizes_in_other_formats_are_refused_fast() {
        let mut bmp = b"BM".to_vec();
        bmp.extend(70u32.to_le_bytes());
        bmp.extend([0; 4]);
        bmp.extend(54u32.to_le_bytes());
        bmp.extend(40u32.to_le_bytes());
        bmp.extend(30_000i32.to_le_bytes());
        bmp.extend(30_000i32.to_le_bytes());
        bmp.extend(1u16.to_le_bytes());
        bmp.extend(24u16.to_le_bytes());
        bmp.extend([0; 24]);
        bmp.extend([0; 16]);

        let mut gif = b"GIF89a".to_vec();
        gif.extend([0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0]);
        gif.extend([0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0, 0x3B]);

        // A small screen whose first frame claims 65535×65535.
        let mut gif_frame = b"GIF89a".to_vec();
        gif_frame.extend([1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255]);
        gif_frame.extend([
            0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 2, 2, 0x44, 0x01, 0,
        ]);
        gif_frame.push(0x3B);

        let mut webp = b"RIFF".to_vec();
        webp.extend(30u32.to_le_bytes());
        webp.extend(b"WEBPVP8X");
        webp.extend(10u32.to_le_bytes());
        webp.extend([0, 0, 0, 0]);
        webp.extend(&16_383u32.to_le_bytes()[..3]);
        webp.extend(&16_383u32.to_le_bytes()[..3]);
        webp.extend(b"VP8L");
        webp.extend(5u32.to_le_bytes());
        webp.extend([0x2F, 0xFF, 0xFF, 0xFF, 0x0F, 0]);

        for (label, bytes, format) in [
            ("bmp", bmp, Format::Bmp),
            ("gif", gif, Format::Gif),
            ("gif frame", gif_frame, Format::Gif),
            ("webp", webp, Format::Webp),
        ] {
            let started = Instant::now();
            let result = view(&bytes, format);
            assert!(started.elapsed() < Duration::from_millis(200), "{label}");
            match result {
                Err(Failure::Unreadable(reason)) => {
                    assert!(!reason.is_empty(), "{label}");
                }
                other => panic!(
                    "{label}: expected a reason, got {:?}",
                    other.map(|p| p.note)
                ),
            }
        }
    }

    #[test]
    fn a_truncated_jpeg_is_unreadable_with_a_reason() {
        let jpeg = jpeg_of(&RgbImage::from_fn(64, 64, |x, y| {
            Rgb([x as u8, y as u8, 7])
        }));
        for cut in [jpeg.len() / 2, jpeg.len() - 2] {
            match view(&jpeg[..cut], Format::Jpeg) {
                Err(Failure::Unreadable(reason)) => assert!(reason.contains("JPEG"), "{reason}"),
                other => panic!(
                    "cut at {cut}: expected a reason, got {:?}",
                    other.map(|p| p.note)
                ),
            }
        }
    }

    #[test]
    fn damaged_files_of_every_format_give_a_reason_and_never_panic() {
        let small = DynamicImage::ImageRgb8(cornered(40, 30, (false, false), (true, false)));
        for (format, image_format) in [
            (Format::Png, ImageFormat::Png),
            (Format::Gif, ImageFormat::Gif),
            (Format::Bmp, ImageFormat::Bmp),
            (Format::Tiff, ImageFormat::Tiff),
            (Format::Jpeg, ImageFormat::Jpeg),
        ] {
            let bytes = encoded(&small, image_format);
            for cut in [0, 5, 20, bytes.len() / 2] {
                let result = view(&bytes[..cut], format);
                assert!(
                    matches!(result, Err(Failure::Unreadable(_))),
                    "{format:?} cut at {cut}"
                );
            }
        }
    }

    #[test]
    fn a_cmyk_jpeg_is_converted_to_rgb() {
        let cyan: Vec<u8> = [255u8, 0, 0, 0].repeat(32 * 16);
        let mut bytes = Vec::new();
        jpeg_encoder::Encoder::new(&mut bytes, 90)
            .encode(&cyan, 32, 16, jpeg_encoder::ColorType::Cmyk)
            .expect("a CMYK JPEG encodes");
        let picture = view(&bytes, Format::Jpeg).expect("a CMYK JPEG is shown");
        assert_eq!(picture.record.mime_type, "image/jpeg");
        assert!(picture.record.reencoded);
        assert!(
            picture.note.contains("converted from CMYK"),
            "{}",
            picture.note
        );
        assert!(close(
            decoded(&picture.bytes).to_rgb8().get_pixel(8, 8).0,
            [0, 255, 255]
        ));
    }

    #[test]
    fn a_big_photo_is_decoded_at_a_dct_scale_and_scaled_to_the_edge() {
        let photo = RgbImage::from_fn(4100, 300, |x, y| Rgb([(x / 17) as u8, (y / 2) as u8, 90]));
        let bytes = jpeg_of(&photo);
        let picture = view(&bytes, Format::Jpeg).expect("a wide photo is scaled");
        assert_eq!((picture.record.width, picture.record.height), (2048, 150));
        assert_eq!(picture.record.mime_type, "image/jpeg");
        assert!(
            picture.note.contains("scaled to 2048×150"),
            "{}",
            picture.note
        );
        assert!(picture.note.contains("Small text may no longer be legible"));
    }

    #[test]
    fn a_raised_cancel_flag_stops_the_view() {
        let cancel = Cancel::new();
        cancel.cancel();
        let bytes = encoded(&noise(8, 8, false), ImageFormat::Png);
        let result = picture(
            &bytes,
            Format::Png,
            "x",
            &Options::default(),
            &cancel,
            false,
        );
        assert_eq!(result.err(), Some(Failure::Cancelled));
    }

    #[test]
    fn the_container_walkers_find_frames_pages_and_codecs() {
        let one_frame = encoded(&noise(4, 4, false), ImageFormat::Gif);
        assert_eq!(
            container::gif_sequence(&one_frame, &Cancel::new()),
            Ok(Sequence::Single)
        );
        assert_eq!(
            container::gif_sequence(b"GIF89a", &Cancel::new()),
            Ok(Sequence::Single)
        );
        let tiff = encoded(&noise(4, 4, false), ImageFormat::Tiff);
        assert_eq!(container::tiff_sequence(&tiff), Sequence::Single);
        assert_eq!(
            container::tiff_sequence(b"II*\0\xff\xff\xff\xff"),
            Sequence::Single
        );
        let png = encoded(&noise(4, 4, false), ImageFormat::Png);
        assert_eq!(container::png_size(&png), Some((4, 4)));
        assert_eq!(container::png_sequence(&png), Sequence::Single);
        assert_eq!(container::png_size(b"\x89PNG"), None);
        let facts = container::webp_facts(b"RIFF\0\0\0\0WEBPVP8 \x04\0\0\0abcd");
        assert!(facts.lossy && !facts.animated);
    }

    #[test]
    fn megapixels_read_without_needless_fractions() {
        for (pixels, text) in [(50_000_000, "50"), (12_500_000, "12.5"), (1_234_567, "1.2")] {
            assert_eq!(megapixels(pixels), text);
        }
    }

    /// The PNG chunk types in `bytes`, in order.
    fn png_chunks(bytes: &[u8]) -> Vec<String> {
        let mut at = 8;
        let mut kinds = Vec::new();
        while at + 8 <= bytes.len() {
            let length = u32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
            kinds.push(String::from_utf8_lossy(&bytes[at + 4..at + 8]).into_owned());
            at += 12 + length as usize;
        }
        kinds
    }

    #[test]
    fn text_icc_and_exif_chunks_never_ride_along_in_a_png_passed_on() {
        let small = DynamicImage::ImageRgb8(cornered(40, 30, (false, false), (true, false)));
        let png = encoded(&small, ImageFormat::Png);
        let ihdr_end = 8 + 25;
        // A zTXt whose deflated megabyte of zeros is a small bomb; an iTXt,
        // a tEXt, an iCCP profile and an eXIf with more than an orientation.
        let mut zeros = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut zeros, &vec![0u8; 1 << 20]).expect("deflates");
        let bomb = zeros.finish().expect("deflates");
        let mut ztxt = b"Comment\0\0".to_vec();
        ztxt.extend(&bomb);
        let mut iccp = b"icc\0\0".to_vec();
        iccp.extend(&bomb);
        let mut with_metadata = png[..ihdr_end].to_vec();
        with_metadata.extend(png_chunk(*b"zTXt", &ztxt));
        with_metadata.extend(png_chunk(*b"iTXt", b"Where\0\0\0\0\0at home"));
        with_metadata.extend(png_chunk(*b"tEXt", b"Author\0someone"));
        with_metadata.extend(png_chunk(*b"iCCP", &iccp));
        with_metadata.extend(png_chunk(*b"eXIf", &exif_block(1)));
        with_metadata.extend(&png[ihdr_end..]);

        let picture = view(&with_metadata, Format::Png).expect("the PNG is shown");
        let kinds = png_chunks(&picture.bytes);
        for carried in ["zTXt", "iTXt", "tEXt", "iCCP", "eXIf"] {
            assert!(
                !kinds.contains(&carried.to_owned()),
                "{carried} in {kinds:?}"
            );
        }
        assert_ne!(picture.bytes, with_metadata);
        assert!(
            picture.record.reencoded,
            "the returned bytes differ from the file's"
        );
        assert_eq!(picture.record.bytes, picture.bytes.len() as u64);
        let out = decoded(&picture.bytes).to_rgb8();
        assert_eq!(out.dimensions(), (40, 30));
        assert!(close(out.get_pixel(2, 2).0, RED));
    }

    #[test]
    fn exif_and_comments_never_ride_along_in_a_jpeg_passed_on() {
        let jpeg = jpeg_of(&cornered(32, 24, (false, false), (true, false)));
        // Upright EXIF (so nothing needs turning) with more in it, and a comment.
        let mut exif = exif_block(1);
        exif.extend(b"GPS 51.5N 0.1W");
        let mut bytes = with_app1(&jpeg, &exif);
        let comment = b"\xFF\xFE\x00\x0Dsecret note";
        bytes.splice(2..2, comment.iter().copied());
        let picture = view(&bytes, Format::Jpeg).expect("the JPEG is shown");
        assert_eq!(
            picture.bytes, jpeg,
            "the picture without its APP1 and comment"
        );
        assert!(picture.record.reencoded);
        assert!(!picture.record.turned_upright);
    }

    /// The answer for an image whose own bytes may not be passed on (its
    /// structure is off, or common decoders refuse it): a re-encoded
    /// picture that decodes, or a reason; never the file's own bytes.
    fn never_passed_on(bytes: &[u8], format: Format, label: &str) {
        match view(bytes, format) {
            Ok(picture) => {
                assert_ne!(picture.bytes, bytes, "{label}: the file's own bytes");
                assert!(picture.record.reencoded, "{label}");
                decoded(&picture.bytes);
            }
            Err(Failure::Unreadable(reason)) => assert!(!reason.is_empty(), "{label}"),
            Err(Failure::Cancelled) => panic!("{label}: not cancelled"),
        }
    }

    #[test]
    fn a_gif_whose_frame_lies_outside_its_screen_is_never_passed_on() {
        let small = DynamicImage::ImageRgb8(cornered(40, 30, (false, false), (true, false)));
        let gif = encoded(&small, ImageFormat::Gif);
        let at = gif
            .windows(9)
            .position(|w| w == [0x2C, 0, 0, 0, 0, 40, 0, 30, 0])
            .expect("the image descriptor");
        let mut far = gif.clone();
        far[at + 1..at + 5].copy_from_slice(&[0xE8, 0xFD, 0xE8, 0xFD]);
        never_passed_on(&far, Format::Gif, "gif");
    }

    #[test]
    fn a_jpeg_whose_dc_table_holds_an_impossible_symbol_is_never_passed_on() {
        // libjpeg and zune-jpeg refuse a DC table with a symbol over 15 (a
        // difference of more than 15 bits) even when the scan never uses it;
        // jpeg-decoder only fails if the scan does.
        let jpeg = jpeg_of(&cornered(32, 24, (false, false), (true, false)));
        image::load_from_memory(&jpeg).expect("the untouched JPEG decodes");
        let dht = jpeg
            .windows(5)
            .position(|w| w[..2] == [0xFF, 0xC4] && w[4] == 0x00)
            .expect("a DC table for the first component");
        let counts: usize = jpeg[dht + 5..dht + 21]
            .iter()
            .map(|&n| usize::from(n))
            .sum();
        let mut bad = jpeg.clone();
        // The last symbol codes the longest differences, which a small
        // smooth picture never has.
        bad[dht + 21 + counts - 1] = 0xFD;
        assert!(
            image::load_from_memory(&bad).is_err(),
            "zune-jpeg refuses the table"
        );
        never_passed_on(&bad, Format::Jpeg, "dc symbol");
    }

    #[test]
    fn a_jpeg_fuzzing_found_with_a_broken_table_is_never_passed_on() {
        // Found by fuzz/fuzz_targets/view_jpeg.rs: its EXIF is broken (so it
        // counts as upright) and its DC table holds 0xFD.
        never_passed_on(
            include_bytes!("testdata/fuzz-view_jpeg-44c37b33.jpg"),
            Format::Jpeg,
            "fuzz",
        );
    }

    #[test]
    fn a_png_whose_zlib_checksum_is_wrong_is_never_passed_on() {
        // zlib (libpng, Pillow) refuses image data whose Adler-32 is wrong;
        // the png crate does not look at it. The chunk's own CRC is right.
        let small = DynamicImage::ImageRgb8(cornered(40, 30, (false, false), (true, false)));
        let png = encoded(&small, ImageFormat::Png);
        let at = png
            .windows(4)
            .position(|w| w == b"IDAT")
            .expect("an IDAT chunk");
        let length = usize::try_from(u32::from_be_bytes(
            png[at - 4..at].try_into().expect("four bytes"),
        ))
        .expect("a small chunk");
        let mut bad = png.clone();
        bad[at + 4 + length - 1] ^= 0xFF;
        let mut crc = flate2::Crc::new();
        crc.update(&bad[at..at + 4 + length]);
        bad[at + 4 + length..at + 8 + length].copy_from_slice(&crc.sum().to_be_bytes());
        image::load_from_memory(&bad).expect("the image crate reads it all the same");
        never_passed_on(&bad, Format::Png, "adler-32");
        let fine = view(&png, Format::Png).expect("the untouched PNG is shown");
        assert_eq!(fine.bytes, png, "a sound PNG is still passed on as it is");
    }

    #[test]
    fn a_webp_whose_sizes_lie_is_never_passed_on() {
        let tiny = DynamicImage::ImageRgb8(RgbImage::from_pixel(1, 1, Rgb(RED)));
        let mut webp = Vec::new();
        WebPEncoder::new_lossless(&mut webp)
            .encode(tiny.as_bytes(), 1, 1, image::ExtendedColorType::Rgb8)
            .expect("a lossless WebP encodes");
        let mut riff_lies = webp.clone();
        riff_lies[4..8].copy_from_slice(&0x7FFF_FFF0u32.to_le_bytes());
        let mut chunk_lies = webp.clone();
        chunk_lies[16..20].copy_from_slice(&0x7FFF_FFF0u32.to_le_bytes());
        let mut trailing = webp.clone();
        trailing.extend(b"PK\x03\x04 a zip rides along");
        for (label, bytes) in [
            ("riff", riff_lies),
            ("chunk", chunk_lies),
            ("trailing", trailing),
        ] {
            never_passed_on(&bytes, Format::Webp, label);
        }
        let clean = view(&webp, Format::Webp).expect("a clean WebP is shown");
        assert_eq!(clean.bytes, webp, "a clean WebP is passed on as it is");
    }

    #[test]
    fn the_decode_budget_is_in_bytes_so_a_16_bit_picture_gets_fewer_pixels() {
        // 800×800 is 640,000 pixels, under a limit of 1,000,000; as 8-bit
        // RGBA that is 2.56 MB, as 16-bit RGBA 5.12 MB: over the 4 MB (4
        // bytes a pixel of the limit) a decode may take.
        let options = Options {
            image_decode_pixels: 1_000_000,
            ..Options::default()
        };
        let eight = DynamicImage::ImageRgba8(RgbaImage::from_pixel(800, 800, Rgba([9, 9, 9, 255])));
        let sixteen = DynamicImage::ImageRgba16(image::ImageBuffer::from_pixel(
            800,
            800,
            Rgba([60_000u16, 10, 10, 65_535]),
        ));
        let shown = view_with(&encoded(&eight, ImageFormat::Png), Format::Png, &options);
        assert!(shown.is_ok(), "8-bit RGBA fits: {:?}", shown.err());
        match view_with(&encoded(&sixteen, ImageFormat::Png), Format::Png, &options) {
            Err(Failure::Unreadable(reason)) => {
                assert!(
                    reason.contains("5.1 MB") || reason.contains("4.9 MiB"),
                    "{reason}"
                );
            }
            Ok(_) => panic!("a 16-bit RGBA picture over the byte budget was decoded"),
            Err(Failure::Cancelled) => panic!("not cancelled"),
        }
    }
}
