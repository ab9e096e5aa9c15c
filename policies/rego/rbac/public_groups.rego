# METADATA
# title: Binding grants permissions to anonymous or all authenticated users
# description: >-
#   A binding whose subjects include the user system:anonymous or the groups system:unauthenticated
#   or system:authenticated grants its role to every unauthenticated request or to every identity the
#   cluster accepts (every ServiceAccount of every namespace, every user of the identity provider),
#   whatever the role, unless the gate holds the role and it only publishes information: every rule
#   reads (get, list, watch) objects it names that are not Secrets, or non-resource URLs (Kubeflow
#   Pipelines' kubeflow-pipelines-public ConfigMap, like the bootstrap system:public-info-viewer's
#   /version). One finding per such subject. System bootstrap bindings (system:discovery,
#   system:public-info-viewer, ...) are out of scope unless scope.include_system_rbac.
# custom:
#   id: STK-RBAC-021
#   severity: critical
#   kinds: [RoleBinding, ClusterRoleBinding]
#   frameworks: [NSA-CISA, rbac-good-practices]
#   remediation: >-
#     Bind the role to the groups or ServiceAccounts that need it.
package stockade.rbac.public_groups

import data.stockade.lib.rbac
import rego.v1

public_names := {"system:anonymous", "system:unauthenticated", "system:authenticated"}

publishes_only if input.facts.rbac.role.publicInformation == true

deny contains v if {
	rbac.in_scope
	not publishes_only
	ref := object.get(input.object, "roleRef", {})
	some [i, s] in rbac.subjects
	s.kind in {"User", "Group"}
	s.name in public_names
	v := {
		"msg": sprintf("%s %q grants %s %q to %s %s", [rbac.kind, rbac.name, object.get(ref, "kind", "role"), object.get(ref, "name", ""), s.kind, s.name]),
		"path": ["subjects", i],
		"details": {"subject": s.name, "role": object.get(ref, "name", "")},
	}
}
