# METADATA
# title: Binding to cluster-admin, admin or edit outside break-glass
# description: >-
#   Bindings of the built-in administrative ClusterRoles (rbac.privileged_roles, default cluster-admin,
#   admin and edit) give their subjects every escalation-capable permission: cluster-wide for a
#   ClusterRoleBinding, inside the namespace for a RoleBinding. Only the configured break-glass
#   subjects (rbac.break_glass_subjects: kind, name glob, optional namespace) may hold them; one
#   finding per other subject. System bootstrap bindings are out of scope unless
#   scope.include_system_rbac.
# custom:
#   id: STK-RBAC-020
#   severity: high
#   kinds: [RoleBinding, ClusterRoleBinding]
#   frameworks: [CIS-5.1.1, NSA-CISA, rbac-good-practices]
#   remediation: >-
#     Bind a role that lists what the subject needs. If the subject is an emergency-access account,
#     add it to rbac.break_glass_subjects.
package stockade.rbac.privileged_binding

import data.stockade.lib.rbac
import rego.v1

privileged := object.get(data.stockade.config, ["rbac", "privileged_roles"], ["cluster-admin", "admin", "edit"])

break_glass := object.get(data.stockade.config, ["rbac", "break_glass_subjects"], [])

allowed(s) if {
	some b in break_glass
	b.kind == s.kind
	glob.match(b.name, [], s.name)
	namespace_ok(b, s)
}

namespace_ok(b, _) if object.get(b, "namespace", null) == null

namespace_ok(b, s) if b.namespace == rbac.subject_namespace(s)

scope_text := "cluster-wide" if {
	rbac.kind == "ClusterRoleBinding"
} else := sprintf("in namespace %q", [object.get(rbac.md, "namespace", "default")]) # kubectl apply's, unwritten

deny contains v if {
	rbac.in_scope
	ref := object.get(input.object, "roleRef", {})
	ref.kind == "ClusterRole"
	ref.name in privileged
	some [i, s] in rbac.subjects
	not allowed(s)
	v := {
		"msg": sprintf("%s %q binds ClusterRole %q %s to %s, which is not a break-glass subject (rbac.break_glass_subjects)", [rbac.kind, rbac.name, ref.name, scope_text, rbac.subject_display(s)]),
		"path": ["subjects", i],
		"details": {"role": ref.name, "subject": rbac.subject_display(s)},
	}
}
