// CLIP-style byte-level BPE tokenizer: loads an OpenAI-CLIP-format merges file and turns a
// caption into context-length token ids (start token ... end token, zero padded).
#ifndef DATA_BPE_TOKENIZER_H
#define DATA_BPE_TOKENIZER_H
// defines: BpeTokenizer, BPE_CONTEXT, BPE_MAX_MERGES, bpe_load, bpe_load_mem, bpe_free, bpe_vocab_size, bpe_vocab_hash, BPE_OPENAI_VOCAB_HASH, bpe_sot, bpe_eot, BpeSpecials, bpe_set_specials, bpe_special_names, bpe_tokenize, bpe_tokenize_len, bpe_decode, bpe_token_str

#include <stddef.h>
#include <stdint.h>

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

#endif
