"""The clone benchmark behind `bench/git/run` (see README.md)."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "gateway"))
sys.path.insert(0, str(HERE.parent))

from benchlib import gateway_pid, stat_fields, status_kib  # noqa: E402
from harness import all_text, stdio_gateway, write_config  # noqa: E402

ITER = int(os.environ.get("ITER", "3"))
FILES = int(os.environ.get("FILES", "20000"))
COMMITS = int(os.environ.get("COMMITS", "2000"))
# Bump when the generator changes, so a cached repository is rebuilt.
RECIPE = f"v1 files={FILES} commits={COMMITS}"
TARGET_RATIO = 1.5

WORDS = (
    "the of and to in is that for it as with was on be by this are at from or an have not "
    "but which one all were when we there can more if will out so up said what its about "
    "than into them only some could time these two may first then do any like my now over "
    "such our man me even most made after also did many before must through back years "
    "where much your way well down should because each just those people how too little "
    "state good very make world still own see men work long get here between both life "
    "being under never day same another know while last might us great old year off come "
    "since against go came right used take three fn let mut pub struct impl return match "
    "Some None Ok Err self use mod crate async await loop break continue where type trait"
).split()
EXTENSIONS = ["rs", "py", "md", "txt", "json", "c", "h", "toml", "yaml", "js"]


def git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "LANG": "C",
    }


def text(rng: random.Random, size: int) -> bytes:
    """About `size` bytes of word-salad lines: compresses like source code."""
    lines = []
    total = 0
    while total < size:
        line = " ".join(rng.choices(WORDS, k=rng.randint(3, 14)))
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def file_size(rng: random.Random) -> int:
    """Mostly small text files, some of a few KiB, a few of tens of KiB."""
    roll = rng.random()
    if roll < 0.70:
        return rng.randint(200, 2_000)
    if roll < 0.95:
        return rng.randint(2_000, 8_000)
    return rng.randint(16_000, 64_000)


def layout(rng: random.Random) -> list[str]:
    """`FILES` paths in a few hundred folders, two and three levels deep."""
    folders = []
    for top in range(12):
        for mid in range(rng.randint(12, 24)):
            folders.append(f"area{top:02}/mod{mid:02}")
            if rng.random() < 0.4:
                folders.append(f"area{top:02}/mod{mid:02}/sub{rng.randint(0, 9)}")
    folders = sorted(set(folders))
    paths = set()
    while len(paths) < FILES:
        folder = rng.choice(folders)
        paths.add(f"{folder}/file{rng.randint(0, 999_999):06}.{rng.choice(EXTENSIONS)}")
    return sorted(paths)


def fast_import_stream(out) -> None:  # noqa: ANN001
    """Writes the history to `out`: one commit adding every file, then
    `COMMITS - 1` commits each changing, adding or removing a handful."""
    rng = random.Random(9)
    paths = layout(rng)
    contents = {path: text(rng, file_size(rng)) for path in paths}
    when = 1_700_000_000

    def commit(number: int, changes: list[tuple[str, bytes | None]]) -> None:
        message = f"Change {number}: {len(changes)} file(s)\n".encode()
        stamp = when + number * 600
        out.write(b"commit refs/heads/main\n")
        out.write(b"author Bench <bench@example.invalid> %d +0000\n" % stamp)
        out.write(b"committer Bench <bench@example.invalid> %d +0000\n" % stamp)
        out.write(b"data %d\n" % len(message))
        out.write(message)
        if number == 1:
            out.write(b"deleteall\n")
        for path, data in changes:
            if data is None:
                out.write(b"D %s\n" % path.encode())
            else:
                out.write(b"M 100644 inline %s\n" % path.encode())
                out.write(b"data %d\n" % len(data))
                out.write(data)
                out.write(b"\n")
        out.write(b"\n")

    commit(1, [(path, contents[path]) for path in paths])
    live = list(paths)
    for number in range(2, COMMITS + 1):
        changes: list[tuple[str, bytes | None]] = []
        for _ in range(rng.randint(2, 8)):
            path = rng.choice(live)
            lines = contents[path].split(b"\n")
            at = rng.randint(0, len(lines))
            lines[at:at] = [text(rng, 60).rstrip(b"\n")]
            if rng.random() < 0.3 and len(lines) > 4:
                del lines[rng.randint(0, len(lines) - 1)]
            contents[path] = b"\n".join(lines)
            changes.append((path, contents[path]))
        # Now and then a file comes and another goes, keeping the count.
        if rng.random() < 0.05:
            gone = rng.choice(live)
            live.remove(gone)
            del contents[gone]
            changes = [(p, d) for p, d in changes if p != gone] + [(gone, None)]
            new = gone.rsplit("/", 1)[0] + f"/new{number:05}.txt"
            contents[new] = text(rng, file_size(rng))
            live.append(new)
            changes.append((new, contents[new]))
        commit(number, changes)


def make_repo(bare: Path) -> None:
    """The benchmark's bare repository, generated once and kept."""
    stamp = bare / "porter-bench-recipe"
    if stamp.exists() and stamp.read_text() == RECIPE:
        return
    shutil.rmtree(bare, ignore_errors=True)
    bare.parent.mkdir(parents=True, exist_ok=True)
    env = git_env(bare.parent)
    print(f"generating {bare} ({FILES} files, {COMMITS} commits) ...", flush=True)
    started = time.perf_counter()
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], env=env, check=True)
    importer = subprocess.Popen(
        ["git", "fast-import", "--quiet"], cwd=bare, env=env, stdin=subprocess.PIPE
    )
    assert importer.stdin is not None
    fast_import_stream(importer.stdin)
    importer.stdin.close()
    if importer.wait() != 0:
        raise RuntimeError("git fast-import failed")
    # One well-deltified pack, as a real server would have.
    subprocess.run(["git", "repack", "-q", "-a", "-d", "-f"], cwd=bare, env=env, check=True)
    subprocess.run(["git", "prune-packed"], cwd=bare, env=env, check=True)
    stamp.write_text(RECIPE)
    print(f"generated in {time.perf_counter() - started:.1f}s", flush=True)


def describe(bare: Path) -> str:
    env = git_env(bare.parent)

    def out(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=bare, env=env, check=True, capture_output=True, text=True).stdout

    commits = out("rev-list", "--count", "main").strip()
    files = len(out("ls-tree", "-r", "--name-only", "main").splitlines())
    pack = sum(p.stat().st_size for p in (bare / "objects" / "pack").glob("*.pack"))
    worktree = sum(int(line.split()[3]) for line in out("ls-tree", "-r", "-l", "main").splitlines())
    return (
        f"{files} files ({worktree / 2**20:.1f} MiB checked out), {commits} commits, "
        f"pack {pack / 2**20:.1f} MiB"
    )


class GitServer:
    """`tests/git/https_server.py` on loopback, running until closed."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.proc = subprocess.Popen(
            [sys.executable, str(REPO / "tests" / "git" / "https_server.py"), str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("port "):
            raise RuntimeError(f"the git server did not start: {line!r}")
        self.port = int(line.split()[1])

    def url(self, name: str) -> str:
        return f"https://127.0.0.1:{self.port}/{name}"

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def timed_git_clone(url: str, dest: Path, ca: Path, home: Path) -> tuple[float, float, int]:
    """`git clone` into `dest`: seconds, CPU seconds and peak RSS in KiB
    (CPU summed over, RSS the largest of, git and the children it waited
    for: git-remote-https, index-pack)."""
    env = {**git_env(home), "GIT_SSL_CAINFO": str(ca)}
    started = time.perf_counter()
    proc = subprocess.Popen(["git", "clone", "-q", url, str(dest)], env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"git clone failed with {proc.returncode}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def cpu_seconds(pid: int) -> float:
    """User plus system time of every thread of `pid` so far."""
    fields = stat_fields(Path(f"/proc/{pid}/stat").read_text())
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def work_tree_files(repo: Path) -> int:
    count = 0
    for folder, dirs, files in os.walk(repo):
        if Path(folder) == repo and ".git" in dirs:
            dirs.remove(".git")
        count += len(files)
    return count


def check_equal(reference: Path, ours: Path, home: Path) -> list[str]:
    """What differs between git's clone and porter's, read by real git."""
    env = git_env(home)

    def out(repo: Path, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout

    problems = []
    heads = [out(repo, "rev-parse", "HEAD").strip() for repo in (reference, ours)]
    if heads[0] != heads[1]:
        problems.append(f"HEAD differs: git {heads[0]}, porter {heads[1]}")
    dirty = out(ours, "status", "--porcelain")
    if dirty:
        problems.append(f"porter's clone is not clean: {dirty[:500]!r}")
    counts = [work_tree_files(repo) for repo in (reference, ours)]
    if counts[0] != counts[1]:
        problems.append(f"file count differs: git {counts[0]}, porter {counts[1]}")
    return problems


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def run(work: Path, server: GitServer, url: str) -> None:
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    ca = server.root / "ca.pem"
    # Every clone is kept until the end: ext4 skips, slowly, the inodes
    # freed in the last minutes when it allocates new ones, so deleting
    # 20,000 files between rounds would slow the next round's writes.
    clones = work / "clones"
    shutil.rmtree(clones, ignore_errors=True)
    clones.mkdir(parents=True)
    volume = clones / "porter"
    volume.mkdir()
    config = write_config(
        work / "gw",
        extra={
            "mcp_servers": {},
            "volumes": {"work": {"path": str(volume), "mode": "rw"}},
            "profiles": {"default": {"grants": ["Git"], "volumes": ["work"], "git_remote": ["fetch"]}},
            "http": {"private_hosts": ["127.0.0.1"], "ca_files": [str(ca)]},
            "git": {"fetch_hosts": ["127.0.0.1"]},
        },
    )
    git_times: list[float] = []
    git_cpu: list[float] = []
    git_rss: list[int] = []
    porter_times: list[float] = []
    porter_cpu: list[float] = []
    print(f"load average before: {load()}", flush=True)
    async with stdio_gateway(work / "gw", config) as served:
        pid = gateway_pid(config)
        idle = status_kib(pid, "VmRSS")
        for round_ in range(ITER):
            dest = clones / f"git-{round_}"
            elapsed, cpu, rss = await asyncio.to_thread(timed_git_clone, url, dest, ca, home)
            git_times.append(elapsed)
            git_cpu.append(cpu)
            git_rss.append(rss)
            name = f"clone-{round_}"
            cpu = cpu_seconds(pid)
            started = time.perf_counter()
            result = await served.client.call_tool("Git", {"op": "clone", "repo": f"volume:work:{name}", "url": url})
            elapsed = time.perf_counter() - started
            porter_cpu.append(cpu_seconds(pid) - cpu)
            if result.is_error:
                raise RuntimeError(f"porter's clone failed: {all_text(result)}")
            porter_times.append(elapsed)
            print(
                f"round {round_ + 1}: git {git_times[-1]:.2f}s (CPU {git_cpu[-1]:.2f}s), "
                f"porter {elapsed:.2f}s (CPU {porter_cpu[-1]:.2f}s)",
                flush=True,
            )
            problems = await asyncio.to_thread(check_equal, dest, volume / name, home)
            if problems:
                raise RuntimeError("the clones differ: " + "; ".join(problems))
        peak = status_kib(pid, "VmHWM")
    print(f"load average after: {load()}")
    best_git, best_porter = min(git_times), min(porter_times)
    ratio = best_porter / best_git
    print(f"clone of {url}, best of {ITER} per side, alternating")
    print(f"git clone:    {best_git:6.2f}s  ({', '.join(f'{t:.2f}s' for t in git_times)})")
    print(f"porter clone: {best_porter:6.2f}s  ({', '.join(f'{t:.2f}s' for t in porter_times)})")
    print(f"ratio porter/git: {ratio:.2f} (target <= {TARGET_RATIO}) {'ok' if ratio <= TARGET_RATIO else 'MISSED'}")
    cpu_ratio = min(porter_cpu) / min(git_cpu)
    print(f"CPU time, best: git {min(git_cpu):.2f}s, porter {min(porter_cpu):.2f}s, ratio {cpu_ratio:.2f}")
    print(f"git peak RSS (ru_maxrss, largest process): {max(git_rss) / 1024:.1f} MiB")
    print(f"gateway peak RSS (VmHWM): {peak / 1024:.1f} MiB (idle before the first clone: {idle / 1024:.1f} MiB)")
    print("both clones: same HEAD, same file count, porter's clean in `git status`")
    if os.environ.get("STRICT") and ratio > TARGET_RATIO:
        sys.exit(1)


def main() -> None:
    work = Path(os.environ.get("BENCH_DIR", REPO / "target" / "bench-git"))
    server_root = work / "server"
    bare = server_root / "repos" / "bench.git"
    make_repo(bare)
    print(f"repository: {describe(bare)}", flush=True)
    shutil.rmtree(work / "gw", ignore_errors=True)
    server = GitServer(server_root)
    try:
        asyncio.run(run(work, server, server.url("bench.git")))
    finally:
        server.close()
        shutil.rmtree(work / "gw", ignore_errors=True)
        shutil.rmtree(work / "clones", ignore_errors=True)


if __name__ == "__main__":
    main()
