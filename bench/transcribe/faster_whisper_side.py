#!/usr/bin/env python3
"""The faster-whisper side of bench/transcribe: loads the model once (the
same CTranslate2 weights porter reads), then transcribes each clip named in
CLIPS_DIR/clips.json and prints one JSON line per clip: its file, the
seconds the transcription took (warm, in-process) and the text.

usage: faster_whisper_side.py MODEL_DIR CLIPS_DIR COMPUTE_TYPE BEAM"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from faster_whisper import WhisperModel


def main() -> None:
    model_dir, clips_dir, compute_type, beam = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    started = time.perf_counter()
    model = WhisperModel(model_dir, device="cpu", compute_type=compute_type, cpu_threads=2, num_workers=1)
    print(json.dumps({"load_seconds": time.perf_counter() - started}), flush=True)
    greedy = beam == 1
    for clip in json.loads((clips_dir / "clips.json").read_text()):
        start = time.perf_counter()
        segments, _ = model.transcribe(
            str(clips_dir / clip["file"]),
            language="en",
            beam_size=beam,
            # Greedy is porter's own decoding: one temperature, no prompt
            # from the window before. Beam 5 is faster-whisper's default.
            temperature=0.0 if greedy else [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
            condition_on_previous_text=not greedy,
            vad_filter=False,
        )
        text = " ".join(s.text.strip() for s in segments)
        print(json.dumps({"file": clip["file"], "seconds": time.perf_counter() - start, "text": text}), flush=True)


if __name__ == "__main__":
    main()
