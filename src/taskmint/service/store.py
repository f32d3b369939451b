"""Graded results by request id, on disk: a retried request is answered, not graded again.

A SQLite file (one table: request id, the fingerprint of what was asked, the result as JSON,
when). It outlives the process, so a client that retries after the service restarted gets the
result graded before the restart. Only graded results are kept (an error is worth grading
again). At most `max_entries` are kept; the oldest go first.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["ResultStore"]


class ResultStore:
    """request id -> (fingerprint, result). Thread-safe."""

    def __init__(self, path: str | os.PathLike[str], max_entries: int = 1_000_000) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS results (request_id TEXT PRIMARY KEY, "
            "fingerprint TEXT NOT NULL, result TEXT NOT NULL, created REAL NOT NULL)"
        )
        self._db.execute("CREATE INDEX IF NOT EXISTS results_created ON results (created)")
        self._writes = 0

    def get(self, request_id: str) -> tuple[str, dict[str, Any]] | None:
        """The fingerprint and result stored for `request_id`, if any."""
        with self._lock:
            row = self._db.execute(
                "SELECT fingerprint, result FROM results WHERE request_id = ?", (request_id,)
            ).fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def put(self, request_id: str, fingerprint: str, result: dict[str, Any]) -> None:
        """Keep `result` for `request_id` (the first one stored wins)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO results VALUES (?, ?, ?, ?)",
                (request_id, fingerprint, json.dumps(result), time.time()),
            )
            self._writes += 1
            if self._writes % 1000 == 0:
                self._prune()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def _prune(self) -> None:
        count = int(self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        if count > self.max_entries:
            self._db.execute(
                "DELETE FROM results WHERE request_id IN "
                "(SELECT request_id FROM results ORDER BY created LIMIT ?)",
                (count - self.max_entries,),
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()
