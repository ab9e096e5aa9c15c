"""A Helm chart found in a scanned tree, rendered with the real `helm template` (`make tools` puts the
pinned helm v3 in .tools/bin; without one these tests skip)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from stockade.policies.model import InputError, Resource
from stockade.scanner.sources.render import HelmSource

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools" / "bin"
HELM = shutil.which("helm", path=os.pathsep.join([str(TOOLS), os.environ.get("PATH", "")]))
needs_helm = pytest.mark.skipif(HELM is None, reason="helm not installed (make tools installs it)")

CHART = """\
apiVersion: v2
name: app
version: 1.0.0
dependencies:
- name: monitoring
  version: 82.4.3
  repository: oci://ghcr.io/example/charts
  condition: monitoring.enabled
- name: jobs
  version: ">=0.12.0"
  repository: oci://registry.example/charts
  condition: jobs.enabled,jobs.install
"""
VALUES = """\
monitoring:
  enabled: false
jobs:
  install: true
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx:1.27
"""


@needs_helm
def test_a_chart_whose_dependencies_are_not_vendored_is_rendered_without_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kubeflow/trainer's and vllm-project/production-stack's charts: `charts/` is not committed, so
    `helm template` stops on the missing dependencies and nothing of the chart was judged (the
    serving chart, the trainer's controller RBAC with its critical STK-RBAC-031). Helm checks a
    dependency by name only: an empty chart of that name stands in. One the values turn off lost
    nothing (no error); one they leave on (the first path of its condition that the values hold:
    `jobs.install`, since `jobs.enabled` is not set) is named, and the chart's own objects are judged."""
    assert HELM is not None
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(HELM).parent), os.environ.get("PATH", "")]))
    chart = tmp_path / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(CHART)
    (chart / "values.yaml").write_text(VALUES)
    (chart / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    items = list(HelmSource(str(chart), found=True))
    (obj,) = [i for i in items if isinstance(i, Resource)]
    assert obj.name == "stockade-scan-web" and obj.origin.file == str(chart / "templates" / "deployment.yaml")
    (error,) = [i for i in items if isinstance(i, InputError)]
    assert error.message == (
        "its dependency jobs is not in charts/ (`helm dependency build` fetches it) and its values turn it "
        "on: rendered and judged without it"
    )
    assert not (chart / "charts").exists()  # the chart itself is never changed
    # both turned off: the render is Helm's with them, and nothing is said
    (chart / "values.yaml").write_text(VALUES.replace("install: true", "install: false"))
    items = list(HelmSource(str(chart), found=True))
    assert [i.name for i in items if isinstance(i, Resource)] == ["stockade-scan-web"]
    assert not [i for i in items if isinstance(i, InputError)]
    # a values file given turns one on again
    on = tmp_path / "on.yaml"
    on.write_text("monitoring: {enabled: true}\n")
    items = list(HelmSource(str(chart), values=[str(on)], found=True))
    assert [i.message.split(" is not")[0] for i in items if isinstance(i, InputError)] == [
        "its dependency monitoring"
    ]


LINES_VALUES = """\
securityContext:
  privileged: true
proxy:
  enabled: true
"""
LINES_DEPLOYMENT = """\
{{/*
The web tier.
*/}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels:
    {{- include "app.labels" . | nindent 4 }}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: "nginx:{{ .Chart.AppVersion }}"
          {{- with .Values.securityContext }}
          securityContext:
            {{- toYaml . | nindent 12 }}
          {{- end }}
        {{- if .Values.proxy.enabled }}
        - name: proxy
          image: envoyproxy/envoy:latest
        {{- end }}
"""
LINES_HELPERS = '{{- define "app.labels" -}}\napp: web\n{{- end }}\n'


@needs_helm
def test_findings_of_a_chart_point_at_the_template_lines_that_write_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every finding of a chart pointed at line 1 of its template (code scanning annotated the
    file's first line, the reviewer hunted for the field). With the real `helm template`: the
    image's line, the container a literal name tells apart, the toYaml a securityContext comes
    through; the whole object at its first line past the template comment."""
    assert HELM is not None
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(HELM).parent), os.environ.get("PATH", "")]))
    chart = tmp_path / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 1.0.0\nappVersion: '1.27'\n")
    (chart / "values.yaml").write_text(LINES_VALUES)
    (chart / "templates" / "deployment.yaml").write_text(LINES_DEPLOYMENT)
    (chart / "templates" / "_helpers.tpl").write_text(LINES_HELPERS)
    (obj,) = [i for i in HelmSource(str(chart), found=True) if isinstance(i, Resource)]
    containers = ("spec", "template", "spec", "containers")
    assert obj.origin.line == 4
    assert obj.origin.line_of((*containers, 0, "image")) == 17
    assert obj.origin.line_of((*containers, 0, "securityContext", "privileged")) == 20
    assert obj.origin.line_of((*containers, 1, "image")) == 24
    assert obj.origin.line_of(("metadata", "labels", "app")) == 9
