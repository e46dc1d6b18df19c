"""ctx as an MCP server (``ctx serve``): governed context for agents, one tool call per step.

Layering: this package calls only the library API (:mod:`ctxcli.api`, :mod:`ctxcli.postmortem`);
the engine never imports it. The subject, its scopes and its purpose are fixed by the server's
configuration (:class:`ServeConfig`), never by tool arguments, so a prompt-injected agent cannot
widen its own access.
"""

from .config import ServeConfig, load_config

__all__ = ["ServeConfig", "load_config"]
