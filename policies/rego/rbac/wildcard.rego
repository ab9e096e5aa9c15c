# METADATA
# title: Role uses wildcards
# description: >-
#   A `*` in a rule's verbs, resources or apiGroups grants every present and future verb, resource
#   (subresources included) or API group, including custom resources installed later and the
#   escalation-capable permissions. One finding per rule entry and field. System bootstrap objects
#   (system:* names, label kubernetes.io/bootstrapping: rbac-defaults) are out of scope unless
#   scope.include_system_rbac.
# custom:
#   id: STK-RBAC-001
#   severity: high
#   kinds: [Role, ClusterRole]
#   frameworks: [CIS-5.1.3, NSA-CISA, rbac-good-practices]
#   remediation: >-
#     List the verbs, resources and API groups the subject needs. For administrators, bind the
#     built-in admin/cluster-admin roles to break-glass subjects (rbac.break_glass_subjects) instead.
package stockade.rbac.wildcard

import data.stockade.lib.rbac
import rego.v1

fields := ["verbs", "resources", "apiGroups"]

deny contains v if {
	rbac.in_scope
	some [i, r] in rbac.role_rules
	some field in fields
	"*" in object.get(r, field, [])
	v := {
		"msg": sprintf("%s %q grants `*` in %s of rules[%d]", [rbac.kind, rbac.name, field, i]),
		"path": ["rules", i, field],
		"details": {"field": field},
	}
}
