"""Reading manifests: bytes to objects exactly as Kubernetes reads them, with their positions.

Owns: :mod:`.decode` (the one YAML/JSON decoder, go-yaml v2 and sigs.k8s.io/yaml semantics, with its
alias, depth and size budgets), :mod:`.yamlpos` (documents with node positions, for `file:line`),
:mod:`.shape` (objects the API server would refuse for their field types) and :mod:`.schema` (the
field types :mod:`.shape` checks, generated from the Kubernetes API). Every command that reads YAML
(scan, config, policy directories, suites) reads it through here.

May import: :mod:`stockade.policies.model`, :mod:`stockade.policies.kinds`.
"""
