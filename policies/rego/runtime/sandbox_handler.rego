# METADATA
# title: Sandbox RuntimeClass whose handler is not a sandbox
# description: >-
#   What isolates a pod is the RuntimeClass's handler (the CRI runtime the kubelet asks for), not the
#   class's name: a class named gvisor whose handler is runc runs pods on the host kernel. A RuntimeClass
#   that the profile approves or that is named like a sandbox (sandbox.class_patterns, by default
#   *gvisor*, *runsc*, *kata*, *sandbox*) must have a handler of the profile (sandbox.<profile>.handlers:
#   runsc for gVisor, kata* for Kata; AKS offers Kata only). Reported on the RuntimeClass itself, and on
#   workloads that name such a class when input.facts.runtimeClass knows its handler.
# custom:
#   id: STK-RT-003
#   severity: critical
#   kinds: ["RuntimeClass", "@workloads"]
#   frameworks: [NSA-CISA, NIST-800-190, sandbox-best-practice]
#   remediation: >-
#     Set the class's handler to the sandbox runtime configured in containerd (runsc, kata, kata-qemu,
#     ...), or rename a class that is not meant to be a sandbox.
package stockade.runtime.sandbox_handler

import data.stockade.lib.pods
import data.stockade.lib.sandbox
import rego.v1

handler_text(h) := sprintf("%q", [h]) if is_string(h)

else := "unset"

# Helper rules rather than negated calls on possibly undefined handlers (no `handler` field): OPA
# and regorus disagree on `not f(undefined)`; with these both report the missing handler.
own_handler_ok if sandbox.sandbox_handler(input.object.handler)

class_handler_ok if sandbox.sandbox_handler(sandbox.rc.handler)

deny contains v if {
	input.object.kind == "RuntimeClass"
	name := input.object.metadata.name
	sandbox.claims_sandbox(name)
	not own_handler_ok
	v := {
		"msg": sprintf("RuntimeClass %q presents itself as a sandbox but its handler %s is not a sandbox handler of the %s profile (%s)", [
			name,
			handler_text(object.get(input.object, "handler", null)),
			sandbox.profile_name,
			sandbox.handler_list,
		]),
		"path": ["handler"],
		"details": {"handler": object.get(input.object, "handler", null), "profile": sandbox.profile_name},
	}
}

deny contains v if {
	input.object.kind != "RuntimeClass"
	sandbox.rc.known == true
	sandbox.rc.name == sandbox.pod_class
	sandbox.claims_sandbox(sandbox.pod_class)
	not class_handler_ok
	v := {
		"msg": sprintf("pods run in RuntimeClass %q, whose handler %s is not a sandbox handler of the %s profile (%s): they share the host kernel", [
			sandbox.pod_class,
			handler_text(sandbox.rc.handler),
			sandbox.profile_name,
			sandbox.handler_list,
		]),
		"path": pods.spec_path(["runtimeClassName"]),
		"details": {"runtimeClassName": sandbox.pod_class, "handler": sandbox.rc.handler, "profile": sandbox.profile_name},
	}
}
