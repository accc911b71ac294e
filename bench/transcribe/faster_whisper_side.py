#!/usr/bin/env python3
"""The faster-whisper side of bench/transcribe: loads the model once (the
same CTranslate2 weights porter reads) and prints one JSON line with the
load's seconds, then reads clip paths from standard input, one a line, and
for each transcribes it and prints one JSON line: its file, the wall
seconds and the CPU seconds (user and system of the whole process, all its
threads) the transcription took, warm, in-process, and the text. It ends
at the end of its input. compare.py asks it for one clip at a time, between
porter's runs, so that both meet the same load.

usage: faster_whisper_side.py MODEL_DIR COMPUTE_TYPE BEAM < CLIP_PATHS"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from faster_whisper import WhisperModel


def main() -> None:
    model_dir, compute_type, beam = sys.argv[1], sys.argv[2], int(sys.argv[3])
    started = time.perf_counter()
    model = WhisperModel(model_dir, device="cpu", compute_type=compute_type, cpu_threads=2, num_workers=1)
    print(json.dumps({"load_seconds": time.perf_counter() - started}), flush=True)
    greedy = beam == 1
    for line in sys.stdin:
        clip = Path(line.strip())
        start, cpu_start = time.perf_counter(), time.process_time()
        segments, _ = model.transcribe(
            str(clip),
            language="en",
            beam_size=beam,
            # Greedy is porter's own decoding: one temperature, no prompt
            # from the window before. Beam 5 is faster-whisper's default.
            temperature=0.0 if greedy else [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
            condition_on_previous_text=not greedy,
            vad_filter=False,
        )
        text = " ".join(s.text.strip() for s in segments)
        print(json.dumps({"file": clip.name, "seconds": time.perf_counter() - start,
                          "cpu": time.process_time() - cpu_start, "text": text}), flush=True)


if __name__ == "__main__":
    main()
