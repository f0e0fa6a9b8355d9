import dagster as dg

from sensors.partitions import make_domain_partitions_sensor, sync_domain_partitions


def test_sensor_adds_configured_domains_then_skips(tmp_path):
    with dg.instance_for_test() as instance:
        sensor = make_domain_partitions_sensor()
        res = sensor(dg.build_sensor_context(instance=instance))
        (req,) = res.dynamic_partitions_requests
        assert isinstance(req, dg.AddDynamicPartitionsRequest) and req.partition_keys == ["aviation", "music", "korea"]
        instance.add_dynamic_partitions("domain", req.partition_keys)
        again = sensor(dg.build_sensor_context(instance=instance))
        assert isinstance(again, dg.SkipReason)


def test_removed_domain_is_deleted_and_bad_config_is_skipped(tmp_path):
    cfg = tmp_path / "f.yaml"
    cfg.write_text("domains:\n  - name: music\n    sources: [{kind: openapi, spec: 'demo://chinook-catalog'}]\n")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("domain", ["aviation", "music"])
        res = make_domain_partitions_sensor(str(cfg))(dg.build_sensor_context(instance=instance))
        (req,) = res.dynamic_partitions_requests
        assert isinstance(req, dg.DeleteDynamicPartitionsRequest) and req.partition_keys == ["aviation"]
        assert sync_domain_partitions(instance, ["music"]) == ([], ["aviation"])
        assert instance.get_dynamic_partitions("domain") == ["music"]
        cfg.write_text("domains: []\n")
        skip = make_domain_partitions_sensor(str(cfg))(dg.build_sensor_context(instance=instance))
        assert isinstance(skip, dg.SkipReason) and "config invalid" in skip.skip_message
