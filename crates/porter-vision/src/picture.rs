//! The picture a model reads, and how it becomes the model's input.

use crate::error::RunError;

/// A picture of a table: 8-bit grey pixels, row by row, `width` a row.
#[derive(Debug, Clone, Copy)]
pub struct Picture<'a> {
    pub width: usize,
    pub height: usize,
    pub grey: &'a [u8],
}

/// `MEAN` and `STD` are the per-channel normalisation the model was trained
/// with (in the channel order its trainer read images in); a grey pixel is
/// the same value in all three channels.
const MEAN: [f32; 3] = [0.485, 0.456, 0.406];
const STD: [f32; 3] = [0.229, 0.224, 0.225];

impl Picture<'_> {
    /// Checks that the pixels match the size.
    pub(crate) fn check(&self) -> Result<(), RunError> {
        if self.width == 0
            || self.height == 0
            || self.width.checked_mul(self.height) != Some(self.grey.len())
        {
            return Err(RunError::BadPicture {
                width: self.width,
                height: self.height,
                pixels: self.grey.len(),
            });
        }
        Ok(())
    }

    /// The model's input: the picture scaled so its longer side is `side`
    /// pixels, normalised, in the top-left corner of a `side`×`side` square
    /// of zeros, as three planes (channel, row, column). Whatever the
    /// picture's size, the input is the same size.
    pub(crate) fn input(&self, side: usize) -> Vec<f32> {
        let scale = side as f32 / self.width.max(self.height) as f32;
        let w = ((self.width as f32 * scale) as usize).clamp(1, side);
        let h = ((self.height as f32 * scale) as usize).clamp(1, side);
        let scaled = self.scaled(w, h);
        let mut out = vec![0f32; 3 * side * side];
        for (c, plane) in out.chunks_exact_mut(side * side).enumerate() {
            for y in 0..h {
                for x in 0..w {
                    let v = scaled[y * w + x] / 255.0;
                    plane[y * side + x] = (v - MEAN[c]) / STD[c];
                }
            }
        }
        out
    }

    /// The picture at `w`×`h`: each output pixel the mean of the source
    /// pixels it covers when shrinking (so thin rules and strokes stay
    /// visible as grey), sampled between its four nearest when growing.
    fn scaled(&self, w: usize, h: usize) -> Vec<f32> {
        let sx = self.width as f32 / w as f32;
        let sy = self.height as f32 / h as f32;
        let at = |x: usize, y: usize| f32::from(self.grey[y * self.width + x]);
        let mut out = Vec::with_capacity(w * h);
        for y in 0..h {
            for x in 0..w {
                if sx >= 1.0 && sy >= 1.0 {
                    let (x0, x1) = span(x, sx, self.width);
                    let (y0, y1) = span(y, sy, self.height);
                    let mut sum = 0f32;
                    for yy in y0..y1 {
                        for xx in x0..x1 {
                            sum += at(xx, yy);
                        }
                    }
                    out.push(sum / ((x1 - x0) * (y1 - y0)) as f32);
                } else {
                    let fx = ((x as f32 + 0.5) * sx - 0.5).clamp(0.0, (self.width - 1) as f32);
                    let fy = ((y as f32 + 0.5) * sy - 0.5).clamp(0.0, (self.height - 1) as f32);
                    let (x0, y0) = (fx as usize, fy as usize);
                    let (x1, y1) = ((x0 + 1).min(self.width - 1), (y0 + 1).min(self.height - 1));
                    let (ax, ay) = (fx - x0 as f32, fy - y0 as f32);
                    let top = at(x0, y0) * (1.0 - ax) + at(x1, y0) * ax;
                    let bottom = at(x0, y1) * (1.0 - ax) + at(x1, y1) * ax;
                    out.push(top * (1.0 - ay) + bottom * ay);
                }
            }
        }
        out
    }
}

/// The source pixels output pixel `i` covers at scale `s` (at least one).
fn span(i: usize, s: f32, limit: usize) -> (usize, usize) {
    let from = ((i as f32 * s) as usize).min(limit - 1);
    let to = (((i + 1) as f32 * s).ceil() as usize).clamp(from + 1, limit);
    (from, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_picture_fills_the_width_and_the_rest_is_zero() {
        let grey = vec![255u8; 40 * 10];
        let picture = Picture {
            width: 40,
            height: 10,
            grey: &grey,
        };
        let input = picture.input(8);
        // 40x10 at 8 across is 8x2: the first two rows hold white, the rest 0.
        let white = (1.0 - MEAN[0]) / STD[0];
        assert!((input[0] - white).abs() < 1e-5);
        assert!((input[8 + 7] - white).abs() < 1e-5);
        assert!(input[2 * 8..8 * 8].iter().all(|v| *v == 0.0));
        assert_eq!(input.len(), 3 * 64);
    }

    #[test]
    fn a_thin_dark_rule_survives_shrinking_as_grey() {
        // A one-pixel black line across a white 100x100 picture, shrunk to 10.
        let mut grey = vec![255u8; 100 * 100];
        grey[50 * 100..51 * 100].fill(0);
        let picture = Picture {
            width: 100,
            height: 100,
            grey: &grey,
        };
        let small = picture.scaled(10, 10);
        assert!(small[5 * 10] < 240.0, "{}", small[5 * 10]);
        assert!((small[0] - 255.0).abs() < 1e-3);
    }

    #[test]
    fn pixels_that_do_not_match_the_size_are_refused() {
        let grey = vec![0u8; 10];
        let picture = Picture {
            width: 4,
            height: 4,
            grey: &grey,
        };
        assert!(matches!(picture.check(), Err(RunError::BadPicture { .. })));
    }
}
