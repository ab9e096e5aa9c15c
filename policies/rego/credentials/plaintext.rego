# METADATA
# title: Plaintext credential in a manifest
# description: >-
#   A credential written into a manifest is readable by everyone who can read the object (get on
#   Deployments or ConfigMaps is granted far more widely than get on Secrets), is kept in Git, in
#   Helm release history and in etcd unencrypted, and is copied by kubectl into the
#   last-applied-configuration annotation. Checked in workloads (every container's env, args and
#   command, every pod spec field, the pods' and the object's annotations), in ConfigMaps (data and
#   annotations), and in the custom resources no other rule reads (`@custom`: a TrainJob's trainer
#   env, an Argo CD Application's or a Flux HelmRelease's Helm values; scanned, since a webhook
#   cannot be registered for kinds it does not know); the last-applied-configuration annotation is
#   decoded and checked like the object.
#   Two kinds of evidence: a value in a credential's published format (Azure storage keys, SAS
#   signatures, Entra ID client secrets, AWS access key ids, GitHub, Hugging Face, OpenAI, Anthropic,
#   Slack and Google API keys, private keys, JSON Web Tokens, URLs with a password), or a value under a
#   credential's name (an env var or ConfigMap key whose last word is password, secret, token,
#   api_key, access_key, connection_string...; references such as $(VAR) or {{ .Values.x }}, paths,
#   placeholders, decimal numbers and booleans are not credentials; an env var under a credential's
#   name whose whole value is `$NAME` or `${NAME}`, not Kubernetes' `$(NAME)`, is filled in before
#   apply, by envsubst or Flux's substitution, and the applied object then holds the credential: it is
#   reported too). Names listed in
#   credentials.allowed_names (globs, case-insensitive) are never reported. ConfigMap values and env
#   var values that are configuration text are read inside: properties and .env (key=value), INI,
#   embedded YAML and JSON, password directives (redis requirepass, masterauth), Authorization
#   headers (nginx proxy_set_header), URLs with a password; digits under a credential's name are a
#   password. One finding per field, listing each credential inside by key or directive, format and
#   line. The finding names the field and the type of credential, never the value. Found by policies/facts/credentials.py
#   (input.facts.credentials), the same code in every gate.
# custom:
#   id: STK-CRED-001
#   severity: high
#   kinds: ["@workloads", ConfigMap, "@custom"]
#   triggers: ['"credentials"']
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
		"msg": sprintf("plaintext credential (%s) at %s%s", [concat(", ", entry.types), path_text(entry.path), inside_text(entry)]),
		"path": entry.path,
		"details": object.union({"types": entry.types}, found_details(entry)),
	}
}

deny contains v if {
	some entry in input.facts.credentials
	entry.inside != null
	not allowed(entry)
	v := {
		"msg": sprintf("plaintext credential (%s) in the %s annotation, at %s%s", [concat(", ", entry.types), last_applied, path_text(entry.inside), inside_text(entry)]),
		"path": entry.path,
		"details": object.union({"types": entry.types, "field": path_text(entry.inside)}, found_details(entry)),
	}
}

# What was found inside a configuration text (a ConfigMap value, an env var's value): the key or
# directive, its format and line; one finding per field, however many credentials it holds.
found(entry) := object.get(entry, "found", [])

found_details(entry) := {"found": found(entry)} if count(found(entry)) > 0

found_details(entry) := {} if count(found(entry)) == 0

inside_text(entry) := "" if count(found(entry)) == 0

inside_text(entry) := sprintf(": %s", [concat("; ", [describe(f) | some f in found(entry)])]) if count(found(entry)) > 0

describe(f) := sprintf("%s (%s, line %d)", [f.key, f.format, f.line]) if {
	is_string(f.key)
	is_number(f.line)
}

describe(f) := sprintf("%s (%s)", [f.key, f.format]) if {
	is_string(f.key)
	not is_number(f.line)
}

describe(f) := sprintf("line %d (%s)", [f.line, f.format]) if {
	not is_string(f.key)
	is_number(f.line)
}

describe(f) := sprintf("across lines (%s)", [f.format]) if {
	not is_string(f.key)
	not is_number(f.line)
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
