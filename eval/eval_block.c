// The evaluation's forward of one block: normalize without flip, then both towers (or the video
// tower alone, to its pre-projection feature).
#include "eval.h" // defines: eval_block_forward, eval_block_forward_visual

#include "kern_ops.h" // defines: kern_augment_tubelet

int eval_block_forward(ClipModel *m, const KTensor *clips, const KTensor *pos, const KTensor *text)
{
	int rc = kern_augment_tubelet(m->ctx, &m->patches, clips, pos, 0, 0, m->cfg.patch, m->cfg.tubelet);
	return rc ? rc : clip_model_forward_patches(m, &m->patches, text);
}

int eval_block_forward_visual(ClipModel *m, const KTensor *clips, const KTensor *pos)
{
	int rc = kern_augment_tubelet(m->ctx, &m->patches, clips, pos, 0, 0, m->cfg.patch, m->cfg.tubelet);
	return rc ? rc : clip_model_forward_visual(m, &m->patches);
}
