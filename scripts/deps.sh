# Sourced by scripts/demo, scripts/test and .ci/run: what building porter
# needs from the system, and one way to install Debian packages.

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

# build_deps_missing: prints, one per line, the Debian packages that
# building porter with its default features needs and this machine lacks:
# Tesseract's and Leptonica's headers and pkg-config to find them, libclang
# and clang for the bindings generated at build time (porter-fileview's
# `ocr` feature), and Tesseract's English and orientation data, which OCR
# reads when it runs.
build_deps_missing() {
  command -v pkg-config >/dev/null 2>&1 || echo pkg-config
  pkg-config --exists tesseract 2>/dev/null || echo libtesseract-dev
  pkg-config --exists lept 2>/dev/null || echo libleptonica-dev
  command -v tesseract >/dev/null 2>&1 || echo tesseract-ocr
  ls /usr/share/tesseract-ocr/*/tessdata/eng.traineddata >/dev/null 2>&1 || echo tesseract-ocr-eng
  ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 || echo libclang-dev
  command -v clang >/dev/null 2>&1 || echo clang
  return 0
}

# install_build_deps: installs whatever build_deps_missing names.
install_build_deps() {
  local missing
  mapfile -t missing < <(build_deps_missing)
  [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
}
