"""Stage 2, `envs`: a `SeedApp` -> an `Environment` that can run its tests.

For Python seeds this is a venv holding the seed's declared dependencies plus the test tools,
and no copy of the seed: no pip or setuptools (which vendor other projects), the seed's own
distribution replaced by its metadata when a dependency pulls it in, and a vendored copy of it
refused (`envs.copies`). It is cached under `cache/envs/<env_id>` where `env_id` hashes the
interpreter, the dependencies, the tool versions and the seed's module names, so a second run
reuses it.
"""

from taskmint.envs.venv import build_environment, environment_id

__all__ = ["build_environment", "environment_id"]
