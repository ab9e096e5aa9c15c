# Helpers shared by the RBAC rules: scope (bootstrap objects), exact RBAC rule matching, and the
# catalogue of escalation-capable permissions (kubernetes.io "RBAC good practices").
#
# The catalogue is mirrored in policies/facts/rbac.py (RISKY), which the graph uses to attribute
# permissions to ServiceAccounts; tests/policies/test_rbac_rules.py checks the two agree entry by entry.
package stockade.lib.rbac

import rego.v1

role_kinds := {"Role", "ClusterRole"}

binding_kinds := {"RoleBinding", "ClusterRoleBinding"}

md := object.get(input.object, "metadata", {})

name := object.get(md, "name", "")

kind := input.object.kind

# Bootstrap RBAC objects are the API server's own and are reconciled by it on every start; they are
# out of scope unless scope.include_system_rbac is true. They carry the label
# kubernetes.io/bootstrapping: rbac-defaults. A `system:` name alone is not enough: anyone may name a
# ClusterRoleBinding `system:backdoor`. Decided here so that every gate agrees.
system_object if object.get(object.get(md, "labels", {}), "kubernetes.io/bootstrapping", "") == "rbac-defaults"

in_scope if object.get(data.stockade.config, ["scope", "include_system_rbac"], false) == true

in_scope if not system_object

role_rules contains [i, r] if {
	kind in role_kinds
	some i, r in object.get(input.object, "rules", [])
	is_object(r)
}

# --- exact RBAC matching (k8s.io/kubernetes pkg/apis/rbac/v1/evaluation_helpers.go) ----------------

verb_matches(rule, verb) if {
	some v in object.get(rule, "verbs", [])
	v in {"*", verb}
}

group_matches(rule, group) if {
	some g in object.get(rule, "apiGroups", [])
	g in {"*", group}
}

# `*` matches every resource and subresource, `pods` only pods, `pods/exec` and `*/exec` only pods/exec.
resource_matches(rule, _) if "*" in object.get(rule, "resources", [])

resource_matches(rule, resource) if resource in object.get(rule, "resources", [])

resource_matches(rule, resource) if {
	parts := split(resource, "/")
	count(parts) == 2
	parts[1] != "*"
	sprintf("*/%s", [parts[1]]) in object.get(rule, "resources", [])
}

# "userextras/*" in the catalogue stands for every userextras/<key> subresource.
resource_matches(rule, "userextras/*") if {
	some r in object.get(rule, "resources", [])
	startswith(r, "userextras/")
}

resource_matches(rule, "userextras/*") if {
	some r in object.get(rule, "resources", [])
	startswith(r, "*/")
}

# A create of a top-level resource carries no name, so a rule with resourceNames never grants it;
# everything else (and subresources, which always name their object) is granted for those names.
names_allow(rule, verb, resource) if {
	verb == "create"
	not contains(resource, "/")
	count(object.get(rule, "resourceNames", [])) == 0
}

names_allow(_, verb, _) if verb != "create"

names_allow(_, "create", resource) if contains(resource, "/")

grants(rule, verb, group, resource) if {
	verb_matches(rule, verb)
	group_matches(rule, group)
	resource_matches(rule, resource)
	names_allow(rule, verb, resource)
}

# --- the catalogue ------------------------------------------------------------------------------------

workload_resources := [
	["", "pods"], ["", "replicationcontrollers"], ["apps", "deployments"], ["apps", "statefulsets"],
	["apps", "daemonsets"], ["apps", "replicasets"], ["batch", "jobs"], ["batch", "cronjobs"],
]

perm(verbs, group, resources) := {"verbs": verbs, "group": group, "resources": resources}

# The verbs on a workload resource that decide the pods it runs: a Job's pod template is immutable
# (but for a suspended Job's scheduling directives, which name no account, image or volume), so
# only its create does (policies/facts/rbac.py TEMPLATE_FIXED; Kueue's controller updates Jobs).
pod_writes(group, resource) := ["create"] if [group, resource] == ["batch", "jobs"]

pod_writes(group, resource) := ["create", "update", "patch"] if [group, resource] != ["batch", "jobs"]

# The fleet's Kubernetes version (rbac.kubernetes_version, validated "1.30" to "1.35"). From 1.35 a
# WebSocket session on pods/exec, attach or portforward needs create as well as get
# (AuthorizePodWebsocketUpgradeCreatePermission, on by default); before, get alone opened one.
# Unset: the oldest supported version, which allows the most (what any version allows is reported).
configured_version := object.get(data.stockade.config, ["rbac", "kubernetes_version"], null)

kubernetes_minor := to_number(split(configured_version, ".")[1]) if {
	is_string(configured_version)
} else := 30

session_verbs := ["create"] if kubernetes_minor >= 35

session_verbs := ["get", "create"] if kubernetes_minor < 35

catalogue := {
	"STK-RBAC-002": {
		"why": "reads Secrets, including ServiceAccount tokens and credentials of other workloads",
		"perms": [perm(["get", "list", "watch"], "", ["secrets"])],
	},
	"STK-RBAC-003": {
		"why": "runs pods as any ServiceAccount of the namespace, with any volume it may mount",
		"perms": [perm(pod_writes(g, r), g, [r]) | some [g, r] in workload_resources],
	},
	"STK-RBAC-004": {
		"why": "creates PersistentVolumes, including hostPath volumes onto any node's filesystem",
		"perms": [perm(["create"], "", ["persistentvolumes"])],
	},
	"STK-RBAC-005": {
		"why": "reaches the kubelet API of every node (exec into any container, bypassing admission)",
		"perms": [perm(["get", "create"], "", ["nodes/proxy"])],
	},
	"STK-RBAC-006": {
		"why": "grants permissions it does not hold (bind) or edits roles beyond its own rights (escalate)",
		"perms": [perm(["escalate", "bind"], "rbac.authorization.k8s.io", ["roles", "clusterroles"])],
	},
	"STK-RBAC-007": {
		"why": "acts as other users, groups or ServiceAccounts and gains their permissions",
		"perms": [
			perm(["impersonate"], "", ["users", "groups", "serviceaccounts"]),
			perm(["impersonate"], "authentication.k8s.io", ["uids", "userextras/*"]),
		],
	},
	"STK-RBAC-008": {
		"why": "approves certificate signing requests, i.e. issues client certificates for any identity",
		"perms": [
			perm(["update", "patch"], "certificates.k8s.io", ["certificatesigningrequests/approval"]),
			perm(["approve"], "certificates.k8s.io", ["signers"]),
		],
	},
	"STK-RBAC-009": {
		"why": "mints tokens for ServiceAccounts and acts as them",
		"perms": [perm(["create"], "", ["serviceaccounts/token"])],
	},
	"STK-RBAC-010": {
		"why": "rewrites admission webhooks: reads or mutates every object admitted, or disables policy",
		"perms": [perm(
			["create", "update", "patch", "delete", "deletecollection"],
			"admissionregistration.k8s.io",
			["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
		)],
	},
	"STK-RBAC-011": {
		"why": "relabels namespaces, e.g. lowering their Pod Security level or joining network policy selectors",
		"perms": [perm(["patch", "update"], "", ["namespaces"])],
	},
	"STK-RBAC-012": {
		"why": "runs commands in running containers (get suffices before Kubernetes 1.35)",
		"perms": [perm(session_verbs, "", ["pods/exec", "pods/attach", "pods/portforward"])],
	},
	"STK-RBAC-013": {
		"why": "adds ephemeral containers to running pods, with the pod's ServiceAccount and volumes",
		"perms": [perm(["update", "patch"], "", ["pods/ephemeralcontainers"])],
	},
	"STK-RBAC-014": {
		"why": "creates Secrets, including legacy ServiceAccount token Secrets the token controller fills for any account of the namespace",
		"perms": [perm(["create"], "", ["secrets"])],
	},
	"STK-RBAC-015": {
		"why": "rewrites what steers traffic and scheduling: node labels and taints (draws pods onto a node it controls), pod status (joins Service endpoints), Service load-balancer status (intercepts traffic, CVE-2020-8554)",
		"perms": [perm(["update", "patch"], "", ["nodes", "nodes/status", "pods/status", "services/status"])],
	},
}

display(group, resource) := resource if group == ""

display(group, resource) := sprintf("%s.%s", [resource, group]) if group != ""

# Cluster-scoped resources of the catalogue: a namespaced Role may list them, but a RoleBinding never
# grants them (authorization happens outside any namespace). Not here: namespaces (a Role may patch
# its own namespace object) and clusterroles (bind/escalate are checked in the binding's namespace).
cluster_scoped := {
	["", "persistentvolumes"], ["", "nodes/proxy"], ["", "nodes"], ["", "nodes/status"], ["", "users"], ["", "groups"],
	["authentication.k8s.io", "uids"], ["authentication.k8s.io", "userextras/*"],
	["certificates.k8s.io", "certificatesigningrequests/approval"], ["certificates.k8s.io", "signers"],
	["admissionregistration.k8s.io", "validatingwebhookconfigurations"],
	["admissionregistration.k8s.io", "mutatingwebhookconfigurations"],
}

effective(group, resource) if kind != "Role"

effective(group, resource) if {
	kind == "Role"
	not [group, resource] in cluster_scoped
}

# [rule index, "verb resource"] for every permission of catalogue entry `id` the object's rules grant.
granted(id) := {[i, sprintf("%s %s", [verb, display(p.group, res)])] |
	some [i, r] in role_rules
	some p in catalogue[id].perms
	some verb in p.verbs
	some res in p.resources
	effective(p.group, res)
	grants(r, verb, p.group, res)
}

# One violation per rule entry of a Role/ClusterRole that grants a permission of catalogue entry `id`.
permission_violations(id) := {v |
	in_scope
	hits := granted(id)
	some i in {h[0] | some h in hits}
	perms := sort([h[1] | some h in hits; h[0] == i])
	v := {
		"msg": sprintf("%s %q grants %s: it %s", [kind, name, concat(", ", perms), entry_why(id, i, perms)]),
		"path": ["rules", i],
		"details": {"permissions": perms},
	}
}

# What the permissions of one rule entry let its holder do: the catalogue's sentence, except for pod
# edits alone. An update or patch of a Pod cannot change its ServiceAccount or volumes (a pod's spec is
# immutable but for its containers' images, activeDeadlineSeconds, added tolerations and the grace
# period): it swaps the image of a pod already running, whose account and volumes the new code then has.
pod_edit_permissions := {"update pods", "patch pods"}

pod_edits_only(id, perms) if {
	id == "STK-RBAC-003"
	count({p | some p in perms} - pod_edit_permissions) == 0
}

why(id, perms) := "changes the image of pods already running (the one container field a pod's update may change), so runs its own code as their ServiceAccounts, with their volumes" if {
	pod_edits_only(id, perms)
}

# STK-RBAC-015 says what each status or node write it grants steers, and only those.
steering := [
	["nodes", "node labels and taints (draws pods onto a node it controls)"],
	["nodes/status", "node status (the addresses the API server sends exec and log traffic to, the capacity that draws pods)"],
	["pods/status", "pod status (joins Service endpoints)"],
	["services/status", "Service load-balancer status (intercepts traffic, CVE-2020-8554)"],
]

why(id, perms) := sprintf("rewrites what steers traffic and scheduling: %s", [concat(", ", texts)]) if {
	id == "STK-RBAC-015"
	granted := {substring(p, indexof(p, " ") + 1, -1) | some p in perms}
	texts := [t | some [r, t] in steering; r in granted]
}

why(id, perms) := scoped(catalogue[id].why) if {
	not pod_edits_only(id, perms)
	id != "STK-RBAC-015"
}

# A ClusterRole's permissions reach every namespace it is granted in (all of them through a
# ClusterRoleBinding), not "the namespace" a Role's reach (lws' review: said of cluster-wide roles).
scoped(text) := replace(text, "of the namespace", "of each namespace it is granted in") if {
	kind == "ClusterRole"
} else := text

# Rule entries limited to resourceNames: what they reach is what they name. STK-RBAC-002 on named
# Secrets reads those (spark-operator's webhook its own certificate Secret), not every workload's; a
# named webhook configuration (STK-RBAC-010) is still the whole risk, its rules and endpoint can be
# widened to every object.
named(i) if count(object.get(input.object.rules[i], "resourceNames", [])) > 0

named_whys := {
	"STK-RBAC-002": "reads the Secrets it names, whatever they hold (a token Secret's account is an escalation, STK-RBAC-031)",
	"STK-RBAC-010": "rewrites the admission webhook configurations it names: their rules and endpoint can be widened to read or mutate every object admitted",
}

named_why(id, i) if {
	named(i)
	named_whys[id]
}

entry_why(id, i, perms) := named_whys[id] if named_why(id, i)

entry_why(id, i, perms) := why(id, perms) if not named_why(id, i)

# --- bindings -----------------------------------------------------------------------------------------

subjects contains [i, s] if {
	kind in binding_kinds
	some i, s in object.get(input.object, "subjects", [])
	is_object(s)
}

subject_display(s) := sprintf("%s %s/%s", [s.kind, subject_namespace(s), s.name]) if s.kind == "ServiceAccount"

subject_display(s) := sprintf("%s %s", [s.kind, s.name]) if s.kind != "ServiceAccount"

# A ServiceAccount subject without a namespace is in the RoleBinding's namespace (the authorizer does so).
# A binding a manifest writes without a namespace is in "default", where kubectl apply puts it. (One
# expression, not an `else` chain: a function's middle branch binding its value is answered wrongly
# by regorus' VM, test_vm_differential.)
subject_namespace(s) := [ns |
	some ns in [object.get(s, "namespace", ""), object.get(md, "namespace", ""), "default"]
	ns != ""
][0]
