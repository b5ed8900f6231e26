"""The engine process: wiring of informers, queue, cache, scheduling loop and leadership."""

from corral.scheduler.engine.app import Engine, EngineOptions

__all__ = ["Engine", "EngineOptions"]
