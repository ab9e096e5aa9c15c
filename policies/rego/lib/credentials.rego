# Plaintext credentials: what a string holds, decided without ever putting the string in a finding.
#
# Two kinds of evidence:
# - a value in a credential's published format (value_types): Azure storage keys and SAS signatures,
#   Entra ID client secrets, AWS access key ids, GitHub, Hugging Face, OpenAI, Anthropic, Slack and
#   Google API keys, private keys, JSON Web Tokens, URLs carrying a password. The formats are those
#   the issuers publish and the secret scanners (gitleaks, Trivy, Microsoft's security-utilities) use.
# - a value under a credential's name (sensitive_name): an env var or ConfigMap key named like
#   AZURE_CLIENT_SECRET, HF_TOKEN, dbPassword, with a value that is not a reference, a path or a
#   placeholder.
# Callers report the type names below and the field's path; the value never leaves this file.
package stockade.lib.credentials

import rego.v1

cfg := object.get(data.stockade.config, "credentials", {})

# [type, pattern]; a pattern matches anywhere in the string (RE2 syntax, as Go and Rust run it)
value_types := [
	["Azure storage account key", `AccountKey=[A-Za-z0-9+/]{86}==`],
	["Azure storage account key", `(^|[^A-Za-z0-9+/])[A-Za-z0-9+/]{76}\+ASt[A-Za-z0-9+/]{5}[AQgw]==`],
	["Azure SAS token", `(?i)(^|[?&;])sig=[0-9a-z/+%]{43,129}(=|%3d)`],
	["Entra ID client secret", `(^|[^A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[78]Q~[A-Za-z0-9_~.-]{31,34}($|[^A-Za-z0-9_~.-])`],
	["AWS access key id", `(^|[^A-Za-z0-9])(AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}($|[^A-Za-z0-9])`],
	["GitHub token", `(^|[^A-Za-z0-9_])(ghp|gho|ghu|ghs)_[0-9A-Za-z]{36}($|[^A-Za-z0-9_])`],
	["GitHub token", `(^|[^A-Za-z0-9_])ghr_[0-9A-Za-z]{36,76}($|[^A-Za-z0-9_])`],
	["GitHub token", `(^|[^A-Za-z0-9_])github_pat_[0-9A-Za-z_]{82}($|[^A-Za-z0-9_])`],
	["Hugging Face token", `(^|[^A-Za-z0-9_])(hf|api_org)_[A-Za-z0-9]{34,40}($|[^A-Za-z0-9_])`],
	["OpenAI API key", `(^|[^A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}`],
	["OpenAI API key", `(^|[^A-Za-z0-9_-])sk-(proj|svcacct|admin)-[A-Za-z0-9_-]{40,}`],
	["Anthropic API key", `(^|[^A-Za-z0-9_-])sk-ant-(api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}`],
	["Slack token", `(^|[^A-Za-z0-9])xox[abposre]-[0-9A-Za-z-]{10,}`],
	["Google API key", `(^|[^A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}($|[^A-Za-z0-9_-])`],
	["private key", `-{3,}\s*BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY( BLOCK)?\s*-{3,}`],
	# an Authorization header's value (a digit in it: "Bearer tokens are..." is prose)
	["bearer token", `(?i)(^|[^A-Za-z0-9])bearer\s+[A-Za-z0-9._~+/-]{3,}[0-9][A-Za-z0-9._~+/=-]*`],
	["JSON Web Token", `(^|[^A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`],
	["URL with a password", `(?i)[a-z][a-z0-9+.-]*://[^:@/\s"'$]+:[^:@/\s"'$({<]{3,}@[^\s"'/]+`],
]

# One cheap pass over each string first, on the formats' fixed parts (gitleaks' "keywords"): most
# strings hold none. (The alternation of the full patterns exceeds the engines' compiled-size limits.)
any_format := `AccountKey=|\+ASt|(?i:sig=)|Q~|AKIA|ASIA|ABIA|ACCA|A3T|gh[pousr]_|github_pat_|hf_|api_org_|sk-|xox|AIza|PRIVATE KEY|(?i:bearer)|eyJ|://[^/@\s]+:[^/@\s]+@`

# Published example and emulator values: documented, so no one's credential.
public_values := [
	"AKIAIOSFODNN7EXAMPLE",
	# the Azurite / storage emulator's well-known devstoreaccount1 key
	"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
]

# The credential types a string holds, by format.
types_of(value) := {t |
	is_string(value)
	regex.match(any_format, value)
	some [t, pattern] in value_types
	regex.match(pattern, value)
	not only_public(pattern, value)
}

only_public(pattern, value) if {
	found := regex.find_n(pattern, value, -1)
	count(found) > 0
	every f in found {
		some p in public_values
		contains(f, p)
	}
}

# Names of variables and keys that hold credentials: the last word of the name (snake, kebab,
# dotted or camelCase) is a credential word. AZURE_CLIENT_SECRET, HF_TOKEN, dbPassword,
# storage.account-key, AZURE_BATCH_KEY; not SECRET_NAME, TOKEN_TTL, PASSWORD_FILE, CACHE_KEY (a bare
# "key" names too many things that are not secrets).
name_words := `(password|passwd|pwd|passphrase|secret|client_?secret|secret_?key|secret_?access_?key|api_?key|apikey|access_?key|account_?key|storage_?key|private_?key|signing_?key|batch_?key|master_?key|shared_?key|encryption_?key|key_?content|jwt|bearer|token|auth_?token|access_?token|bearer_?token|refresh_?token|credential|credentials|connection_?string|conn_?str|sas_?token|sas_?url)`

sensitive_name(name) if {
	is_string(name)
	words := lower(regex.replace(name, `([a-z0-9])([A-Z])`, "${1}_${2}"))
	regex.match(sprintf(`^(.*[_.-])?%s$`, [name_words]), replace(words, "-", "_"))
	not allowed_name(name)
}

allowed_name(name) if {
	some pattern in object.get(cfg, "allowed_names", [])
	glob.match(lower(pattern), [], lower(name))
}

# A value that could be the credential itself: not empty, not a reference to one ($(VAR), ${VAR},
# a Helm or Go template), not a file path, not a placeholder (<token>), not a number or a boolean.
plausible(value) if {
	is_string(value)
	v := trim_space(value)
	count(v) >= 4
	not regex.match(`\$\(|\$\{|\{\{|^<[^>]*>$|^/|^file://|^[0-9.]+$`, v)
	not lower(v) in {"true", "false", "yes", "no", "null", "none", "changeit-in-secret"}
}

# [path, type] of every credential inside `value` (any decoded JSON), paths relative to it: strings in
# a credential's format, and {name, value} entries (env vars, parameters) under a credential's name.
found_in(value) := {[p, t] |
	walk(value, [p, v])
	is_string(v)
	some t in types_of(v)
} | {[array.concat(p, ["value"]), "value of a credential-named variable"] |
	walk(value, [p, v])
	is_object(v)
	sensitive_name(v.name)
	plausible(v.value)
}

# [path, type] of the entries of a string map (a ConfigMap's data) under a credential's name.
named_keys(map) := {[[k], "value under a credential-named key"] |
	is_object(map)
	some k, v in map
	sensitive_name(k)
	plausible(v)
}
