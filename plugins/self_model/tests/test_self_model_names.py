"""The names a memory calls someone by: what someone does, or being with them, in English and Japanese; places,
weather, drinks and possessions are no one."""

from __future__ import annotations

import pytest

from ego_self_model.presence import names_in


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Sam planted tomatoes on the balcony.", ["Sam"]),
        ("A quiet dinner with Noor tonight.", ["Noor"]),
        ("Priya came over for dinner with Sam and me.", ["Priya", "Sam"]),
        ("Sam and I played chess.", ["Sam"]),
        ("田中さんと将棋を指した。", ["田中"]),
        ("A letter from Tokyo arrived.", []),
        ("I went to Paris in spring.", []),
        ("Rain was heavy all day.", []),
        ("Earl Grey with milk, tea with Earl Grey.", []),
        ("Sam's flight was delayed.", []),
        ("Watched it with English subtitles.", []),
        ("Yesterday was long. Tonight came too soon.", []),
    ],
)
def test_names_in(text: str, names: list[str]) -> None:
    assert names_in(text) == names
