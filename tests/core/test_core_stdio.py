"""The id of a malformed request, read off whatever the line still holds (property tests)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from ego_core.mcp.stdio import malformed_reply, top_level_id

IDS = st.one_of(st.integers(min_value=-(2**53), max_value=2**53), st.text(max_size=40))
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=10,
)


@given(request_id=IDS, params=JSON_VALUES, cut=st.integers(min_value=0, max_value=200))
def test_the_id_is_found_in_any_request_cut_after_it(request_id: int | str, params: object, cut: int) -> None:
    head = json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1]
    line = head + ', "method": "tools/call", "params": ' + json.dumps({"id": "nested", "p": params})
    assert top_level_id(line) == request_id
    assert top_level_id(line[: len(head) + cut]) == request_id


@given(st.text(max_size=300))
def test_any_text_gives_an_answer_and_never_raises(text: str) -> None:
    found = top_level_id(text)
    assert found is None or isinstance(found, int | str)
    reply, reason = malformed_reply(text)
    assert reason
    assert reply is None or reply.error.code in (-32700, -32600)


def test_a_nested_id_is_not_the_request_id() -> None:
    assert top_level_id('{"jsonrpc":"2.0","params":{"id":3},"method":"x"') is None
    assert top_level_id('{"params":{"id":3},"id":4') == 4
    assert top_level_id('[{"id": 1}]') is None
