# METADATA
# title: Sandboxed GPU workload that cannot be satisfied
# description: >-
#   GPUs inside a sandbox depend on the platform. On AKS, Pod Sandboxing (Kata) gives pods no GPU:
#   a high-risk or sandboxed pod that asks for one (gpu.resources, or an NVIDIA MIG slice
#   nvidia.com/mig-*) is reported as not satisfiable rather than passed. On bare metal, gVisor reaches
#   GPUs through nvproxy, which supports T4, A10G, A100, L4 and H100 GPUs with an exactly matching
#   driver, and no MIG: MIG slices are reported, and the pod must be pinned to the nvproxy-capable pool,
#   selecting every label of sandbox.baremetal.nvproxy.node_selector, or, when that is empty, the GPU
#   model label (sandbox.baremetal.nvproxy.product_label, set by NVIDIA GPU Feature Discovery) with only
#   supported models (sandbox.baremetal.nvproxy.products, never a MIG product). Pinned means through
#   spec.nodeSelector, the RuntimeClass's scheduling.nodeSelector (from input.facts.runtimeClass), or a
#   required node affinity whose every term allows only such values. The driver version cannot be seen
#   in a manifest and is not checked.
# custom:
#   id: STK-RT-006
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [gpu-best-practice, sandbox-best-practice]
#   remediation: >-
#     On AKS run GPU work outside the sandbox in a dedicated, isolated pool, or without GPUs in the
#     sandbox. On bare metal use a gVisor class on the nvproxy pool: select its labels (or
#     nvidia.com/gpu.product of a supported GPU) in spec.nodeSelector or in the RuntimeClass's
#     scheduling, and request whole GPUs instead of MIG slices.
package stockade.runtime.sandbox_gpu

import data.stockade.lib.pods
import data.stockade.lib.sandbox
import rego.v1

mig_prefix := "nvidia.com/mig-"

# Containers asking for a MIG slice, with the path of that resource (its limit if set, else its request).
mig_containers contains {"container": c, "path": pods.gpu_path(e.path, c, r), "resource": r} if {
	some e in pods.resource_containers
	c := e.container
	some r in mig_resources_of(c)
}

mig_resources_of(c) := {r |
	some kind in ["limits", "requests"]
	some r, q in pods.resource_list(c, kind)
	startswith(r, mig_prefix)
	not pods.zero_quantity(q)
}

gpu_containers := pods.gpu_containers | mig_containers

# The first GPU container by name, for messages and the finding's path (one answer even when a
# malformed manifest repeats a container name).
first_gpu := {"name": m[0], "resource": m[1], "path": m[2]} if {
	m := min({[pods.container_name(x.container), x.resource, x.path] | some x in gpu_containers})
}

nvproxy := object.get(data.stockade.config, ["sandbox", "baremetal", "nvproxy"], {})

pool := object.get(nvproxy, "node_selector", {})

product_label := object.get(nvproxy, "product_label", "nvidia.com/gpu.product")

products := object.get(nvproxy, "products", [])

# ---- AKS: not satisfiable -----------------------------------------------------------------------------

deny contains v if {
	sandbox.sandbox_pod
	sandbox.aks
	g := first_gpu
	v := {
		"msg": sprintf("not satisfiable: pod (%s) asks for GPUs (container %q: %s), but AKS Pod Sandboxing (Kata) gives pods no GPU", [
			sandbox.sandbox_reason,
			g.name,
			g.resource,
		]),
		"path": g.path,
		"details": {"profile": sandbox.profile_name, "resource": g.resource, "satisfiable": false},
	}
}

# ---- bare metal: nvproxy ------------------------------------------------------------------------------

deny contains v if {
	sandbox.sandbox_pod
	not sandbox.aks
	some g in mig_containers
	v := {
		"msg": sprintf("pod (%s) asks for MIG slice %s (container %q): gVisor's nvproxy does not support MIG", [
			sandbox.sandbox_reason,
			g.resource,
			pods.container_name(g.container),
		]),
		"path": g.path,
		"details": {"profile": sandbox.profile_name, "resource": g.resource},
	}
}

deny contains v if {
	sandbox.sandbox_pod
	not sandbox.aks
	pods.gpu_pod
	count(pool) > 0
	some key, value in pool
	not pinned_to(key, value)
	v := {
		"msg": sprintf("GPU pod (%s) is not pinned to the nvproxy-capable pool: it does not select node label %s=%s (nodeSelector, required node affinity or its RuntimeClass)", [
			sandbox.sandbox_reason,
			key,
			value,
		]),
		"path": pods.spec_path(["nodeSelector", key]),
		"details": {"profile": sandbox.profile_name, "label": key, "value": value},
	}
}

deny contains v if {
	sandbox.sandbox_pod
	not sandbox.aks
	pods.gpu_pod
	count(pool) == 0
	not pinned_to_supported
	v := {
		"msg": sprintf("GPU pod (%s) is not pinned to GPUs gVisor's nvproxy supports: it must select node label %s with only %s (nodeSelector, required node affinity or its RuntimeClass), or set sandbox.baremetal.nvproxy.node_selector", [
			sandbox.sandbox_reason,
			product_label,
			concat(" | ", products),
		]),
		"path": pods.spec_path(["nodeSelector", product_label]),
		"details": {"profile": sandbox.profile_name, "label": product_label, "products": products},
	}
}

# ---- the node label values the pod's scheduling allows ----------------------------------------------

pod_values(key) := {v} if {
	v := input.pod.spec.nodeSelector[key]
	is_string(v)
}

class_values(key) := {v} if {
	sandbox.rc.name == sandbox.pod_class
	v := sandbox.rc.nodeSelector[key]
	is_string(v)
}

# Required node affinity: the terms are ORed, so every term must restrict the label; within a term the
# In expressions on the label are ANDed (the intersection of their values).
affinity_values(key) := vals if {
	terms := input.pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
	count(terms) > 0
	every term in terms {
		count(term_values(term, key)) > 0
	}
	vals := {x | some term in terms; some x in term_values(term, key)}
}

term_values(term, key) := intersection({{x | some x in e.values} |
	some e in term.matchExpressions
	e.key == key
	e.operator == "In"
})

pinned_to(key, value) if pod_values(key) == {value}

pinned_to(key, value) if class_values(key) == {value}

pinned_to(key, value) if affinity_values(key) == {value}

pinned_to_supported if supported(pod_values(product_label))

pinned_to_supported if supported(class_values(product_label))

pinned_to_supported if supported(affinity_values(product_label))

supported(vals) if {
	count(vals) > 0
	every x in vals {
		supported_product(x)
	}
}

# A GPU model nvproxy supports; a MIG product (GPU Feature Discovery's "...-MIG-1g.10gb") never is.
# (Stated without `not`: this is evaluated under `not pinned_to_supported`, and a negated helper that
# itself negates is slow on the compiled Rego VM.)
supported_product(x) if {
	sandbox.matches_any(products, x)
	indexof(upper(x), "MIG") == -1
}
