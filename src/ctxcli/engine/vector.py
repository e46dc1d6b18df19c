"""The vector channel: the query text's vector, then exact cosine search inside the tenant
(the store's ``vector`` call; store/duckdb_vector.py holds the DuckDB statement).

The query vector is made by the installed pinned model, which must be the one the store's
vectors were made with (meta ``embedding_weights_sha256``); otherwise :class:`EmbeddingError`
(exit 3): ranking by vectors of two different models would be meaningless.
"""

from __future__ import annotations

from ..errors import EmbeddingError
from ..store.access import Readable
from ..store.base import Found
from .plan import Query


def query_model(store):
    """The installed model, checked against the one the store's vectors were made with."""
    from ..embed import load_model

    model = load_model()
    stored = store.meta().get("embedding_weights_sha256")
    if stored is None:
        store.vector([], tenant="", readable=Readable((), "", ()), as_of_us=0)     # a backend without vectors says so
        raise EmbeddingError(f"the store {store.address} holds no vectors; rebuild it with `ctx load --vectors` "
                             f"(or set `vectors: true` in a playbook)")
    if stored != model.weights_sha256:
        raise EmbeddingError(f"the store's vectors were made with other embedding weights "
                             f"(sha256 {str(stored)[:12]}…, installed {model.weights_sha256[:12]}…); "
                             f"rebuild the store with `ctx load`")
    return model


def vector_search(store, qs: list[Query], *, tenant: str, readable: Readable, as_of_us: int) -> Found:
    """Exact cosine top-``limit`` of each vector query among the tenant's readable records:
    hits (query index, doc id, score), each query's in rank order, and the withheld counts by
    query index. A query whose text has no token finds nothing."""
    model = query_model(store)
    asked, index = [], []
    for qi, q in enumerate(qs):
        vec = model.embed(q.text)
        if vec is not None:
            asked.append((q.evidence_type, list(q.object_types), int(q.limit), vec))
            index.append(qi)
    found = store.vector(asked, tenant=tenant, readable=readable, as_of_us=as_of_us)
    return Found([(index[i], doc, score) for i, doc, score in found.hits],
                 [(index[w[0]], *w[1:]) for w in found.withheld])
