# METADATA
# title: Binding refers to a role that does not exist
# description: >-
#   A RoleBinding or ClusterRoleBinding whose roleRef names a Role or ClusterRole that does not exist
#   grants nothing today, and whoever later creates a role of that name grants the binding's subjects
#   whatever it holds (a dangling binding is a standing grant waiting for its role). Kubernetes
#   accepts such bindings. Where the gate sees the whole cluster (an audit, the webhook once its
#   inventory is synced) it is a finding; a scan of some files cannot know, so there it is a note
#   (action audit, never failing the scan) naming the role that is neither among the scanned objects
#   nor one of Kubernetes' built-in roles. System bootstrap objects are out of scope unless
#   scope.include_system_rbac.
# custom:
#   id: STK-RBAC-032
#   severity: medium
#   kinds: [RoleBinding, ClusterRoleBinding]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Delete the binding, or create the role it refers to with only what its subjects need.
package stockade.rbac.role_missing

import data.stockade.lib.rbac
import rego.v1

facts := input.facts.rbac if is_object(input.facts.rbac)

deny contains v if {
	rbac.in_scope
	facts.role.found == false
	facts.inventoryComplete == true
	v := {
		"msg": sprintf("%s %q refers to %s %q, which does not exist: whoever creates it grants its subjects what it holds", [rbac.kind, rbac.name, facts.role.kind, facts.role.name]),
		"path": ["roleRef", "name"],
		"details": {"role": facts.role},
	}
}

deny contains v if {
	rbac.in_scope
	facts.role.found == false
	facts.inventoryComplete != true
	v := {
		"msg": sprintf("%s %q refers to %s %q, which %s (a note: a scan does not see the cluster)", [rbac.kind, rbac.name, facts.role.kind, facts.role.name, unseen_text(facts.role)]),
		"path": ["roleRef", "name"],
		"details": {"role": facts.role, "note": true},
	}
}

# The API server's other bootstrap roles (system:controller:*, system:node, ...) are not modelled in a
# scan: what they grant is read from the cluster in an audit.
unseen_text(role) := "is not among the objects scanned, and stockade does not model the API server's system: roles in a scan (an audit reads them)" if {
	role.kind == "ClusterRole"
	startswith(role.name, "system:")
} else := "is neither among the objects scanned nor a built-in role"
