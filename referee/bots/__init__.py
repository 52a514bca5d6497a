"""Built-in bots that search with the engine's rules: they need the tavolo distribution,
so they live here rather than in the SDK (``tavolo_bot``), which installs alone."""
