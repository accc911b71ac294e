# Sourced by scripts/demo, scripts/test and .ci/run: what porter's OCR needs
# from the system, the Garage build for the S3 tests, and one way to install
# Debian packages.

# apt_install PACKAGE...: installs with apt-get, without recommended
# packages, through sudo unless already root. Fails (status 1, with a
# sentence saying what to install by hand) where neither is possible.
apt_install() {
  local sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "cannot install $* (not root, and no sudo): install them with your package manager, then run this again" >&2
      return 1
    fi
    sudo_cmd=(sudo)
  fi
  printf '\n==> installing %s with apt-get\n' "$*" >&2
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$@"
}

# ocr_deps_missing: prints, one per line, the Debian packages porter's OCR
# needs and this machine lacks: Tesseract (its library, libtesseract5, which
# porter loads when OCR is first needed) and its English and orientation
# data. Building porter needs none of them, only a C compiler (for libgit2,
# SQLite and the compressors): without Tesseract, porter runs and says that
# OCR is unavailable where it would have read a scan.
ocr_deps_missing() {
  command -v tesseract >/dev/null 2>&1 || echo tesseract-ocr
  ls /usr/share/tesseract-ocr/*/tessdata/eng.traineddata >/dev/null 2>&1 || echo tesseract-ocr-eng
  ls /usr/share/tesseract-ocr/*/tessdata/osd.traineddata >/dev/null 2>&1 || echo tesseract-ocr-osd
  return 0
}

# install_ocr_deps: installs whatever ocr_deps_missing names.
install_ocr_deps() {
  local missing
  mapfile -t missing < <(ocr_deps_missing)
  [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
}

# Garage, the S3-compatible object store the inbox's S3 tests run against
# (AGPL: only ever run as a separate process), is built once with
# `cargo install` into a cache outside the clone, where later runs find it.
# A cold build compiles about 290 crates, so it starts as early as it can
# (.ci/run starts it before clippy), in the background at low priority, and
# the tests wait for it only when they need it. The build holds a lock on
# build.lock in the cache for as long as it runs, so a second script finds it
# running instead of starting another, and waiting is taking that lock.
# PORTER_SKIP_S3=1 skips the build (and the S3 tests); PORTER_GARAGE names
# another binary.
garage_root=${PORTER_GARAGE_ROOT:-$HOME/.cache/porter/garage}
export PORTER_GARAGE=${PORTER_GARAGE:-$garage_root/bin/garage}

start_garage_build() {
  { [ "${PORTER_SKIP_S3:-}" != 1 ] && [ ! -x "$PORTER_GARAGE" ]; } || return 0
  mkdir -p "$garage_root"
  local lock
  exec {lock}>"$garage_root/build.lock"
  if ! flock -n "$lock"; then
    exec {lock}>&-
    return 0
  fi
  printf '\n==> building Garage 2.5.0 into %s in the background (log: %s)\n' \
    "$garage_root" "$garage_root/install.log" >&2
  # Its own temporary target dir (removed when done), never the project's.
  # Optimised at level 1, not 3: the tests store a few small objects, and the
  # lighter optimisation takes a good part off the longest build of a cold run.
  env -u CARGO_TARGET_DIR CARGO_PROFILE_RELEASE_OPT_LEVEL=1 nice -n 10 \
    cargo install garage --version 2.5.0 --locked \
    --root "$garage_root" >"$garage_root/install.log" 2>&1 &
  # The build's copy of the lock is the only one left: it ends with the build.
  exec {lock}>&-
}

wait_for_garage() {
  [ "${PORTER_SKIP_S3:-}" != 1 ] || return 0
  if [ -e "$garage_root/build.lock" ] && ! flock -n "$garage_root/build.lock" true; then
    printf '\n==> waiting for the Garage build to finish\n' >&2
    flock "$garage_root/build.lock" true
  fi
  if [ ! -x "$PORTER_GARAGE" ]; then
    tail -n 30 "$garage_root/install.log" >&2 2>/dev/null || true
    echo "no Garage at $PORTER_GARAGE: its build failed or never ran (log: $garage_root/install.log); run again to build it, or set PORTER_SKIP_S3=1 to run without the S3 tests" >&2
    return 1
  fi
}
