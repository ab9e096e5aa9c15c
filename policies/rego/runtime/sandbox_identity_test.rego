package stockade.runtime.sandbox_identity_test

import data.stockade.runtime.fixtures_test as f
import data.stockade.runtime.sandbox_identity
import rego.v1

paths(inp) := {v.path | some v in sandbox_identity.deny with input as inp}

volumes := [
	{"name": "tok", "projected": {"sources": [{"serviceAccountToken": {"path": "t", "audience": "vault"}}, {"configMap": {"name": "c"}}]}},
	{"name": "bundle", "projected": {"sources": [{"clusterTrustBundle": {"signerName": "example.com/s", "path": "ca.pem"}}]}},
	{"name": "cert", "projected": {"sources": [{"podCertificate": {"signerName": "example.com/s", "keyType": "ED25519", "credentialBundlePath": "c.pem"}}]}},
]

test_projected_credentials_in_a_sandbox_denied if {
	spec := {"runtimeClassName": "gvisor", "automountServiceAccountToken": false, "containers": [{"name": "c"}], "volumes": volumes}
	paths(f.pod(spec, f.ns_plain, f.rc_unknown("gvisor"))) == {
		["spec", "volumes", 0, "projected", "sources", 0, "serviceAccountToken"],
		["spec", "volumes", 1, "projected", "sources", 0, "clusterTrustBundle"],
		["spec", "volumes", 2, "projected", "sources", 0, "podCertificate"],
	}
}

test_automounted_token_denied_in_a_sandbox_even_for_api_clients if {
	# unset on the pod and no ServiceAccount facts: mounted, as Kubernetes defaults
	paths(f.pod(f.spec({}), f.ns_sandbox, f.rc_unknown(null))) == {["spec", "automountServiceAccountToken"]}

	# the pod's declared intent (STK-SA-001's API client) does not make it acceptable in a sandbox
	paths(f.pod(f.spec({"automountServiceAccountToken": true}), f.ns_sandbox, f.rc_unknown(null))) == {["spec", "automountServiceAccountToken"]}
	msgs := {v.msg | some v in sandbox_identity.deny with input as f.pod(f.spec({"automountServiceAccountToken": true}), f.ns_sandbox, f.rc_unknown(null))}
	some m in msgs
	contains(m, "the automounted token of ServiceAccount \"default\" (the pod sets automountServiceAccountToken)")
}

test_automount_off_on_the_service_account_allowed if {
	inp := object.union(f.pod(f.spec({}), f.ns_sandbox, f.rc_unknown(null)), {"facts": {"serviceAccount": {"name": "agent", "tokenMounted": false}}})
	paths(inp) == set()
}

test_ordinary_pods_allowed if {
	spec := {"containers": [{"name": "c"}], "volumes": volumes}
	paths(f.pod(spec, f.ns_plain, f.rc_unknown(null))) == set()
}
