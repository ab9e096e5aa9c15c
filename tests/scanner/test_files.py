"""The file source: multi-document YAML, JSON, List kinds, stdin, globs, and per-file errors."""

from __future__ import annotations

from pathlib import Path

from stockade.policies.model import InputError, Resource
from stockade.scanner.sources.files import FileSource, parse_text
from stockade.scanner.sources.render import split_helm_output

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: app
          image: nginx
          securityContext:
            privileged: true
"""


def resources(items: list[Resource | InputError]) -> list[Resource]:
    return [i for i in items if isinstance(i, Resource)]


def test_multi_document_yaml_keeps_document_lines() -> None:
    text = "# comment\n---\n" + DEPLOY + "---\n" + DEPLOY.replace("web", "api")
    objs = resources(list(parse_text(text, "m.yaml")))
    assert [r.name for r in objs] == ["web", "api"]
    assert objs[0].origin.line == 3
    privileged = ("spec", "template", "spec", "containers", 0, "securityContext", "privileged")
    assert objs[0].origin.line_of(privileged) == 14
    assert objs[1].origin.line_of(privileged) == 27
    # A missing field resolves to the nearest existing ancestor.
    assert objs[0].origin.line_of(("spec", "template", "spec", "containers", 0, "resources", "limits")) == 11


def test_list_kind_items_have_their_own_lines() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\n"
        "  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: b\n"
    )
    objs = resources(list(parse_text(text, "l.yaml")))
    assert [(r.name, r.origin.line_of(())) for r in objs] == [("a", 4), ("b", 7)]
    assert objs[1].origin.line_of(("metadata", "name")) == 10


def test_json_file_with_line_numbers(tmp_path: Path) -> None:
    f = tmp_path / "pod.json"
    f.write_text('{\n  "apiVersion": "v1",\n  "kind": "Pod",\n  "metadata": {\n    "name": "p"\n  }\n}\n')
    (obj,) = resources(list(FileSource([str(f)])))
    assert obj.name == "p"
    assert obj.origin.line_of(("metadata", "name")) == 5


def test_invalid_json_reports_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    f.write_text('{\n  "kind": "Pod",\n  oops\n  "apiVersion": "v1"\n}\n')
    (err,) = list(FileSource([str(f)]))
    assert isinstance(err, InputError) and err.line == 3 and err.message.startswith("invalid JSON")


def test_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(DEPLOY)
    (tmp_path / "b.yaml").write_text("kind: Pod\nmetadata:\n  name: [x\n")
    (tmp_path / "c.yml").write_text(DEPLOY.replace("web", "other"))
    (tmp_path / "notes.txt").write_text("not scanned")
    (tmp_path / "values.yaml").write_text("replicas: 3\n")  # not a Kubernetes object: skipped
    (tmp_path / "latin1.yaml").write_bytes(b"kind: Pod\nname: \xe9\n")
    source = FileSource([str(tmp_path)])
    items = list(source)
    assert sorted(r.name for r in resources(items)) == ["other", "web"]
    errors = sorted((Path(e.file).name, e.line) for e in items if isinstance(e, InputError))
    assert errors == [("b.yaml", 3), ("latin1.yaml", None)]  # the line of the unclosed [
    assert source.files_read == 5


def test_include_exclude_globs(tmp_path: Path) -> None:
    (tmp_path / "prod").mkdir()
    (tmp_path / "test").mkdir()
    (tmp_path / "prod" / "a.yaml").write_text(DEPLOY)
    (tmp_path / "test" / "b.yaml").write_text(DEPLOY.replace("web", "b"))
    (tmp_path / "prod" / "c.k8s").write_text(DEPLOY.replace("web", "c"))
    names = {r.name for r in resources(list(FileSource([str(tmp_path)], exclude=["test"])))}
    assert names == {"web"}
    names = {r.name for r in resources(list(FileSource([str(tmp_path)], include=["*.k8s"])))}
    assert names == {"c"}


def test_go_vendored_modules_are_skipped_unless_named(tmp_path: Path) -> None:
    """gpu-operator vendors its Go modules: k8s.io/apimachinery's managedfields test fixture (a Pod
    dump) was six findings of the repository. A `vendor` folder holding Go's modules.txt is one
    skipped entry; named, it is scanned; a `vendor` folder without modules.txt (manifests a team
    vendors from elsewhere, and deploys) is scanned."""
    from stockade.scanner.sources.base import Skipped

    fixture = tmp_path / "vendor" / "k8s.io" / "apimachinery" / "pkg" / "util" / "managedfields"
    fixture.mkdir(parents=True)
    (fixture / "pod.yaml").write_text(DEPLOY.replace("web", "fixture"))
    (tmp_path / "vendor" / "modules.txt").write_text("# k8s.io/apimachinery v0.31.0\n")
    (tmp_path / "deploy" / "vendor").mkdir(parents=True)
    (tmp_path / "deploy" / "vendor" / "cert-manager.yaml").write_text(DEPLOY.replace("web", "cert-manager"))
    (tmp_path / "app.yaml").write_text(DEPLOY)
    items = list(FileSource([str(tmp_path)]))
    assert {r.name for r in resources(items)} == {"web", "cert-manager"}
    (skipped,) = [i for i in items if isinstance(i, Skipped)]
    assert skipped.file == str(tmp_path / "vendor") and "modules.txt" in skipped.reason
    named = list(FileSource([str(tmp_path / "vendor")]))
    assert {r.name for r in resources(named)} == {"fixture"}


def test_stdin_and_missing_path() -> None:
    items = list(FileSource(["-", "/nonexistent/x.yaml"], stdin_text=DEPLOY))
    assert resources(items)[0].origin.file == "<stdin>"
    assert [str(e) for e in items if isinstance(e, InputError)] == [
        "/nonexistent/x.yaml: no such file or directory"
    ]


def test_helm_output_is_attributed_to_templates() -> None:
    text = (
        "---\n# Source: mychart/templates/deploy.yaml\n"
        + DEPLOY
        + "---\n# Source: mychart/templates/svc.yaml\n"
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n"
    )
    objs = resources(list(split_helm_output(text, "charts/mychart")))
    assert [(r.kind, r.origin.file, r.origin.line) for r in objs] == [
        ("Deployment", "charts/mychart/templates/deploy.yaml", 1),
        ("Service", "charts/mychart/templates/svc.yaml", 1),
    ]


def test_worker_reads_travel_marshalled_when_they_hold_objects_only(tmp_path: Path) -> None:
    """A parallel scan's reader returns a file of objects as marshal bytes (the parent loads them
    faster than pickle); a file with an error goes as objects, and both come back the same."""
    from stockade.scanner.scan import _from_plain, _read_plain, _unpacked

    good = tmp_path / "good.yaml"
    good.write_text(DEPLOY + "---\n" + DEPLOY.replace("name: web", "name: web2"))
    bad = tmp_path / "bad.yaml"
    bad.write_text(DEPLOY + "---\nkind: Pod\napiVersion: v1\nmetadata: [\n")
    packed = _read_plain(good)
    assert isinstance(packed, bytes)
    items = [_from_plain(p) for p in _unpacked(packed)]
    direct = resources(list(FileSource([str(good)])))
    assert [(r.obj, r.origin.line, r.origin.document, r.origin.span) for r in resources(items)] == [
        (r.obj, r.origin.line, r.origin.document, r.origin.locator.span)
        for r in direct  # type: ignore[union-attr]
    ]
    mixed = _read_plain(bad)
    assert isinstance(mixed, list) and any(isinstance(p, InputError) for p in mixed)


#: gpu-operator's embedded manifests (manifests/state-*/): Go templates its operator renders
OPERATOR_TEMPLATES = {
    "0100_serviceaccount.yaml": (
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: nvidia-dcgm\n"
        "  namespace: {{ .Namespace }}\n",
        5,
    ),
    "0450_scc.openshift.yaml": (
        "{{ if .OpenshiftVersion }}\napiVersion: security.openshift.io/v1\nkind: SecurityContextConstraints\n"
        "{{ end }}\n",
        1,
    ),
    "0500_daemonset.yaml": (
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: dcgm\n  labels:\n    app: dcgm\n"
        "    {{- range $k, $v := .Daemonsets.Labels }}\n    {{ $k }}: {{ $v | quote }}\n    {{- end }}\n",
        7,
    ),
}


def test_go_templates_are_skipped_not_errors(tmp_path: Path) -> None:
    """A file whose YAML breaks at a Go template action (``{{ … }}`` on the line the error names or
    the two before it) is a template another program renders: skipped, counted, with the action's
    line and what to scan instead. gpu-operator's 48 such files made every scan of the repository
    exit 2. A broken file whose error is elsewhere stays an error, templates or not."""
    from stockade.scanner.sources.base import Skipped

    for name, (text, _) in OPERATOR_TEMPLATES.items():
        (tmp_path / name).write_text(text)
    # an Argo Workflow: {{inputs.parameters.x}} in a string, and a real syntax error ten lines on
    argo = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  name: w\nspec:\n  templates:\n"
        "  - name: a\n    container:\n      image: alpine\n      args: ['{{inputs.parameters.x}}']\n"
        + "      # padding\n" * 5
        + "      env: [x\n"
    )
    (tmp_path / "workflow.yaml").write_text(argo)
    source = FileSource([str(tmp_path)])
    items = list(source)
    skipped = {Path(i.file).name: i.reason for i in items if isinstance(i, Skipped)}
    assert set(skipped) == set(OPERATOR_TEMPLATES)
    for name, (_, line) in OPERATOR_TEMPLATES.items():
        assert skipped[name].startswith(f"a Go template ({{{{ … }}}} at line {line})"), skipped[name]
        assert "helm template" in skipped[name]
    (error,) = [i for i in items if isinstance(i, InputError)]
    assert Path(error.file).name == "workflow.yaml" and error.line == 16


def test_placeholder_templates_are_skipped_not_errors(tmp_path: Path) -> None:
    """The spark-operator's examples write `image: {IMAGE_REGISTRY}/{IMAGE_REPOSITORY}/spark:4` for a
    script to fill in: YAML reads a flow mapping there and breaks, and the scan exited 2. Skipped
    with what to scan instead; a `{NAME}` YAML reads (a one-key flow mapping) stays what it is."""
    from stockade.scanner.sources.base import Skipped

    app = (
        "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata:\n  name: spark-pi\n"
        "spec:\n  type: Scala\n  image: {IMAGE_REGISTRY}/{IMAGE_REPOSITORY}/spark:4.0.4\n  mode: cluster\n"
    )
    (item,) = list(parse_text(app, "spark-pi.yaml"))
    assert isinstance(item, Skipped) and item.reason.startswith("a template ({PLACEHOLDER} at line 7)")
    broken = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [a\n"
    (error,) = list(parse_text(broken, "pod.yaml"))
    assert isinstance(error, InputError)


def test_helm_output_reads_a_key_written_twice_as_helm_does() -> None:
    """A template that writes a key twice (a label its helper already sets: kubeflow's
    kserve-models-web-app chart, whereabouts, the NVIDIA DRA driver) installs with `helm install`,
    which reads the rendered YAML without strictness: the last value wins. Each such document was
    an input error, its object unjudged and the scan exit 2. Judged now as Helm applies it, also
    where the two values differ; a plain manifest file keeps the API server's strict reading."""
    twice = (
        "---\n# Source: app/templates/deploy.yaml\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n"
        "    app.kubernetes.io/component: web\n    app.kubernetes.io/component: web\n"
        "spec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: nginx\n"
        "          securityContext:\n            privileged: false\n            privileged: true\n"
    )
    (obj,) = list(split_helm_output(twice, "charts/app"))
    assert isinstance(obj, Resource) and obj.origin.file == "charts/app/templates/deploy.yaml"
    assert obj.obj["metadata"]["labels"] == {"app.kubernetes.io/component": "web"}
    assert obj.obj["spec"]["template"]["spec"]["containers"][0]["securityContext"] == {"privileged": True}
    (error,) = list(parse_text(twice, "deploy.yaml"))
    assert isinstance(error, InputError) and error.message.startswith("duplicate key")
