"""The checks before parsing a file named on the command line are linear in its size.

A pattern that tried a string again from every quote made a 1 MiB file of escaped quotes cost
hours (16 KB took 1.7 s, four times as much for twice the size). Each text below is the
largest a command reads; the per-test timeout stands for "does not hang", not for a speed.
"""

from __future__ import annotations

import pytest

from cli.inputs import MAX_FILE_BYTES, InputError, parse_json, parse_toml

UNTERMINATED = {
    "json escaped quotes": ("json", '["' + '\\"' * (MAX_FILE_BYTES // 2 - 2)),
    "toml escaped quotes": ("toml", 'a = "' + '\\"' * (MAX_FILE_BYTES // 2 - 4)),
    "toml multi-line": ("toml", 'a = """' + '\\"""' * (MAX_FILE_BYTES // 4 - 2)),
    "toml literal": ("toml", "a = '''" + "'" * (MAX_FILE_BYTES - 8)),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(UNTERMINATED))
def test_an_unterminated_string_is_refused_by_the_parser_in_linear_time(name: str) -> None:
    syntax, text = UNTERMINATED[name]
    parse = parse_json if syntax == "json" else parse_toml
    with pytest.raises(InputError, match=f"not valid {syntax.upper()}"):
        parse(text, "the file")


def test_brackets_after_a_closed_string_still_count() -> None:
    with pytest.raises(InputError, match="nested more than 64 deep"):
        parse_json('["a\\"b", ' + "[" * 100 + "]" * 100 + "]", "the file")
    with pytest.raises(InputError, match="nested more than 64 deep"):
        parse_toml("a = 'x\"'\nb = " + "[" * 100 + "]" * 100, "the file")
