// CLIP's BPE tokenizer (libdata): text clean-up and pre-tokens, loading merges and tokenizing,
// and training a vocabulary from captions.
#ifndef DATA_BPE_H
#define DATA_BPE_H
// defines: BpeSpan, bpe_utf8_valid, bpe_normalize, bpe_pretokenize, bpe_special_index, bpe_byte_unicode,
//          bpe_byte_rank, bpe_unicode_byte, bpe_utf8_put, BpeTokenizer, BPE_CONTEXT, BPE_MAX_MERGES, bpe_load,
//          bpe_load_mem, bpe_free, bpe_vocab_size, bpe_vocab_hash, BPE_OPENAI_VOCAB_HASH, bpe_sot, bpe_eot,
//          BpeSpecials, bpe_set_specials, bpe_special_names, bpe_tokenize, bpe_tokenize_len, bpe_decode,
//          bpe_token_str, BpeTrainer, bpe_trainer_new, bpe_trainer_specials, bpe_trainer_add,
//          bpe_trainer_train, bpe_trainer_free

#include <stddef.h>
#include <stdint.h>

// ---- text (bpe_text) ----
// Text side of the CLIP-style BPE tokenizer: UTF-8 checking, CLIP's clean-up (HTML
// unescape, whitespace collapse, lower-case), pre-tokenization and the byte<->unicode map.

// a pre-token: bytes [off, off+len) of the normalized text
typedef struct {
	uint32_t off, len;
} BpeSpan;

// 1 when s[0..n) is well-formed UTF-8 (no overlongs, surrogates or code points > U+10FFFF)
int bpe_utf8_valid(const char *s, size_t n);

// open_clip's clean-up, exactly: whitespace_clean(basic_clean(text)).lower(), i.e. ftfy.fix_text
// (mojibake repair, entities, C1 controls, ligatures, width, quotes, control characters, NFC),
// html.unescape twice, runs of white space -> one space, ends stripped, Python's lower().
// *out is malloc'ed and NUL-terminated. Returns its length, -EILSEQ for invalid UTF-8, -ENOMEM.
long bpe_normalize(const char *text, size_t n, char **out);

// Splits normalized text the way CLIP's pattern does: the two special tokens (specials[0], [1]:
// bpe_special_names), 's 't 're 've 'm 'll 'd, a run of letters, one digit, a run of anything else
// but white space. Letters and numbers are Unicode's \p{L} and \p{N} (utf8proc's data). Writes up
// to cap spans, returns how many there are (may exceed cap: call again with a bigger array).
size_t bpe_pretokenize(const char *s, size_t n, const char *const specials[2], BpeSpan *spans, size_t cap);
// the index (0 start, 1 end) of the special token specials[] that s[0..n) is, or -1
int bpe_special_index(const char *s, size_t n, const char *const specials[2]);

// byte b as CLIP's bytes_to_unicode code point, and its rank (vocabulary id of the byte)
uint32_t bpe_byte_unicode(uint8_t b);
int bpe_byte_rank(uint8_t b);
// inverse of bpe_byte_unicode: the byte for code point cp, or -1
int bpe_unicode_byte(uint32_t cp);
// appends cp as UTF-8 to out, returns the byte count (1-4)
int bpe_utf8_put(uint32_t cp, char *out);
// decodes one code point at s[*i], advancing *i; returns -1 for malformed UTF-8
int32_t bpe_utf8_next(const char *s, size_t n, size_t *i);

// ---- the tokenizer (bpe_tokenizer) ----
// CLIP-style byte-level BPE tokenizer: loads an OpenAI-CLIP-format merges file and turns a
// caption into context-length token ids (start token ... end token, zero padded).

#define BPE_CONTEXT 77
// OpenAI's file holds more merges; CLIP uses the first 49152 - 256 - 2 of them
#define BPE_MAX_MERGES 48894

typedef struct BpeTokenizer BpeTokenizer;

// Merges file layout (bpe_simple_vocab_16e6.txt): one header line, then one merge per line,
// "left right", both sides in bytes_to_unicode form, "</w>" marking the end of a word.
// Vocabulary: 256 bytes, 256 bytes + "</w>", one token per merge, the start and end tokens.
// bpe_load reads the file plain or gzip-compressed (as open_clip ships it, .txt.gz).
// Returns 0, -ENOENT/-EACCES/... from open, -EBADMSG for a damaged gzip stream, -EINVAL for a malformed line (its 1-based number in
// *bad_line when not NULL), -EILSEQ for a line that is not UTF-8, -ENOMEM.
int bpe_load(BpeTokenizer **out, const char *path, int *bad_line);
int bpe_load_mem(BpeTokenizer **out, const char *text, size_t len, int *bad_line);
void bpe_free(BpeTokenizer *t);

int bpe_vocab_size(const BpeTokenizer *t);
// The vocabulary's identity: FNV-1a 64 of the merges in use, each "left right" line with "\n"
// (not the header, line ends or unused lines: a gzipped or CRLF copy has the same), never 0.
// A manifest records it (ManifestHeader.vocab_hash), so captions are never read with another.
uint64_t bpe_vocab_hash(const BpeTokenizer *t);
// bpe_vocab_hash of OpenAI CLIP's bpe_simple_vocab_16e6.txt(.gz), the vocabulary of open_clip's
// weights (49408 tokens); test_bpe_clip_corpus checks it against the fixture
#define BPE_OPENAI_VOCAB_HASH 0x42b6402b19dcff54ull
int bpe_sot(const BpeTokenizer *t);
int bpe_eot(const BpeTokenizer *t);

// Which text in a caption is the start or end token (their ids, vocab_size - 2 and - 1, are the same
// either way). open_clip (default; its SimpleTokenizer, whose weights and ids this project takes)
// names them <start_of_text> and <end_of_text>, and "<|endoftext|>" in a caption is the ordinary
// pieces "<|", "endoftext", "|>". OpenAI's CLIP names them <|startoftext|> and <|endoftext|>.
typedef enum { BPE_SPECIALS_OPENCLIP = 0, BPE_SPECIALS_OPENAI = 1 } BpeSpecials;
// the start and end token's text under rule s: names[0], names[1]
const char *const *bpe_special_names(BpeSpecials s);
// the rule bpe_tokenize follows and bpe_token_str names the two tokens with (default open_clip's)
void bpe_set_specials(BpeTokenizer *t, BpeSpecials s);
// the token's string in bytes_to_unicode form (e.g. "dog</w>"), NULL when out of range
const char *bpe_token_str(const BpeTokenizer *t, int id);

// ids[0..ctx): sot, tokens, eot, zeros; longer captions are cut to ctx with eot kept last.
// Returns the number of non-padding ids, -EILSEQ for invalid UTF-8, -EINVAL for ctx < 2,
// -ENOMEM.
int bpe_tokenize(const BpeTokenizer *t, const char *text, int32_t *ids, int ctx);
// the same for text[0..len), which may hold NUL characters (ftfy drops them as controls)
int bpe_tokenize_len(const BpeTokenizer *t, const char *text, size_t len, int32_t *ids, int ctx);

// ids back to text (words separated by spaces; stops at eot, skips sot). Writes at most
// cap bytes including the NUL; returns the full length, or -EINVAL for an unknown id.
long bpe_decode(const BpeTokenizer *t, const int32_t *ids, int n, char *buf, size_t cap);

// ---- training (bpe_train) ----
// Learns a byte-level BPE vocabulary of a given size from captions, for users without
// OpenAI's merges file; the result is a merges file bpe_load reads.

typedef struct BpeTrainer BpeTrainer;

int bpe_trainer_new(BpeTrainer **out);
void bpe_trainer_free(BpeTrainer *tr);
// the rule that says which caption text is a special token (never counted); default open_clip's
void bpe_trainer_specials(BpeTrainer *tr, BpeSpecials s);
// counts the caption's words (normalized and split exactly as bpe_tokenize does);
// -EILSEQ for invalid UTF-8, -ENOMEM
int bpe_trainer_add(BpeTrainer *tr, const char *caption);
// Merges until the vocabulary (512 byte tokens + merges + 2 specials) has vocab_size
// entries or no pair occurs twice. Ties go to the pair seen first in the ordering of
// (left id, right id), so the result is deterministic. *text: malloc'ed merges file
// ("#version: 0.2" header, one "left right" line per merge); *n_merges: how many.
// Returns 0, -EINVAL for vocab_size < 515, -ENOMEM.
int bpe_trainer_train(BpeTrainer *tr, int vocab_size, char **text, size_t *len, int *n_merges);

#endif
