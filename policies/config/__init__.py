"""Configuration: stockade.yaml, the one configuration every gate reads, and its waivers.

Owns: :mod:`.settings` (the pydantic model of stockade.yaml: allowlists, sandbox selectors, rule
settings, overrides, scope, workload kinds; errors name the key's path and line), :mod:`.patterns`
(the glob grammar every configured pattern is held to; registry prefixes) and :mod:`.waivers`
(which findings an exception covers; expired and unused exceptions; the `stockade.io/ignore-<RULE>`
suppression annotations and which gate honours them).

May import: :mod:`stockade.policies.model`, :mod:`stockade.policies.kinds`,
:mod:`stockade.policies.decoding`.
"""
