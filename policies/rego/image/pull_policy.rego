# METADATA
# title: Image pull policy lets a node run a stale copy of a moving tag
# description: >-
#   The pull policy decides whether the kubelet asks the registry what an image name means now
#   (Always) or runs the copy already on the node (IfNotPresent, Never). That matters only where the
#   name moves: on a mutable tag ("latest", no tag, or a floating tag such as "nightly" or
#   "latest-gpu", as STK-IMG-002 defines them) a node that pulled the image once keeps running that
#   copy while other nodes pull newer ones, so replicas of one workload run different code. Reported:
#   an effective IfNotPresent or Never on a mutable tag, decided on the policy as Kubernetes defaults
#   an omitted one (Always for the tag "latest" or no tag and no digest, IfNotPresent otherwise): an
#   omitted policy on "latest" is Always and not reported, one on "nightly" is IfNotPresent and is.
#   Not reported: an image pinned by digest (content-addressed, every node runs the same bytes) and a
#   version tag ("1.4.2"): IfNotPresent is Kubernetes' own default for it, Always would download the
#   same release again, and a version tag that is pushed anew is a registry-integrity problem that
#   digest pinning answers (STK-IMG-003), not the pull policy. Unlike Polaris' pullPolicyNotAlways,
#   an omitted policy on "latest" or no tag is not reported: Kubernetes turns it into Always (the
#   mutable tag itself is STK-IMG-002). That cached images skip the pull-credential check is a node
#   concern (AlwaysPullImages admission plugin, kubelet KubeletEnsureSecretPulledImages), not a
#   per-workload one.
# custom:
#   id: STK-IMG-004
#   severity: low
#   action: warn
#   kinds: ["@workloads"]
#   frameworks: [pod-best-practice]
#   remediation: >-
#     Name the image by a version tag or a digest (then IfNotPresent is right, and avoids a registry
#     round trip for large GPU images), or set imagePullPolicy: Always. Do not use Never outside of
#     air-gapped test clusters.
package stockade.image.pull_policy

import data.stockade.lib.images
import rego.v1

deny contains v if {
	some src in images.mutable_sources
	src.policy in {"IfNotPresent", "Never"}
	v := {
		"msg": sprintf(
			"%s %q image %q uses pull policy %s%s on %s: %s",
			[src.what, src.name, src.image, src.policy, defaulted(src), moving(src.ref), consequence(src.policy)],
		),
		"path": src.policy_path,
		"details": {"image": src.image, "pullPolicy": src.policy, "set": src.policy_set, "tag": src.ref.tag},
	}
}

defaulted(src) := "" if {
	src.policy_set
} else := " (the Kubernetes default for a tag other than \"latest\")"

moving(ref) := "no tag" if {
	ref.tag == ""
} else := "the mutable tag \"latest\"" if {
	ref.tag == "latest"
} else := sprintf("the floating tag %q", [ref.tag])

consequence("Never") := "the node's cached copy runs, whatever the tag names now"

consequence("IfNotPresent") := "a node keeps running the copy it pulled first while others pull newer ones"
