"""`DockerSandbox`: one container per run, or a warm pool of containers for `verify`.

A run takes a container for its key (`mounts.EnvironmentMounts`) from the pool
(`containers.ContainerPool`), runs there through execs (`execs.ContainerExecs`), cold or handed
to the container's standby, and gives the container back to the pool when it ended cleanly
(else the container is removed).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import uuid
from pathlib import Path
from typing import Any

from taskmint.config import SandboxConfig
from taskmint.errors import SandboxError
from taskmint.sandbox.base import RunResult, RunSpec, Sandbox
from taskmint.sandbox.docker.client import docker_client
from taskmint.sandbox.docker.containers import ContainerKey, ContainerPool, DockerOptions
from taskmint.sandbox.docker.execs import ContainerExecs, runner_dir
from taskmint.sandbox.docker.mounts import EnvironmentMounts
from taskmint.sandbox.docker.streams import pack_inputs, unpack_report
from taskmint.sandbox.warm import WarmPool

__all__ = ["DockerSandbox"]


class DockerSandbox(Sandbox):
    """Runs commands in containers of the local Docker Engine (see `taskmint.sandbox.docker`)."""

    name = "docker"

    def __init__(
        self,
        config: SandboxConfig | None = None,
        *,
        options: DockerOptions | None = None,
        client: Any = None,
    ) -> None:
        self.config = config or SandboxConfig()
        self.options = options or DockerOptions()
        if client is None:
            client = docker_client(self.options.docker_host)
        self.client = client
        self.api = client.api
        self._session = uuid.uuid4().hex[:12]
        self._execs = ContainerExecs(self.api)
        self._mounts = EnvironmentMounts(client, self.options)
        self._pool = ContainerPool(self.api, self.options, self._session, self._execs.prepare)
        self._pool.sweep_stale()
        atexit.register(self.close)

    def _key(self, spec: RunSpec) -> ContainerKey:
        """The container a run of `spec` needs: image, mounts and limits."""
        return self._mounts.key(spec)

    def prepare(self, spec: RunSpec, count: int = 1) -> None:
        """Start up to `count` warm containers for runs like `spec` ahead of the first run."""
        self._pool.prepare(self._key(spec), count)

    def close(self) -> None:
        """Remove every container this sandbox started (idle or, after an interrupt, busy)."""
        self._pool.close()
        atexit.unregister(self.close)

    def run(self, spec: RunSpec) -> RunResult:
        """Run `spec` in a container (a warm one when the pool has one), bounded by its limits.

        The host workspace is only read; outcomes travel back through the report folder.
        """
        if not os.path.isdir(spec.workspace):
            raise SandboxError(f"workspace {spec.workspace} is not a folder")
        if self._pool.closed:
            raise SandboxError("this docker sandbox is closed")
        key = self._key(spec)
        inputs = pack_inputs(spec)
        box = self._pool.checkout(key)
        keep = False
        try:
            standby, box.standby = box.standby, None
            warmable = self._warm and WarmPool.eligible(spec) and runner_dir(spec) is not None
            if standby is not None and not (
                warmable and (standby.python, standby.env) == (spec.argv[0], spec.env)
            ):
                with contextlib.suppress(Exception):
                    standby.sock.close()  # it exits at the end of its input
                standby = None
            if standby is not None:
                exit_code, timed_out, wall, reader, (report, clean) = self._execs.run_standby(
                    box, spec, inputs, standby
                )
            else:
                exit_code, timed_out, wall, reader = self._execs.run_cold(box, spec, inputs)
                report, clean = (None, False) if timed_out else self._execs.collect(box)
            # Everything of the command is dead now (or the container is), so the output ends.
            reader.join(timeout=5)
            if spec.report_dir is not None and report is not None:
                unpack_report(report, Path(spec.report_dir))
            keep = clean
            output, truncated = reader.text()
            return RunResult(
                exit_code=exit_code,
                timed_out=timed_out,
                wall_time=wall,
                output=output,
                output_truncated=truncated,
            )
        finally:
            if keep:
                self._pool.checkin(box, spec if warmable else None)
            else:
                self._pool.discard(box)

    @property
    def _warm(self) -> bool:
        return self.options.warm > 0
