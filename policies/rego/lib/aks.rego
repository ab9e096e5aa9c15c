# The AKS cluster a Kubernetes object runs on, joined from the Azure layer (input.facts.azure.cluster,
# policies/facts/aks_cluster.py): only where a gate read both layers (a scan of an ARM template or
# terraform plan with the manifests, an audit with --azure-subscription). Undefined otherwise, so the
# cross-layer rules (policies/rego/azure/xlayer_*.rego) say nothing on one layer.
package stockade.lib.aks

import data.stockade.lib.arm
import rego.v1

cluster := c if {
	c := input.facts.azure.cluster
	is_object(c)
}

name := object.get(cluster, "name", "")

# "field: value" for messages; a value set by an expression stockade cannot evaluate is quoted as such.
shown(field, value) := sprintf("%s: %s", [field, trim_suffix(trim_prefix(value, "[unknown: "), "]")]) if {
	arm.unknown(value)
} else := sprintf("%s: %v", [field, value])

# A node pool's setting: true, or set by an expression stockade cannot evaluate (the worst case).
true_or_unknown(value) if value == true

true_or_unknown(value) if arm.unknown(value)
