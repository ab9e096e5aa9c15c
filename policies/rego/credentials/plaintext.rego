# METADATA
# title: Plaintext credential in a manifest
# description: >-
#   A credential written into a manifest is readable by everyone who can read the object (get on
#   Deployments or ConfigMaps is granted far more widely than get on Secrets), is kept in Git, in
#   Helm release history and in etcd unencrypted, and is copied by kubectl into the
#   last-applied-configuration annotation. Checked in workloads (every container's env, args and
#   command, every pod spec field, the pods' and the object's annotations) and in ConfigMaps (data and
#   annotations); the last-applied-configuration annotation is decoded and checked like the object.
#   Two kinds of evidence: a value in a credential's published format (Azure storage keys, SAS
#   signatures, Entra ID client secrets, AWS access key ids, GitHub, Hugging Face, OpenAI, Anthropic,
#   Slack and Google API keys, private keys, JSON Web Tokens, URLs with a password), or a value under a
#   credential's name (an env var or ConfigMap key whose last word is password, secret, token,
#   api_key, access_key, connection_string...; references such as $(VAR) or {{ .Values.x }}, paths,
#   placeholders, numbers and booleans are not credentials). Names listed in
#   credentials.allowed_names (globs, case-insensitive) are never reported. The finding names the field
#   and the type of credential, never the value.
# custom:
#   id: STK-CRED-001
#   severity: high
#   kinds: ["@workloads", ConfigMap]
#   frameworks: [NSA-CISA, secrets-best-practice]
#   remediation: >-
#     Rotate the credential first (it is exposed already), then move it into a Secret (or Azure Key
#     Vault through the Secrets Store CSI driver) and reference it with valueFrom.secretKeyRef or a
#     mounted volume; better, replace it with workload identity. Re-apply without the value, or remove
#     the last-applied-configuration annotation, which still holds it.
package stockade.credentials.plaintext

import data.stockade.lib.credentials
import data.stockade.lib.pods
import rego.v1

last_applied := "kubectl.kubernetes.io/last-applied-configuration"

annotations := object.get(object.get(input.object, "metadata", {}), "annotations", {})

# [path in the object, type]
found contains [array.concat(pods.spec_base, p), t] if {
	is_object(input.pod.spec)
	some [p, t] in credentials.found_in(input.pod.spec)
}

found contains [array.concat(pods.metadata_base, ["annotations", k]), t] if {
	is_object(input.pod.metadata)
	some k, v in object.get(input.pod.metadata, "annotations", {})
	k != last_applied
	some t in credentials.types_of(v)
}

found contains [["metadata", "annotations", k], t] if {
	some k, v in annotations
	k != last_applied
	some t in credentials.types_of(v)
}

found contains [["data", k], t] if {
	input.object.kind == "ConfigMap"
	some [p, t] in credentials.found_in(object.get(input.object, "data", {}))
	k := p[0]
}

found contains [["data", k], t] if {
	input.object.kind == "ConfigMap"
	some [[k], t] in credentials.named_keys(object.get(input.object, "data", {}))
}

deny contains v if {
	some path in {p | some [p, _] in found}
	types := sort({t | some [q, t] in found; q == path})
	v := {
		"msg": sprintf("plaintext credential (%s) at %s", [concat(", ", types), path_text(path)]),
		"path": path,
		"details": {"types": types},
	}
}

# The last-applied-configuration annotation: kubectl's copy of what was applied, decoded.
applied := json.unmarshal(annotations[last_applied]) if {
	is_string(annotations[last_applied])
	json.is_valid(annotations[last_applied])
}

applied_found contains [p, t] if {
	some [p, t] in credentials.found_in(applied)
}

applied_found contains [["data", k], t] if {
	applied.kind == "ConfigMap"
	some [[k], t] in credentials.named_keys(object.get(applied, "data", {}))
}

deny contains v if {
	some inner in {p | some [p, _] in applied_found}
	types := sort({t | some [q, t] in applied_found; q == inner})
	v := {
		"msg": sprintf("plaintext credential (%s) in the %s annotation, at %s", [concat(", ", types), last_applied, path_text(inner)]),
		"path": ["metadata", "annotations", last_applied],
		"details": {"types": types, "field": path_text(inner)},
	}
}

# The last-applied annotation is not JSON: it cannot be checked, and it may hold anything.
deny contains v if {
	is_string(annotations[last_applied])
	not json.is_valid(annotations[last_applied])
	some t in credentials.types_of(annotations[last_applied])
	v := {
		"msg": sprintf("plaintext credential (%s) in the %s annotation", [t, last_applied]),
		"path": ["metadata", "annotations", last_applied],
		"details": {"types": [t]},
	}
}

path_text(path) := concat("", [segment(i, x) | some i, x in path])

segment(_, x) := sprintf("[%d]", [x]) if is_number(x)

segment(0, x) := x if is_string(x)

segment(i, x) := sprintf(".%s", [x]) if {
	i > 0
	is_string(x)
	regex.match(`^[A-Za-z_][A-Za-z0-9_-]*$`, x)
}

segment(i, x) := sprintf("[%q]", [x]) if {
	i > 0
	is_string(x)
	not regex.match(`^[A-Za-z_][A-Za-z0-9_-]*$`, x)
}
