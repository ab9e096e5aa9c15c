package stockade.serviceaccount.token_mount_test

import data.stockade.serviceaccount.token_mount
import rego.v1

cfg(clients) := {"service_accounts": {"api_clients": clients}}

obj := {"kind": "Deployment", "metadata": {"name": "controller", "namespace": "argo", "labels": {"app": "argo", "tier": "control"}}}

inp(spec, facts) := {
	"object": obj,
	"pod": {"spec": spec, "metadata": {}, "path": ["spec", "template"]},
	"namespace": {"name": "argo"},
	"facts": facts,
}

sa(mounted, sa_setting) := {"serviceAccount": {
	"name": "controller",
	"known": true,
	"exists": true,
	"automountServiceAccountToken": sa_setting,
	"annotations": {},
	"tokenMounted": mounted,
}}

deny(spec, facts, clients) := d if {
	d := token_mount.deny with input as inp(spec, facts) with data.stockade.config as cfg(clients)
}

test_pod_false_allowed_without_facts if {
	count(deny({"automountServiceAccountToken": false}, {}, [])) == 0
}

test_pod_unset_without_facts_denied if {
	vs := deny({}, {}, [])
	count(vs) == 1
	some v in vs
	v.path == ["spec", "template", "spec", "automountServiceAccountToken"]
	contains(v.msg, "ServiceAccount \"default\"")
}

test_pod_true_is_a_declared_api_client if {
	# issue 22: Argo CD's and kube-prometheus' controllers set it explicitly and call the API
	count(deny({"automountServiceAccountToken": true, "serviceAccountName": "controller"}, {}, [])) == 0
}

test_a_bound_service_account_is_an_api_client if {
	f := object.union(sa(true, true), {"rbac": {"serviceAccount": "argo/controller", "bound": true}})
	count(deny({"serviceAccountName": "controller"}, f, [])) == 0
	g := object.union(sa(true, true), {"rbac": {"serviceAccount": "argo/controller", "bound": false}})
	count(deny({"serviceAccountName": "controller"}, g, [])) == 1
}

test_facts_decide_when_present if {
	count(deny({}, sa(false, false), [])) == 0
	some v in deny({"serviceAccountName": "controller"}, sa(true, true), [])
	v.msg == "pods mount the token of ServiceAccount \"controller\" (the pod leaves it unset and ServiceAccount \"controller\" sets automountServiceAccountToken: true) but the workload is not an API client (service_accounts.api_clients)"
}

test_facts_unknown_service_account if {
	some v in deny({"serviceAccountName": "controller"}, sa(true, null), [])
	contains(v.msg, "neither the pod nor ServiceAccount \"controller\" sets automountServiceAccountToken")
}

# a named ServiceAccount whose object was not read: what it sets is not known, and the message says
# so; "default" is created by Kubernetes without the field (kubeflow/trainer's runtimes, review)
test_an_account_not_read_is_not_said_to_set_nothing if {
	unseen := {"serviceAccount": object.union(sa(true, null).serviceAccount, {"known": false, "exists": null})}
	some v in deny({"serviceAccountName": "controller"}, unseen, [])
	contains(v.msg, "the pod leaves automountServiceAccountToken unset and ServiceAccount \"controller\" is not among the objects read (its setting is not known)")
	default_unseen := {"serviceAccount": object.union(unseen.serviceAccount, {"name": "default"})}
	some w in deny({}, default_unseen, [])
	contains(w.msg, "neither the pod nor ServiceAccount \"default\" sets automountServiceAccountToken")
}

test_deprecated_service_account_field_named if {
	some v in deny({"serviceAccount": "legacy"}, {}, [])
	contains(v.msg, "ServiceAccount \"legacy\"")
}

test_api_client_by_namespace_kind_name if {
	count(deny({}, {}, [{"namespaces": ["argo"], "kinds": ["Deployment"], "names": ["controller"], "labels": {}}])) == 0
	count(deny({}, {}, [{"namespaces": ["ar*"], "kinds": [], "names": ["contr*"], "labels": {}}])) == 0
}

test_api_client_by_labels if {
	count(deny({}, {}, [{"namespaces": [], "kinds": [], "names": [], "labels": {"app": "argo"}}])) == 0
	count(deny({}, {}, [{"labels": {"app": "argo", "tier": "control"}}])) == 0
}

test_selector_mismatch_still_denied if {
	count(deny({}, {}, [{"namespaces": ["other"], "kinds": [], "names": [], "labels": {}}])) == 1
	count(deny({}, {}, [{"namespaces": [], "kinds": ["StatefulSet"], "names": [], "labels": {}}])) == 1
	count(deny({}, {}, [{"namespaces": [], "kinds": [], "names": ["ctrl"], "labels": {}}])) == 1
	count(deny({}, {}, [{"namespaces": [], "kinds": [], "names": [], "labels": {"app": "other"}}])) == 1
	count(deny({}, {}, [{"namespaces": ["argo"], "kinds": [], "names": [], "labels": {"app": "argo", "missing": "x"}}])) == 1
}

test_any_selector_suffices if {
	count(deny({}, {}, [{"namespaces": ["other"]}, {"names": ["controller"]}])) == 0
}

test_empty_selector_matches_everything if {
	count(deny({}, {}, [{}])) == 0
}

test_namespace_from_gate if {
	i := {"object": {"kind": "Pod", "metadata": {"name": "p"}}, "pod": {"spec": {}, "metadata": {}, "path": []}, "namespace": {"name": "argo"}}
	count(token_mount.deny) == 0 with input as i with data.stockade.config as cfg([{"namespaces": ["argo"]}])
	count(token_mount.deny) == 1 with input as i with data.stockade.config as cfg([{"namespaces": ["other"]}])
}

projected(audience) := {"volumes": [{"name": "kube-api", "projected": {"sources": [
	{"configMap": {"name": "kube-root-ca.crt"}},
	{"serviceAccountToken": object.union({"path": "token", "expirationSeconds": 3600}, audience)},
]}}]}

test_projected_token_counts_even_with_automount_off if {
	# issue 23: a projected serviceAccountToken source is a mounted token; automount false does not stop it
	spec := object.union(projected({}), {"automountServiceAccountToken": false, "serviceAccountName": "controller"})
	vs := deny(spec, {}, [])
	count(vs) == 1
	some v in vs
	v.path == ["spec", "template", "spec", "volumes", 0, "projected", "sources", 1, "serviceAccountToken"]
	contains(v.msg, "no audience")
	contains(v.msg, "\"controller\"")
}

test_projected_token_for_the_api_audience_denied if {
	spec := object.union(projected({"audience": "https://kubernetes.default.svc"}), {"automountServiceAccountToken": false})
	count(deny(spec, {}, [])) == 1
	# an empty audience is the API server's own too
	count(deny(object.union(projected({"audience": ""}), {"automountServiceAccountToken": false}), {}, [])) == 1
}

test_projected_token_for_another_audience_allowed if {
	# Azure workload identity's token is exchanged with Entra ID; the API server rejects it
	spec := object.union(projected({"audience": "api://AzureADTokenExchange"}), {"automountServiceAccountToken": false})
	count(deny(spec, {}, [])) == 0
}

test_projected_token_for_an_accepted_audience_denied if {
	# the cluster's API server accepts that audience (service_accounts.api_audiences)
	spec := object.union(projected({"audience": "api://AzureADTokenExchange"}), {"automountServiceAccountToken": false})
	d := token_mount.deny with input as inp(spec, {}) with data.stockade.config as {"service_accounts": {"api_audiences": ["api://AzureADTokenExchange"]}}
	count(d) == 1
}

test_projected_token_not_reported_twice if {
	# the automounted token is reported already: one finding
	count(deny(object.union(projected({}), {"serviceAccountName": "controller"}), sa(true, true), [])) == 1
	# an API client may have both
	count(deny(object.union(projected({}), {"automountServiceAccountToken": false}), {}, [{"namespaces": ["argo"]}])) == 0
}

# input.pod.account from the kinds table (kinds/api.py Account)
with_account(spec, facts, account) := {
	"object": obj,
	"pod": {"spec": spec, "metadata": {}, "path": ["spec"], "account": account},
	"namespace": {"name": "argo"},
	"facts": facts,
}

test_inherited_account_mounts_no_token_of_its_own if {
	# a ServingRuntime's pod spec has no automountServiceAccountToken: the InferenceService decides
	acc := {"source": "inherited", "by": "InferenceService"}
	d := token_mount.deny with input as with_account({}, {}, acc) with data.stockade.config as cfg([])
	count(d) == 0
	f := {"serviceAccount": {"name": "", "source": "inherited", "tokenMounted": false}}
	d2 := token_mount.deny with input as with_account({}, f, acc) with data.stockade.config as cfg([])
	count(d2) == 0
}

test_inherited_projected_token_still_reported if {
	acc := {"source": "inherited", "by": "InferenceService"}
	vs := token_mount.deny with input as with_account(projected({}), {}, acc) with data.stockade.config as cfg([])
	some v in vs
	contains(v.msg, "projects a token of the ServiceAccount its InferenceService names")
}

test_operator_bound_account_is_an_api_client if {
	# KubeRay binds the autoscaler's Role to the head's account
	acc := {"source": "operator", "by": "KubeRay", "name": "raycluster-autoscaler", "apiClient": true}
	f := sa(true, null)
	d := token_mount.deny with input as with_account({}, f, acc) with data.stockade.config as cfg([])
	count(d) == 0
	# the workers of the same cluster keep their own account
	d2 := token_mount.deny with input as with_account({}, f, {"source": "pod"}) with data.stockade.config as cfg([])
	count(d2) == 1
}

# kubeflow's cluster-jwks-proxy runs `kubectl proxy`: the token is what it serves with
test_a_container_running_kubectl_is_an_api_client if {
	proxy := {"containers": [{"name": "p", "image": "bitnami/kubectl:1.30", "command": ["kubectl", "proxy", "--accept-paths=^/openid/v1/jwks"]}]}
	count(deny(proxy, {}, [])) == 0
	script := {"containers": [{"name": "j", "image": "x", "command": ["/bin/sh", "-c"], "args": ["set -e; /usr/local/bin/kubectl apply -f /m.yaml"]}]}
	count(deny(script, {}, [])) == 0
	# a word that merely contains it is not a kubectl run
	other := {"containers": [{"name": "c", "image": "x", "command": ["kubectl-audit-exporter"], "args": ["--kubectlish"]}]}
	count(deny(other, {}, [])) == 1
}
