"""Dataset splits: near-duplicate removal, split assignment, contamination and Appendix H audits, env lock.

Modules: `minhash` (shingles, MinHash, LSH, dedup), `structure` (tool-sequence signatures, edges),
`contamination` (benchmark files, `BenchmarkIndex`, audit), `assign` (splits), `overlap`
(Appendix H), `envlock`, `publish` (all-or-nothing file release), `build` (the dataset_splits core).

Reverse filter for synthesis/judging (new data must not drift into a benchmark):

    from factory.splits.contamination import BenchmarkIndex
    from factory.splits.structure import key_tools_of_inventories

    index = BenchmarkIndex.load(
        cfg.splits.benchmarks, cfg.splits, key_tools=key_tools_of_inventories(inventories), base_dir=cfg.project_dir
    )
    index.collisions(query, tools=None)   # or index.collisions_for_task(task): [] when clean
"""
