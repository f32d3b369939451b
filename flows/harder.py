"""A harder batch ("n tasks that model X solves under r"), as a Prefect deployment points at
it (`flows/harder.py:harder_batch`): thin over `taskmint.flows.harder_batch`."""

from taskmint.flows.harder_batch import harder_batch

__all__ = ["harder_batch"]
