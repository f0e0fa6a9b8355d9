"""EDGE Phase A: the skeleton graph, execution-grounded refinement into G*, posteriors and plans."""
