#!/usr/bin/env python3
"""Finds files inside a crate that use each other, directly or around a loop.

    scripts/module_cycles.py [--why] [ROOT]    check every crate under ROOT
    scripts/module_cycles.py --self-test       check the checker itself

A file depends on another when it names an item of the other's module by a
path: `crate::a::b`, `super::b`, `self::a::b`, or, from a module into a
child module it declares, `child::b`. Two exceptions, because neither makes
the files depend on each other: a `pub use` line only publishes an item
under another name, and a `mod` line only declares the child. Test modules
(`#[cfg(test)] mod tests { ... }`, or a `#[cfg(test)] mod x;` file) are left
out: a test may use anything. A path that names a re-export is taken at its
word (the file that re-exports it), so an item is best named from its home.

Every group of files that reach each other is printed, one line a group,
and the exit status is 1 when there is one. With --why, each dependency
inside a group is printed under it with the paths that make it.
"""

import os
import re
import sys
import tempfile

COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
STRING = re.compile(r'b?"(?:\\.|[^"\\])*"|b?r(#*)".*?"\1', re.S)
CFG_TEST = re.compile(r"#\[cfg\([^\]]*\btest\b[^\]]*\)\]\s*(?:#\[[^\]]*\]\s*)*")
MOD_BLOCK = re.compile(r"(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*\{")
MOD_FILE = re.compile(r"(?m)^\s*(#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")
USE = re.compile(r"\buse\s+([^;]+);")
PUB_USE = re.compile(r"(?m)^\s*pub(?:\([^)]*\))?\s+use\s+[^;]+;")
PATH = re.compile(r"(?<![\w:])(?:crate|super|self)(?:::(?:\w+))+")


def modules(src):
    """Each module path (a tuple) of the crate rooted in `src`, with its file."""
    out = {}
    for folder, _, names in os.walk(src):
        for name in names:
            if not name.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(folder, name), src)[:-3].split(os.sep)
            if rel[0] == "bin":
                continue
            if rel[-1] == "mod":
                rel = rel[:-1]
            if rel in (["lib"], ["main"]):
                rel = []
            out[tuple(rel)] = os.path.join(folder, name)
    return out


def cut_test_blocks(text):
    """The text without `#[cfg(test)]` inline modules; and the names of
    modules declared in a file of their own under `#[cfg(test)]`."""
    test_files = set()
    while True:
        found = None
        for attr in CFG_TEST.finditer(text):
            block = MOD_BLOCK.match(text, attr.end())
            if block:
                found = (attr.start(), block.end())
                break
            line = MOD_FILE.match(text, attr.start())
            if line:
                test_files.add(line.group(2))
        if not found:
            return text, test_files
        start, at = found
        depth = 1
        while at < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[at], 0)
            at += 1
        text = text[:start] + text[at:]


def expand(tree):
    """`a::{b, c::{d, self}}` as the paths a::b, a::c::d, a::c."""
    tree = re.sub(r"\s+", "", tree)
    brace = tree.find("{")
    if brace < 0:
        return [re.sub(r"as\w+$", "", tree) if "::" in tree else tree]
    head, body = tree[: brace - 2], tree[brace + 1 : tree.rindex("}")]
    parts, depth, part = [], 0, ""
    for c in body:
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += c
    parts.append(part)
    out = []
    for part in filter(None, parts):
        out += [head] if part == "self" else expand(f"{head}::{part}")
    return out


def absolute(module, path):
    """A `crate::`/`super::`/`self::` path from `module` as a list of names."""
    names = path.split("::")
    if names[0] == "crate":
        return names[1:]
    here = list(module)
    while names and names[0] in ("self", "super"):
        if names.pop(0) == "super":
            here = here[:-1]
    return here + names


def dependencies(mods):
    """Each module's dependencies, and the paths behind each."""
    deps = {m: {} for m in mods}
    skipped = set()
    for module in sorted(mods):
        if module in skipped:
            continue
        with open(mods[module], encoding="utf-8", errors="replace") as f:
            text = f.read()
        text = STRING.sub('""', COMMENT.sub("", text))
        text, test_files = cut_test_blocks(text)
        for name in test_files:
            skipped.update(m for m in mods if m[: len(module) + 1] == module + (name,))
        text = MOD_FILE.sub("", text)
        body = PUB_USE.sub("", text)
        paths = []
        for use in USE.finditer(body):
            paths += [p for p in expand(use.group(1)) if p.split("::")[0] in ("crate", "super", "self")]
        paths += PATH.findall(body)
        children = {m[-1] for m in mods if len(m) == len(module) + 1 and m[:-1] == module}
        for child in children:
            for use in USE.finditer(body):
                paths += [f"self::{p}" for p in expand(use.group(1)) if p.split("::")[0] == child]
            paths += [f"self::{p}" for p in re.findall(rf"(?<![\w:]){child}::\w+", body)]
        for path in paths:
            names = absolute(module, path)
            for n in range(len(names), -1, -1):
                target = tuple(names[:n])
                if target in mods:
                    break
            if target != module:
                deps[module].setdefault(target, set()).add(path)
    for module in skipped:
        deps.pop(module, None)
    for module in deps:
        for gone in skipped & deps[module].keys():
            del deps[module][gone]
    return deps


def groups(deps):
    """The strongly connected groups of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in deps[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(100_000)
    for v in sorted(deps):
        if v not in index:
            visit(v)
    return out


def crate_sources(root):
    for base in (os.path.join(root, "crates"), root):
        if not os.path.isdir(base):
            continue
        for name in sorted(os.listdir(base)):
            src = os.path.join(base, name, "src")
            if os.path.isfile(os.path.join(base, name, "Cargo.toml")) and os.path.isdir(src):
                yield name, src
    if os.path.isfile(os.path.join(root, "Cargo.toml")) and os.path.isdir(os.path.join(root, "src")):
        yield os.path.basename(os.path.abspath(root)), os.path.join(root, "src")


def shown(module):
    return "::".join(module) or "(crate root)"


def check(root, why=False, out=sys.stdout):
    found = 0
    for name, src in crate_sources(root):
        deps = dependencies(modules(src))
        for group in groups(deps):
            found += 1
            print(f"{name}: {' <-> '.join(shown(m) for m in group)}", file=out)
            if why:
                for a in group:
                    for b in group:
                        if b in deps[a]:
                            print(f"    {shown(a)} -> {shown(b)}: {', '.join(sorted(deps[a][b]))}", file=out)
    return found


def self_test():
    def crate(files):
        root = tempfile.mkdtemp(prefix="module-cycles-")
        for path, text in {"crates/a/Cargo.toml": "[package]\n", **files}.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        return root

    class Sink:
        def write(self, _):
            pass

    cases = [
        ("two siblings using each other", 1, {
            "crates/a/src/lib.rs": "mod x;\nmod y;\n",
            "crates/a/src/x.rs": "use crate::y::f;\npub fn g() { f() }\n",
            "crates/a/src/y.rs": "pub fn f() { crate::x::g() }\n",
        }),
        ("a root calling a child that uses the root", 1, {
            "crates/a/src/lib.rs": "mod m;\npub struct T;\npub fn f() { m::g() }\n",
            "crates/a/src/m.rs": "use crate::T;\npub fn g() {}\n",
        }),
        ("a use tree reaching back through super", 1, {
            "crates/a/src/lib.rs": "mod p;\n",
            "crates/a/src/p/mod.rs": "mod q;\nuse q::{self as qq, Q};\npub struct P;\n",
            "crates/a/src/p/q.rs": "use super::{P};\npub struct Q;\n",
        }),
        ("re-exports, declarations, comments, strings and tests", 0, {
            "crates/a/src/lib.rs": "mod m;\nmod n;\n#[cfg(test)]\nmod more_tests;\npub use m::T;\n",
            "crates/a/src/m.rs": "/// Not [`crate::n::U`]; // crate::n::U\npub struct T;\n"
            "const S: &str = \"crate::n::U\";\n"
            "#[cfg(test)]\nmod tests {\n    use crate::n::U;\n    fn f() { if true { } }\n}\n",
            "crates/a/src/n.rs": "use crate::m::T;\npub struct U(T);\n",
            "crates/a/src/more_tests.rs": "use crate::n::U;\nuse crate::m::T;\n",
        }),
    ]
    failed = 0
    for name, expected, files in cases:
        got = check(crate(files), out=Sink())
        if got != expected:
            failed += 1
            print(f"self-test failed: {name}: {got} group(s) found, {expected} expected", file=sys.stderr)
    if not failed:
        print(f"module_cycles self-test: {len(cases)} cases pass")
    return failed


def main(args):
    if "--self-test" in args:
        return 1 if self_test() else 0
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return 0
    why = "--why" in args
    roots = [a for a in args if not a.startswith("-")] or ["."]
    found = sum(check(root, why) for root in roots)
    if found:
        print(f"{found} group(s) of files use each other; move what they share into a file of its own "
              "(see --why for the paths), so that each file only uses files that do not use it back",
              file=sys.stderr)
        return 1
    print("no file uses another that uses it back")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
