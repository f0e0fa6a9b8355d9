"""API+RAG tasks (issue 17 item 4): a retrieval call and an API call chained through a passage value replay
to the stored answer against the real demo API and a LanceDB index; the cross-source helpers."""

import asyncio

import pytest

from factory.synthesis import multisource
from tests.retrieval.test_index import FakeEmbedder

NOTES = [
    "Album note: Let There Be Rock by AC/DC. The longest track is Whole Lotta Rosie (5 min 23 s).",
    "Album note: Big Ones by Aerosmith. The album sold 12 copies in 9 invoices.",
    "Jazz albums in the catalogue run longer than rock albums on average.",
]


def test_hop_weights_follow_vakra_and_states_is_word_bounded():
    # from one API call: VAKRA's 2- and 3-hop weights renormalized, whatever share the longer chains get
    w = multisource.hop_weights(0.1, multisource.BASE_HOP_TYPES)
    assert set(w) == set(multisource.BASE_HOP_TYPES) and abs(sum(w.values()) - 1) < 1e-9
    assert w["API-RAG-API"] == pytest.approx(0.3 / 0.9) and w["API-RAG"] == w["RAG-API"]
    assert multisource.states("sold 1,234 copies", 1234) and multisource.states("군포시의 인구", "군포시")
    assert not multisource.states("EWRX weather", "EWR") and not multisource.states("12.5 mm", 12)
    assert multisource.entity_like("Whole Lotta Rosie") and not multisource.entity_like("<KEY>")
    assert not multisource.entity_like("12345") and not multisource.entity_like("sha256:abc")
    assert multisource.about("Let There Be Rock (AC/DC)", "Let There Be Rock")
    assert not multisource.about("For Those About To Rock We Salute You (AC/DC)", "Rock")
    assert not multisource.about("EWRX weather 2013-01-05", "EWR") and multisource.about(
        "EWR weather 2013-01-05", "EWR"
    )


def _project(tmp_path):
    from factory.config import load_config
    from tests.conftest import write_config

    cfg = load_config(write_config(tmp_path, search_tools=True))
    music = cfg.domain("music").model_dump(mode="json", exclude_none=True)
    return load_config(write_config(tmp_path, domains=[music], search_tools=True))


def _world(cfg):
    """The demo service's music tools plus a search tool over NOTES (fake embedder), in one executor."""
    from factory.retrieval import corpus
    from factory.tools.sources import load_domain_tools

    docs = [corpus.Document(f"note {i}", t, f"src/{i}") for i, t in enumerate(NOTES)]
    value, chunks = open_synthesis_index(cfg, docs)
    return value, chunks, load_domain_tools(cfg.domain("music"), cfg)


def open_synthesis_index(cfg, docs):
    """The music domain's catalogue_notes synthesis index over `docs` (fake embedder), stored and opened for the
    search transport: (its value, its chunks)."""
    from factory.io import data_store, write_artifact
    from factory.retrieval import corpus, index
    from factory.tools.transports import retrieval as transport

    chunks = corpus.chunk_documents("music", docs, cfg.retrieval, licence="CC0", language="en")
    vc = {"domain": "music", "collection": "catalogue_notes", "chunks": chunks}
    value, _ = index.build_index("music", vc, {}, [], cfg, embedder=FakeEmbedder(), stage="synthesis")
    write_artifact(data_store(cfg), "retrieval_synthesis_index", "music", value)
    key = (value["uri"], value["table"], value["version"], value["model"])
    transport._OPEN[key] = index.RetrievalIndex(value["uri"], value["table"], value["version"], FakeEmbedder())
    return value, chunks


@pytest.mark.slow  # the demo service and a LanceDB table: ~80 s on the shared 2 cores
def test_retrieval_and_api_call_chained_through_a_passage_value_replay_to_the_stored_answer(tmp_path):
    from factory.demo.service import DemoService
    from factory.tools.executor import ToolExecutor

    cfg = _project(tmp_path)

    async def go(tools, chunks):
        gold = chunks[0]["id"]
        async with ToolExecutor(tools, cfg.executor) as ex:
            # synthesis: the search returns the note, the note states the track, the track is looked up by name
            found = await ex.call("search_catalogue_notes", {"query": "Let There Be Rock longest track", "k": 2})
            assert found.records[0]["id"] == gold
            assert multisource.states(found.records[0]["text"], "Whole Lotta Rosie")
            track = await ex.call("search_tracks", {"name": "Whole Lotta Rosie"})
            assert track.outcome.is_success and track.records, track.detail
            stored = track.records[0]["bytes"]
            task = {
                "golden_actions": [
                    {"step": 1, "tool": "search_catalogue_notes", "args": dict(found.args),
                     "source_type": "retrieval", "passage_ids": [gold]},
                    {"step": 2, "tool": "search_tracks", "args": {"name": "Whole Lotta Rosie"}, "source_type": "api"},
                ],
                "answer_spec": {"kind": "value", "field": "bytes", "calls": [{"step": 2, "index": 0}]},
                "answer": {"value": stored},
            }  # fmt: skip
            good = await multisource.replay(task, ex)
            # the same chain with the call that issues search_tracks' key (blind read s10: RAG→API chains to a keyed
            # tool had none): the key call comes first and the chain still replays to the stored answer
            key = await ex.call("get_chinook_catalog_key", {})
            row = {"step": 1, "tool": key.tool, "platform": key.platform, "args": {}, "source_type": "api",
                   "call_digest": key.call_digest}  # fmt: skip
            platformed = [{**a, "platform": key.platform if a["source_type"] == "api" else "notes"}
                          for a in task["golden_actions"]]  # fmt: skip
            actions, spec = multisource.with_key_calls(platformed, task["answer_spec"], {key.platform: row},
                                                       {"search_tracks"})  # fmt: skip
            keyed = await multisource.replay({**task, "golden_actions": actions, "answer_spec": spec}, ex)
            assert [a["tool"] for a in actions] == [
                "get_chinook_catalog_key",
                "search_catalogue_notes",
                "search_tracks",
            ]
            assert keyed == {"ok": True, "answer": stored, "problems": []}, keyed
            # planted defects: a passage the search no longer returns; an API argument no passage states
            gone = {**task, "golden_actions": [{**task["golden_actions"][0], "passage_ids": ["music:not-served"]},
                                               task["golden_actions"][1]]}  # fmt: skip
            unbound = {**task, "golden_actions": [task["golden_actions"][0],
                                                  {**task["golden_actions"][1], "args": {"name": "Go Down"}}]}  # fmt: skip
            return stored, good, await multisource.replay(gone, ex), await multisource.replay(unbound, ex)

    with DemoService(cfg.demo, log_dir=tmp_path / "logs"):
        _, chunks, tools = _world(cfg)
        names = {t.name for t in tools}
        assert "search_catalogue_notes" in names and "search_tracks" in names
        stored, good, gone, unbound = asyncio.run(go(tools, chunks))
    assert good == {"ok": True, "answer": stored, "problems": []}
    assert not gone["ok"] and "not returned" in gone["problems"][0]
    assert not unbound["ok"] and any("no argument is stated" in p for p in unbound["problems"])


def test_a_chain_to_a_keyed_tool_gets_the_key_call_first_and_its_steps_and_references_move_on():
    key = {"step": 1, "tool": "get_krgc_admin_key", "platform": "krgc-admin", "args": {}, "source_type": "api"}
    actions = [
        {"step": 1, "tool": "search_census_bulletins", "platform": "notes", "args": {"query": "서울"},
         "source_type": "retrieval", "passage_ids": ["p1"]},
        {"step": 2, "tool": "search_admin_sigungu", "platform": "krgc-admin",
         "args": {"sigunguNm": "송파구", "serviceKey": "<KEY>"}, "source_type": "api"},
    ]  # fmt: skip
    spec = {"kind": "value", "field": "admCd", "calls": [{"step": 2, "index": 0}]}
    got, moved = multisource.with_key_calls(actions, spec, {"krgc-admin": key}, {"search_admin_sigungu"})
    assert [(a["step"], a["tool"]) for a in got] == [
        (1, "get_krgc_admin_key"), (2, "search_census_bulletins"), (3, "search_admin_sigungu")
    ]  # fmt: skip
    assert moved["calls"] == [{"step": 3, "index": 0}] and spec["calls"] == [{"step": 2, "index": 0}]
    # a chain whose API tools take no key is left as it is; a keyed tool without its key call is an error
    same, kept = multisource.with_key_calls(actions, spec, {"krgc-admin": key}, set())
    assert same == actions and kept == spec
    with pytest.raises(KeyError):
        multisource.with_key_calls(actions, spec, {}, {"search_admin_sigungu"})


def test_cross_source_filter_keeps_only_answers_the_other_source_lacks():
    passages = [{"title": "Let There Be Rock (AC/DC)", "text": "The longest track is Whole Lotta Rosie (5 min 23 s)."}]
    # the API record's fields the passage does not state: the API hop is needed; the bridge, a field the passage
    # states and an internal key are never the answer; a public code the frame calls a display value may be
    rec = [{"track_id": 5, "name": "Whole Lotta Rosie", "composer": "AC/DC", "milliseconds": 323000}]
    assert multisource._answer_field(rec, passages, "Whole Lotta Rosie", "name") == ["milliseconds"]
    stated = [{"name": "Whole Lotta Rosie", "album_title": "Let There Be Rock"}]
    assert multisource._answer_field(stated, passages, "Whole Lotta Rosie", "name") == []
    region = [{"admCd": "26350", "admNm": "해운대구", "adm_key": "k-1"}]
    frame = {"fields": {"admCd": {"kind": "display"}, "adm_key": {"kind": "key"}}}
    assert multisource._answer_field(region, passages, "해운대구", "keyword", frame) == ["admCd"]
    assert multisource._answer_field([{**region[0], "adm_code": "x"}], passages, "해운대구", "keyword", frame) == [
        "admCd"
    ]
    # a field nearly every record shares (a track's price, lexicon `uniform`) says nothing of the record the
    # document picked (the longest track: blind read s10, 0.99 for any track)
    priced = [{**rec[0], "unit_price": 0.99}]
    assert multisource._answer_field(priced, passages, "Whole Lotta Rosie", "name") == ["milliseconds", "unit_price"]
    uniform = {"fields": {"unit_price": {"uniform": True}}}
    assert multisource._answer_field(priced, passages, "Whole Lotta Rosie", "name", uniform) == ["milliseconds"]


def test_first_hops_are_seeded_from_the_corpus_subjects_through_another_name_of_the_record():
    """An airport code observed in the probes whose bulletins the search finds (EWR) is looked up once; the record's
    other public code (its ICAO code) becomes a first hop that leads back to the bulletins, unless it spells the
    subject (KEWR spells EWR: blind read s12 en2 #4/#8, no hop); a code without documents (ICN) seeds nothing."""
    from pathlib import Path
    from types import SimpleNamespace as NS

    import numpy as np

    from factory.synthesis import rag_phrasing as rp

    root = Path(__file__).resolve().parents[2]
    ok = NS(is_success=True)

    def spec(name, param):
        return NS(name=name, generic_params=NS(names=lambda: ["api_key"]), required_params=[param],
                  input_schema={"properties": {param: {}, "api_key": {}}})  # fmt: skip

    by_iata, by_icao, search = spec("get_airport_by_iata", "iata"), spec("get_airport_by_icao", "icao"), NS(name="s")
    types = {"get_airport_by_iata": "airport.iata", "get_airport_by_icao": "airport.icao"}
    frames = {
        "get_airport_by_iata": {"params": {"iata": {"kind": "display"}},
                                "fields": {"icao": {"type": "airport.icao"}, "iata": {"type": "airport.iata"}}},
        "get_airport_by_icao": {"params": {"icao": {"kind": "display"}}, "fields": {}},
    }  # fmt: skip
    ctx = NS(
        passages=rp.load_passage_lexicon(root / "lexicon" / "passages" / "aviation.yaml"),
        known={("get_airport_by_iata", "iata"): {"EWR", "ICN"}},
        apis={"get_airport_by_iata": by_iata, "get_airport_by_icao": by_icao},
        frames=frames,
        tid=lambda n: n,
        types=NS(param_type=lambda tid, p: types[tid], accepts=lambda a, b: "equal" if a == b else None),
        base_args={"get_airport_by_iata": {"api_key": "<KEY>"}, "get_airport_by_icao": {"api_key": "<KEY>"}},
    )
    sent = []

    class Ex:
        async def call(self, s, args):
            sent.append((s.name, dict(args)))
            if s is search:
                code = args["query"].split()[0]
                titles = (
                    [f"{code} weather 2013-01-0{d}" for d in (1, 2)] if code == "EWR" else ["JFK weather 2013-01-01"]
                )
                return NS(outcome=ok, records=[{"id": t, "title": t} for t in titles])
            iata = args["iata"]
            return NS(outcome=ok, records=[{"iata": iata, "icao": icao if iata == "EWR" else "RKSI"}])

    icao = "KEWR"  # spells EWR: seeds nothing
    assert asyncio.run(multisource._seeded_calls(ctx, Ex(), search, np.random.default_rng(0), set())) == []
    icao, sent = "XEWQ", []  # another code of the record that does not spell it
    out = asyncio.run(multisource._seeded_calls(ctx, Ex(), search, np.random.default_rng(0), set()))
    assert [(c["tool"], c["args"]) for c in out] == [("get_airport_by_icao", {"api_key": "<KEY>", "icao": "XEWQ"})]
    assert out[0]["seeded_from"] == "get_airport_by_iata(EWR)"
    # ICN was searched (no bulletin about it) but never looked up
    assert ("get_airport_by_iata", {"api_key": "<KEY>", "iata": "ICN"}) not in sent
    assert ("s", {"query": "ICN weather", "k": multisource._DOCS_SEARCHED}) in sent


def test_a_district_a_kept_task_found_through_a_document_is_not_asked_again():
    """송파구 leads 서울특별시 in every census year (blind read s10: four tasks answered by it): a RAG→API hop whose
    name a kept task already looked up takes another fact of the passage (the smallest district), else it is a
    near-duplicate; a field no person asks of one record (`asked: false`: the 시도 code of a district) is never the
    answer."""
    from pathlib import Path
    from types import SimpleNamespace as NS

    import numpy as np

    from factory.retrieval.decontam import sentences
    from factory.synthesis import rag_phrasing as rp

    root = Path(__file__).resolve().parents[2]
    lex = rp.load_passage_lexicon(root / "lexicon" / "passages" / "korea.yaml")
    text = ("2020년 경기도의 총인구는 1,347만 9,798명으로 집계되었다. 시군구별로는 화성시의 인구가 83만 3,229명으로 "
            "가장 많았고, 연천군이 4만 1,850명으로 가장 적었다. 관할 시군구는 42곳이다.")  # fmt: skip
    gold = {"id": "p1", "title": "2020년 경기도 인구주택총조사 결과", "text": text}
    doc = rp.named_document(lex, gold["title"], "ko")
    ok = NS(is_success=True)
    search_sigungu = NS(name="search_admin_sigungu", generic_params=NS(names=lambda: []), required_params=["sigunguNm"],
                        input_schema={"properties": {"sigunguNm": {}}})  # fmt: skip
    ctx = NS(passages=lex, language="ko", apis={"search_admin_sigungu": search_sigungu}, tid=lambda n: n,
             types=NS(param_type=lambda tid, p: "sigungu.name", accepts=lambda a, b: "equal" if a == b else None),
             base_args={})  # fmt: skip

    class Ex:
        async def call(self, s, args):
            name = args["sigunguNm"]
            return NS(outcome=ok, records=[{"sigunguNm": name, "sigunguCd": "41590" if name == "화성시" else "41800",
                                            "sidoCd": "41", "sidoNm": "경기도"}])  # fmt: skip

    def hop(used):
        return asyncio.run(multisource._rag_api_hop(ctx, Ex(), multisource._Edges(), NS(name="s"), gold, doc,
                                                    sentences(text), "경기도", np.random.default_rng(0), used))  # fmt: skip

    first = hop(set())
    assert first[2].value in {"화성시", "연천군"}
    other = hop({first[2].value.casefold()})
    assert not isinstance(other[0], str), other
    assert other[2].value == ({"화성시", "연천군"} - {first[2].value}).pop()
    # '(일반구 단위)' only for the most populous: 연천군 is the least populous under both readings (blind read s11 r2ko)
    assert other[2].phrase.endswith(
        "가장 적었던 시·군·구" if other[2].value == "연천군" else "가장 많았던 시·군·구(일반구 단위)"
    )
    assert hop({"화성시", "연천군"})[0] == "near_duplicate"
    rec = [{"sigunguNm": "화성시", "sigunguCd": "41590", "sidoCd": "41", "sidoNm": "경기도"}]
    frame = {"fields": {"sidoCd": {"asked": False}}}
    assert multisource._answer_field(rec, [gold], "화성시", "sigunguNm") == ["sidoCd", "sigunguCd"]
    assert multisource._answer_field(rec, [gold], "화성시", "sigunguNm", frame) == ["sigunguCd"]


def test_what_a_question_states_of_a_call_is_no_generic_argument():
    """api_hop_in_documents searches for each value the question states: never the key placeholder, the response
    format or the paging (a search for '<KEY>' or 'json' returns some bulletin, and one naming 서울특별시 dropped 46 of
    the korea demo's chains)."""
    import json
    from pathlib import Path

    from factory.tools.spec import ToolSpec

    snapshot = Path(__file__).parents[1] / "variants" / "demo_snapshot.json"
    tools = json.loads(snapshot.read_text(encoding="utf-8"))["inventories"]["korea"]["tools"]
    [spec] = [ToolSpec.model_validate(t) for t in tools if t["name"] == "search_census_district"]
    args = {"serviceKey": "<KEY>", "_type": "json", "numOfRows": 10, "pageNo": 1, "keyword": "광산구"}
    assert multisource.stated_values(spec, args) == {"광산구"}


def test_a_fact_only_the_documents_give_is_asked_first():
    """A passage stating a fact no API serves (a district's doctors) is asked that one, not a share or a rank an agent
    computes from the API rows (issue 17 gap 4); a passage whose facts are all derivable draws among all of them."""
    from types import SimpleNamespace

    def fact(name, derivable):
        return SimpleNamespace(
            name=name, fact=SimpleNamespace(derivable=derivable, match=SimpleNamespace(pattern=name))
        )

    share, rank, doctors, pediatrics = (
        fact("share", True),
        fact("rank", True),
        fact("doctors", False),
        fact("ped", False),
    )
    assert multisource.documents_only([share, doctors, rank, pediatrics]) == [doctors, pediatrics]
    assert multisource.documents_only([share, rank]) == [share, rank]
    # among them the one the kept chains asked least: another district is asked another fact, not the same question
    kept = [{"realization": {"fact": "ped"}}, {"realization": {"fact": "share"}}, {"query": "an API-only task"}]
    asked = multisource.asked_facts(kept)
    assert asked == {"ped": 1, "share": 1}
    assert multisource.documents_only([share, doctors, rank, pediatrics], asked) == [doctors]
    assert multisource.documents_only([share, rank], asked) == [share, rank]
