"""Where seeds come from: a local folder, a git repository at a commit, a PyPI sdist, a crate
of the Rust crate registry, or a Docker image whose filesystem holds the project.

A seeds manifest lists one `[[seed]]` table per seed, with exactly one of these keys:

    path = "sheetcalc"                                  # a folder, relative to the manifest
    git = "https://host/org/repo.git"  commit = "<40 hex>"   subdir = "optional/sub/folder"
    pypi = "inflection"                version = "0.5.1"
    crate = "semver"                   version = "1.0.28"
    docker = "myimage:tag"             image_path = "/src/app"

and optionally `manifest = "pinned/inflection.toml"`, a `taskmint.toml` to use instead of the
one in the tree (or of the detected one), and `name = "..."`, the seed's name. Without it the
name comes from the source: the repository of a git URL, the distribution, the image, or a
folder's own manifest (see `SeedSource.derived_name`); no two seeds of one manifest share a
name. Every remote source is pinned (a full commit hash, an exact version, an image id at
acquisition), fetched once into `cache/sources/<key>/tree`, and then snapshotted like a local
folder, so the same pin always gives the same `snapshot_id` and the same task ids. A tree
without a `taskmint.toml` gets one detected by its language's profile (`detect_profile`;
Python's: `taskmint.languages.python.detect`), also saved next
to the tree for the user to edit and pin.

Before that, the language's profile prepares every fetched tree while the network is still
allowed (`LanguageProfile.prepare_tree`; acquisition is the only step with the network): a
Rust tree (a git commit of a cargo project, say) gets its Cargo.lock and its dependencies
vendored, dev-dependencies included, so its environment build and every run are offline. A
`crate` entry goes through `taskmint.acquire.rust` (cargo fetches the package, the profile
prepares it). A refusal is a `SourceError` saying what to do; in a refresh it is that seed's
error and the other seeds go on.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from packaging.utils import canonicalize_name

from taskmint.acquire.archive import safe_extract
from taskmint.acquire.manifest import MANIFEST_NAME, parse_manifest, render_manifest
from taskmint.acquire.snapshot import snapshot_tree
from taskmint.errors import ManifestError
from taskmint.languages import DetectError, LanguageProfile, detect_profile, profile, profiles
from taskmint.records import SeedApp, stable_id
from taskmint.scratch import make_staging

__all__ = ["SeedSource", "SourceError", "acquire_source", "fetch_tree", "load_seed_sources"]

SourceKind = Literal["path", "git", "pypi", "crate", "docker"]
_KINDS: tuple[SourceKind, ...] = ("path", "git", "pypi", "crate", "docker")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
# Last components of git URLs that name a hosting convention, not the project
# (`https://host/org/repo.git`): the component before them is the name.
_PLACEHOLDERS = frozenset({"repo", "repository", "src", "source", "code", "git", "mirror"})


class SourceError(ManifestError):
    """A seed's source could not be fetched (bad pin, missing tool, download failure)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedSource:
    """One entry of a seeds manifest: where a seed's tree comes from, pinned."""

    kind: SourceKind
    location: str  # folder, git URL, distribution or crate name, or image reference
    ref: str = ""  # commit (git), version (pypi, crate); "" for a folder or an image
    subdir: str = ""  # git: a folder inside the repository; docker: the project's path
    manifest: str = ""  # an absolute path to a pinned taskmint.toml, or ""
    # The seed's name: the entry's `name = "..."`, else `derived_name` (filled in on creation).
    name: str = ""
    renamed: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.name:
            _check_name(self.name, "a seed source")
            object.__setattr__(self, "renamed", True)
        else:
            object.__setattr__(self, "name", self.derived_name)

    @property
    def derived_name(self) -> str:
        """The name without an override, from the source: a folder's own taskmint.toml [seed]
        name (else the folder's name), the git repository's name (the URL's last component, or
        the one before a placeholder such as `repo`), the distribution's name, or the image's
        (no registry, tag or digest). A pinned manifest may name the seed otherwise: without an
        override, the seed is named by the manifest it runs with."""
        if self.kind == "path":
            return _manifest_name(Path(self.location) / MANIFEST_NAME) or Path(self.location).name
        if self.kind == "pypi":
            return canonicalize_name(self.location)
        if self.kind == "crate":
            return self.location.lower()
        if self.kind == "git":
            parts = [p.removesuffix(".git") for p in re.split(r"[/:]+", self.location) if p]
            last = parts[-1] if parts else ""
            if last.lower() in _PLACEHOLDERS and len(parts) > 1:
                last = parts[-2]
            return _slug(last)
        return _slug(self.location.split("@")[0].rsplit("/", 1)[-1].split(":")[0])

    @property
    def label(self) -> str:
        """A short human name for logs and summaries."""
        if self.kind == "path":
            return Path(self.location).name
        if self.kind == "pypi":
            return f"{self.location}=={self.ref}"
        if self.kind == "crate":
            return f"{self.location} {self.ref}"
        if self.kind == "git":
            repo = self.location.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
            return f"{repo}@{self.ref[:12]}"
        return self.location


def load_seed_sources(path: Path) -> list[SeedSource]:
    """Read a seeds manifest into `SeedSource`s (paths relative to the manifest's folder)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"seeds manifest {path} not found") from None
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ManifestError(f"cannot read seeds manifest {path}: {exc}") from exc
    entries = data.get("seed")
    if not isinstance(entries, list) or not entries:
        raise ManifestError(f"{path}: expected one or more [[seed]] tables")
    sources = [_source(entry, path) for entry in entries]
    _check_unique_names(sources, path)
    return sources


def _check_unique_names(sources: list[SeedSource], path: Path) -> None:
    """Seeds are told apart by name (task ids start with it): no two may share one."""
    seen: dict[str, SeedSource] = {}
    for source in sources:
        key = canonicalize_name(source.name)
        if key in seen:
            raise ManifestError(
                f"{path}: seeds {seen[key].label!r} and {source.label!r} are both named "
                f'{source.name!r}; set `name = "..."` on one of them'
            )
        seen[key] = source


def _check_name(value: object, where: str) -> None:
    if not isinstance(value, str) or not _NAME.match(value):
        raise ManifestError(
            f"{where}: `name` must be a non-empty string of letters, digits, '.', '_' and '-' "
            f"(got {value!r})"
        )


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-") or "seed"


def _manifest_name(path: Path) -> str:
    """The [seed] name of a taskmint.toml, or "" (no file, unreadable, no name)."""
    try:
        seed = tomllib.loads(path.read_text(encoding="utf-8")).get("seed")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ""
    name = seed.get("name") if isinstance(seed, dict) else None
    return name if isinstance(name, str) else ""


def _source(entry: Any, path: Path) -> SeedSource:
    if not isinstance(entry, dict):
        raise ManifestError(f"{path}: every [[seed]] must be a table")
    kinds = [k for k in _KINDS if k in entry]
    if len(kinds) != 1 or not isinstance(entry[kinds[0]], str) or not entry[kinds[0]]:
        raise ManifestError(
            f"{path}: every [[seed]] needs exactly one of {', '.join(_KINDS)} (a string); "
            f"got keys {sorted(entry)}"
        )
    kind = kinds[0]
    value = entry[kind]
    manifest = entry.get("manifest", "")
    if not isinstance(manifest, str):
        raise ManifestError(f"{path}: `manifest` must be a path to a taskmint.toml")
    pinned = str((path.parent / manifest).resolve()) if manifest else ""
    name = entry.get("name", "")
    if "name" in entry:
        _check_name(name, str(path))
    if kind == "path":
        location = str((path.parent / value).resolve())
        return SeedSource(kind="path", location=location, manifest=pinned, name=name)
    if kind == "git":
        commit = entry.get("commit")
        if not isinstance(commit, str) or not _SHA.match(commit):
            raise ManifestError(
                f"{path}: git seed {value!r} needs `commit` = the full 40-hex commit hash "
                "(branches and tags move, so they do not pin a seed)"
            )
        subdir = _subdir(entry.get("subdir", ""), path)
        return SeedSource(
            kind="git", location=value, ref=commit, subdir=subdir, manifest=pinned, name=name
        )
    if kind == "pypi":
        version = entry.get("version")
        if not isinstance(version, str) or not re.match(r"^[0-9A-Za-z.+!-]+$", version):
            raise ManifestError(f"{path}: PyPI seed {value!r} needs an exact `version` string")
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", value):
            raise ManifestError(f"{path}: {value!r} is not a distribution name")
        return SeedSource(kind="pypi", location=value, ref=version, manifest=pinned, name=name)
    if kind == "crate":
        version = entry.get("version")
        if not isinstance(version, str) or not re.match(
            r"^[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]*$", version
        ):
            raise ManifestError(
                f"{path}: crate seed {value!r} needs an exact `version` (x.y.z, no range)"
            )
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_-]*$", value):
            raise ManifestError(f"{path}: {value!r} is not a crate name")
        return SeedSource(kind="crate", location=value, ref=version, manifest=pinned, name=name)
    image_path = entry.get("image_path", "/src")
    if not isinstance(image_path, str) or not image_path.startswith("/"):
        raise ManifestError(f"{path}: docker seed needs `image_path`, an absolute path")
    return SeedSource(kind="docker", location=value, subdir=image_path, manifest=pinned, name=name)


def _subdir(value: Any, path: Path) -> str:
    if not isinstance(value, str):
        raise ManifestError(f"{path}: `subdir` must be a relative path")
    p = PurePosixPath(value)
    if p.is_absolute() or ".." in p.parts:
        raise ManifestError(f"{path}: `subdir` {value!r} must stay inside the repository")
    return p.as_posix() if value else ""


def acquire_source(source: SeedSource, *, cache_dir: Path) -> SeedApp:
    """The `acquire` verb for any source: fetch (cached), pin the manifest, snapshot. A seed
    renamed by its entry gets that name even where its manifest (its own, or a pinned one)
    says another."""
    tree = fetch_tree(source, cache_dir=cache_dir)
    return snapshot_tree(tree, cache_dir, name=source.name if source.renamed else "")


def fetch_tree(source: SeedSource, *, cache_dir: Path) -> Path:
    """The seed's tree on disk, with a `taskmint.toml` (pinned, its own, or detected).

    A plain folder is its own tree, never written to (a Rust folder must then hold its
    Cargo.lock: `acquire.rust.acquire_folder` prepares a copy). A crate is fetched and
    prepared by `acquire.rust.crate_tree`. A detected manifest holds the seed's
    name, so the cache key holds the name wherever the rest of the key does not already pin it
    (a renamed seed, an image known by its id)."""
    if source.kind == "path" and not source.manifest:
        return Path(source.location)
    if source.kind == "crate":
        from taskmint.acquire.rust import crate_tree  # it builds on this module

        return crate_tree(
            source.location,
            source.ref,
            cache_dir=Path(cache_dir),
            seed_name=source.name,
            manifest=source.manifest,
        )
    if source.kind == "path":
        parts: tuple[object, ...] = ("path", source.location, _digest_file(source.manifest))
    elif source.kind == "docker":
        parts = ("docker", _image_id(source.location), source.subdir)
        parts += (source.manifest and _digest_file(source.manifest),)
    else:
        parts = (source.kind, source.location, source.ref, source.subdir)
        parts += (source.manifest and _digest_file(source.manifest),)
        if source.kind == "git":
            parts += (("version-file", 1),)  # trees fetched since the version file is written
    parts += (("prepared", 1),)  # trees prepared by their profile (`_prepare`)
    if not source.manifest and (source.renamed or source.kind == "docker"):
        parts += (("name", source.name),)
    key = stable_id(*parts)
    final = Path(cache_dir) / "sources" / key
    if (final / "tree").is_dir():
        return final / "tree"
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_staging(f".{key}.", final.parent)
    try:
        tree = tmp / "tree"
        if source.kind == "path":
            shutil.copytree(source.location, tree, symlinks=True)
        elif source.kind == "git":
            _fetch_git(source, tree, tmp)
        elif source.kind == "pypi":
            _fetch_pypi(source, tree, Path(cache_dir) / "sdists")
        else:
            _fetch_docker(source, tree, tmp)
        _prepare(source, tree, Path(cache_dir))
        _pin_manifest(source, tree, tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / "tree").is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final / "tree"


def _digest_file(path: str) -> str:
    try:
        return stable_id(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError(f"pinned manifest {path} cannot be read: {exc}") from exc


def _tree_profile(source: SeedSource, tree: Path) -> LanguageProfile | None:
    """The profile of a fetched tree: its pinned manifest's language, its own taskmint.toml's,
    else the one that detects it (None: none does, which `_pin_manifest` then reports)."""
    text = ""
    if source.manifest:
        text = Path(source.manifest).read_text(encoding="utf-8")
    elif (tree / MANIFEST_NAME).is_file():
        text = (tree / MANIFEST_NAME).read_text(encoding="utf-8")
    if text:
        return profile(parse_manifest(text, where=source.manifest or source.label).language)
    try:
        return detect_profile(tree, name=source.name)
    except DetectError:
        return None


def _prepare(source: SeedSource, tree: Path, cache_dir: Path) -> None:
    """The profile's preparation of a fetched tree (`LanguageProfile.prepare_tree`); its
    refusals become `SourceError`s."""
    language = _tree_profile(source, tree)
    if language is None:
        return
    try:
        language.prepare_tree(tree, cache_dir, label=source.label)
    except SourceError:
        raise
    except ManifestError as exc:
        raise SourceError(str(exc)) from exc


def _pin_manifest(source: SeedSource, tree: Path, work: Path) -> None:
    target = tree / MANIFEST_NAME
    if source.manifest:
        text = Path(source.manifest).read_text(encoding="utf-8")
        parse_manifest(text, where=source.manifest)
        target.write_text(text, encoding="utf-8")
        return
    if target.is_file():
        return
    description = f"{source.label}, detected layout"
    language = detect_profile(tree, name=source.name)
    manifest = language.detect_manifest(tree, name=source.name, description=description)
    text = render_manifest(manifest, origin=source.label)
    target.write_text(text, encoding="utf-8")
    (work / "taskmint.detected.toml").write_text(text, encoding="utf-8")


def _run(argv: list[str], what: str, *, cwd: Path | None = None, timeout: float = 600) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
    }
    try:
        proc = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SourceError(f"could not {what}: {exc}") from exc
    if proc.returncode != 0:
        raise SourceError(f"could not {what} (exit {proc.returncode}): {proc.stderr[-1500:]}")
    return proc.stdout


def _fetch_git(source: SeedSource, tree: Path, work: Path) -> None:
    git = shutil.which("git")
    if git is None:
        raise SourceError("git not found on PATH; install git (Debian: git)")
    clone = work / "clone"
    _run(
        [git, "clone", "--quiet", "--no-checkout", "--", source.location, str(clone)],
        f"clone {source.location}",
    )
    _run(
        [git, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", source.ref],
        f"check out {source.ref} of {source.location} (is the commit there?)",
        cwd=clone,
    )
    head = _run([git, "rev-parse", "HEAD"], "read HEAD", cwd=clone).strip()
    if head != source.ref:
        raise SourceError(f"{source.location}: HEAD is {head}, not the pinned {source.ref}")
    src = clone / source.subdir if source.subdir else clone
    if not src.is_dir():
        raise SourceError(f"{source.location}@{source.ref[:12]} has no folder {source.subdir!r}")
    shutil.copytree(src, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    # what its build would generate from the tags (Python: the `_version.py` the package
    # imports), which git does not hold: each language fills in its own
    describe = _run(
        [git, "describe", "--tags", "--long", "--always", "--abbrev=7"], "describe", cwd=clone
    )
    if "-" not in describe.strip():  # no tag: `--always` gives the bare hash
        count = _run([git, "rev-list", "--count", "HEAD"], "count commits", cwd=clone)
        describe = f"{count.strip()}-g{describe.strip()}"
    for language in profiles():
        language.complete_checkout(tree, describe)


def _fetch_pypi(source: SeedSource, tree: Path, sdists: Path) -> None:
    """Download the sdist (never a wheel: wheels rarely ship tests) and unpack it safely."""
    folder = sdists / f"{canonicalize_name(source.location)}-{source.ref}"
    archives = _sdist_files(folder)
    if not archives:
        folder.mkdir(parents=True, exist_ok=True)
        _run(
            [
                *_confined(folder),
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-cache-dir",
                "--no-deps",
                "--no-binary",
                ":all:",
                "--dest",
                str(folder),
                f"{source.location}=={source.ref}",
            ],
            f"download the sdist of {source.location}=={source.ref}",
            timeout=900,
        )
        archives = _sdist_files(folder)
    if not archives:
        raise SourceError(f"{source.location}=={source.ref} has no sdist to download")
    unpacked = tree.parent / "unpacked"
    safe_extract(archives[0], unpacked)
    tops = [p for p in unpacked.iterdir()]
    root = tops[0] if len(tops) == 1 and tops[0].is_dir() else unpacked
    shutil.move(str(root), str(tree))


def _confined(dest: Path) -> list[str]:
    """bubblewrap around `pip download`: pip prepares an sdist's metadata, which runs the
    package's own build code. It keeps the network (it must download) but the host is read-only
    except `dest`, the home folder and /tmp are empty, and it gets its own PID namespace."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SourceError("bwrap not found; install bubblewrap (Debian: bubblewrap)")
    home = os.path.realpath(os.environ.get("HOME", "/root"))
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += ["--tmpfs", home]
    hidden = ("/tmp", home)
    for needed in sorted({os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}):
        if any(needed == h or needed.startswith(h + "/") for h in hidden):
            # the interpreter (a pyenv under HOME, a venv of a checkout under /tmp) must stay
            # visible through the empty HOME and /tmp
            argv += ["--ro-bind", needed, needed]
    argv += ["--bind", str(dest), str(dest), "--setenv", "HOME", "/tmp"]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--new-session"]
    return [*argv, "--die-with-parent", "--"]


def _sdist_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(
        p for p in folder.iterdir() if p.name.endswith((".tar.gz", ".zip", ".tar.bz2", ".tgz"))
    )


def _docker_client() -> Any:
    try:
        import docker  # the SDK is a dependency; the daemon may still be missing
    except ImportError as exc:  # pragma: no cover
        raise SourceError("the docker SDK is not installed") from exc
    try:
        return docker.from_env()
    except Exception as exc:
        raise SourceError(f"cannot reach the Docker daemon for an image seed: {exc}") from exc


def _image_id(reference: str) -> str:
    client = _docker_client()
    try:
        return str(client.images.get(reference).id)
    except Exception as exc:
        raise SourceError(
            f"image {reference!r} is not on this machine ({exc}); build or load it first "
            "(no registry is contacted)"
        ) from exc
    finally:
        client.close()


def _fetch_docker(source: SeedSource, tree: Path, work: Path) -> None:
    """Copy `image_path` out of the image's filesystem (a created, never started, container)."""
    client = _docker_client()
    container = None
    try:
        container = client.containers.create(
            source.location, command=["true"], network_disabled=True
        )
        stream, _ = container.get_archive(source.subdir)
        tar = work / "image.tar"
        with open(tar, "wb") as out:
            for chunk in stream:
                out.write(chunk)
    except SourceError:
        raise
    except Exception as exc:
        raise SourceError(
            f"cannot export {source.subdir} from image {source.location!r}: {exc}"
        ) from exc
    finally:
        if container is not None:
            container.remove(force=True)
        client.close()
    unpacked = work / "unpacked"
    safe_extract(tar, unpacked)
    # get_archive puts the folder itself at the top of the archive
    top = unpacked / PurePosixPath(source.subdir).name
    shutil.move(str(top if top.is_dir() else unpacked), str(tree))
