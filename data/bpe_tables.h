// Data of CLIP's text clean-up, generated from the libraries open_clip's tokenizer runs (Python's
// html module, ftfy) by tools/ref/gen_text_tables.py into bpe_tables.c.
#ifndef DATA_BPE_TABLES_H
#define DATA_BPE_TABLES_H
// defines: BpeEntity, BpeSet, BpeAtom, BpeMap, BPE_N_ENCODINGS, BPE_ENC_WINDOWS_1252, bpe_html5, bpe_ftfy_entities,
//          bpe_invalid_charrefs, bpe_invalid_codepoints, bpe_py_spaces, bpe_enc_names, bpe_enc_table, bpe_sets,
//          bpe_badness_atoms, bpe_badness_alts, bpe_utf8_strict_set, bpe_utf8_cont_set, bpe_utf8_first_sets,
//          bpe_width_map, bpe_ligatures, bpe_control_chars (each table with its bpe_n_ count)

#include <stdint.h>

typedef struct {
	const char *name; // without the '&', with the ';' when the name has one; sorted by strcmp
	int n;            // code points of the value
	uint32_t cp[3];
} BpeEntity;

typedef struct {
	uint8_t negate;
	uint8_t cats;           // 1 \s, 2 \w, 4 \d (Python re, Unicode)
	uint16_t n;             // ranges
	const uint32_t (*r)[2]; // inclusive, ascending
} BpeSet;

typedef struct {
	uint8_t kind; // 0: one code point of set `set`; 1: any but '\n'; 2: beginning of the text
	uint8_t set;
	uint8_t min, max; // repetitions (greedy)
} BpeAtom;

typedef struct {
	uint32_t from;
	int n;
	uint32_t to[3];
} BpeMap;

// ftfy's CHARMAP_ENCODINGS (latin-1, sloppy-windows-1252, -1251, -1250, -1253, -1254, -1257,
// iso-8859-2, macroman, cp437), then strict windows-1252
#define BPE_N_ENCODINGS 11
#define BPE_ENC_WINDOWS_1252 10

extern const BpeEntity bpe_html5[], bpe_ftfy_entities[];
extern const int bpe_n_html5, bpe_n_ftfy_entities;
extern const uint32_t bpe_invalid_charrefs[][2], bpe_invalid_codepoints[][2];
extern const int bpe_n_invalid_charrefs, bpe_n_invalid_codepoints;
extern const uint32_t bpe_py_spaces[];
extern const int bpe_n_py_spaces;
extern const char *const bpe_enc_names[BPE_N_ENCODINGS];
extern const uint32_t bpe_enc_table[BPE_N_ENCODINGS][256];
extern const BpeSet bpe_sets[];
extern const BpeAtom bpe_badness_atoms[];
extern const uint16_t bpe_badness_alts[][2];
extern const int bpe_n_badness_alts;
extern const int bpe_utf8_strict_set, bpe_utf8_cont_set;
extern const int bpe_utf8_first_sets[3];
extern const BpeMap bpe_width_map[], bpe_ligatures[];
extern const int bpe_n_width_map, bpe_n_ligatures;
extern const uint32_t bpe_control_chars[];
extern const int bpe_n_control_chars;

#endif
