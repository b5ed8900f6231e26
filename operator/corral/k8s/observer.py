"""What a client reports about each request it makes (client-go's ``tools/metrics`` hooks):
the engine and the operator turn it into ``rest_client_requests_total`` and
``rest_client_request_duration_seconds``.

Contract: ``requested`` is called once per request after its answer's status line (a watch:
when its stream opens), from the thread that made it, with the HTTP method, the server's
``host:port``, the status code (0 when no answer came: client-go's ``<error>``) and the
seconds since the request was sent. It must be cheap and must not raise.
"""

from __future__ import annotations

from typing import Final, Protocol

NO_ANSWER: Final = 0


class RequestObserver(Protocol):
    def requested(self, method: str, host: str, code: int, seconds: float) -> None: ...


def code_label(code: int) -> str:
    """client-go's ``code`` label: the status code, or ``<error>`` when none came."""
    return "<error>" if code == NO_ANSWER else str(code)
