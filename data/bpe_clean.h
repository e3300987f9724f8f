// CLIP's caption clean-up as open_clip's SimpleTokenizer runs it, on code-point strings:
// ftfy.fix_text (mojibake repair, HTML entities, C1 controls, ligatures, width, quotes, line
// breaks, terminal escapes, control characters, NFC), html.unescape, Python's strip/split/lower.
#ifndef DATA_BPE_CLEAN_H
#define DATA_BPE_CLEAN_H
// defines: BpeU32, bpe_u32_free, bpe_u32_push, bpe_u32_put_utf8, bpe_u32_from_utf8, bpe_u32_to_utf8, bpe_ftfy_fix_text, bpe_html_unescape,
//          bpe_clip_clean, bpe_is_letter, bpe_is_number, bpe_sys_is_letter, bpe_sys_is_number,
//          bpe_py_isspace

#include <stddef.h>
#include <stdint.h>

// a growable code-point string
typedef struct {
	uint32_t *p;
	size_t n, cap;
} BpeU32;

void bpe_u32_free(BpeU32 *s);
// appends c: 0 or -ENOMEM
int bpe_u32_push(BpeU32 *s, uint32_t c);
// c as UTF-8 into out (room for 4), the byte count
int bpe_u32_put_utf8(uint32_t c, char *out);
// well-formed UTF-8 -> code points: 0, -EILSEQ, -ENOMEM
int bpe_u32_from_utf8(BpeU32 *out, const char *s, size_t n);
// code points -> NUL-terminated malloc'ed UTF-8 in *out; returns its length or -ENOMEM
long bpe_u32_to_utf8(const BpeU32 *s, char **out);

// ftfy.fix_text with its default configuration (ftfy 6), in place; 0 or -ENOMEM
int bpe_ftfy_fix_text(BpeU32 *s);
// Python's html.unescape (full HTML5 table, numeric references as the standard says), in place
int bpe_html_unescape(BpeU32 *s);
// whitespace_clean(basic_clean(text)).lower(): fix_text, unescape twice, strip, runs of white
// space -> one space, lower-case as Python's str.lower (full mapping, final sigma); in place
int bpe_clip_clean(BpeU32 *s);

// Unicode classes of the `regex` pattern (\p{L}, \p{N}: the regex module's Unicode version,
// bpe_uclass.c) and Python's str.isspace
int bpe_is_letter(uint32_t c);
int bpe_is_number(uint32_t c);
// the same classes in utf8proc's Unicode: the \w of Python's re in ftfy's patterns (Python's
// unicodedata, not the regex module's)
int bpe_sys_is_letter(uint32_t c);
int bpe_sys_is_number(uint32_t c);
int bpe_py_isspace(uint32_t c);

#endif
