// Drop path of the video tower's blocks, the model's side: which block gets which scales, and their
// release with the model. Private to model/ (the setup and the per-step draw are model.h's).
#ifndef MODEL_DROPPATH_H
#define MODEL_DROPPATH_H
// defines: model_drop_path_block, model_drop_path_free

#include "model.h" // defines: ClipModel, KTensor

// the (2, B) scales of video block l for the armed forward/backward, or NULL (not armed, rate 0 at l)
const KTensor *model_drop_path_block(ClipModel *m, int l);
// frees the scales and their staging (clip_model_destroy)
void model_drop_path_free(ClipModel *m);

#endif
