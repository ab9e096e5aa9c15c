# METADATA
# title: Image not pinned by digest
# description: >-
#   In namespaces matching images.require_digest_namespaces (shell-style globs), every image (containers,
#   init and ephemeral containers, image volumes) must be pinned by a well-formed digest
#   (@sha256:<64 hex>, or another OCI digest algorithm), so the bytes that run are the bytes that were
#   reviewed and scanned. A tag alongside the digest is allowed; the runtime ignores it. No namespace
#   requires digests by default.
# custom:
#   id: STK-IMG-003
#   severity: medium
#   kinds: ["@workloads"]
#   frameworks: [CIS-5.5.1, pod-best-practice]
#   remediation: >-
#     Pin the image by digest (registry/app:1.4.2@sha256:...), e.g. resolve it with
#     `crane digest` or `docker buildx imagetools inspect` in the pipeline that renders the manifest.
package stockade.image.digest_required

import data.stockade.lib.images
import data.stockade.lib.pods
import rego.v1

patterns := object.get(data.stockade.config, ["images", "require_digest_namespaces"], [])

# Config globs match like shell patterns: no delimiter, "*" spans everything.
required if {
	some pattern in patterns
	glob.match(pattern, null, pods.object_namespace)
}

deny contains v if {
	required
	some src in images.sources
	not src.ref.pinned
	v := {
		"msg": sprintf(
			"%s %q image %q is not pinned by digest (namespace %q requires image@sha256:...)",
			[src.what, src.name, src.image, pods.object_namespace],
		),
		"path": src.path,
		"details": {"image": src.image, "namespace": pods.object_namespace},
	}
}
