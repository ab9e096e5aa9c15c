package stockade.lib.resources

# The resource fields STK-RES-001/-002/-003 require, and which rule reports a container that sets no
# CPU or memory quantity at all (issue 37): one finding listing everything missing, from the first of
# the three rules that is on (in this order), instead of three findings for one missing block. A rule
# is on when its resources.require_* setting is true and config `rules:` does not disable it
# (data.stockade.config.disabled_rules); so switching one rule off hands the bare container to the
# next, and what the others own is still reported.

import data.stockade.lib.pods
import rego.v1

fields := [
	{"rule": "STK-RES-001", "setting": "require_memory_limit", "text": "memory limit", "path": ["resources", "limits", "memory"]},
	{"rule": "STK-RES-002", "setting": "require_cpu_request", "text": "CPU request", "path": ["resources", "requests", "cpu"]},
	{"rule": "STK-RES-003", "setting": "require_memory_request", "text": "memory request", "path": ["resources", "requests", "memory"]},
]

disabled := object.get(data.stockade.config, "disabled_rules", [])

# The rules of `fields` that are on: a rule's value is computed once per evaluation, a function's
# body again on every call (three rules call `on` for every container).
on_rules := {f.rule | some f in configured} if {
	not input.pod.spec.resources # no pod-level resources (most pods): nothing more to ask
}

on_rules := {f.rule | some f in configured; not pod_level(f.path[1], f.path[2])} if {
	input.pod.spec.resources
}

# the rules of `fields` the configuration turns on
configured := [f |
	some f in fields
	object.get(data.stockade.config, ["resources", f.setting], true) == true
	not f.rule in disabled
]

# A quantity the pod sets for all its containers (spec.resources: pod-level resources, beta and on
# by default from Kubernetes 1.34; Argo Workflows' podResources): a pod-level memory limit bounds
# the containers that set none, a pod-level request schedules them, so the rule that asks each
# container for it has nothing to ask. The pod spec's `resources` has a container's shape.
pod_level(kind, name) if pods.resource_value(input.pod.spec, kind, name)

on(rule) if rule in on_rules

# the fields of the rules that are on, in order
active := [f | some f in fields; f.rule in on_rules]

# the rule that reports a bare container
owner := active[0].rule

# A container that sets no CPU or memory quantity, in requests or limits (none, an empty or null
# resources, or only other resources such as a GPU).
bare(c) if {
	every kind in ["limits", "requests"] {
		every name in ["cpu", "memory"] {
			not pods.resource_value(c, kind, name)
		}
	}
}

# What a bare container is reported for, in one finding.
bare_text := concat(", ", [f.text | some f in active])

bare_missing := [concat(".", f.path) | some f in active]

# The one finding for a bare container (the rule that is `owner` reports it), listing everything
# missing; a rule that is the only one on reports its own message (`own_msg`) instead. Callers check
# `owner` first: no else-branches and no undefined function values (the compiled VM and the
# interpreter answer alike).
bare_finding(entry) := {
	"msg": sprintf("container %q sets no CPU or memory resources: no %s", [pods.container_name(entry.container), bare_text]),
	"path": array.concat(entry.path, active[0].path),
	"details": {"missing": bare_missing},
}

several if count(active) > 1
