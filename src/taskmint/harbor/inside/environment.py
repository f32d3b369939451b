"""Digests of the environment a Harbor grader runs in: taken at export, checked at grading.

It is shipped into each exported task's tests/ as `environment.py`, beside `grade.py`, and runs
on both sides with nothing but the standard library:

- at export (`taskmint.harbor.digest`), in a container of the task's environment image, as
  `python -I -B environment.py probe --tool bash ...` under the interpreter the tests use: it
  prints the manifest, a JSON object naming every file the grading trusts with its sha256 (or
  its link target, or its absence): the trees of the interpreter (its venv, its standard
  library, every folder and archive on its `sys.path`, whatever a `.pth` file,
  `sitecustomize` or `usercustomize` would come from), the interpreter's binary and every
  shared library it maps once it has imported what the grader and pytest import, the tools the
  grader and `test.sh` call (bash, sha256sum, node) and their libraries, and the dynamic
  loader's configuration (`/etc/ld.so.preload` must stay absent);
- at grading, `grade.py` (itself under `python -I -S`, which reads no site-packages and no
  `.pth`) calls `check(manifest, removed=[])`, which lists every difference: a changed, new
  or missing file in a tree (new `.py`, `.pth`, `.pyc` or `.so` files shadow modules, so
  nothing new is allowed), a link pointing elsewhere, a folder on the way replaced by a link.
  Bytecode caches are digested too, but a cache file that differs from the export's (or is
  new, or gone) is removed before the tests run, as root, not flagged: a root agent's own
  `python` writes caches, and the interpreter compiles again from the checked source. The
  grader itself reads no cache (`pycache_prefix` on a folder that cannot exist), since it
  starts before the check; `.opt-N.pyc` files, read only under `-O`, are left alone.

What this cannot see: a root agent that replaces bash (which runs `test.sh`), the dynamic
loader or the C library can make every check in the container lie. Harbor's separate verifier
environment (a fresh container from the pristine image) is the defence against that agent;
this check is the defence in depth of a harness that shares the agent's container.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import subprocess
import sys
from typing import Any

VERSION = 1
CACHE_DIR = "__pycache__"
# the dynamic loader's configuration; ld.so.preload must not exist
LOADER_FILES = ("/etc/ld.so.preload", "/etc/ld.so.cache", "/etc/ld.so.conf")
LOADER_TREES = ("/etc/ld.so.conf.d",)
# what the grader imports (the probe maps their shared libraries)
GRADER_MODULES = (
    "contextlib",
    "difflib",
    "hashlib",
    "importlib.util",
    "json",
    "posixpath",
    "secrets",
    "shutil",
    "signal",
    "subprocess",
    "tarfile",
    "tempfile",
    "bz2",
    "lzma",
    "zlib",
)
_CHUNK = 1 << 20


# --- one path's state ------------------------------------------------------------------------


def state(path: str) -> str:
    """What `path` is: "absent", "link:<target>", "dir", "sha256:<hex>" or "other"."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "absent"
    except NotADirectoryError:
        return "absent"
    if stat.S_ISLNK(info.st_mode):
        return "link:" + os.readlink(path)
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if not stat.S_ISREG(info.st_mode):
        return "other"
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def _unread(dirpath: str, name: str) -> bool:
    """A cache file only an optimizing interpreter (`-O`) reads."""
    return os.path.basename(dirpath) == CACHE_DIR and ".opt-" in name


def _in_cache(path: str) -> bool:
    return os.path.basename(os.path.dirname(path)) == CACHE_DIR


def walk(root: str) -> dict[str, str]:
    """path -> state of everything under `root` (links not followed; `.opt-N.pyc` left out),
    the folders included."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in dirnames:
            path = os.path.join(dirpath, name)
            out[path] = state(path) if os.path.islink(path) else "dir"
        for name in filenames:
            if not _unread(dirpath, name):
                path = os.path.join(dirpath, name)
                out[path] = state(path)
    return out


# --- export: the probe -----------------------------------------------------------------------


def _mapped_files() -> list[str]:
    """The files this process maps (the interpreter, libpython, the C library, the loader,
    the extension modules imported so far)."""
    out = []
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].startswith("/") and "(deleted)" not in parts[5]:
                out.append(parts[5].strip())
    return sorted({p for p in out if not p.startswith(("/dev/", "/proc/", "/memfd:"))})


def _libraries(tool: str) -> list[str]:
    """The shared libraries the dynamic loader gives `tool` (what `ldd` prints)."""
    try:
        proc = subprocess.run(
            [tool],
            env={"LD_TRACE_LOADED_OBJECTS": "1", "PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    out = []
    for line in proc.stdout.splitlines():
        words = line.split()
        for word in words:
            if word.startswith("/"):
                out.append(word)
                break
    return out


def _which(name: str) -> str | None:
    for folder in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.realpath(path)
    return None


def probe(tools: list[str]) -> dict[str, Any]:
    """The manifest of this interpreter's environment and of `tools` (names looked up in the
    usual folders, or absolute paths); run under the interpreter the tests use, with its site
    on (so `sys.path` is theirs), after importing the grader's modules and pytest."""
    for name in GRADER_MODULES:
        __import__(name)
    with contextlib.suppress(ImportError):
        __import__("pytest")
    python = os.path.realpath(sys.executable)
    mapped = _mapped_files()
    trees = {os.path.realpath(sys.prefix)}
    files = {python, *(os.path.realpath(p) for p in mapped), *LOADER_FILES}
    stdlib = os.path.dirname(os.path.realpath(os.__file__))
    trees.add(stdlib)
    for entry in sys.path:
        if not entry:
            continue
        real = os.path.realpath(entry)
        (trees if os.path.isdir(real) else files).add(real)
    found: dict[str, str] = {}
    for name in tools:
        path = os.path.realpath(name) if name.startswith("/") else _which(name)
        if path is None or not os.path.isfile(path):
            continue
        found[os.path.basename(name)] = path
        files.add(path)
        files.update(os.path.realpath(p) for p in _libraries(path))
    trees.update(t for t in LOADER_TREES if os.path.isdir(t))
    # a tree inside another is walked once
    roots = sorted(t for t in trees if not any(t != o and t.startswith(o + "/") for o in trees))
    entries: dict[str, str] = {}
    for root in roots:
        entries[root] = state(root)
        entries.update(walk(root))
    for path in sorted(files):
        entries.setdefault(path, state(path))
    return {
        "version": VERSION,
        "python": python,
        "tools": found,
        # what test.sh checks with sha256sum before it runs the interpreter
        "bootstrap": sorted(
            p for p in {python, *mapped} if entries.get(p, "").startswith("sha256:")
        ),
        "trees": roots,
        "entries": entries,
    }


# --- grading: the check ----------------------------------------------------------------------


def check(manifest: dict[str, Any], removed: list[str] | None = None) -> list[str]:
    """Every difference between this environment and `manifest`, one "path: what" line each
    (an empty list: nothing changed). With `removed` (a list), a bytecode cache file that
    differs is deleted and its path added there instead (a new `__pycache__` folder is no
    difference then)."""
    entries: dict[str, str] = manifest["entries"]
    problems: list[str] = []

    def differs(path: str, want: str, got: str) -> None:
        if got == want:
            return
        if removed is not None and _in_cache(path):
            if got not in ("absent", "dir"):  # a missing cache costs a compile, nothing more
                try:
                    os.unlink(path)
                except OSError as exc:
                    problems.append(f"{path}: bytecode that cannot be removed ({exc.strerror})")
                else:
                    removed.append(path)
            return
        new_cache = (want, got) == ("absent", "dir") and os.path.basename(path) == CACHE_DIR
        if removed is not None and new_cache:
            return
        if want == "absent":
            problems.append(f"{path}: new")
        elif got == "absent":
            problems.append(f"{path}: missing")
        elif got.startswith("link:"):
            problems.append(f"{path}: now a link to {got[5:]}")
        elif want.startswith("link:"):
            problems.append(f"{path}: no longer a link")
        else:
            problems.append(f"{path}: changed")

    seen: set[str] = set()
    for root in manifest["trees"]:
        # a folder on the way to the tree replaced by a link would move the whole tree
        if os.path.realpath(root) != root and entries.get(root) == "dir":
            problems.append(f"{root}: now reached through a link ({os.path.realpath(root)})")
            seen.update(p for p in entries if p == root or p.startswith(root + "/"))
            continue
        seen.add(root)
        got_root = state(root)
        differs(root, entries.get(root, "absent"), got_root)
        if got_root != "dir":
            continue
        for path, got in walk(root).items():
            seen.add(path)
            differs(path, entries.get(path, "absent"), got)
    for path, want in entries.items():
        if path in seen:
            continue
        parent = os.path.dirname(path)
        if want != "absent" and os.path.realpath(parent) != parent:
            problems.append(f"{path}: now reached through a link ({os.path.realpath(parent)})")
            continue
        differs(path, want, state(path))
    return problems


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "probe":
        tools = [argv[i + 1] for i in range(1, len(argv) - 1) if argv[i] == "--tool"]
        json.dump(probe(tools), sys.stdout, sort_keys=True)
        sys.stdout.write("\n")
        return 0
    if len(argv) == 2 and argv[0] == "check":
        with open(argv[1], encoding="utf-8") as fh:
            problems = check(json.load(fh))
        for line in problems:
            print(line)
        return 1 if problems else 0
    print("usage: environment.py probe [--tool NAME]... | check MANIFEST", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
