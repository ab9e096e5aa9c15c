"""Policy frameworks other tools define, run on stockade's runtimes like its own rules.

Owns: :mod:`.gatekeeper` (ConstraintTemplates and constraints, Rego and K8sNativeValidation CEL),
:mod:`.vap` (ValidatingAdmissionPolicy and its bindings, as the API server evaluates them),
:mod:`.verify` (gator suites) and :mod:`.verify_vap` (Kyverno-CLI style VAP suites), and
:mod:`.common` (what they share: reading the policy directories, label selectors).

May import: :mod:`stockade.policies.model`, :mod:`stockade.policies.kinds`,
:mod:`stockade.policies.decoding`, :mod:`stockade.policies.runtimes`, and :mod:`stockade.policies.facts`
(a VAP's ``authorizer`` is answered from the RBAC facts).
"""
