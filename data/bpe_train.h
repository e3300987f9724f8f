// Learns a byte-level BPE vocabulary of a given size from captions, for users without
// OpenAI's merges file; the result is a merges file bpe_load reads.
#ifndef DATA_BPE_TRAIN_H
#define DATA_BPE_TRAIN_H
// defines: BpeTrainer, bpe_trainer_new, bpe_trainer_specials, bpe_trainer_add, bpe_trainer_train, bpe_trainer_free

#include <stddef.h>

#include "bpe_tokenizer.h" // defines: BpeSpecials

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
