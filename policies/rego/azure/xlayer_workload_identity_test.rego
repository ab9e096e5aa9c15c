package stockade.azure.xlayer_workload_identity_test

import data.stockade.azure.xlayer_workload_identity as rule
import rego.v1

cluster(oidc, wi) := {"name": "aks-prod", "oidcIssuer": oidc, "workloadIdentity": wi, "nodePools": []}

pod(labels, c) := {
	"object": {"kind": "Pod", "metadata": {"name": "p", "labels": labels}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
	"pod": {"metadata": {"labels": labels}, "spec": {}, "path": [], "specPath": ["spec"], "metadataPath": ["metadata"]},
	"facts": {"azure": {"cluster": c}},
}

wi := {"azure.workload.identity/use": "true"}

test_both_missing if {
	some v in rule.deny with input as pod(wi, cluster(false, false))
	contains(v.msg, "properties.oidcIssuerProfile.enabled: false, properties.securityProfile.workloadIdentity.enabled: false")
	v.path == ["metadata", "labels", "azure.workload.identity/use"]
}

test_one_missing_is_named if {
	some v in rule.deny with input as pod(wi, cluster(true, false))
	v.details.fields == ["properties.securityProfile.workloadIdentity.enabled: false"]
}

test_enabled_cluster_passes if {
	count(rule.deny) == 0 with input as pod(wi, cluster(true, true))
}

test_pod_without_the_label_passes if {
	count(rule.deny) == 0 with input as pod({"azure.workload.identity/use": "false"}, cluster(false, false))
	count(rule.deny) == 0 with input as pod({}, cluster(false, false))
}

test_only_one_layer_says_nothing if {
	inp := json.patch(pod(wi, cluster(false, false)), [{"op": "replace", "path": "/facts", "value": {}}])
	count(rule.deny) == 0 with input as inp
}
