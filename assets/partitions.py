"""The domain partitioning shared by every per-domain asset, check and sensor."""

import dagster as dg

DOMAIN_PARTITIONS_NAME = "domain"

domain_partitions = dg.DynamicPartitionsDefinition(name=DOMAIN_PARTITIONS_NAME)
