"""stockade scanner."""
