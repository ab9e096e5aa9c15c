# METADATA
# title: Workload mounts a token with escalation-capable permissions
# description: >-
#   Attribution of the RBAC graph to running workloads: the pods of the workload mount the token of
#   their ServiceAccount (the pod's automountServiceAccountToken, else the ServiceAccount's, else true),
#   and that ServiceAccount holds escalation-capable permissions (STK-RBAC-002..015), directly or
#   through its groups, or can escalate further (take over another identity, bind or escalate roles).
#   Whoever compromises a container holds all of it. One finding per pod spec for that account's
#   permission set: its details list each catalogue rule id held with its permissions, and every
#   escalation path (up to rbac.max_path_length steps), computed in policies/facts/rbac.py from the
#   inventory of the gate (the scanned set, the webhook's cache, the audited cluster). A pod that reads
#   a legacy ServiceAccount token Secret (type kubernetes.io/service-account-token: a volume, a
#   projected source, an env var) holds that account's permissions too, whatever its own account and
#   automount setting: one finding per such Secret. A projected serviceAccountToken the API server
#   accepts (lib/pods.rego api_token_projections) is a mounted token whatever automount says.
# custom:
#   id: STK-RBAC-030
#   severity: high
#   kinds: ["@workloads"]
#   triggers: ['"rbac"']
#   frameworks: [CIS-5.1.6, rbac-good-practices]
#   remediation: >-
#     Give the workload a dedicated ServiceAccount with only what it calls, or set
#     automountServiceAccountToken: false if it does not call the API.
package stockade.rbac.workload_permissions

import data.stockade.lib.pods
import rego.v1

facts := input.facts.rbac if is_object(input.facts.rbac)

max_length := object.get(data.stockade.config, ["rbac", "max_path_length"], 3)

mounted if facts.tokenMounted == true

# a projected token the API server accepts is mounted whatever automountServiceAccountToken says
mounted if count(pods.api_token_projections) > 0

sa_path := pods.account_path

# One finding per pod spec for the account's whole permission set: the rule ids it holds (each with
# its permissions) and the escalation paths, in the details.
deny contains v if {
	mounted
	ids := sort({r.id | some r in facts.risky})
	paths := [p | some p in facts.escalations; p.length <= max_length]
	targets := sort({p.target | some p in paths})
	count(ids) + count(targets) > 0
	v := {
		"msg": sprintf("pods mount the token of ServiceAccount %s, which %s", [facts.serviceAccount, held_text(ids, targets)]),
		"path": sa_path,
		"details": {
			"serviceAccount": facts.serviceAccount,
			"rules": ids,
			"permissions": {id: held_permissions(id) | some id in ids},
			"escalations": [{"target": p.target, "steps": p.steps, "bindings": p.bindings, "gains": p.gains} | some p in paths],
		},
	}
}

held_permissions(id) := sort([sprintf("%s (%s, %s -> %s)", [r.permission, r.scope, r.binding, r.role]) | some r in facts.risky; r.id == id])

deny contains v if {
	some t in object.get(facts, "tokenSecrets", [])
	ids := sort({r.id | some r in t.risky})
	targets := sort({p.target | some p in t.escalations; p.length <= max_length})
	count(ids) + count(targets) > 0
	holds := held_text(ids, targets)
	v := {
		"msg": sprintf("pods read the legacy token Secret %q of ServiceAccount %s, and so act as it: it %s", [t.secret, t.serviceAccount, holds]),
		"path": pods.spec_path(t.path),
		"details": {"secret": t.secret, "serviceAccount": t.serviceAccount, "rules": ids, "targets": targets},
	}
}

# What a token Secret's account holds, in words. A function, with one definition per case: regorus'
# compiled VM drops the iteration of a rule body that holds a comprehension with no iteration of its
# own and an empty result (tests/policies/test_vm_differential.py pins it).
held_text(ids, targets) := sprintf("holds %s permissions and escalates to %s", [concat(", ", ids), concat("; ", targets)]) if {
	count(ids) > 0
	count(targets) > 0
}

held_text(ids, targets) := sprintf("holds %s permissions", [concat(", ", ids)]) if {
	count(ids) > 0
	count(targets) == 0
}

held_text(ids, targets) := sprintf("escalates to %s", [concat(", ", targets)]) if {
	count(ids) == 0
	count(targets) > 0
}
