"""Multi-source retrieval (issue 17, after VAKRA §3): document corpora per domain, a decontaminated
hybrid (vector + BM25) index in LanceDB, and the index served as a tool.

- `corpus`: read the configured sources (md/html/txt/jsonl or a bundled demo corpus), chunk them
  with stable content-hash ids (`retrieval_corpus`).
- `demo_corpora`: the demo corpora, rendered from real data that no demo API serves.
- `embedding`: the embedding model per document language.
- `decontam`: the removal verdicts (reason codes) against the API tasks, held-out items and the
  other domains' corpora.
- `index`: the LanceDB table, hybrid search and the `retrieval_index` value.
"""
