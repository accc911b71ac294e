//! Whisper's input: the log-mel spectrogram of 30 s of 16 kHz audio, 80
//! bands, one frame every 10 ms (a 25 ms Hann window), made the way
//! Whisper was trained on it: power spectrum, Slaney-scale mel filters of
//! unit area, log10, floored 8 below the loudest value, scaled to about
//! -1..1.

use std::sync::Arc;

use realfft::{RealFftPlanner, RealToComplex};

use crate::kernels;

/// Samples per second Whisper hears.
pub const SAMPLE_RATE: usize = 16_000;
/// Samples per window of the spectrogram.
pub(crate) const FFT_SIZE: usize = 400;
/// Samples from one frame to the next (10 ms).
pub const HOP: usize = 160;
/// Frames in the 30 s Whisper reads at a time.
pub const FRAMES: usize = 3000;
/// Samples in 30 s.
pub const WINDOW_SAMPLES: usize = FRAMES * HOP;

/// The spectrogram maker: its Fourier transform planned once, its window
/// and its filters.
pub(crate) struct Mel {
    fft: Arc<dyn RealToComplex<f32>>,
    hann: Vec<f32>,
    /// `bands` rows of `FFT_SIZE / 2 + 1` weights.
    filters: Vec<f32>,
    pub bands: usize,
}

impl Mel {
    pub fn new(bands: usize) -> Self {
        let mut planner = RealFftPlanner::<f32>::new();
        let fft = planner.plan_fft_forward(FFT_SIZE);
        // A periodic Hann window, as torch.hann_window makes it.
        let hann = (0..FFT_SIZE)
            .map(|i| 0.5 - 0.5 * (2.0 * std::f32::consts::PI * i as f32 / FFT_SIZE as f32).cos())
            .collect();
        Self {
            fft,
            hann,
            filters: slaney_filters(bands),
            bands,
        }
    }

    /// The log10 mel energies of frame `frame` of `samples` (16-bit, a
    /// whole recording) into `out` (`bands` values): the frame is centred
    /// on sample `frame · HOP`, the signal reflected at its start and
    /// silent past its end, as Whisper frames a recording.
    fn frame_energies(&self, samples: &[i16], frame: usize, work: &mut Work, out: &mut [f32]) {
        let half = FFT_SIZE / 2;
        let centre = frame * HOP;
        for (i, v) in work.input.iter_mut().enumerate() {
            let at = centre + i;
            let index = half.abs_diff(at);
            let sample = samples.get(index).map_or(0.0, |s| f32::from(*s) / 32768.0);
            *v = sample * self.hann[i];
        }
        // The sizes are the plan's own, so this cannot fail.
        if self
            .fft
            .process_with_scratch(&mut work.input, &mut work.spectrum, &mut work.scratch)
            .is_err()
        {
            out.fill(LOG_FLOOR);
            return;
        }
        for (p, c) in work.power.iter_mut().zip(&work.spectrum) {
            *p = c.norm_sqr();
        }
        let bins = work.power.len();
        for (band, value) in out.iter_mut().enumerate() {
            let weights = &self.filters[band * bins..(band + 1) * bins];
            let energy: f32 = weights.iter().zip(&work.power).map(|(w, p)| w * p).sum();
            *value = energy.max(1e-10).log10();
        }
    }

    /// The loudest log10 mel energy of a whole recording: Whisper floors
    /// every window's spectrogram 8 below it (80 dB), so that a quiet
    /// window of a loud recording keeps its quiet detail as the model
    /// learnt it, not its own.
    pub fn loudest(&self, samples: &[i16]) -> f32 {
        let mut work = Work::new(&self.fft);
        let mut energies = vec![0.0f32; self.bands];
        let mut loudest = LOG_FLOOR;
        // Every frame that holds a sample of the recording.
        for frame in 0..(samples.len() + FFT_SIZE / 2).div_ceil(HOP) {
            self.frame_energies(samples, frame, &mut work, &mut energies);
            loudest = loudest.max(kernels::largest(&energies));
        }
        loudest
    }

    /// The `bands` × [`FRAMES`] spectrogram (band-major) Whisper reads for
    /// the 30 s from frame `first` of `samples` (a whole recording), of
    /// which `frames` are the recording's: each log10 energy floored at
    /// `loudest` (from [`Mel::loudest`]) less 8 and scaled by
    /// `(v + 4) / 4`. The frames after the recording's `frames` are 0, as
    /// Whisper pads a short window's spectrogram (not with silence's
    /// spectrogram, which is the floor, about -1 after scaling: fed that,
    /// the model hears other words).
    pub fn spectrogram(
        &self,
        samples: &[i16],
        first: usize,
        frames: usize,
        loudest: f32,
    ) -> Vec<f32> {
        let mut work = Work::new(&self.fft);
        let mut energies = vec![0.0f32; self.bands];
        let mut out = vec![0.0f32; self.bands * FRAMES];
        let floor = loudest - 8.0;
        for frame in 0..frames.min(FRAMES) {
            self.frame_energies(samples, first + frame, &mut work, &mut energies);
            for (band, value) in energies.iter().enumerate() {
                out[band * FRAMES + frame] = (value.max(floor) + 4.0) / 4.0;
            }
        }
        out
    }
}

/// log10 of the least energy counted (Whisper's clamp at 1e-10).
const LOG_FLOOR: f32 = -10.0;

/// One frame's buffers, made once per pass.
struct Work {
    input: Vec<f32>,
    spectrum: Vec<realfft::num_complex::Complex<f32>>,
    scratch: Vec<realfft::num_complex::Complex<f32>>,
    power: Vec<f32>,
}

impl Work {
    fn new(fft: &Arc<dyn RealToComplex<f32>>) -> Self {
        Self {
            input: fft.make_input_vec(),
            spectrum: fft.make_output_vec(),
            scratch: fft.make_scratch_vec(),
            power: vec![0.0f32; FFT_SIZE / 2 + 1],
        }
    }
}

/// Hertz to mels on the Slaney scale: linear to 1 kHz, logarithmic above.
fn hz_to_mel(hz: f64) -> f64 {
    let linear = 200.0 / 3.0;
    let log_step = 6.4f64.ln() / 27.0;
    if hz >= 1000.0 {
        1000.0 / linear + (hz / 1000.0).ln() / log_step
    } else {
        hz / linear
    }
}

fn mel_to_hz(mel: f64) -> f64 {
    let linear = 200.0 / 3.0;
    let log_step = 6.4f64.ln() / 27.0;
    let knee = 1000.0 / linear;
    if mel >= knee {
        1000.0 * (log_step * (mel - knee)).exp()
    } else {
        mel * linear
    }
}

/// Triangular filters spaced evenly in mels from 0 Hz to 8 kHz, each
/// scaled to unit area (Slaney's normalisation), `bands` rows of
/// `FFT_SIZE / 2 + 1` weights.
fn slaney_filters(bands: usize) -> Vec<f32> {
    let bins = FFT_SIZE / 2 + 1;
    let top = hz_to_mel(SAMPLE_RATE as f64 / 2.0);
    let edges: Vec<f64> = (0..bands + 2)
        .map(|i| mel_to_hz(top * i as f64 / (bands + 1) as f64))
        .collect();
    let mut filters = vec![0.0f32; bands * bins];
    for band in 0..bands {
        let (low, centre, high) = (edges[band], edges[band + 1], edges[band + 2]);
        let area = 2.0 / (high - low);
        for bin in 0..bins {
            let hz = bin as f64 * SAMPLE_RATE as f64 / FFT_SIZE as f64;
            let rising = (hz - low) / (centre - low);
            let falling = (high - hz) / (high - centre);
            let weight = rising.min(falling).max(0.0);
            filters[band * bins + bin] = (weight * area) as f32;
        }
    }
    filters
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whisper's spectrogram of a window, computed the way its reference
    /// code states it, step by step and in `f64`: the recording followed by
    /// 30 s of silence, reflected by half a window at its start (a centred
    /// short-time transform), a periodic Hann window, a plain discrete
    /// Fourier transform, the power through the filters, log10 clamped at
    /// 1e-10, floored 8 below the loudest value of the whole, `(v + 4) / 4`;
    /// then the window's `frames` from frame `first`, padded with zeros to
    /// 3,000.
    fn reference(samples: &[i16], first: usize, frames: usize) -> Vec<f64> {
        let half = FFT_SIZE / 2;
        let audio: Vec<f64> = samples
            .iter()
            .map(|s| f64::from(*s) / 32768.0)
            .chain(std::iter::repeat_n(0.0, WINDOW_SAMPLES))
            .collect();
        let mut padded: Vec<f64> = (1..=half).rev().map(|i| audio[i]).collect();
        padded.extend_from_slice(&audio);
        padded.extend((1..=half).map(|i| audio[audio.len() - 1 - i]));
        let total = (padded.len() - FFT_SIZE) / HOP;
        let bins = FFT_SIZE / 2 + 1;
        let filters = slaney_filters(80);
        let hann =
            |i: usize| 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / FFT_SIZE as f64).cos();
        // e^(-2πi·m/N) for m = k·n mod N.
        let turns: Vec<(f64, f64)> = (0..FFT_SIZE)
            .map(|m| {
                let angle = -2.0 * std::f64::consts::PI * m as f64 / FFT_SIZE as f64;
                (angle.cos(), angle.sin())
            })
            .collect();
        let log_mel: Vec<Vec<f64>> = (0..total)
            .map(|frame| {
                let windowed: Vec<f64> = (0..FFT_SIZE)
                    .map(|i| padded[frame * HOP + i] * hann(i))
                    .collect();
                if windowed.iter().all(|x| *x == 0.0) {
                    // No energy: log10 of the clamp.
                    return vec![-10.0; 80];
                }
                let power: Vec<f64> = (0..bins)
                    .map(|k| {
                        let (mut re, mut im) = (0.0, 0.0);
                        for (n, x) in windowed.iter().enumerate() {
                            let (cos, sin) = turns[(k * n) % FFT_SIZE];
                            re += x * cos;
                            im += x * sin;
                        }
                        re * re + im * im
                    })
                    .collect();
                (0..80)
                    .map(|band| {
                        let energy: f64 = (0..bins)
                            .map(|k| f64::from(filters[band * bins + k]) * power[k])
                            .sum();
                        energy.max(1e-10).log10()
                    })
                    .collect()
            })
            .collect();
        let loudest = log_mel
            .iter()
            .flatten()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let mut out = vec![0.0; 80 * FRAMES];
        for frame in 0..frames {
            for band in 0..80 {
                out[band * FRAMES + frame] =
                    (log_mel[first + frame][band].max(loudest - 8.0) + 4.0) / 4.0;
            }
        }
        out
    }

    /// A recording whose loud part (a tone and noise, then a rising tone)
    /// ends before the later window's start, so that its floor is set by
    /// what it does not hold, and whose last window is short.
    fn recording(seconds: f64) -> Vec<i16> {
        let noise = crate::kernels::tests::noise((seconds * SAMPLE_RATE as f64) as usize, 3);
        noise
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let t = i as f64 / SAMPLE_RATE as f64;
                let loud = if t < 1.0 { 0.6 } else { 0.002 };
                let tone = (2.0 * std::f64::consts::PI * (300.0 + 400.0 * t) * t).sin();
                ((loud * tone + 0.01 * f64::from(*n)) * 20_000.0) as i16
            })
            .collect()
    }

    #[test]
    fn a_window_s_spectrogram_is_whisper_s_formula_padded_with_zeros_past_the_recording() {
        let samples = recording(2.5);
        let mel = Mel::new(80);
        let loudest = mel.loudest(&samples);
        let total = samples.len() / HOP;
        // The first window, and one starting past the loud second, as a
        // later 30 s window starts where the last segment ended.
        for first in [0, 130] {
            let frames = total - first;
            let ours = mel.spectrogram(&samples, first, frames, loudest);
            let expected = reference(&samples, first, frames);
            for frame in (0..frames + 40).chain([FRAMES - 1]) {
                for band in (0..80).step_by(7) {
                    let (a, b) = (ours[band * FRAMES + frame], expected[band * FRAMES + frame]);
                    assert!(
                        (f64::from(a) - b).abs() < 2e-3,
                        "window from frame {first}, frame {frame}, band {band}: {a} where Whisper's formula gives {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_mel_scale_turns_back_into_hertz() {
        for hz in [0.0, 440.0, 999.0, 1000.0, 4000.0, 8000.0] {
            assert!((mel_to_hz(hz_to_mel(hz)) - hz).abs() < 1e-6, "{hz}");
        }
    }

    #[test]
    fn a_tone_lights_the_band_that_holds_its_pitch_and_silence_is_flat() {
        let mel = Mel::new(80);
        let tone: Vec<i16> = (0..SAMPLE_RATE)
            .map(|i| {
                let phase = 2.0 * std::f32::consts::PI * 1000.0 * i as f32 / SAMPLE_RATE as f32;
                (phase.sin() * 16_000.0) as i16
            })
            .collect();
        let frames = SAMPLE_RATE / HOP;
        let spectrogram = mel.spectrogram(&tone, 0, frames, mel.loudest(&tone));
        let frame = 50;
        let loudest_band = (0..80)
            .max_by(|a, b| {
                spectrogram[a * FRAMES + frame].total_cmp(&spectrogram[b * FRAMES + frame])
            })
            .expect("80 bands");
        // 1 kHz sits at mel 15, band (15 / top) * 81 - 1 with top = hz_to_mel(8000).
        let expected = (hz_to_mel(1000.0) / hz_to_mel(8000.0) * 81.0).round() as usize - 1;
        assert!(
            loudest_band.abs_diff(expected) <= 1,
            "{loudest_band} vs {expected}"
        );
        // The top band holds nothing of the tone: it is at the floor.
        let floor = spectrogram[79 * FRAMES + frame];
        assert!(spectrogram[loudest_band * FRAMES + frame] > floor + 1.0);

        let silence = vec![0i16; SAMPLE_RATE];
        let flat = mel.spectrogram(&silence, 0, frames, mel.loudest(&silence));
        for band in 0..80 {
            let row = &flat[band * FRAMES..band * FRAMES + frames];
            assert!(row.iter().all(|v| (*v - flat[0]).abs() < 1e-6));
        }
    }
}
