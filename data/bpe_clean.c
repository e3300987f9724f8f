// Code-point strings, Unicode classes (the regex module's, bpe_uclass.c; utf8proc's for case),
// Python's html.unescape and str methods, and
// CLIP's whole clean-up (ftfy's part is in bpe_ftfy.c): the exact steps open_clip runs.
#include "bpe_clean.h" // defines: BpeU32, bpe_clip_clean, ...

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "bpe_tables.h" // defines: bpe_html5, bpe_invalid_charrefs, bpe_py_spaces, ...
#include "bpe_uclass.h" // defines: bpe_letter_ranges, bpe_number_ranges, ...

void bpe_u32_free(BpeU32 *s)
{
	free(s->p);
	s->p = NULL;
	s->n = s->cap = 0;
}

int bpe_u32_push(BpeU32 *s, uint32_t c)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint32_t *p = realloc(s->p, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		s->p = p;
		s->cap = cap;
	}
	s->p[s->n++] = c;
	return 0;
}

int bpe_u32_put_utf8(uint32_t c, char *o)
{
	return (int)utf8proc_encode_char((utf8proc_int32_t)c, (utf8proc_uint8_t *)o);
}

int bpe_u32_from_utf8(BpeU32 *out, const char *s, size_t n)
{
	out->n = 0;
	for (size_t i = 0; i < n;) {
		utf8proc_int32_t c;
		utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &c);
		if (k <= 0)
			return -EILSEQ;
		if (bpe_u32_push(out, (uint32_t)c))
			return -ENOMEM;
		i += (size_t)k;
	}
	return 0;
}

long bpe_u32_to_utf8(const BpeU32 *s, char **out)
{
	char *o = malloc(4 * s->n + 1);
	if (!o)
		return -ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < s->n; i++)
		m += (size_t)bpe_u32_put_utf8(s->p[i], o + m);
	o[m] = 0;
	*out = o;
	return (long)m;
}

// ---- classes -------------------------------------------------------------------------
// c in one of the n sorted [first, last] ranges (binary search)
static int in_sorted_ranges(const uint32_t (*r)[2], int n, uint32_t c)
{
	int lo = 0, hi = n - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (c < r[mid][0])
			hi = mid - 1;
		else if (c > r[mid][1])
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

// [\p{L}] and [\p{N}] as the regex module open_clip matches with has them (its Unicode version,
// newer than the system utf8proc's: letters of scripts assigned since split as open_clip does)
int bpe_is_letter(uint32_t c)
{
	return in_sorted_ranges(bpe_letter_ranges, bpe_n_letter_ranges, c);
}

int bpe_is_number(uint32_t c)
{
	return in_sorted_ranges(bpe_number_ranges, bpe_n_number_ranges, c);
}

int bpe_sys_is_letter(uint32_t c)
{
	utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
	return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO;
}

int bpe_sys_is_number(uint32_t c)
{
	utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
	return k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO;
}

int bpe_py_isspace(uint32_t c)
{
	for (int i = 0; i < bpe_n_py_spaces && bpe_py_spaces[i] <= c; i++)
		if (bpe_py_spaces[i] == c)
			return 1;
	return 0;
}

// ---- html.unescape ---------------------------------------------------------------------
static int name_cmp(const char *a, size_t an, const char *b)
{
	int r = strncmp(a, b, an);
	return r ? r : b[an] ? -1 : 0;
}

// the HTML5 table entry named exactly a[0..n) (with its ';' if any), or NULL
static const BpeEntity *html5_find(const BpeEntity *t, int nt, const char *a, size_t n)
{
	int lo = 0, hi = nt - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, r = name_cmp(a, n, t[mid].name);
		if (!r)
			return &t[mid];
		if (r < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int in_ranges(const uint32_t (*r)[2], int n, uint32_t c)
{
	for (int i = 0; i < n; i++)
		if (c >= r[i][0] && c <= r[i][1])
			return 1;
	return 0;
}

static int push_all(BpeU32 *o, const uint32_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (bpe_u32_push(o, p[i]))
			return -ENOMEM;
	return 0;
}

// numeric reference at s[i] == '&', s[i+1] == '#': Python's
// &(#[0-9]+;?|#[xX][0-9a-fA-F]+;?); 0 when it does not match, else the length and *cp
// (0xffffffff: dropped)
static size_t numeric_ref(const uint32_t *s, size_t n, size_t i, uint32_t *cp)
{
	size_t j = i + 2;
	int hex = j < n && (s[j] == 'x' || s[j] == 'X');
	j += (size_t)hex;
	size_t d0 = j;
	uint64_t v = 0;
	for (; j < n; j++) {
		uint32_t c = s[j], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (hex && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		v = v * (hex ? 16 : 10) + d;
		if (v > 0x110000) // Python's int is unbounded; everything above is U+FFFD alike
			v = 0x110000;
	}
	if (j == d0)
		return 0;
	if (j < n && s[j] == ';')
		j++;
	uint32_t num = (uint32_t)v;
	*cp = 0;
	for (int k = 0; k < bpe_n_invalid_charrefs && !*cp; k++)
		if (bpe_invalid_charrefs[k][0] == num)
			*cp = bpe_invalid_charrefs[k][1];
	if (!*cp) {
		if ((num >= 0xd800 && num <= 0xdfff) || num > 0x10ffff)
			*cp = 0xfffd;
		else if (in_ranges(bpe_invalid_codepoints, bpe_n_invalid_codepoints, num))
			*cp = 0xffffffff;
		else
			*cp = num;
	}
	return j - i;
}

// named reference &[^\t\n\f <&#;]{1,32};? at s[i]: appends its replacement; 0 = no match
static int named_ref(BpeU32 *o, const uint32_t *s, size_t n, size_t i, size_t *used)
{
	char name[40];
	size_t j = i + 1, ascii = 0;
	int all_ascii = 1;
	while (j < n && j - (i + 1) < 32) {
		uint32_t c = s[j];
		if (c == '\t' || c == '\n' || c == '\f' || c == ' ' || c == '<' || c == '&' || c == '#' || c == ';')
			break;
		if (c >= 0x80)
			all_ascii = 0;
		if (all_ascii)
			name[ascii++] = (char)c;
		j++;
	}
	if (j == i + 1)
		return 0;
	if (j < n && s[j] == ';') {
		if (all_ascii)
			name[ascii++] = ';';
		j++;
	}
	size_t len = j - (i + 1); // s[i+1 .. j)
	*used = j - i;
	const BpeEntity *e = all_ascii ? html5_find(bpe_html5, bpe_n_html5, name, len) : NULL;
	if (e)
		return push_all(o, e->cp, (size_t)e->n) ? -ENOMEM : 1;
	// the longest prefix that is a name (the standard's rule for names without ';')
	for (size_t x = (len - 1 < ascii ? len - 1 : ascii); x > 1; x--)
		if ((e = html5_find(bpe_html5, bpe_n_html5, name, x)))
			return push_all(o, e->cp, (size_t)e->n) || push_all(o, s + i + 1 + x, len - x) ? -ENOMEM : 1;
	return push_all(o, s + i, j - i) ? -ENOMEM : 1;
}

int bpe_html_unescape(BpeU32 *s)
{
	size_t i = 0;
	while (i < s->n && s->p[i] != '&')
		i++;
	if (i == s->n)
		return 0;
	BpeU32 o = {0};
	if (push_all(&o, s->p, i))
		return -ENOMEM;
	while (i < s->n) {
		size_t used = 0;
		if (s->p[i] == '&' && i + 1 < s->n && s->p[i + 1] == '#') {
			uint32_t cp;
			if ((used = numeric_ref(s->p, s->n, i, &cp)) && cp != 0xffffffff && bpe_u32_push(&o, cp))
				goto oom;
		} else if (s->p[i] == '&') {
			int r = named_ref(&o, s->p, s->n, i, &used);
			if (r < 0)
				goto oom;
		}
		if (used) {
			i += used;
		} else if (bpe_u32_push(&o, s->p[i++])) {
			goto oom;
		}
	}
	bpe_u32_free(s);
	*s = o;
	return 0;
oom:
	bpe_u32_free(&o);
	return -ENOMEM;
}

// ---- Python str methods ----------------------------------------------------------------
// " ".join(text.split()): runs of white space -> one space, none at the ends
static void collapse_space(BpeU32 *s)
{
	size_t o = 0;
	int pending = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (bpe_py_isspace(s->p[i])) {
			pending = o > 0;
			continue;
		}
		if (pending)
			s->p[o++] = ' ';
		pending = 0;
		s->p[o++] = s->p[i];
	}
	s->n = o;
}

// Unicode's Cased and Case_Ignorable, as Python's final-sigma rule uses them
static int is_cased(uint32_t c)
{
	utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
	return k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LL || k == UTF8PROC_CATEGORY_LT ||
	       utf8proc_tolower((utf8proc_int32_t)c) != (utf8proc_int32_t)c ||
	       utf8proc_toupper((utf8proc_int32_t)c) != (utf8proc_int32_t)c;
}

static int is_case_ignorable(uint32_t c)
{
	utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
	return k == UTF8PROC_CATEGORY_MN || k == UTF8PROC_CATEGORY_ME || k == UTF8PROC_CATEGORY_CF ||
	       k == UTF8PROC_CATEGORY_LM || k == UTF8PROC_CATEGORY_SK || c == '\'' || c == '.' || c == ':' ||
	       c == '^' || c == '`' || c == 0xb7 || c == 0x2018 || c == 0x2019 || c == 0x2024 || c == 0xfe52 ||
	       c == 0xff07 || c == 0xff0e;
}

// str.lower(): full mapping (U+0130 -> i + U+0307), final sigma by context
static int py_lower(BpeU32 *s)
{
	BpeU32 o = {0};
	for (size_t i = 0; i < s->n; i++) {
		uint32_t c = s->p[i];
		int rc;
		if (c == 0x130) {
			rc = bpe_u32_push(&o, 'i') || bpe_u32_push(&o, 0x307);
		} else if (c == 0x3a3) {
			size_t j = i;
			while (j > 0 && is_case_ignorable(s->p[j - 1]))
				j--;
			int fin = j > 0 && is_cased(s->p[j - 1]);
			if (fin) {
				j = i + 1;
				while (j < s->n && is_case_ignorable(s->p[j]))
					j++;
				fin = j == s->n || !is_cased(s->p[j]);
			}
			rc = bpe_u32_push(&o, fin ? 0x3c2 : 0x3c3);
		} else {
			rc = bpe_u32_push(&o, (uint32_t)utf8proc_tolower((utf8proc_int32_t)c));
		}
		if (rc) {
			bpe_u32_free(&o);
			return -ENOMEM;
		}
	}
	bpe_u32_free(s);
	*s = o;
	return 0;
}

int bpe_clip_clean(BpeU32 *s)
{
	int rc = bpe_ftfy_fix_text(s);
	if (!rc)
		rc = bpe_html_unescape(s);
	if (!rc)
		rc = bpe_html_unescape(s);
	if (rc)
		return rc;
	collapse_space(s); // also basic_clean's strip()
	return py_lower(s);
}
