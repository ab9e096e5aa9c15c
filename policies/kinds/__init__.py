"""The kinds table: where each kind lives in the Kubernetes API and where its pod specs sit.

Owns: :mod:`.api` (group, version, plural, scope and pod-spec paths of every kind the library reads,
built-in and custom) and :mod:`.workloads` (the ``input.pod`` of any workload kind, including the
kinds a configuration declares). A gate that lists, watches or grants access to a kind, and a rule
area that reads a new kind, go through this table and nowhere else.

May import: :mod:`stockade.policies.model` only.
"""
