# Helpers shared by the runtime rules (policies/rego/runtime/): which sandbox profile applies, which
# workloads are high-risk, which RuntimeClasses are sandboxes.
#
# The configuration is data.stockade.config.sandbox (policies/config/settings.py SandboxConfig); the RuntimeClass
# a workload names comes from input.facts.runtimeClass (policies/facts/sandbox.py), which also carries
# the cluster the gate evaluates for. policies/facts/sandbox.py decides the same questions in Python for
# the audit's summary; tests/policies/test_sandbox.py checks that both agree.
package stockade.lib.sandbox

import data.stockade.lib.pods
import rego.v1

cfg := object.get(data.stockade.config, "sandbox", {})

# input.facts.runtimeClass, {} when the gate handed no facts.
rc := input.facts.runtimeClass if {
	is_object(input.facts.runtimeClass)
} else := {}

# ---- the profile: aks | baremetal ---------------------------------------------------------------------

cluster_matches(entry) if {
	is_string(rc.cluster)
	some pattern in entry.clusters
	glob.match(pattern, null, rc.cluster)
}

# The last `sandbox.clusters` entry matching the cluster wins; else `sandbox.profile` (always in a scan,
# whose cluster is unknown).
profile_name := cfg.clusters[max(matched)].profile if {
	matched := {i | some i, entry in object.get(cfg, "clusters", []); cluster_matches(entry)}
	count(matched) > 0
} else := object.get(cfg, "profile", "baremetal")

profile := object.get(cfg, profile_name, {})

aks if profile_name == "aks"

matches_any(patterns, value) if {
	is_string(value)
	some pattern in patterns
	glob.match(pattern, null, value)
}

# The profile approves this RuntimeClass name for high-risk workloads (exact names). Globs elsewhere
# (handlers, class_patterns, products) use glob.match, which compiles its pattern on every call
# (~5 µs in regorus), so they are only reached for pods that name a class or ask for GPUs.
approved(name) if name in object.get(profile, "classes", [])

# The handler is one of the profile's sandbox runtimes (runsc, kata*).
sandbox_handler(handler) if matches_any(object.get(profile, "handlers", []), handler)

# The class presents itself as a sandbox: approved, or named like one (sandbox.class_patterns).
claims_sandbox(name) if approved(name)

claims_sandbox(name) if matches_any(object.get(cfg, "class_patterns", []), name)

approved_list := concat(", ", object.get(profile, "classes", []))

handler_list := concat(", ", object.get(profile, "handlers", []))

# ---- the workload -------------------------------------------------------------------------------------

# spec.runtimeClassName of the pod template (undefined when unset or empty).
pod_class := name if {
	name := input.pod.spec.runtimeClassName
	is_string(name)
	name != ""
}

pod_label(key, value) if input.pod.metadata.labels[key] == value

pod_label(key, value) if input.object.metadata.labels[key] == value

namespace_ok(sel) if count(object.get(sel, "namespaces", [])) == 0

namespace_ok(sel) if matches_any(sel.namespaces, pods.object_namespace)

selector_matches(sel) if {
	namespace_ok(sel)
	every key, value in object.get(sel, "namespace_labels", {}) {
		input.namespace.labels[key] == value
	}
	every key, value in object.get(sel, "pod_labels", {}) {
		pod_label(key, value)
	}
}

matching_selectors := [sel | some sel in object.get(cfg, "selectors", []); selector_matches(sel)]

# The workload must run in a sandbox: its kind runs untrusted code by nature (an agent Sandbox, or a
# Pod one owns; input.pod.highRisk, from the kinds table), or a sandbox.selectors entry matches it.
high_risk if input.pod.highRisk == true

high_risk if count(matching_selectors) > 0

# Why the workload is high-risk, for messages: its kind, else the first matching selector, spelled out.
high_risk_reason := sprintf("%s runs untrusted code by nature", [kind_of_pods]) if {
	input.pod.highRisk == true
} else := concat(" and ", reason_parts(matching_selectors[0]))

# (The controller is picked by a comprehension: the compiled VM answers undefined, not the `else`,
# where the first branch of an `else` chain iterates and fails; tests/policies/test_sandbox.py.)
kind_of_pods := sprintf("a Pod of %s %s", [owner.kind, owner.name]) if {
	input.object.kind == "Pod"
	controllers := [o | some o in input.object.metadata.ownerReferences; o.controller == true]
	count(controllers) > 0
	owner := controllers[0]
} else := sprintf("kind %s", [input.object.kind])

reason_parts(sel) := array.concat(
	array.concat(
		[sprintf("namespace matches %s", [concat("|", sel.namespaces)]) | count(object.get(sel, "namespaces", [])) > 0],
		[sprintf("namespace label %s=%s", [k, v]) | some k, v in object.get(sel, "namespace_labels", {})],
	),
	[sprintf("label %s=%s", [k, v]) | some k, v in object.get(sel, "pod_labels", {})],
)

# The pods run, or must run, in a sandbox: high-risk, or naming a class that is (or claims to be) one.
sandbox_pod if high_risk

sandbox_pod if claims_sandbox(pod_class)

sandbox_pod if {
	rc.known == true
	sandbox_handler(rc.handler)
}

# Why the pod counts as sandboxed, for messages.
sandbox_reason := sprintf("must be sandboxed: %s", [high_risk_reason]) if {
	high_risk
} else := sprintf("runs in sandbox RuntimeClass %q", [pod_class])
