# METADATA
# title: Windows HostProcess containers
# description: >-
#   Pod Security Standards (baseline), mirroring Pod Security Admission check "windowsHostProcess"
#   (check_windowsHostProcess.go). Windows HostProcess containers get privileged access to the
#   Windows node. securityContext.windowsOptions.hostProcess must be unset or false at pod level and
#   on every container, init container and ephemeral container.
# custom:
#   id: STK-POD-001
#   severity: critical
#   kinds: ["@workloads"]
#   triggers: ['"hostProcess"']
#   frameworks: [pss-baseline, CIS-5.2.11, NSA-CISA]
#   remediation: >-
#     Remove securityContext.windowsOptions.hostProcess (or set it to false) on the pod and on every
#     container; run node-level Windows tooling outside namespaces that enforce baseline.
package stockade.pod.host_process

import data.stockade.lib.pods
import rego.v1

deny contains v if {
	pods.baseline
	input.pod.spec.securityContext.windowsOptions.hostProcess == true
	v := {
		"msg": "pod sets securityContext.windowsOptions.hostProcess=true",
		"path": pods.spec_path(["securityContext", "windowsOptions", "hostProcess"]),
	}
}

deny contains v if {
	pods.baseline
	some entry in pods.containers
	entry.container.securityContext.windowsOptions.hostProcess == true
	v := {
		"msg": sprintf("container %q sets securityContext.windowsOptions.hostProcess=true", [pods.container_name(entry.container)]),
		"path": array.concat(entry.path, ["securityContext", "windowsOptions", "hostProcess"]),
	}
}
