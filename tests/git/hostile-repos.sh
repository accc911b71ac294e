#!/usr/bin/env bash
# Builds the hostile repositories porter-git's tests clone, with real git
# (a test fixture: porter itself never starts git). Each is a bare
# repository OUTDIR/<name>.git whose `main` holds one commit.
#
# Usage: hostile-repos.sh OUTDIR [BASE_URL]
#   BASE_URL is where OUTDIR is served (https://127.0.0.1:PORT); the benign
#   control's first submodule points at BASE_URL/sub.git (without it, at
#   the relative ../sub.git).
#
# Trees git's own tools refuse to write (names like `.GIT` or `..`) are
# written as raw tree objects with `git hash-object -t tree --literally`,
# the way a hostile server would send them. Disk use stays small: the
# "2 GiB" case is one 64 MiB blob of zeros (stored compressed) named 32
# times.
#
# Repositories (what each one tests):
#   dot-git-upper   a folder `.GIT` holding hooks/post-checkout
#   dot-git-space   a folder `.git ` (trailing space)
#   git-tilde       a folder `GIT~1` (the NTFS 8.3 name of .git)
#   dotdot          a folder `a` holding an entry named `..`
#   symlink-etc     a symlink `a -> /etc` next to a folder `a` with `passwd`
#   bomb            20 levels of two names for one subtree: 2^20 files
#   sparse-2g       one 64 MiB blob under 32 names: 2 GiB claimed
#   sub-upload-pack a submodule whose url is `--upload-pack=touch pwned`
#   sub-ext         a submodule whose url is `ext::sh -c touch% pwned`
#   sub-file        a submodule whose url is `file:///tmp/x`
#   sub-ssh         a submodule whose url is `ssh://127.0.0.1/sub.git`
#   sub-climb       a submodule whose relative url climbs above the host
#   sub-escape      a submodule whose path is `../escape`
#   sub-name-escape a submodule whose name is `../../../escape` (its gitdir
#                   would be .git/modules/../../../escape)
#   sub             the benign submodule (inner.txt)
#   super           the benign control: submodules lib (BASE_URL/sub.git)
#                   and rel (../sub.git), both at sub's commit
set -euo pipefail

out=${1:?usage: hostile-repos.sh OUTDIR [BASE_URL]}
base=${2:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=Hostile GIT_AUTHOR_EMAIL=hostile@example.org
export GIT_COMMITTER_NAME=Hostile GIT_COMMITTER_EMAIL=hostile@example.org
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'

# The repository being built; every helper below works in it.
repo=

new_repo() {
  repo="$out/$1.git"
  rm -rf "$repo"
  git init -q --bare -b main "$repo"
}

g() { git --git-dir="$repo" "$@"; }

blob() { printf '%s' "$1" | g hash-object -w --stdin; }

# tree "MODE TYPE ID<TAB>NAME"... : a tree git's own mktree accepts.
tree() { printf '%s\n' "$@" | g mktree; }

# raw_tree MODE NAME ID [MODE NAME ID]... : a tree object written byte for
# byte, for names mktree refuses. Entries are written in the order given.
raw_tree() {
  {
    while [ $# -gt 0 ]; do
      printf '%s %s\0' "$1" "$2"
      printf "$(printf '%s' "$3" | sed 's/../\\x&/g')"
      shift 3
    done
  } | g hash-object -t tree --literally -w --stdin
}

# commit TREE: main points at a new commit of TREE.
commit() {
  local id
  id=$(g commit-tree "$1" -m "hostile: $(basename "$repo" .git)")
  g update-ref refs/heads/main "$id"
  echo "$id"
}

readme() { blob "a repository built by hostile-repos.sh"; }

# A folder holding hooks/post-checkout that would touch `pwned`.
hooks_folder() {
  local hook hooks
  hook=$(blob $'#!/bin/sh\ntouch pwned\n')
  hooks=$(tree "100755 blob $hook	post-checkout")
  tree "040000 tree $hooks	hooks"
}

for name in dot-git-upper:.GIT dot-git-space:'.git ' git-tilde:GIT~1; do
  new_repo "${name%%:*}"
  commit "$(raw_tree 40000 "${name#*:}" "$(hooks_folder)" 100644 README "$(readme)")" >/dev/null
done

new_repo dotdot
passwd=$(blob "root:x:0:0::/root:/bin/sh")
inner=$(raw_tree 100644 .. "$passwd")
commit "$(raw_tree 100644 README "$(readme)" 40000 a "$inner")" >/dev/null

new_repo symlink-etc
passwd=$(blob "root:x:0:0::/root:/bin/sh")
link=$(blob /etc)
folder=$(tree "100644 blob $passwd	passwd")
commit "$(raw_tree 100644 README "$(readme)" 120000 a "$link" 40000 a "$folder")" >/dev/null

new_repo bomb
level=$(tree "100644 blob $(blob x)	f")
for _ in $(seq 1 20); do
  level=$(tree "040000 tree $level	a" "040000 tree $level	b")
done
commit "$(tree "100644 blob $(readme)	README" "040000 tree $level	bomb")" >/dev/null

new_repo sparse-2g
zeros=$(head -c $((64 << 20)) /dev/zero | g hash-object -w --stdin)
entries=("100644 blob $(readme)	README")
for n in $(seq -w 1 32); do
  entries+=("100644 blob $zeros	zeros-$n.bin")
done
commit "$(tree "${entries[@]}")" >/dev/null

new_repo sub
sub_commit=$(commit "$(tree "100644 blob $(blob $'inside the submodule\n')	inner.txt")")

# super_with NAME GITMODULES PATH... : a superproject whose .gitmodules is
# GITMODULES and whose tree records sub's commit at each PATH.
super_with() {
  new_repo "$1"
  local gitmodules=$2 entries=()
  shift 2
  entries+=("100644 blob $(readme)	README")
  entries+=("100644 blob $(blob "$gitmodules"$'\n')	.gitmodules")
  for path in "$@"; do
    entries+=("160000 commit $sub_commit	$path")
  done
  commit "$(tree "${entries[@]}")" >/dev/null
}

section() { printf '[submodule "%s"]\n\tpath = %s\n\turl = %s' "$1" "$2" "$3"; }

super_with sub-upload-pack "$(section evil evil '--upload-pack=touch pwned')" evil
super_with sub-ext "$(section evil evil 'ext::sh -c touch% pwned')" evil
super_with sub-file "$(section evil evil 'file:///tmp/x')" evil
super_with sub-ssh "$(section evil evil 'ssh://127.0.0.1/sub.git')" evil
super_with sub-climb "$(section evil evil '../../../../sub.git')" evil
super_with sub-escape "$(section evil ../escape ../sub.git)" evil
super_with sub-name-escape "$(section ../../../escape evil ../sub.git)" evil

lib_url=${base:+$base/sub.git}
super_with super "$(section lib lib "${lib_url:-../sub.git}")
$(section rel rel ../sub.git)" lib rel

echo "hostile repositories in $out"
