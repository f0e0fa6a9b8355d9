"""Which response fields are read as a total count (factory.tools.schema.infer_total_count_path)."""

from factory.tools.schema import infer_total_count_path

LISTING = {
    "type": "object",
    "properties": {"total": {"type": "integer"}, "items": {"type": "array", "items": {"type": "object"}}},
}
INVOICE = {  # one record whose `total` is an amount in USD (the demo's create_invoice)
    "type": "object",
    "properties": {"invoice_id": {"type": "integer"}, "total": {"type": "number"}, "count": {"type": "integer"}},
}


def test_total_beside_a_records_list_is_the_total_count():
    assert infer_total_count_path(LISTING, "items") == "total"


def test_a_single_records_total_or_count_is_a_field_not_a_total_count():
    assert infer_total_count_path(INVOICE, None) is None


def test_an_unambiguous_total_count_name_counts_even_without_a_records_list():
    schema = {"type": "object", "properties": {"total_count": {"type": "integer"}, "id": {"type": "integer"}}}
    assert infer_total_count_path(schema, None) == "total_count"


def test_an_amount_named_total_beside_a_records_list_is_not_a_count():
    created = {
        "type": "object",
        "properties": {"total": {"type": "number", "description": "Invoice total in USD."}, "lines": {"type": "array"}},
    }
    assert infer_total_count_path(created, "lines") is None
