# METADATA
# title: Writable root filesystem
# description: >-
#   A container whose root filesystem is writable lets whoever gets code execution in it drop tools
#   and binaries, modify the application and persist across process restarts in the container.
#   securityContext.readOnlyRootFilesystem must be true on every container, init container and
#   ephemeral container (unset counts as writable); writable paths the application needs are
#   emptyDir or volume mounts. Windows pods (spec.os.name windows) are exempt: Kubernetes rejects
#   the field there. Not part of the Pod Security Standards, so reported at every level; a warning by
#   default, since many images write to their root filesystem.
# custom:
#   id: STK-POD-202
#   severity: medium
#   action: warn
#   kinds: ["@workloads"]
#   frameworks: [CIS-5.7.3, NSA-CISA, pod-best-practice]
#   remediation: >-
#     Set securityContext.readOnlyRootFilesystem: true on every container and mount an emptyDir where
#     the application writes (/tmp, caches).
package stockade.pod.read_only_root_filesystem

import data.stockade.lib.pods
import rego.v1

deny contains v if {
	not pods.windows
	some entry in pods.containers
	not entry.container.securityContext.readOnlyRootFilesystem == true
	v := {
		"msg": sprintf("container %q must set securityContext.readOnlyRootFilesystem=true%s", [pods.container_name(entry.container), current(entry.container)]),
		"path": array.concat(entry.path, ["securityContext", "readOnlyRootFilesystem"]),
	}
}

current(c) := sprintf(" (it is %v)", [c.securityContext.readOnlyRootFilesystem]) if {
	pods.is_set(c.securityContext, "readOnlyRootFilesystem")
} else := " (it is unset)"
