"""The audit's HTML report as a person sees it: rendered by headless Chromium (Debian `chromium`).

`make test` installs Chromium when it can (root with apt); elsewhere these tests skip with the reason.
The fleet is served by our own fake API server (examples/fleet/apiserver.py, stdlib http.server).
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
import yaml

from stockade.policies.config.settings import load_config, parse_config
from stockade.policies.evaluate import Evaluator
from stockade.scanner.audit import audit_cluster_roles, kinds_to_list
from stockade.scanner.reports import get_report
from stockade.scanner.result import Result

from .test_audit import ROOT, fleet_result  # noqa: F401  (module-scoped fixture)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (make test installs it as root)"
)


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / "profile"
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@needs_chromium
def test_audit_report_renders_with_its_summary_numbers(fleet_result: Result, tmp_path: Path) -> None:  # noqa: F811
    page = tmp_path / "audit.html"
    page.write_text(get_report("html").render(fleet_result), encoding="utf-8")
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = re.sub(r"<[^>]+>", " ", dom.stdout)
    text = re.sub(r"\s+", " ", text)
    summary = fleet_result.summary()
    assert "stockade audit report" in text
    cards = re.findall(
        r'<div class="card[^"]*"><span class="n">([^<]+)</span><span class="l">([^<]+)</span>', dom.stdout
    )
    shown = {label: value for value, label in cards}
    assert shown["findings"] == str(summary["findings"])
    assert shown["waived"] == str(summary["waived"])
    assert shown["clusters audited"] == "2/2"
    assert shown["deny"] == str(summary["by_action"]["deny"])  # type: ignore[index]
    for cluster in fleet_result.clusters:
        assert cluster.name in text
    assert "Scores by policy area" in text and "Top findings" in text and "Findings by namespace" in text

    shot = tmp_path / "audit.png"
    taken = _chromium(tmp_path, "--window-size=1280,1800", f"--screenshot={shot}", page.as_uri())
    assert taken.returncode == 0, taken.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 1800)
    assert len(data) > 50_000  # a rendered report, not a blank page (a blank 1280x1800 PNG is ~10 KB)


#: measures, in the browser, where each severity chart's cluster name and bars are laid out
_GEOMETRY = """<script>
window.addEventListener("load", () => {
  const out = [...document.querySelectorAll("svg.bars")].map((chart) => {
    const label = chart.parentElement.querySelector("code");
    const cap = label.getBoundingClientRect();
    const svg = chart.getBoundingClientRect();
    const bars = [...chart.querySelectorAll("rect")].map((r) => r.getBoundingClientRect().left);
    return [label.textContent.trim(), cap.top, cap.bottom, svg.top, svg.bottom, Math.min(...bars)].join("|");
  });
  const pre = document.createElement("pre");
  pre.id = "geometry";
  pre.textContent = out.join("\\n");
  document.body.appendChild(pre);
});
</script>"""


@needs_chromium
def test_each_severity_chart_is_labelled_above_its_own_bars(fleet_result: Result, tmp_path: Path) -> None:  # noqa: F811
    """The per-cluster severity charts, laid out by the browser at a narrow and a wide width: each
    cluster's name sits above its own bars and below the previous chart, and every chart's bars start
    at the same x, whatever the name's length (the name used to sit inline, at the baseline of the
    bars, where it read as the label of the next chart)."""
    html = get_report("html").render(fleet_result)
    # the report forbids scripts (its CSP); this copy lets the measuring script run
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    html = html.replace("</body>", _GEOMETRY + "</body>")
    page = tmp_path / "audit.html"
    page.write_text(html, encoding="utf-8")
    names = [c.name for c in fleet_result.clusters]
    for width in (700, 1280):
        dom = _chromium(tmp_path, f"--window-size={width},1800", "--dump-dom", page.as_uri())
        assert dom.returncode == 0, dom.stderr[-2000:]
        found = re.search(r'<pre id="geometry">([^<]*)</pre>', dom.stdout)
        assert found, "the measuring script did not run"
        rows = [line.split("|") for line in found.group(1).split("\n") if line]
        assert [r[0] for r in rows] == names
        geometry = [[float(x) for x in r[1:]] for r in rows]
        previous_bottom = float("-inf")
        for cap_top, cap_bottom, svg_top, svg_bottom, _ in geometry:
            assert previous_bottom <= cap_top < cap_bottom <= svg_top < svg_bottom
            previous_bottom = svg_bottom
        assert len({round(g[4]) for g in geometry}) == 1, geometry  # the bars are aligned


def test_example_audit_clusterrole_is_the_least_the_audit_needs() -> None:
    shipped = list(yaml.safe_load_all((ROOT / "examples/audit-clusterrole.yaml").read_text()))
    evaluator = Evaluator.default(load_config(ROOT / "examples/stockade.yaml"))
    assert shipped == audit_cluster_roles(kinds_to_list(evaluator)), (
        "regenerate: stockade audit --print-rbac --config examples/stockade.yaml (see the file's header)"
    )
    reader = shipped[0]
    assert all(rule["verbs"] == ["list"] for rule in reader["rules"])
    # Secrets are listed only for the rules that read their data key names or type (STK-STO-004,
    # STK-SA-003)
    assert [r["resources"] for r in reader["rules"] if "secrets" in r["resources"]]
    off = Evaluator.default(
        parse_config("rules: {STK-STO-004: {enabled: false}, STK-SA-003: {enabled: false}}")
    )
    without = audit_cluster_roles(kinds_to_list(off))[0]
    assert not any("secrets" in rule["resources"] for rule in without["rules"])
