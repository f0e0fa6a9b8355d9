"""Tool-use policies on multi-source tasks (VAKRA puts them there too; issue 17 demo: 0 of 15 API+RAG tasks carried
one): a refusal that forbids the documents is drawn only where no permitted tool can produce the passage's fact (the
passage lexicon's `derived_by` names every platform that can compute it, and those are banned with the documents),
and a ban of an API platform the multi-source path does not use is no_effect (it tests something when that platform
could compute the fact)."""

from factory.audit import passages as audit_passages
from factory.config import RetrievalConfig
from factory.retrieval import policy
from tests.retrieval.test_policy_platforms import _tool

MUSIC_INVENTORY = {
    "tools": [
        _tool("chinook-catalog", "get_chinook_catalog_key", ["api_key"], key=True),
        _tool("chinook-catalog", "search_artists", ["artist_id", "name"], ["api_key", "name"]),
        _tool("chinook-catalog", "list_artist_albums", ["album_id", "title", "artist_id", "artist_name"],
              ["api_key", "artist_id"]),
        _tool("chinook-store", "get_chinook_store_key", ["api_key"], key=True),
        _tool("chinook-store", "list_invoice_lines", ["invoice_line_id", "invoice_id", "track_id", "track_name",
                                                      "unit_price", "quantity"], ["api_key", "invoice_id"]),
        _tool("catalogue-notes", "search_catalogue_notes", ["id", "text", "title"], ["query", "k"], kind="retrieval"),
    ]
}  # fmt: skip
CATALOG = policy.tool_catalog(MUSIC_INVENTORY)
SEARCH = {"tool": "search_catalogue_notes", "platform": "catalogue-notes", "source_type": "retrieval",
          "args": {"query": "Let There Be Rock (AC/DC)", "k": 5}, "passage_ids": ["music:p1"]}  # fmt: skip
API_RAG = {  # the album of the artist the catalogue finds, its sales read off the album's note
    "id": "sha256:api-rag", "domain": "music", "language": "en", "hop_type": "API-RAG",
    "query": "How many copies of tracks from the album 'Let There Be Rock' by the artist AC/DC has the store sold?",
    "answer": {"type": "number", "value": 14},
    "golden_actions": [
        {"step": 1, "tool": "get_chinook_catalog_key", "platform": "chinook-catalog", "source_type": "api", "args": {}},
        {"step": 2, "tool": "list_artist_albums", "platform": "chinook-catalog", "source_type": "api",
         "args": {"artist_id": 1, "api_key": "<KEY>"}},
        {**SEARCH, "step": 3},
    ],
    "answer_spec": {"kind": "passage_value", "calls": [{"step": 3, "index": 0}], "passage_id": "music:p1",
                    "value": 14, "statement": "The store sold ___ track copies", "apis_may_answer": True,
                    "derived_by": ["chinook-store"]},
    "available_tools": ["list_artist_albums", "search_catalogue_notes"],
    "platforms": ["catalogue-notes", "chinook-catalog"],
}  # fmt: skip
RAG_ONLY = {
    **API_RAG, "id": "sha256:rag", "hop_type": "RAG", "golden_actions": [{**SEARCH, "step": 1}],
    "query": "How many copies of tracks from the album 'Let There Be Rock' by AC/DC has the store sold?",
    "answer_spec": {**API_RAG["answer_spec"], "calls": [{"step": 1, "index": 0}]},
}  # fmt: skip


def _spec(task, **changes):
    return {**task, "answer_spec": {**task["answer_spec"], **changes}}


def test_a_refusal_bans_the_documents_and_every_platform_that_computes_the_passage_fact():
    for task in (API_RAG, RAG_ONLY):
        assert policy.options(task, "changes_answer", CATALOG) == [(["retrieval"], ["chinook-store"])]
        t, pol = policy._assigned(task, RetrievalConfig(), "the music catalogue", ["search_catalogue_notes"], [],
                                  ["chinook-catalog", "chinook-store"], CATALOG, "changes_answer")  # fmt: skip
        assert pol["category"] == "changes_answer" and pol["scope"] == "platform"
        assert pol["forbidden_sources"] == ["retrieval"] and pol["forbidden_platforms"] == ["chinook-store"]
        assert "document search (search_catalogue_notes)" in pol["text"] and "chinook-store API" in pol["text"]
        assert "The other tools may be used." in pol["text"]
        # the permitted catalogue is offered (it cannot count sales), with the store's tools the policy names
        assert {"search_artists", "list_invoice_lines"} <= set(t["available_tools"])
        # the audit accepts it: every path of the task searches the forbidden documents
        assert audit_passages.check_policy({**t, "policy": pol}) is None
        published = policy.restrict({**t, "policy": pol})
        assert published["golden_actions"] == [] and policy.states_unanswerable(published["answer"]["value"])


def test_no_refusal_where_a_permitted_tool_may_produce_the_passage_fact():
    cases = {
        # derivable, but the lexicon does not say by which platform: the whole-source refusal stays off too
        "unknown": _spec(API_RAG, derived_by=[]),
        # running times: the catalogue's tracks and the store's playlist tracks both give them; banning both leaves
        # no permitted API platform (no platform-scoped refusal), and the documents alone are no refusal
        "every platform": _spec(API_RAG, derived_by=["chinook-catalog", "chinook-store"]),
        # a platform the domain does not have: the lexicon and the catalog disagree, nothing is claimed
        "unknown platform": _spec(API_RAG, derived_by=["chinook-warehouse"]),
        # the answer is an API field after the passage hop (RAG-API): a permitted API may reach the record otherwise
        "value answer": {**API_RAG, "hop_type": "RAG-API",
                         "answer_spec": {"kind": "value", "field": "composer", "calls": [{"step": 3, "index": 0}],
                                         "apis_may_answer": True, "derived_by": ["chinook-store"]}},
        # another sufficient path uses neither the documents nor the store
        "other path": {**API_RAG, "alternative_paths": [{"actions": [
            {"step": 1, "tool": "search_artists", "platform": "chinook-catalog", "source_type": "api"}]}]},
    }  # fmt: skip
    for why, task in cases.items():
        assert policy.passage_refusal(task, CATALOG) is None, why
        # no refusal forbids the documents (the other path, all API, may still get the existing APIs refusal)
        assert not [o for o in policy.options(task, "changes_answer", CATALOG) if "retrieval" in o[0]], why
    assert policy.options(cases["unknown"], "changes_answer", CATALOG) == []
    # a fact no API computes: the documents alone are forbidden (the whole-source refusal, as before)
    plain = _spec(API_RAG, apis_may_answer=False, derived_by=[])
    assert policy.options(plain, "changes_answer", CATALOG) == [(["retrieval"], [])]


def test_a_ban_of_a_platform_the_multi_source_path_does_not_use_is_no_effect():
    # the store is unused by the path and could compute the album's sales: an agent might reach for it
    assert policy.platform_serves(API_RAG, "chinook-store", CATALOG) == "chinook-store may compute the passage's fact"
    assert policy.options(API_RAG, "no_effect", CATALOG) == [([], ["chinook-store"])]
    t, pol = policy._assigned(API_RAG, RetrievalConfig(), "the music catalogue", ["search_catalogue_notes"], [],
                              ["chinook-catalog", "chinook-store"], CATALOG, "no_effect")  # fmt: skip
    assert pol["category"] == "no_effect" and pol["forbidden_platforms"] == ["chinook-store"]
    assert pol["forbidden_sources"] == [] and pol["expected_answer"] is None
    assert audit_passages.check_policy({**t, "policy": pol}) is None
    assert policy.no_effect_tests(t, pol, CATALOG) == "chinook-store may compute the passage's fact"
    published = policy.restrict({**t, "policy": pol})
    assert published["golden_actions"] == t["golden_actions"] and published["answer"]["value"] == 14
    # the path's own platform is never the no_effect ban; a fact only the path's platform computes leaves no platform
    # that could serve (a vacuous ban): no policy, since a two-source path has no unused source type either
    own = _spec(API_RAG, derived_by=["chinook-catalog"])
    assert policy.platform_serves(own, "chinook-store", CATALOG) is None
    assert policy.options(own, "no_effect", CATALOG) == []
    # an API-only task is unchanged: the passage fact's platforms are no reason there
    api_only = {**API_RAG, "golden_actions": API_RAG["golden_actions"][:2], "hop_type": None}
    assert policy.platform_serves(api_only, "chinook-store", CATALOG) is None


def test_a_refused_multi_source_tasks_passage_stays_served():
    """Demo run (aviation): a refusal on an API+RAG task emptied its golden path, so rule (a) removed the passage its
    unrestricted path cites and the audit failed it (search_passage_missing). The passage is protected like any
    published task's, and its search replays."""
    from factory.retrieval import index

    t, pol = policy._assigned(API_RAG, RetrievalConfig(), "the music catalogue", ["search_catalogue_notes"], [],
                              ["chinook-catalog", "chinook-store"], CATALOG, "changes_answer")  # fmt: skip
    published = policy.restrict({**t, "policy": pol})
    assert published["golden_actions"] == []
    assert index.gold_passages([published], "music") == {"music:p1": {"sha256:api-rag"}}

    class Served:
        def search(self, query, k):
            return [{"id": "music:p1"}] if query == "Let There Be Rock (AC/DC)" else []

    assert index.replay_retrieval_calls(Served(), [published], "music")["checked"] == 1
