"""The scheduled refresh, as Prefect deployments point at it (`prefect.yaml`:
`flows/refresh.py:nightly`): thin over `taskmint.flows.refresh`."""

from taskmint.flows.refresh import nightly, refresh

__all__ = ["nightly", "refresh"]
