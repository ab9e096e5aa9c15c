"""stockade admission."""
