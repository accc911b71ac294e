# Sourced by scripts/test, the tests' run scripts and the benches that use
# the repo's venv. One function:
#
#   python_peers VENV NAME REQUIREMENTS...
#
# makes VENV if it is missing and installs the requirement files into it,
# every package (the ones they name and everything those pull in) held to
# the versions in scripts/constraints.txt. It installs again only when the
# files or the constraints changed since the last install of NAME.
#
# Why every package is held: a requirement file pins the peer, not what the
# peer pulls in. lxml 6.2.0, released after a green run, made markitdown
# 0.1.9 refuse every .docx ("Could not find the body element"), with no
# change here. To move a version on purpose, edit constraints.txt (or
# regenerate it with `pip freeze` from a venv that passed the whole suite).

python_peers() {
  local venv=$1 name=$2
  shift 2
  local constraints
  constraints="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/constraints.txt"
  local marker="$venv/.porter-$name"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  local wanted
  wanted="$(cat "$@" "$constraints")"
  if [ "$(cat "$marker" 2>/dev/null)" != "$wanted" ]; then
    local args=() file
    for file in "$@"; do
      args+=(-r "$file")
    done
    "$venv/bin/pip" install -q --disable-pip-version-check -c "$constraints" "${args[@]}"
    unheld_packages "$venv" "$constraints"
    printf '%s' "$wanted" >"$marker"
  fi
}

# Fails, naming them, when the venv holds a package that constraints.txt
# does not pin: a requirement added without its dependencies' versions.
unheld_packages() {
  "$1/bin/python" - "$2" <<'PY'
import re, sys
from importlib.metadata import distributions

def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()

pinned = set()
with open(sys.argv[1]) as constraints:
    for line in constraints:
        line = line.split("#", 1)[0].strip()
        if line:
            pinned.add(canonical(re.split(r"[=<>!~ \[;]", line, 1)[0]))
tools = {"pip", "setuptools", "wheel"}
unheld = sorted(
    {f"{d.metadata['Name']}=={d.version}" for d in distributions()
     if canonical(d.metadata["Name"]) not in pinned | tools}
)
if unheld:
    sys.exit(
        "these packages in the venv have no version in scripts/constraints.txt: "
        + ", ".join(unheld)
        + ". Add each as it is named here (the version pip chose), run the whole suite, "
        "and commit; or, if they are left from an earlier install, remove the venv and run again."
    )
PY
}
