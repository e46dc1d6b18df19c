"""What the time-window channel's statements share on both backends (duckdb_store._WINDOW_SQL
and pg/reader._WINDOW): the event-time columns a playbook may name. The column name is chosen
from this fixed map, never taken from the playbook's text."""

from __future__ import annotations

TIME_COLUMNS = {"valid_from": "valid_from_us", "observed_at": "observed_us"}
