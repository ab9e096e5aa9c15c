# Helpers shared by every rule that looks at a pod template.
#
# input.pod = {"spec": ..., "metadata": ..., "path": [...]} is the pod template of whatever workload
# kind was submitted (Pod, Deployment, CronJob, ...); `path` is where that template sits inside
# input.object, so rules report paths into the object the user wrote, not into the template.
package stockade.lib.pods

import rego.v1

# The three container lists, in the order Pod Security Admission walks them.
container_fields := ["initContainers", "containers", "ephemeralContainers"]

# Every container of the pod, with the object path of the container.
containers contains {"container": c, "path": array.concat(input.pod.path, ["spec", field, i])} if {
	some field in container_fields
	some i, c in input.pod.spec[field]
}

# Object path of a field of the pod spec, e.g. spec_path(["hostNetwork"]).
spec_path(suffix) := array.concat(input.pod.path, array.concat(["spec"], suffix))

# Object path of a field of the pod metadata, e.g. metadata_path(["annotations", k]).
metadata_path(suffix) := array.concat(input.pod.path, array.concat(["metadata"], suffix))

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
