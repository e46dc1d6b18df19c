"""Raw retrieval scores (issue 52 item 2): each evidence item's ``retrieval_scores`` and each
visible candidate's ``scores`` in the trace say what stood behind its channel ranks."""

from __future__ import annotations

import json

from ctxcli import api

NAMES = {"fulltext": "bm25", "vector": "cosine", "graph": "graph_hops", "window": "window_offset_s",
         "structured": "structured"}


def _inc():
    return api.investigate(api.InvestigateOptions(case="INC-2026-0723"))


def test_every_ranked_channel_has_its_raw_score_and_the_trace_says_the_same(store):
    res = _inc()
    shown = {e["ref"]: e.get("scores") for e in res.trace if e.get("event") == "candidate_retrieved"}
    assert res.pack["evidence"]
    for e in res.pack["evidence"]:
        s = e["retrieval_scores"]
        masked = "redacted]" in e["text"] + e["title"]        # the masks changed its text
        assert set(s) == {NAMES[ch] for ch in e["channels"]} - ({"bm25", "cosine"} if masked else set()), e["object_id"]
        assert list(s) == sorted(s)
        if "bm25" in s:
            assert s["bm25"] > 0 and s["bm25"] == round(s["bm25"], 6)
        if "graph_hops" in s:
            assert isinstance(s["graph_hops"], int) and 1 <= s["graph_hops"] <= 3
        if "structured" in s:
            assert s["structured"] == 1.0
        assert shown[e["object_id"]] == s
    rel = next(e for e in res.pack["evidence"] if e["object_id"] == "DEP-release-2026.07.23.1")
    assert rel["retrieval_scores"]["graph_hops"] == 2          # incident -> service -> release


def test_bm25_scores_follow_the_full_text_ranks_of_one_query(store):
    """Within one full-text query, a better rank never has a lower BM25 score (the score is the
    best over the item's full-text queries, so only items found by one such query are compared)."""
    res = _inc()
    ft = {q["query_id"] for r in res.pack["rounds"] for q in r["queries"] if q["channel"] == "fulltext"}
    by_q: dict[str, list[tuple[int, float]]] = {}
    for e in res.pack["evidence"]:
        mine = [q for q in e["queries"] if q in ft]
        if len(mine) == 1 and "bm25" in e["retrieval_scores"]:
            by_q.setdefault(mine[0], []).append((e["queries"][mine[0]], e["retrieval_scores"]["bm25"]))
    pairs = [sorted(v) for v in by_q.values() if len(v) >= 2]
    assert pairs
    for ranked in pairs:
        scores = [s for _, s in ranked]
        assert scores == sorted(scores, reverse=True), ranked


def test_a_masked_items_text_scores_are_not_shown(store, monkeypatch):
    """BM25 counts a document's length, masked text included; cosine is of its stored text: for a
    subject the masks apply to, neither is shown (ranks and the other scores are)."""
    from ctxcli.engine.retrieve import scores_shown

    raw = {"bm25": 12.5, "cosine": 0.8125, "graph_hops": 2, "structured": 1.0}
    assert scores_shown(raw, True) == {"graph_hops": 2, "structured": 1.0}
    assert scores_shown(raw, False) == raw
    res = _inc()
    masked = [e for e in res.pack["evidence"] if "redacted]" in e["text"]]
    assert [e["object_id"] for e in masked] == ["INC-2026-0723-NOTE-01"]
    for e in masked:
        assert "fulltext" in e["channels"] and "bm25" not in e["retrieval_scores"]
    line = [e for e in res.trace if e.get("event") == "candidate_retrieved" and e["ref"] == masked[0]["object_id"]]
    assert line and "bm25" not in line[0]["scores"]
    # masks on its facts only (a git e-mail) leave a runbook's text, and so its BM25 score, as stored
    rb = next(e for e in res.pack["evidence"] if e["object_id"] == "RB-PAY-RECOVERY-v4#overview")
    assert rb["transformations"][0]["kind"] == "redaction" and "bm25" in rb["retrieval_scores"]
    assert "bm25" in json.dumps([e["retrieval_scores"] for e in res.pack["evidence"] if e not in masked])


def test_fuse_keeps_the_best_raw_score_of_each_channel():
    """BM25 and cosine: the highest over the candidate's queries; graph hops and the window's
    distance: the nearest; only the channels that found it; rounded to 6 digits."""
    from ctxcli.engine.plan import Query
    from ctxcli.engine.retrieve import QueryRun, fuse

    def run(qid, ch, hits, detail):
        return QueryRun(Query(qid, ch, "t", 10), hits, detail)

    runs = [run("a", "fulltext", [1, 2], {1: {"score": 3.25}, 2: {"score": 1.0}}),
            run("b", "fulltext", [1], {1: {"score": 7.123456789}}),
            run("c", "vector", [1], {1: {"cosine": 0.5}}),
            run("d", "vector", [1], {1: {"cosine": 0.25}}),
            run("e", "graph", [2], {2: {"depth": 3, "template": "t"}}),
            run("f", "graph", [2], {2: {"depth": 1, "template": "t"}}),
            run("g", "window", [2], {2: {"event_time_us": 0, "offset_seconds": -120}}),
            run("h", "window", [2], {2: {"event_time_us": 0, "offset_seconds": 480}}),
            run("i", "structured", [2], {})]
    got = {c.doc_id: c.scores for c in fuse(runs)}
    assert got == {1: {"bm25": 7.123457, "cosine": 0.5},
                   2: {"bm25": 1.0, "graph_hops": 1, "structured": 1.0, "window_offset_s": 120}}
