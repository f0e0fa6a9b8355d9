"""Issue 15, blind reads s11 round 2 (benchmarks/results/blind_audit_s11_r2en_2026-12-02.md): the English causes fixed
in session 12 — a COND asked as one thing a person wants to know (no fallback that asks the count just checked), the
number of a hop's records taken from the calls the chain made, 'each of' never said of one record, a country name
with the article it takes, 'There is 1 more …', and no 'X or Y: which has more …' difference form."""

import pytest

from factory.synthesis import phrasing
from factory.synthesis.answers import answer_text
from tests.synthesis.test_phrasing import _action, _query, _tid, _traj, shared_specs
from tests.synthesis.test_phrasing_blind_s10 import _answer, _cond


@pytest.fixture(scope="module")
def specs():
    return shared_specs()


def _artist_cond(specs, threshold=3, branch="else", value=1):
    j = [{"from": "list_artist_albums.album_id", "to": "list_album_tracks.album_id", "type": "FAN", "n": 1,
          "width": 1, "process": None}]  # fmt: skip
    return _traj(
        specs, "COND", None, [], [("list_artist_albums", "artist_id", 142)],
        [{**_action(specs, "list_artist_albums", {"artist_id": 142}), "records": value}],
        {"ask": "count", "cond_tool_id": _tid(specs, "list_artist_albums"),
         "then_tool_id": _tid(specs, "list_album_tracks"), "threshold": threshold},
        {"type": "number", "value": value, "fields": [], "branch": branch}, counterfactual_junctions=j,
    )  # fmt: skip


def test_a_cond_never_asks_the_count_it_just_checked(specs):
    # r2en #14, #16, #22, #23 (Nat 3): '… at least 3 customers from Norway? If so, …? If not, how many customers from
    # Norway are there?' — the fallback is the count the condition checked; every form asks one thing
    for t in (_cond(specs), _artist_cond(specs)):
        forms = [_query(t, specs, "en", v) for v in range(4)]
        assert len(set(forms)) == 4, forms
        for q in forms:
            assert "If not" not in q and "if not" not in q and "otherwise" not in q.lower(), q
            assert "how many customers from Brazil are there" not in q and "how many albums do" not in q, q
    owner = [_query(_artist_cond(specs), specs, "en", v) for v in range(4)]
    assert "Does artist 142 have at least 3 albums? If so, how many tracks do those albums have?" in owner, owner
    assert "If artist 142 has at least 3 albums, how many tracks do those albums have?" in owner, owner
    # s12 en #1: '…, assuming there are at least 4 of them?' read as 4 tracks or 4 albums: the hedge names its noun
    for q in owner:
        assert "of them" not in q, q
    # s14c en1 #19: '…, assuming there are at least 3 albums?' read as a premise, not a check (Nat 3); s15 en1 #17: a person is "they"
    assert not any("assuming" in q for q in owner), owner
    assert (
        "Does artist 142 have at least 3 albums? If they do, I'd also like to know how many tracks those albums "
        "have." in owner
    ), owner


def test_a_cond_answer_says_the_count_fell_short_or_what_the_records_have(specs):
    assert _answer(_artist_cond(specs), specs) == "Artist 142 has only 1 album, fewer than 3."
    held = _answer(_artist_cond(specs, 2, "then", 30), specs)
    assert held == "Artist 142 has at least 2 albums, and those albums have 30 tracks.", held


def test_a_country_that_takes_the_article_is_said_with_it(specs):
    # r2en #16: 'If there are at least 2 customers from Czech Republic, …'
    t = _cond(specs)
    t["seeds"] = [{**s, "value": "Czech Republic"} for s in t["seeds"]]
    t["golden_actions"] = [{**a, "args": {**a["args"], "country": "Czech Republic"}} for a in t["golden_actions"]]
    q = _query(t, specs, "en")
    assert "customers from the Czech Republic" in q, q
    assert "the Germany" not in _query(_cond(specs), specs, "en")
    assert phrasing.the_name("Czech Republic") == "the Czech Republic"
    assert phrasing.the_name("United Kingdom") == "the United Kingdom"
    assert phrasing.the_name("the Netherlands") == "the Netherlands"
    assert phrasing.the_name("Germany") == "Germany"


def test_each_of_is_never_said_of_what_one_call_read(specs):
    # r2en #24 (WP no, Nat 2): 'how many tracks each of the albums of the artist of the album containing 'Wet My Bed'
    # has?' — the artist's only album is the one named, the answer is one number
    j = [{"from": "search_artists.artist_id", "to": "list_artist_albums.artist_id", "type": "SEQ", "n": 1, "width": 1,
          "process": None}]  # fmt: skip
    acts = [_action(specs, "search_artists", {"name": "Stone Temple Pilots"}, 1),
            {**_action(specs, "list_artist_albums", {"artist_id": 134}), "records": 1}]  # fmt: skip
    t = _traj(
        specs, "chain", ["search_artists", "list_artist_albums"], j, [("search_artists", "name", "Stone Temple Pilots")],
        acts, {"ask": "value", "field": "track_count", "tool_id": _tid(specs, "list_artist_albums")},
        {"type": "number", "value": 12, "fields": ["track_count"]},
    )  # fmt: skip
    with pytest.raises(phrasing.Unphraseable) as e:
        _query(t, specs, "en")
    assert e.value.code == "degenerate"
    # several albums, several values: asked of each
    t["answer"] = {"type": "judge", "value": [12, 10], "fields": ["track_count"]}
    assert "each of" in _query(t, specs, "en") or "numbers of tracks" in _query(t, specs, "en")


def test_one_more_is_said_in_the_singular():
    # r2en #13: 'There are 1 more airport with an IATA code within 100 km of ISW …'
    frame = {"pattern": "DIFF", "description": "airports", "options": ["ISW", "OSN"],
             "compare": {"mode": "there", "noun": "airports with an IATA code",
                         "subj": ["within 100 km of ISW", "within 100 km of OSN"],
                         "full": ["within 100 km of ISW", "within 100 km of OSN"], "plural": False, "big": 0}}  # fmt: skip
    text = answer_text({"type": "number", "value": 1, "counts": [9, 8]}, "en", frame)
    assert text.startswith("There is 1 more airport with an IATA code within 100 km of ISW"), text
    text = answer_text({"type": "number", "value": 2, "counts": [9, 7]}, "en", frame)
    assert text.startswith("There are 2 more airports"), text


def _b6_states(specs, states):
    j = [{"from": "list_routes.origin", "to": "get_airport_by_iata.iata", "type": "FAN", "n": 3, "width": 3,
          "process": None},
         {"from": "get_airport_by_iata.country+subdivision", "to": "list_airports_by_country.country+subdivision",
          "type": "FAN", "n": 3, "width": len(states), "process": None}]  # fmt: skip
    acts = [
        {**_action(specs, "list_routes", {"carrier": "B6"}, 1), "records": 55},
        *[_action(specs, "get_airport_by_iata", {"iata": c}, 2) for c in ("JFK", "LGA", "EWR")],
        *[_action(specs, "list_airports_by_country", {"country": "US", "subdivision": s}, 3) for s in states],
    ]
    return _traj(
        specs, "chain", ["list_routes", "get_airport_by_iata", "list_airports_by_country"], j,
        [("list_routes", "carrier", "B6")], acts, {"ask": "count", "tool_id": _tid(specs, "list_airports_by_country")},
        {"type": "number", "value": 405, "fields": []},
    )  # fmt: skip


def test_records_in_several_places_are_not_said_to_share_one(specs):
    # r2en #1 (Nat 3): 'airports … in the same state as the origin airports of the routes flown by B6' (NY and NJ)
    # s12 en2 #9 (Nat 2): either wording of a place the origin airports of a listing lie in reads like a database
    # query ('in the states of the origin airports of the routes flown by B6'): the chain is not said at all
    for states in (["New York", "New Jersey"], ["New York"]):
        with pytest.raises(phrasing.Unphraseable) as e:
            _query(_b6_states(specs, states), specs, "en")
        assert e.value.code == "too_nested"
    assert phrasing._several_places("the {plural}{filt} in the same province or metropolitan city as {up}") == (
        "the {plural}{filt} in the provinces or metropolitan cities of {up}"
    )


def test_a_date_cut_off_is_said_of_the_records_it_dates():
    # s11 (Nat 3): 'line items on the invoices of the customer Bjørn Hansen dated on or after 2007-04-07'
    assert phrasing._possessive_of("the invoices of the customer Bjørn Hansen", "invoices") == (
        "the customer Bjørn Hansen's invoices"
    )
    assert phrasing._possessive_of("the invoices of the customer Luís Gonçalves", "invoices") == (
        "the customer Luís Gonçalves' invoices"
    )
    # a nested owner stays as it is
    nested = "the invoices of the customers from the same country as X"
    assert phrasing._possessive_of(nested, "invoices") == nested


def test_a_distance_record_is_the_trip_between_two_airports(specs):
    # s12 demo (Nat 1): 'What are the great-circle distances of the distances with IATA code of the destination airport
    # GMP of the airports with an IATA code within 100 km of KUV?'
    j = [{"from": "airports_near.iata", "to": "great_circle_distance.origin_iata", "type": "FAN", "n": 2, "width": 2,
          "process": None}]  # fmt: skip
    acts = [
        {**_action(specs, "airports_near", {"iata": "KUV"}, 1), "records": 2},
        *[_action(specs, "great_circle_distance", {"origin_iata": c, "dest_iata": "GMP"}, 2) for c in ("GMP", "CJU")],
    ]
    t = _traj(
        specs, "chain", ["airports_near", "great_circle_distance"], j, [("airports_near", "iata", "KUV")], acts,
        {"ask": "value", "field": "km", "tool_id": _tid(specs, "great_circle_distance")},
        {"type": "judge", "value": [168.0, 61.4], "fields": ["km"]},
    )  # fmt: skip
    t["seeds"].append({"tool_id": _tid(specs, "great_circle_distance"), "param": "dest_iata", "value": "GMP"})
    q = _query(t, specs, "en")
    assert "the trips from the airports with an IATA code within 100 km of KUV to GMP" in q, q
    assert "distances of the distances" not in q and "with IATA code of" not in q, q


def test_a_second_value_of_the_same_record_is_asked_as_a_clause(specs):
    # s12 demo: 'Could you tell me how many airports … within 100 km of SSN and its longitude?' (read as one more thing
    # within 100 km); the indirect forms ask 'what its … is'
    sem = _traj(
        specs, "SEM", None, [], [("list_customer_invoices", "customer_id", 36)],
        [_action(specs, "list_customer_invoices", {"customer_id": 36}), _action(specs, "get_customer", {"customer_id": 36})],
        {"parts": [{"ask": "count", "tool_id": _tid(specs, "list_customer_invoices")},
                   {"ask": "value", "field": "city", "tool_id": _tid(specs, "get_customer")}],
         "shared": {"param": "customer_id", "value": 36}},
        {"type": "judge", "value": [7, "Montréal"], "fields": ["total_count", "city"]},
    )  # fmt: skip
    forms = [_query(sem, specs, "en", v) for v in range(4)]
    assert "Could you tell me how many invoices customer 36 has and what their city is?" in forms, forms
    assert not any(q.endswith(("and their city?", "and also their city.")) for q in forms), forms
