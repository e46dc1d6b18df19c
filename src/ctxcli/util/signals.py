"""SIGTERM stops a load as Ctrl-C does.

CI cancellation, ``timeout`` and ``docker stop`` send SIGTERM to ctx alone (not to its worker
processes, as a Ctrl-C at a terminal reaches the whole process group). While
:func:`terminate_interrupts` is active, SIGTERM raises :class:`Terminated` — a
``KeyboardInterrupt``, so every clean-up a Ctrl-C runs (the worker pool stopped, the temporary
folder removed, a publishing transaction rolled back) runs too — and :func:`terminated` tells
the CLI to say "terminated" and exit 143 instead of 130. Forked workers get the default
SIGTERM back, so the parent's ``pool.terminate()`` ends them at once, without tracebacks.
Where Python swallows the exception (the handler ran inside a finalizer) the load still stops:
it checks (:func:`raise_if_terminated`) as it reports progress, before it publishes and at the
end of the block, and such a swallowed ``Terminated`` is not printed.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

_AT_FORK = False
_RECEIVED = False


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: stop as for Ctrl-C (exit 143)."""


def _on_term(signum, frame):
    global _RECEIVED
    _RECEIVED = True
    raise Terminated


def terminated() -> bool:
    """Whether SIGTERM stopped this process (the CLI's exit 143)."""
    return _RECEIVED


def raise_if_terminated() -> None:
    """Raise :class:`Terminated` again when SIGTERM came: the exception the handler raised can be
    swallowed where Python ignores exceptions (a finalizer, a callback: "Exception ignored
    in …"), so a load checks here before it publishes and as it reports progress."""
    if _RECEIVED:
        raise Terminated


def _default_term_in_child() -> None:
    if signal.getsignal(signal.SIGTERM) is _on_term:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def terminate_interrupts() -> Iterator[None]:
    """While the block runs (in the main thread), SIGTERM raises :class:`Terminated`; a forked
    child gets the default action back. Nested blocks are fine; the outer handler is restored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    global _AT_FORK
    if not _AT_FORK:            # a forked worker of the build keeps the default (dies at once)
        os.register_at_fork(after_in_child=_default_term_in_child)
        _AT_FORK = True

    try:
        old = signal.signal(signal.SIGTERM, _on_term)
    except (ValueError, OSError):       # no signals here (an embedded interpreter)
        yield
        return
    hook = sys.unraisablehook

    def quiet(unraisable) -> None:      # Terminated raised in a finalizer: said once, by the CLI
        if not isinstance(unraisable.exc_value, Terminated):
            hook(unraisable)

    sys.unraisablehook = quiet
    try:
        yield
        raise_if_terminated()           # a SIGTERM whose exception was swallowed still stops it
    finally:
        signal.signal(signal.SIGTERM, old)
        sys.unraisablehook = hook
