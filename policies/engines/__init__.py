"""Engines behind one interface: what evaluates an object's rule inputs into violations.

Owns: :mod:`.base` (the :class:`~.base.Engine` interface, :func:`~.base.evaluate_inputs`, and
:func:`~.base.build_engine`, which picks one), :mod:`.library` (the policy library: the bundled Rego,
the policy directories, their frameworks' rules), and one module per implementation:
:mod:`.embedded` (regorus in this process, with the frameworks' own engines), :mod:`.process` (the
embedded engine in a child process, with a deadline: the webhook's), :mod:`.opa` (a remote OPA
server). :mod:`.bundle` writes the OPA bundle the remote engine serves; :mod:`.testing` runs the
library's Rego unit tests.

May import: :mod:`stockade.policies.model`, :mod:`stockade.policies.kinds`,
:mod:`stockade.policies.decoding`, :mod:`stockade.policies.config`, :mod:`stockade.policies.runtimes`,
:mod:`stockade.policies.frameworks`.
"""
