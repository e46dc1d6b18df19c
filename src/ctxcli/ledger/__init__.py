"""The run ledger: one hash-chained record per investigate / ask / replay, an outbox of CloudEvents
written in the same step, idempotency keys, and erasures that reach run folders already written.

Files, beside the store (``.ctx/`` for the project's own store; the project's ``.ctx/`` for a team
store on PostgreSQL):

* ``ledger.jsonl`` — append-only, one canonical JSON record a line; each names the hash of the
  one before (``prev``) and its own (``hash``), so an edited or deleted record is found by
  ``ctx ledger verify`` (:mod:`.records`);
* ``outbox.jsonl`` — one CloudEvents 1.0 event a line, ``data`` = the ledger record (:mod:`.commit`);
* ``ledger.pending/`` — the journal of a run being committed: a run folder, its ledger record
  and its outbox event appear together or not at all (:mod:`.commit`);
* ``erasures.jsonl`` — the erasures recorded by ``ctx erase`` (:mod:`.erasure`).
"""
