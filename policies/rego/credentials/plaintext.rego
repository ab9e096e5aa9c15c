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
#   and the type of credential, never the value. Found by policies/facts/credentials.py
#   (input.facts.credentials), the same code in every gate.
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

import rego.v1

last_applied := "kubectl.kubernetes.io/last-applied-configuration"

allowed_names := object.get(data.stockade.config, ["credentials", "allowed_names"], [])

allowed(entry) if {
	is_string(entry.name)
	some pattern in allowed_names
	glob.match(lower(pattern), null, lower(entry.name))
}

deny contains v if {
	some entry in input.facts.credentials
	entry.inside == null
	not allowed(entry)
	v := {
		"msg": sprintf("plaintext credential (%s) at %s", [concat(", ", entry.types), path_text(entry.path)]),
		"path": entry.path,
		"details": {"types": entry.types},
	}
}

deny contains v if {
	some entry in input.facts.credentials
	entry.inside != null
	not allowed(entry)
	v := {
		"msg": sprintf("plaintext credential (%s) in the %s annotation, at %s", [concat(", ", entry.types), last_applied, path_text(entry.inside)]),
		"path": entry.path,
		"details": {"types": entry.types, "field": path_text(entry.inside)},
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
