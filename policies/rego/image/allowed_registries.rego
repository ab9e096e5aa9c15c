# METADATA
# title: Image from a registry that is not allowed
# description: >-
#   Every image a pod pulls (containers, init and ephemeral containers, image volumes) must come from a
#   registry listed in images.allowed_registries. An entry is a registry host with an optional path
#   prefix ("myacr.azurecr.io/", "mcr.microsoft.com/oss/"). It matches an image whose repository, after
#   normalisation, equals it or continues it at a "/" boundary: "myacr.azurecr.io/" matches
#   "myacr.azurecr.io/team/x:1" but not "myacr.azurecr.io.evil.com/x", and "gcr.io/" does not match
#   "gcr.io:5000/x". Docker Hub short names are normalised the way the container runtime resolves them
#   ("nginx" is "docker.io/library/nginx", "user/app" is "docker.io/user/app"), so Docker Hub is allowed
#   with "docker.io/" and its official images only with "docker.io/library/". Registry hosts compare
#   case-insensitively; tags and digests take no part. With no list (the default) the rule checks
#   nothing: every registry is allowed until the list is configured, and the gates say so once (an
#   out-of-the-box scan of a hardened manifest passes; allowlisting is one line of stockade.yaml away).
# custom:
#   id: STK-IMG-001
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [CIS-5.5.1, NSA-CISA, pod-best-practice]
#   remediation: >-
#     Pull the image from an approved registry (mirror or import it there, e.g. `az acr import`), or add
#     its registry to images.allowed_registries in stockade.yaml.
package stockade.image.allowed_registries

import data.stockade.lib.images
import rego.v1

configured := object.get(data.stockade.config, ["images", "allowed_registries"], [])

# Each entry as a repository prefix without its trailing "/", host lower-cased, "index.docker.io" as
# "docker.io".
allowed := [normalise(e) | some e in configured; is_string(e); trim_right(e, "/") != ""]

normalise(entry) := concat("/", [images.docker_hub_domain(lower(host)), rest]) if {
	p := trim_right(entry, "/")
	i := indexof(p, "/")
	i > 0
	host := substring(p, 0, i)
	rest := substring(p, i + 1, -1)
} else := images.docker_hub_domain(lower(trim_right(entry, "/")))

allowed_repository(repository) if {
	some prefix in allowed
	repository == prefix
}

allowed_repository(repository) if {
	some prefix in allowed
	startswith(repository, concat("", [prefix, "/"]))
}

deny contains v if {
	count(allowed) > 0
	some src in images.sources
	not allowed_repository(src.ref.repository)
	v := {
		"msg": sprintf(
			"%s %q image %q (%s) is not from an allowed registry (allowed: %s)",
			[src.what, src.name, src.image, src.ref.repository, concat(", ", configured)],
		),
		"path": src.path,
		"details": {"image": src.image, "repository": src.ref.repository, "allowed": configured},
	}
}
