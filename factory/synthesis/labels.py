"""Natural labels of tools, parameters and fields: moved to `factory.labels` (the tool lexicon's frames use them
outside synthesis); the names stay importable from here."""

from factory.labels import field_label, param_label, tool_noun, words

__all__ = ["field_label", "param_label", "tool_noun", "words"]
