"""The policy languages' runtimes: regorus for Rego, cel-expr-python for CEL, and what serves them.

Owns: :mod:`.cel` (Kubernetes' CEL environment), :mod:`.rego_imports` and :mod:`.rego_rewrite`
(rewrites of Rego text before regorus compiles it), :mod:`.program_cache` (the compiled program kept
between runs) and :mod:`.errors` (one-line engine error messages without the input's values).
Nothing here knows about rules, frameworks or gates.

May import: :mod:`stockade.policies.model`.
"""
