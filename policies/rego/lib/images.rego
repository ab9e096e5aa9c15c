# Image references, parsed the way the container runtime resolves them, and every place a pod
# names an image.
#
# The grammar is distribution/reference's (github.com/distribution/reference, regexp.go and
# normalize.go; the parser the kubelet calls, ParseNormalizedNamed, and containerd's and CRI-O's
# forks of it):
#
#   reference  := name [":" tag] ["@" digest]
#   name       := [domain "/"] path-component ["/" path-component]*
#   domain     := host [":" port]; host a DNS-like name, an IPv4 address or "[" IPv6 "]"
#   path-component := [a-z0-9]+ (separator [a-z0-9]+)*; separator "." "_" "__" or "-"+
#   tag        := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
#   digest     := algorithm ":" hex; a registered algorithm with its exact length of lower-case
#                 hex (sha256 64, sha384 96, sha512 128: go-digest's Validate)
#
# - the first path component is a registry domain when it contains "." or ":", is "localhost", or has
#   an upper-case letter; otherwise the image is on Docker Hub (docker.io);
# - Docker Hub names with one component are official images: "nginx" is "docker.io/library/nginx",
#   "user/app" is "docker.io/user/app"; "index.docker.io" is the legacy name of "docker.io";
# - the repository path (after the domain) is lower-case and at most 255 characters; a bare 64-hex
#   string is an image id, not a name;
# - a tag is the text after the last ":" of the last path component, so "reg:5000/app" has no tag;
# - a digest follows "@"; when a reference has both, the runtime pulls by digest and the tag is
#   ignored ("app:1.2@sha256:..." is pinned).
#
# A string outside the grammar ("FILLED BY THE OPERATOR", "$VLLM_IMAGE", "ko://...", "{{ .Values }}",
# "app@sha256:abc") is not an image: the kubelet refuses it (InvalidImageName) before any pull. It is
# parsed with valid = false and is not among `sources`, so no registry, tag, digest or pull-policy
# finding describes it; STK-IMG-005 says once that it is not an image reference.
package stockade.lib.images

import data.stockade.lib.pods
import rego.v1

# parse(ref) := {"domain", "path", "repository", "tag", "digest", "pinned", "valid"}
#   domain      registry host[:port], lower-cased ("docker.io" for Docker Hub)
#   path        repository path inside the registry ("library/nginx")
#   repository  domain + "/" + path: what allowlists are matched against
#   tag         "" when the reference has none
#   digest      "" when the reference has none
#   valid       the string is an image reference (valid_reference); the other fields of an invalid
#               one are a best-effort split that no rule judges
#   pinned      a valid reference with a digest
#
# A valid reference is parsed once per image text in Python, where input.facts.imageReferences holds
# it as this object (policies/facts/images.py; tests/policies/test_image_facts.py holds the two to the
# same answer); any other text is split here.
parse(ref) := p if {
	p := input.facts.imageReferences[ref]
	is_object(p)
} else := {
	"domain": domain,
	"path": path,
	"repository": concat("/", [domain, path]),
	"tag": tag,
	"digest": digest,
	"pinned": pinned(valid, digest),
	"valid": valid,
} if {
	is_string(ref)
	[name_tag, digest] := split_digest(ref)
	[name, tag] := split_tag(name_tag)
	[domain, path] := split_domain(name)
	valid := valid_reference(ref)
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

pinned(valid, digest) := true if {
	valid
	digest != ""
} else := false

# ---- the grammar (distribution/reference regexp.go; Go's \w written out as ASCII) ----

path_component_pattern := `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`

remote_name_pattern := concat("", [path_component_pattern, `(?:/`, path_component_pattern, `)*`])

domain_component_pattern := `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`

# a DNS-like name or IPv4 address, or an IPv6 address in brackets; an optional port
domain_pattern := concat("", [
	`(?:`, domain_component_pattern, `(?:\.`, domain_component_pattern, `)*|\[(?:[a-fA-F0-9:]+)\])`,
	`(?::[0-9]+)?`,
])

tag_pattern := `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`

digest_pattern := `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`

reference_pattern := concat("", [
	`^(?:`, domain_pattern, `/)?`, remote_name_pattern,
	`(?::`, tag_pattern, `)?(?:@`, digest_pattern, `)?$`,
])

# distribution's Parse: the grammar, a repository path of at most 255 characters, and a digest of a
# registered algorithm (go-digest's Validate).
grammar_valid(ref) if {
	regex.match(reference_pattern, ref)
	[name_tag, digest] := split_digest(ref)
	[name, _] := split_tag(name_tag)
	count(grammar_path(name)) <= 255
	registered_digest(digest)
}

# The repository path as Parse captures it: the name after a first component that is a domain.
grammar_path(name) := substring(name, i + 1, -1) if {
	i := indexof(name, "/")
	i > 0
	regex.match(concat("", ["^", domain_pattern, "$"]), substring(name, 0, i))
} else := name

registered_digest(digest) if digest == ""

registered_digest(digest) if regex.match(`^(?:sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})$`, digest)

# distribution's ParseNormalizedNamed (what the kubelet calls): not a bare 64-hex image id; the
# Docker Hub domain and "library/" added the way splitDockerDomain adds them; the repository path in
# lower case; then Parse of the normalised string.
#
# Every gate computes it once per image text in Python (policies/facts/images.py, the same grammar with
# its patterns compiled once: this engine compiles a pattern on each call) and hands it over as
# input.facts.imageReferences (false, or the parsed reference, which parse reads before it would ask
# here); grammar_reference below decides any text that map does not hold as a boolean.
valid_reference(ref) := v if {
	v := input.facts.imageReferences[ref]
	is_boolean(v)
} else := grammar_reference(ref)

grammar_reference(ref) := true if {
	is_string(ref)
	not regex.match(`^[a-f0-9]{64}$`, ref)
	[domain, remainder] := docker_split(ref)
	remote := substring(remainder, 0, tag_colon(remainder))
	lower(remote) == remote
	grammar_valid(concat("/", [domain, remainder]))
} else := false

tag_colon(remainder) := i if {
	i := indexof(remainder, ":")
	i >= 0
} else := -1

docker_split(ref) := ["docker.io", concat("/", ["library", ref])] if {
	not contains(ref, "/")
} else := [domain, remainder] if {
	i := indexof(ref, "/")
	first := substring(ref, 0, i)
	rest := substring(ref, i + 1, -1)
	first != "index.docker.io"
	is_split_domain(first)
	domain := first
	remainder := library_prefixed(domain, rest)
} else := ["docker.io", library_prefixed("docker.io", rest)] if {
	i := indexof(ref, "/")
	substring(ref, 0, i) == "index.docker.io"
	rest := substring(ref, i + 1, -1)
} else := ["docker.io", ref]

is_split_domain(first) if first == "localhost"

is_split_domain(first) if contains(first, ".")

is_split_domain(first) if contains(first, ":")

is_split_domain(first) if lower(first) != first

library_prefixed(domain, rest) := concat("/", ["library", rest]) if {
	domain == "docker.io"
	not contains(rest, "/")
} else := rest

# ---- tags ----

# The sources whose tag is mutable (mutable_tag): decided once per source for the rules that read it.
mutable_sources := [src | some src in sources; mutable_tag(src.ref)]

# The tag is mutable: "latest", no tag at all, or a floating tag (floating_tag), on a valid reference
# without a digest.
mutable_tag(ref) if {
	ref.valid
	not ref.pinned
	ref.tag in {"", "latest"}
}

mutable_tag(ref) if {
	ref.valid
	not ref.pinned
	maybe_floating(ref.tag)
	floating_tag(ref.tag)
}

# A first look that most tags fail ("1.4.2", "v0.6.3-cuda12"): neither the tag nor a word of it is one
# of the patterns, and none is a glob. Only a tag that passes is asked floating_tag, whose word
# matching and build-stamp tests cost the compiled VM about 9 µs a tag.
maybe_floating(_) if count(floating_globs) > 0

maybe_floating(tag) if lower(tag) in floating_literals

maybe_floating(tag) if {
	some w in tag_words(tag)
	lower(w) in floating_literals
}

# A tag floats when images.floating_tags (case-insensitive, globs allowed) matches the whole tag, or
# one of its words (the tag split at "-", "_" and "."): "latest-gpu", "nightly-py310", "v1.2-latest"
# and "main-latest" float; "latestversion" and "2.9.0-gpu" do not. A word match does not float when
# another word is a build stamp, a commit id or a date ("main-3f2a1b9", "nightly-20240601",
# "nightly-2024-06-01"): that tag names one build of the channel.
floating_tag(tag) := floating_word(tag) != ""

# What makes the tag float: the tag itself, the first floating word, or "".
floating_word(tag) := tag if {
	tag != ""
	floating(tag)
} else := word_match(tag)

# (an `else` chain without a bound value in a middle branch: the compiled VM's shape, see
# tests/policies/test_vm_differential.py). The build-stamp test runs only when a word floats: most tags
# have no floating word, and it is the costly part (regular expressions).
word_match(tag) := "" if {
	count(floating_words(tag)) == 0
} else := "" if {
	build_stamp(tag, tag_words(tag))
} else := floating_words(tag)[0]

floating_words(tag) := [w | some w in tag_words(tag); floating(w)]

# The words of a tag, split at "-", "_" and "." (regex.split(`[-_.]`, tag), without a regular
# expression).
tag_words(tag) := split(replace(replace(tag, "-", "."), "_", "."), ".")

# A pattern without glob metacharacters matches only its own text (lower-cased): a set lookup. The
# others go through glob.match.
floating(text) if lower(text) in floating_literals

floating(text) if {
	some pattern in floating_globs
	glob.match(pattern, null, lower(text))
}

# Both are computed per evaluation, with every tag. The literal set holds every pattern: a glob's
# text never equals a tag or a word of one (the tag grammar has no glob metacharacter), so no glob is
# looked for in it; the globs are picked only when one regular expression over all the patterns finds
# one (28 x 7 `contains` tests took the VM 60 µs per pod with a tagged image).
floating_literals := {lower(p) | some p in floating_patterns}

floating_globs := [lower(p) | some p in floating_patterns; glob_pattern(p)] if {
	any_glob_pattern
} else := []

any_glob_pattern if regex.match(glob_metacharacter, concat("", [p | some p in floating_patterns; is_string(p)]))

glob_pattern(p) if regex.match(glob_metacharacter, p)

# what makes a pattern a glob: a wildcard, a class, an alternative or an escape
glob_metacharacter := `[*?\[\]{}\\]`

floating_patterns := object.get(data.stockade.config, ["images", "floating_tags"], default_floating_tags)

# a commit id: 7 to 40 hex digits, with a digit and a letter
build_stamp(_, words) if {
	some word in words
	regex.match(`^[0-9a-f]{7,40}$`, word)
	regex.match(`[0-9]`, word)
	regex.match(`[a-f]`, word)
}

# a date: YYYYMMDD (optionally with the time), or YYYY-MM-DD
build_stamp(_, words) if {
	some word in words
	regex.match(`^(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])(?:[0-9]{2,6})?$`, word)
}

build_stamp(tag, _) if {
	regex.match(`(?:^|[-_.])(?:19|20)[0-9]{2}[-_.](?:0[1-9]|1[0-2])[-_.](?:0[1-9]|[12][0-9]|3[01])(?:$|[-_.])`, tag)
}

# Words that name a release channel wherever they stand in a tag. Not "alpha", "beta", "rc", "next"
# or "lts": they also mark fixed releases ("1.0.0-beta.1", "5.0.0-next.3", Jenkins' "2.440.1-lts");
# add them to images.floating_tags where they float.
default_floating_tags := [
	"latest", "nightly", "main", "master", "edge", "dev", "stable", "develop", "development", "canary",
	"snapshot", "unstable", "head", "current",
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
# Containers of all three lists, and image volumes (spec.volumes[].image, Kubernetes 1.31+). Only
# image references: a string outside the grammar is in invalid_sources instead.
# Arrays, not sets: a set of objects is kept sorted and deduplicated by deep comparison, which costs
# the VM more than the rules' own work on them; the entries are distinct by path anyway.
sources := [src | some src in named; src.ref.valid]

# Image fields whose text is not an image reference (a placeholder an operator or a template fills).
invalid_sources := [src | some src in named; not src.ref.valid]

named := array.concat(container_images, volume_images)

container_images := [src |
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
]

volume_images := [src |
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
]

pull_policy(obj, field, ref) := p if {
	p := obj[field]
	is_string(p)
	p != ""
} else := default_pull_policy(ref)

policy_set(obj, field) := true if {
	pods.is_set(obj, field)
} else := false
