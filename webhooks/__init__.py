"""stockade webhooks."""
