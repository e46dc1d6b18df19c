"""What an erasure rewrites in a pack (ledger/erasure.erase_pack, one walk shared with
masking): every string the erased object's text or title appears in, at any depth, except
the id and hash fields and the pack's own ids; the erased item's facts become "[erased]"
strings, numbers kept; another tenant's erasure of the same id applies to nothing."""

from __future__ import annotations

import copy

from ctxcli.ledger.erasure import ERASED, erase_pack

TEXT = "The rollback of PAY-4097 started at 10:07 and finished at 10:19."
PACK_ID = "sha256:" + "ab" * 32


def _pack() -> dict:
    return {
        "pack_id": PACK_ID, "content_hash": "sha256:" + "cd" * 32,
        "request": {"tenant_id": "acme", "case_id": "INC-7"},
        "evidence": [
            {"evidence_id": "E1", "object_id": "PAY-4097", "title": "PAY-4097", "text": TEXT,
             "facts": {"status": "done", "minutes": 12, "steps": ["stop", 2], "ok": True}},
            {"evidence_id": "E2", "object_id": "DEP-1", "title": "Deploy", "text": "PAY-4097 is mentioned here."},
        ],
        "omissions": [{"object_id": "PAY-4097", "title": "PAY-4097", "reason": "budget"}],
        "notes": [["deep", {"said": TEXT}], "see PAY-4097"],
        "links": {"ref": "PAY-4097", "object_id": "PAY-4097", "text": "PAY-4097"}, "seen_in": PACK_ID,
    }


def _erasure(tenant: str | None = "acme") -> dict:
    return {"object_id": "PAY-4097", "at": "2026-12-01T00:00:00Z", "by": "dpo", "reason": "request",
            "tenant_id": tenant}


def test_every_copy_is_rewritten_at_any_depth_but_ids_hashes_and_other_objects_evidence_are_kept():
    pack, removed = erase_pack(_pack(), [_erasure()], "2026-12-02T00:00:00Z")
    assert removed[0] == TEXT and "PAY-4097" in removed
    e1, e2 = pack["evidence"]
    assert (e1["object_id"], e1["evidence_id"], e1["text"], e1["title"]) == ("PAY-4097", "E1", "", ERASED)
    # the erased item's facts: strings erased at any depth, numbers and booleans kept
    assert e1["facts"] == {"status": ERASED, "minutes": 12, "steps": [ERASED, 2], "ok": True}
    # another object's evidence is its own: a phrase it shares with the erased one stays
    assert e2["text"] == "PAY-4097 is mentioned here."
    assert pack["notes"] == [["deep", {"said": ERASED}], f"see {ERASED}"]
    assert pack["omissions"] == [{"object_id": "PAY-4097", "title": ERASED, "reason": "budget"}]
    # id fields and the pack's own id keep their value
    assert pack["links"] == {"ref": "PAY-4097", "object_id": "PAY-4097", "text": ERASED}
    assert (pack["request"]["case_id"], pack["seen_in"]) == ("INC-7", PACK_ID)


def test_a_string_equal_to_the_packs_id_is_kept_though_an_erased_title_occurs_in_it():
    p = _pack()
    p["evidence"][0]["title"] = "abab"         # occurs in the pack id's hex digits
    pack, _ = erase_pack(p, [_erasure()], "2026-12-02T00:00:00Z")
    assert pack["seen_in"] == PACK_ID
    assert pack["evidence"][0]["title"] == ERASED


def test_another_tenants_erasure_of_the_same_id_changes_nothing():
    before = _pack()
    pack, removed = erase_pack(copy.deepcopy(before), [_erasure("globex")], "2026-12-02T00:00:00Z")
    assert (pack, removed) == (before, [])
