package stockade.runtime.sandbox_required_test

import data.stockade.runtime.fixtures_test as f
import data.stockade.runtime.sandbox_required
import rego.v1

paths(inp) := {v.path | some v in sandbox_required.deny with input as inp}

test_high_risk_namespace_without_class_denied if {
	some v in sandbox_required.deny with input as f.pod(f.spec({}), f.ns_sandbox, f.rc_unknown(null))
	v.path == ["spec", "runtimeClassName"]
	contains(v.msg, "namespace label stockade.io/sandbox=required")
	contains(v.msg, "sets no runtimeClassName")
	v.details.profile == "baremetal"
}

test_plain_namespace_without_class_allowed if {
	paths(f.pod(f.spec({}), f.ns_plain, f.rc_unknown(null))) == set()
}

test_approved_class_allowed if {
	paths(f.pod(f.spec({"runtimeClassName": "gvisor"}), f.ns_sandbox, f.rc_unknown("gvisor"))) == set()
}

test_unapproved_class_denied if {
	some v in sandbox_required.deny with input as f.pod(f.spec({"runtimeClassName": "runc"}), f.ns_sandbox, f.rc_unknown("runc"))
	contains(v.msg, "RuntimeClass \"runc\", which is not an approved sandbox class")
}

test_empty_class_counts_as_unset if {
	paths(f.pod(f.spec({"runtimeClassName": ""}), f.ns_sandbox, f.rc_unknown(null))) == {["spec", "runtimeClassName"]}
}

test_pod_template_label_selects if {
	inp := f.deployment(f.spec({}), f.ns_plain, {"stockade.io/sandbox": "required"}, f.rc_unknown(null))
	paths(inp) == {["spec", "template", "spec", "runtimeClassName"]}
}

test_object_label_selects if {
	inp := object.union(f.pod(f.spec({}), f.ns_plain, f.rc_unknown(null)), {"object": {"metadata": {"labels": {"stockade.io/sandbox": "required"}}}})
	count(paths(inp)) == 1
}

test_aks_profile_rejects_gvisor if {
	inp := f.pod(f.spec({"runtimeClassName": "gvisor"}), f.ns_sandbox, f.on_cluster(f.rc_unknown("gvisor"), "aks-prod-1"))
	some v in sandbox_required.deny with input as inp with data.stockade.config.sandbox.clusters as f.aks_clusters
	v.details.profile == "aks"
}

test_aks_profile_accepts_kata if {
	inp := f.pod(f.spec({"runtimeClassName": "kata-vm-isolation"}), f.ns_sandbox, f.on_cluster(f.rc_unknown("kata-vm-isolation"), "aks-prod-1"))
	count(sandbox_required.deny) == 0 with input as inp with data.stockade.config.sandbox.clusters as f.aks_clusters
}

test_cluster_not_matching_uses_default_profile if {
	inp := f.pod(f.spec({"runtimeClassName": "gvisor"}), f.ns_sandbox, f.on_cluster(f.rc_unknown("gvisor"), "onprem-1"))
	count(sandbox_required.deny) == 0 with input as inp with data.stockade.config.sandbox.clusters as f.aks_clusters
}

test_last_cluster_entry_wins if {
	clusters := array.concat(f.aks_clusters, [{"clusters": ["aks-gpu-*"], "profile": "baremetal"}])
	inp := f.pod(f.spec({"runtimeClassName": "gvisor"}), f.ns_sandbox, f.on_cluster(f.rc_unknown("gvisor"), "aks-gpu-1"))
	count(sandbox_required.deny) == 0 with input as inp with data.stockade.config.sandbox.clusters as clusters
}

test_namespace_glob_selector if {
	sel := [{"namespaces": ["agent-*"], "namespace_labels": {}, "pod_labels": {}}]
	inp := f.pod(f.spec({}), {"name": "agent-7", "labels": {}}, f.rc_unknown(null))
	count(sandbox_required.deny) == 1 with input as inp with data.stockade.config.sandbox.selectors as sel
	count(sandbox_required.deny) == 0 with input as f.pod(f.spec({}), f.ns_plain, f.rc_unknown(null)) with data.stockade.config.sandbox.selectors as sel
}

test_selector_fields_are_anded if {
	sel := [{"namespaces": ["eval"], "namespace_labels": {}, "pod_labels": {"tier": "untrusted"}}]
	count(sandbox_required.deny) == 0 with input as f.pod(f.spec({}), f.ns_sandbox, f.rc_unknown(null)) with data.stockade.config.sandbox.selectors as sel
}

test_without_facts_uses_default_profile if {
	inp := {"object": {"kind": "Pod", "metadata": {"namespace": "eval"}}, "pod": {"spec": f.spec({}), "metadata": {}, "path": []}, "namespace": f.ns_sandbox}
	count(sandbox_required.deny) == 1 with input as inp
}
