"""Stage 2, `envs`: a `SeedApp` -> an `Environment` that can run its tests.

For Python seeds this is a venv holding the seed's declared dependencies plus the test tools
(never the seed itself: an installed copy of the original would be the answer in
site-packages). It is cached under `cache/envs/<env_id>` where `env_id` hashes the interpreter,
the dependencies and the tool versions, so a second run reuses it.
"""

from taskmint.envs.venv import build_environment, environment_id

__all__ = ["build_environment", "environment_id"]
