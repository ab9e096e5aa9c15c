# Helpers for ARM-shaped Azure resources ({"id", "type", "name", "properties", ...}) from a live
# subscription, a Resource Graph export, an ARM template or a terraform plan.
package stockade.lib.arm

import rego.v1

props := p if {
	p := input.object.properties
	is_object(p)
} else := {}

# The value at a path under properties, or `fallback` when absent or null.
prop(path, fallback) := v if {
	v := object.get(props, path, null)
	v != null
} else := fallback

# How a message shows a properties field: its value, or what an absent (null) one means, "not set
# (Allow)", so that a message never states as written what the resource leaves out.
shown_prop(path, fallback) := sprintf("not set (%v)", [fallback]) if object.get(props, path, null) == null

shown_prop(path, fallback) := v if {
	v := object.get(props, path, null)
	v != null
}

# Where a properties field is, for findings.
path(suffix) := array.concat(["properties"], suffix)

# Sub-resources of a storage account that must have an approved private endpoint: the configured
# ones (blob for a FileStorage account means file), dfs with a hierarchical namespace, and every
# sub-resource some endpoint already targets.
required_subresources contains g if {
	some g0 in object.get(data.stockade.config, ["storage", "required_subresources"], ["blob"])
	g := file_for_blob(lower(g0))
}

required_subresources contains "dfs" if prop(["isHnsEnabled"], false) == true

required_subresources contains g if {
	some g, _ in object.get(input.facts, ["storage", "privateEndpoints"], {})
	g != "unknown"
}

file_for_blob(g) := "file" if {
	g == "blob"
	lower(object.get(input.object, "kind", "")) == "filestorage"
} else := g

# A property set by a template expression stockade cannot evaluate (reference(), listKeys(), a
# parameter without a value): scanner/sources/arm.py writes it as this marker. Rules treat it as the
# worst case and quote it.
unknown(v) if {
	is_string(v)
	startswith(v, "[unknown: set by an expression stockade cannot evaluate: ")
}

# Why not every private endpoint of the resource is known (input.facts.privateLink or .storage
# endpointsUnknown: a template's copy loop that may create them was not read, a gap the scan reports
# at its line); undefined when all are.
endpoints_unknown := why if {
	some facts in ["privateLink", "storage"]
	why := input.facts[facts].endpointsUnknown
	is_string(why)
}

# A resource's private endpoint connection statuses for a message: "none" or the statuses, and
# what was not read ("none read; not judged: …"), never "none" where a loop of them was not read.
endpoint_text(statuses) := sprintf("%s read; not judged: %s", [endpoint_statuses(statuses), endpoints_unknown]) if {
	endpoints_unknown
}

endpoint_text(statuses) := endpoint_statuses(statuses) if not endpoints_unknown

endpoint_statuses(statuses) := "none" if count(statuses) == 0

endpoint_statuses(statuses) := concat(", ", statuses) if count(statuses) > 0

# " (set by an expression stockade cannot evaluate: …)" when the property at path is unknown, else "".
why(path) := sprintf(" (%s)", [trim_suffix(trim_prefix(v, "[unknown: "), "]")]) if {
	v := object.get(props, path, null)
	unknown(v)
} else := ""

# An array property as a list; an unknown one is one unknown entry (never an empty list).
list(path) := v if {
	v := prop(path, [])
	is_array(v)
} else := [prop(path, [])]

# An Azure AI Foundry project (a workspace of kind Project): its hub's managed network, private
# endpoints and public network access are what reach it, so the hub is judged, not the project.
hub_project if lower(object.get(input.object, "kind", "")) == "project"
