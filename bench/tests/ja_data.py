"""Small Japanese data written by the tests of ego bench ja and ego bench calibrate (the shapes of bench/data/ja)."""

from __future__ import annotations

TANAKA = [
    {"id": "t0", "en": "I went for a walk in the park this morning.", "ja": "今朝、公園を散歩した。"},
    {"id": "t1", "en": "It rained all day yesterday.", "ja": "昨日は一日中雨が降った。"},
    {"id": "t2", "en": "My sister plays the violin.", "ja": "妹はバイオリンを弾く。"},
]
SAME = "今日はマスターと一緒に映画を見た。"
JSTS = [
    {"a": "レンガの建物の前を、女性が歩いています。", "b": "厩舎で馬と女性とが寄り添っています。", "score": 0.0},
    {"a": "猫がソファの上で寝ています。", "b": "犬が公園を走っています。", "score": 3.0},
    {"a": SAME, "b": SAME, "score": 5.0},
]
