"""Themes across languages: one identity for a tag and its translations (``tea`` ≡ ``お茶``, ``poetry`` ≡ ``詩``).

A tag names a theme of the agent's life, written in whichever language the memory was: the same theme is ``お茶``
on a Japanese memory and ``tea`` on an English one. The notions plugin compares tags by their **theme key**, never
by spelling (pure functions with no dependency: a module another plugin could share once the core offers it):

- :func:`normalize_tag`: NFKC (full-width letters, half-width katakana), case folded, a leading ``#`` and the
  punctuation around it dropped, ``_``, ``-`` and runs of spaces read as one space (``#Green_Tea`` → ``green tea``);
- :func:`theme_key`: the key of a normalised tag in :data:`LEXICON`, a small bilingual map of everyday themes
  (the English word is the key: ``poems``, ``poetry``, ``詩`` and ``ポエム`` are all ``poetry``), else the
  normalised tag itself;
- :func:`theme_word`: the word the lexicon gives a key in a language (``ja`` or ``en``), for text written in it.

The lexicon holds translations and inflections only (a plural, a verb's noun), never near-synonyms: ``green
tea`` stays its own theme. Words outside it are the same theme only by their spelling here; the notions plugin
also bridges a tag to its translation with the embedding model, or a loanword to its source word
(:mod:`ego_notions.themes`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

LEXICON_VERSION: Final = 1
"""Changes whenever :data:`LEXICON` or :func:`normalize_tag` change (a store keyed by them re-reads its keys)."""

_ENTRIES: Final = """
tea teas | お茶 茶 おちゃ ティー
coffee | コーヒー 珈琲
poetry poem poems verse poet | 詩 ポエム 詩歌
haiku | 俳句
rain rains rainy raining rainfall | 雨 あめ 雨降り
snow snowy snowfall | 雪 ゆき
typhoon | 台風
thunder | 雷
weather | 天気
cloud clouds | 雲
wind | 風
sky | 空
sun sunshine | 太陽 日差し
moon | 月
star stars | 星
sunset | 夕焼け 夕日
sunrise | 日の出 朝日
spring | 春
summer | 夏
autumn | 秋
winter | 冬
season seasons | 季節
cherry_blossom cherry_blossoms sakura | 桜 さくら
autumn_leaves | 紅葉
music | 音楽 ミュージック
song songs singing | 歌 うた
piano | ピアノ
guitar | ギター
violin | バイオリン ヴァイオリン
concert concerts | コンサート 演奏会
dance dancing | ダンス 踊り
cat cats kitten | 猫 ねこ ネコ
dog dogs puppy | 犬 いぬ イヌ
bird birds | 鳥 とり
fish | 魚 さかな
animal animals | 動物
pet pets | ペット
plant plants | 植物
tree trees | 木
flower flowers | 花 はな
garden gardens gardening | 庭 ガーデニング 庭仕事 家庭菜園
nature | 自然
sea ocean | 海 うみ
beach | 浜辺 ビーチ
river | 川
lake | 湖
mountain mountains | 山
forest woods | 森
park | 公園
walk walks walking stroll | 散歩 さんぽ
hiking | ハイキング 登山
running jogging | ランニング ジョギング
exercise workout | 運動
yoga | ヨガ
swimming | 水泳
cycling bicycle bike | 自転車 サイクリング
fishing | 釣り
camping | キャンプ
travel travels travelling traveling trip journey | 旅行 旅
train trains | 電車 列車
cooking cook | 料理 自炊
meal meals | ご飯 ごはん 食事
breakfast | 朝食 朝ごはん
lunch | 昼食 昼ごはん ランチ
dinner | 夕食 晩ごはん 夕飯
food | 食べ物
bread | パン
rice | 米 お米
fruit | 果物 フルーツ
vegetable vegetables | 野菜
cake | ケーキ
sweets dessert | お菓子 スイーツ 甘いもの
chocolate | チョコレート チョコ
ramen | ラーメン
sushi | 寿司 すし
beer | ビール
wine | ワイン
sake | 日本酒 お酒
water | 水
cafe | カフェ 喫茶店
kitchen | 台所 キッチン
bath baths | お風呂 風呂 入浴
sleep sleeping | 睡眠 眠り
dream dreams | 夢 ゆめ
morning mornings | 朝 あさ
night nights | 夜 よる
evening | 夕方
weekend weekends | 週末
holiday holidays vacation | 休日 休暇
birthday | 誕生日
festival festivals | 祭り お祭り
gift gifts present | プレゼント 贈り物
home | 家 自宅 我が家
city town | 街 町
book books | 本 書籍
reading | 読書
novel novels | 小説
manga | 漫画 マンガ
anime | アニメ
library | 図書館
writing | 執筆 書くこと
diary journal | 日記
letter letters | 手紙
calligraphy | 書道
tea_ceremony | 茶道
art | 芸術 アート 美術
drawing painting | 絵 お絵描き 絵画
photography photo photos | 写真
movie movies film films cinema | 映画
museum | 美術館 博物館
game games gaming | ゲーム
knitting | 編み物
pottery | 陶芸
work job | 仕事
study studying | 勉強
learning | 学び 学習
school | 学校
meeting meetings | 会議
project projects | プロジェクト
programming coding | プログラミング
code | コード
bug bugs | バグ
debugging | デバッグ
design | デザイン
computer computers | コンピューター コンピュータ パソコン
robot robots | ロボット
space universe | 宇宙
science | 科学
math mathematics | 数学
history | 歴史
philosophy | 哲学
language languages | 言語 言葉
english | 英語
japanese | 日本語
news | ニュース
friend friends friendship | 友達 友人 友だち
family | 家族
master | マスター ご主人様
child children kids | 子供 子ども
baby babies | 赤ちゃん
mother | 母 お母さん
father | 父 お父さん
conversation conversations chat | 会話 おしゃべり
love | 愛 恋
gratitude | 感謝
kindness | 優しさ
happiness | 幸せ 幸福
joy | 喜び
sadness | 悲しみ
anger | 怒り
fear | 恐怖
anxiety worry | 不安 心配
loneliness solitude | 孤独 寂しさ
hope | 希望
peace | 安らぎ 平和
silence stillness | 静けさ 静寂
memory memories | 思い出 記憶
future | 未来 将来
past | 過去
time | 時間
change | 変化
growth | 成長
habit habits routine | 習慣 日課
health | 健康
illness | 病気
hobby hobbies | 趣味
money | お金
question questions | 問い 疑問
dream_journal | 夢日記
"""
"""``english forms | japanese forms``, one theme a line, forms separated by spaces (``_`` joins the words of a
phrase); the first English form is the key (and the English word), the first Japanese form the Japanese word."""

_SPACES: Final = re.compile(r"[\s_\-]+")
_EDGES: Final = "#＃ \t\"'`“”‘’「」『』()[]{}（）【】<>《》〈〉・,、;:：；.。!！?？"


def normalize_tag(tag: str) -> str:
    """``tag`` as compared: NFKC, case folded, a leading ``#`` and edge punctuation dropped, ``_``, ``-`` and
    whitespace runs as one space."""
    folded = unicodedata.normalize("NFKC", tag).casefold()
    return _SPACES.sub(" ", folded.strip(_EDGES)).strip()


def _build() -> tuple[Mapping[str, str], Mapping[str, Mapping[str, str]]]:
    keys: dict[str, str] = {}
    words: dict[str, dict[str, str]] = {}
    for line in _ENTRIES.strip().splitlines():
        english, japanese = (part.strip() for part in line.split("|"))
        forms_en = english.split()
        forms_ja = japanese.split()
        key = normalize_tag(forms_en[0])
        words[key] = {"en": normalize_tag(forms_en[0]), "ja": forms_ja[0]}
        for form in (*forms_en, *forms_ja):
            normal = normalize_tag(form)
            if keys.get(normal, key) != key:
                raise ValueError(f"the theme lexicon gives {form!r} two keys: {keys[normal]!r} and {key!r}")
            keys[normal] = key
    return MappingProxyType(keys), MappingProxyType({k: MappingProxyType(v) for k, v in words.items()})


_KEYS, _WORDS = _build()
LEXICON: Final[Mapping[str, str]] = _KEYS
"""Normalised word → theme key, for every form of every theme of the lexicon."""
LEXICON_KEYS: Final = frozenset(_WORDS)
"""The keys of the lexicon's themes."""


def lexicon_key(tag: str) -> str | None:
    """The lexicon's key for ``tag`` (or for its English plural's singular: ``teas``, ``hobbies``), else None."""
    normal = normalize_tag(tag)
    found = _KEYS.get(normal)
    if found is not None or not normal.isascii():
        return found
    for suffix, replacement in (("ies", "y"), ("es", ""), ("s", "")):
        if normal.endswith(suffix) and len(normal) > len(suffix) + 2:
            found = _KEYS.get(normal[: -len(suffix)] + replacement)
            if found is not None:
                return found
    return None


def theme_key(tag: str) -> str:
    """The theme ``tag`` names: its lexicon key, else the normalised tag (``お茶`` → ``tea``, ``Kettle`` →
    ``kettle``)."""
    return lexicon_key(tag) or normalize_tag(tag)


def theme_word(key: str, language: str) -> str | None:
    """The lexicon's word for the theme ``key`` in ``language`` (``en`` or ``ja``), or None."""
    found = _WORDS.get(key)
    return None if found is None else found.get(language)
