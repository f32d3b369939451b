"""A real headless browser (Debian's chromium) on a page of ours: what it laid out, and a
screenshot. `scripts/install-system-deps.sh --tests` installs it; a test that needs it fails
without it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

_MEASURE = """<script>
const plots = [...document.querySelectorAll("svg.plot")];
const drawn = plots.filter((p) => [...p.querySelectorAll(".bar")].some((b) => {
  const box = b.getBBox(); return box.width > 0 && box.height > 0; }));
document.body.dataset.measured = JSON.stringify({
  plots: plots.length,
  drawn: drawn.length,
  empty: plots.filter((p) => p.dataset.points === "0").length,
  captions: [...document.querySelectorAll("figcaption")].map((c) => c.textContent),
  width: document.documentElement.scrollWidth,
  height: document.documentElement.scrollHeight,
});
</script>"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "chromium is not installed: scripts/install-system-deps.sh --tests installs it"
    return found


def _run(*args: str) -> str:
    proc = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def measure(page: Path, work: Path) -> dict:
    """What the browser laid out on `page`: its plots, those with a bar of non-zero size (an
    SVG bounding box the browser computed), the empty ones, the captions, the page size."""
    copy = work / f"measured-{page.name}"
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"))
    dom = _run("--dump-dom", copy.as_uri())
    m = re.search(r'data-measured="([^"]*)"', dom)
    assert m, dom[:500]
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def screenshot(page: Path, png: Path, size: str = "1400,3000") -> Path:
    _run(f"--screenshot={png}", f"--window-size={size}", page.as_uri())
    assert png.is_file() and png.stat().st_size > 0
    return png
