"""Stage 2, `envs`: a seed's manifest -> an `Environment` that can run its tests.

Each language's profile builds its own (`taskmint.languages.build_environment`); this package
holds the Python profile's, a venv holding the seed's declared dependencies plus the test tools,
and no copy of the seed: no pip or setuptools (which vendor other projects), the seed's own
distribution replaced by its metadata when a dependency pulls it in, and a vendored copy of it
refused (`envs.copies`). It is cached under `cache/envs/<env_id>` where `env_id` hashes the
interpreter, the dependencies, the tool versions and the seed's module names, so a second run
reuses it.
"""

from taskmint.envs.venv import build_venv, venv_id

__all__ = ["build_venv", "venv_id"]
