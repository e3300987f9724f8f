// Text side of the CLIP-style BPE tokenizer: UTF-8 checking, clean-up, lower-casing,
// CLIP's pre-token pattern in plain C, and the byte<->unicode table of bytes_to_unicode.
#include "bpe_text.h" // defines: bpe_normalize, bpe_pretokenize, bpe_byte_unicode, ...

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int32_t bpe_utf8_next(const char *str, size_t n, size_t *i)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t p = *i;
	uint32_t c = s[p], min;
	int extra;
	if (c < 0x80) {
		*i = p + 1;
		return (int32_t)c;
	} else if (c >= 0xc2 && c <= 0xdf) {
		extra = 1, c &= 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		extra = 2, c &= 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		extra = 3, c &= 0x07, min = 0x10000;
	} else {
		return -1;
	}
	if (p + (size_t)extra >= n)
		return -1;
	for (int k = 1; k <= extra; k++) {
		if ((s[p + k] & 0xc0) != 0x80)
			return -1;
		c = (c << 6) | (s[p + k] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return -1;
	*i = p + 1 + (size_t)extra;
	return (int32_t)c;
}

int bpe_utf8_valid(const char *s, size_t n)
{
	for (size_t i = 0; i < n;)
		if (bpe_utf8_next(s, n, &i) < 0)
			return 0;
	return 1;
}

int bpe_utf8_put(uint32_t cp, char *out)
{
	unsigned char *o = (unsigned char *)out;
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	} else if (cp < 0x800) {
		o[0] = (unsigned char)(0xc0 | (cp >> 6));
		o[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	} else if (cp < 0x10000) {
		o[0] = (unsigned char)(0xe0 | (cp >> 12));
		o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | (cp >> 18));
	o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

// ---- bytes_to_unicode ----------------------------------------------------------
// Printable bytes ('!'..'~', 0xa1..0xac, 0xae..0xff) map to themselves and come first in
// the vocabulary; the other 68 bytes map to U+0100.. in byte order and follow them.
static int printable_byte(int b)
{
	return (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
}

// ranks: '!'..'~' 0..93, 0xa1..0xac 94..105, 0xae..0xff 106..187, then the 68 others in
// byte order: 0x00..0x20 188..220, 0x7f..0xa0 221..254, 0xad 255
int bpe_byte_rank(uint8_t b)
{
	if (b >= '!' && b <= '~')
		return b - '!';
	if (b >= 0xa1 && b <= 0xac)
		return 94 + b - 0xa1;
	if (b >= 0xae)
		return 106 + b - 0xae;
	if (b <= 0x20)
		return 188 + b;
	if (b >= 0x7f && b <= 0xa0)
		return 221 + b - 0x7f;
	return 255; // 0xad
}

uint32_t bpe_byte_unicode(uint8_t b)
{
	return printable_byte(b) ? b : 256u + (uint32_t)(bpe_byte_rank(b) - 188);
}

int bpe_unicode_byte(uint32_t cp)
{
	if (cp < 256)
		return printable_byte((int)cp) ? (int)cp : -1;
	if (cp >= 256 + 68)
		return -1;
	int n = (int)cp - 256; // n-th non-printable byte
	return n <= 32 ? n : n <= 66 ? 0x7f + n - 33 : 0xad;
}

// ---- character classes (approximate Unicode \s, \p{L}, \p{N}) -------------------
static int is_space(uint32_t c)
{
	return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
	       c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
	       c == 0x202f || c == 0x205f || c == 0x3000;
}

static int is_number(uint32_t c)
{
	return (c >= '0' && c <= '9') || c == 0xb2 || c == 0xb3 || c == 0xb9 ||
	       (c >= 0xbc && c <= 0xbe) || (c >= 0x660 && c <= 0x669) || (c >= 0x6f0 && c <= 0x6f9) ||
	       (c >= 0x966 && c <= 0x96f) || c == 0x2070 || (c >= 0x2074 && c <= 0x2079) ||
	       (c >= 0x2080 && c <= 0x2089) || (c >= 0x2150 && c <= 0x2189) ||
	       (c >= 0x2460 && c <= 0x249b) || c == 0x3007 || (c >= 0x3021 && c <= 0x3029) ||
	       (c >= 0xff10 && c <= 0xff19);
}

static int is_letter(uint32_t c)
{
	if (c < 0x80)
		return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
	if (c < 0x100)
		return c == 0xaa || c == 0xb5 || c == 0xba || (c >= 0xc0 && c != 0xd7 && c != 0xf7);
	if (c < 0x300)
		return 1; // Latin extended, IPA, modifier letters
	if (c < 0x370)
		return 0; // combining marks
	if (c == 0x375 || c == 0x37e || c == 0x384 || c == 0x385 || c == 0x387 || c == 0x3f6)
		return 0;
	if (c >= 0x482 && c <= 0x489)
		return 0;
	if (is_number(c))
		return 0;
	// punctuation, symbols, arrows, maths, box drawing, dingbats; CJK punctuation;
	// variation selectors; half/full-width punctuation; private use; emoji and symbols
	if ((c >= 0x2000 && c <= 0x2bff) || (c >= 0x2e00 && c <= 0x2e7f) ||
	    (c >= 0x3000 && c <= 0x3004) || (c >= 0x3008 && c <= 0x3020) ||
	    (c >= 0xe000 && c <= 0xf8ff) || (c >= 0xfe00 && c <= 0xfe6f) ||
	    (c >= 0xff00 && c <= 0xff20) || (c >= 0xff3b && c <= 0xff40) ||
	    (c >= 0xff5b && c <= 0xff65) || (c >= 0x1f000 && c <= 0x1faff) ||
	    (c >= 0x591 && c <= 0x5c7) || (c >= 0x64b && c <= 0x65f) ||
	    (c >= 0x1ab0 && c <= 0x1aff) || (c >= 0x1dc0 && c <= 0x1dff) || (c >= 0x20d0 && c <= 0x20ff))
		return 0;
	// Indic vowel signs, viramas and nuktas (the same offsets in each 128-code-point block)
	if (c >= 0x900 && c <= 0xdff) {
		uint32_t o = c & 0x7f;
		if (o <= 3 || (o >= 0x3a && o <= 0x4f) || (o >= 0x51 && o <= 0x57) || o == 0x62 || o == 0x63)
			return 0;
	}
	return 1;
}

// Python's str.lower() for the cased scripts above; writes 1 or 2 code points
static int lower_cp(uint32_t c, uint32_t out[2])
{
	uint32_t l = c;
	if (c >= 'A' && c <= 'Z')
		l = c + 32;
	else if (c < 0xc0)
		l = c;
	else if (c <= 0xde && c != 0xd7)
		l = c + 32;
	else if (c == 0x130) {
		out[0] = 'i', out[1] = 0x307;
		return 2;
	} else if ((c >= 0x100 && c <= 0x137) || (c >= 0x14a && c <= 0x177))
		l = c | 1;
	else if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e))
		l = (c & 1) ? c + 1 : c;
	else if (c == 0x178)
		l = 0xff;
	else if (c == 0x18f)
		l = 0x259;
	else if (c == 0x386)
		l = 0x3ac;
	else if (c >= 0x388 && c <= 0x38a)
		l = c + 37;
	else if (c == 0x38c)
		l = 0x3cc;
	else if (c == 0x38e || c == 0x38f)
		l = c + 63;
	else if (c >= 0x391 && c <= 0x3ab && c != 0x3a2)
		l = c + 32;
	else if (c >= 0x400 && c <= 0x40f)
		l = c + 80;
	else if (c >= 0x410 && c <= 0x42f)
		l = c + 32;
	else if ((c >= 0x460 && c <= 0x481) || (c >= 0x48a && c <= 0x4bf) || (c >= 0x4d0 && c <= 0x52f))
		l = c | 1;
	else if (c >= 0x531 && c <= 0x556)
		l = c + 48;
	else if ((c >= 0x1e00 && c <= 0x1e95) || (c >= 0x1ea0 && c <= 0x1eff))
		l = c | 1;
	else if (c >= 0xff21 && c <= 0xff3a)
		l = c + 32;
	out[0] = l;
	return 1;
}

// ---- normalization ----------------------------------------------------------------
static const struct {
	const char *name;
	uint32_t cp;
} entities[] = {
	{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''},
	{"nbsp;", 0xa0}, {"ndash;", 0x2013}, {"mdash;", 0x2014}, {"hellip;", 0x2026},
	{"lsquo;", 0x2018}, {"rsquo;", 0x2019}, {"ldquo;", 0x201c}, {"rdquo;", 0x201d},
	{"eacute;", 0xe9}, {"copy;", 0xa9}, {"reg;", 0xae}, {"deg;", 0xb0},
};

// one pass of html.unescape for the common named and all numeric entities; out has room
// for n bytes (an entity never grows)
static size_t html_unescape(const char *s, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		if (s[i] == '&') {
			uint32_t cp = 0;
			size_t used = 0;
			if (i + 2 < n && s[i + 1] == '#') {
				size_t j = i + 2;
				int hex = j < n && (s[j] == 'x' || s[j] == 'X');
				j += (size_t)hex;
				size_t d0 = j;
				while (j < n && j - d0 < 7 &&
				       ((s[j] >= '0' && s[j] <= '9') ||
					(hex && ((s[j] | 0x20) >= 'a' && (s[j] | 0x20) <= 'f'))))
					j++;
				if (j > d0 && j < n && s[j] == ';') {
					cp = (uint32_t)strtoul(s + d0, NULL, hex ? 16 : 10);
					if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
						cp = 0xfffd;
					used = j + 1 - i;
				}
			} else {
				for (size_t k = 0; k < sizeof(entities) / sizeof(entities[0]); k++) {
					size_t l = strlen(entities[k].name);
					if (i + 1 + l <= n && memcmp(s + i + 1, entities[k].name, l) == 0) {
						cp = entities[k].cp;
						used = 1 + l;
						break;
					}
				}
			}
			// an entity's UTF-8 form is never longer than the entity text
			if (used) {
				o += (size_t)bpe_utf8_put(cp, out + o);
				i += used;
				continue;
			}
		}
		out[o++] = s[i++];
	}
	return o;
}

// the character fixes of ftfy.fix_text that change CLIP tokens on ordinary captions:
// curly quotes -> straight, full-width ASCII -> ASCII, Latin ligatures -> letters (never grows)
static size_t ftfy_chars(const char *s, size_t n, char *out)
{
	static const char *const lig[7] = {"ff", "fi", "fl", "ffi", "ffl", "st", "st"};
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		int32_t c = bpe_utf8_next(s, n, &i);
		if (c == 0x2bc || (c >= 0x2018 && c <= 0x201b))
			out[o++] = '\'';
		else if (c >= 0x201c && c <= 0x201f)
			out[o++] = '"';
		else if (c >= 0xff01 && c <= 0xff5e)
			out[o++] = (char)(c - 0xfee0);
		else if (c == 0x3000)
			out[o++] = ' ';
		else if (c >= 0xfb00 && c <= 0xfb06) {
			memcpy(out + o, lig[c - 0xfb00], strlen(lig[c - 0xfb00]));
			o += strlen(lig[c - 0xfb00]);
		} else
			o += (size_t)bpe_utf8_put((uint32_t)c, out + o);
	}
	return o;
}

long bpe_normalize(const char *text, size_t n, char **out)
{
	*out = NULL;
	if (!bpe_utf8_valid(text, n))
		return -EILSEQ;
	// lower-casing at most grows 2 bytes into 3 (U+0130 -> 'i' U+0307); nothing before grows
	char *a = malloc(n + 1), *b = malloc(n + n / 2 + 8);
	if (!a || !b) {
		free(a);
		free(b);
		return -ENOMEM;
	}
	// ftfy unescapes HTML first unless the text has a '<'; CLIP then unescapes twice more
	size_t m = memchr(text, '<', n) ? (memcpy(b, text, n), n) : html_unescape(text, n, b);
	m = ftfy_chars(b, m, a);
	m = html_unescape(a, m, b);
	m = html_unescape(b, m, a);
	size_t o = 0;
	int pending_space = 0;
	for (size_t i = 0; i < m;) {
		int32_t c = bpe_utf8_next(a, m, &i);
		if (c < 0) // cannot happen: every step above writes well-formed UTF-8
			c = 0xfffd;
		if (is_space((uint32_t)c)) {
			pending_space = o > 0;
			continue;
		}
		if (pending_space) {
			b[o++] = ' ';
			pending_space = 0;
		}
		uint32_t lc[2];
		int k = lower_cp((uint32_t)c, lc);
		for (int j = 0; j < k; j++)
			o += (size_t)bpe_utf8_put(lc[j], b + o);
	}
	b[o] = 0;
	free(a);
	*out = b;
	return (long)o;
}

// ---- pre-tokenization ---------------------------------------------------------------
static const char *const specials[] = {"<|startoftext|>", "<|endoftext|>"};
static const char *const contractions[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};

size_t bpe_pretokenize(const char *s, size_t n, BpeSpan *spans, size_t cap)
{
	size_t count = 0, i = 0;
	while (i < n) {
		size_t start = i, len = 0;
		for (int k = 0; k < 2 && !len; k++) {
			size_t l = strlen(specials[k]);
			if (i + l <= n && memcmp(s + i, specials[k], l) == 0)
				len = l;
		}
		for (int k = 0; k < 7 && !len; k++) {
			size_t l = strlen(contractions[k]);
			if (i + l <= n && memcmp(s + i, contractions[k], l) == 0)
				len = l;
		}
		if (!len) {
			size_t j = i;
			int32_t c = bpe_utf8_next(s, n, &j);
			if (c < 0) { // not normalized input: skip the byte
				i++;
				continue;
			}
			if (is_space((uint32_t)c)) {
				i = j;
				continue;
			}
			if (is_letter((uint32_t)c)) {
				size_t e = j;
				while (e < n) {
					size_t t = e;
					int32_t d = bpe_utf8_next(s, n, &t);
					if (d < 0 || !is_letter((uint32_t)d))
						break;
					e = t;
				}
				len = e - i;
			} else if (is_number((uint32_t)c)) {
				len = j - i;
			} else {
				size_t e = j;
				while (e < n) {
					size_t t = e;
					int32_t d = bpe_utf8_next(s, n, &t);
					if (d < 0 || is_space((uint32_t)d) || is_letter((uint32_t)d) || is_number((uint32_t)d))
						break;
					e = t;
				}
				len = e - i;
			}
		}
		if (count < cap)
			spans[count] = (BpeSpan){(uint32_t)start, (uint32_t)len};
		count++;
		i = start + len;
	}
	return count;
}
