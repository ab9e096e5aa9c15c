package stockade.rbac.privileged_binding_test

import data.stockade.rbac.privileged_binding
import rego.v1

binding(kind, name, role, subjects) := {
	"kind": kind,
	"metadata": {"name": name, "namespace": "team-a"},
	"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
	"subjects": subjects,
}

cfg(glass) := {"scope": {"include_system_rbac": false}, "rbac": {"privileged_roles": ["cluster-admin", "admin", "edit"], "break_glass_subjects": glass}}

deny(obj, glass) := d if {
	d := privileged_binding.deny with input as {"object": obj} with data.stockade.config as cfg(glass)
}

alice := {"kind": "User", "name": "alice@example.com"}

oncall := {"kind": "Group", "name": "platform-oncall"}

test_cluster_admin_to_user_denied if {
	vs := deny(binding("ClusterRoleBinding", "b", "cluster-admin", [oncall, alice]), [{"kind": "Group", "name": "platform-*"}])
	count(vs) == 1
	some v in vs
	v.path == ["subjects", 1]
	v.msg == "ClusterRoleBinding \"b\" binds ClusterRole \"cluster-admin\" cluster-wide to User alice@example.com, which is not a break-glass subject (rbac.break_glass_subjects)"
}

test_admin_and_edit_in_namespace_denied if {
	some v in deny(binding("RoleBinding", "b", "edit", [{"kind": "ServiceAccount", "name": "ci"}]), [])
	contains(v.msg, "in namespace \"team-a\" to ServiceAccount team-a/ci")
	count(deny(binding("RoleBinding", "b", "admin", [alice]), [])) == 1
}

test_break_glass_subjects_allowed if {
	count(deny(binding("ClusterRoleBinding", "b", "cluster-admin", [oncall]), [{"kind": "Group", "name": "platform-oncall"}])) == 0
	sa := {"kind": "ServiceAccount", "name": "argocd", "namespace": "argocd"}
	count(deny(binding("ClusterRoleBinding", "b", "cluster-admin", [sa]), [{"kind": "ServiceAccount", "name": "argocd", "namespace": "argocd"}])) == 0
	count(deny(binding("ClusterRoleBinding", "b", "cluster-admin", [sa]), [{"kind": "ServiceAccount", "name": "argocd"}])) == 0
}

test_break_glass_kind_and_namespace_must_match if {
	count(deny(binding("ClusterRoleBinding", "b", "cluster-admin", [{"kind": "User", "name": "platform-oncall"}]), [{"kind": "Group", "name": "platform-oncall"}])) == 1
	sa := {"kind": "ServiceAccount", "name": "argocd", "namespace": "other"}
	count(deny(binding("ClusterRoleBinding", "b", "cluster-admin", [sa]), [{"kind": "ServiceAccount", "name": "argocd", "namespace": "argocd"}])) == 1
}

test_other_roles_and_role_kinds_allowed if {
	count(deny(binding("ClusterRoleBinding", "b", "view", [alice]), [])) == 0
	rb := json.patch(binding("RoleBinding", "b", "admin", [alice]), [{"op": "replace", "path": "/roleRef/kind", "value": "Role"}])
	count(deny(rb, [])) == 0
}

test_bootstrap_binding_out_of_scope if {
	crb := {"kind": "ClusterRoleBinding", "metadata": {"name": "cluster-admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}, "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"}, "subjects": [{"kind": "Group", "name": "system:masters"}]}
	count(deny(crb, [])) == 0
	count(privileged_binding.deny) == 1 with input as {"object": crb} with data.stockade.config as {"scope": {"include_system_rbac": true}}
}

# a RoleBinding a manifest writes without a namespace (kubernetes-sigs/lws' examples): where kubectl
# apply puts it, and its ServiceAccount subject with it, never in namespace ""
test_an_unwritten_namespace_is_default if {
	unwritten := json.patch(binding("RoleBinding", "b", "cluster-admin", [{"kind": "ServiceAccount", "name": "ci"}]), [{"op": "remove", "path": "/metadata/namespace"}])
	some v in deny(unwritten, [])
	v.msg == "RoleBinding \"b\" binds ClusterRole \"cluster-admin\" in namespace \"default\" to ServiceAccount default/ci, which is not a break-glass subject (rbac.break_glass_subjects)"
}
