# METADATA
# title: Image tag "latest", floating, or no tag
# description: >-
#   An image named by the tag "latest", or by no tag at all (which the runtime resolves to "latest"),
#   runs whatever the registry serves at pull time: replicas and restarts can run different code and a
#   rollback has nothing to roll back to. The same holds for the release channels publishers move
#   (images.floating_tags: latest, nightly, main, master, edge, dev, stable...; case-insensitive, globs
#   allowed), matched against the whole tag and against each of its words (the tag split at "-", "_"
#   and "."): "latest-gpu", "nightly-py310-gpu", "main-latest" and "v1.2-latest" float, "latestversion"
#   and "2.9.0-gpu" do not, and a word beside a build stamp (a commit id or a date:
#   "main-3f2a1b9", "nightly-20240601") names one build and does not float. Checked on containers,
#   init and ephemeral containers and image volumes. A reference with a digest is pinned whatever its
#   tag ("app:latest@sha256:..." runs the digest). References are parsed like the runtime does:
#   "registry:5000/app" has no tag (5000 is the registry port); a string that is not an image
#   reference ("FILLED BY THE OPERATOR", "$IMAGE", "app@sha256:abc") is STK-IMG-005's, not this rule's.
# custom:
#   id: STK-IMG-002
#   severity: medium
#   kinds: ["@workloads"]
#   frameworks: [pod-best-practice]
#   remediation: >-
#     Name the image by an immutable version tag (app:1.4.2) or, better, by digest
#     (app:1.4.2@sha256:...).
package stockade.image.mutable_tag

import data.stockade.lib.images
import rego.v1

deny contains v if {
	some src in images.mutable_sources
	v := {
		"msg": sprintf("%s %q image %q %s", [src.what, src.name, src.image, problem(src.ref)]),
		"path": src.path,
		"details": {"image": src.image, "tag": src.ref.tag, "digest": src.ref.digest},
	}
}

problem(ref) := "has no tag (it resolves to \"latest\")" if {
	ref.tag == ""
} else := "uses the mutable tag \"latest\"" if {
	ref.tag == "latest"
} else := sprintf("uses the floating tag %q (images.floating_tags)", [ref.tag]) if {
	images.floating_word(ref.tag) == ref.tag
} else := sprintf("uses the floating tag %q (its word %q is in images.floating_tags)", [ref.tag, images.floating_word(ref.tag)])
