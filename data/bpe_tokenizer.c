// CLIP-style byte-level BPE: vocabulary and merge ranks from a merges file, and the merge
// loop of OpenAI's simple_tokenizer (lowest-ranked adjacent pair first, all its occurrences).
#include "bpe.h" // defines: bpe_load, bpe_tokenize, bpe_decode, ..., bpe_normalize, bpe_pretokenize, bpe_byte_unicode
#include "hash_fnv.h" // defines: fnv1a64_more, FNV1A64_BASIS_VOCAB
#include "fs_dir.h"   // defines: fs_open_regular

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

typedef struct {
	uint64_t key; // left id << 32 | right id; 0 = empty slot (id pair (0,0) stored +1)
	int32_t rank, result;
} PairSlot;

struct BpeTokenizer {
	int n_vocab, n_merges;
	BpeSpecials specials;
	char *sp_str[2][2];  // [rule][start, end] in arena
	uint64_t vocab_hash; // bpe_vocab_hash
	char **tok;          // (n_vocab) strings in bytes_to_unicode form
	char *arena;         // backing store of tok
	int32_t *str_tab;    // (str_cap) open-addressing string -> id, -1 empty
	size_t str_cap;
	PairSlot *pair_tab; // (pair_cap)
	size_t pair_cap;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
	return fnv1a64_more(FNV1A64_BASIS_VOCAB, s, n);
}

static uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

// string -> id with "last assignment wins" like a Python dict built in vocab order
static void str_put(BpeTokenizer *t, int id)
{
	const char *s = t->tok[id];
	size_t n = strlen(s), m = t->str_cap - 1;
	for (size_t h = hash_bytes(s, n) & m;; h = (h + 1) & m) {
		int32_t e = t->str_tab[h];
		if (e < 0 || strcmp(t->tok[e], s) == 0) {
			t->str_tab[h] = id;
			return;
		}
	}
}

static int str_get(const BpeTokenizer *t, const char *s, size_t n)
{
	size_t m = t->str_cap - 1;
	for (size_t h = hash_bytes(s, n) & m;; h = (h + 1) & m) {
		int32_t e = t->str_tab[h];
		if (e < 0)
			return -1;
		if (strlen(t->tok[e]) == n && memcmp(t->tok[e], s, n) == 0)
			return e;
	}
}

static uint64_t pair_key(int a, int b)
{
	return ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1;
}

// a repeated pair takes its later rank, as dict(zip(merges, range(n))) does
static void pair_put(BpeTokenizer *t, int a, int b, int rank, int result)
{
	uint64_t k = pair_key(a, b);
	size_t m = t->pair_cap - 1;
	for (size_t h = hash_u64(k) & m;; h = (h + 1) & m) {
		if (t->pair_tab[h].key == 0 || t->pair_tab[h].key == k) {
			t->pair_tab[h] = (PairSlot){k, rank, result};
			return;
		}
	}
}

static const PairSlot *pair_get(const BpeTokenizer *t, int a, int b)
{
	uint64_t k = pair_key(a, b);
	size_t m = t->pair_cap - 1;
	for (size_t h = hash_u64(k) & m;; h = (h + 1) & m) {
		if (t->pair_tab[h].key == 0)
			return NULL;
		if (t->pair_tab[h].key == k)
			return &t->pair_tab[h];
	}
}

void bpe_free(BpeTokenizer *t)
{
	if (!t)
		return;
	free(t->tok);
	free(t->arena);
	free(t->str_tab);
	free(t->pair_tab);
	free(t);
}

static size_t pow2_above(size_t n)
{
	size_t c = 16;
	while (c < 2 * n)
		c <<= 1;
	return c;
}

int bpe_load_mem(BpeTokenizer **out, const char *text, size_t len, int *bad_line)
{
	*out = NULL;
	if (bad_line)
		*bad_line = 0;
	size_t body = 0;
	while (body < len && text[body] != '\n')
		body++;
	if (len == 0) { // no header line
		if (bad_line)
			*bad_line = 1;
		return -EINVAL;
	}
	// a header and no merges is a vocabulary of the bytes alone (open_clip reads it so): what
	// training on captions without a repeated pair (one word, one character) gives
	body = body < len ? body + 1 : len;
	// the merges in use: at most BPE_MAX_MERGES lines after the header, trailing blank
	// lines dropped
	size_t n_lines = 0, end = body;
	for (size_t p = body; p < len && n_lines < BPE_MAX_MERGES;) {
		size_t e = p;
		while (e < len && text[e] != '\n')
			e++;
		n_lines++;
		if (e > p && !(e == p + 1 && text[p] == '\r'))
			end = e;
		p = e + 1;
	}
	BpeTokenizer *t = calloc(1, sizeof(*t));
	uint32_t *split = malloc((n_lines + 1) * 2 * sizeof(uint32_t)); // (n_merges, 2): space, end
	size_t n_vocab_max = 512 + n_lines + 2;
	if (!t || !split) {
		free(t);
		free(split);
		return -ENOMEM;
	}
	t->tok = calloc(n_vocab_max, sizeof(char *));
	t->arena = malloc(512 * 8 + (end - body) + n_lines + 128);
	t->str_cap = pow2_above(n_vocab_max);
	t->str_tab = malloc(t->str_cap * sizeof(int32_t));
	t->pair_cap = pow2_above(n_lines + 1);
	t->pair_tab = calloc(t->pair_cap, sizeof(PairSlot));
	if (!t->tok || !t->arena || !t->str_tab || !t->pair_tab) {
		free(split);
		bpe_free(t);
		return -ENOMEM;
	}
	memset(t->str_tab, 0xff, t->str_cap * sizeof(int32_t));
	char *a = t->arena;
	int id = 0;
	uint8_t byte_of_rank[256]; // inverse of bpe_byte_rank (one pass, not a search per rank)
	for (int b = 0; b < 256; b++)
		byte_of_rank[bpe_byte_rank((uint8_t)b)] = (uint8_t)b;
	for (int eow = 0; eow < 2; eow++) {
		for (int r = 0; r < 256; r++) {
			int b = byte_of_rank[r];
			t->tok[id] = a;
			a += bpe_utf8_put(bpe_byte_unicode((uint8_t)b), a);
			if (eow) {
				memcpy(a, "</w>", 4);
				a += 4;
			}
			*a++ = 0;
			str_put(t, id++);
		}
	}
	int line_no = 1, rc = 0;
	uint64_t vh = FNV1A64_BASIS_VOCAB; // what manifests and checkpoints record
	for (size_t p = body; p < end;) {
		line_no++;
		size_t e = p;
		while (e < end && text[e] != '\n')
			e++;
		size_t l = e;
		if (l > p && text[l - 1] == '\r')
			l--;
		const char *sp = memchr(text + p, ' ', l - p);
		if (!sp || sp == text + p || sp + 1 == text + l || memchr(sp + 1, ' ', (size_t)(text + l - sp - 1))) {
			rc = -EINVAL;
			break;
		}
		if (!bpe_utf8_valid(text + p, l - p)) {
			rc = -EILSEQ;
			break;
		}
		vh = fnv1a64_more(vh, text + p, l - p);
		vh = fnv1a64_more(vh, "\n", 1);
		size_t nl = (size_t)(sp - text) - p, nr = l - (size_t)(sp - text) - 1;
		t->tok[id] = a;
		memcpy(a, text + p, nl);
		memcpy(a + nl, sp + 1, nr);
		a[nl + nr] = 0;
		split[2 * t->n_merges] = (uint32_t)nl;
		split[2 * t->n_merges + 1] = (uint32_t)(nl + nr);
		a += nl + nr + 1;
		str_put(t, id++);
		t->n_merges++;
		p = e + 1;
	}
	if (rc) {
		if (bad_line)
			*bad_line = line_no;
		free(split);
		bpe_free(t);
		return rc;
	}
	// ranks are resolved once every token is known: as in CLIP's encoder dict, a string's
	// id is its last occurrence, and a repeated merge keeps its last rank. A merge whose
	// parts are not tokens can never apply but keeps its vocabulary slot.
	for (int k = 0; k < t->n_merges; k++) {
		const char *m = t->tok[512 + k];
		int left = str_get(t, m, split[2 * k]);
		int right = str_get(t, m + split[2 * k], split[2 * k + 1] - split[2 * k]);
		if (left >= 0 && right >= 0)
			pair_put(t, left, right, k, str_get(t, m, split[2 * k + 1]));
	}
	free(split);
	// both rules' names: the arena holds the open_clip pair, the OpenAI pair follows it, and
	// bpe_set_specials points the two tokens at one or the other. Neither is a string a merge can
	// produce, so the string table need not know them.
	for (int r = 0; r < 2; r++)
		for (int k = 0; k < 2; k++) {
			const char *name = bpe_special_names((BpeSpecials)r)[k];
			t->sp_str[r][k] = a;
			strcpy(a, name);
			a += strlen(name) + 1;
		}
	t->tok[id++] = t->sp_str[0][0];
	t->tok[id++] = t->sp_str[0][1];
	t->n_vocab = id;
	t->vocab_hash = vh ? vh : 1;
	*out = t;
	return 0;
}

int bpe_load(BpeTokenizer **out, const char *path, int *bad_line)
{
	*out = NULL;
	if (bad_line)
		*bad_line = 0;
	struct stat st;
	int fd = fs_open_regular(path, &st); // a FIFO at path must not block the open
	if (fd < 0)
		return fd;
	// zlib reads gzip (open_clip ships bpe_simple_vocab_16e6.txt.gz) and plain files alike
	gzFile gz = gzdopen(fd, "rb");
	if (!gz) {
		close(fd);
		return -ENOMEM;
	}
	size_t cap = (size_t)st.st_size + 1, got = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			gzclose(gz);
			return -ENOMEM;
		}
		if (got + 1 == cap) {
			char *nb = cap > ((size_t)1 << 30) ? NULL : realloc(buf, 2 * cap); // merges files are MBs
			if (!nb) {
				free(buf);
				gzclose(gz);
				return cap > ((size_t)1 << 30) ? -EFBIG : -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		int r = gzread(gz, buf + got, (unsigned)(cap - 1 - got));
		if (r < 0) { // a damaged gzip stream
			free(buf);
			gzclose(gz);
			return -EBADMSG;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	int zerr;
	gzerror(gz, &zerr);
	gzclose(gz);
	if (zerr != Z_OK) { // a stream cut short ends in Z_BUF_ERROR, not in an error from gzread
		free(buf);
		return -EBADMSG;
	}
	int rc = bpe_load_mem(out, buf, got, bad_line);
	free(buf);
	return rc;
}

uint64_t bpe_vocab_hash(const BpeTokenizer *t)
{
	return t->vocab_hash;
}

int bpe_vocab_size(const BpeTokenizer *t)
{
	return t->n_vocab;
}
const char *const *bpe_special_names(BpeSpecials s)
{
	static const char *const names[2][2] = {{"<start_of_text>", "<end_of_text>"},
						{"<|startoftext|>", "<|endoftext|>"}};
	return names[s == BPE_SPECIALS_OPENAI];
}

void bpe_set_specials(BpeTokenizer *t, BpeSpecials s)
{
	t->specials = s == BPE_SPECIALS_OPENAI ? BPE_SPECIALS_OPENAI : BPE_SPECIALS_OPENCLIP;
	t->tok[t->n_vocab - 2] = t->sp_str[t->specials][0];
	t->tok[t->n_vocab - 1] = t->sp_str[t->specials][1];
}

int bpe_sot(const BpeTokenizer *t)
{
	return t->n_vocab - 2;
}
int bpe_eot(const BpeTokenizer *t)
{
	return t->n_vocab - 1;
}

const char *bpe_token_str(const BpeTokenizer *t, int id)
{
	return id >= 0 && id < t->n_vocab ? t->tok[id] : NULL;
}

// BPE of one pre-token (raw bytes); appends ids to ids[*n..cap), counting past cap
static int bpe_word(const BpeTokenizer *t, const char *s, size_t n, int32_t *ids, int *cnt, int cap)
{
	int32_t stack_sym[64], *sym = n <= 64 ? stack_sym : malloc(n * sizeof(int32_t));
	if (!sym)
		return -ENOMEM;
	int m = (int)n;
	for (int i = 0; i < m; i++)
		sym[i] = bpe_byte_rank((uint8_t)s[i]) + (i == m - 1 ? 256 : 0);
	while (m > 1) {
		int best_rank = -1, result = -1;
		int32_t a = 0, b = 0;
		for (int i = 0; i + 1 < m; i++) {
			const PairSlot *ps = pair_get(t, sym[i], sym[i + 1]);
			if (ps && (best_rank < 0 || ps->rank < best_rank))
				best_rank = ps->rank, result = ps->result, a = sym[i], b = sym[i + 1];
		}
		if (best_rank < 0)
			break;
		int o = 0;
		for (int i = 0; i < m;) {
			if (i + 1 < m && sym[i] == a && sym[i + 1] == b) {
				sym[o++] = result;
				i += 2;
			} else {
				sym[o++] = sym[i++];
			}
		}
		m = o;
	}
	for (int i = 0; i < m; i++, (*cnt)++)
		if (*cnt < cap)
			ids[*cnt] = sym[i];
	if (sym != stack_sym)
		free(sym);
	return 0;
}

int bpe_tokenize(const BpeTokenizer *t, const char *text, int32_t *ids, int ctx)
{
	return bpe_tokenize_len(t, text, strlen(text), ids, ctx);
}

int bpe_tokenize_len(const BpeTokenizer *t, const char *text, size_t len, int32_t *ids, int ctx)
{
	if (ctx < 2)
		return -EINVAL;
	char *norm;
	long n = bpe_normalize(text, len, &norm);
	if (n < 0)
		return (int)n;
	BpeSpan stack_sp[128], *sp = stack_sp;
	const char *const *specials = bpe_special_names(t->specials);
	size_t ns = bpe_pretokenize(norm, (size_t)n, specials, sp, 128);
	if (ns > 128) {
		sp = malloc(ns * sizeof(BpeSpan));
		if (!sp) {
			free(norm);
			return -ENOMEM;
		}
		bpe_pretokenize(norm, (size_t)n, specials, sp, ns);
	}
	int cnt = 0, rc = 0;
	ids[cnt++] = bpe_sot(t);
	for (size_t k = 0; k < ns && cnt < ctx && !rc; k++) {
		const char *w = norm + sp[k].off;
		int special = bpe_special_index(w, sp[k].len, specials);
		if (special >= 0)
			ids[cnt++] = special ? bpe_eot(t) : bpe_sot(t);
		else
			rc = bpe_word(t, w, sp[k].len, ids, &cnt, ctx);
	}
	if (sp != stack_sp)
		free(sp);
	free(norm);
	if (rc)
		return rc;
	if (cnt >= ctx)
		cnt = ctx;
	else
		cnt++;
	ids[cnt - 1] = bpe_eot(t);
	for (int i = cnt; i < ctx; i++)
		ids[i] = 0;
	return cnt;
}

long bpe_decode(const BpeTokenizer *t, const int32_t *ids, int n, char *buf, size_t cap)
{
	size_t o = 0;
	int trailing_space = 0;
	for (int i = 0; i < n; i++) {
		if (ids[i] < 0 || ids[i] >= t->n_vocab)
			return -EINVAL;
		if (ids[i] == bpe_eot(t))
			break;
		if (ids[i] == bpe_sot(t))
			continue;
		const char *s = t->tok[ids[i]];
		size_t l = strlen(s);
		for (size_t j = 0; j < l;) {
			int b;
			if (l - j >= 4 && memcmp(s + j, "</w>", 4) == 0) {
				b = ' ';
				j += 4;
			} else {
				int32_t c = bpe_utf8_next(s, l, &j);
				b = c < 0 ? -1 : bpe_unicode_byte((uint32_t)c);
				if (b < 0)
					return -EINVAL;
			}
			if (o + 1 < cap)
				buf[o] = (char)b;
			o++;
			trailing_space = b == ' ';
		}
	}
	if (trailing_space)
		o--; // the last word's separator
	if (cap)
		buf[o < cap ? o : cap - 1] = 0;
	return (long)o;
}
