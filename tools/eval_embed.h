// Embedding for tools/eval: every manifest sample's clip through the video tower and caption
// through the text tower, in batches, and extra token rows (class prompts) through the text tower.
#ifndef TOOLS_EVAL_EMBED_H
#define TOOLS_EVAL_EMBED_H
// defines: EvalProgressFn, EvalEmbedOpts, EVAL_EMBED_BLOCK, eval_check_manifest, eval_embed_manifest,
//          eval_embed_texts, eval_embed_views

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int32_t, int64_t

#include "eval.h"     // defines: EVAL_EMBED_BLOCK
#include "manifest.h" // defines: Manifest
#include "model.h"    // defines: ClipModel

// The model given to the functions below must have been created with the batch EVAL_EMBED_BLOCK
// (eval/eval.h: the trainer's in-process evaluation uses the same blocks and forward).

// done of total rows (samples, or sample views with EvalEmbedOpts.stride)
typedef void (*EvalProgressFn)(void *arg, int64_t done, int64_t total);

typedef struct {
	int round;               // clips decoded per round (<= 0: EVAL_EMBED_BLOCK; rounded up to a multiple of it)
	int decoders;            // clips decoded in parallel (<= 0: one per OpenMP thread)
	EvalProgressFn progress; // called after each batch (may be NULL)
	void *progress_arg;
	// NULL: a sample that cannot be decoded ends the embedding (--strict). Else (n_samples)
	// bytes: such a sample gets damaged[i] = 1 (features of a black clip, for the caller to
	// leave out) and the embedding goes on; the first one's reason into damaged_why.
	unsigned char *damaged;
	char *damaged_why;
	size_t damaged_why_len;
	// Multi-view clips (stride > 0; damaged must be NULL): each sample's views_clips x views_crops
	// views, clip-major, each the model's frames stride apart from its temporal clip's start with
	// crop start/centre/end (views_crops 3) or centre (1), as the loader plans them (LdParams'
	// eval views). 0: one view at segment midpoints, centre crop.
	int stride, views_clips, views_crops;
	// 1: the video tower alone (eval_block_forward_visual): vfeat rows are the pre-projection
	// feature, vis_width wide, not normalized; tfeat is not written and the captions are neither
	// checked nor read
	int visual;
} EvalEmbedOpts;

// Whether the model can read the manifest (and has the batch EVAL_EMBED_BLOCK): caption context = ctx_len, every token id < vocab,
// at least one sample. 0 or -EINVAL with a sentence in err.
int eval_check_manifest(const ClipModel *m, const Manifest *man, char *err, size_t errlen);

// vfeat, tfeat (n_samples, E): L2-normalized features of every sample in manifest order (with
// o->stride: vfeat (n_samples, views, E), each view a row of the blocks; tfeat as before). Clips
// are decoded as the loader does in eval mode (centre crop, segment midpoints) at the model's
// frames and image size, and normalized as the trainer does, without flip, then embedded in
// blocks of EVAL_EMBED_BLOCK (the last padded by repeating its last sample). A sample that cannot be decoded is an error (its index
// and the loader's reason in err) unless o->damaged marks it: 0 or -errno / -LD_ERR_*.
int eval_embed_manifest(ClipModel *m, const Manifest *man, float *vfeat, float *tfeat, const EvalEmbedOpts *o,
			char *err, size_t errlen);

// the views per sample o asks for (1 without a stride)
int eval_embed_views(const EvalEmbedOpts *o);

// tfeat (n, E) of ids (n, ctx_len) token rows (class prompts). The model's forward runs both
// towers, so the video tower sees zeros here and its output is dropped.
int eval_embed_texts(ClipModel *m, const int32_t *ids, int64_t n, float *tfeat, char *err, size_t errlen);

#endif
