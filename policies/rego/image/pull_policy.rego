# METADATA
# title: Image pull policy lets a node run a cached image
# description: >-
#   The pull policy decides whether the kubelet asks the registry which image a name means (Always), or
#   may run a copy already on the node (IfNotPresent, Never). Decided on the effective policy, as
#   Kubernetes defaults it when the manifest omits it: Always for the tag "latest" or no tag and no
#   digest, IfNotPresent otherwise. Reported: "Never" (the node's cache alone decides what runs, nothing
#   verifies it against the registry or checks that the pod may pull it), and an effective
#   "IfNotPresent" on an image that is not pinned by digest (a tag is mutable: nodes can run different
#   or stale images under one name). "IfNotPresent" with a digest is content-addressed and allowed.
#   Unlike Polaris' pullPolicyNotAlways, an omitted policy on an untagged or "latest" image is not
#   reported: Kubernetes turns it into Always (the mutable tag itself is STK-IMG-002). That cached images
#   skip the pull-credential check is a node concern (AlwaysPullImages admission plugin, kubelet
#   KubeletEnsureSecretPulledImages), not a per-workload one.
# custom:
#   id: STK-IMG-004
#   severity: low
#   action: warn
#   kinds: ["@workloads"]
#   frameworks: [pod-best-practice]
#   remediation: >-
#     Pin the image by digest (then IfNotPresent is safe and avoids a registry round trip for large GPU
#     images), or set imagePullPolicy: Always. Do not use Never outside of air-gapped test clusters.
package stockade.image.pull_policy

import data.stockade.lib.images
import rego.v1

deny contains v if {
	some src in images.sources
	src.policy == "Never"
	v := {
		"msg": sprintf(
			"%s %q image %q uses pull policy Never: the node's cached copy runs unverified",
			[src.what, src.name, src.image],
		),
		"path": src.policy_path,
		"details": {"image": src.image, "pullPolicy": src.policy},
	}
}

deny contains v if {
	some src in images.sources
	src.policy == "IfNotPresent"
	not src.ref.pinned
	v := {
		"msg": sprintf(
			"%s %q image %q uses pull policy IfNotPresent%s without a digest: a node may run a stale copy of the tag",
			[src.what, src.name, src.image, defaulted(src)],
		),
		"path": src.policy_path,
		"details": {"image": src.image, "pullPolicy": src.policy, "set": src.policy_set},
	}
}

defaulted(src) := "" if {
	src.policy_set
} else := " (the Kubernetes default for a tagged image)"
