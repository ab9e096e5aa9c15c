# Inputs shared by the runtime rules' tests. The configuration is stockade's default
# (data.stockade.config, as `stockade policy test` loads it); tests change it with `with`.
package stockade.runtime.fixtures_test

import rego.v1

ns_sandbox := {"name": "eval", "labels": {"stockade.io/sandbox": "required"}, "known": true}

ns_plain := {"name": "apps", "labels": {}, "known": true}

container := {"name": "c", "image": "x"}

gpu_container := {"name": "g", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}

spec(extra) := object.union({"containers": [container]}, extra)

# input.facts.runtimeClass as policies/facts/sandbox.py builds it.
rc(name, handler, node_selector) := {
	"cluster": null,
	"name": name,
	"known": true,
	"exists": true,
	"handler": handler,
	"nodeSelector": node_selector,
	"tolerations": [],
	"overhead": null,
}

rc_unknown(name) := {"cluster": null, "name": name, "known": false, "exists": null, "handler": null, "nodeSelector": {}, "tolerations": [], "overhead": null}

rc_missing(name) := object.union(rc_unknown(name), {"exists": false})

on_cluster(facts, cluster) := object.union(facts, {"cluster": cluster})

# A Pod input with its namespace and RuntimeClass facts.
pod(s, ns, facts) := {
	"object": {"kind": "Pod", "metadata": {"name": "p", "namespace": ns.name}, "spec": s},
	"pod": {"spec": s, "metadata": {}, "path": []},
	"namespace": ns,
	"facts": {"runtimeClass": facts},
}

# A Deployment input whose pod template carries `labels`.
deployment(s, ns, labels, facts) := {
	"object": {"kind": "Deployment", "metadata": {"name": "d", "namespace": ns.name}, "spec": {"template": {"metadata": {"labels": labels}, "spec": s}}},
	"pod": {"spec": s, "metadata": {"labels": labels}, "path": ["spec", "template"]},
	"namespace": ns,
	"facts": {"runtimeClass": facts},
}

runtime_class(name, handler, scheduling, cluster) := {
	"object": {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": handler, "scheduling": scheduling},
	"facts": {"runtimeClass": {"cluster": cluster, "name": name, "known": true, "exists": true, "handler": handler}},
}

aks_clusters := [{"clusters": ["aks-*"], "profile": "aks"}]
