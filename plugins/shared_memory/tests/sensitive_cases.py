"""The case table of the secret and personal-data filter: what must be refused and what must be
stored, each case once, used by the detector's tests, the gateway's (HTTP, both backends), the agent tool's and the
import's.

A refused case marks the data it must never let through with ``⟦…⟧`` (the marks are not part of the text): no
response, log line or stored row may hold it, and masking the text by its findings' spans must hide all of it.
"""

from __future__ import annotations

import base64
import re
import unicodedata

import attrs

from ego_shared_memory.detector import (
    ADDRESS,
    API_KEY,
    BEARER,
    CARD,
    EMAIL,
    ENTROPY,
    INTERNAL_URL,
    JWT,
    MY_NUMBER,
    PASSWORD,
    PHONE,
    PRIVATE_KEY,
    SECRET,
)

_MARKED = re.compile(r"⟦(.*?)⟧", re.DOTALL)


@attrs.frozen
class Case:
    """``kind``: what must be found (``None``: the text must be stored as it is)."""

    ident: str
    text: str
    kind: str | None
    needle: str | None

    @property
    def needles(self) -> tuple[str, ...]:
        """The marked data as written, and as it reads once normalised (``taro＠…`` would be echoed as ``taro@…``)."""
        if self.needle is None:
            return ()
        plain = "".join(c for c in unicodedata.normalize("NFKC", self.needle) if unicodedata.category(c) != "Cf")
        return tuple(dict.fromkeys((self.needle, plain)))


def _b64(text: str, *, urlsafe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(text.encode()).decode()


JAPANESE_REFUSED: tuple[tuple[str, str], ...] = (
    # Japanese forms an audit found stored: kanji and full-width numerals, Japanese separators, spelt-out signs,
    # block numbers in kanji, postal codes without 〒, buildings after a block number, passwords after パスは
    # My Number: 12 digits with a check digit; any 12 digits after a word for it
    (MY_NUMBER, "マイナンバーは⟦123456789018⟧です"),
    (MY_NUMBER, "個人番号：⟦1234 5678 9018⟧"),
    (MY_NUMBER, "マイナンバー ⟦１２３４－５６７８－９０１８⟧"),
    (MY_NUMBER, "マイナンバーは⟦一二三四五六七八九〇一八⟧"),
    (MY_NUMBER, "個人番号 ⟦一二三四・五六七八・九〇一八⟧"),
    (MY_NUMBER, "マイナンバー（個人番号）は ⟦4321.8765.2109⟧ です"),
    (MY_NUMBER, "届け出た番号は⟦123456789018⟧"),
    (MY_NUMBER, "⟦1234-5678-9018⟧ を書類に記入"),
    (MY_NUMBER, "⟦１２３４５６７８９０１８⟧"),
    # card numbers: Japanese separators, kanji numerals
    (CARD, "カード番号は⟦4111・1111・1111・1111⟧"),
    (CARD, "⟦4111、1111、1111、1111⟧で支払い"),
    (CARD, "⟦4111/1111/1111/1111⟧"),
    (CARD, "カード ⟦4111，1111，1111，1111⟧"),
    (CARD, "カード番号は⟦四一一一一一一一一一一一一一一一⟧"),
    (CARD, "⟦四一一一 一一一一 一一一一 一一一一⟧"),
    (CARD, "⟦５５００・００００・００００・０００４⟧"),
    # phone numbers: kanji numerals, Japanese separators, digits apart
    (PHONE, "電話は⟦〇九〇－一二三四－五六七八⟧"),
    (PHONE, "⟦〇九〇ー一二三四ー五六七八⟧"),
    (PHONE, "携帯⟦090・1234・5678⟧"),
    (PHONE, "⟦090の1234の5678⟧に電話して"),
    (PHONE, "⟦0 9 0 1 2 3 4 5 6 7 8⟧"),
    (PHONE, "電話番号は⟦〇三・一二三四・五六七八⟧"),
    (PHONE, "⟦０９０　１２３４　５６７８⟧"),
    (PHONE, "電話 ⟦0 3 1 2 3 4 5 6 7 8⟧"),
    # e-mail addresses with their signs written another way
    (EMAIL, "⟦taro＠gmail。com⟧"),
    (EMAIL, "⟦taro アットマーク gmail ドット com⟧"),
    (EMAIL, "⟦taro at gmail dot com⟧"),
    (EMAIL, "メールは⟦hanako★yahoo.co.jp⟧まで（★を@に）"),
    (EMAIL, "⟦jiro(アット)docomo.ne.jp⟧"),
    (EMAIL, "⟦taro@gmail ドット com⟧"),
    (EMAIL, "⟦ｔａｒｏアットマークｇｍａｉｌドットｃｏｍ⟧"),
    # postal addresses: kanji block numbers, postal codes, buildings after a block number
    (ADDRESS, "⟦東京都新宿区西新宿二丁目八番一号⟧"),
    (ADDRESS, "郵便番号⟦100-0001⟧"),
    (ADDRESS, "郵便番号は⟦一〇〇－〇〇〇一⟧"),
    (ADDRESS, "⟦〒一〇〇－〇〇〇一⟧"),
    (ADDRESS, "⟦西新宿2-8-1 都庁ビル⟧に来て"),
    (ADDRESS, "⟦新宿区西新宿2-8-1 都庁ビル⟧"),
    (ADDRESS, "住所は⟦港区六本木六丁目十番一号⟧"),
    (ADDRESS, "⟦大阪市北区梅田三丁目一番三号⟧"),
    (ADDRESS, "住所は⟦神南一丁目二－三⟧です"),
    (ADDRESS, "⟦渋谷区神南1-2-3 サンプルハイツ405号室⟧"),
    (ADDRESS, "⟦世田谷区桜丘二丁目十五番⟧"),
    # passwords after Japanese words for one
    (PASSWORD, "パスは⟦hunter22⟧"),
    (PASSWORD, "Wi-Fiのパスは「⟦sakura2026⟧」"),
    (PASSWORD, "PINは⟦730512⟧"),
    (PASSWORD, "暗証番号は⟦四八二一⟧"),
    (PASSWORD, "合言葉は⟦Yama-Kawa99⟧"),
    (PASSWORD, "パスコード：⟦739104⟧"),
    (PASSWORD, "ﾊﾟｽﾜｰﾄﾞは⟦hunter22⟧"),
    (PASSWORD, "PW: ⟦Tr0ub4dor⟧"),
)
"""Each form also goes through the gateway over HTTP and the janitor's scan (test_detector_gateway.py)."""

REFUSED: tuple[tuple[str, str], ...] = (
    *JAPANESE_REFUSED,
    # phone numbers: in Japanese sentences, full-width, with the long-vowel mark, in parentheses, split
    (PHONE, "Masterの電話番号は⟦090-1234-5678⟧"),
    (PHONE, "⟦０９０－１２３４－５６７８⟧"),
    (PHONE, "⟦090ー1234ー5678⟧"),
    (PHONE, "⟦03(1234)5678⟧"),
    (PHONE, "電話は⟦03-1234-5678⟧です"),
    (PHONE, "携帯⟦09012345678⟧に連絡"),
    (PHONE, "call ⟦+81 90-1234-5678⟧ after six"),
    (PHONE, "Call ⟦(555) 123-4567⟧."),
    (PHONE, "⟦555-123-4567⟧ is the front desk"),
    (PHONE, "TEL: ⟦0312345678⟧"),
    (PHONE, "⟦+81 20-0000-0000⟧ 2026-02-02"),
    (PHONE, "⟦+1 415 555 0132⟧ (office)"),
    (PHONE, "⟦０３（１２３４）５６７８⟧"),
    (PHONE, "⟦090\u200b-1234-5678⟧"),
    (PHONE, "⟦0120-123-456⟧ フリーダイヤル"),
    (PHONE, "⟦(03) 1234-5678⟧ 代表"),
    (PHONE, "phone: ⟦090 1234 5678⟧"),
    (PHONE, "⟦+44 20 7946 0958⟧ London office"),
    (PHONE, "Masterの携帯は⟦080-9876-5432⟧。"),
    (PHONE, "⟦090-1234\n-5678⟧"),
    (PHONE, "⟦555.123.4567⟧ ext 12"),
    (PHONE, "⟦090ｰ1234ｰ5678⟧"),
    (PHONE, "⟦090\u20131234\u20135678⟧"),
    (PHONE, "電話番号：⟦0９0-1２34-56７8⟧"),
    # e-mail addresses
    (EMAIL, "⟦taro＠gmail.com⟧"),
    (EMAIL, "⟦taro\u200b@gmail.com⟧"),
    (EMAIL, "Ask ⟦taro.yamada@gmail.com⟧ about it."),
    (EMAIL, "メールは⟦hanako@example.co.jp⟧まで"),
    (EMAIL, "⟦ｔａｒｏ＠ｇｍａｉｌ．ｃｏｍ⟧"),
    (EMAIL, "連絡先：⟦jiro@yahoo.co.jp⟧"),
    (EMAIL, "⟦taro@gmail\u200c.com⟧"),
    (EMAIL, "send to ⟦ops-team+alerts@company.io⟧"),
    (EMAIL, "⟦taro@\ngmail.com⟧"),
    (EMAIL, "⟦taro\u2060@\ufeffgmail.com⟧"),
    (EMAIL, "⟦taro [at] gmail [dot] com⟧"),
    (EMAIL, "連絡は⟦hanako(at)example.co.jp⟧へ"),
    # API keys
    (API_KEY, "AWS: ⟦AKIAQ3EGRT7YHJKL2MNB⟧ is the deploy user."),
    (API_KEY, "⟦AKIA IOSF ODNN 7EXA MPLE⟧"),
    (API_KEY, "⟦AKIA-Q3EG-RT7Y-HJKL-2MNB⟧"),
    (API_KEY, "⟦AKIA\u200bQ3EGRT7YHJKL2MNB⟧"),
    (API_KEY, "⟦ＡＫＩＡＱ３ＥＧＲＴ７ＹＨＪＫＬ２ＭＮＢ⟧"),
    (API_KEY, "key ⟦sk-proj-4fQ2b9Kx7Lm\nN3pR8sT1vW6yZ0aBc⟧"),
    (API_KEY, "⟦sk-proj-4fQ2b9Kx7LmN3pR8sT1vW6yZ0aBc⟧"),
    (API_KEY, "⟦sk-ant-api03-\u200bAbCdEf123456GhIjKl7890⟧"),
    (API_KEY, "token ⟦ghp_9aZ3kL7mN2pQ5rS8tU1vW4xY6zA0bC3dE5fG⟧"),
    (API_KEY, "slack ⟦xoxb-123456789012-abcdefghijklmnop⟧"),
    (API_KEY, "⟦AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q⟧"),
    (API_KEY, "⟦glpat-AbCdEfGhIjKlMnOpQrSt12⟧"),
    (API_KEY, "hf ⟦hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456⟧"),
    (API_KEY, "OpenAIのキーは⟦sk-proj-4fQ2b9Kx7LmN3pR8sT1vW6yZ0aBc⟧です"),
    (API_KEY, "⟦ghp_9aZ3kL7mN2pQ5rS8tU1v\nW4xY6zA0bC3dE5fG⟧"),
    (API_KEY, "bot ⟦123456789:AAAbCdEfGhIjKlMnOpQrStUvWxYz0123456⟧"),
    (API_KEY, "⟦sk-proj-4fQ2b9Kx7LmN3pR8sT1vW6yZ0aBc⟧\n(rotated)"),
    (API_KEY, "⟦AKIA\nQ3EGRT7YHJKL2MNB⟧"),
    # private keys
    (PRIVATE_KEY, "⟦-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----⟧"),
    (PRIVATE_KEY, "⟦-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA⟧"),
    (PRIVATE_KEY, "⟦-----BEGIN RSA PRIVATE\nKEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE\nKEY-----⟧"),
    (PRIVATE_KEY, "⟦-----BEGIN EC PRIV\u200bATE KEY-----\nMHcCAQEEIBb\n-----END EC PRIVATE KEY-----⟧"),
    (PRIVATE_KEY, "⟦-----BEGIN PRIV\nATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----⟧"),
    # JWTs and bearer tokens
    (JWT, "session ⟦eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpM⟧"),
    (JWT, "トークン⟦eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0YXJvIn0.abcDEF123ghi⟧を使う"),
    (JWT, "⟦eyJhbGciOiJIUzI1NiJ9.\neyJzdWIiOiJ0YXJvIn0.abcDEF123ghi⟧"),
    (BEARER, "Authorization: Bearer ⟦abcDEF123456ghiJKL789⟧"),
    (BEARER, "curl -H 'Authorization: Basic ⟦dXNlcjpwYXNzd29yZDEyMw==⟧'"),
    (BEARER, "ヘッダーは Bearer ⟦abcDEF123456ghiJKL789⟧ です"),
    # passwords: assignments, Japanese sentences, passphrases, URLs
    (PASSWORD, "DBのパスワードは ⟦hunter2⟧ です"),
    (PASSWORD, "password: ⟦correct horse battery staple⟧"),
    (PASSWORD, "db.password=⟦hunter22⟧"),
    (PASSWORD, "DB_PASSWORD: ⟦s3cr3t!Pass⟧"),
    (PASSWORD, "postgres://app:⟦s3cretpw⟧@db.example.com/app"),
    (PASSWORD, "パスワード：⟦Tr0ub4dor&3⟧"),
    (PASSWORD, "暗証番号は⟦482913⟧です"),
    (PASSWORD, "ｐａｓｓｗｏｒｄ＝⟦ｈｕｎｔｅｒ２２⟧"),
    (PASSWORD, "pass\u200bword=⟦hunter22⟧"),
    (PASSWORD, 'PASSWORD = "⟦correct horse battery staple⟧"'),
    (PASSWORD, "Wi-Fiのパスワードは「⟦sakura2026⟧」"),
    (PASSWORD, "pwd=⟦hunter22⟧"),
    (PASSWORD, "passphrase: ⟦purple monkey dishwasher rocket⟧"),
    (PASSWORD, "mysql://root:⟦Hunter2pw⟧@db.example.com:3306/app"),
    (PASSWORD, "パス\nワードは ⟦hunter2⟧ です"),
    (PASSWORD, "管理画面のパスワードが⟦Admin@2026⟧になった"),
    (PASSWORD, "password:\n⟦correct horse battery staple⟧"),
    (PASSWORD, "pass\nword=⟦hunter22⟧"),
    # secrets: key/token assignments, Japanese, URL parameters
    (SECRET, "GEMINI_API_KEY=⟦AbC123xyz789QwE⟧"),
    (SECRET, "api_key: ⟦9f8e7d6c5b4a3f2e1d0c⟧"),
    (SECRET, "トークンは ⟦ghX0aZ9kLm2Qp4Rt⟧ です"),
    (SECRET, "client_secret=⟦a1b2c3d4e5f6g7h8⟧"),
    (SECRET, "https://api.example.com/v1?api_key=⟦a1b2c3d4e5f6g7h8⟧"),
    (SECRET, "アクセスキー：⟦wJalrXUtnFEMI7K7MDENG⟧"),
    (SECRET, '"token": "⟦a8f3k2m9x7q1w5e6⟧"'),
    (SECRET, "secret_key = ⟦9a8b7c6d5e4f3a2b⟧"),
    (SECRET, "ＡＰＩ＿ＫＥＹ＝⟦ａｂｃ１２３ｘｙｚ７８９⟧"),
    # high-entropy tokens
    (ENTROPY, "the value is ⟦Zx9Qw3Er7Ty1Ui5Op2As8Df4Gh6Jk0⟧"),
    (ENTROPY, "⟦Zx9Qw3Er7Ty1Ui5\nOp2As8Df4Gh6Jk0⟧"),
    (ENTROPY, "値は⟦Zx9Qw3Er7Ty1Ui5Op2As8Df4Gh6Jk0⟧です"),
    # hex- and base64-encoded secrets and personal data
    (PASSWORD, f"echo ⟦{_b64('password=hunter22')}⟧ | base64 -d"),
    (API_KEY, f"⟦{b'AKIAQ3EGRT7YHJKL2MNB'.hex()}⟧"),
    (EMAIL, f"blob ⟦{_b64('mail taro@gmail.com now')}⟧"),
    (API_KEY, f"⟦{_b64('sk-proj-4fQ2b9Kx7LmN3pR8sT1vW6yZ0aBc', urlsafe=True)}⟧"),
    (PHONE, f"⟦{b'090-1234-5678 is mine'.hex()}⟧"),
    (PASSWORD, f"⟦{_b64('DBのパスワードは hunter2 です')}⟧"),
    (API_KEY, f"⟦{b'AKIAQ3EGRT7YHJKL2MNB'.hex().upper()}⟧"),
    # card numbers
    (CARD, "カード番号⟦4111111111111111⟧で払った"),
    (CARD, "⟦4111.1111.1111.1111⟧"),
    (CARD, "Paid with ⟦4111 1111 1111 1111⟧."),
    (CARD, "⟦４１１１－１１１１－１１１１－１１１１⟧"),
    (CARD, "⟦5500 0000 0000 0004⟧ expires 12/28"),
    (CARD, "⟦3782 822463 10005⟧ (Amex)"),
    (CARD, "2026-02-02 ⟦4111 1111 1111 1111⟧ 14:05"),
    (CARD, "⟦4111 1111\n1111 1111⟧"),
    (CARD, "⟦4111\u200b1111\u200b1111\u200b1111⟧"),
    (CARD, "⟦4111111111111111⟧"),
    (CARD, "カード：⟦４１１１１１１１１１１１１１１１⟧"),
    # postal addresses
    (ADDRESS, "⟦〒100-0001 東京都千代田区千代田1-1⟧"),
    (ADDRESS, "住所は⟦東京都渋谷区神南1丁目2-3⟧です"),
    (ADDRESS, "⟦大阪市北区梅田3丁目1番3号⟧に移転"),
    (ADDRESS, "⟦1600 Amphitheatre Parkway, Mountain View, CA 94043⟧"),
    (ADDRESS, "ship to ⟦221 Baker Street⟧, London"),
    (ADDRESS, "⟦Springfield, IL 62704⟧"),
    (ADDRESS, "⟦〒１００－０００１⟧"),
    (ADDRESS, "⟦横浜市中区山下町1-1⟧"),
    (ADDRESS, "⟦東京都港区六本木６－１０－１⟧"),
    (ADDRESS, "office: ⟦350 Fifth Avenue⟧, New York"),
    # internal and private URLs (MUST-S3)
    (INTERNAL_URL, "⟦http://10.0.0.5/admin⟧"),
    (INTERNAL_URL, "dashboard: ⟦http://192.168.1.10:8080⟧"),
    (INTERNAL_URL, "⟦https://wiki.corp.internal/x⟧"),
    (INTERNAL_URL, "⟦http://localhost:3000/debug⟧"),
    (INTERNAL_URL, "⟦localhost:8080⟧"),
    (INTERNAL_URL, "⟦192.168.0.20:5432⟧"),
    (INTERNAL_URL, "⟦http://172.16.4.2/grafana⟧"),
    (INTERNAL_URL, "⟦db.internal:5432⟧"),
    (INTERNAL_URL, "社内wikiは⟦https://wiki.example.corp/page⟧"),
    (INTERNAL_URL, "⟦http://127.0.0.1:8787/v1/health⟧"),
    (INTERNAL_URL, "⟦http://[::1]:8000/⟧"),
    (INTERNAL_URL, "⟦ｈｔｔｐ：／／１０．０．０．５／admin⟧"),
    (INTERNAL_URL, "⟦http://10.0.0.5\u200b/admin⟧"),
    (INTERNAL_URL, "⟦http://169.254.169.254/latest/meta-data⟧"),
    (INTERNAL_URL, "⟦https://printer.local/⟧"),
    (INTERNAL_URL, "管理画面は⟦http://192.168.11.1/⟧から"),
    (INTERNAL_URL, "⟦metadata.google.internal⟧"),
)

JAPANESE_STORED: tuple[str, ...] = (
    # numbers in Japanese prose that are none of these: ordinals, dates, prices, times, counts, chapters, years
    "新宿区3番目に大きい公園に行った。",
    "二〇二六年に完成予定",
    "第三章を読んだ",
    "3番線から発車する",
    "100円ショップで買った",
    "会議は14時30分から",
    "参加者は三十五人",
    "第12回大会は2026年3月15日",
    "平成三十一年四月一日に施行",
    "一番好きな食べ物はカレー",
    "千葉県一番の観光地",
    "一、二回しか行っていない",
    "2019、2020、2021、2022年に開催",
    "価格は１２，３４５円",
    "電話番号は後で伝える",
    "マイナンバーカードを申請した",
    "個人番号は12桁の数字",
    "パスは通っている",
    "パスは src/ego/config.py にある",
    "パスは C:\\tools\\bin に通す",
    "パスポートは5年で更新",
    "キャンパスは2つある",
    "暗証番号は4桁",
    "パスワードは12文字以上",
    "PINは4桁の数字",
    "東京都の人口は約千四百万人",
    "第一、第二会議室",
    "三丁目の夕日を観た",
    "四谷三丁目駅で降りた",
    "国道二四六号線を走る",
    "昭和四十五年生まれ",
    "郵便番号は各自で調べる",
    "ビルド 2026 0212 1530 を配布",
    "一九六四年の東京オリンピック",
    "七五三のお祝い",
    "九十九里浜に行った",
    "3・11の記憶",
    "港区1、2丁目",
    "Taro works at google.com",
    "We met at noon; the dot com era had ended.",
    "新宿駅から徒歩3分、2-3人で行く",
    "図2-1-3を参照",
    "手順1-2-3の順に進める",
    "サンシャイン60は池袋にある",
)

STORED: tuple[str, ...] = (
    *JAPANESE_STORED,
    # the audit's false positives
    "password_policy: min12chars",
    "token_budget=400tokens",
    "version 10.1234.5678",
    "build 2026.0212.1530",
    "order 0312345678",
    '<script integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC"></script>',
    # where a secret lives, and words about secrets
    "The bot token is in ~/.env, not in the repo.",
    "TELEGRAM_BOT_TOKEN: $TELEGRAM_BOT_TOKEN (set by systemd)",
    "api_key = <your key here>",
    "password: ********",
    "password: stored in the vault",
    "パスワードは8文字以上にする",
    "パスワードは 1Password の Ops 保管庫にある",
    "The API key is rotated monthly by ops.",
    "The 1Password vault holds the DB password.",
    "password reset link expires in 30 minutes",
    "token: see vault",
    "The password must contain a digit and a symbol.",
    "トークン数の上限は4096",
    "APIキーの場所: ~/.config/openai/key",
    "max_tokens=4096",
    "session_timeout=30m",
    "token_limit: 4096",
    "password_min_length=12",
    "passwordHint: your pet's name",
    "token_expiry: 3600s",
    "api_key_env: OPENAI_API_KEY",
    "電話番号は連絡先シートを参照",
    "メールアドレスは社内名簿にある",
    "カード決済は Stripe 経由（番号は保存しない）",
    "住所は登録しない方針",
    # the protocol note's own examples
    "TELEGRAM_BOT_TOKEN は ~/claude-telegram-bot/.env に保存（2026-02-02から有効）",
    "Gateway API Key が無効（401エラー）。原因: API Keyの有効期限切れ。対処: 新しいKeyを発行して更新。",
    "4者共有メモリは Gateway(D1) をSSOTとし、append-onlyで運用（2026-02-02決定）",
    "保存先は ~/.config/ego/config.toml で、トークンは環境変数にあります。2026年2月2日から有効。",
    # numbers that are not phones or cards
    "Build 20261124 took 1234567 ms; order 4111 was shipped.",
    "Japan's country code is +81.",
    "ISBN 978-4-06-521430-2",
    "Sprint 2026-02-02 to 2026-02-16; 14:05 standup",
    "The ticket number is 4111",
    "We moved from MySQL 5.7 to PostgreSQL 16.2 on 2026-01-15.",
    "Average latency 12.5 ms, p99 48 ms, 1,234,567 requests/day",
    "Released build 2026.0212.1530 to staging",
    "ID: 0312345678 (order)",
    "Your order 0312345678 ships tomorrow.",
    "v1.2.3 released on 2026-02-02 at 14:05",
    "2026年の売上は前年比120%",
    "各都道府県で1-2位",
    # hashes and identifiers
    "commit 3f2a9c01d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9 fixed it",
    "request id 550e8400-e29b-41d4-a716-446655440000",
    "event evt_0123456789abcdef01234567 supersedes the old one",
    "ThisIsAVeryLongIdentifierName and project-memory-gateway-2026-v2-Release",
    "Use `sha256sum` and compare with e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "base64 of the logo is in assets/logo.b64",
    # public URLs, hosts and places that are not addresses
    "Docs: https://github.com/org/repo/blob/main/README.md",
    "See https://docs.python.org/3/library/re.html for the syntax.",
    "https://example.com/callback?state=abc",
    "see http://example.com:8080/docs",
    "runs on localhost by default",
    "localhost は使わない",
    "the .internal suffix is reserved",
    "10.0.0.0/8 is a private range",
    "192.168.1.10 is the printer's address",
    "IPアドレス 192.168.1.10 は固定",
    "Contact: user@example.com (documentation address)",
    "git clone git@github.com:org/repo.git",
    "Write to user [at] example [dot] com in the docs (a documentation address).",
    "The meeting (at) noon is in room 4.",
    "港区のオフィスに移転予定",
    "東京都の人口は約1400万人",
    "図書館は市立中央図書館（2階）",
    "第3区画の1-2番目",
    # ordinary work notes
    "The deploy runs from .github/workflows/deploy.yml on every tag.",
    "Run `ego shared janitor --full-scan` weekly",
    "kubectl get pods -n production",
    "port 8787 answers /v1/health",
    "Decided: the gateway is the single source of truth (2026-02-02).",
    "ユーザーの好み：返信は短く、日本語で",
    "Masterは朝型で、9時から12時が集中時間",
    "The model is all-MiniLM-L6-v2; recall p50 29 ms at 10,000 memories.",
)


def _case(ident: str, marked: str, kind: str | None) -> Case:
    needles = _MARKED.findall(marked)
    return Case(ident, _MARKED.sub(lambda m: m.group(1), marked), kind, needles[0] if needles else None)


CASES: tuple[Case, ...] = (
    *(_case(f"refuse-{i:03d}", text, kind) for i, (kind, text) in enumerate(REFUSED)),
    *(_case(f"store-{i:03d}", text, None) for i, text in enumerate(STORED)),
)
REFUSE_CASES: tuple[Case, ...] = tuple(case for case in CASES if case.kind is not None)
STORE_CASES: tuple[Case, ...] = tuple(case for case in CASES if case.kind is None)
JAPANESE_CASES: tuple[Case, ...] = REFUSE_CASES[: len(JAPANESE_REFUSED)]
"""The Japanese forms (first in :data:`REFUSED`)."""

FIELD_CASES: tuple[tuple[str, str, str], ...] = (
    # (field, value, kind): sensitive data in the ids an agent chooses
    ("dedupe_key", "config:sk-proj-4fq2b9kx7lmn3pr8st1vw6yz0abc", API_KEY),
    ("dedupe_key", "contact:090-1234-5678", PHONE),
    ("dedupe_key", "contact:09012345678", PHONE),
    ("dedupe_key", "card:4111111111111111", CARD),
    ("dedupe_key", "db:password:hunter22", PASSWORD),
    ("dedupe_key", "config:xoxb-123456789012-abcdefghijklmnop", API_KEY),
    ("scope", "project:09012345678", PHONE),
    ("scope", "project:4111-1111-1111-1111", CARD),
    ("scope", "project:sk-proj-4fq2b9kx7lmn3pr8st1vw6yz0abc", API_KEY),
    ("scope", "project:taro-090-1234-5678", PHONE),
)
"""Refused in the gateway's append and the agent tool (``ego shared import`` too); never stored nor echoed."""
FIELD_STORED: tuple[tuple[str, str], ...] = (
    ("dedupe_key", "config:telegram_bot_token_location"),
    ("dedupe_key", "decision:password_policy"),
    ("dedupe_key", "bug:gateway_auth_401_issue"),
    ("scope", "project:memory-gateway"),
    ("scope", "project:ego-2026"),
)
