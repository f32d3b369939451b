"""The Rust toolchain on this machine, and how it appears inside the sandbox.

taskmint uses the stable toolchain that `cargo` on the PATH (or in `~/.cargo/bin`, where rustup
puts it) runs: the real toolchain folder behind rustup's proxies (`rustc --print sysroot`),
mounted read-only at `/opt/rust/toolchain` with its rustc, cargo, rustdoc and standard library,
and cargo-nextest. Inside, no rustup runs: cargo and rustc are called by absolute path.

cargo, rustdoc and cargo-nextest are mounted as execute-only copies (mode 0111, root-owned,
kept in the cache): the kernel makes a process whose program it may not read non-dumpable, so
the tests they start (the same uid) can neither open their descriptors under /proc nor read or
write their memory. Those three hold the pipes the harness reads the results from.

The linker is the C compiler `cc` names on the host (rustc's default for Linux targets),
resolved to its real path: `/etc/alternatives` is not in the sandbox.
"""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from taskmint.errors import EnvironmentBuildError
from taskmint.records import stable_id

__all__ = [
    "CARGO_HOME",
    "NEXTEST",
    "TOOLCHAIN",
    "VENDOR",
    "WARM",
    "Toolchain",
    "find_toolchain",
    "tool_copies",
]

# Where things appear inside the sandbox: fixed, so that cargo's fingerprints of a build made
# in one sandbox hold in the next.
TOOLCHAIN = "/opt/rust/toolchain"
NEXTEST = "/opt/rust/bin/cargo-nextest"
CARGO_HOME = "/opt/rust/cargo-home"
VENDOR = "/opt/rust/vendor"
WARM = "/opt/rust/warm"


class ToolchainMissing(EnvironmentBuildError):
    """cargo, rustc or cargo-nextest is not installed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Toolchain:
    """The host's Rust tools."""

    sysroot: str  # the toolchain folder (bin/cargo, bin/rustc, lib/rustlib)
    host: str  # the host target triple
    rustc_version: str  # `rustc -vV`
    nextest: str  # cargo-nextest's real path
    nextest_version: str
    linker: str  # the C compiler rustc links with, real path
    linker_dirs: tuple[str, ...]  # folders outside system_paths it needs (gcc's own)

    @property
    def cargo(self) -> str:
        return os.path.join(self.sysroot, "bin", "cargo")

    @property
    def rustc(self) -> str:
        return os.path.join(self.sysroot, "bin", "rustc")

    @property
    def rustdoc(self) -> str:
        return os.path.join(self.sysroot, "bin", "rustdoc")

    @property
    def fingerprint(self) -> str:
        """What a build's artefacts depend on: the compiler, nextest and the linker."""
        return stable_id(self.sysroot, self.rustc_version, self.nextest_version, self.linker)

    def host_env(self) -> dict[str, str]:
        """The environment for cargo run on the host (vendoring, lockfiles): this toolchain
        first on the PATH, the user's own cargo home (its download cache)."""
        env = {
            "PATH": os.pathsep.join([os.path.join(self.sysroot, "bin"), "/usr/bin", "/bin"]),
            "HOME": os.environ.get("HOME", "/root"),
            "LC_ALL": "C",
            "CARGO_TERM_COLOR": "never",
            "GIT_TERMINAL_PROMPT": "0",
        }
        if "CARGO_HOME" in os.environ:
            env["CARGO_HOME"] = os.environ["CARGO_HOME"]
        return env


def _cargo_proxy() -> str:
    found = shutil.which("cargo")
    if found:
        return found
    home = os.environ.get("CARGO_HOME") or os.path.join(os.path.expanduser("~"), ".cargo")
    candidate = os.path.join(home, "bin", "cargo")
    if os.access(candidate, os.X_OK):
        return candidate
    raise ToolchainMissing(
        "cargo not found (not on PATH, nor in ~/.cargo/bin): Rust seeds need the stable Rust "
        "toolchain; install it with rustup (https://rustup.rs) and make sure `cargo` runs"
    )


def _output(argv: list[str], what: str) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolchainMissing(f"could not {what}: {exc}") from exc
    if proc.returncode != 0:
        raise ToolchainMissing(f"could not {what}: {proc.stderr.strip()[-800:]}")
    return proc.stdout.strip()


@functools.cache
def find_toolchain() -> Toolchain:
    """The host's toolchain, or `ToolchainMissing` saying what to install."""
    proxy = _cargo_proxy()
    rustc = os.path.join(os.path.dirname(proxy), "rustc")
    if not os.access(rustc, os.X_OK):
        rustc = shutil.which("rustc") or rustc
    sysroot = os.path.realpath(_output([rustc, "--print", "sysroot"], "ask rustc for its sysroot"))
    for tool in ("cargo", "rustc", "rustdoc"):
        if not os.access(os.path.join(sysroot, "bin", tool), os.X_OK):
            raise ToolchainMissing(
                f"the Rust toolchain at {sysroot} has no {tool}; reinstall it with rustup"
            )
    version = _output([os.path.join(sysroot, "bin", "rustc"), "-vV"], "run rustc -vV")
    host = next(
        (ln.split(":", 1)[1].strip() for ln in version.splitlines() if ln.startswith("host:")), ""
    )
    nextest = shutil.which("cargo-nextest") or os.path.join(os.path.dirname(proxy), "cargo-nextest")
    if not os.access(nextest, os.X_OK):
        raise ToolchainMissing(
            "cargo-nextest not found: Rust seeds run their tests under it; install it "
            "(`cargo install cargo-nextest --locked`, or its prebuilt binary) onto the PATH"
        )
    nextest = os.path.realpath(nextest)
    nextest_version = _output([nextest, "--version"], "run cargo-nextest --version")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise ToolchainMissing(
            "no C compiler (`cc`) to link with: install gcc (Debian: build-essential)"
        )
    linker = os.path.realpath(cc)
    dirs = tuple(
        d for d in ("/usr/lib/gcc", "/usr/libexec/gcc", "/usr/include") if os.path.isdir(d)
    )
    return Toolchain(
        sysroot=sysroot,
        host=host,
        rustc_version=version,
        nextest=nextest,
        nextest_version=nextest_version.splitlines()[0] if nextest_version else "",
        linker=linker,
        linker_dirs=dirs,
    )


def tool_copies(cache_dir: Path, toolchain: Toolchain) -> Path:
    """A folder of execute-only copies of cargo, rustdoc and cargo-nextest (built once per
    toolchain): mounted over the real ones inside the sandbox, they run non-dumpable."""
    root = Path(cache_dir) / "rust" / "tools"
    final = root / toolchain.fingerprint
    if (final / "READY").exists():
        return final
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{toolchain.fingerprint}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / "READY").exists():
            return final
        shutil.rmtree(final, ignore_errors=True)
        final.mkdir(mode=0o755)
        os.chmod(final, 0o755)
        for name, src in (
            ("cargo", toolchain.cargo),
            ("rustdoc", toolchain.rustdoc),
            ("cargo-nextest", toolchain.nextest),
        ):
            shutil.copyfile(src, final / name)
            os.chmod(final / name, 0o111)
        (final / "READY").write_text("ok\n")
    return final
