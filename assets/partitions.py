"""The domain partitioning shared by every per-domain asset, check and sensor."""

import warnings

import dagster as dg

# Partitioned asset checks are a preview feature in dagster 1.13; we rely on them on purpose
# (a check must validate the same domain partition its asset produced).
warnings.filterwarnings(
    "ignore", message="Specifying a partitions_def on an AssetCheckSpec", category=dg.PreviewWarning
)

DOMAIN_PARTITIONS_NAME = "domain"

domain_partitions = dg.DynamicPartitionsDefinition(name=DOMAIN_PARTITIONS_NAME)
