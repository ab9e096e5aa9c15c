# METADATA
# title: HostPath volumes
# description: >-
#   Pod Security Standards (baseline), mirroring Pod Security Admission check "hostPathVolumes"
#   (check_hostPathVolumes.go). HostPath volumes must be forbidden: spec.volumes[*].hostPath must be
#   unset. Under restricted, PSA's restrictedVolumes check rejects them too; this rule's finding is
#   the one for both (STK-POD-101 leaves hostPath volumes to it, and its details say so).
# custom:
#   id: STK-POD-005
#   severity: high
#   kinds: ["@workloads"]
#   triggers: ['"hostPath"']
#   frameworks: [pss-baseline, CIS-5.2.12, NSA-CISA]
#   remediation: >-
#     Replace hostPath volumes with emptyDir, configMap, secret, projected, a persistentVolumeClaim or
#     a CSI volume.
package stockade.pod.host_path

import data.stockade.lib.pods
import rego.v1

deny contains v if {
	pods.baseline
	some i, volume in input.pod.spec.volumes
	pods.is_set(volume, "hostPath")
	v := {
		"msg": sprintf("volume %q is a hostPath volume (path %q)", [object.get(volume, "name", ""), host_path_of(volume)]),
		"path": pods.spec_path(["volumes", i, "hostPath"]),
		"details": {"hostPath": host_path_of(volume), "checks": checks},
	}
}

# The Pod Security Admission checks that reject the volume at the namespace's level.
checks := ["hostPathVolumes", "restrictedVolumes"] if pods.restricted

else := ["hostPathVolumes"]

host_path_of(volume) := p if {
	p := volume.hostPath.path
	is_string(p)
} else := ""
