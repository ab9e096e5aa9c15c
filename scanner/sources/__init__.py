"""Sources of resources: one module per kind of source, each an iterable of :data:`base.Item`."""
