// Text side of the CLIP-style BPE tokenizer: UTF-8 checking, the clean-up (bpe_clean.c), CLIP's
// pre-token pattern with Unicode's classes (utf8proc), and the byte<->unicode table.
#include "bpe.h" // defines: bpe_normalize, bpe_pretokenize, bpe_byte_unicode, ...

#include "bpe_clean.h" // defines: BpeU32, bpe_clip_clean, bpe_is_letter, bpe_is_number, bpe_py_isspace

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

long bpe_normalize(const char *text, size_t n, char **out)
{
	*out = NULL;
	if (!bpe_utf8_valid(text, n))
		return -EILSEQ;
	BpeU32 s = {0};
	int rc = bpe_u32_from_utf8(&s, text, n);
	if (!rc)
		rc = bpe_clip_clean(&s);
	long len = rc ? rc : bpe_u32_to_utf8(&s, out);
	bpe_u32_free(&s);
	return len;
}

// ---- pre-tokenization ---------------------------------------------------------------
static const char *const contractions[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};

int bpe_special_index(const char *s, size_t n, const char *const specials[2])
{
	for (int k = 0; k < 2; k++)
		if (strlen(specials[k]) == n && memcmp(s, specials[k], n) == 0)
			return k;
	return -1;
}

size_t bpe_pretokenize(const char *s, size_t n, const char *const specials[2], BpeSpan *spans, size_t cap)
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
			if (bpe_py_isspace((uint32_t)c)) {
				i = j;
				continue;
			}
			if (bpe_is_letter((uint32_t)c)) {
				size_t e = j;
				while (e < n) {
					size_t t = e;
					int32_t d = bpe_utf8_next(s, n, &t);
					if (d < 0 || !bpe_is_letter((uint32_t)d))
						break;
					e = t;
				}
				len = e - i;
			} else if (bpe_is_number((uint32_t)c)) {
				len = j - i;
			} else {
				size_t e = j;
				while (e < n) {
					size_t t = e;
					int32_t d = bpe_utf8_next(s, n, &t);
					if (d < 0 || bpe_py_isspace((uint32_t)d) || bpe_is_letter((uint32_t)d) ||
					    bpe_is_number((uint32_t)d))
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
