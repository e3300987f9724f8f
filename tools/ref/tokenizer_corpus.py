#!/usr/bin/env python3
"""Writes the tokenizer agreement corpus and open_clip's ids for it, for tests/test_bpe_clip_corpus.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install open_clip_torch ftfy regex
    /tmp/v/bin/python tools/ref/tokenizer_corpus.py tests/fixtures

Writes DIR/bpe_clip_corpus.txt.gz: one record per line, the string escaped (\\\\, \\n, \\r, \\t and
every other C0 control, DEL and C1 control as \\xHH; the rest UTF-8 as is), a TAB, then the ids
open_clip.tokenizer.SimpleTokenizer gives (context 77: <start_of_text> ... <end_of_text>,
padding dropped). Also copies open_clip's bpe_simple_vocab_16e6.txt.gz (OpenAI CLIP's merges,
MIT licence) into DIR. The strings are drawn from a fixed seed: captions, EPIC-style
narrations, HTML entities, control characters and white space, every major script, mojibake
(UTF-8 read as another encoding), ligatures and full-width forms, random assigned code points.
"""
import gzip
import os
import random
import shutil
import sys
import unicodedata

import open_clip
from open_clip.tokenizer import SimpleTokenizer, default_bpe

R = random.Random(20261130)

COLOURS = "red green blue yellow purple orange black white grey pink brown golden".split()
THINGS = ("dog cat man woman child bird car bicycle house tree boat plane horse cup knife onion "
          "tomato pan fridge drawer tap sponge plate bowl spoon fork lid bag door window").split()
VERBS = ("runs jumps sits stands walks swims flies drives opens closes takes puts washes cuts "
         "stirs pours picks holds").split()
PLACES = ("on the beach", "in the park", "near a river", "at night", "in the kitchen", "under a bridge",
          "on a snowy mountain", "in New York City", "at the 2nd floor", "during the 1990s")
EPIC_VERBS = ("take put open close wash cut mix pour turn-on turn-off dry peel stir grab move "
              "insert remove fill squeeze").split()
SCRIPTS = {
    "latin": "àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿœšžßÀÉÎÕÜÇŒŠŽĞİıŞşĳŉǅǈ",
    "greek": "αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩάέήίόύώϊϋΐΰ",
    "cyrillic": "абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯіїєґ",
    "armenian": "աբգդեզէըթժիլխծկհձղճմյնշոչպջռսվտրցւփքօֆԱԲԳԴԵԶ",
    "hebrew": "אבגדהוזחטיכלמנסעפצקרשתםןףךץ",
    "arabic": "ابتثجحخدذرزسشصضطظعغفقكلمنهوي٠١٢٣٤٥٦٧٨٩ًٌٍَُِّْ",
    "devanagari": "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशषसहािीुूेैोौंः्०१२३",
    "bengali": "অআইঈউঊএঐওঔকখগঘচছজঝটঠডঢণতথদধনপফবভমযরলশষসহািীুূেৈোৌ্০১২",
    "tamil": "அஆஇஈஉஊஎஏஐஒஓஔகஙசஞடணதநபமயரலவழளறனாிீுூெேைொோௌ்௦௧௨",
    "thai": "กขฃคฅฆงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรฤลฦวศษสหฬอฮะัาำิีึืุู่้๊๋๐๑๒",
    "cjk": "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持音跑投越愿紧",
    "hangul": "가각간갇갈감갑강개객갱거건걸검겁게겨격견결겸경계고곡곤골곱공과관광괴교구국군굴궁권귀규균그극근글금급기긴길김까나낙난날남납낭내냄너널넣네녀년념녕노녹논놀농뇌누눈뉴느는늘능니님다단달담답당대더덕던덜덤도독돈돌동두둘뒤드득든들등디따때또뚜라락란람랑래랭량러런럼레려력련렬령례로록론롱뢰료루류륙률르른름릉리린림립마막만많말망매맥맨머먹먼멀메며면멸명모목몰몸못몽묘무묵문물미민밀바박반발밝밤방배백뱀버번벌범법벗베벼변별병보복본볼봉부북분불붉붓비빈빌빛빠사삭산살삼상새색생서석선설섬섭성세소속손솔송쇄수숙순술숨숭쉬스슬습승시식신실심십싸쌍써쓰씨아악안알암압앙애액야약양어억언얼엄업에여역연열염엽영예오옥온올옷와완왕외요욕용우운울웃웅원월위유육윤율은을음읍응의이익인일임입잇있자작잔잠잡장재쟁저적전절점접정제조족존졸종좌죄주죽준줄중즉즐증지직진질짐집짓징",
    "kana": "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんがぎぐげござじずぜぞだぢづでどばびぶべぼぱぴぷぺぽゃゅょっーアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲンガギグゲゴザジズゼゾダヂヅデドバビブベボパピプペポャュョッヴ",
    "georgian": "აბგდევზთიკლმნოპჟრსტუფქღყშჩცძწჭხჯჰ",
    "ethiopic": "ሀሁሂሃሄህሆለሉሊላሌልሎሐሑሒሓሔሕሖመሙሚማሜምሞ",
    "emoji": "😀😂🥰😍🤔👍👎🙏🔥✨🎉🐶🐱🍕🍔⚽🏀🚗✈️🌍🌙⭐❤️💔👨‍👩‍👧👩🏽‍💻🏳️‍🌈",
    "symbols": "©®™°±×÷µ¶§€£¥¢₹₽¼½¾²³¹ⁿ∞≈≠≤≥√∑∏∂∫←→↑↓★☆♪♫✓✗…–—•·¡¿«»‹›„“”‘’′″",
}
ENTITY_NAMES = ["amp", "lt", "gt", "quot", "apos", "nbsp", "copy", "reg", "eacute", "Eacute", "uuml", "szlig",
                "hellip", "mdash", "ndash", "lsquo", "rsquo", "ldquo", "rdquo", "euro", "pound", "yen", "times",
                "divide", "deg", "frac12", "alpha", "Omega", "rarr", "hearts", "ThickSpace", "NotEqualTilde",
                "fjlig", "nGt", "bne", "acE", "AMP", "LT", "EACUTE", "NTILDE", "notit", "ampfoo", "copycat"]
MOJIBAKE_ENCODINGS = ["latin-1", "windows-1252", "windows-1251", "windows-1250", "windows-1253", "macroman",
                      "cp437", "iso-8859-2", "windows-1254", "windows-1257"]


def pick(xs):
    return xs[R.randrange(len(xs))]


def caption():
    forms = [
        lambda: f"a {pick(COLOURS)} {pick(THINGS)} {pick(VERBS)} {pick(PLACES)}",
        lambda: f"A photo of {R.randint(2, 12)} {pick(THINGS)}s {pick(PLACES)}.",
        lambda: f"The {pick(THINGS)}'s {pick(COLOURS)} {pick(THINGS)} isn't {pick(VERBS)}!",
        lambda: f"{pick(THINGS).upper()} #{R.randint(1, 999)} -- {pick(COLOURS)}/{pick(COLOURS)} (c) 20{R.randint(10, 26)}",
        lambda: f"they're {pick(VERBS)} & we've {pick(VERBS)}; I'll {pick(EPIC_VERBS)} it, you'd {pick(EPIC_VERBS)}",
        lambda: f"  {pick(THINGS)}\t{pick(VERBS)}   {pick(PLACES)}  ",
        lambda: f"{pick(THINGS)}: {R.random() * 100:.2f}% off!!! ${R.randint(1, 500)}.99 @shop_{R.randint(1, 99)} www.example.com/{pick(THINGS)}?id={R.randint(1, 9999)}",
        lambda: f"\"{pick(COLOURS)}\" {pick(THINGS)}s'' ... {pick(VERBS)}---{pick(VERBS)}",
    ]
    return pick(forms)()


def narration():
    forms = [
        lambda: f"{pick(EPIC_VERBS)} {pick(THINGS)}",
        lambda: f"#C C {pick(EPIC_VERBS)}s the {pick(THINGS)} with the {pick(THINGS)}",
        lambda: f"#C C {pick(EPIC_VERBS)}s {pick(THINGS)} from {pick(THINGS)} #unsure",
        lambda: f"{pick(EPIC_VERBS)} {pick(THINGS)} {pick(['into', 'onto', 'from', 'with'])} {pick(THINGS)}",
        lambda: f"still {pick(EPIC_VERBS)}ing {pick(THINGS)}",
    ]
    return pick(forms)()


def entity():
    forms = [
        lambda: f"{pick(THINGS)} &{pick(ENTITY_NAMES)}; {pick(THINGS)}",
        lambda: f"&{pick(ENTITY_NAMES)}{pick(['', ';', ' ', 'x', ';;'])}{pick(THINGS)}",
        lambda: f"&#{R.randint(0, 0x11000)};&#x{R.randint(0, 0x2ffff):x};",
        lambda: f"&#{pick(['0', '128', '150', '153', '65533', '1114112', '55296', '11', '99999999999'])}{pick([';', ''])} {pick(THINGS)}",
        lambda: f"&amp;{pick(ENTITY_NAMES)}; &amp;amp;{pick(ENTITY_NAMES)}; &{pick(ENTITY_NAMES).upper()};",
        lambda: f"<b>{pick(THINGS)}</b> &{pick(ENTITY_NAMES)}; <i>x</i>",
        lambda: f"&#x{R.randint(0, 0xff):X}{pick([';', ''])}&#{R.randint(0, 300)}",
    ]
    return pick(forms)()


def controls():
    ctl = [chr(c) for c in list(range(0, 32)) + [127] + list(range(0x80, 0xa0))] + \
          ["\u00a0", "\u2000", "\u2009", "\u200b", "\u200d", "\u2028", "\u2029", "\u3000", "\ufeff", "\u202f",
           "\u205f", "\u1680", "\u180e", "\x85", "\u206a", "\ufff9", "\x1b[31m", "\x1b[0m", "\r\n"]
    words = [pick(THINGS) for _ in range(R.randint(1, 4))]
    out = ""
    for w in words:
        out += "".join(pick(ctl) for _ in range(R.randint(0, 3))) + w
    return out + "".join(pick(ctl) for _ in range(R.randint(0, 2)))


def script_text(name):
    chars = SCRIPTS[name]
    words = ["".join(pick(chars) for _ in range(R.randint(1, 8))) for _ in range(R.randint(1, 5))]
    if R.random() < 0.3:
        words.insert(R.randrange(len(words) + 1), pick(THINGS))
    if R.random() < 0.2:
        words.append(str(R.randint(0, 9999)))
    return " ".join(words)


def mojibake():
    base = pick([script_text(pick(["latin", "greek", "cyrillic", "symbols", "latin"])), caption() + " café naïve — “quoted”",
                 "déjà vu über straße señor façade", "it’s “fine” – really…", "Ελληνικά кириллица"])
    enc = pick(MOJIBAKE_ENCODINGS)
    try:
        return base.encode("utf-8").decode(enc, errors=pick(["replace", "ignore"]))
    except LookupError:
        return base


def width_ligature():
    fw = "".join(chr(0xff01 + R.randrange(94)) for _ in range(R.randint(1, 8)))
    lig = pick(["ﬁsh ﬂower ﬀ ﬃ ﬄ ﬅ ﬆ", "Ĳssel ĳs ǅ ǈ ǋ", "ＬＯＵＤ　ＮＯＩＳＥＳ", "ｈａｌｆ ｶﾀｶﾅ ﾞﾟ", "‘single’ “double” ‛x‟ ʼn"])
    return f"{fw} {lig} {pick(THINGS)}"


ASSIGNED = [c for c in range(0x20, 0x30000)
            if unicodedata.category(chr(c)) not in ("Cn", "Cs", "Co") and not 0xd800 <= c <= 0xdfff]


def random_codepoints():
    return "".join(chr(pick(ASSIGNED)) for _ in range(R.randint(1, 12)))


def escape(s):
    out = []
    for ch in s:
        c = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif c < 0x20 or c == 0x7f or 0x80 <= c < 0xa0:
            out.append("\\x%02x" % c if c < 0x80 else "\\u%04x" % c)
        else:
            out.append(ch)
    return "".join(out)


def corpus():
    gens = [(caption, 1400), (narration, 700), (entity, 600), (controls, 400), (mojibake, 500),
            (width_ligature, 200), (random_codepoints, 600)]
    out = []
    for g, n in gens:
        out += [g() for _ in range(n)]
    for name in SCRIPTS:
        out += [script_text(name) for _ in range(70)]
    out += ["", " ", "\u0130stanbul İİ", "ΟΔΟΣ ΣΑΣ ΣΣ Σ.", "'S 'T 'RE 'VE 'M 'LL 'D", "x" * 300,
            " ".join(["word"] * 90), "ǅemal ǈubljana", "ß ẞ ﬀ", "ﬁ"]
    return out


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures"
    tok = SimpleTokenizer()
    texts = corpus()
    # special tokens in the text are out of scope: OpenAI's <|startoftext|> and open_clip's
    # <start_of_text> differ, and captions do not hold them
    texts = [t for t in texts if "start_of_text" not in t.lower() and "end_of_text" not in t.lower()]
    ids = tok(texts, context_length=77)
    path = os.path.join(d, "bpe_clip_corpus.txt.gz")
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        for t, row in zip(texts, ids.tolist()):
            n = row.index(tok.eot_token_id) + 1 if tok.eot_token_id in row else 77
            f.write((escape(t) + "\t" + " ".join(map(str, row[:n])) + "\n").encode("utf-8"))
    shutil.copyfile(default_bpe(), os.path.join(d, "bpe_simple_vocab_16e6.txt.gz"))
    print(f"wrote {path}: {len(texts)} strings (open_clip {open_clip.__version__})")


if __name__ == "__main__":
    main()
