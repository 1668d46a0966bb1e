"""Memories of themes in Japanese and English for the notions tests across languages: each theme is an activity or
a thing of daily life, its memories clearly related but worded differently (the default model puts most pairs of
one theme between 0.3 and 0.7: they seldom link at remember), a Japanese tag and an English one for it."""

from __future__ import annotations

import attrs


@attrs.frozen
class Theme:
    ja_tag: str
    en_tag: str
    emotion: str
    valence: float
    ja: tuple[str, ...]
    en: tuple[str, ...]


POETRY = Theme(
    "詩",
    "poetry",
    "contentment",
    0.5,
    (
        "夜、短い詩を書いた。言葉がすっと出てきた。",
        "好きな詩人の詩集を読み返した。",
        "詩の一行を何度も書き直した。",
        "窓辺で詩を声に出して読んだ。",
        "季節の詩を一つ作ってみた。",
        "詩を書くと心が静かになる。",
        "古い詩の言葉の選び方に感心した。",
        "新しいノートに詩を書き始めた。",
    ),
    ("Wrote a short poem about the evening light.", "Read a poem aloud and the words felt new."),
)
RAIN = Theme(
    "雨",
    "rain",
    "melancholy",
    -0.3,
    (
        "朝から雨が降り続いている。",
        "雨の音を聞きながら本を読んだ。",
        "傘を忘れて雨に濡れた。",
        "窓を打つ雨をぼんやり眺めていた。",
        "雨上がりの匂いがした。",
        "梅雨の雨が一日中やまなかった。",
        "小雨の中を静かに歩いた。",
        "雨の夜は少し寂しい。",
    ),
    ("It rained all afternoon; I listened to it on the roof.", "Walked home in the cold rain."),
)
TEA = Theme(
    "お茶",
    "tea",
    "contentment",
    0.6,
    (
        "マスターと一緒にお茶を淹れた。",
        "マスターとお茶を飲みながら話した。",
        "マスターが淹れてくれた緑茶が美味しかった。",
        "午後、マスターとお茶の時間を過ごした。",
        "マスターとほうじ茶を飲んで一日を振り返った。",
        "新しい茶葉をマスターと試した。",
        "マスターとお茶を飲みながら窓の外を見た。",
        "寝る前にマスターと温かいお茶を飲んだ。",
    ),
    ("Had tea with Master in the garden.", "Made a pot of green tea for Master."),
)
WALK = Theme(
    "散歩",
    "walk",
    "happy",
    0.6,
    (
        "マスターと川沿いを散歩した。桜が咲き始めていた。",
        "夕方、マスターと近所を散歩した。猫に会った。",
        "散歩の途中でマスターがパン屋に寄った。",
        "今朝はマスターと公園まで散歩した。風が冷たかった。",
        "マスターと散歩しながら、将来の話をした。",
        "雨上がりの道をマスターと散歩した。水たまりが光っていた。",
        "夜、マスターと少しだけ散歩した。月がきれいだった。",
        "マスターと初めての道を散歩した。",
    ),
    ("Took a long walk with Master by the river.", "A short evening walk with Master before dinner."),
)
COOKING = Theme(
    "料理",
    "cooking",
    "happy",
    0.6,
    (
        "マスターと一緒にカレーを作った。",
        "マスターが包丁の使い方を教えてくれた。",
        "今夜はマスターと味噌汁を作った。",
        "マスターと料理をすると時間が早く過ぎる。",
        "マスターと新しいレシピで料理してみた。",
        "マスターと夕飯の料理を分担した。",
        "週末はマスターと煮物を作った。",
        "マスターと作ったオムレツが上手くできた。",
    ),
    ("Cooked pasta with Master tonight.", "Master and I cooked dinner together."),
)
STARS = Theme(
    "星",
    "stars",
    "moved",
    0.7,
    (
        "夜空に星がたくさん見えた。",
        "ベランダで星を眺めた。",
        "冬の星座を探してみた。",
        "流れ星を一つ見つけた。",
        "星がきれいな夜だった。",
        "星の名前を調べてみた。",
        "街の明かりで星が少ししか見えなかった。",
        "星を見ていると時間を忘れる。",
    ),
    ("The stars were bright over the hills tonight.", "Looked for constellations in the winter sky."),
)
TENNIS = Theme(
    "テニス",
    "tennis",
    "excited",
    0.7,
    (
        "テニスの練習でサーブが入った。",
        "週末にテニスの試合を見に行った。",
    ),
    (
        "Played tennis with Aiko this morning.",
        "My tennis serve is finally getting better.",
        "A long tennis rally made me laugh.",
        "Practised tennis volleys at the club.",
        "Watched a tennis match and took notes on footwork.",
        "Tennis in the rain was a silly idea.",
        "Aiko beat me at tennis again.",
        "Bought new strings for my tennis racket.",
    ),
)
"""Tennis is not in the lexicon: テニス and tennis are one theme because the embedding model puts them together."""
GARDEN = Theme(
    "庭",
    "garden",
    "contentment",
    0.5,
    ("庭のトマトが赤くなってきた。", "庭に新しい花を植えた。"),
    (
        "Planted tomatoes in the garden this morning.",
        "Watered the garden before the heat.",
        "Pulled weeds in the garden; my hands were muddy.",
        "The basil in the garden has sprouted.",
        "Pruned the roses in the garden.",
        "Picked the first strawberries from the garden.",
        "The garden smelled of wet soil after rain.",
        "Sat in the garden and watched the bees.",
    ),
)
COFFEE = Theme(
    "コーヒー",
    "coffee",
    "happy",
    0.6,
    ("朝、丁寧にコーヒーを淹れた。", "新しいコーヒー豆を試した。"),
    (
        "Made a careful pour-over coffee this morning.",
        "Tried a new coffee bean from Ethiopia.",
        "The coffee at the corner cafe was too bitter.",
        "Ground coffee by hand; the smell filled the room.",
        "A second cup of coffee kept me going.",
        "Coffee and a quiet page before work.",
        "Learned to make latte art with my coffee.",
        "Cold brew coffee on a hot afternoon.",
    ),
)
