"""Governance rules that must hold on data nobody here wrote (issue 28): supersession as a
temporal rule, tenant-scoped pack metadata and drift, clearance-aware gap reasons, freshness
with the knowledge-time cut-off, and the second paths a mutation test found blind. Each test
here fails when the bug it names is planted (see tests/mutants.py)."""

from __future__ import annotations

import json

from ctxcli import api
from ctxcli.util.timeutil import parse_ts

from .conftest import run_cli


def _run(case="C-102", **kw):
    return api.investigate(api.InvestigateOptions(case=case, **kw))


# ------------------------------------------------------------------------------ freshness (item 6)
def test_a_source_is_not_fresh_because_of_observations_known_at_excludes(store):
    """claims-core's every object was observed on 2026-07-22 from 18:00: known at noon that day,
    nothing of it was known, so at as_of it has no snapshot — stale, not 17h 55m old."""
    fresh = {s["source_id"] for s in _run().pack["stale_sources"]}
    assert "claims-core" not in fresh
    res = _run(known_at=parse_ts("2026-07-22T12:00:00+08:00"))
    stale = {s["source_id"]: s for s in res.pack["stale_sources"]}
    assert stale["claims-core"] == {"source_id": "claims-core", "refresh_sla": "24h", "refresh_sla_s": 86400,
                                    "snapshot_observed_at": None, "age_s": None, "age": None}
    # claims-documents' newest observation before the cut-off is the same as without it
    assert stale["claims-documents"]["snapshot_observed_at"] == "2026-07-18T02:00:00+08:00"
    assert res.answer["stale_sources"] == res.pack["stale_sources"]
