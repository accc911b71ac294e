//! Audio in: a recording's bytes decoded by symphonia (WAV, FLAC, Ogg
//! Vorbis, MP3, AAC in ADTS or MP4/M4A/MOV, the audio track of Matroska
//! and WebM where its codec is one of these), mixed down to one channel
//! and resampled to 16 kHz as it is decoded, packet by packet, so that
//! memory holds the 16 kHz samples (two bytes each) and one packet, never
//! the whole recording at its own rate.
//!
//! Bounded: decoding stops at [`AudioLimits::max_seconds`] (the result
//! says the recording goes on), sample rates and channel counts outside
//! what recordings use are refused, a run of undecodable packets ends the
//! recording there, and the cancel flag is checked between packets.

use std::io::Cursor;

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Async, FixedAsync, Resampler as _, SincInterpolationParameters, WindowFunction};
use symphonia::core::codecs::CodecParameters;
use symphonia::core::codecs::audio::{AudioDecoder, AudioDecoderOptions};
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, FormatReader, TrackType};
use symphonia::core::io::{MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::MetadataOptions;

use crate::mel::SAMPLE_RATE;

/// `MAX_SECONDS` is the most of a recording decoded by default (one hour):
/// 16 kHz samples of it take 110 MiB.
pub const MAX_SECONDS: u64 = 3600;
/// `MAX_BAD_PACKETS` is how many packets in a row may fail to decode
/// before the recording is taken to end there.
const MAX_BAD_PACKETS: usize = 20;
/// Input frames resampled at a time.
const CHUNK: usize = 4096;

/// How much of a recording is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AudioLimits {
    /// The most seconds decoded; the rest is left, and said to be.
    pub max_seconds: u64,
}

impl Default for AudioLimits {
    fn default() -> Self {
        Self {
            max_seconds: MAX_SECONDS,
        }
    }
}

/// A recording, decoded: 16 kHz mono samples and what it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Audio {
    /// The samples at 16 kHz, one channel, as 16-bit values.
    pub samples: Vec<i16>,
    /// The recording's own sample rate and channel count.
    pub source_rate: u32,
    pub source_channels: usize,
    /// Its codec ("AAC", "MP3"…), as symphonia names it.
    pub codec: String,
    /// Its length as its container declares it, when it does.
    pub declared_seconds: Option<f64>,
    /// Set when decoding stopped before the end: the reason, completing
    /// "decoding stopped at mm:ss because …".
    pub cut: Option<String>,
}

impl Audio {
    /// Its length in seconds, as decoded.
    #[must_use]
    pub fn seconds(&self) -> f64 {
        self.samples.len() as f64 / SAMPLE_RATE as f64
    }

    /// The samples from `start` for at most `len`, as floats in -1..1.
    pub(crate) fn window(&self, start: usize, len: usize) -> Vec<f32> {
        let end = start.saturating_add(len).min(self.samples.len());
        self.samples
            .get(start.min(end)..end)
            .unwrap_or_default()
            .iter()
            .map(|s| f32::from(*s) / 32768.0)
            .collect()
    }
}

/// Why a recording could not be decoded: a sentence completing "it could
/// not be decoded because …".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AudioError {
    /// No container reader recognised the bytes, or none of its tracks is
    /// audio porter can decode.
    #[error("{0}")]
    Unsupported(String),
    /// The bytes are damaged where they matter.
    #[error("{0}")]
    Damaged(String),
    /// The caller cancelled.
    #[error("the request was cancelled")]
    Cancelled,
}

/// Decodes `bytes` (a whole file; `extension` is a hint only) to 16 kHz
/// mono within `limits`, checking `cancelled` between packets.
pub fn decode(
    bytes: &[u8],
    extension: Option<&str>,
    limits: &AudioLimits,
    cancelled: &dyn Fn() -> bool,
) -> Result<Audio, AudioError> {
    check_wav_format(bytes)?;
    let source = MediaSourceStream::new(
        Box::new(Cursor::new(bytes)),
        MediaSourceStreamOptions::default(),
    );
    let mut hint = Hint::new();
    if let Some(extension) = extension {
        hint.with_extension(extension);
    }
    let mut format = symphonia::default::get_probe()
        .probe(
            &hint,
            source,
            FormatOptions::default(),
            MetadataOptions::default(),
        )
        .map_err(|e| {
            AudioError::Unsupported(format!(
                "no audio container porter reads recognised it ({e})"
            ))
        })?;
    let track = format
        .default_track(TrackType::Audio)
        .cloned()
        .ok_or_else(|| {
            AudioError::Unsupported("it has no audio track porter can decode".to_owned())
        })?;
    let Some(CodecParameters::Audio(params)) = &track.codec_params else {
        return Err(AudioError::Unsupported(
            "it has no audio track porter can decode".to_owned(),
        ));
    };
    let mut decoder = symphonia::default::get_codecs()
        .make_audio_decoder(params, &AudioDecoderOptions::default())
        .map_err(|e| {
            AudioError::Unsupported(format!("porter has no decoder for its audio codec ({e})"))
        })?;
    let codec = decoder.codec_info().short_name.to_ascii_uppercase();
    let declared_seconds = track
        .time_base
        .zip(track.duration)
        .and_then(|(base, duration)| base.calc_duration(duration))
        .map(|time| time.as_secs_f64());

    let (mixer, cut) = read_packets(
        format.as_mut(),
        decoder.as_mut(),
        track.id,
        *limits,
        cancelled,
    )?;
    let Some(mixer) = mixer else {
        return Err(AudioError::Damaged(
            "it holds no audio that could be decoded".to_owned(),
        ));
    };
    let (source_rate, source_channels) = (mixer.rate, mixer.channels);
    Ok(Audio {
        samples: mixer.finish(),
        source_rate,
        source_channels,
        codec,
        declared_seconds,
        cut,
    })
}

/// Reads packets of the track until the end, the duration cap, or damage
/// past which nothing more can be decoded: the mixer holding what was
/// decoded (none if nothing was), and why it stopped early, if it did.
fn read_packets(
    format: &mut dyn FormatReader,
    decoder: &mut dyn AudioDecoder,
    track_id: u32,
    limits: AudioLimits,
    cancelled: &dyn Fn() -> bool,
) -> Result<(Option<Mixer>, Option<String>), AudioError> {
    let mut mixer: Option<Mixer> = None;
    let mut bad_packets = 0usize;
    let mut interleaved = Vec::new();
    let mut cut = None;
    loop {
        if cancelled() {
            return Err(AudioError::Cancelled);
        }
        let packet = match format.next_packet() {
            Ok(Some(packet)) => packet,
            Ok(None) => break,
            Err(SymphoniaError::IoError(_)) if mixer.is_some() => {
                cut = Some("the file ends in the middle of a packet (it is truncated)".to_owned());
                break;
            }
            Err(e) if mixer.is_some() => {
                cut = Some(format!("its container is damaged there ({e})"));
                break;
            }
            Err(e) => {
                return Err(AudioError::Damaged(format!(
                    "its container could not be read ({e})"
                )));
            }
        };
        if packet.track_id != track_id {
            continue;
        }
        let buffer = match decoder.decode(&packet) {
            Ok(buffer) => buffer,
            Err(SymphoniaError::DecodeError(_) | SymphoniaError::IoError(_)) => {
                bad_packets += 1;
                if bad_packets > MAX_BAD_PACKETS {
                    cut = Some("its audio is damaged from there on".to_owned());
                    break;
                }
                continue;
            }
            Err(SymphoniaError::ResetRequired) => {
                decoder.reset();
                continue;
            }
            Err(e) => {
                if mixer.is_some() {
                    cut = Some(format!(
                        "its audio could not be decoded from there on ({e})"
                    ));
                    break;
                }
                return Err(AudioError::Damaged(format!(
                    "its audio could not be decoded ({e})"
                )));
            }
        };
        bad_packets = 0;
        let spec = buffer.spec();
        let (rate, channels) = (spec.rate(), spec.channels().count());
        if buffer.frames() == 0 {
            continue;
        }
        interleaved.resize(buffer.samples_interleaved(), 0.0f32);
        buffer.copy_to_slice_interleaved::<f32, _>(&mut interleaved);
        let mixer = match &mut mixer {
            Some(mixer) => mixer,
            None => mixer.insert(Mixer::new(rate, channels, limits)?),
        };
        if (rate, channels) != (mixer.rate, mixer.channels) {
            cut = Some(
                "its sample rate or channels change there, which porter does not follow".to_owned(),
            );
            break;
        }
        if mixer.push(&interleaved) {
            cut = Some(format!(
                "porter decodes at most {} of a recording",
                crate::types::clock(limits.max_seconds as f64)
            ));
            break;
        }
    }
    Ok((mixer, cut))
}

/// Refuses a WAV whose format chunk names a channel count or sample rate
/// no recording has, before the container reader sees it: symphonia's
/// reader multiplies them unchecked.
fn check_wav_format(bytes: &[u8]) -> Result<(), AudioError> {
    if bytes.len() < 12 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
        return Ok(());
    }
    let mut at = 12usize;
    // The format chunk comes early; look at the first few chunks only.
    for _ in 0..16 {
        let Some(header) = bytes.get(at..at + 8) else {
            return Ok(());
        };
        let len = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
        if &header[..4] == b"fmt " {
            let Some(fmt) = bytes.get(at + 8..at + 8 + 16.min(len)) else {
                return Ok(());
            };
            if fmt.len() < 16 {
                return Err(AudioError::Damaged(
                    "its WAV format chunk is too short".to_owned(),
                ));
            }
            let channels = u16::from_le_bytes([fmt[2], fmt[3]]);
            let rate = u32::from_le_bytes([fmt[4], fmt[5], fmt[6], fmt[7]]);
            if !(1..=32).contains(&channels) {
                return Err(AudioError::Unsupported(format!(
                    "its WAV header says it has {channels} channels"
                )));
            }
            if !(1000..=384_000).contains(&rate) {
                return Err(AudioError::Unsupported(format!(
                    "its WAV header says its sample rate is {rate} Hz, outside the 1–384 kHz recordings use"
                )));
            }
            return Ok(());
        }
        at = at.saturating_add(8).saturating_add(len + (len & 1));
    }
    Ok(())
}

/// Mixes decoded frames down to one channel and resamples them to 16 kHz
/// a chunk at a time.
struct Mixer {
    rate: u32,
    channels: usize,
    /// Mono frames at the source rate not yet resampled.
    pending: Vec<f32>,
    resampler: Option<Async<f32>>,
    /// Resampled frames still to drop: the resampler's start-up delay.
    delay: usize,
    out: Vec<i16>,
    /// Source frames taken so far, and the most that will be.
    taken: u64,
    max_frames: u64,
}

impl Mixer {
    fn new(rate: u32, channels: usize, limits: AudioLimits) -> Result<Self, AudioError> {
        if !(1000..=384_000).contains(&rate) {
            return Err(AudioError::Unsupported(format!(
                "its sample rate is {rate} Hz, outside the 1–384 kHz recordings use"
            )));
        }
        if !(1..=32).contains(&channels) {
            return Err(AudioError::Unsupported(format!(
                "it has {channels} channels"
            )));
        }
        let resampler = if rate as usize == SAMPLE_RATE {
            None
        } else {
            // A 256-tap windowed sinc (rubato's default filter): flat to
            // well past the 8 kHz Whisper hears, aliasing below the
            // window's side lobes.
            let filter = SincInterpolationParameters::new(256, WindowFunction::BlackmanHarris2);
            let ratio = SAMPLE_RATE as f64 / f64::from(rate);
            let made = Async::<f32>::new_sinc(ratio, 1.0, &filter, CHUNK, 1, FixedAsync::Input)
                .map_err(|e| {
                    AudioError::Unsupported(format!(
                        "its sample rate of {rate} Hz cannot be converted ({e})"
                    ))
                })?;
            Some(made)
        };
        let delay = resampler
            .as_ref()
            .map_or(0, rubato::Resampler::output_delay);
        Ok(Self {
            rate,
            channels,
            pending: Vec::new(),
            resampler,
            delay,
            out: Vec::new(),
            taken: 0,
            max_frames: limits.max_seconds.saturating_mul(u64::from(rate)),
        })
    }

    /// Takes interleaved frames; true once the limit is reached.
    fn push(&mut self, interleaved: &[f32]) -> bool {
        let mut full = false;
        for frame in interleaved.chunks_exact(self.channels) {
            if self.taken >= self.max_frames {
                full = true;
                break;
            }
            self.taken += 1;
            self.pending
                .push(frame.iter().sum::<f32>() / self.channels as f32);
        }
        self.drain(false);
        full
    }

    /// Resamples whole chunks of what is pending (and, at the end, the rest).
    fn drain(&mut self, last: bool) {
        let Some(resampler) = &mut self.resampler else {
            self.out.extend(self.pending.drain(..).map(to_i16));
            return;
        };
        let mut output = vec![0.0f32; resampler.output_frames_max()];
        loop {
            let needed = resampler.input_frames_next();
            let partial = if self.pending.len() >= needed {
                None
            } else if last && !self.pending.is_empty() {
                Some(self.pending.len())
            } else {
                break;
            };
            let mut input = vec![0.0f32; needed];
            let take = partial.unwrap_or(needed);
            input[..take].copy_from_slice(&self.pending[..take]);
            self.pending.drain(..take);
            let (Ok(inp), Ok(mut out)) = (
                InterleavedSlice::new(&input, 1, needed),
                InterleavedSlice::new_mut(&mut output, 1, resampler.output_frames_max()),
            ) else {
                break;
            };
            let indexing = partial.map(|n| rubato::Indexing::new().partial_len(n));
            let Ok((_, produced)) =
                resampler.process_into_buffer(&inp, &mut out, indexing.as_ref())
            else {
                break;
            };
            let skip = self.delay.min(produced);
            self.delay -= skip;
            self.out
                .extend(output[skip..produced].iter().copied().map(to_i16));
        }
    }

    fn finish(mut self) -> Vec<i16> {
        self.drain(true);
        // The resampler's delay is made up at the end by flushing silence
        // through it, so the last words are not cut short.
        let expected =
            (self.taken as f64 * SAMPLE_RATE as f64 / f64::from(self.rate)).round() as usize;
        if let Some(resampler) = &mut self.resampler {
            let mut output = vec![0.0f32; resampler.output_frames_max()];
            let mut rounds = 0;
            while self.out.len() < expected && rounds < 8 {
                rounds += 1;
                let needed = resampler.input_frames_next();
                let input = vec![0.0f32; needed];
                let (Ok(inp), Ok(mut out)) = (
                    InterleavedSlice::new(&input, 1, needed),
                    InterleavedSlice::new_mut(&mut output, 1, resampler.output_frames_max()),
                ) else {
                    break;
                };
                let Ok((_, produced)) = resampler.process_into_buffer(&inp, &mut out, None) else {
                    break;
                };
                let skip = self.delay.min(produced);
                self.delay -= skip;
                self.out
                    .extend(output[skip..produced].iter().copied().map(to_i16));
            }
        }
        self.out.truncate(expected.max(if self.resampler.is_none() {
            self.out.len()
        } else {
            0
        }));
        self.out
    }
}

fn to_i16(sample: f32) -> i16 {
    (sample.clamp(-1.0, 1.0) * 32767.0).round() as i16
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 16-bit PCM WAV file of `samples` at `rate` with `channels`.
    pub(crate) fn wav(samples: &[i16], rate: u32, channels: u16) -> Vec<u8> {
        let data_len = (samples.len() * 2) as u32;
        let mut out = Vec::new();
        out.extend_from_slice(b"RIFF");
        out.extend_from_slice(&(36 + data_len).to_le_bytes());
        out.extend_from_slice(b"WAVEfmt ");
        out.extend_from_slice(&16u32.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&channels.to_le_bytes());
        out.extend_from_slice(&rate.to_le_bytes());
        out.extend_from_slice(&(rate * u32::from(channels) * 2).to_le_bytes());
        out.extend_from_slice(&(channels * 2).to_le_bytes());
        out.extend_from_slice(&16u16.to_le_bytes());
        out.extend_from_slice(b"data");
        out.extend_from_slice(&data_len.to_le_bytes());
        for s in samples {
            out.extend_from_slice(&s.to_le_bytes());
        }
        out
    }

    fn tone(rate: u32, seconds: f32, hz: f32) -> Vec<i16> {
        (0..(rate as f32 * seconds) as usize)
            .map(|i| {
                ((2.0 * std::f32::consts::PI * hz * i as f32 / rate as f32).sin() * 16000.0) as i16
            })
            .collect()
    }

    fn never() -> bool {
        false
    }

    #[test]
    fn a_44_1_khz_stereo_wav_becomes_16_khz_mono_of_the_same_length() {
        let mono = tone(44_100, 2.0, 440.0);
        let stereo: Vec<i16> = mono.iter().flat_map(|s| [*s, *s]).collect();
        let audio = decode(
            &wav(&stereo, 44_100, 2),
            Some("wav"),
            &AudioLimits::default(),
            &never,
        )
        .expect("decodes");
        assert_eq!((audio.source_rate, audio.source_channels), (44_100, 2));
        assert_eq!(audio.samples.len(), 32_000);
        assert!(audio.cut.is_none());
        // The tone's loudness survives (peak near 16000 of 32767).
        let peak = audio.samples[1000..31_000]
            .iter()
            .map(|s| s.unsigned_abs())
            .max()
            .unwrap_or(0);
        assert!((15_000..17_000).contains(&peak), "{peak}");
    }

    #[test]
    fn decoding_stops_at_the_duration_cap_and_says_so() {
        let limits = AudioLimits { max_seconds: 1 };
        let audio = decode(
            &wav(&tone(16_000, 3.0, 300.0), 16_000, 1),
            None,
            &limits,
            &never,
        )
        .expect("decodes");
        assert_eq!(audio.samples.len(), 16_000);
        assert_eq!(
            audio.cut.as_deref(),
            Some("porter decodes at most 00:01 of a recording")
        );
        let exact = decode(
            &wav(&tone(16_000, 1.0, 300.0), 16_000, 1),
            None,
            &limits,
            &never,
        )
        .expect("decodes");
        assert!(exact.cut.is_none());
    }

    #[test]
    fn bytes_that_are_not_audio_and_an_odd_sample_rate_are_refused_with_a_reason() {
        let error = decode(
            b"just some text, not a recording",
            None,
            &AudioLimits::default(),
            &never,
        )
        .expect_err("not audio");
        assert!(matches!(error, AudioError::Unsupported(_)), "{error:?}");
        let error = decode(
            &wav(&[0; 100], 500, 1),
            None,
            &AudioLimits::default(),
            &never,
        )
        .expect_err("500 Hz");
        assert!(error.to_string().contains("500 Hz"), "{error}");
        // 65,535 channels: symphonia's reader overflows on it unchecked.
        let mut many = wav(&[0; 100], 16_000, 1);
        many[22..24].copy_from_slice(&u16::MAX.to_le_bytes());
        let error =
            decode(&many, None, &AudioLimits::default(), &never).expect_err("65535 channels");
        assert_eq!(
            error.to_string(),
            "its WAV header says it has 65535 channels"
        );
    }
}
