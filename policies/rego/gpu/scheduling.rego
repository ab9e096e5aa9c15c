# METADATA
# title: GPU workload not scheduled onto the GPU node pool
# description: >-
#   Pods that use a GPU (see STK-GPU-002) must tolerate the GPU node pool's taint, one of
#   gpu.tolerations, and select its node labels, gpu.node_selector (when configured), so they land on the
#   pool meant for them and nowhere else. A pod toleration tolerates a configured taint with Kubernetes'
#   matching rules: an empty effect tolerates every effect, an empty key with operator Exists tolerates
#   every taint, Exists tolerates any value, Equal (or no operator) needs the same value. Fields the
#   configuration leaves open are not constrained: a configured operator Exists accepts a toleration for
#   any value of the key, a configured entry without effect accepts any effect. A node label is selected
#   by spec.nodeSelector, or by required node affinity when every nodeSelectorTerm (they are ORed) has a
#   matchExpression "key In [..., value, ...]". A warning by default: a GPU pod without the toleration
#   stays Pending (a scheduling fault seen at once, not an exposure); rules: STK-GPU-003: {action: deny}
#   makes it a gate.
# custom:
#   id: STK-GPU-003
#   severity: low
#   action: warn
#   kinds: ["@workloads"]
#   frameworks: [gpu-best-practice]
#   remediation: >-
#     Add the GPU pool's toleration (e.g. {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule})
#     and its node labels under spec.nodeSelector.
package stockade.gpu.scheduling

import data.stockade.lib.pods
import rego.v1

required_tolerations := object.get(data.stockade.config, ["gpu", "tolerations"], [])

required_labels := object.get(data.stockade.config, ["gpu", "node_selector"], {})

# [container name, GPU resource] of the first GPU container by name, for messages.
first_gpu := min({[pods.container_name(g.container), g.resource] | some g in pods.gpu_containers})

deny contains v if {
	pods.gpu_pod
	count(required_tolerations) > 0
	not written_tolerated
	not tolerated
	v := {
		"msg": sprintf(
			"pod uses GPUs (container %q: %s) but tolerates none of the GPU node taints %s",
			[first_gpu[0], first_gpu[1], concat(" or ", [describe(t) | some t in required_tolerations])],
		),
		"path": pods.spec_path(["tolerations"]),
		"details": {"required": required_tolerations},
	}
}

deny contains v if {
	pods.gpu_pod
	some key, value in required_labels
	not selects(key, value)
	v := {
		"msg": sprintf(
			"pod uses GPUs (container %q: %s) but does not select node label %s=%s (nodeSelector or required node affinity)",
			[first_gpu[0], first_gpu[1], key, value],
		),
		"path": pods.spec_path(["nodeSelector", key]),
		"details": {"label": key, "value": value},
	}
}

# Most GPU pods carry a configured toleration as written (the device plugin's documented one): its
# fields, empty ones left out, equal to a configured entry's with a key set. That tolerates it (the
# same key, the same operator, the same value and effect, or both unset), so `written_tolerated` is
# asked first, and the field-by-field matching (`tolerated`, about ten times the compiled VM's work)
# only for the other pods. (Two rules, not an `else` chain: the VM does not judge an `else` branch
# that iterates as the interpreter does; tests/policies/test_gpu_tolerations.py.)
written_tolerated if {
	some t in input.pod.spec.tolerations
	is_object(t)
	written(t) in written_tolerations
}

tolerated if {
	some want in required_tolerations
	some t in input.pod.spec.tolerations
	is_object(t)
	tolerates(t, want)
}

# A toleration's fields that are set (not null, not ""): how two tolerations compare as written.
written(t) := {k: v | some k, v in t; v != null; v != ""}

written_tolerations := {w |
	some want in required_tolerations
	is_object(want)
	w := written(want)
	object.get(w, "key", "") != ""
}

# ---- toleration matching (k8s.io/api/core/v1 Toleration.ToleratesTaint) ----

tolerates(t, want) if {
	effect_ok(t, want)
	key_ok(t, want)
	value_ok(t, want)
}

field(obj, name) := object.get(obj, name, "") if object.get(obj, name, "") != null

else := ""

effect_ok(t, _) if field(t, "effect") == ""

effect_ok(t, want) if field(t, "effect") == field(want, "effect")

effect_ok(t, want) if {
	field(t, "effect") != ""
	field(want, "effect") == ""
}

key_ok(t, _) if {
	field(t, "key") == ""
	field(t, "operator") == "Exists"
}

key_ok(t, want) if {
	field(t, "key") != ""
	field(t, "key") == field(want, "key")
}

value_ok(t, _) if field(t, "operator") == "Exists"

value_ok(t, want) if {
	field(t, "operator") in {"", "Equal"}
	field(want, "operator") == "Exists"
}

value_ok(t, want) if {
	field(t, "operator") in {"", "Equal"}
	field(want, "operator") != "Exists"
	field(t, "value") == field(want, "value")
}

# "key:effect" for operator Exists, "key=value:effect" otherwise (kubectl taint notation).
describe(t) := sprintf("%s:%s", [field(t, "key"), field(t, "effect")]) if {
	field(t, "operator") == "Exists"
} else := sprintf("%s=%s:%s", [field(t, "key"), field(t, "value"), field(t, "effect")])

# ---- node selection ----

selects(key, value) if input.pod.spec.nodeSelector[key] == value

selects(key, value) if {
	terms := input.pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
	count(terms) > 0
	every term in terms {
		term_requires(term, key, value)
	}
}

term_requires(term, key, value) if {
	some expr in term.matchExpressions
	expr.key == key
	expr.operator == "In"
	value in expr.values
}
