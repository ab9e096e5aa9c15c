# METADATA
# title: Binding opens an escalation path
# description: >-
#   The binding gives a subject a permission that leads to more: creating pods (or pointing
#   controllers) in a namespace whose ServiceAccounts hold more, so it can run pods as them and take
#   their tokens; minting tokens for or impersonating a ServiceAccount, user or group; binding or
#   escalating roles, so it can grant itself anything. Computed over the whole RBAC graph of the gate
#   (policies/facts/rbac.py, exact RBAC semantics) as chains of steps up to rbac.max_path_length long
#   that end at an identity holding escalation-capable permissions the subject does not hold. Reported
#   on the binding that grants the first step, at its subject: one finding per subject, naming every
#   identity it reaches, with up to rbac.max_paths_per_binding paths in its details (the rest
#   counted). System bootstrap bindings are out of
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

subject_indexes := {p.subjectIndex | some p in paths}

# One finding per subject of the binding: the targets it can reach, the first path in the message,
# up to rbac.max_paths_per_binding paths in the details (the rest counted).
deny contains v if {
	rbac.in_scope
	some s in subject_indexes
	mine := [p | some p in paths; p.subjectIndex == s]
	first := mine[0]
	targets := sort({p.target | some p in mine})
	shown := array.slice(mine, 0, max_paths)
	v := {
		"msg": sprintf("%s %q lets %s escalate to %s: %s; it gains %s%s", [rbac.kind, rbac.name, first.subject, concat("; ", targets), concat("; then ", first.steps), concat(", ", first.gains), more_text(count(mine))]),
		"path": ["subjects", s],
		"details": {
			"subject": first.subject,
			"targets": targets,
			"paths": [{"target": p.target, "steps": p.steps, "bindings": p.bindings, "gains": p.gains} | some p in shown],
			"morePaths": count(mine) - count(shown),
		},
	}
}

more_text(1) := ""

more_text(n) := sprintf(" (the first of %d paths)", [n]) if n > 1
