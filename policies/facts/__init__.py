"""Analyzers: cross-object knowledge computed once in Python and handed to rules as `input.facts`."""
