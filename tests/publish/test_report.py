"""A version's report.html: written by `taskmint report` (and by a refresh at publish,
tests/flows/test_refresh_flow.py), opened in a real headless browser: it renders, and its
plots have data, or say they have none."""

from __future__ import annotations

import re
import shutil

from PIL import Image

from taskmint.cli import main
from taskmint.publish.report import REPORT, RUN_RECORD, _histogram, render_report
from tests.browser import measure, screenshot


def test_taskmint_report_writes_a_page_the_browser_draws(tiny_dataset, published_tasks, tmp_path):
    version = tmp_path / tiny_dataset.name
    shutil.copytree(tiny_dataset, version)
    assert not (version / RUN_RECORD).exists()  # published without a refresh: no run record
    assert main(["report", str(version)]) == 0
    page = version / REPORT
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text and "http://" not in text and "https://" not in text
    seen = measure(page, tmp_path)
    # every plot of the tasks' own columns has bars the browser laid out; the ones that need
    # the run's record (yield, rejections, wall per seed) say "no data"
    assert seen["plots"] >= 12 and seen["drawn"] + seen["empty"] == seen["plots"], seen
    assert seen["drawn"] >= 8, seen
    for caption in ("tasks per seed", "lines removed", "FAIL_TO_PASS tests", "band"):
        assert any(c.startswith(caption) for c in seen["captions"]), seen["captions"]
    n = len(published_tasks)
    assert f"FAIL_TO_PASS tests (n={n})" in seen["captions"]
    png = screenshot(page, tmp_path / "report.png")
    with Image.open(png) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is not None and len(colours) > 20  # not a blank page


def test_histograms_count_every_value_once():
    values = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233]
    svg = _histogram("h", values)  # spread over decades: bins that double
    counts = [int(v) for v in re.findall(r'data-value="(\d+)"', svg)]
    assert sum(counts) == len(values) and counts == [2, 2, 1, 2, 1, 2, 1, 2]
    assert ">128-255<" in svg
    svg = _histogram("h", [3, 4, 4, 5, 9, 12])  # a narrow range: equal bins of whole numbers
    counts = [int(v) for v in re.findall(r'data-value="(\d+)"', svg)]
    assert sum(counts) == 6 and counts[:3] == [1, 2, 1]
    scores = [0.0, 0.5, 0.75, 1.0, 1.0]
    svg = _histogram("s", scores, bins=10, span=(0.0, 1.0))
    counts = [int(v) for v in re.findall(r'data-value="(\d+)"', svg)]
    assert sum(counts) == 5 and counts[-1] == 2  # 1.0 is in the last bin
    assert 'data-points="0"' in _histogram("none", [])


def test_the_run_record_fills_yield_rejections_and_costs(published_tasks):
    run = {
        "seeds": [
            {
                "seed": "tiny",
                "candidates": 10,
                "accepted": 6,
                "rejected": {"no_failing_tests": 3, "weak_tests": 1},
                "by_strategy": {"stub_body": [8, 5], "remove_function": [2, 1]},
                "wall_time": 12.5,
                "error": None,
                "examples": {"no_failing_tests": ["stub_body f: no test failed <after>"]},
                "prepare_seconds": 4.0,
                "host_seconds": 2.5,
                "sandbox_seconds": 30.0,
            },
            {"seed": "broken", "candidates": 0, "accepted": 0, "error": "no tests"},
        ],
        "spend": {"rollouts": 12},
        "wall_time": 20.0,
        "peak_rss_mib": 321.5,
    }
    page = render_report(published_tasks, run, title="t v1")
    assert "tiny (6/10)" in page and "stub_body (5/8)" in page
    assert "no_failing_tests" in page and "seed refused" in page
    assert "wall seconds per candidate" in page and ">2.0<" in page
    assert "no run record" not in page
    # an example per seed and reason, escaped; the costs per candidate and the peak memory
    assert '<td>tiny</td><td>no_failing_tests</td><td class="n">3</td>' in page
    assert "stub_body f: no test failed &lt;after&gt;" in page
    for caption, value in (("sandbox seconds per", "3"), ("host CPU", "0.25"), ("fixed", "4")):
        figure = page[page.index(caption) :].split("</figure>")[0]
        assert f'data-value="{value}"' in figure, (caption, figure)
    assert "peak memory, MiB" in page and "321.5" in page and "tasks per hour" in page
    assert "no run record" in render_report(published_tasks, {}, title="t v1")


def test_a_missing_version_is_a_clear_error(tmp_path, capsys):
    assert main(["--output", str(tmp_path), "report", "v9999"]) != 0
    assert "no version 'v9999'" in capsys.readouterr().err
