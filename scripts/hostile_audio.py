"""Hostile recordings (issue 38): containers that lie about their sizes,
formats that cannot be, frames of garbage, and an hour and more of silence,
each a few bytes to a few tens of MiB, the same bytes on every run. Used by
tests/hostile/make_hostile.py; the fuzz targets of fuzz/ start from them
too. Standard library only."""

from __future__ import annotations

import struct


def wav_header(rate: int, channels: int, bits: int, data_len: int, *, block_align: int | None = None) -> bytes:
    align = block_align if block_align is not None else channels * bits // 8
    fmt = struct.pack("<HHIIHH", 1, channels, rate, (rate * align) & 0xFFFFFFFF, align, bits)
    return (b"RIFF" + struct.pack("<I", (36 + data_len) & 0xFFFFFFFF) + b"WAVE" + b"fmt " + struct.pack("<I", 16)
            + fmt + b"data" + struct.pack("<I", data_len & 0xFFFFFFFF))


def lying_wav() -> bytes:
    """A data chunk that declares 4 GiB and holds 2 KiB of a tone."""
    samples = b"".join(struct.pack("<h", (i * 997 % 4000) - 2000) for i in range(1024))
    return wav_header(16000, 1, 16, 0xFFFFFFF0) + samples


def absurd_wav() -> bytes:
    """65,535 channels at 4,294,967,295 Hz with a block of 0 bytes."""
    return wav_header(0xFFFFFFFF, 0xFFFF, 16, 4096, block_align=0) + bytes(4096)


def long_silent_wav() -> bytes:
    """70 minutes of 8-bit silence at 8 kHz (32 MiB): past the hour porter
    transcribes."""
    seconds = 70 * 60
    return wav_header(8000, 1, 8, seconds * 8000) + b"\x80" * (seconds * 8000)


def garbage_mp3() -> bytes:
    """An ID3 tag, then 3,000 MPEG-1 layer III frame headers each followed
    by bytes that decode to nothing sensible."""
    tag = b"ID3\x04\x00\x00" + bytes([0, 0, 0, 10]) + bytes(10)
    frame = b"\xff\xfb\x90\x64" + bytes((i * 131 + 7) % 256 for i in range(413))
    return tag + frame * 3000


def lying_flac() -> bytes:
    """A STREAMINFO block claiming 655,350 Hz, 8 channels, 2^36 samples and
    the largest blocks, then frames of noise."""
    info = struct.pack(">HH", 16, 65535) + (0xFFFFFF).to_bytes(3, "big") * 2
    packed = (655350 << 44) | (7 << 41) | (23 << 36) | (2**36 - 1)
    info += packed.to_bytes(8, "big") + bytes(16)
    block = bytes([0x80]) + len(info).to_bytes(3, "big") + info
    frames = bytes((i * 193 + 11) % 256 for i in range(64 * 1024))
    return b"fLaC" + block + frames


def ogg_page(serial: int, sequence: int, flags: int, packet: bytes) -> bytes:
    segments = [255] * (len(packet) // 255) + [len(packet) % 255]
    header = b"OggS" + bytes([0, flags]) + struct.pack("<qIII", 0, serial, sequence, 0)
    return header + bytes([len(segments)]) + bytes(segments) + packet


def impossible_vorbis() -> bytes:
    """An Ogg stream whose Vorbis identification header says 0 channels,
    0 Hz and block sizes of 2^15, then pages of garbage."""
    ident = b"\x01vorbis" + struct.pack("<IBIiii", 0, 0, 0, 0, 0, 0) + bytes([0xFF, 1])
    pages = ogg_page(7, 0, 2, ident)
    for n in range(1, 200):
        pages += ogg_page(7, n, 0, bytes((i * n + 3) % 256 for i in range(600)))
    return pages


def mp4_box(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", 8 + len(body)) + kind + body


def deep_m4a() -> bytes:
    """An M4A whose movie box nests 20,000 boxes deep, then a box that
    declares 2^62 bytes."""
    ftyp = mp4_box(b"ftyp", b"M4A \x00\x00\x02\x00M4A isomiso2")
    inner = b""
    for _ in range(20000):
        inner = struct.pack(">I", 8 + len(inner)) + b"trak" + inner
    huge = struct.pack(">I", 1) + b"mdat" + struct.pack(">Q", 1 << 62) + bytes(64)
    return ftyp + mp4_box(b"moov", inner) + huge


def huge_element_mkv() -> bytes:
    """An EBML header, then a segment whose first element declares 2^56
    bytes and holds 32 KiB."""
    ebml = bytes.fromhex("1A45DFA3") + bytes([0x9F]) + bytes.fromhex("4286810142F7810142F2810442F381084282847765626D4287810442858102")
    segment = bytes.fromhex("18538067") + bytes([0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
    cluster = bytes.fromhex("1F43B675") + bytes([0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]) + bytes(32 * 1024)
    return ebml + segment + cluster


FAMILIES = {
    "audio-lying-size.wav": lying_wav,
    "audio-absurd-format.wav": absurd_wav,
    "audio-70-minutes-silence.wav": long_silent_wav,
    "audio-garbage-frames.mp3": garbage_mp3,
    "audio-lying-streaminfo.flac": lying_flac,
    "audio-impossible-vorbis.ogg": impossible_vorbis,
    "audio-deep-boxes.m4a": deep_m4a,
    "audio-huge-element.webm": huge_element_mkv,
}
