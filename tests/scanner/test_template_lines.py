"""Where a field of an object Helm rendered is written in its template (scanner/sources/template_lines.py).

The templates are shaped on real charts' (kuberay's operator and API server, NVIDIA's
node-feature-discovery ClusterRoles, the spark-operator's RBAC); each case says what a reviewer
clicking the finding should land on. Where the template cannot tell (two documents alike), nothing
is resolved: line 1, never a wrong line."""

from __future__ import annotations

from typing import Any

import yaml

from stockade.scanner.sources.template_lines import Document, document_for, line_in, parse_template

OPERATOR = """\
{{/*
A licence header in a template comment: `key: value` lines in it are not YAML.
*/}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "op.name" . }}
  labels:
    {{- include "op.labels" . | nindent 4 }}
spec:
  template:
    spec:
      serviceAccountName: {{ include "op.sa" . }}
      containers:
        - name: {{ .Chart.Name }}
          {{- with .Values.securityContext }}
          securityContext:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          command:
            - /bin/sh
            - -c
            - |
              name: not-a-key
              image: not-a-key-either
          ports:
            {{- toYaml .Values.ports | nindent 12 }}
          resources: {{ toYaml .Values.resources | nindent 12 }}
"""

RENDERED_OPERATOR = {
    "kind": "Deployment",
    "metadata": {"name": "op"},
    "spec": {
        "template": {
            "spec": {
                "serviceAccountName": "op",
                "containers": [
                    {
                        "name": "op",
                        "securityContext": {"privileged": True},
                        "image": "op:latest",
                        "command": ["/bin/sh", "-c", "name: not-a-key\nimage: not-a-key-either\n"],
                        "ports": [{"containerPort": 80}],
                        "resources": {"limits": {"cpu": 1}},
                    }
                ],
            }
        }
    },
}


def _only(text: str) -> Document:
    (document,) = parse_template(text)
    return document


def test_a_key_the_template_writes_is_its_line() -> None:
    document = _only(OPERATOR)
    container = ("spec", "template", "spec", "containers", 0)
    assert line_in(document, ("spec", "template", "spec", "serviceAccountName"), RENDERED_OPERATOR) == 13
    assert line_in(document, (*container, "image"), RENDERED_OPERATOR) == 20
    # the one container of the list (its name an action): its `- name:` line
    assert line_in(document, container, RENDERED_OPERATOR) == 15
    # the object itself: its first line, past the template comment
    assert line_in(document, (), RENDERED_OPERATOR) == 4


def test_a_key_it_does_not_write_is_where_it_comes_from() -> None:
    document = _only(OPERATOR)
    container = ("spec", "template", "spec", "containers", 0)
    # `securityContext:` then the toYaml that writes its keys
    assert line_in(document, (*container, "securityContext", "privileged"), RENDERED_OPERATOR) == 18
    # `ports:` then a toYaml writing a list at the key's own column: the list is that key's
    assert line_in(document, (*container, "ports", 0, "containerPort"), RENDERED_OPERATOR) == 28
    # a key whose value is an action: the key
    assert line_in(document, (*container, "resources", "limits", "cpu"), RENDERED_OPERATOR) == 29
    # a field nothing writes (a missing runAsNonRoot): the deepest key written, the container
    assert line_in(document, (*container, "runAsNonRoot"), RENDERED_OPERATOR) == 15
    # a block scalar's text is not structure
    assert line_in(document, (*container, "command", 2), RENDERED_OPERATOR) == 24


APISERVER = """\
kind: Deployment
spec:
  template:
    spec:
      containers:
      - name: {{ .Values.name }}-container
        image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
      {{- if .Values.security }}
      - name: security-proxy-container
        image: "{{ .Values.security.proxy.repository }}:{{ .Values.security.proxy.tag }}"
      {{- end }}
      {{- with .Values.sidecars }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
"""


def _containers(*names: str) -> dict[str, Any]:
    containers = [{"name": n, "image": f"{n}:1"} for n in names]
    return {"kind": "Deployment", "spec": {"template": {"spec": {"containers": containers}}}}


def test_list_items_are_told_apart_by_literal_values_and_position() -> None:
    document = _only(APISERVER)
    path = ("spec", "template", "spec", "containers")
    both = _containers("api-container", "security-proxy-container", "extra")
    # the first item: no action before it in the list, so it is always the first rendered
    assert line_in(document, (*path, 0, "image"), both) == 7
    # the second: its literal name
    assert line_in(document, (*path, 1, "image"), both) == 10
    # the third came from the toYaml of sidecars: no item of the template is it; the list's key
    assert line_in(document, (*path, 2, "image"), both) == 5
    # the proxy turned off: a sidecar is the second item, and is not taken for the proxy
    assert line_in(document, (*path, 1, "image"), _containers("api-container", "extra")) == 5


RANGED = """\
kind: Pod
spec:
  containers:
  {{- range .Values.containers }}
  - name: {{ .name }}
    image: {{ .image }}
  {{- end }}
"""


def test_the_one_item_of_a_range_is_every_item_it_renders() -> None:
    document = _only(RANGED)
    pod = {"kind": "Pod", "spec": {"containers": [{"name": "a", "image": "a"}, {"name": "b", "image": "b"}]}}
    assert line_in(document, ("spec", "containers", 1, "image"), pod) == 6


CLUSTER_ROLES = """\
{{- if .Values.master.rbac.create }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ include "nfd.fullname" . }}
rules:
- apiGroups:
  - ""
  resources:
  - nodes
  verbs:
  - get
  - patch
{{- end }}
---
{{- if .Values.gc.rbac.create }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ include "nfd.fullname" . }}-gc
rules:
- apiGroups:
  - ""
  resources:
  - nodes
  verbs:
  - list
- apiGroups: ["topology.node.k8s.io"]
  resources: ["noderesourcetopologies"]
  verbs: ["delete", "list"]
{{- end }}
"""


def _role(*rules: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "x"},
        "rules": list(rules),
    }


def test_documents_of_one_kind_are_told_apart_by_what_they_write() -> None:
    documents = parse_template(CLUSTER_ROLES)
    master = _role({"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]})
    gc = _role(
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]},
        {
            "apiGroups": ["topology.node.k8s.io"],
            "resources": ["noderesourcetopologies"],
            "verbs": ["delete", "list"],
        },
    )
    # only the gc role rendered: by order it would be taken for the first document
    found = document_for(documents, gc, 0, 1)
    assert found is documents[1]
    assert line_in(found, ("rules", 1), gc) == 28
    assert line_in(found, ("rules", 1, "verbs"), gc) == 30
    assert document_for(documents, master, 0, 1) is documents[0]


BINDINGS = """\
kind: RoleBinding
subjects:
- kind: ServiceAccount
  name: {{ include "sa" . }}
---
kind: RoleBinding
subjects:
- kind: ServiceAccount
  name: {{ include "sa" $ }}
"""


def test_documents_alike_are_not_guessed() -> None:
    """The spark-operator's RoleBinding of the release's namespace and those of its job namespaces
    write the same literals: one rendered, the template cannot say which; nothing resolved."""
    binding = {"kind": "RoleBinding", "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}
    documents = parse_template(BINDINGS)
    assert document_for(documents, binding, 0, 1) is None
    # both rendered: by order
    assert document_for(documents, binding, 1, 2) is documents[1]


def test_an_include_at_the_top_writes_what_the_document_does_not() -> None:
    """kuberay's ClusterRole: its rules come from an include of a helper."""
    template = (
        '{{- if .Values.rbacEnable }}\nkind: ClusterRole\nmetadata:\n  name: {{ include "n" . }}\n'
        '{{ include "role.rules" (dict "a" .Values.a\n  "b" .Values.b) }}\n{{- end }}\n'
    )
    role = yaml.safe_load("kind: ClusterRole\nrules: [{verbs: [get]}]")
    assert line_in(_only(template), ("rules", 0), role) == 5


def test_a_hostile_template_is_read_within_bounds() -> None:
    """A template nested thousands of levels deep, and lists of thousands of literal items against a
    rendered list as long: no recursion error, no quadratic walk (the lists are not compared item by
    item past MAX_PAIRS pairs; nothing is resolved inside them instead)."""
    deep = "kind: Pod\nspec:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 5000))
    document = _only(deep)
    # read down to the column past which nothing is structure
    assert line_in(document, ("spec", *(f"k{i}" for i in range(1, 5000))), {"kind": "Pod"}) == 402
    items = "".join(f"  - name: c{i}\n    image: c{i}\n" for i in range(3000))
    pod = {"kind": "Pod", "spec": {"containers": [{"name": f"c{i}", "image": f"c{i}"} for i in range(3000)]}}
    listed = _only("kind: Pod\nspec:\n  containers:\n" + items)
    # one item looked up: its literal name tells it (one rendered item against 3,000 template items)
    assert line_in(listed, ("spec", "containers", 2999, "image"), pod) == 3 + 2 * 2999 + 2
    # documents compared whole: the long lists count for nothing, the kind decides
    assert document_for([listed, _only("kind: Service\n")], pod, 0, 1) is listed


SPARK_ROLE = """\
kind: Role
rules:
{{- if .Values.controller.leaderElection.enable }}
- apiGroups:
  - coordination.k8s.io
  resources:
  - leases
  verbs:
  - create
{{- end }}
{{- if has .Release.Namespace .Values.spark.jobNamespaces }}
{{ include "spark-operator.controller.policyRules" . }}
{{- else }}
- apiGroups:
  - ""
  resources:
  - events
  verbs:
  - create
{{- end }}
"""


def test_a_rule_an_include_adds_beside_literal_ones_is_the_include() -> None:
    """The spark-operator's controller Role (a second reader found it at the list's key): its pods
    rule comes from the include, since no literal rule of the template holds pods."""
    role = {
        "kind": "Role",
        "rules": [
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "delete"]},
        ],
    }
    document = _only(SPARK_ROLE)
    assert line_in(document, ("rules", 1), role) == 12
    assert line_in(document, ("rules", 0), role) == 4
    # a rendered rule the literal events rule could be: not the include's
    events = {"kind": "Role", "rules": [{"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}]}
    assert line_in(document, ("rules", 0), events) == 14
