"""The one module that renders prompt templates from `prompts/`.

Template names are paths under `prompts/` without the `.j2` suffix, e.g.
`edge_proposal/system.en`. `template_hash(name)` hashes the template file and
every template it includes or imports, so a change anywhere in a prompt changes
the hash; `prompts_version(names)` folds several hashes into one short string
for an asset's `code_version`.
"""

import hashlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta

from factory.paths import package_root

PROMPTS_DIR = package_root() / "prompts"
SUFFIX = ".j2"

_HANGUL_FIRST, _HANGUL_LAST = 0xAC00, 0xD7A3


def josa(word: Any, pair: str) -> str:
    """Attach the Korean particle that fits `word`'s last syllable: josa('서울', '은/는') → '서울은'.

    `pair` is 'with-final-consonant/without' (을/를, 은/는, 이/가, 과/와, 으로/로).
    A trailing digit is read as a Sino-Korean numeral (3 삼 → 을, 2 이 → 를); other
    non-Hangul endings take the second form.
    """
    text = str(word)
    with_final, _, without = pair.partition("/")
    last = text[-1:] if text else ""
    if last and _HANGUL_FIRST <= ord(last) <= _HANGUL_LAST:
        final = (ord(last) - _HANGUL_FIRST) % 28
        if with_final == "으로":  # ㄹ-final words take 로
            return text + (without if final in (0, 8) else with_final)
        return text + (with_final if final else without)
    if last.isdigit():
        # Sino-Korean readings: 0 영, 1 일, 3 삼, 6 육, 7 칠, 8 팔 end in a consonant (1, 7, 8 in ㄹ).
        if with_final == "으로":
            return text + (with_final if last in "036" else without)
        return text + (with_final if last in "013678" else without)
    return text + without


def _fmt_value(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list | tuple):
        return ", ".join(_fmt_value(v) for v in value)
    return str(value)


@cache
def environment(root: str = str(PROMPTS_DIR)) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(root),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["josa"] = josa
    env.filters["value"] = _fmt_value
    env.filters["tojson_compact"] = lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True)
    return env


def _file(name: str) -> Path:
    return PROMPTS_DIR / f"{name}{SUFFIX}"


def exists(name: str) -> bool:
    return _file(name).is_file()


def render(name: str, /, **context: Any) -> str:
    """Render template `name` (path under prompts/ without .j2) with `context`; strict about unknown names."""
    return environment().get_template(f"{name}{SUFFIX}").render(**context).strip()


def _referenced(name: str) -> set[str]:
    """`name` plus every template it includes/imports/extends, transitively."""
    env = environment()
    seen: set[str] = set()
    todo = [f"{name}{SUFFIX}"]
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        source = env.loader.get_source(env, t)[0]  # type: ignore[union-attr]
        for ref in jinja2.meta.find_referenced_templates(env.parse(source)):
            if ref:
                todo.append(ref)
    return seen


def template_hash(name: str) -> str:
    """sha256 (hex) of the template's bytes and those of the templates it references."""
    h = hashlib.sha256()
    for t in sorted(_referenced(name)):
        h.update(t.encode())
        h.update(b"\0")
        h.update((PROMPTS_DIR / t).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def template_hashes(names: Iterable[str]) -> dict[str, str]:
    """{name: 'sha256:<hex>'} for lineage records."""
    return {n: f"sha256:{template_hash(n)}" for n in sorted(set(names))}


def prompts_version(names: Iterable[str]) -> str:
    """A short, order-independent version string of several templates, for `code_version`."""
    h = hashlib.sha256()
    for n in sorted(set(names)):
        h.update(f"{n}={template_hash(n)}\n".encode())
    return h.hexdigest()[:16]


def list_templates() -> list[str]:
    """Every template name under prompts/."""
    return sorted(str(p.relative_to(PROMPTS_DIR))[: -len(SUFFIX)] for p in PROMPTS_DIR.rglob(f"*{SUFFIX}"))
