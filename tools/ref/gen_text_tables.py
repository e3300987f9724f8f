#!/usr/bin/env python3
"""Writes data/bpe_tables.c: the data tables of CLIP's text clean-up, taken from the libraries
open_clip's SimpleTokenizer runs (Python's html module, ftfy), so the C tokenizer gives the same
ids without hand-made tables.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install ftfy
    /tmp/v/bin/python tools/ref/gen_text_tables.py data/bpe_tables.c

Tables: the full HTML5 named character reference table (html.entities.html5), html.unescape's
invalid numeric references, ftfy's own entity table (with its upper-cased names), Python's
str.isspace set, the single-byte encodings ftfy tries for mojibake, ftfy's badness heuristic
and UTF-8 detector (compiled from its regular expressions' parse trees: the generator fails
if ftfy's patterns use a construct the C matcher does not have), its width and ligature maps.
"""
import html
import html.entities
import sys

try:
    import re._parser as sre_parse
    from re._constants import (ANY, ASSERT_NOT, AT, AT_BEGINNING, BRANCH, CATEGORY, CATEGORY_DIGIT,
                               CATEGORY_SPACE, CATEGORY_WORD, IN, LITERAL, MAX_REPEAT, NEGATE,
                               NOT_LITERAL, RANGE, SUBPATTERN)
except ImportError:  # Python < 3.11
    import sre_parse
    from sre_constants import (ANY, ASSERT_NOT, AT, AT_BEGINNING, BRANCH, CATEGORY, CATEGORY_DIGIT,
                               CATEGORY_SPACE, CATEGORY_WORD, IN, LITERAL, MAX_REPEAT, NEGATE,
                               NOT_LITERAL, RANGE, SUBPATTERN)

import ftfy
import ftfy.bad_codecs  # noqa: F401  (registers the sloppy-* codecs)
from ftfy import badness, chardata

CATS = {CATEGORY_SPACE: 1, CATEGORY_WORD: 2, CATEGORY_DIGIT: 4}
out = []


def c_str(s):
    return '"' + "".join(c if c.isalnum() or c in ";_" else "\\x%02x" % ord(c) for c in s) + '"'


def cps(s, n):
    v = [ord(c) for c in s]
    assert len(v) <= n, s
    return "{" + ", ".join("0x%x" % c for c in v + [0] * (n - len(v))) + "}"


# ---- sets and patterns from regular-expression parse trees --------------------------------
sets = []


def set_of(items):
    """IN items -> index of a set {negate, categories, ranges}"""
    neg, cats, ranges = 0, 0, []
    for op, av in items:
        if op is NEGATE:
            neg = 1
        elif op is LITERAL:
            ranges.append((av, av))
        elif op is RANGE:
            ranges.append(av)
        elif op is CATEGORY:
            if av not in CATS:
                raise SystemExit(f"unsupported category {av}")
            cats |= CATS[av]
        else:
            raise SystemExit(f"unsupported set item {op}")
    ranges.sort()
    merged = []
    for a, b in ranges:
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    key = (neg, cats, tuple(merged))
    if key not in sets:
        sets.append(key)
    return sets.index(key)


def atom(op, av):
    """one-character item -> (kind, arg): 0 set, 1 any, 2 begin"""
    if op is LITERAL:
        return (0, set_of([(LITERAL, av)]))
    if op is NOT_LITERAL:
        return (0, set_of([(NEGATE, None), (LITERAL, av)]))
    if op is IN:
        return (0, set_of(av))
    if op is ANY:
        return (1, 0)
    if op is AT and av is AT_BEGINNING:
        return (2, 0)
    raise SystemExit(f"unsupported item {op} {av}")


def sequence(items):
    """a branch alternative -> list of (kind, arg, min, max)"""
    seq = []
    for op, av in items:
        if op is MAX_REPEAT:
            lo, hi, body = av
            if len(body) != 1:
                raise SystemExit("repeat of more than one item")
            k, a = atom(*body[0])
            if hi > 255:
                raise SystemExit("unbounded repeat in a badness alternative")
            seq.append((k, a, lo, hi))
        else:
            k, a = atom(op, av)
            seq.append((k, a, 1, 1))
    return seq


def badness_alternatives():
    tree = list(sre_parse.parse(badness.BADNESS_RE.pattern, badness.BADNESS_RE.flags))
    if len(tree) != 1 or tree[0][0] is not BRANCH:
        raise SystemExit("ftfy's BADNESS_RE is not one alternation")
    return [sequence(list(alt)) for alt in tree[0][1][1]]


def utf8_detector_sets():
    tree = list(sre_parse.parse(chardata.UTF8_DETECTOR_RE.pattern, chardata.UTF8_DETECTOR_RE.flags))
    (a_op, (a_dir, a_body)), (r_op, (lo, hi, r_body)) = tree
    assert a_op is ASSERT_NOT and a_dir == -1 and r_op is MAX_REPEAT and lo == 1
    strict = set_of(a_body[0][1])
    (s_op, s_av), = r_body
    assert s_op is SUBPATTERN
    (b_op, (_, alts)), = s_av[-1]
    assert b_op is BRANCH and len(alts) == 3
    firsts, cont = [], None
    for n, alt in enumerate(alts):
        alt = list(alt)
        firsts.append(set_of(alt[0][1]))
        c_item = alt[1]
        if c_item[0] is MAX_REPEAT:
            assert c_item[1][0] == c_item[1][1] == n + 1
            c_item = c_item[1][2][0]
        c = set_of(c_item[1])
        assert cont is None or cont == c
        cont = c
    return strict, firsts, cont


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "data/bpe_tables.c"
    w = out.append
    w("// GENERATED by tools/ref/gen_text_tables.py from Python %s's html module and ftfy %s:" %
      (sys.version.split()[0], ftfy.__version__))
    w("// do not edit. The data of CLIP's text clean-up (see bpe_tables.h).")
    w('#include "bpe_tables.h" // defines: BpeEntity, BpeSet, BpeAtom, ...')
    w("")

    h5 = sorted(html.entities.html5.items(), key=lambda kv: kv[0].encode())
    w("const BpeEntity bpe_html5[] = {")
    for name, val in h5:
        w("\t{%s, %d, %s}," % (c_str(name), len(val), cps(val, 2)))
    w("};")
    w("const int bpe_n_html5 = %d;" % len(h5))
    w("")
    fe = sorted(((k[1:], v) for k, v in chardata.HTML_ENTITIES.items()), key=lambda kv: kv[0].encode())
    w("// ftfy's entities: the HTML5 names ending in ';' and upper-cased forms of lower-case ones")
    w("const BpeEntity bpe_ftfy_entities[] = {")
    for name, val in fe:
        w("\t{%s, %d, %s}," % (c_str(name), len(val), cps(val, 3)))
    w("};")
    w("const int bpe_n_ftfy_entities = %d;" % len(fe))
    w("")
    inv = sorted(html._invalid_charrefs.items())
    w("// html.unescape: numeric references replaced by another character")
    w("const uint32_t bpe_invalid_charrefs[][2] = {")
    for k, v in inv:
        w("\t{0x%x, 0x%x}," % (k, ord(v)))
    w("};")
    w("const int bpe_n_invalid_charrefs = %d;" % len(inv))
    w("// html.unescape: numeric references dropped")
    codes = sorted(html._invalid_codepoints)
    rng = []
    for c in codes:
        if rng and c == rng[-1][1] + 1:
            rng[-1][1] = c
        else:
            rng.append([c, c])
    w("const uint32_t bpe_invalid_codepoints[][2] = {" + ", ".join("{0x%x, 0x%x}" % tuple(r) for r in rng) + "};")
    w("const int bpe_n_invalid_codepoints = %d;" % len(rng))
    w("")
    spaces = [c for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    w("// Python's str.isspace() (str.split() and strip() split on these)")
    w("const uint32_t bpe_py_spaces[] = {" + ", ".join("0x%x" % c for c in spaces) + "};")
    w("const int bpe_n_py_spaces = %d;" % len(spaces))
    w("")

    encs = list(chardata.CHARMAP_ENCODINGS) + ["windows-1252"]
    w("// byte -> code point of ftfy's single-byte encodings (0xffffffff: undefined), in ftfy's")
    w("// CHARMAP_ENCODINGS order, then strict windows-1252")
    w("const char *const bpe_enc_names[BPE_N_ENCODINGS] = {" + ", ".join('"%s"' % e for e in encs) + "};")
    w("const uint32_t bpe_enc_table[BPE_N_ENCODINGS][256] = {")
    for e in encs:
        row = []
        for b in range(256):
            try:
                s = bytes([b]).decode(e)
                assert len(s) == 1
                row.append("0x%x" % ord(s))
            except UnicodeDecodeError:
                row.append("0xffffffff")
        w("\t{" + ", ".join(row) + "},")
    w("};")
    assert len(encs) == 11
    w("")

    alts = badness_alternatives()
    strict, firsts, cont = utf8_detector_sets()
    w("// ftfy's sets: badness heuristic and UTF-8 detector")
    for i, (neg, cats, rs) in enumerate(sets):
        w("static const uint32_t set%d[][2] = {%s};" % (i, ", ".join("{0x%x, 0x%x}" % r for r in rs) or "{0, 0}"))
    w("const BpeSet bpe_sets[] = {")
    for i, (neg, cats, rs) in enumerate(sets):
        w("\t{%d, %d, %d, set%d}," % (neg, cats, len(rs), i))
    w("};")
    w("")
    w("// ftfy.badness.BADNESS_RE: each alternative a sequence of atoms (kind, set, min, max)")
    w("const BpeAtom bpe_badness_atoms[] = {")
    starts = []
    n = 0
    for alt in alts:
        starts.append((n, len(alt)))
        for k, a, lo, hi in alt:
            w("\t{%d, %d, %d, %d}," % (k, a, lo, hi))
            n += 1
    w("};")
    w("const uint16_t bpe_badness_alts[][2] = {" + ", ".join("{%d, %d}" % s for s in starts) + "};")
    w("const int bpe_n_badness_alts = %d;" % len(alts))
    w("// ftfy.chardata.UTF8_DETECTOR_RE: not after [strict], ([first2][cont] | [first3][cont]{2} | [first4][cont]{3})+")
    w("const int bpe_utf8_strict_set = %d, bpe_utf8_cont_set = %d;" % (strict, cont))
    w("const int bpe_utf8_first_sets[3] = {%d, %d, %d};" % tuple(firsts))
    w("")
    for var, what, table in (("bpe_width_map", "ftfy's width map (U+3000 and the NFKC forms of U+FF01..U+FFEF)",
                              chardata.WIDTH_MAP), ("bpe_ligatures", "ftfy's ligature map", chardata.LIGATURES)):
        items = sorted(table.items())
        w("// " + what)
        w("const BpeMap %s[] = {" % var)
        for k, v in items:
            w("\t{0x%x, %d, %s}," % (k, len(v), cps(v, 3)))
        w("};")
        w("const int bpe_n_%s = %d;" % (var[4:], len(items)))
    ctrl = sorted(chardata.CONTROL_CHARS)
    w("// ftfy.fixes.remove_control_chars")
    w("const uint32_t bpe_control_chars[] = {" + ", ".join("0x%x" % c for c in ctrl) + "};")
    w("const int bpe_n_control_chars = %d;" % len(ctrl))
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {path}: {len(h5)} HTML5 entities, {len(fe)} ftfy entities, {len(sets)} sets, "
          f"{len(alts)} badness alternatives")


if __name__ == "__main__":
    main()
