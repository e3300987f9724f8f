// ftfy.fix_text (ftfy 6, default configuration) on code-point strings: the same steps in the
// same order, with ftfy's tables and heuristics generated from ftfy itself (bpe_tables.c).
// Segments are lines; each is fixed until a pass changes nothing, as ftfy does.
#include "bpe_clean.h" // defines: BpeU32, bpe_ftfy_fix_text, ...

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "bpe_tables.h" // defines: bpe_sets, bpe_badness_atoms, bpe_enc_table, ...

enum { ENC_LATIN1 = 0, ENC_SLOPPY_1252 = 1, ENC_MACROMAN = 8 };

static int in_set(int id, uint32_t c)
{
	const BpeSet *s = &bpe_sets[id];
	int hit = 0;
	for (int i = 0; i < s->n && !hit && s->r[i][0] <= c; i++)
		hit = c <= s->r[i][1];
	if (!hit && (s->cats & 1))
		hit = bpe_py_isspace(c);
	if (!hit && (s->cats & 2)) // Python re's \w: alphanumeric or '_'
		hit = c == '_' || bpe_sys_is_letter(c) || bpe_sys_is_number(c);
	if (!hit && (s->cats & 4))
		hit = utf8proc_category((utf8proc_int32_t)c) == UTF8PROC_CATEGORY_ND;
	return hit != s->negate;
}

// ---- badness: does any alternative of BADNESS_RE match somewhere? ----------------------
static int atom_ok(const BpeAtom *a, uint32_t c)
{
	return a->kind == 1 ? c != '\n' : in_set(a->set, c);
}

static int match_seq(const uint32_t *t, size_t n, size_t i, const BpeAtom *a, int na)
{
	if (na == 0)
		return 1;
	if (a->kind == 2)
		return i == 0 && match_seq(t, n, i, a + 1, na - 1);
	size_t k = 0;
	while (k < a->max && i + k < n && atom_ok(a, t[i + k]))
		k++;
	if (k < a->min)
		return 0;
	for (;; k--) { // greedy, then backtrack
		if (match_seq(t, n, i + k, a + 1, na - 1))
			return 1;
		if (k == a->min)
			return 0;
	}
}

static int is_bad(const uint32_t *t, size_t n)
{
	for (size_t i = 0; i <= n; i++)
		for (int k = 0; k < bpe_n_badness_alts; k++)
			if (match_seq(t, n, i, &bpe_badness_atoms[bpe_badness_alts[k][0]], bpe_badness_alts[k][1]))
				return 1;
	return 0;
}

// ---- single-byte encodings -------------------------------------------------------------
// the byte of c in encoding e, or -1 (ftfy's possible_encoding: ASCII but 0x1a, or a byte
// 0x80..0xff or 0x1a decodes to it)
static int enc_byte(int e, uint32_t c)
{
	if (c < 0x80 && c != 0x1a)
		return (int)c;
	if (bpe_enc_table[e][0x1a] == c)
		return 0x1a;
	for (int b = 0x80; b < 0x100; b++)
		if (bpe_enc_table[e][b] == c)
			return b;
	return -1;
}

typedef struct {
	uint8_t *p;
	size_t n, cap;
} Bytes;

static int bytes_push(Bytes *b, uint8_t x)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		uint8_t *p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	b->p[b->n++] = x;
	return 0;
}

// a byte pattern atom: pairs (lo, hi) of bytes, NUL-terminated
static int byte_in(const char *atom, uint8_t x)
{
	for (const uint8_t *a = (const uint8_t *)atom; a[0]; a += 2)
		if (x >= a[0] && x <= a[1])
			return 1;
	return 0;
}

// length of the first alternative matching at s[i] (alternatives: NULL-terminated atom lists)
static size_t alt_match(const uint8_t *s, size_t n, size_t i, const char *const (*alts)[6], int nalts)
{
	for (int k = 0; k < nalts; k++) {
		size_t j = 0;
		while (alts[k][j] && i + j < n && byte_in(alts[k][j], s[i + j]))
			j++;
		if (!alts[k][j])
			return j;
	}
	return 0;
}

#define C1CONT "\x80\x84\x86\x9f\xa1\xbf"
// chardata.ALTERED_UTF8_RE: UTF-8 whose 0xa0 became a space
static const char *const altered[][6] = {
	{"\xc2\xc3\xc5\xc5\xce\xce\xd0\xd0\xd9\xd9", "  ", NULL},
	{"\xe2\xe3", "  ", C1CONT, NULL},
	{"\xe0\xe3", C1CONT, "  ", NULL},
	{"\xf0\xf0", "  ", "\x80\xbf", "\x80\xbf", NULL},
	{"\xf0\xf0", "\x80\xbf", "  ", "\x80\xbf", NULL},
	{"\xf0\xf0", "\x80\xbf", "\x80\xbf", "  ", NULL},
};
// chardata.LOSSY_UTF8_RE: UTF-8 sequences damaged by a sloppy decode (0x1a or '?')
#define Q "\x1a\x1a??"
static const char *const lossy[][6] = {
	{"\xc2\xdf", "\x1a\x1a", NULL},
	{"\xc2\xc3", "??", NULL},
	{"\xed\xed", "\xa0\xaf", Q, "\xed\xed", "\xb0\xbf", Q "\x80\xbf"},
	{"\xed\xed", "\xa0\xaf", Q "\x80\xbf", "\xed\xed", "\xb0\xbf", Q},
	{"\xe0\xef", Q, "\x1a\x1a\x80\xbf", NULL},
	{"\xe0\xef", "\x1a\x1a\x80\xbf", Q, NULL},
	{"\xf0\xf4", Q, "\x1a\x1a\x80\xbf", "\x1a\x1a\x80\xbf", NULL},
	{"\xf0\xf4", "\x1a\x1a\x80\xbf", Q, "\x1a\x1a\x80\xbf", NULL},
	{"\xf0\xf4", "\x1a\x1a\x80\xbf", "\x1a\x1a\x80\xbf", Q, NULL},
	{"\x1a\x1a", NULL},
};
#undef Q

// fixes.restore_byte_a0: "\xc3 " before a word (not " ", "quele", "quela", "quilo", "s ") is
// "à "; then every ALTERED_UTF8_RE match gets its spaces back as 0xa0
static int restore_byte_a0(Bytes *b)
{
	Bytes o = {0};
	static const char *const keep[] = {" ", "quele", "quela", "quilo", "s "};
	for (size_t i = 0; i < b->n;) {
		if (b->p[i] == 0xc3 && i + 1 < b->n && b->p[i + 1] == ' ') {
			int k = 0;
			for (; k < 5; k++) {
				size_t l = strlen(keep[k]);
				if (i + 2 + l <= b->n && !memcmp(b->p + i + 2, keep[k], l))
					break;
			}
			if (k == 5) {
				if (bytes_push(&o, 0xc3) || bytes_push(&o, 0xa0) || bytes_push(&o, ' '))
					goto oom;
				i += 2;
				continue;
			}
		}
		if (bytes_push(&o, b->p[i++]))
			goto oom;
	}
	for (size_t i = 0; i < o.n;) {
		size_t l = alt_match(o.p, o.n, i, altered, 6);
		for (size_t j = i; j < i + l; j++)
			if (o.p[j] == ' ')
				o.p[j] = 0xa0;
		i += l ? l : 1;
	}
	free(b->p);
	*b = o;
	return 0;
oom:
	free(o.p);
	return -ENOMEM;
}

static int replace_lossy(Bytes *b)
{
	Bytes o = {0};
	for (size_t i = 0; i < b->n;) {
		size_t l = alt_match(b->p, b->n, i, lossy, 10);
		if (l) {
			if (bytes_push(&o, 0xef) || bytes_push(&o, 0xbf) || bytes_push(&o, 0xbd))
				goto oom;
			i += l;
		} else if (bytes_push(&o, b->p[i++])) {
			goto oom;
		}
	}
	free(b->p);
	*b = o;
	return 0;
oom:
	free(o.p);
	return -ENOMEM;
}

// strict UTF-8, or ftfy's utf-8-variants (also C0 80 = U+0000 and CESU-8 surrogate pairs):
// 0, -EILSEQ when the bytes do not decode, -ENOMEM
static int decode_utf8(const Bytes *b, int variants, BpeU32 *out)
{
	out->n = 0;
	for (size_t i = 0; i < b->n;) {
		const uint8_t *p = b->p + i;
		size_t left = b->n - i;
		uint32_t c;
		if (variants && left >= 2 && p[0] == 0xc0 && p[1] == 0x80) {
			c = 0, i += 2;
		} else if (variants && left >= 6 && p[0] == 0xed && p[1] >= 0xa0 && p[1] <= 0xaf && p[2] >= 0x80 &&
			   p[2] <= 0xbf && p[3] == 0xed && p[4] >= 0xb0 && p[4] <= 0xbf && p[5] >= 0x80 &&
			   p[5] <= 0xbf) {
			uint32_t hi = 0xd000u | ((uint32_t)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
			uint32_t lo = 0xd000u | ((uint32_t)(p[4] & 0x3f) << 6) | (p[5] & 0x3f);
			c = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00), i += 6;
		} else {
			utf8proc_int32_t d;
			utf8proc_ssize_t k = utf8proc_iterate(p, (utf8proc_ssize_t)left, &d);
			if (k <= 0)
				return -EILSEQ;
			c = (uint32_t)d, i += (size_t)k;
		}
		if (bpe_u32_push(out, c))
			return -ENOMEM;
	}
	return 0;
}

// one encoding tried: 1 fixed (text in out), 0 not this one, -ENOMEM
static int try_encoding(const BpeU32 *t, int e, BpeU32 *out)
{
	Bytes b = {0};
	for (size_t i = 0; i < t->n; i++)
		if (bytes_push(&b, (uint8_t)enc_byte(e, t->p[i])))
			goto oom;
	int altered_hit = 0;
	for (size_t i = 0; i < b.n && !altered_hit; i++)
		altered_hit = alt_match(b.p, b.n, i, altered, 6) > 0;
	if (e != ENC_MACROMAN && altered_hit && restore_byte_a0(&b))
		goto oom;
	if (!strncmp(bpe_enc_names[e], "sloppy", 6) && replace_lossy(&b))
		goto oom;
	int variants = memchr(b.p, 0xed, b.n) || memchr(b.p, 0xc0, b.n);
	int rc = b.n ? decode_utf8(&b, variants, out) : (out->n = 0, 0);
	free(b.p);
	return rc == -ENOMEM ? -ENOMEM : rc == 0;
oom:
	free(b.p);
	return -ENOMEM;
}

static int possible(const BpeU32 *t, int e)
{
	for (size_t i = 0; i < t->n; i++)
		if (enc_byte(e, t->p[i]) < 0)
			return 0;
	return 1;
}

static int fix_encoding(BpeU32 *t);

static int same(const BpeU32 *a, const BpeU32 *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->p, b->p, a->n * sizeof *a->p));
}

// fixes.decode_inconsistent_utf8: runs that look like UTF-8 read as a single-byte encoding
// (UTF8_DETECTOR_RE), each fixed alone when it is bad and not the whole text
static int decode_inconsistent(const BpeU32 *t, BpeU32 *out, int *found)
{
	out->n = 0;
	*found = 0;
	for (size_t i = 0; i < t->n;) {
		size_t j = i;
		if (i == 0 || !in_set(bpe_utf8_strict_set, t->p[i - 1]))
			for (int more = 1; more;) {
				more = 0;
				for (int k = 0; k < 3 && !more; k++) {
					size_t need = (size_t)k + 2;
					if (j + need > t->n || !in_set(bpe_utf8_first_sets[k], t->p[j]))
						continue;
					size_t c = 1;
					while (c < need && in_set(bpe_utf8_cont_set, t->p[j + c]))
						c++;
					if (c == need)
						j += need, more = 1;
				}
			}
		if (j == i) {
			if (bpe_u32_push(out, t->p[i++]))
				return -ENOMEM;
			continue;
		}
		*found = 1;
		BpeU32 sub = {0};
		for (size_t k = i; k < j; k++)
			if (bpe_u32_push(&sub, t->p[k]))
				return bpe_u32_free(&sub), -ENOMEM;
		int rc = (j - i < t->n && is_bad(sub.p, sub.n)) ? fix_encoding(&sub) : 0;
		for (size_t k = 0; !rc && k < sub.n; k++)
			rc = bpe_u32_push(out, sub.p[k]);
		bpe_u32_free(&sub);
		if (rc)
			return -ENOMEM;
		i = j;
	}
	return 0;
}

// _fix_encoding_one_step_and_explain: 1 changed (t replaced), 0 unchanged, -ENOMEM
static int fix_encoding_step(BpeU32 *t)
{
	int ascii = 1;
	for (size_t i = 0; i < t->n && ascii; i++)
		ascii = t->p[i] < 0x80;
	if (!t->n || ascii || !is_bad(t->p, t->n))
		return 0;
	BpeU32 out = {0};
	int rc = 0, latin1 = 0;
	for (int e = 0; e < BPE_ENC_WINDOWS_1252 && !rc; e++) {
		if (!possible(t, e))
			continue;
		latin1 |= e == ENC_LATIN1;
		rc = try_encoding(t, e, &out);
	}
	if (rc == 1 && same(&out, t)) { // decoded to itself: ftfy stops here
		bpe_u32_free(&out);
		return 0;
	}
	if (!rc) {
		int found;
		rc = decode_inconsistent(t, &out, &found);
		if (!rc)
			rc = found && (out.n != t->n || memcmp(out.p, t->p, t->n * sizeof *t->p));
	}
	if (!rc && latin1) { // Latin-1 that was meant as Windows-1252 (C1 controls), if it decodes
		out.n = 0;
		int ok = 1;
		for (size_t i = 0; i < t->n && ok && !rc; i++) {
			uint32_t c = bpe_enc_table[BPE_ENC_WINDOWS_1252][t->p[i]];
			ok = c != 0xffffffff;
			rc = ok ? bpe_u32_push(&out, c) : 0;
		}
		if (!rc)
			rc = ok && memcmp(out.p, t->p, t->n * sizeof *t->p);
	}
	if (!rc) { // fix_c1_controls
		int c1 = 0;
		for (size_t i = 0; i < t->n && !c1; i++)
			c1 = t->p[i] >= 0x80 && t->p[i] <= 0x9f;
		out.n = 0;
		for (size_t i = 0; i < t->n && c1 && !rc; i++)
			rc = bpe_u32_push(&out, t->p[i] >= 0x80 && t->p[i] <= 0x9f
							? bpe_enc_table[ENC_SLOPPY_1252][t->p[i]]
							: t->p[i]);
		if (!rc)
			rc = c1;
	}
	if (rc == 1 && !same(&out, t)) { // ftfy's loop ends on a step that changes nothing
		bpe_u32_free(t);
		*t = out;
		return 1;
	}
	bpe_u32_free(&out);
	return rc < 0 ? rc : 0;
}

static int fix_encoding(BpeU32 *t)
{
	for (;;) {
		int rc = fix_encoding_step(t);
		if (rc <= 0)
			return rc;
	}
}

// ---- the character fixers, in fix_and_explain's order ----------------------------------
static const BpeMap *map_find(const BpeMap *m, int n, uint32_t c)
{
	int lo = 0, hi = n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (m[mid].from == c)
			return &m[mid];
		if (m[mid].from < c)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static int is_control(uint32_t c)
{
	for (int i = 0; i < bpe_n_control_chars && bpe_control_chars[i] <= c; i++)
		if (bpe_control_chars[i] == c)
			return 1;
	return 0;
}

// fix_c1_controls, fix_latin_ligatures, fix_character_width, uncurl_quotes, fix_line_breaks,
// remove_terminal_escapes, remove_control_chars (fix_surrogates has nothing to do on code
// points decoded from well-formed UTF-8)
static int char_fixes(BpeU32 *t)
{
	BpeU32 a = {0}, b = {0};
	int rc = 0;
	for (size_t i = 0; i < t->n && !rc; i++) { // per-character maps compose: apply in order
		uint32_t c = t->p[i];
		if (c >= 0x80 && c <= 0x9f)
			c = bpe_enc_table[ENC_SLOPPY_1252][c];
		const BpeMap *m = map_find(bpe_ligatures, bpe_n_ligatures, c);
		uint32_t one[1] = {c};
		const uint32_t *seq = m ? m->to : one;
		int n = m ? m->n : 1;
		for (int k = 0; k < n && !rc; k++) {
			const BpeMap *w = map_find(bpe_width_map, bpe_n_width_map, seq[k]);
			for (int j = 0; j < (w ? w->n : 1) && !rc; j++) {
				uint32_t d = w ? w->to[j] : seq[k];
				if (d == 0x2bc || (d >= 0x2018 && d <= 0x201b))
					d = '\'';
				else if (d >= 0x201c && d <= 0x201f)
					d = '"';
				rc = bpe_u32_push(&a, d);
			}
		}
	}
	for (size_t i = 0; i < a.n && !rc; i++) { // line breaks
		uint32_t c = a.p[i];
		if (c == '\r' && i + 1 < a.n && a.p[i + 1] == '\n')
			continue;
		rc = bpe_u32_push(&b, (c == '\r' || c == 0x2028 || c == 0x2029 || c == 0x85) ? '\n' : c);
	}
	a.n = 0;
	for (size_t i = 0; i < b.n && !rc;) { // ANSI_RE: \x1b\[(\d|;)*[a-zA-Z]
		if (b.p[i] == 0x1b && i + 1 < b.n && b.p[i + 1] == '[') {
			size_t j = i + 2;
			while (j < b.n &&
			       (b.p[j] == ';' || utf8proc_category((utf8proc_int32_t)b.p[j]) == UTF8PROC_CATEGORY_ND))
				j++;
			if (j < b.n && ((b.p[j] | 0x20) >= 'a' && (b.p[j] | 0x20) <= 'z')) {
				i = j + 1;
				continue;
			}
		}
		if (!is_control(b.p[i]))
			rc = bpe_u32_push(&a, b.p[i]);
		i++;
	}
	bpe_u32_free(&b);
	if (rc) {
		bpe_u32_free(&a);
		return -ENOMEM;
	}
	bpe_u32_free(t);
	*t = a;
	return 0;
}

static int nfc(BpeU32 *t)
{
	char *u;
	long n = bpe_u32_to_utf8(t, &u);
	if (n < 0)
		return (int)n;
	utf8proc_uint8_t *c = NULL;
	utf8proc_ssize_t m = utf8proc_map((const utf8proc_uint8_t *)u, n, &c, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
	free(u);
	if (m < 0)
		return m == UTF8PROC_ERROR_NOMEM ? -ENOMEM : -EILSEQ;
	int rc = bpe_u32_from_utf8(t, (const char *)c, (size_t)m);
	free(c);
	return rc;
}

// ftfy's unescape_html: &#?[0-9A-Za-z]{1,24}; that is one of ftfy's entities, or a numeric
// reference html.unescape resolves
static int ftfy_unescape(BpeU32 *t)
{
	BpeU32 o = {0};
	int rc = 0;
	for (size_t i = 0; i < t->n && !rc;) {
		size_t j = i + 1, used = 0;
		if (t->p[i] == '&') {
			j += j < t->n && t->p[j] == '#';
			size_t a0 = j;
			while (j < t->n && j - a0 < 25 && t->p[j] < 0x80 &&
			       ((t->p[j] >= '0' && t->p[j] <= '9') ||
				((t->p[j] | 0x20) >= 'a' && (t->p[j] | 0x20) <= 'z')))
				j++;
			if (j > a0 && j - a0 <= 24 && j < t->n && t->p[j] == ';')
				used = j + 1 - i;
		}
		if (!used) {
			rc = bpe_u32_push(&o, t->p[i++]);
			continue;
		}
		char name[32];
		for (size_t k = 0; k + 1 < used; k++)
			name[k] = (char)t->p[i + 1 + k];
		const BpeEntity *e = NULL;
		int lo = 0, hi = bpe_n_ftfy_entities - 1;
		while (lo <= hi && !e) {
			int mid = (lo + hi) / 2, r = strncmp(name, bpe_ftfy_entities[mid].name, used - 1);
			if (!r && bpe_ftfy_entities[mid].name[used - 1])
				r = -1;
			if (!r)
				e = &bpe_ftfy_entities[mid];
			else if (r < 0)
				hi = mid - 1;
			else
				lo = mid + 1;
		}
		BpeU32 ent = {0};
		if (e) {
			for (int k = 0; k < e->n && !rc; k++)
				rc = bpe_u32_push(&o, e->cp[k]);
		} else if (name[0] == '#') { // html.unescape of the reference alone, kept if it has a ';' left
			for (size_t k = 0; k < used && !rc; k++)
				rc = bpe_u32_push(&ent, t->p[i + k]);
			if (!rc)
				rc = bpe_html_unescape(&ent);
			int semi = 0;
			for (size_t k = 0; k < ent.n; k++)
				semi |= ent.p[k] == ';';
			for (size_t k = 0; k < (semi ? used : ent.n) && !rc; k++)
				rc = bpe_u32_push(&o, semi ? t->p[i + k] : ent.p[k]);
		} else {
			for (size_t k = 0; k < used && !rc; k++)
				rc = bpe_u32_push(&o, t->p[i + k]);
		}
		bpe_u32_free(&ent);
		i += used;
	}
	if (rc) {
		bpe_u32_free(&o);
		return -ENOMEM;
	}
	bpe_u32_free(t);
	*t = o;
	return 0;
}

static int fix_segment(BpeU32 *t, int unescape)
{
	BpeU32 orig = {0};
	for (int rc = 0;;) {
		orig.n = 0;
		for (size_t i = 0; i < t->n && !rc; i++)
			rc = bpe_u32_push(&orig, t->p[i]);
		if (!rc && unescape)
			rc = ftfy_unescape(t);
		if (!rc)
			rc = fix_encoding(t);
		if (!rc)
			rc = char_fixes(t);
		if (!rc)
			rc = nfc(t);
		if (rc || same(t, &orig)) {
			bpe_u32_free(&orig);
			return rc;
		}
	}
}

int bpe_ftfy_fix_text(BpeU32 *s)
{
	enum { MAX_DECODE = 1000000 }; // ftfy's max_decode_length
	BpeU32 out = {0}, seg = {0};
	int rc = 0, unescape = 1;
	for (size_t pos = 0; pos < s->n && !rc;) {
		size_t brk = pos;
		while (brk < s->n && s->p[brk] != '\n')
			brk++;
		brk = brk < s->n ? brk + 1 : s->n;
		if (brk - pos > MAX_DECODE)
			brk = pos + MAX_DECODE;
		seg.n = 0;
		for (size_t i = pos; i < brk && !rc; i++) {
			rc = bpe_u32_push(&seg, s->p[i]);
			unescape &= s->p[i] != '<'; // "auto": once a segment has '<', no more unescaping
		}
		if (!rc)
			rc = fix_segment(&seg, unescape);
		for (size_t i = 0; i < seg.n && !rc; i++)
			rc = bpe_u32_push(&out, seg.p[i]);
		pos = brk;
	}
	bpe_u32_free(&seg);
	if (rc) {
		bpe_u32_free(&out);
		return rc;
	}
	bpe_u32_free(s);
	*s = out;
	return 0;
}
