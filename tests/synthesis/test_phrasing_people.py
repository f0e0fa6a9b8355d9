"""Issue 15, blind-read causes fixed in the realization method (pure, no demo service): units left to the answer,
superlatives and shared-value phrases from the reviewed lexicon, compared names said bare, circular hops and
record counts marked unphraseable with a reason code, answers that answer first and name the record."""

import pytest

from factory.synthesis import answers, phrasing
from factory.synthesis.phrasing import Ref, Unphraseable
from factory.synthesis.queries import short_frame


def _frame(**fields):
    return {"tool": "list_airports_by_country", "entity": "airport", "fields": fields, "params": {}, "values": {}}


@pytest.mark.parametrize(
    ("label", "said"),
    [
        ("price in USD", "price"),
        ("latitude in decimal degrees", "latitude"),
        ("dew point in °F", "dew point"),
        ("distance in statute miles", "distance"),
        ("number of tracks", "number of tracks"),  # no unit: unchanged
        ("minutes in the air", "minutes in the air"),  # 'in the air' is no unit
    ],
)
def test_field_labels_are_said_without_units(label, said):
    assert phrasing.spoken(label, "en") == said
    assert phrasing.spoken("단위 in km", "ko") == "단위 in km"  # Korean labels are the lexicon's, left alone


def test_a_parameter_keeps_its_unit_a_field_does_not():
    frame = {"params": {"radius": {"label": {"en": "search radius in kilometres"}}},
             "fields": {"lat": {"label": {"en": "latitude in degrees"}}}}  # fmt: skip
    assert phrasing._slot_label(frame, "fields", "lat", "en") == "latitude"
    assert phrasing._slot_label(frame, "params", "radius", "en") == "search radius in kilometres"


def _airports() -> Ref:
    return Ref("the airports in the same state or province as airport SSN", False, "airport", "airports")


def test_a_pick_uses_the_lexicon_superlative():
    frame = _frame(lat={"label": {"en": "latitude in degrees"}, "superlative": {"max": {"en": "northernmost"}}})
    r = phrasing.select(_airports(), {"operator": "max", "field": "lat"}, frame, "en")
    assert r.text == "the northernmost airport in the same state or province as airport SSN"
    assert r.one and r.steps == 1


def test_a_pick_without_a_superlative_is_a_relative_phrase_not_an_among_chain():
    frame = _frame(lon={"label": {"en": "longitude in degrees"}}, track_count={"label": {"en": "number of tracks"}})
    low = phrasing.select(_airports(), {"operator": "min", "field": "lon"}, frame, "en")
    assert low.text == "the airport in the same state or province as airport SSN with the lowest longitude"
    albums = Ref("the albums of the artist AC/DC", False, "album", "albums")
    most = phrasing.select(albums, {"operator": "max", "field": "track_count"}, frame, "en")
    assert most.text == "the album of the artist AC/DC with the most tracks"
    assert "among" not in low.text + most.text and "degrees" not in low.text


def test_compared_names_are_said_bare_titles_and_numbers_keep_their_noun():
    assert phrasing._bare("the artist AC/DC", "AC/DC", "en") == "AC/DC"
    assert phrasing._bare("airport JFK", "JFK", "en") == "JFK"
    assert phrasing._bare("the track 'Pilot'", "Pilot", "en") == "the track 'Pilot'"
    assert phrasing._bare("album 218", 218, "en") == "album 218"
    assert phrasing._bare("광주광역시", "광주광역시", "ko") == "광주광역시"


def test_a_hop_back_to_the_listing_owner_is_circular():
    owner = Ref("남동구", True, "", "", meta={"entity": "sigungu", "slots": {("sigunguCd", "")}})
    towns = Ref("남동구의 읍면동", False, "읍면동", "읍면동", owner=owner)
    up_frame = {"fields": {"sigunguCd": {"kind": "reference", "entity": "sigungu"}}}
    with pytest.raises(Unphraseable) as e:
        phrasing._circular(towns, "sigunguCd", up_frame, "sigungu")
    assert e.value.code == "circular"
    phrasing._circular(towns, "sidoCd", up_frame, "sido")  # the province of those towns is another record: fine


def test_record_counts_the_lexicon_forbids_are_unphraseable():
    with pytest.raises(Unphraseable) as e:
        phrasing._countable({"tool": "get_census_statistics", "count": False})
    assert e.value.code == "record_count"
    phrasing._countable({"tool": "list_admin_emd"})
    deep = Ref("x", False, "a", "as", steps=phrasing.MAX_STEPS + 1)
    with pytest.raises(Unphraseable) as e2:
        phrasing._nested(deep)
    assert e2.value.code == "too_nested"
    assert {e.value.code, e2.value.code} <= set(phrasing.UNPHRASEABLE_CODES)


def test_answers_answer_first_and_name_the_record_not_the_chain():
    count = {"ask": "count", "noun": "albums", "owner": "the artist AC/DC", "owner_one": True,
             "np": "albums of the artist AC/DC", "counter": "장"}  # fmt: skip
    frame = {"pattern": "PATH", "description": "the number of albums of the artist AC/DC",
             "short": short_frame("PATH", count)}  # fmt: skip
    assert answers.answer_text({"value": 2, "type": "number"}, "en", frame) == "The artist AC/DC has 2 albums."
    # a chained owner is not repeated: the value and what it counts
    chained = {**count, "owner": "the artist of the album of the track 'Pilot'", "np": "albums of the artist of …"}
    frame2 = {**frame, "short": short_frame("PATH", chained)}
    assert answers.answer_text({"value": 3, "type": "number"}, "en", frame2) == "There are 3 albums."
    value = {"ask": "value", "field": "latitude", "unit": "degrees", "one": True,
             "subject": "the northernmost airport in the same state or province as airport SSN"}  # fmt: skip
    frame3 = {"pattern": "PATH", "description": "x", "short": short_frame("PATH", value)}
    assert answers.answer_text({"value": 38.0189, "type": "number"}, "en", frame3) == "The latitude is 38.0189 degrees."
    ko = {
        "ask": "count",
        "noun": "읍면동",
        "owner": "남동구",
        "owner_one": True,
        "np": "남동구의 읍면동",
        "counter": "곳",
    }
    frame4 = {"pattern": "PATH", "description": "남동구의 읍면동의 수", "short": short_frame("PATH", ko)}
    assert answers.answer_text({"value": 11, "type": "number"}, "ko", frame4) == "남동구의 읍면동은 11곳입니다."


def test_a_conditional_answer_says_yes_or_no_then_the_value():
    parts = {"then": {"ask": "total", "noun": "tracks", "owner": "", "np": "tracks of those albums"},
             "cond": {"ask": "count", "noun": "albums", "owner": "the artist Miles Davis", "owner_one": True}}  # fmt: skip
    frame = {"pattern": "IF", "description": "d", "otherwise": "o", "short": short_frame("IF", parts)}
    yes = answers.answer_text({"value": 37, "type": "number", "branch": "then"}, "en", frame)
    no = answers.answer_text({"value": 3, "type": "number", "branch": "else"}, "en", frame)
    assert yes == "Yes: there are 37 tracks of those albums."
    assert no == "No: the artist Miles Davis has 3 albums."
