# Helpers shared by every rule that looks at a pod template.
#
# input.pod = {"spec": ..., "metadata": ..., "path": [...], "specPath": [...], "metadataPath": [...]} is
# one pod spec of whatever workload kind was submitted (Pod, Deployment, CronJob, a RayCluster's worker
# group, a KServe predictor, ...; policies/kinds/workloads.py); `specPath` and `metadataPath` are where
# the pod spec's fields and the pods' labels sit inside input.object, so rules report paths into the
# object the user wrote. Without them (a hand-written input), they are `path` + spec / metadata.
package stockade.lib.pods

import rego.v1

# The three container lists, in the order Pod Security Admission walks them.
container_fields := ["initContainers", "containers", "ephemeralContainers"]

# Every container of the pod, with the object path of the container. An array, not a set: a set of
# objects holding whole containers is kept sorted and deduplicated by deep comparison, which costs the
# VM more than every rule's own work on small pods; the entries are distinct by path anyway.
containers := [{"container": c, "path": array.concat(spec_base, [field, i])} |
	some field in container_fields
	some i, c in input.pod.spec[field]
]

spec_base := input.pod.specPath if is_array(input.pod.specPath) else := array.concat(input.pod.path, ["spec"])

metadata_base := input.pod.metadataPath if {
	is_array(input.pod.metadataPath)
} else := array.concat(input.pod.path, ["metadata"])

# Object path of a field of the pod spec, e.g. spec_path(["hostNetwork"]).
spec_path(suffix) := array.concat(spec_base, suffix)

# The pod spec's ServiceAccount field as written: serviceAccountName, or its deprecated alias
# serviceAccount where only that is set (the API server copies it into serviceAccountName); the
# kinds table's field where the object names it elsewhere (a SparkPodSpec's serviceAccount).
deprecated_account_field if {
	object.get(input.pod.spec, "serviceAccountName", "") == ""
	object.get(input.pod.spec, "serviceAccount", "") != ""
}

# (a rule, so that `not account_field` is true where the pod names no field: OPA's `not` of a
# built-in called on an undefined reference is undefined, regorus' true)
account_field := f if {
	f := input.pod.account.field
	is_array(f)
}

account_path := account_field

account_path := spec_path(["serviceAccount"]) if {
	not account_field
	deprecated_account_field
}

account_path := spec_path(["serviceAccountName"]) if {
	not account_field
	not deprecated_account_field
}

# Object path of a field of the pod metadata, e.g. metadata_path(["annotations", k]).
metadata_path(suffix) := array.concat(metadata_base, suffix)

# The pod template targets Windows nodes (spec.os.name), which exempts it from some restricted controls.
windows if input.pod.spec.os.name == "windows"

# Pod Security Standards level for this object: the namespace's enforce label, else the configured
# default. A label that names no level counts as restricted, as Pod Security Admission parses it
# (pod-security-admission api/helpers.go ParseLevel: an invalid level fails closed).
levels := {"privileged", "baseline", "restricted"}

pss_level := lvl if {
	lvl := input.namespace.labels["pod-security.kubernetes.io/enforce"]
	lvl in levels
} else := "restricted" if {
	input.namespace.labels["pod-security.kubernetes.io/enforce"]
} else := data.stockade.config.pss.default_level

baseline if pss_level in {"baseline", "restricted"}

restricted if pss_level == "restricted"

# The container's name for messages ("" when a malformed manifest omits it, so the violation is
# still reported instead of the rule becoming undefined).
container_name(c) := object.get(c, "name", "")

# The pod runs in its own user namespace (spec.hostUsers: false). Since policy version v1.35 Pod
# Security Admission relaxes runAsNonRoot, runAsUser and the baseline procMount check for such pods.
user_namespace if input.pod.spec.hostUsers == false

# A field that Kubernetes would decode as set (present and not null), like a non-nil Go pointer.
is_set(obj, key) if {
	is_object(obj)
	obj[key] != null
}

# ---- Helpers for the image, resource, GPU and ServiceAccount rules -------------------------------

# The namespace the object lives in: its own metadata, else the one the gate evaluates it for.
object_namespace := ns if {
	ns := input.object.metadata.namespace
	is_string(ns)
	ns != ""
} else := ns if {
	ns := input.namespace.name
	is_string(ns)
	ns != ""
}

# Containers that declare compute resources: init and regular containers. Ephemeral containers may not
# set resources (the API server rejects them), so they are left out.
resource_container_fields := ["initContainers", "containers"]

resource_containers := [{"container": c, "path": array.concat(spec_base, [field, i])} |
	some field in resource_container_fields
	some i, c in input.pod.spec[field]
]

# A container's resources.<kind> map (kind = "limits" | "requests"), {} when absent or null.
resource_list(c, kind) := l if {
	l := c.resources[kind]
	is_object(l)
} else := {}

# A resource quantity as it is written, when it is set (not null, not "").
resource_value(c, kind, name) := q if {
	q := resource_list(c, kind)[name]
	q != null
	q != ""
}

# The numeric value of a Kubernetes quantity ("500m" -> 0.5, "1Gi" -> 1073741824, 2 -> 2); undefined for
# a malformed one (checked before units.parse, which would otherwise fail the whole evaluation).
quantity(q) := q if is_number(q)

quantity(q) := units.parse(q) if {
	is_string(q)
	regex.match(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$`, q)
}

# Two quantities are different amounts ("1" and 1, "1000m" and "1" are not); malformed ones compare as
# written. (Stated positively: a negated helper that itself negates is slow on the compiled Rego VM.)
different_quantity(a, b) if {
	a != b # the same quantity written the same way is the same amount: no parsing (the common case)
	quantity(a) != quantity(b)
}

different_quantity(a, b) if {
	a != b
	not parseable(a)
}

# A quantity that parses. A helper, not `not is_number(quantity(a))`: for a malformed quantity the call
# is undefined, and OPA and regorus disagree on negating a call with an undefined argument.
parseable(q) if is_number(quantity(q))

# Resource names the configuration counts as GPUs (gpu.resources).
gpu_resource_names := {r | some r in object.get(data.stockade.config, ["gpu", "resources"], [])}

# The GPU resources a container asks for (limits or requests), with a quantity that is not zero.
gpu_resources_of(c) := {r |
	some kind in ["limits", "requests"]
	some r, q in resource_list(c, kind)
	r in gpu_resource_names
	not zero_quantity(q)
}

# (a quantity whose digits before any suffix or exponent include 1-9 is not zero, valid or not: decided
# without the regular expression and units.parse, about 4 µs of the compiled VM's time per call; the
# GPU requests of most pods are such quantities)
zero_quantity(q) if {
	not nonzero_mantissa(q)
	quantity(q) == 0
}

zero_quantity(q) if q == null

zero_quantity(q) if q == ""

# A string quantity whose mantissa has a digit other than 0: the first character after the sign, the
# leading zeros and the decimal point is 1-9 ("8", "16Gi", "0.5", "+1e3"). A zero quantity ("0",
# "0Gi", "-0.0", "0e5") has only zeros there, and a malformed one that passes is not zero either.
nonzero_mantissa(q) if {
	is_string(q)
	substring(trim_left(q, "+-0."), 0, 1) in {"1", "2", "3", "4", "5", "6", "7", "8", "9"}
}

# Containers that use a GPU, with the object path of the GPU resource that makes them one (the first
# GPU resource by name; its limit if set, else its request).
gpu_containers contains {"container": c, "path": gpu_path(entry.path, c, r), "resource": r} if {
	some entry in resource_containers
	c := entry.container
	gpus := gpu_resources_of(c)
	count(gpus) > 0
	r := min(gpus)
}

gpu_path(base, c, r) := array.concat(base, ["resources", "limits", r]) if {
	resource_value(c, "limits", r)
} else := array.concat(base, ["resources", "requests", r])

# The pod uses a GPU: some container asks for a non-zero quantity of a GPU resource. Decided without
# building gpu_containers (paths, first resource by name), which only a finding needs.
gpu_pod if {
	some entry in resource_containers
	some kind in ["limits", "requests"]
	some r, q in resource_list(entry.container, kind)
	r in gpu_resource_names
	not zero_quantity(q)
}

# Projected serviceAccountToken volume sources whose token the Kubernetes API server accepts: the
# audience is unset or empty (the API server's own) or one of service_accounts.api_audiences. The pod
# gets such a token whatever automountServiceAccountToken says. A token for another audience (Azure
# workload identity's api://AzureADTokenExchange, Vault) is not a Kubernetes API credential.
api_token_projections := [{"path": spec_path(["volumes", i, "projected", "sources", j, "serviceAccountToken"]), "volume": object.get(vol, "name", ""), "audience": audience} |
	some i, vol in object.get(input.pod.spec, "volumes", [])
	some j, source in object.get(object.get(vol, "projected", {}), "sources", [])
	is_object(source.serviceAccountToken)
	audience := token_audience(source.serviceAccountToken)
	api_audience(audience)
]

token_audience(token) := a if {
	a := token.audience
	is_string(a)
} else := ""

api_audience("") := true

api_audience(a) if a in {x | some x in object.get(data.stockade.config, ["service_accounts", "api_audiences"], default_api_audiences)}

default_api_audiences := [
	"https://kubernetes.default.svc",
	"https://kubernetes.default.svc.cluster.local",
	"kubernetes.default.svc",
]
