// The letter and number classes of CLIP's pre-token pattern, generated from the `regex` module
// open_clip matches with by tools/ref/gen_uclass_tables.py into bpe_uclass.c (private to common/).
#ifndef DATA_BPE_UCLASS_H
#define DATA_BPE_UCLASS_H
// defines: bpe_letter_ranges, bpe_number_ranges (each with its bpe_n_ count), bpe_uclass_unicode,
//          bpe_uclass_source

#include <stdint.h>

// sorted, disjoint, inclusive [first, last] code point ranges
extern const uint32_t bpe_letter_ranges[][2], bpe_number_ranges[][2];
extern const int bpe_n_letter_ranges, bpe_n_number_ranges;
// the Unicode version the tables follow ("16.0") and where they come from ("regex 2026.11.19")
extern const char bpe_uclass_unicode[], bpe_uclass_source[];

#endif
