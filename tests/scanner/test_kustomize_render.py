"""A kustomization found in a scanned tree is scanned as what it builds (issue 37).

Every scan runs the CLI in a fresh process (``python -m``-style, as a user would) with the real
``kubectl kustomize``: kubectl on PATH (``make tools`` puts the pinned one in ``.tools/bin``);
without one the rendering tests skip. The trees are written to ``tmp_path``: a base with two
overlays (one patches ``serviceAccountName``), a component, a broken kustomization.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stockade.policies.model import Resource
from stockade.scanner.sources.base import Skipped
from stockade.scanner.sources.files import FileSource, Rendered

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools" / "bin"
KUBECTL = shutil.which("kubectl", path=os.pathsep.join([str(TOOLS), os.environ.get("PATH", "")]))
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (make tools installs it)")

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
"""
#: a strategic-merge patch: judged alone it would be a Deployment without a ServiceAccount or image
SA_PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      serviceAccountName: web
"""
DEFAULT_SA = "STK-SA-002"  # "the workload runs as the namespace's default ServiceAccount"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def base_and_overlays(root: Path) -> None:
    write(
        root,
        {
            "base/deployment.yaml": DEPLOYMENT,
            "base/kustomization.yaml": "resources: [deployment.yaml]\n",
            "overlays/prod/kustomization.yaml": (
                "resources: [../../base]\nnamespace: prod\npatches:\n- path: sa.yaml\n"
            ),
            "overlays/prod/sa.yaml": SA_PATCH,
            "overlays/dev/kustomization.yaml": "resources: [../../base]\nnamespace: dev\n",
        },
    )


def scan(*args: str, cwd: Path, path: str | None = None) -> tuple[int, dict[str, Any], str]:
    env = {**os.environ, "COLUMNS": "200"}
    env["PATH"] = path if path is not None else os.pathsep.join([str(TOOLS), os.environ.get("PATH", "")])
    run = subprocess.run(
        [sys.executable, "-c", "from stockade.cli.main import main; main()", "scan", *args, "-f", "json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert "Traceback" not in run.stderr, run.stderr
    return run.returncode, json.loads(run.stdout), run.stderr


def by_namespace(doc: dict[str, Any], rule: str) -> dict[str | None, list[dict[str, Any]]]:
    out: dict[str | None, list[dict[str, Any]]] = {}
    for f in doc["findings"]:
        if f["rule"]["id"] == rule:
            out.setdefault(f["resource"].get("namespace"), []).append(f)
    return out


@needs_kubectl
def test_each_overlay_is_rendered_and_its_patch_counts(tmp_path: Path) -> None:
    base_and_overlays(tmp_path)
    code, doc, _ = scan(".", "--fail-on", "never", cwd=tmp_path)
    assert code == 0 and doc["errors"] == []
    # two renders (prod, dev); the base is built through them, not alone (no namespace-less copy)
    assert {f["resource"].get("namespace") for f in doc["findings"]} == {"prod", "dev"}
    default_sa = by_namespace(doc, DEFAULT_SA)
    assert set(default_sa) == {"dev"}, default_sa  # prod's patch names its own ServiceAccount
    # the finding points at the base's file, the patch is never judged as an object of its own
    files = {f["location"]["file"] for f in doc["findings"]}
    assert files == {str(Path("base") / "deployment.yaml")}, files
    (dev,) = default_sa["dev"]
    line = dev["location"]["line"]
    assert line is not None and 1 <= line <= DEPLOYMENT.count("\n")
    # the origin annotation is stockade's way of knowing, not part of the judged object
    assert "config.kubernetes.io/origin" not in json.dumps(doc)


@needs_kubectl
def test_one_overlay_named_renders_just_that_one(tmp_path: Path) -> None:
    base_and_overlays(tmp_path)
    code, doc, _ = scan("overlays/prod", "--fail-on", "never", cwd=tmp_path)
    assert code == 0 and doc["errors"] == []
    assert {f["resource"].get("namespace") for f in doc["findings"]} == {"prod"}
    assert by_namespace(doc, DEFAULT_SA) == {}


@needs_kubectl
def test_a_component_is_built_by_the_kustomization_that_uses_it(tmp_path: Path) -> None:
    base_and_overlays(tmp_path)
    write(
        tmp_path,
        {
            "components/sa/kustomization.yaml": (
                "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: sa.yaml\n"
            ),
            "components/sa/sa.yaml": SA_PATCH,
            "overlays/dev/kustomization.yaml": (
                "resources: [../../base]\nnamespace: dev\ncomponents: [../../components/sa]\n"
            ),
        },
    )
    code, doc, _ = scan(".", "--fail-on", "never", cwd=tmp_path)
    assert code == 0 and doc["errors"] == []
    assert by_namespace(doc, DEFAULT_SA) == {}  # both overlays now name a ServiceAccount
    assert {f["location"]["file"] for f in doc["findings"]} == {str(Path("base") / "deployment.yaml")}
    # a component no kustomization of the scan uses cannot be built alone: skipped, and said so
    code, doc, _ = scan("components/sa", "--allow-empty", cwd=tmp_path)
    assert code == 0 and doc["errors"] == [] and doc["findings"] == []
    assert [s["reason"] for s in doc["skipped_files"]] == [
        "a kustomize Component, built only by the kustomizations that use it; scan one of them"
    ]


@needs_kubectl
def test_a_broken_kustomization_is_one_error_and_the_rest_is_scanned(tmp_path: Path) -> None:
    base_and_overlays(tmp_path)
    write(
        tmp_path,
        {
            "broken/kustomization.yaml": "resources: [deployment.yaml, missing.yaml]\n",
            "broken/deployment.yaml": DEPLOYMENT,
        },
    )
    code, doc, _ = scan(".", "--fail-on", "never", cwd=tmp_path)
    assert code == 2
    (error,) = doc["errors"]
    assert error["file"] == "broken"
    assert "missing.yaml" in error["message"] and "\n" not in error["message"]
    assert not error["message"].startswith(("E1", '"command failed"'))  # kubectl's log framing is gone
    # the overlays are still rendered; the broken one's files are not read alone instead
    assert {f["resource"].get("namespace") for f in doc["findings"]} == {"prod", "dev"}


@needs_kubectl
def test_a_failure_deep_in_the_bases_names_the_chain_and_its_cause(tmp_path: Path) -> None:
    """gpu-operator's config/manifests: two bases down, a configMapGenerator's `.env` (a generated,
    ignored file) is missing. kustomize's error repeats every level's path twice and starts with
    its deprecation warnings; the line kept its first 500 characters, which never reached the cause."""
    long = "a-rather-long-directory-name-as-real-repositories-have-"
    write(
        tmp_path,
        {
            "config/manifests/kustomization.yaml": f"bases: [../{long}default]\n",
            f"config/{long}default/kustomization.yaml": f"resources: [../{long}manager]\n",
            f"config/{long}manager/kustomization.yaml": (
                "configMapGenerator:\n- name: env\n  envs: [.env]\n"
                "patchesStrategicMerge: []\nresources: [deployment.yaml]\n"
            ),
            f"config/{long}manager/deployment.yaml": DEPLOYMENT,
        },
    )
    code, doc, _ = scan("config", "--fail-on", "never", cwd=tmp_path)
    assert code == 2
    (error,) = doc["errors"]
    message = error["message"]
    assert "deprecated" not in message and len(message) < 900
    assert f"via ../{long}default → ../{long}manager: " in message
    cause = f"lstat config/{long}manager/.env: no such file or directory"
    # and what the failure leaves: the kustomization the root builds on is built without it, and
    # fails for the same cause, which is not a second error (nor is its own base's)
    assert message.endswith(
        f"{cause} (the kustomization it builds on, ../{long}default, is scanned without it where it builds)"
    )


@needs_kubectl
def test_the_bases_of_a_kustomization_that_fails_are_scanned_without_it(tmp_path: Path) -> None:
    """kubeflow/trainer: its overlays reach JobSet's and LWS' release manifests by URL, which fail
    offline, and with them every local base they build on went unjudged (its runtimes, its
    controller, its RBAC: 12 of its objects judged). A base no kustomization that built covers is
    now rendered on its own; one another overlay builds is not rendered twice; a base that fails
    for a cause of its own is its own error."""
    write(
        tmp_path,
        {
            "overlays/platform/kustomization.yaml": (
                "resources: [gone.yaml, ../../base/app, ../../base/shared, ../../base/broken]\n"
            ),
            "base/broken/kustomization.yaml": "resources: [absent.yaml]\n",
            "overlays/ok/kustomization.yaml": "resources: [../../base/shared]\nnamespace: ok\n",
            "base/app/kustomization.yaml": "resources: [deployment.yaml]\nnamespace: app\n",
            "base/app/deployment.yaml": DEPLOYMENT,
            "base/shared/kustomization.yaml": "resources: [deployment.yaml]\n",
            "base/shared/deployment.yaml": DEPLOYMENT.replace("name: web", "name: shared", 1),
        },
    )
    code, doc, _ = scan(".", "--fail-on", "never", cwd=tmp_path)
    assert code == 2
    error, broken = doc["errors"]
    assert error["file"] == "overlays/platform" and "gone.yaml" in error["message"]
    assert (
        "(the 3 kustomizations it builds on, ../../base/app, ../../base/broken, ../../base/shared, are"
        in (error["message"])
    )
    assert broken["file"] == "base/broken" and "absent.yaml" in broken["message"]  # a cause of its own
    judged = {(f["resource"].get("namespace"), f["resource"]["name"]) for f in doc["findings"]}
    assert ("app", "web") in judged  # rendered alone: nothing else builds on it
    assert {ns for ns, name in judged if name == "shared"} == {"ok"}  # through the overlay that built
    assert all(f["location"]["file"].startswith("base/") for f in doc["findings"])


def test_a_renderers_error_keeps_its_cause() -> None:
    """The summary of kustomize's nested errors, on the texts kubectl 1.31 writes (kubeflow
    manifests' remote Argo base out of reach; a missing resource file)."""
    from stockade.scanner.sources.render import MAX_DETAIL, error_detail

    remote = (
        "# Warning: 'vars' is deprecated. Please use 'replacements' instead.\n"
        "error: accumulating resources: accumulation err='accumulating resources from '../base': "
        "'/r/env/base' must resolve to a file': recursed accumulation of path '/r/env/base': "
        "accumulating resources: accumulation err='accumulating resources from "
        "'https://github.com/argoproj/argo-workflows/manifests/base?ref=v3.7.3': Get \"https://x\": "
        "dial tcp: lookup github.com: no such host': failed to run 'git fetch': fatal: Could not "
        "resolve host: github.com\n"
    )
    assert error_detail(remote) == (
        "via ../base → https://github.com/argoproj/argo-workflows/manifests/base?ref=v3.7.3: "
        "Get \"https://x\": dial tcp: lookup github.com: no such host': failed to run 'git fetch': "
        "fatal: Could not resolve host: github.com"
    )
    missing = (
        "error: accumulating resources: accumulation err='accumulating resources from 'policy.yaml': "
        "evalsymlink failure on '/r/policy.yaml' : lstat /r/policy.yaml: no such file or directory': "
        "must build at directory: not a valid directory: lstat /r/policy.yaml: no such file or directory"
    )
    assert error_detail(missing).startswith("via policy.yaml: evalsymlink failure on '/r/policy.yaml'")
    # no chain: the error itself, its end kept
    long = "error: " + "x" * 2000 + " the cause"
    assert error_detail(long).endswith(" the cause") and len(error_detail(long)) <= MAX_DETAIL + 2
    assert error_detail("Error: must specify --enable-helm\n") == "must specify --enable-helm"


def test_without_kubectl_a_kustomization_is_an_error_naming_what_to_install(tmp_path: Path) -> None:
    base_and_overlays(tmp_path)
    empty = tmp_path / "no-tools"
    empty.mkdir()
    code, doc, _ = scan(".", cwd=tmp_path, path=str(empty))
    assert code == 2
    messages = {e["file"]: e["message"] for e in doc["errors"]}
    assert set(messages) == {str(Path("overlays") / "dev"), str(Path("overlays") / "prod")}
    assert all("needs `kubectl`" in m and "--kubectl PATH" in m for m in messages.values()), messages
    assert doc["findings"] == []  # not a silent raw scan of the patch and the base


@needs_kubectl
def test_kubectl_path_is_honoured(tmp_path: Path) -> None:
    base_and_overlays(tmp_path)
    empty = tmp_path / "no-tools"
    empty.mkdir()
    assert KUBECTL is not None
    code, doc, _ = scan(
        "overlays/prod", "--kubectl", KUBECTL, "--fail-on", "never", cwd=tmp_path, path=str(empty)
    )
    assert code == 0 and doc["errors"] == [] and doc["findings"]
    code, doc, _ = scan("overlays/prod", "--kubectl", str(empty / "kubectl"), cwd=tmp_path, path=str(empty))
    assert code == 2 and "cannot run" in doc["errors"][0]["message"]


@needs_kubectl
def test_named_files_the_pre_commit_case(tmp_path: Path) -> None:
    """A pre-commit hook names the files a commit changed: a kustomization file stands for its
    directory (what the change builds is checked), and so does a patch its folder's kustomization
    uses; a file the kustomization does not use is read alone."""
    base_and_overlays(tmp_path)
    code, doc, _ = scan("overlays/prod/kustomization.yaml", "--fail-on", "never", cwd=tmp_path)
    assert code == 0 and doc["errors"] == []
    assert {f["resource"].get("namespace") for f in doc["findings"]} == {"prod"}
    assert by_namespace(doc, DEFAULT_SA) == {}
    code, doc, _ = scan("overlays/prod/sa.yaml", "--fail-on", "never", cwd=tmp_path)
    assert {f["resource"].get("namespace") for f in doc["findings"]} == {"prod"}
    assert by_namespace(doc, DEFAULT_SA) == {}  # the patch as part of prod, not as a Deployment alone
    # both changed: prod once (its base through it), the base's file not read alone a second time
    code, doc, _ = scan("base/deployment.yaml", "overlays/prod/sa.yaml", "--fail-on", "never", cwd=tmp_path)
    assert {f["resource"].get("namespace") for f in doc["findings"]} == {"prod"}
    assert len(by_namespace(doc, "STK-POD-103")["prod"]) == 1


def test_walk_renders_roots_and_leaves_composed_and_unused_files_out(tmp_path: Path) -> None:
    """The walk alone (no kubectl run): which directories are rendered and which files are read."""
    base_and_overlays(tmp_path)
    write(
        tmp_path,
        {
            "overlays/prod/disabled_patch.yaml": SA_PATCH,  # in prod's folder, not in its kustomization
            "plain/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n",
            # kubeflow's tensorboard base: patches/ holds the patch it lists and one it does not
            "overlays/dev/kustomization.yaml": (
                "resources: [../../base]\nnamespace: dev\npatches:\n- path: patches/sa.yaml\n"
            ),
            "overlays/dev/patches/sa.yaml": SA_PATCH,
            "overlays/dev/patches/unused.yaml": SA_PATCH.replace("web", "deployment"),
        },
    )
    targets = list(FileSource([str(tmp_path)]).targets())
    rendered = sorted(
        t.directory.relative_to(tmp_path).as_posix() for t in targets if isinstance(t, Rendered)
    )
    assert rendered == ["overlays/dev", "overlays/prod"]
    assert all(t.tool == "kustomize" for t in targets if isinstance(t, Rendered))
    read = [t.relative_to(tmp_path).as_posix() for t in targets if isinstance(t, Path)]
    assert read == ["plain/pod.yaml"]
    assert [t for t in targets if not isinstance(t, Path | Rendered | Skipped)] == []
    skipped = [t for t in targets if isinstance(t, Skipped)]
    assert sorted(Path(s.file).name for s in skipped) == ["disabled_patch.yaml", "unused.yaml"]
    assert "not listed by it" in skipped[0].reason
    # named one by one, it is read alone (the user asked for it)
    named = list(FileSource([str(tmp_path / "overlays/prod/disabled_patch.yaml")]).targets())
    assert named == [tmp_path / "overlays/prod/disabled_patch.yaml"]


@needs_kubectl
def test_overlays_sharing_a_base_read_its_files_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each overlay's render points its objects at the base's file, read for their lines once for
    all the overlays (kserve's twenty overlays read the same files again: 9 s of a 55 s scan), and
    again when it changes."""
    from stockade.scanner.sources import render

    base_and_overlays(tmp_path)
    reads: list[Path] = []
    real = render._read_documents

    def counted(source: Path) -> Any:
        reads.append(source)
        return real(source)

    monkeypatch.setattr(render, "_read_documents", counted)
    render._read_version.cache_clear()
    monkeypatch.chdir(tmp_path)

    def lines() -> dict[str | None, tuple[str | None, int | None]]:
        out = {}
        for overlay in ("overlays/prod", "overlays/dev"):
            for item in render.KustomizeSource(overlay, kubectl=KUBECTL):
                if isinstance(item, Resource) and item.kind == "Deployment":
                    out[item.namespace] = (item.origin.file, item.origin.line)
        return out

    first = lines()
    assert set(first) == {"prod", "dev"}
    assert all(file == str(Path("base") / "deployment.yaml") and line == 1 for file, line in first.values())
    assert [p.name for p in reads] == ["deployment.yaml"]  # two renders, one read
    (tmp_path / "base" / "deployment.yaml").write_text("# changed\n" + DEPLOYMENT, encoding="utf-8")
    assert {ns: line for ns, (_, line) in lines().items()} == {"prod": 2, "dev": 2}
    assert len(reads) == 2


@needs_kubectl
def test_overlays_rendered_side_by_side_report_as_one_after_another(tmp_path: Path) -> None:
    """With several workers the overlays are rendered on threads at once (scanner.scan._rendered):
    the report (findings and errors) is the one the overlays give rendered one after another."""
    base_and_overlays(tmp_path)
    write(
        tmp_path,
        {
            "overlays/stage/kustomization.yaml": "resources: [../../base]\nnamespace: stage\n",
            "broken/kustomization.yaml": "resources: [deployment.yaml, missing.yaml]\n",
            "broken/deployment.yaml": DEPLOYMENT,
            "plain.yaml": DEPLOYMENT.replace("name: web\n", "name: plain\n", 1),
        },
    )
    one = scan(".", "--fail-on", "never", "--workers", "1", cwd=tmp_path)
    two = scan(".", "--fail-on", "never", "--workers", "2", cwd=tmp_path)
    assert one[0] == two[0] == 2
    for key in ("findings", "errors"):
        assert one[1][key] == two[1][key]
    assert {f["resource"].get("namespace") for f in two[1]["findings"]} >= {"prod", "dev", "stage"}


HELM = shutil.which("helm", path=os.pathsep.join([str(TOOLS), os.environ.get("PATH", "")]))


@needs_kubectl
@pytest.mark.skipif(HELM is None, reason="helm not installed (make tools installs it)")
def test_helm_charts_of_a_kustomization_are_inflated_once(tmp_path: Path) -> None:
    """`helmCharts:` (kube-prometheus-stack and most GitOps trees through Argo CD or Flux) needs
    `--enable-helm`: without it the overlay was an error, its objects unjudged, and its chart was
    rendered alone with its own defaults. Now the kustomization inflates it with its values, and the
    chart folder is not rendered a second time."""
    write(
        tmp_path,
        {
            "kustomization.yaml": (
                "helmCharts:\n- name: tool\n  releaseName: r\n  valuesInline: {hostNet: true}\n"
                "resources: [deployment.yaml]\n"
            ),
            "deployment.yaml": DEPLOYMENT,
            "charts/tool/Chart.yaml": "apiVersion: v2\nname: tool\nversion: 0.1.0\n",
            "charts/tool/values.yaml": "hostNet: false\n",
            "charts/tool/templates/pod.yaml": (
                "apiVersion: v1\nkind: Pod\nmetadata: {name: tool}\n"
                "spec: {hostNetwork: {{ .Values.hostNet }}, containers: [{name: c, image: x}]}\n"
            ),
        },
    )
    code, doc, err = scan(".", "--fail-on", "never", cwd=tmp_path)
    assert code == 0 and doc["errors"] == [], err
    pods = [f for f in doc["findings"] if f["resource"]["name"] == "tool"]
    assert pods and {f["location"]["file"] for f in pods} == {"kustomization.yaml"}
    # the kustomization's value (hostNet: true), not the chart's default: rendered once, through it
    host_network = [f for f in pods if f["rule"]["id"] == "STK-POD-002"]
    assert len(host_network) == 1, [f["rule"]["id"] for f in pods]
    assert sorted(p.name for p in (tmp_path / "charts").iterdir()) == ["tool"]  # nothing pulled or written


@pytest.mark.skipif(HELM is None, reason="helm not installed (make tools installs it)")
def test_a_chart_is_rendered_into_the_namespace_given(tmp_path: Path) -> None:
    """`stockade scan chart/ -n ml` rendered with helm's default release namespace: a chart that
    writes `namespace: {{ .Release.Namespace }}` (most do) was judged in "default", where `helm
    install -n ml` puts nothing, with default's policies and namespace facts."""
    write(
        tmp_path,
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
            "chart/templates/deploy.yaml": DEPLOYMENT.replace(
                "  name: web\n", "  name: web\n  namespace: {{ .Release.Namespace }}\n", 1
            ),
        },
    )
    _, given, _ = scan("chart", "-n", "ml", "--fail-on", "never", cwd=tmp_path)
    assert {f["resource"]["namespace"] for f in given["findings"]} == {"ml"}
    _, plain, _ = scan("chart", "--fail-on", "never", cwd=tmp_path)
    assert {f["resource"]["namespace"] for f in plain["findings"]} == {"default"}


def test_a_renamed_object_is_found_by_the_part_of_its_name_its_file_writes() -> None:
    """kustomize's origin names the file; a namePrefix or nameSuffix changed the name: the document
    whose name is the longest part of the built one, else the file's one document of the kind,
    never a guess between two."""
    from stockade.policies.model import Origin
    from stockade.scanner.sources.render import _written

    web, api, role = Origin(line=1), Origin(line=20), Origin(line=40)
    docs = {("Deployment", "web"): [web], ("Deployment", "web-api"): [api], ("Role", "admin"): [role]}
    assert _written(docs, "Deployment", "web") is web
    assert _written(docs, "Deployment", "prod-web-api-v2") is api  # the longest part
    assert _written(docs, "Deployment", "prod-web") is web
    assert _written(docs, "Role", "prefix-renamed-by-a-patch") is role  # the file's one Role
    assert _written(docs, "Deployment", "other") is None  # two Deployments, neither fits
    assert _written({("Deployment", "a"): [web], ("Deployment", "b"): [api]}, "Deployment", "a-b") is None
