# METADATA
# title: Binding opens an escalation path
# description: >-
#   The binding gives a subject a permission that leads to more: creating pods (or pointing
#   controllers) in a namespace whose ServiceAccounts hold more, so it can run pods as them and take
#   their tokens; minting tokens for or impersonating a ServiceAccount, user or group; binding or
#   escalating roles, so it can grant itself anything. Computed over the whole RBAC graph of the gate
#   (policies/facts/rbac.py, exact RBAC semantics) as chains of steps up to rbac.max_path_length long
#   that end at an identity holding escalation-capable permissions the subject does not hold. Reported
#   on the binding that grants the first step, at its subject; at most rbac.max_paths_per_binding
#   paths per binding (the rest are counted in the last message). System bootstrap bindings are out of
#   scope unless scope.include_system_rbac.
# custom:
#   id: STK-RBAC-031
#   severity: critical
#   kinds: [RoleBinding, ClusterRoleBinding]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Remove the permission that opens the first step, or move the more privileged ServiceAccounts out
#     of the namespaces the subject can deploy to.
package stockade.rbac.escalation_paths

import data.stockade.lib.rbac
import rego.v1

max_length := object.get(data.stockade.config, ["rbac", "max_path_length"], 3)

max_paths := object.get(data.stockade.config, ["rbac", "max_paths_per_binding"], 20)

paths := [p | some p in input.facts.rbac.escalations; p.length <= max_length]

more_text(n) := sprintf(" (and %d more paths)", [count(paths) - max_paths]) if {
	n == max_paths - 1
	count(paths) > max_paths
} else := ""

deny contains v if {
	rbac.in_scope
	some n, p in paths
	n < max_paths
	suffix := more_text(n)
	v := {
		"msg": sprintf("%s %q lets %s escalate to %s: %s; it gains %s%s", [rbac.kind, rbac.name, p.subject, p.target, concat("; then ", p.steps), concat(", ", p.gains), suffix]),
		"path": ["subjects", p.subjectIndex],
		"details": {"subject": p.subject, "target": p.target, "bindings": p.bindings, "gains": p.gains},
	}
}
