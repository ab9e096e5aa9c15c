package stockade.runtime.sandbox_gpu_test

import data.stockade.runtime.fixtures_test as f
import data.stockade.runtime.sandbox_gpu
import rego.v1

paths(inp) := {v.path | some v in sandbox_gpu.deny with input as inp}

gpu(extra) := object.union({"runtimeClassName": "gvisor", "containers": [f.gpu_container]}, extra)

a100 := {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}}

test_aks_sandboxed_gpu_not_satisfiable if {
	inp := f.pod(gpu({"runtimeClassName": "kata-vm-isolation"}), f.ns_sandbox, f.on_cluster(f.rc_unknown("kata-vm-isolation"), "aks-1"))
	some v in sandbox_gpu.deny with input as inp with data.stockade.config.sandbox.clusters as f.aks_clusters
	startswith(v.msg, "not satisfiable")
	v.path == ["spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"]
	v.details.satisfiable == false
}

test_aks_cpu_sandbox_allowed if {
	inp := f.pod(f.spec({"runtimeClassName": "kata-vm-isolation"}), f.ns_sandbox, f.on_cluster(f.rc_unknown("kata-vm-isolation"), "aks-1"))
	count(sandbox_gpu.deny) == 0 with input as inp with data.stockade.config.sandbox.clusters as f.aks_clusters
}

test_ordinary_gpu_pod_allowed if {
	paths(f.pod(object.remove(gpu({}), ["runtimeClassName"]), f.ns_plain, f.rc_unknown(null))) == set()
}

test_baremetal_supported_product_allowed if {
	paths(f.pod(gpu(a100), f.ns_sandbox, f.rc_unknown("gvisor"))) == set()
	paths(f.pod(gpu({"nodeSelector": {"nvidia.com/gpu.product": "Tesla-T4"}}), f.ns_sandbox, f.rc_unknown("gvisor"))) == set()
	paths(f.pod(gpu({"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"}}), f.ns_sandbox, f.rc_unknown("gvisor"))) == set()
}

test_baremetal_unpinned_denied if {
	some v in sandbox_gpu.deny with input as f.pod(gpu({}), f.ns_sandbox, f.rc_unknown("gvisor"))
	v.path == ["spec", "nodeSelector", "nvidia.com/gpu.product"]
	contains(v.msg, "not pinned to GPUs gVisor's nvproxy supports")
}

test_baremetal_unsupported_products_denied if {
	count(paths(f.pod(gpu({"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L40S"}}), f.ns_sandbox, f.rc_unknown("gvisor")))) == 1
	count(paths(f.pod(gpu({"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"}}), f.ns_sandbox, f.rc_unknown("gvisor")))) == 1
}

test_pinned_through_the_runtime_class if {
	rc := f.rc("gvisor", "runsc", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})
	paths(f.pod(gpu({}), f.ns_sandbox, rc)) == set()
}

affinity(terms) := {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}

term(values) := {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": values}]}

test_pinned_through_required_affinity if {
	paths(f.pod(gpu(affinity([term(["NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-PCIe"])])), f.ns_sandbox, f.rc_unknown("gvisor"))) == set()
	count(paths(f.pod(gpu(affinity([term(["NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S"])])), f.ns_sandbox, f.rc_unknown("gvisor")))) == 1
	count(paths(f.pod(gpu(affinity([term(["NVIDIA-A100-SXM4-80GB"]), {"matchExpressions": []}])), f.ns_sandbox, f.rc_unknown("gvisor")))) == 1
}

test_configured_pool if {
	pool := {"stockade.io/pool": "nvproxy"}
	inp := f.pod(gpu(a100), f.ns_sandbox, f.rc_unknown("gvisor"))
	some v in sandbox_gpu.deny with input as inp with data.stockade.config.sandbox.baremetal.nvproxy.node_selector as pool
	v.path == ["spec", "nodeSelector", "stockade.io/pool"]
	ok := f.pod(gpu({"nodeSelector": pool}), f.ns_sandbox, f.rc_unknown("gvisor"))
	count(sandbox_gpu.deny) == 0 with input as ok with data.stockade.config.sandbox.baremetal.nvproxy.node_selector as pool
}

test_mig_slices_denied if {
	mig := {"name": "m", "resources": {"limits": {"nvidia.com/mig-1g.10gb": 1}}}
	inp := f.pod(f.spec({"runtimeClassName": "gvisor", "containers": [mig]}), f.ns_sandbox, f.rc_unknown("gvisor"))
	some v in sandbox_gpu.deny with input as inp
	contains(v.msg, "does not support MIG")
	v.path == ["spec", "containers", 0, "resources", "limits", "nvidia.com/mig-1g.10gb"]
}

test_zero_gpus_allowed if {
	zero := {"name": "g", "resources": {"limits": {"nvidia.com/gpu": 0}}}
	paths(f.pod(f.spec({"runtimeClassName": "gvisor", "containers": [zero]}), f.ns_sandbox, f.rc_unknown("gvisor"))) == set()
}

test_repeated_container_names_do_not_break_the_rule if {
	dup := {"runtimeClassName": "kata-vm-isolation", "initContainers": [f.gpu_container], "containers": [f.gpu_container]}
	inp := f.pod(dup, f.ns_sandbox, f.on_cluster(f.rc_unknown("kata-vm-isolation"), "aks-1"))
	paths(inp) == {["spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"]} with data.stockade.config.sandbox.clusters as f.aks_clusters
}
