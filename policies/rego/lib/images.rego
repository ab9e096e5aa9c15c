# Image references, parsed the way the container runtime resolves them, and every place a pod
# names an image.
#
# The grammar is distribution/reference's (the parser containerd, CRI-O and the kubelet use):
#
#   [domain[:port]/]path[:tag][@algorithm:encoded]
#
# - the first path component is a registry domain when it contains "." or ":", is "localhost", or has
#   an upper-case letter; otherwise the image is on Docker Hub (docker.io);
# - Docker Hub names with one component are official images: "nginx" is "docker.io/library/nginx",
#   "user/app" is "docker.io/user/app"; "index.docker.io" is the legacy name of "docker.io";
# - a tag is the text after the last ":" of the last path component, so "reg:5000/app" has no tag;
# - a digest follows "@"; when a reference has both, the runtime pulls by digest and the tag is
#   ignored ("app:1.2@sha256:..." is pinned).
package stockade.lib.images

import data.stockade.lib.pods
import rego.v1

# parse(ref) := {"domain", "path", "repository", "tag", "digest", "pinned"}
#   domain      registry host[:port], lower-cased ("docker.io" for Docker Hub)
#   path        repository path inside the registry ("library/nginx")
#   repository  domain + "/" + path: what allowlists are matched against
#   tag         "" when the reference has none
#   digest      "" when the reference has none
#   pinned      the reference carries a well-formed digest (see valid_digest)
parse(ref) := {
	"domain": domain,
	"path": path,
	"repository": concat("/", [domain, path]),
	"tag": tag,
	"digest": digest,
	"pinned": pinned(digest),
} if {
	is_string(ref)
	[name_tag, digest] := split_digest(ref)
	[name, tag] := split_tag(name_tag)
	[domain, path] := split_domain(name)
}

split_digest(ref) := [substring(ref, 0, i), substring(ref, i + 1, -1)] if {
	i := indexof(ref, "@")
	i >= 0
} else := [ref, ""]

split_tag(name_tag) := [name, tag] if {
	parts := split(name_tag, "/")
	last := parts[count(parts) - 1]
	i := indexof(last, ":")
	i >= 0
	tag := substring(last, i + 1, -1)
	name := concat("/", array.concat(array.slice(parts, 0, count(parts) - 1), [substring(last, 0, i)]))
} else := [name_tag, ""]

split_domain(name) := [docker_hub_domain(lower(first)), official_path(lower(first), rest)] if {
	i := indexof(name, "/")
	i > 0
	first := substring(name, 0, i)
	is_domain(first)
	rest := substring(name, i + 1, -1)
} else := ["docker.io", official_path("docker.io", name)]

is_domain(component) if contains(component, ".")

is_domain(component) if contains(component, ":")

is_domain(component) if component == "localhost"

is_domain(component) if lower(component) != component

docker_hub_domain("index.docker.io") := "docker.io"

docker_hub_domain(domain) := domain if domain != "index.docker.io"

# Docker Hub's official images live under library/.
official_path(domain, path) := concat("/", ["library", path]) if {
	docker_hub_domain(domain) == "docker.io"
	path != ""
	not contains(path, "/")
} else := path

# A digest is pinned when it is well formed (OCI image-spec descriptor grammar) and, for the
# registered algorithms, has their exact length of lower-case hex: sha256 and blake3 64, sha384 96,
# sha512 128. "@sha256:abc" or an upper-case hex digest cannot be pulled and so pins nothing.
digest_lengths := {"sha256": 64, "sha384": 96, "sha512": 128, "blake3": 64}

valid_digest(digest) if {
	regex.match(`^[a-z0-9]+([+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$`, digest)
	algorithm := substring(digest, 0, indexof(digest, ":"))
	not digest_lengths[algorithm]
}

valid_digest(digest) if {
	algorithm := substring(digest, 0, indexof(digest, ":"))
	n := digest_lengths[algorithm]
	regex.match(sprintf("^%s:[a-f0-9]{%d}$", [algorithm, n]), digest)
}

pinned(digest) := true if {
	valid_digest(digest)
} else := false

# The tag is mutable: "latest", no tag at all, or a floating tag (images.floating_tags: the release
# channels publishers move, compared case-insensitively, globs allowed), on a reference without a
# valid digest.
mutable_tag(ref) if {
	not ref.pinned
	ref.tag in {"", "latest"}
}

mutable_tag(ref) if {
	not ref.pinned
	floating_tag(ref.tag)
}

floating_tag(tag) if {
	tag != ""
	some pattern in object.get(data.stockade.config, ["images", "floating_tags"], default_floating_tags)
	glob.match(lower(pattern), null, lower(tag))
}

default_floating_tags := [
	"latest", "stable", "main", "master", "dev", "develop", "development", "nightly", "edge", "canary",
	"snapshot", "unstable", "beta", "alpha", "next", "head", "current", "lts",
]

# Kubernetes' default imagePullPolicy (SetDefaults_Container): Always when the tag is "latest" or
# there is neither a tag nor a digest, else IfNotPresent.
default_pull_policy(ref) := "Always" if {
	ref.tag == "latest"
} else := "Always" if {
	ref.tag == ""
	ref.digest == ""
} else := "IfNotPresent"

# Every image the pod pulls, with where it is named:
#   {"what": "container" | "image volume", "name", "image", "ref" (parse), "path" (object path of the
#    image field), "policy" (effective pull policy), "policy_set" (the manifest sets it),
#    "policy_path"}
# Containers of all three lists, and image volumes (spec.volumes[].image, Kubernetes 1.31+).
sources contains src if {
	some entry in pods.containers
	image := entry.container.image
	ref := parse(image)
	image != ""
	src := {
		"what": "container",
		"name": pods.container_name(entry.container),
		"image": image,
		"ref": ref,
		"path": array.concat(entry.path, ["image"]),
		"policy": pull_policy(entry.container, "imagePullPolicy", ref),
		"policy_set": policy_set(entry.container, "imagePullPolicy"),
		"policy_path": array.concat(entry.path, ["imagePullPolicy"]),
	}
}

sources contains src if {
	some i, volume in input.pod.spec.volumes
	image := volume.image.reference
	ref := parse(image)
	image != ""
	src := {
		"what": "image volume",
		"name": object.get(volume, "name", ""),
		"image": image,
		"ref": ref,
		"path": pods.spec_path(["volumes", i, "image", "reference"]),
		"policy": pull_policy(volume.image, "pullPolicy", ref),
		"policy_set": policy_set(volume.image, "pullPolicy"),
		"policy_path": pods.spec_path(["volumes", i, "image", "pullPolicy"]),
	}
}

pull_policy(obj, field, ref) := p if {
	p := obj[field]
	is_string(p)
	p != ""
} else := default_pull_policy(ref)

policy_set(obj, field) := true if {
	pods.is_set(obj, field)
} else := false
