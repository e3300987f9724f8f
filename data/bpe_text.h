// Text side of the CLIP-style BPE tokenizer: UTF-8 checking, CLIP's clean-up (HTML
// unescape, whitespace collapse, lower-case), pre-tokenization and the byte<->unicode map.
#ifndef DATA_BPE_TEXT_H
#define DATA_BPE_TEXT_H
// defines: BpeSpan, bpe_utf8_valid, bpe_normalize, bpe_pretokenize, bpe_special_index, bpe_byte_unicode, bpe_byte_rank, bpe_unicode_byte, bpe_utf8_put

#include <stddef.h>
#include <stdint.h>

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

#endif
