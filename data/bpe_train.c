// Byte-level BPE training: words counted once, then repeated merges of the most frequent
// adjacent pair, with pair counts updated only in the words that hold the merged pair.
#include "bpe.h" // defines: bpe_trainer_new, bpe_trainer_add, bpe_trainer_train, ..., bpe_normalize, bpe_pretokenize, bpe_byte_rank
#include "hash_fnv.h" // defines: fnv1a64_more, FNV1A64_BASIS_VOCAB

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	char *bytes; // malloc'ed
	uint32_t len;
	int64_t count;
} Word;

struct BpeTrainer {
	Word *words;
	size_t n_words, cap_words;
	int32_t *tab; // (tab_cap) open addressing: word index, -1 empty
	size_t tab_cap;
	BpeSpecials specials;
};

static uint64_t fnv(const char *s, size_t n)
{
	return fnv1a64_more(FNV1A64_BASIS_VOCAB, s, n); // the tokenizer's table hash
}

int bpe_trainer_new(BpeTrainer **out)
{
	BpeTrainer *tr = calloc(1, sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	tr->tab_cap = 1024;
	tr->tab = malloc(tr->tab_cap * sizeof(int32_t));
	if (!tr->tab) {
		free(tr);
		return -ENOMEM;
	}
	memset(tr->tab, 0xff, tr->tab_cap * sizeof(int32_t));
	*out = tr;
	return 0;
}

void bpe_trainer_free(BpeTrainer *tr)
{
	if (!tr)
		return;
	for (size_t i = 0; i < tr->n_words; i++)
		free(tr->words[i].bytes);
	free(tr->words);
	free(tr->tab);
	free(tr);
}

static int word_add(BpeTrainer *tr, const char *s, size_t n)
{
	if (2 * (tr->n_words + 1) > tr->tab_cap) {
		size_t cap = tr->tab_cap * 2;
		int32_t *tab = malloc(cap * sizeof(int32_t));
		if (!tab)
			return -ENOMEM;
		memset(tab, 0xff, cap * sizeof(int32_t));
		for (size_t i = 0; i < tr->n_words; i++) {
			size_t h = fnv(tr->words[i].bytes, tr->words[i].len) & (cap - 1);
			while (tab[h] >= 0)
				h = (h + 1) & (cap - 1);
			tab[h] = (int32_t)i;
		}
		free(tr->tab);
		tr->tab = tab;
		tr->tab_cap = cap;
	}
	size_t h = fnv(s, n) & (tr->tab_cap - 1);
	for (; tr->tab[h] >= 0; h = (h + 1) & (tr->tab_cap - 1)) {
		Word *w = &tr->words[tr->tab[h]];
		if (w->len == n && memcmp(w->bytes, s, n) == 0) {
			w->count++;
			return 0;
		}
	}
	if (tr->n_words == tr->cap_words) {
		size_t cap = tr->cap_words ? 2 * tr->cap_words : 256;
		Word *ws = realloc(tr->words, cap * sizeof(Word));
		if (!ws)
			return -ENOMEM;
		tr->words = ws;
		tr->cap_words = cap;
	}
	char *b = malloc(n);
	if (!b)
		return -ENOMEM;
	memcpy(b, s, n);
	tr->words[tr->n_words] = (Word){b, (uint32_t)n, 1};
	tr->tab[h] = (int32_t)tr->n_words++;
	return 0;
}

void bpe_trainer_specials(BpeTrainer *tr, BpeSpecials s)
{
	tr->specials = s;
}

int bpe_trainer_add(BpeTrainer *tr, const char *caption)
{
	char *norm;
	long n = bpe_normalize(caption, strlen(caption), &norm);
	if (n < 0)
		return (int)n;
	const char *const *specials = bpe_special_names(tr->specials);
	size_t ns = bpe_pretokenize(norm, (size_t)n, specials, NULL, 0);
	BpeSpan *sp = malloc((ns + 1) * sizeof(BpeSpan));
	if (!sp) {
		free(norm);
		return -ENOMEM;
	}
	bpe_pretokenize(norm, (size_t)n, specials, sp, ns);
	int rc = 0;
	for (size_t k = 0; k < ns && !rc; k++) {
		const char *w = norm + sp[k].off;
		if (bpe_special_index(w, sp[k].len, specials) >= 0)
			continue;
		rc = word_add(tr, w, sp[k].len);
	}
	free(sp);
	free(norm);
	return rc;
}

// ---- training state ------------------------------------------------------------------
typedef struct {
	int64_t count;
	uint64_t key; // left << 32 | right
} HeapItem;

typedef struct {
	uint64_t *keys; // (cap) key + 1, 0 empty
	int32_t *index; // (cap) pair index
	size_t cap, n;
	int64_t *count; // (n) occurrences weighted by word count
	int32_t **wl;   // (n) words that held the pair at some point (may repeat, may be stale)
	int32_t *wl_n, *wl_cap;
	size_t arr_cap;
	HeapItem *heap;
	size_t heap_n, heap_cap;
} Pairs;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	return x ^ (x >> 33);
}

static int heap_push(Pairs *p, int64_t count, uint64_t key)
{
	if (p->heap_n == p->heap_cap) {
		size_t cap = p->heap_cap ? 2 * p->heap_cap : 1024;
		HeapItem *h = realloc(p->heap, cap * sizeof(HeapItem));
		if (!h)
			return -ENOMEM;
		p->heap = h;
		p->heap_cap = cap;
	}
	// max-heap on count, then smaller key first
	size_t i = p->heap_n++;
	HeapItem it = {count, key};
	while (i > 0) {
		size_t up = (i - 1) / 2;
		HeapItem u = p->heap[up];
		if (u.count > it.count || (u.count == it.count && u.key < it.key))
			break;
		p->heap[i] = u;
		i = up;
	}
	p->heap[i] = it;
	return 0;
}

static HeapItem heap_pop(Pairs *p)
{
	HeapItem top = p->heap[0], last = p->heap[--p->heap_n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= p->heap_n)
			break;
		if (c + 1 < p->heap_n &&
		    (p->heap[c + 1].count > p->heap[c].count ||
		     (p->heap[c + 1].count == p->heap[c].count && p->heap[c + 1].key < p->heap[c].key)))
			c++;
		if (last.count > p->heap[c].count || (last.count == p->heap[c].count && last.key < p->heap[c].key))
			break;
		p->heap[i] = p->heap[c];
		i = c;
	}
	if (p->heap_n)
		p->heap[i] = last;
	return top;
}

// index of the pair, created when absent; -ENOMEM
static long pair_find(Pairs *p, uint64_t key, int create)
{
	if (create && 2 * (p->n + 1) > p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4096;
		uint64_t *keys = calloc(cap, sizeof(uint64_t));
		int32_t *index = malloc(cap * sizeof(int32_t));
		if (!keys || !index) {
			free(keys);
			free(index);
			return -ENOMEM;
		}
		for (size_t i = 0; i < p->cap; i++) {
			if (!p->keys[i])
				continue;
			size_t h = mix(p->keys[i]) & (cap - 1);
			while (keys[h])
				h = (h + 1) & (cap - 1);
			keys[h] = p->keys[i];
			index[h] = p->index[i];
		}
		free(p->keys);
		free(p->index);
		p->keys = keys;
		p->index = index;
		p->cap = cap;
	}
	if (!p->cap)
		return -1;
	size_t h = mix(key + 1) & (p->cap - 1);
	for (; p->keys[h]; h = (h + 1) & (p->cap - 1))
		if (p->keys[h] == key + 1)
			return p->index[h];
	if (!create)
		return -1;
	if (p->n == p->arr_cap) {
		size_t cap = p->arr_cap ? 2 * p->arr_cap : 4096;
		int64_t *count = realloc(p->count, cap * sizeof(int64_t));
		if (count)
			p->count = count;
		int32_t **wl = realloc(p->wl, cap * sizeof(int32_t *));
		if (wl)
			p->wl = wl;
		int32_t *wl_n = realloc(p->wl_n, cap * sizeof(int32_t));
		if (wl_n)
			p->wl_n = wl_n;
		int32_t *wl_cap = realloc(p->wl_cap, cap * sizeof(int32_t));
		if (wl_cap)
			p->wl_cap = wl_cap;
		if (!count || !wl || !wl_n || !wl_cap)
			return -ENOMEM;
		p->arr_cap = cap;
	}
	p->keys[h] = key + 1;
	p->index[h] = (int32_t)p->n;
	p->count[p->n] = 0;
	p->wl[p->n] = NULL;
	p->wl_n[p->n] = p->wl_cap[p->n] = 0;
	return (long)p->n++;
}

// adds delta occurrences of (a, b) held by word w
static int pair_add(Pairs *p, int32_t a, int32_t b, int64_t delta, int32_t w)
{
	uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
	long i = pair_find(p, key, 1);
	if (i < 0)
		return (int)i;
	p->count[i] += delta;
	if (delta > 0) {
		if (p->wl_n[i] == 0 || p->wl[i][p->wl_n[i] - 1] != w) {
			if (p->wl_n[i] == p->wl_cap[i]) {
				int32_t cap = p->wl_cap[i] ? 2 * p->wl_cap[i] : 4;
				int32_t *l = realloc(p->wl[i], (size_t)cap * sizeof(int32_t));
				if (!l)
					return -ENOMEM;
				p->wl[i] = l;
				p->wl_cap[i] = cap;
			}
			p->wl[i][p->wl_n[i]++] = w;
		}
		// a larger count needs a fresh heap entry; smaller ones are re-pushed when popped
		return heap_push(p, p->count[i], key);
	}
	return 0;
}

static void pairs_free(Pairs *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->wl[i]);
	free(p->keys);
	free(p->index);
	free(p->count);
	free(p->wl);
	free(p->wl_n);
	free(p->wl_cap);
	free(p->heap);
}

static size_t sym_len(char *const *merged, int id)
{
	if (id >= 512)
		return strlen(merged[id - 512]);
	int r = id % 256, b = 0;
	while (bpe_byte_rank((uint8_t)b) != r)
		b++;
	return (bpe_byte_unicode((uint8_t)b) < 0x80 ? 1u : 2u) + (id >= 256 ? 4u : 0u);
}

// writes the token string of symbol id (bytes_to_unicode form) to a growing buffer
static int sym_string(char *const *merged, int id, char *out)
{
	if (id < 512) {
		int r = id % 256, b = 0;
		while (bpe_byte_rank((uint8_t)b) != r)
			b++;
		int n = bpe_utf8_put(bpe_byte_unicode((uint8_t)b), out);
		if (id >= 256) {
			memcpy(out + n, "</w>", 4);
			n += 4;
		}
		return n;
	}
	size_t n = strlen(merged[id - 512]);
	memcpy(out, merged[id - 512], n);
	return (int)n;
}

// one merge (a, b) -> id applied to a word's symbols s (*n of them, updated) of frequency f: the
// pair counts of its neighbours move from the old pairs to the new ones
static int merge_in_word(Pairs *P, int32_t *s, uint32_t *n_syms, int32_t a, int32_t b, int32_t id, int64_t f, int32_t w)
{
	int rc = 0;
	uint32_t n = *n_syms, q = 0;
	for (uint32_t i = 0; i < n && !rc;) {
		if (i + 1 < n && s[i] == a && s[i + 1] == b) {
			if (q > 0) {
				rc = rc ? rc : pair_add(P, s[q - 1], a, -f, w);
				rc = rc ? rc : pair_add(P, s[q - 1], id, f, w);
			}
			rc = rc ? rc : pair_add(P, a, b, -f, w);
			if (i + 2 < n) {
				// the right neighbour pairs with the merged token
				int32_t r = s[i + 2];
				rc = rc ? rc : pair_add(P, b, r, -f, w);
				rc = rc ? rc : pair_add(P, id, r, f, w);
			}
			s[q++] = id;
			i += 2;
		} else {
			s[q++] = s[i++];
		}
	}
	*n_syms = q;
	return rc;
}

// the merges file's text of the done merges (parts[k] = the two symbols of merge k)
static int merges_text(char **merged, int32_t (*parts)[2], int done, char **text, size_t *len)
{
	size_t cap = 32;
	for (int k = 0; k < done; k++)
		cap += strlen(merged[k]) + 16;
	char *t = malloc(cap);
	if (!t)
		return -ENOMEM;
	// lines joined by '\n' with none after the last: open_clip splits the file on '\n' and
	// would read a trailing empty line as one more (empty) merge, shifting the special ids
	size_t n = (size_t)snprintf(t, cap, "#version: 0.2");
	for (int k = 0; k < done; k++) {
		t[n++] = '\n';
		n += (size_t)sym_string(merged, parts[k][0], t + n);
		t[n++] = ' ';
		n += (size_t)sym_string(merged, parts[k][1], t + n);
	}
	t[n] = 0;
	*text = t;
	*len = n;
	return 0;
}

int bpe_trainer_train(BpeTrainer *tr, int vocab_size, char **text, size_t *len, int *n_merges)
{
	*text = NULL;
	*len = 0;
	*n_merges = 0;
	if (vocab_size < 515)
		return -EINVAL;
	int want = vocab_size - 514;
	size_t total = 0;
	for (size_t i = 0; i < tr->n_words; i++)
		total += tr->words[i].len;
	int32_t *syms = malloc((total + 1) * sizeof(int32_t)); // words' symbols, back to back
	size_t *off = malloc((tr->n_words + 1) * sizeof(size_t));
	uint32_t *wlen = malloc((tr->n_words + 1) * sizeof(uint32_t));
	int32_t *stamp = malloc((tr->n_words + 1) * sizeof(int32_t));
	char **merged = calloc((size_t)want, sizeof(char *)); // (want) merged token strings
	int32_t(*parts)[2] = malloc((size_t)want * sizeof(*parts));
	Pairs P = {0};
	int rc = 0, done = 0;
	if (!syms || !off || !wlen || !stamp || !merged || !parts) {
		rc = -ENOMEM;
		goto out;
	}
	size_t o = 0;
	for (size_t i = 0; i < tr->n_words; i++) {
		const Word *w = &tr->words[i];
		off[i] = o;
		wlen[i] = w->len;
		stamp[i] = -1;
		for (uint32_t k = 0; k < w->len; k++)
			syms[o + k] = bpe_byte_rank((uint8_t)w->bytes[k]) + (k + 1 == w->len ? 256 : 0);
		for (uint32_t k = 0; k + 1 < w->len && !rc; k++)
			rc = pair_add(&P, syms[o + k], syms[o + k + 1], w->count, (int32_t)i);
		o += w->len;
	}
	while (!rc && done < want && P.heap_n) {
		HeapItem top = heap_pop(&P);
		long pi = pair_find(&P, top.key, 0);
		if (top.count != P.count[pi]) {
			if (P.count[pi] < top.count && P.count[pi] > 0)
				rc = heap_push(&P, P.count[pi], top.key);
			continue;
		}
		if (top.count < 2)
			break;
		int32_t a = (int32_t)(top.key >> 32), b = (int32_t)(top.key & 0xffffffffu), id = 512 + done;
		size_t la = sym_len(merged, a), lb = sym_len(merged, b);
		char *m = malloc(la + lb + 1);
		if (!m) {
			rc = -ENOMEM;
			break;
		}
		sym_string(merged, a, m);
		sym_string(merged, b, m + la);
		m[la + lb] = 0;
		merged[done] = m;
		parts[done][0] = a, parts[done][1] = b;
		// snapshot of the word list: pair_add may grow it while we walk it
		int32_t nwl = P.wl_n[pi];
		int32_t *wl = malloc((size_t)(nwl + 1) * sizeof(int32_t));
		if (!wl) {
			rc = -ENOMEM;
			break;
		}
		memcpy(wl, P.wl[pi], (size_t)nwl * sizeof(int32_t));
		for (int32_t k = 0; k < nwl && !rc; k++) {
			int32_t w = wl[k];
			if (stamp[w] == done)
				continue;
			stamp[w] = done;
			rc = merge_in_word(&P, syms + off[w], &wlen[w], a, b, id, tr->words[w].count, w);
		}
		free(wl);
		done++;
	}
	if (rc)
		goto out;
	rc = merges_text(merged, parts, done, text, len);
	*n_merges = rc ? 0 : done;
out:
	pairs_free(&P);
	if (merged)
		for (int k = 0; k < want; k++)
			free(merged[k]);
	free(merged);
	free(parts);
	free(syms);
	free(off);
	free(wlen);
	free(stamp);
	return rc;
}
