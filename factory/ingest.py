"""Tool ingestion stages: inventory, probes and the global catalog (pure core).

Each stage returns `(value, metadata)`; the Dagster assets in `assets/` only
unpack context, call these and report.
"""

import asyncio
import hashlib
import logging
import math
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from jsonschema.exceptions import SchemaError
from jsonschema.validators import Draft202012Validator

from factory.config import DomainConfig, ProjectConfig
from factory.io import Store, StoreError, data_store, dumps
from factory.llm.client import ModelClient
from factory.report import Markdown, bar_plot, counts, md_table, rate
from factory.semtypes import TypesFileError, ValueTypes, infer_types, load_overrides
from factory.tools.argvalues import Candidate, ProbePlanner, ValuePool, coerce, no_success_reasons, param_kind
from factory.tools.fingerprint import fingerprint_by_platform, surface_fingerprint
from factory.tools.observed import observe_schemas, observed_metadata
from factory.tools.outcomes import OUTCOME_CLASSES, CallResult, Outcome
from factory.tools.provenance import source_provenance
from factory.tools.registry import ToolRegistry, executor_factory
from factory.tools.safety import call_writes_first, empty_reads_to_repeat, refusal
from factory.tools.sources import load_domain_tools
from factory.tools.spec import ToolSpec

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- inventory


def schema_problem(schema: Any, *, object_required: bool) -> str:
    """Why `schema` is not a valid JSON Schema 2020-12 (an object schema when `object_required`),
    naming the keyword and where it is; "" when it is valid."""
    if not isinstance(schema, dict):
        return f"the schema is a {type(schema).__name__}, not an object"
    if object_required and schema.get("type", "object") != "object":
        return f"an input schema must have type 'object', not {schema.get('type')!r}"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as e:
        where = "/".join(str(p) for p in e.path) or "(root)"
        return f"at {where}: {e.message}"
    return ""


def _schema_ok(schema: dict[str, Any], *, object_required: bool) -> bool:
    return not schema_problem(schema, object_required=object_required)


def inventory_frame(inventory: dict[str, Any]) -> pd.DataFrame:
    """One row per tool, the shape the tool_inventory suite validates."""
    rows = []
    for t in inventory["tools"]:
        in_problem = schema_problem(t.get("input_schema"), object_required=True)
        out_problem = schema_problem(t.get("output_schema") or {}, object_required=False)
        rows.append(
            {
                "name": t["name"],
                "platform": t["platform"],
                "description": t.get("description") or "",
                "input_schema_valid": not in_problem,
                "input_schema_error": in_problem,
                "output_schema_valid": not out_problem,
                "output_schema_error": out_problem,
                "fingerprint": inventory.get("fingerprint"),
            }
        )
    columns = ["name", "platform", "description", "input_schema_valid", "input_schema_error"]
    return pd.DataFrame(rows, columns=[*columns, "output_schema_valid", "output_schema_error", "fingerprint"])


def build_inventory(domain: DomainConfig, cfg: ProjectConfig) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read every source of `domain` into ToolSpecs (raises SourceError naming the source)."""
    tools = load_domain_tools(domain, cfg)
    by_platform = fingerprint_by_platform(tools)
    inventory = {
        "domain": domain.name,
        "fingerprint": surface_fingerprint(tools),
        "platform_fingerprints": by_platform,
        "sources": [
            {
                "kind": s.kind,
                "platform": s.platform,
                "locator": s.locator,
                "provenance": source_provenance(s, cfg.demo, cfg.project_dir),
            }
            for s in domain.sources
        ],
        "tools": [t.model_dump(mode="json") for t in sorted(tools, key=lambda t: (t.platform, t.name))],
    }
    per_platform = counts(t.platform for t in tools)
    meta = {
        "tools": len(tools),
        "platforms": len(per_platform),
        "tools_per_platform": per_platform,
        "fingerprint": inventory["fingerprint"],
        "platform_fingerprints": by_platform,
        "key_acquisition_tools": sum(1 for t in tools if t.key_acquisition),
        "state_changing_tools": sum(1 for t in tools if t.state_changing),
        "paged_tools": sum(1 for t in tools if t.generic_params.page),
        "preview": md_table(
            [
                {
                    "platform": t.platform,
                    "tool": t.name,
                    "required": ", ".join(t.required_params),
                    "records": t.records_path or "(body)",
                    "description": t.description,
                }
                for t in tools
            ],
            limit=60,
        ),
    }
    return inventory, meta


# --------------------------------------------------------------------------- probes


def _sample_values(records: list[dict[str, Any]], per_field: int = 5) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for rec in records:
        for k, v in rec.items():
            if isinstance(v, dict | list):
                continue
            bucket = out.setdefault(k, [])
            if v not in bucket and len(bucket) < per_field:
                bucket.append(v)
    return out


def _probe_row(tool: ToolSpec, res: CallResult, round_no: int, attempt: int) -> dict[str, Any]:
    records = res.records
    if tool.key_acquisition:  # never keep a key, even redacted bodies are replaced
        records = [{k: "<KEY>" for k in r} for r in records]
    fields = sorted({k for r in records for k in r})
    return {
        "tool": tool.name,
        "platform": tool.platform,
        "round": round_no,
        "attempt": attempt,
        "args": res.args,
        "outcome": res.outcome.value,
        "outcome_group": res.outcome.group,
        "status_code": res.status_code,
        "detail": res.detail,
        "record_count": res.record_count,
        "total_count": res.total_count,
        "cardinality": {f: res.cardinality(f) for f in fields},
        "sample_values": _sample_values(records),
        "first_record": records[0] if records else None,
        "attempts": res.attempts,
        "elapsed_ms": round(res.elapsed_ms, 1),
        "call_digest": res.call_digest,
        "key_like_redacted": res.key_like_redacted,
    }


PROBE_CHECKPOINTS = "checkpoints/tool_probes"


def _probe_checkpoint_key(tools: list[ToolSpec], cfg: ProjectConfig) -> str:
    """Probes resume only for the same tools, seed and probe/executor settings."""
    payload = {
        "surface": surface_fingerprint(tools),
        "seed": cfg.seed,
        "probes": cfg.probes.model_dump(mode="json"),
        "executor": cfg.executor.model_dump(mode="json"),
    }
    return hashlib.sha256(dumps(payload).encode()).hexdigest()


def _probe_types(
    every: list[ToolSpec], rows: list[dict[str, Any]], domain: DomainConfig, cfg: ProjectConfig
) -> ValueTypes:
    """Value types of the domain's tools from the probe rows so far (and its reviewed types file)."""
    overrides = None
    try:
        path = cfg.types_file(domain.name)
        overrides = load_overrides(path) if path else None
        inf = infer_types({t.tool_id: t for t in every}, {domain.name: {"rows": rows}}, overrides)
    except TypesFileError as e:  # the tool_lexicon stage reports it; probes go on by names alone
        log.warning("probes of %s: value types without the reviewed file: %s", domain.name, e)
        inf = infer_types({t.tool_id: t for t in every}, {domain.name: {"rows": rows}})
    return ValueTypes({tid: inf.tool_types(tid) for tid in inf.entities}, inf.parents)


def _model_inputs(tools: list[ToolSpec], pool: ValuePool, types: ValueTypes) -> list[Any]:
    from factory.llm.schemas import SourceArgumentsInput, ToolBrief

    out = []
    for t in tools:
        known: dict[str, list[Any]] = {}
        for p, schema in t.params.items():
            if p in t.generic_params.names():
                continue
            vals = [
                v
                for v in pool.lookup(p, schema, tool=t, types=types, kind=param_kind(t, p, schema))
                if isinstance(v, str | int | float | bool)
            ]
            if vals:
                known[p] = vals[:10]
        out.append(SourceArgumentsInput(tool=ToolBrief.from_spec(t), known_values=known))
    return out


def _model_candidates(tool: ToolSpec, result: Any) -> dict[str, list[Candidate]]:
    """The role's proposal as typed candidates (a value its input does not take is dropped)."""
    out: dict[str, list[Candidate]] = {}
    if getattr(result, "fallback", False):  # the rules' stand-in repeats values argvalues already had
        return out
    args = getattr(getattr(result, "output", None), "args", None) or {}
    for p, v in args.items():
        schema = tool.params.get(p)
        if schema is None or p in tool.generic_params.names():
            continue
        ok, cv = coerce(v, schema, param_kind(tool, p, schema))
        if ok:
            out[p] = [Candidate(cv, "model")]
    return out


async def _repeat_empty_reads(
    ex: Any, rows: list[dict[str, Any]], tools: list[ToolSpec], round_no: int, progress: Callable[[str], None]
) -> list[tuple[ToolSpec, CallResult, dict[str, Any]]]:
    """(tool, result, row) of reads repeated once because this round created data they answered empty
    without (`safety.empty_reads_to_repeat`: read_graph before create_entities); rows carry
    ``repeat_of_round``."""
    again = empty_reads_to_repeat(rows, {t.name: t for t in tools}, round_no)
    if not again:
        return []
    progress(f"probe round {round_no}: data was created, {len(again)} empty read(s) repeated")
    attempts = {t.name: max((r["attempt"] for r in rows if r["tool"] == t.name), default=-1) for t, _ in again}
    out = []
    for (t, _a), res in zip(again, await ex.call_many(again, episodes=True), strict=True):
        attempts[t.name] += 1
        out.append((t, res, {**_probe_row(t, res, round_no, attempts[t.name]), "repeat_of_round": round_no}))
    return out


def _texts(records: list[dict[str, Any]]) -> list[str]:
    """The text values of a result's records (where a tool reports an error for one of several inputs)."""
    return [v for r in records for v in r.values() if isinstance(v, str)]


async def _probe_async(
    tools: list[ToolSpec],
    cfg: ProjectConfig,
    domain: DomainConfig,
    progress: Callable[[str], None],
    store: Store | None = None,
    every: list[ToolSpec] | None = None,
    model: ModelClient | None = None,
) -> tuple[list[dict[str, Any]], list[str], dict[str, dict[str, int]], dict[str, Any]]:
    """Probe in rounds (`factory.tools.argvalues.ProbePlanner`): tools whose required inputs can be
    filled first, then, with what they returned, the rest; a last round with generated values.
    Where `model` serves `source_arguments` with a model, it proposes arguments for the tools still
    without a success, in one more round.

    After every round the state (rows, value pool, RNG, planner) is checkpointed under
    `<data_dir>/checkpoints/tool_probes/<domain>.json`; a re-run after a crash resumes after
    the last finished round instead of executing those calls again.
    """
    rng = random.Random(cfg.seed)
    pool = ValuePool()
    rows: list[dict[str, Any]] = []
    planner = ProbePlanner(tools, max_rounds=4)
    every = every or tools
    first_round = 1
    rel = f"{PROBE_CHECKPOINTS}/{domain.name}.json"
    key = _probe_checkpoint_key(tools, cfg)
    if store is not None and store.exists(rel):
        try:
            ck = store.read_json(rel)
            if ck.get("key") == key:
                rows, pool = ck["rows"], ValuePool.from_json(ck["pool"])
                rng.setstate((ck["rng"][0], tuple(ck["rng"][1]), ck["rng"][2]))
                planner.restore(ck["planner"])
                first_round = ck["round"] + 1
                progress(f"resuming probes after round {ck['round']} ({len(rows)} probes already done)")
        except (StoreError, KeyError, TypeError, ValueError) as e:
            progress(f"ignoring unreadable probe checkpoint {rel}: {e}")
    use_model = model is not None and model.uses_model("source_arguments", domain.language)
    model_round = planner.max_rounds + 1
    try:
        async with executor_factory(cfg, [domain.name], ToolRegistry(tools))() as ex:
            for round_no in range(first_round, model_round + (1 if use_model else 0)):
                types = _probe_types(every, rows, domain, cfg)
                if round_no < model_round:
                    calls = planner.next_round(round_no, pool, rng, cfg.probes.per_tool, types)
                else:
                    calls = await _model_round(planner, tools, pool, rng, cfg.probes.per_tool, types, model)
                if calls:
                    progress(
                        f"probe round {round_no}: {len({t.name for t, _a, _s in calls})} tools, {len(calls)} calls"
                    )
                    results = await call_writes_first(ex, [(t, a) for t, a, _ in calls])  # creating calls first
                    attempts: dict[str, int] = {}
                    for r in rows:
                        attempts[r["tool"]] = max(attempts.get(r["tool"], -1), r["attempt"])
                    for (t, _a, sources), res in zip(calls, results, strict=True):
                        attempts[t.name] = attempts.get(t.name, -1) + 1
                        rows.append({**_probe_row(t, res, round_no, attempts[t.name]), "arg_sources": sources})
                        planner.record(t.name, res.outcome.is_success)
                        if res.ok and not t.key_acquisition:
                            pool.add_records(res.records, t.tool_id, res.args)
                        pool.note_path_call(t.name, res.args, res.ok, res.detail, _texts(res.records))
                    for t, res, row in await _repeat_empty_reads(ex, rows, tools, round_no, progress):
                        rows.append(row)  # reads that found an empty store before this round created data
                        planner.record(t.name, res.outcome.is_success)
                        if res.ok:
                            pool.add_records(res.records, t.tool_id, res.args)
                        pool.note_path_call(t.name, res.args, res.ok, res.detail, _texts(res.records))
                if store is not None:
                    state = rng.getstate()
                    store.write_json(
                        rel,
                        {
                            "key": key,
                            "round": round_no,
                            "rows": rows,
                            "pool": pool.to_json(),
                            "rng": [state[0], list(state[1]), state[2]],
                            "planner": planner.state(),
                        },
                    )
            secrets = list(ex.known_secrets())
            call_counts = ex.call_counts()
    finally:
        if use_model and model is not None:
            await model.aclose_loop()  # its clients belong to this event loop
    return rows, secrets, call_counts, {**planner.state(), "path_kinds": pool.input_path_kinds()}


async def _model_round(
    planner: ProbePlanner,
    tools: list[ToolSpec],
    pool: ValuePool,
    rng: random.Random,
    n: int,
    types: ValueTypes,
    model: Any,
) -> list[tuple[ToolSpec, dict[str, Any], dict[str, str]]]:
    """Calls with the `source_arguments` role's proposals for the tools still without a success."""
    from factory.tools.argvalues import probe_argument_plans

    todo = [t for t in tools if t.name not in planner.succeeded and not t.key_acquisition]
    if not todo:
        return []
    results = await model.amap("source_arguments", _model_inputs(todo, pool, types))
    calls = []
    for t, res in zip(todo, results, strict=True):
        extra = _model_candidates(t, res)
        if not extra:
            continue
        done = set(planner.tried.get(t.name, []))
        plans = [p for p in probe_argument_plans(t, pool, n, rng, types, extra=extra) if dumps(p[0]) not in done]
        # the model's values first: one call with every proposed value, the rest as planned
        proposal = {**(plans[0][0] if plans else {}), **{p: c[0].value for p, c in extra.items()}}
        sources = {**(plans[0][1] if plans else {}), **dict.fromkeys(extra, "model")}
        lacking = [p for p in t.required_params if p not in proposal and p != t.generic_params.key]
        if lacking or dumps(proposal) in done:
            continue
        calls.append((t, proposal, sources))
        planner.tried.setdefault(t.name, []).append(dumps(proposal))
        planner.unfilled.pop(t.name, None)
    return calls


def probes_frame(rows: list[dict[str, Any]], secrets: list[str] | None = None) -> pd.DataFrame:
    """Row-level frame for the tool_probes suite (secret_free checks every serialized row)."""
    secrets = [s for s in (secrets or []) if s]
    df = pd.DataFrame(
        [
            {
                "tool": r["tool"],
                "platform": r["platform"],
                "outcome": r["outcome"],
                "call_digest": r["call_digest"] or None,
                "secret_free": not any(s in dumps(r) for s in secrets),
            }
            for r in rows
        ],
        columns=["tool", "platform", "outcome", "call_digest", "secret_free"],
    )
    return df


def probes_by_tool_frame(
    rows: list[dict[str, Any]],
    tool_names: list[str],
    skipped: list[dict[str, Any]] | None = None,
    no_success: list[dict[str, Any]] | None = None,
) -> pd.DataFrame:
    """One row per probed tool (tools `skipped` as destructive are not counted)."""
    ok = {r["tool"] for r in rows if Outcome(r["outcome"]).is_success}
    left_out = {s["tool"] for s in skipped or []}
    tool_names = [n for n in tool_names if n not in left_out]
    unfilled = {r["tool"]: r["reason"] for r in no_success or [] if not r.get("calls")}
    failed: dict[str, list[str]] = {}
    for r in rows:
        if r["tool"] not in ok:
            failed.setdefault(r["tool"], []).append(r["outcome"])
    why = [
        ""
        if n in ok
        else ", ".join(f"{o} ×{k}" for o, k in counts(failed.get(n, [])).items())
        or (f"not probed: {unfilled[n]}" if n in unfilled else "not probed")
        for n in tool_names
    ]
    return pd.DataFrame(
        {"tool": tool_names, "has_success": [1.0 if n in ok else 0.0 for n in tool_names], "why": why},
        columns=["tool", "has_success", "why"],
    )


def run_probes(
    inventory: dict[str, Any],
    cfg: ProjectConfig,
    progress: Callable[[str], None] = log.info,
    model: ModelClient | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Execute a few real calls per tool; return probe rows and metadata.

    Destructive tools the project did not opt into (`factory.tools.safety.refusal`) are not
    called: they are listed under `skipped` with the reason and left out of the coverage gate.
    Arguments come from `factory.tools.argvalues` (and from the `source_arguments` role where
    `model` serves it with a model); `no_success` says per tool without a success why: "no value
    for X" (never called) or the outcome classes of its failures.
    """
    every = ToolRegistry.from_inventory(inventory).specs()
    skipped = [{"tool": t.name, "method": t.method, "reason": why} for t in every if (why := refusal(t, cfg))]
    tools = [t for t in every if t.name not in {s["tool"] for s in skipped}]
    if skipped:
        progress(f"not probing {len(skipped)} destructive tools: {', '.join(s['tool'] for s in skipped)}")
    domain = cfg.domain(inventory["domain"])
    store = data_store(cfg)
    rows, secrets, call_counts, plan = asyncio.run(
        _probe_async(tools, cfg, domain, progress, store, every=every, model=model)
    )
    store.delete(f"{PROBE_CHECKPOINTS}/{domain.name}.json")  # the asset's output now holds the rows
    names = [t.name for t in tools]
    ok = {r["tool"] for r in rows if Outcome(r["outcome"]).is_success}
    no_success = no_success_reasons(rows, names, plan["unfilled"], ok)
    value = {
        "domain": inventory["domain"],
        "fingerprint": inventory["fingerprint"],
        "rows": rows,
        "secret_free": bool(probes_frame(rows, secrets)["secret_free"].all()) if rows else True,
        "skipped": skipped,
        "no_success": no_success,
        "observed_schemas": observe_schemas(tools, rows),  # output fields inferred where none are declared
        "path_kinds": plan["path_kinds"],  # tool → path input → file | directory, as the probes showed
    }
    meta = probe_metadata(rows, names, call_counts, no_success)
    meta.update(observed_metadata(value["observed_schemas"]))
    meta["skipped_destructive_tools"] = len(skipped)
    meta["skipped_tools"] = md_table(skipped, limit=50) if skipped else Markdown("_none_")
    return value, meta


def probe_metadata(
    rows: list[dict[str, Any]],
    tool_names: list[str],
    call_counts: dict[str, dict[str, int]] | None = None,
    no_success: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Probe metadata; `call_counts` (`ToolExecutor.call_counts`) adds real requests and short-circuited
    calls, `no_success` (`argvalues.no_success_reasons`) the table of tools without a success and why."""
    outcome_counts = {o: 0 for o in OUTCOME_CLASSES}
    for r in rows:
        outcome_counts[r["outcome"]] += 1
    ok_tools = {r["tool"] for r in rows if Outcome(r["outcome"]).is_success}
    never_ok = [n for n in tool_names if n not in ok_tools]
    successes = sum(1 for r in rows if Outcome(r["outcome"]).is_success)
    preview_rows = [
        {
            "tool": r["tool"],
            "outcome": r["outcome"],
            "records": r["record_count"],
            "total": r["total_count"],
            "args": dumps({k: v for k, v in r["args"].items()}),
        }
        for r in rows
    ]
    key_like: dict[str, int] = {}
    for r in rows:
        if r.get("key_like_redacted"):
            key_like[r["tool"]] = key_like.get(r["tool"], 0) + r["key_like_redacted"]
    return {
        "probes": len(rows),
        "key_like_values_redacted": sum(key_like.values()),
        "key_like_values_by_tool": dict(sorted(key_like.items())),
        "tools_probed": len({r["tool"] for r in rows}),
        "tools_with_success": len(ok_tools),
        "tool_success_share": rate(len(ok_tools), len(tool_names)),
        "call_success_rate": rate(successes, len(rows)),
        "outcome_counts": outcome_counts,
        "tools_without_success": (
            md_table(no_success, limit=60) if no_success else Markdown(", ".join(never_ok) or "_none_")
        ),
        "tools_without_value": sum(1 for r in no_success or [] if r["calls"] == 0),
        "value_sources_of_successes": _value_sources(rows),
        "max_total_count": max((r["total_count"] or 0 for r in rows), default=0),
        **_request_metadata(call_counts or {}),
        "outcomes_plot": bar_plot({k: v for k, v in outcome_counts.items() if v}, title="probe outcomes"),
        "preview": md_table(preview_rows, limit=25),
    }


def _value_sources(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Where the argument values of successful probes came from (schema, description, observed, ...)."""
    out: dict[str, int] = {}
    for r in rows:
        if Outcome(r["outcome"]).is_success:
            for src in (r.get("arg_sources") or {}).values():
                out[src] = out.get(src, 0) + 1
    return dict(sorted(out.items()))


def _request_metadata(call_counts: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Requests really sent and calls answered without one (open breaker, Retry-After beyond the ceiling)."""
    busiest = sorted(call_counts.items(), key=lambda kv: (-kv[1]["requests"], kv[0]))
    return {
        "requests_sent": sum(c["requests"] for c in call_counts.values()),
        "calls_short_circuited": sum(c["short_circuited"] for c in call_counts.values()),
        "requests_by_tool": md_table(
            [{"tool": name, **c} for name, c in busiest if c["requests"] or c["short_circuited"]], limit=25
        ),
    }


# --------------------------------------------------------------------------- catalog


def signature_text(t: dict[str, Any]) -> str:
    """The text embedded for a tool: name, description, inputs and outputs."""
    params = ", ".join(
        f"{p} ({s.get('type', 'any')}): {s.get('description', '')}".strip()
        for p, s in (t.get("input_schema", {}).get("properties") or {}).items()
    )
    outs = ", ".join(f"{n} ({f.get('type', 'any')})" for n, f in (t.get("output_fields") or {}).items())
    name = t["name"].replace("_", " ")
    return f"{name}. {t.get('description', '')} Inputs: {params or 'none'}. Outputs: {outs or 'none'}."


def build_catalog(
    inventories: dict[str, dict[str, Any]], embed: Callable[[list[str]], np.ndarray]
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Union of the domains' inventories with one signature embedding per tool."""
    rows = []
    for domain in sorted(inventories):
        inv = inventories[domain]
        for t in inv["tools"]:
            rows.append(
                {
                    "tool_id": f"{domain}/{t['platform']}/{t['name']}",
                    "domain": domain,
                    "platform": t["platform"],
                    "name": t["name"],
                    "signature": signature_text(t),
                    "fingerprint": inv["platform_fingerprints"].get(t["platform"], ""),
                }
            )
    df = pd.DataFrame(rows, columns=["tool_id", "domain", "platform", "name", "signature", "fingerprint"])
    vecs = embed(df["signature"].tolist()) if len(df) else np.zeros((0, 0), dtype=np.float32)
    df["embedding"] = [v.astype(np.float32).tolist() for v in vecs]
    df["embedding_dim"] = [len(v) for v in df["embedding"]]
    df["embedding_finite"] = [bool(np.isfinite(v).all()) for v in vecs]
    df["embedding_nonzero"] = [bool(np.linalg.norm(v) > 0) for v in vecs]
    sims = _nearest_similarities(vecs)
    meta = {
        "tools": len(df),
        "domains": df["domain"].nunique() if len(df) else 0,
        "platforms": df["platform"].nunique() if len(df) else 0,
        "embedding_dim": int(vecs.shape[1]) if len(df) else 0,
        "tools_per_domain": counts(df["domain"]) if len(df) else {},
        "nearest_neighbour_similarity_p50": _pct(sims, 50),
        "nearest_neighbour_similarity_p90": _pct(sims, 90),
        "preview": md_table(df[["tool_id", "signature"]].to_dict("records"), limit=15),
    }
    return df, meta


def _nearest_similarities(vecs: np.ndarray) -> list[float]:
    if len(vecs) < 2:
        return []
    v = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    sim = v @ v.T
    np.fill_diagonal(sim, -math.inf)
    return sim.max(axis=1).tolist()


def _pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 4) if values else 0.0
