"""Words that stand for one another in recall: a small bilingual table of everyday words (English and Japanese),
each line one meaning, its Japanese synonyms among its words.

Recall's lexical channel reads words, and its embedding model blurs a short query against a long memory: "scolded"
and 「…マスターに叱られてしまった。…」 have a cosine of 0.21 with the default model (under its floor of 0.25),
though "scolded" and 叱られた alone have 0.71. Looked up word by word in the model's own space, the model does
not find the translation either: among the 9,000 Japanese words of the JSQuAD and Tanaka paragraphs the nearest to
"scold" are 乱す, 陥る and 落胆 (0.75 to 0.71), and 叱る comes at 0.63. So the words of a diary that a user asks
for across languages, or by a synonym (最初 for 初めて), are written down here: a query word finds the memories
holding another word of its line (:func:`ego_memory.text.terms.alternatives`): a Japanese synonym at half the weight of
the word itself, a word of the other language as evidence of its own beside the embedding's
(``recall.translation_weight``), and in a store holding both languages as much as the word itself weighs there
(``recall.across_languages``).

Each line is ``english words | japanese words``. English words are lower-case single words: the base form and
its irregular forms (regular inflections are reduced by :func:`english_bases`). Japanese words are single words
as the word index holds them: Sudachi's normalised forms in its short unit (奇麗, not 綺麗; 抱く, since
抱き締める is two words), which a test checks. A Latin word of a query brings the line's Japanese words only
(English paraphrase is the English channel's: ``english_channel``); a Japanese word brings the line's other words,
Japanese and English. A word that means several things belongs to no line, or to the line of each meaning it is
commonly used in a diary for (怒る: angry, and scolded as in 怒られた).

Sudachi's own synonym groups were considered: the installed dictionary tags words with group numbers only (the
groups' words are in a separate file that no Python package ships), without the flags that say which words may
be expanded, and 最初 and 初めて share no group; "first" belongs to groups of baseball words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

GROUPS: Final = """
happy glad joy joyful delighted | 嬉しい 喜ぶ 喜び
fun enjoy enjoyable | 楽しい 楽しむ
sad sadness sorrow | 悲しい 悲しむ
lonely loneliness | 寂しい 孤独
angry anger furious | 怒る 怒り
scared afraid fear frightened scary | 怖い 恐れる 恐怖 恐ろしい
worried worry anxious anxiety | 心配 不安
surprised surprise surprising | 驚く 驚き
tired exhausted | 疲れる 疲労
sleepy | 眠い
embarrassed ashamed embarrassing | 恥ずかしい
nervous | 緊張
relieved relief | 安心
proud pride | 誇り 誇らしい
grateful thankful gratitude thank thanks | 感謝
jealous envious envy | 嫉妬 羨ましい
bored boring boredom | 退屈
excited exciting excitement | 興奮
nostalgic nostalgia | 懐かしい
calm peaceful | 穏やか
love | 愛 愛する 大好き
hate | 嫌い 憎む
regret | 後悔
kindness gentle | 優しい 親切
beautiful pretty lovely | 奇麗 美しい
cute | 可愛い
delicious tasty | 美味しい
cold | 寒い 冷たい
cold flu | 風邪
hot | 暑い 熱い
warm | 暖かい 温かい
quiet | 静か
busy | 忙しい
scold scolded | 叱る 叱責 怒る
praise compliment | 褒める 称賛
apologize apologise apology sorry | 謝る 謝罪
forgive forgave forgiven | 許す
promise | 約束
hug | 抱く
laugh laughter | 笑う
smile | 笑顔 微笑む
cry cried tears | 泣く 涙
quarrel argue argument fight fought | 喧嘩 口論
lied liar | 嘘
help | 手伝う 助ける
teach taught | 教える
learn learnt | 学ぶ 習う
meet met | 会う
visit | 訪れる 訪ねる 訪問
wait | 待つ
remember | 覚える 思い出
forget forgot forgotten | 忘れる
greet greeting | 挨拶
phone | 電話
talk chat conversation | 話す 喋る 会話
say said | 言う
ask | 尋ねる 聞く 頼む
listen hear heard | 聞く
sing sang sung song | 歌う 歌
dance | 踊る ダンス
draw drew drawn drawing | 描く 絵
paint painting | 描く 絵
write wrote written | 書く
read | 読む
poem poetry | 詩
haiku | 俳句
tanka | 短歌
english | 英語
translate translation | 訳す 翻訳
souvenir souvenirs | 土産
story | 物語
book | 本
letter | 手紙
diary | 日記
photo photograph picture | 写真
picture | 絵
movie film | 映画
music | 音楽
cook cooking | 料理
dumpling dumplings gyoza | ギョーザ
sushi | 寿司
ramen | ラーメン
tempura | 天麩羅
wrap wrapped | 包む
eat ate eaten | 食べる
drink drank drunk | 飲む
dinner supper | 夕食 夕飯 晩御飯
lunch | 昼食 昼御飯 ランチ
breakfast | 朝食 朝御飯
sleep slept | 寝る 眠る 睡眠
wake woke woken | 起きる 目覚める
walk stroll | 歩く 散歩
run ran | 走る
swim swam swum | 泳ぐ
travel trip journey | 旅行 旅
work job | 仕事 働く
study | 勉強
clean cleaning | 掃除
wash | 洗う
buy bought purchase | 買う 購入
sell sold | 売る
shopping | 買い物
gift | プレゼント 贈り物
win won | 勝つ
fail failure mistake | 失敗
succeed success | 成功
practice practise | 練習
birth born birthday | 生まれる 誕生
die death dead | 死ぬ 亡くなる 死
sick ill illness | 病気
hospital | 病院
doctor | 医者
medicine | 薬
wedding marriage married marry | 結婚
graduation graduate | 卒業
festival | 祭
fireworks | 花火
holiday vacation | 休日 休暇
weekend | 週末
party | パーティー
first | 最初 初めて 初め
final | 最後
begin began begun start | 始める 始まる 開始
end finish | 終わる 終える
yesterday | 昨日
today | 今日
tomorrow | 明日
morning | 朝
night | 夜 晩
tonight | 今夜 今晩
evening | 夕方 晩
afternoon | 午後
spring | 春
summer | 夏
autumn | 秋
winter | 冬
together | 一緒
rain rainy | 雨
snow snowy | 雪
sunny | 晴れ
cloudy | 曇り
wind windy | 風
typhoon | 台風
thunder lightning | 雷
sunset | 夕焼け 夕日
sky | 空
star | 星
moon | 月
sun | 太陽
sea ocean | 海
beach seaside | 浜辺 海辺
river | 川
mountain | 山
lake | 湖
forest woods | 森 林
flower | 花
blossom sakura | 桜
tree | 木
garden | 庭
park | 公園
bird | 鳥
cat | 猫
dog | 犬
fish | 魚
deer | 鹿
home house | 家 自宅 帰宅 帰る
room | 部屋
station | 駅
train | 電車 列車
bus | バス
car | 車
shrine | 神社
temple | 寺
school | 学校
company | 会社
onsen | 温泉
tea | 茶
coffee | コーヒー
cake | ケーキ
bread | パン
rice | 米 御飯
window | 窓
rainbow | 虹
umbrella | 傘
key | 鍵
camera | カメラ
game | ゲーム
name | 名前
friend | 友達 友人
master | マスター 主人
family | 家族
mother mom mum | 母 母さん
father dad | 父 父さん
child children kid | 子供
baby | 赤ちゃん 赤ん坊
memory memories | 思い出 記憶
dream dreamt | 夢
secret | 秘密
wish | 願い 願う
plan | 計画 予定
"""
"""The table: one meaning a line, ``english words | japanese words``."""

_LATIN: Final = re.compile(r"[a-z]+")


def _parse(table: str) -> tuple[Mapping[str, frozenset[str]], Mapping[str, frozenset[str]]]:
    """(English word → the Japanese words of its lines, Japanese word → the other words of its lines)."""
    english: dict[str, set[str]] = {}
    japanese: dict[str, set[str]] = {}
    for line in table.strip().splitlines():
        left, _, right = line.partition("|")
        latin, native = left.split(), right.split()
        if not latin or not native or not all(_LATIN.fullmatch(word) for word in latin):
            raise ValueError(f"a line of the equivalents table is not 'english words | japanese words': {line!r}")
        for word in latin:
            english.setdefault(word, set()).update(native)
        for word in native:
            japanese.setdefault(word, set()).update(w for w in [*native, *latin] if w != word)
    return (
        MappingProxyType({word: frozenset(found) for word, found in english.items()}),
        MappingProxyType({word: frozenset(found) for word, found in japanese.items()}),
    )


ENGLISH, JAPANESE = _parse(GROUPS)
"""The table read both ways."""


@functools.lru_cache(maxsize=4096)
def english_bases(word: str) -> frozenset[str]:
    """``word`` and the base forms a regular English inflection of it may come from: scolded → scold, cried →
    cry, hugged → hug, apologized → apologize, dances → dance, wishes → wish (several candidates; the table says
    which exist)."""
    found = {word}
    for suffix in ("ing", "ed"):
        stem = word.removesuffix(suffix)
        if stem != word and len(stem) >= 2:
            found |= {stem, stem + "e"}  # walked → walk, danced → dance
            if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
                found.add(stem[:-1])  # hugged, hugging → hug
    if word.endswith(("ied", "ies")):
        found.add(word[:-3] + "y")  # cried, cries → cry
    elif word.endswith(("sses", "xes", "zes", "ches", "shes")):
        found.add(word[:-2])  # wishes → wish
    elif word.endswith("s") and not word.endswith("ss") and len(word) >= 4:
        found.add(word[:-1])  # dances → dance, cares → care (not car)
    return frozenset(found)


def of_english(word: str) -> frozenset[str]:
    """The Japanese words that stand for an English word (lower-case, as written or inflected)."""
    found: set[str] = set()
    for base in english_bases(word):
        found |= ENGLISH.get(base, frozenset())
    return frozenset(found)


def of_japanese(word: str) -> frozenset[str]:
    """The other words (Japanese and English) that stand for a Japanese word (its normalised form)."""
    return JAPANESE.get(word, frozenset())
