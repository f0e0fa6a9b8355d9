"""The knowledge graph of observed values (entities) and relations, with provenance."""
