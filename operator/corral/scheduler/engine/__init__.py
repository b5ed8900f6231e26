"""The engine process: wiring of informers, queue, cache, scheduling loop and leadership
(:mod:`.app`); the profiles it runs (:mod:`.frameworks`); the same cycles over an in-memory
cluster (:mod:`.simulate`)."""
