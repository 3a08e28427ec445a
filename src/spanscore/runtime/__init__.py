"""Process plumbing: forked workers (``workers``), memory limits (``memory``) and optional
extras (``optional``). Nothing here knows about spans or scores."""
