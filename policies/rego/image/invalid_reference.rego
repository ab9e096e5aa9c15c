# METADATA
# title: Image field that is not an image reference
# description: >-
#   The image field holds text that the container runtime's reference grammar (distribution/reference,
#   which the kubelet calls) does not accept: a placeholder an operator or a template fills in
#   ("FILLED BY THE OPERATOR" in the DaemonSets an operator ships as assets, "$VLLM_IMAGE" or
#   "${IMAGE}" for envsubst, "ko://..." for ko, an unrendered "{{ .Values.image }}"), or a typo (an
#   upper-case repository, a space, a digest of the wrong length). As written it never runs: the kubelet
#   refuses it (InvalidImageName) before any pull. So the image rules do not judge it: no registry,
#   tag, digest or pull-policy finding describes a placeholder; this note says once that the field
#   was not checked, so that the rendered manifest (the one that is applied) gets scanned: one note per
#   pod spec, naming every container and image volume whose image field is not a reference. A pod an
#   Argo Workflows template runs is built by the workflow controller, which substitutes `{{...}}`
#   parameters first (Katib's trial controller `${trialParameters.x}`): such an image is decided when
#   the workflow or trial runs, and the note says that instead.
#   Severity info and action audit: reported, never failing a scan or rejecting a request.
# custom:
#   id: STK-IMG-005
#   severity: info
#   action: audit
#   kinds: ["@workloads"]
#   frameworks: [pod-best-practice]
#   remediation: >-
#     Scan the manifest as it is applied (after the operator, helm, kustomize, envsubst or ko fill the
#     image in), or write a valid reference: [registry[:port]/]path[:tag][@sha256:<64 hex>], with the
#     repository path in lower case.
package stockade.image.invalid_reference

import data.stockade.lib.images
import rego.v1

# One note per pod spec (issue 37): an operator's template holds the same placeholder in every
# container, and one note says the image fields were not checked; it names each of them.
found := sort([[src.path, src.what, src.name, src.image] | some src in images.invalid_sources; not parameter(src.image)])

# An image the controller that builds the pod fills in from a parameter before it creates it
# (input.pod.parameters: `mark`, what a parameter starts with, and `text`, what it is: Argo
# Workflows' `{{inputs.parameters.image}}`, Katib's `${trialParameters.image}`).
parameter(image) if {
	is_string(input.pod.parameters.mark)
	contains(image, input.pod.parameters.mark)
}

decided := sort([[src.path, src.what, src.name, src.image] | some src in images.invalid_sources; parameter(src.image)])

deny contains v if {
	count(decided) == 1
	[path, what, name, image] := decided[0]
	v := {
		"msg": sprintf(
			"%s %q image %q: %s: the image rules did not check it",
			[what, name, image, input.pod.parameters.text],
		),
		"path": path,
		"details": {"image": image},
	}
}

deny contains v if {
	count(decided) > 1
	fields := [sprintf("%s %q image %q", [what, name, image]) | some [_, what, name, image] in decided]
	v := {
		"msg": sprintf(
			"%s: each %s: the image rules did not check them",
			[concat("; ", fields), input.pod.parameters.text],
		),
		"path": decided[0][0],
		"details": {"image": decided[0][3], "fields": [{"path": path, "image": image} | some [path, _, _, image] in decided]},
	}
}

deny contains v if {
	count(found) == 1
	[path, what, name, image] := found[0]
	v := {
		"msg": sprintf(
			"%s %q image %q is not an image reference (a placeholder?): the image rules did not check it, and the kubelet would refuse it (InvalidImageName)",
			[what, name, image],
		),
		"path": path,
		"details": {"image": image},
	}
}

deny contains v if {
	count(found) > 1
	texts := sort({image | some [_, _, _, image] in found})
	groups := [sprintf("%q in %s", [image, concat(", ", [sprintf("%s %q", [what, name]) | some [_, what, name, img] in found; img == image])]) | some image in texts]
	v := {
		"msg": sprintf(
			"%d image fields are not image references (placeholders?): %s; the image rules did not check them, and the kubelet would refuse them (InvalidImageName)",
			[count(found), concat("; ", groups)],
		),
		"path": found[0][0],
		"details": {"image": found[0][3], "fields": [{"path": path, "image": image} | some [path, _, _, image] in found]},
	}
}
