"""stockade.policies decides: the Rego library, the engine, the shared model, config and facts.

It imports no other part of stockade, so every gate (scan, admission, audit) decides the same way.
"""
