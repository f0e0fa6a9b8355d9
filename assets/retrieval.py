"""Retrieval assets (issue 17): retrieval_corpus and retrieval_index, per domain, after the dataset
splits the index is decontaminated against (every domain's corpus first: cross-domain leakage needs
them all). The core is factory/retrieval/."""

import dagster as dg

from assets._meta import gate, gate_result, to_metadata
from assets.partitions import domain_partitions
from factory import quality
from factory.resources import ProjectResource, all_partitions_in
from factory.retrieval import corpus, index
from factory.versions import code_version

CORPUS_GROUP = "retrieval_corpus"  # sensors/jobs.py: domain_corpus, so every corpus exists before any index
GROUP = "retrieval"  # sensors/jobs.py: domain_retrieval, after global_dataset and domain_corpus


@dg.asset(
    partitions_def=domain_partitions,
    group_name=CORPUS_GROUP,
    code_version=code_version(corpus.build_corpus),
    kinds={"python"},
    description="The domain's document corpus: the files of `retrieval.sources` (md/html/txt/jsonl) or a demo "
    "corpus rendered from real data no demo API serves, chunked (paragraph-aligned, overlapping) with stable "
    "content-hash ids <domain>:<sha256> and their title, source, position, licence and language.",
)
def retrieval_corpus(context: dg.AssetExecutionContext, project: ProjectResource) -> dg.Output[dict]:
    cfg = project.load()
    domain = cfg.domain(context.partition_key)
    value, meta = corpus.build_corpus(domain.name, domain.retrieval, cfg)
    context.log.info(f"{domain.name}: {meta['documents']} documents, {meta['chunks']} chunks")
    return dg.Output(value, metadata=to_metadata(meta))


@dg.asset(
    partitions_def=domain_partitions,
    group_name=CORPUS_GROUP,
    code_version=code_version(index.build_index),
    kinds={"python", "lancedb"},
    description="The pre-synthesis version of the domain's retrieval index (issue 17): every chunk of the corpus, "
    "embedded with a BM25 index, in the same LanceDB table as retrieval_index. The search tool of the domain's "
    "inventory (a `{kind: retrieval}` source) pins this version, so synthesis can search before the splits "
    "exist; retrieval_index, decontaminated after the splits, keeps the gold passages of API+RAG tasks and "
    "replays their retrieval calls.",
)
def retrieval_synthesis_index(
    context: dg.AssetExecutionContext, project: ProjectResource, retrieval_corpus: dict
) -> dg.Output[dict]:
    cfg = project.load()
    domain = context.partition_key
    value, meta = index.build_index(domain, retrieval_corpus, {}, [], cfg, stage="synthesis")
    context.log.info(f"{domain}: synthesis index {meta.get('table')} v{meta.get('version')}, {meta['served']} chunks")
    return dg.Output(value, metadata=to_metadata(meta))


@dg.asset(
    partitions_def=domain_partitions,
    group_name=GROUP,
    code_version=code_version(index.build_index, resources=["expectations/retrieval_index.json"]),
    kinds={"python", "lancedb"},
    ins={
        "retrieval_corpus": all_partitions_in(),
        "dataset_splits": dg.AssetIn(),
        "judged_queries": all_partitions_in(),  # rule (b) drops, counted in the waterfall
    },
    description="The domain's decontaminated retrieval index: chunks that state an API-only task's answer or "
    "bridge value, near-duplicates of dev/test questions and cross-domain leaks removed (a verdict with a reason "
    "code each), and RAG-only tasks the APIs answer counted (rule (b), dropped in judged_queries); the rest embedded (MiniLM for English, multilingual-e5 for Korean) into a LanceDB table with a "
    "BM25 index and, from `retrieval.ann_min_rows` chunks, an ANN vector index (`retrieval.ann_index_type`; metadata "
    "ann_index / ann_index_type), hybrid search. The value pins the table version it wrote.",
)
def retrieval_index(
    context: dg.AssetExecutionContext,
    project: ProjectResource,
    retrieval_corpus: dict,
    dataset_splits: dict,
    judged_queries: dict,
) -> dg.Output[dict]:
    cfg = project.load()
    domain = context.partition_key
    if domain not in retrieval_corpus:
        raise dg.Failure(f"retrieval_corpus is not materialized for {domain!r}; materialize it first")
    tasks = index.published_tasks(dataset_splits, cfg)
    drops = (judged_queries.get(domain) or {}).get("rejected") or []
    value, meta = index.build_index(domain, retrieval_corpus[domain], retrieval_corpus, tasks, cfg, rag_drops=drops)
    context.log.info(
        f"{domain}: {meta['chunks']} chunks, {meta['served']} served, {meta.get('removed_total', 0)} removed "
        f"(table {meta.get('table')} v{meta.get('version')}, vector index: {meta.get('ann_index_type')})"
    )
    return dg.Output(value, metadata=to_metadata(meta))


@gate(
    asset=retrieval_index,
    partitions_def=domain_partitions,
    additional_ins={"retrieval_corpus": dg.AssetIn()},
    description="GX suite expectations/retrieval_index.json: every kept chunk is served with a vector of the "
    "index's dimension, no removed id is served by the pinned table version, every removal has a reason code.",
)
def retrieval_index_contract(
    project: ProjectResource, retrieval_index: dict, retrieval_corpus: dict
) -> dg.AssetCheckResult:
    cfg = project.load()
    frame = index.index_frame(retrieval_index, cfg, retrieval_corpus)
    return gate_result(quality.validate("retrieval_index", frame, cfg))


ASSETS = [retrieval_corpus, retrieval_synthesis_index, retrieval_index]
CHECKS = [retrieval_index_contract]
