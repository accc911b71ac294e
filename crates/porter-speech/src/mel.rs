//! Whisper's input: the log-mel spectrogram of 30 s of 16 kHz audio, 80
//! bands, one frame every 10 ms (a 25 ms Hann window), made the way
//! Whisper was trained on it: power spectrum, Slaney-scale mel filters of
//! unit area, log10, floored 8 below the loudest value, scaled to about
//! -1..1.

use std::sync::Arc;

use realfft::{RealFftPlanner, RealToComplex};

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

    /// The `bands` × [`FRAMES`] spectrogram (band-major) of `samples`,
    /// which are padded with silence to 30 s (and cut there).
    pub fn spectrogram(&self, samples: &[f32]) -> Vec<f32> {
        let bins = FFT_SIZE / 2 + 1;
        let half = FFT_SIZE / 2;
        // The signal as Whisper frames it: 30 s, reflected by half a window
        // at each end (the frames are centred on their time).
        let mut padded = vec![0.0f32; WINDOW_SAMPLES + FFT_SIZE];
        let taken = samples.len().min(WINDOW_SAMPLES);
        padded[half..half + taken].copy_from_slice(&samples[..taken]);
        for i in 1..=half {
            padded[half - i] = padded[half + i];
            padded[half + WINDOW_SAMPLES - 1 + i] = padded[half + WINDOW_SAMPLES - 1 - i];
        }
        let mut input = self.fft.make_input_vec();
        let mut spectrum = self.fft.make_output_vec();
        let mut scratch = self.fft.make_scratch_vec();
        let mut power = vec![0.0f32; bins];
        let mut out = vec![0.0f32; self.bands * FRAMES];
        for frame in 0..FRAMES {
            let start = frame * HOP;
            for (i, v) in input.iter_mut().enumerate() {
                *v = padded[start + i] * self.hann[i];
            }
            // The sizes are the plan's own, so this cannot fail.
            if self
                .fft
                .process_with_scratch(&mut input, &mut spectrum, &mut scratch)
                .is_err()
            {
                continue;
            }
            for (p, c) in power.iter_mut().zip(&spectrum) {
                *p = c.norm_sqr();
            }
            for band in 0..self.bands {
                let weights = &self.filters[band * bins..(band + 1) * bins];
                let energy: f32 = weights.iter().zip(&power).map(|(w, p)| w * p).sum();
                out[band * FRAMES + frame] = energy.max(1e-10).log10();
            }
        }
        let loudest = out.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for v in &mut out {
            *v = (v.max(loudest - 8.0) + 4.0) / 4.0;
        }
        out
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

    #[test]
    fn the_mel_scale_turns_back_into_hertz() {
        for hz in [0.0, 440.0, 999.0, 1000.0, 4000.0, 8000.0] {
            assert!((mel_to_hz(hz_to_mel(hz)) - hz).abs() < 1e-6, "{hz}");
        }
    }

    #[test]
    fn a_tone_lights_the_band_that_holds_its_pitch_and_silence_is_flat() {
        let mel = Mel::new(80);
        let tone: Vec<f32> = (0..SAMPLE_RATE)
            .map(|i| (2.0 * std::f32::consts::PI * 1000.0 * i as f32 / SAMPLE_RATE as f32).sin())
            .collect();
        let spectrogram = mel.spectrogram(&tone);
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
        // Past the tone's second, the spectrogram is at its floor.
        let floor = spectrogram[frame + 2000];
        assert!(spectrogram[loudest_band * FRAMES + frame] > floor + 1.0);

        let silence = mel.spectrogram(&[]);
        assert!(silence.iter().all(|v| (*v - silence[0]).abs() < 1e-6));
    }
}
