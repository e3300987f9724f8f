// The evaluation's forward of one block of samples, the one both tools/eval and the trainer's
// in-process evaluation call, so their features agree bit for bit.
#ifndef EVAL_EVAL_BLOCK_H
#define EVAL_EVAL_BLOCK_H
// defines: EVAL_EMBED_BLOCK, eval_block_forward

#include "model.h" // defines: ClipModel, KTensor

// Rows of every evaluation forward (tools/eval and the trainer's). BLAS results depend on the row
// count (and a row's place in the tiles), so features are computed in blocks of this many samples
// at fixed places, the last block padded: a sample's features depend only on its index, never on
// the batch a user asks for or the training batch.
#define EVAL_EMBED_BLOCK 8

// clips (B, T, S, S, 3) u8 and text (B, ctx) i32 on m's device, B = m's batch (EVAL_EMBED_BLOCK for
// an evaluation model), through both towers into m->vfeat and m->tfeat: the clips normalized as
// the trainer does (kern_augment), never flipped (pos (B) i64 is read but its flip bit unused).
// 0 or the op's -errno (kern_error_message(m->ctx) says which op).
int eval_block_forward(ClipModel *m, const KTensor *clips, const KTensor *pos, const KTensor *text);

#endif
