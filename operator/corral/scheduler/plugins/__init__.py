"""In-tree plugins: one small module per plugin (``NAME``, an args dataclass, ``new``)."""
