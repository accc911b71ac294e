#!/usr/bin/env python3
"""Writes the speech clips of bench/transcribe into OUT_DIR, with
`clips.json` naming each clip, its set, what was said and how it was made.

Every clip is spoken by espeak-ng from sentences written for this bench,
then changed the way recordings are: speed, voice, noise at 15-25 dB SNR,
a telephone's band (300-3400 Hz at 8 kHz), and encoded by ffmpeg into every
container porter reads (WAV, FLAC, Ogg Vorbis, MP3, AAC in M4A, MP4 and MOV
with a video track, Matroska and WebM). Two sets, so that nothing tuned on
one is judged on it:

- dev: voices en-us and en-gb at 150-175 words a minute, sentences of set A;
- held-out: other voices (Scotland, New York, RP, Caribbean, two variants)
  and speeds (130, 195), sentences of set B, never used while tuning.

Plus a two-minute clip (set B sentences, held-out voice), and clips with no
speech at all (near-silence, a synthesised chord progression), where every
word written is an invented one.

Byte for byte the same on every run (espeak-ng and ffmpeg are given fixed
settings; the noise has a fixed seed). Needs espeak-ng, sox and ffmpeg
(Debian packages) and numpy."""

from __future__ import annotations

import json
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np

SET_A = [
    "The morning train to the coast leaves from platform four.",
    "Please send the signed contract back before the end of the week.",
    "Our team meets every Tuesday to review the open tickets.",
    "The river rose quickly after three days of heavy rain.",
    "She painted the kitchen a pale shade of green last summer.",
    "We moved the launch because the servers were not ready.",
    "A small bakery on the corner sells fresh bread each dawn.",
    "The report shows that costs fell while sales kept growing.",
    "He forgot his umbrella and walked home in the storm.",
    "Remember to lock the back door when you leave the office.",
    "The museum opens a new exhibit about ancient maps in May.",
    "Most of the snow melted before the children woke up.",
]

SET_B = [
    "The committee approved the budget after a long debate.",
    "Fresh vegetables arrive at the market early every Friday.",
    "Our flight was delayed because of fog over the airport.",
    "The library will close for repairs during the holidays.",
    "He wrote a letter to his grandmother in careful handwriting.",
    "The engineers tested the bridge with heavy trucks overnight.",
    "Turn left at the church and the hotel is on your right.",
    "The orchestra played a quiet piece before the intermission.",
    "Customers asked for a refund when the parcel came broken.",
    "A gentle wind carried the smell of salt from the harbour.",
    "The new manager wants weekly updates from every department.",
    "Two cats slept in the sun on the warm stone wall.",
    "The garden needs water twice a day during the heat wave.",
    "Students gathered in the hall to hear the final results.",
]

DEV_VOICES = [("en-us", 160), ("en-gb", 175), ("en-us", 150), ("en-gb", 165)]
HELD_VOICES = [
    ("en-gb-scotland", 160),
    ("en-us-nyc", 195),
    ("en-gb-x-rp", 130),
    ("en-029", 170),
    ("en-us+f3", 155),
    ("en+m3", 180),
]
CONDITIONS = ["clean", "snr25", "snr20", "snr15", "phone"]
CONTAINERS = ["wav", "flac", "ogg", "mp3", "m4a", "mp4", "mov", "mkv", "webm"]
RATE = 22050


def speak(text: str, voice: str, speed: int, path: Path) -> None:
    subprocess.run(
        ["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(path), text],
        check=True,
    )


def read_wav(path: Path) -> np.ndarray:
    with wave.open(str(path)) as w:
        data = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
        assert w.getframerate() == RATE, w.getframerate()
    return data.astype(np.float64) / 32768.0


def write_wav(path: Path, samples: np.ndarray, rate: int = RATE) -> None:
    clipped = np.clip(samples, -1.0, 1.0)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((clipped * 32767).astype(np.int16).tobytes())


def with_noise(samples: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """Pink-ish noise (white noise through a one-pole low-pass) at SNR,
    measured against the speech's power where it speaks."""
    speech = samples[np.abs(samples) > 1e-3]
    power = float(np.mean(speech**2)) if speech.size else 1e-6
    white = rng.standard_normal(samples.size)
    pink = np.empty_like(white)
    acc = 0.0
    for i, v in enumerate(white):
        acc = 0.97 * acc + v
        pink[i] = acc
    pink /= np.sqrt(np.mean(pink**2))
    return samples + pink * np.sqrt(power / 10 ** (snr_db / 10))


def telephone(src: Path, dst: Path) -> None:
    """A telephone's band: 300-3400 Hz, resampled to 8 kHz and back."""
    narrow = dst.with_suffix(".8k.wav")
    subprocess.run(["sox", str(src), "-r", "8000", str(narrow), "sinc", "300-3400"], check=True)
    subprocess.run(["sox", str(narrow), "-r", str(RATE), str(dst)], check=True)
    narrow.unlink()


def encode(src: Path, container: str, dst: Path) -> None:
    base = ["ffmpeg", "-loglevel", "error", "-y", "-bitexact"]
    video = ["-f", "lavfi", "-i", "color=c=navy:s=160x120:r=5"]
    audio_args = {
        "wav": ["-c:a", "pcm_s16le", "-ar", "44100", "-ac", "2"],
        "flac": ["-c:a", "flac", "-ar", "48000"],
        "ogg": ["-c:a", "libvorbis", "-q:a", "4", "-ar", "44100"],
        "mp3": ["-c:a", "libmp3lame", "-b:a", "96k", "-ar", "44100"],
        "m4a": ["-c:a", "aac", "-b:a", "96k", "-ar", "44100"],
        "mp4": ["-c:a", "aac", "-b:a", "96k", "-ar", "48000"],
        "mov": ["-c:a", "aac", "-b:a", "128k", "-ar", "44100"],
        "mkv": ["-c:a", "flac", "-ar", "48000"],
        "webm": ["-c:a", "libvorbis", "-q:a", "3", "-ar", "48000"],
    }[container]
    if container in ("mp4", "mov", "mkv"):
        cmd = base + ["-i", str(src)] + video + ["-shortest", "-map", "0:a", "-map", "1:v", "-c:v", "mpeg4" if container != "mkv" else "ffv1"] + audio_args + [str(dst)]
    else:
        cmd = base + ["-i", str(src)] + audio_args + ["-vn", str(dst)]
    subprocess.run(cmd, check=True)


def chords(seconds: float) -> np.ndarray:
    """A synthesised chord progression with a beat: music with no words."""
    t = np.arange(int(seconds * RATE)) / RATE
    out = np.zeros_like(t)
    roots = [220.0, 174.6, 196.0, 146.8]
    for i, root in enumerate(roots * int(seconds // 8 + 1)):
        start, end = i * 2.0, (i + 1) * 2.0
        mask = (t >= start) & (t < end)
        for ratio in (1.0, 1.26, 1.5, 2.0):
            out[mask] += 0.08 * np.sin(2 * np.pi * root * ratio * t[mask])
    beat = (np.sin(2 * np.pi * 2 * t) > 0.95) * 0.2 * np.sin(2 * np.pi * 60 * t)
    return out + beat


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    work.mkdir(exist_ok=True)
    rng = np.random.default_rng(38)
    clips = []
    plan = []
    for i in range(0, len(SET_A), 2):
        plan.append(("dev", SET_A[i : i + 2], DEV_VOICES[(i // 2) % len(DEV_VOICES)]))
    for i in range(0, len(SET_A), 3):
        plan.append(("dev", SET_A[i : i + 3][::-1], DEV_VOICES[(i // 3 + 1) % len(DEV_VOICES)]))
    for i in range(0, len(SET_B), 2):
        plan.append(("held-out", SET_B[i : i + 2], HELD_VOICES[(i // 2) % len(HELD_VOICES)]))
    for i in range(0, len(SET_B), 3):
        plan.append(("held-out", SET_B[i : i + 3][::-1], HELD_VOICES[(i // 3 + 2) % len(HELD_VOICES)]))
    for n, (subset, sentences, (voice, speed)) in enumerate(plan):
        condition = CONDITIONS[n % len(CONDITIONS)]
        container = CONTAINERS[n % len(CONTAINERS)]
        text = " ".join(sentences)
        name = f"{n:02d}-{subset}-{voice.replace('+', '_')}-{speed}-{condition}.{container}"
        raw = work / f"{n:02d}.wav"
        speak(text, voice, speed, raw)
        samples = read_wav(raw)
        if condition.startswith("snr"):
            samples = with_noise(samples, float(condition[3:]), rng)
        mixed = work / f"{n:02d}.mixed.wav"
        write_wav(mixed, samples)
        if condition == "phone":
            phoned = work / f"{n:02d}.phone.wav"
            telephone(mixed, phoned)
            mixed = phoned
        encode(mixed, container, out / name)
        clips.append({"file": name, "set": subset, "text": text, "voice": voice, "speed": speed,
                      "condition": condition, "container": container})
    # Two minutes of set B, read with pauses between sentences.
    long_parts = []
    for k in range(3):
        for sentence in SET_B:
            part = work / f"long-{len(long_parts)}.wav"
            speak(sentence, "en-gb-x-rp" if k % 2 else "en-us-nyc", 150, part)
            long_parts.append(part)
    samples = np.concatenate([np.concatenate([read_wav(p), np.zeros(int(0.6 * RATE))]) for p in long_parts])
    samples = samples[: int(120 * RATE)]
    spoken = []
    total = 0
    for k in range(3):
        for sentence in SET_B:
            length = read_wav(work / f"long-{len(spoken)}.wav").size + int(0.6 * RATE)
            if total + length > 120 * RATE:
                break
            spoken.append(sentence)
            total += length
    write_wav(work / "long.wav", np.concatenate([samples, np.zeros(max(0, int(120 * RATE) - samples.size))]))
    encode(work / "long.wav", "m4a", out / "90-held-out-long-two-minutes.m4a")
    clips.append({"file": "90-held-out-long-two-minutes.m4a", "set": "held-out", "text": " ".join(spoken),
                  "voice": "en-us-nyc/en-gb-x-rp", "speed": 150, "condition": "clean", "container": "m4a"})
    # No speech: near-silence (faint noise) and music.
    write_wav(work / "quiet.wav", rng.standard_normal(20 * RATE) * 0.0005)
    encode(work / "quiet.wav", "flac", out / "95-none-near-silence.flac")
    write_wav(work / "music.wav", chords(20.0))
    encode(work / "music.wav", "mp3", out / "96-none-music.mp3")
    for name in ("95-none-near-silence.flac", "96-none-music.mp3"):
        clips.append({"file": name, "set": "no-speech", "text": "", "voice": "", "speed": 0,
                      "condition": "no speech", "container": name.rsplit(".", 1)[1]})
    (out / "clips.json").write_text(json.dumps(clips, indent=1) + "\n")
    for p in work.iterdir():
        p.unlink()
    work.rmdir()


if __name__ == "__main__":
    main()
