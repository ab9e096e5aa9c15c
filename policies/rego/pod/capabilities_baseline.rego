# METADATA
# title: Capabilities beyond the default set
# description: >-
#   Pod Security Standards (baseline), mirroring Pod Security Admission check "capabilities_baseline"
#   (check_capabilities_baseline.go). Containers, init containers and ephemeral containers may only
#   add capabilities from the container runtime's default set: AUDIT_WRITE, CHOWN, DAC_OVERRIDE,
#   FOWNER, FSETID, KILL, MKNOD, NET_BIND_SERVICE, SETFCAP, SETGID, SETPCAP, SETUID, SYS_CHROOT
#   (exact, case-sensitive names; NET_RAW is not allowed). Under restricted, PSA replaces this check by
#   capabilities_restricted (STK-POD-106), so this rule applies at the baseline level only.
#   User-namespaced pods get no relaxation here.
# custom:
#   id: STK-POD-004
#   severity: high
#   kinds: ["@workloads"]
#   triggers: ['"add"']
#   frameworks: [pss-baseline, CIS-5.2.8, CIS-5.2.9, NSA-CISA]
#   remediation: >-
#     Remove capabilities outside the default set from securityContext.capabilities.add (NET_RAW,
#     SYS_ADMIN, NET_ADMIN, ...); grant the workload only what it needs.
package stockade.pod.capabilities_baseline

import data.stockade.lib.pods
import rego.v1

allowed_capabilities := {
	"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}

# Under restricted, PSA replaces this check by capabilities_restricted (STK-POD-106) (OverrideCheckIDs in the PSA
# registry): the restricted profile reports that check, not this one, for the same field.
applies if {
	pods.baseline
	not pods.restricted
}

deny contains v if {
	applies
	some entry in pods.containers
	some i, cap in entry.container.securityContext.capabilities.add
	not cap in allowed_capabilities
	v := {
		"msg": sprintf("container %q adds capability %v, which is not in the baseline default set", [pods.container_name(entry.container), cap]),
		"path": array.concat(entry.path, ["securityContext", "capabilities", "add", i]),
		"details": {"capability": cap},
	}
}
