// model: the dual encoder on the op contract, its parameters, optimizer, safetensors weights
// and checkpoints (the one public header of this folder; the block's functions are private).
#ifndef MODEL_H
#define MODEL_H
// defines: ModelConfig, MODEL_ACT_GELU, MODEL_ACT_QUICKGELU, MODEL_POOL_CLS, MODEL_POOL_MEAN, model_config_preset, model_config_set, model_flag_table,
//          model_config_check, model_config_str, model_config_parse, model_act_name,
//          model_flops_per_sample, ParamSpec,
//          BlockWeights, ModelWeights, PARAM_NO_DECAY, WdGroups, model_layout, model_weights_bind,
//          model_layout_encoder, model_weights_bind_encoder,
//          model_weights_release, model_init_params, model_init_host, model_param_decays, model_params_set_wd_groups,
//          wd_groups_parse, wd_groups_name, model_params_check_finite, BlockActs, TowerScratch, ClipModel,
//          ClipModelOpts, ClipModelBytes, ClipGradGroup, ClipGradReadyFn,
//          clip_model_create, clip_model_create_opts, clip_model_bytes, clip_model_destroy, clip_model_sync_weights, clip_model_forward,
//          clip_model_forward_patches, clip_model_backward, clip_model_set_grad_hook, clip_model_forward_visual,
//          clip_model_backward_visual, clip_model_infonce_step, clip_model_set_drop_path, clip_model_drop_path_rate,
//          clip_model_drop_path_draw,
//          model_synth_batch, ModelSynthStep, model_synth_step, model_synth_step_free, OptKind, OptConfig, Optimizer, optim_config_default, optim_flag_table,
//          optim_config_describe, optim_lr, optim_lr_of, optim_join_schedule,
//          optim_create, optim_destroy, optim_set_rule, optim_step, optim_step_clipped, optim_step_live, optim_live,
//          StDtype, StTensor, StFile, st_dtype_name,
//          st_dtype_size, st_write_fd, st_write, st_open, st_open_err, st_open_as, st_parse, st_close, st_find, st_meta, st_count, st_entry,
//          StLoadOpts, st_model_save, st_model_load, st_model_tensors, ST_OPENCLIP_FORMAT, StInitOpts,
//          st_openclip_export, st_openclip_init, CkptState, CkptTarget, ckpt_save, ckpt_load_latest,
//          ckpt_latest_path, CKPT_MARKER, MaeConfig, MaeTokens, MaeDecoderWeights, MaeModel, mae_config_preset,
//          mae_flag_table, mae_config_check, mae_config_str, mae_config_parse, mae_tokens, mae_flops_per_sample,
//          mae_layout, mae_init_host, mae_init_params, mae_file_config, mae_encoder_to_clip, mae_model_create, mae_model_bytes, mae_model_destroy,
//          mae_model_sync_weights, mae_model_set_grad_hook, mae_model_set_masks, mae_model_set_mask_rows,
//          mae_model_forward, mae_model_backward

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t, uint64_t

#include "flags.h"    // defines: FlagSpec
#include "kern_ops.h" // defines: KernCtx, KTensor, KDtype, KOptPlan, KOptSegment, KSEG_*

// ---- sizes and presets ----
// Sizes of the dual-encoder model: presets (tiny, vit-s16, vit-b16, vit-l14) and per-size overrides
// by long flag name, checked for consistency with a message saying what is wrong.

typedef struct {
	// video tower: T frames of image_size^2, patch^2 patches, joint space-time attention
	int image_size, patch, frames, vis_width, vis_layers, vis_heads;
	// text tower: causal, context ctx_len, end-token pooling
	int vocab, ctx_len, txt_width, txt_layers, txt_heads;
	int embed_dim; // shared embedding both towers project to
	int mlp_ratio; // MLP hidden = mlp_ratio * width
	int act;       // MLP activation: MODEL_ACT_GELU (open_clip's default) or MODEL_ACT_QUICKGELU (OpenAI's weights)
	// frames per video token (VideoMAE's tubelet, 2 there): a token is tubelet x patch x patch pixels of 3
	// channels, T' = frames / tubelet slices of patches. 1 (every preset) is a token per frame, as open_clip
	// and AVION; the configuration line and the weights then read as before the field existed.
	int tubelet;
	// the video tower's pooled feature (clip_model_forward_visual, the projection's input): the class
	// token (MODEL_POOL_CLS, every preset's: CLIP's) or the mean of the other tokens (MODEL_POOL_MEAN:
	// VideoMAE's fine-tuning feature, fc_norm = ln_post here); the configuration line says " meanpool"
	int pool;
} ModelConfig;

enum { MODEL_ACT_GELU = 0, MODEL_ACT_QUICKGELU = 1 };
enum { MODEL_POOL_CLS = 0, MODEL_POOL_MEAN = 1 };

// fills cfg from a preset name; -ENOENT for an unknown name
int model_config_preset(ModelConfig *cfg, const char *name);
// sets one size by its flag name without dashes ("vis-width", "frames", ...), or "act" to gelu |
// quickgelu; -ENOENT unknown key, -EINVAL when value is not a positive integer (or an activation)
// the table model_config_set reads (common/flags.h): every size and --act
const FlagSpec *model_flag_table(int *n);
int model_config_set(ModelConfig *cfg, const char *key, const char *value);
// 0 when consistent; otherwise -EINVAL and a sentence in msg
int model_config_check(const ModelConfig *cfg, char *msg, size_t len);
// "gelu" | "quickgelu"
const char *model_act_name(int act);
// FLOPs of one sample's forward through both towers (2 per multiply-add): the linear layers, the
// attention's two products (the text tower's causal ones at half) and the projections; training
// counts 3x this (backward 2x), without --grad-checkpoint's recomputation (model FLOPs, for MFU)
double model_flops_per_sample(const ModelConfig *c);
// the one-line form checkpoints carry ("img224 p16 T4 v768/12/12 ... mlp4[ tt2][ meanpool][ quickgelu]") and back;
// parse: -EINVAL for a malformed or inconsistent line
void model_config_str(const ModelConfig *c, char *buf, size_t len);
int model_config_parse(const char *s, ModelConfig *c);

// ---- the parameter table ----
// The model's parameters: one table walk gives every tensor its open_clip name, shape, offset in
// one flat f32 buffer and weight-decay group, so names, layout and views cannot drift apart.

// PARAM_NO_DECAY: the optimizer applies no weight decay to the tensor (and LAMB's trust ratio is 1).
// The decision is made here, per tensor, by the grouping rule in force, so every optimizer
// (and a fused one over the flat buffer) reads it from the table.
enum { PARAM_NO_DECAY = 1 };

// Which tensors are decayed.
// WD_OPEN_CLIP (default): open_clip's and FastCLIP's rule: every tensor of 2 or more dimensions
//   whose name contains none of "bn", "ln", "bias", "logit_scale" (token, positional and
//   temporal embeddings are decayed).
// WD_AVCLIP: this project's earlier rule: no decay on 1-D tensors, embeddings and logit_scale.
typedef enum { WD_OPEN_CLIP = 0, WD_AVCLIP = 1 } WdGroups;

typedef struct {
	char name[96]; // open_clip state_dict name, e.g. visual.transformer.resblocks.0.attn.in_proj_weight
	int ndim; // open_clip shape (logit_scale is 0-D, conv1.weight is (W, 3, p, p), (W, 3, tt, p, p) with tubelets)
	int64_t shape[5];
	int64_t offset; // in floats, into the flat parameter buffer
	int64_t numel;
	int flags;
} ParamSpec;

typedef struct {
	KTensor ln1_w, ln1_b, qkv_w, qkv_b, out_w, out_b; // qkv_w (3W, W), out_w (W, W)
	KTensor ln2_w, ln2_b, fc_w, fc_b, proj_w, proj_b; // fc_w (4W, W), proj_w (W, 4W)
} BlockWeights;

// views into one flat buffer (parameters, or gradients with the same layout)
typedef struct {
	KTensor cls, pos, tpos; // (Wv), (1+P, Wv), (T', Wv): class token, spatial and temporal positions
	KTensor conv;           // (Wv, 3*tt*p*p): the patch (tubelet) embedding as a linear layer
	KTensor ln_pre_w, ln_pre_b, ln_post_w, ln_post_b;
	KTensor vproj;        // (Wv, E)
	BlockWeights *vblk;   // vis_layers
	KTensor wte, txt_pos; // (V, Wt), (ctx, Wt)
	KTensor ln_final_w, ln_final_b;
	KTensor tproj;       // (Wt, E)
	KTensor logit_scale; // (1): log of the inverse temperature
	BlockWeights *tblk;  // txt_layers
} ModelWeights;

// specs: room for every tensor, or NULL to count; returns 0 and the tensor and float counts.
// Decay flags follow WD_OPEN_CLIP.
int model_layout(const ModelConfig *cfg, ParamSpec *specs, int *n_specs, int64_t *n_floats);
// views of every tensor into flat (f32 or f64, n_floats elements); -EINVAL if flat is too small
int model_weights_bind(ModelWeights *w, const ModelConfig *cfg, const KTensor *flat);
// The video encoder alone: the visual.* tensors up to visual.ln_post (not visual.proj), the first
// n_floats of model_layout's buffer with the same names, shapes and offsets (the masked
// autoencoder's encoder: a clip or classify run loads it by those names). bind: the views of
// those tensors only (the text tower's and visual.proj's stay empty); flat needs n_floats.
int model_layout_encoder(const ModelConfig *cfg, ParamSpec *specs, int *n_specs, int64_t *n_floats);
int model_weights_bind_encoder(ModelWeights *w, const ModelConfig *cfg, const KTensor *flat);
void model_weights_release(ModelWeights *w);
// deterministic initialisation from a seed (open_clip's scheme; temporal embedding zero,
// logit_scale = ln(1/0.07)); each tensor draws from a stream keyed by (seed, a hash of its
// open_clip name), so adding, removing or moving a tensor changes no other tensor's values
int model_init_params(KernCtx *ctx, const ModelConfig *cfg, KTensor *flat, uint64_t seed);
// the same values for the n tensors of specs (any layout) into host memory at their offsets
void model_init_host(const ModelConfig *cfg, const ParamSpec *specs, int n, float *host, uint64_t seed);
// 1 when the tensor (open_clip name, dimensions of its open_clip shape) is decayed under g
int model_param_decays(const char *name, int ndim, WdGroups g);
// rewrites every spec's PARAM_NO_DECAY flag for rule g; -EINVAL for an unknown rule
int model_params_set_wd_groups(ParamSpec *specs, int n, WdGroups g);
// 0 when flat[0..numel) is finite; else -EINVAL and err says "<what>: tensor NAME holds K
// non-finite values (first: nan at element I)", NAME from the spec holding the first one (weights
// enter the model only when every value is finite: a NaN weight scores R@1 = 100% in evaluation).
int model_params_check_finite(const ParamSpec *specs, int n, const float *flat, int64_t numel, const char *what,
			      char *err, size_t errlen);
// "open_clip" | "avclip"; -EINVAL when unknown
int wd_groups_parse(const char *name, WdGroups *out);
const char *wd_groups_name(WdGroups g);

// ---- a transformer block's saved activations ----
// One pre-LN transformer block (x + attn(ln_1(x)), then + mlp(ln_2(.))) forward and backward on the
// op interface, shared by the video tower (joint space-time) and the text tower (causal).

// what one block keeps for its backward; N = B * L tokens of width W. Activations are in the
// model's activation dtype, the statistics (means, rstds, lse) in f32 (f64 in the f64 path).
typedef struct {
	KTensor ln1, ln1_m, ln1_r; // (B, L, W), (N), (N)
	KTensor qkv, att, lse;     // (B, L, 3W), (B, L, W), (B, H, L)
	KTensor res1;              // (B, L, W) x + attention branch
	KTensor ln2, ln2_m, ln2_r; // (B, L, W), (N), (N)
	KTensor fc, act;           // (B, L, mW) before and after GELU
	KTensor res2;              // (B, L, W) block output
} BlockActs;

// per-tower scratch reused by every block; dres carries the residual stream's gradient
typedef struct {
	KTensor dres, dln, datt, dqkv, dfc; // (B, L, W) x3, (B, L, 3W), (B, L, mW)
	KTensor dhead1, dhead2, demb;       // (B, W), (B, W), (B, E): the pooling/projection head
	int B, L, W, H, causal;
	KAct act; // the MLP's activation: KACT_GELU, or KACT_QUICKGELU for OpenAI CLIP's weights
	// the next block's drop path: (2, B) STAT scales of its attention and MLP branches (h + s[b]·branch
	// by kern_row_scale, the same scales in backward), NULL: none (the residual adds fused, as without)
	const KTensor *drop;
} TowerScratch;

// ---- the dual encoder ----
// The dual encoder: a video ViT (joint space-time attention, class token, pre-LN) and a CLIP text
// transformer (causal, end-token pooling), both projected to a shared L2-normalized space.

#define MODEL_MAX_TENSORS 1024

// a contiguous range of the flat gradient buffer (elements) whose gradients backward finishes together
typedef struct {
	int64_t offset, length;
} ClipGradGroup;

// called by clip_model_backward as soon as a group's gradient ops are queued (a device backend
// has not run them yet: record an event on the model's stream to know when they are done);
// a negative return stops backward and is returned by it
typedef int (*ClipGradReadyFn)(void *arg, int64_t offset, int64_t length);

typedef struct {
	KernCtx *ctx;
	ModelConfig cfg;
	KDtype dt;  // activations and the weights the ops read: f32 or bf16 (f64 for gradient checks)
	KDtype pdt; // master parameters, gradients and statistics: f32 (f64 with f64 activations)
	int B;      // batch the activations are sized for

	ParamSpec *specs; // n_specs tensors, open_clip names, offsets into params/grads
	int n_specs;
	int64_t n_params;
	KTensor params, grads; // flat (n_params) pdt: the master weights and their gradients
	KTensor weights;       // flat (n_params) dt: a bf16 copy of params, or params itself
	ModelWeights w, g;     // views of every tensor into weights / grads
	KTensor log_s;         // (1) pdt: logit_scale in params, the loss ops' temperature
	ClipGradGroup *groups; // n_groups, in the order backward finishes them: logit_scale (the loss's),
	int n_groups;          // the text head, text blocks last to first, the text embeddings, then the
			       // same for the video tower; adjacent and descending, together all of grads
	ClipGradReadyFn hook;
	void *hook_arg;
	int vision_only;              // ClipModelOpts.vision_only
	int grad_ckpt;                // blocks keep only their output; the rest lives in one set per tower
	BlockActs vshared, tshared;   // with grad_ckpt: the internals every block of a tower writes
	struct ClipModelBytes *count; // clip_model_bytes: count allocations instead of making them
	// drop path of the video tower's blocks (clip_model_set_drop_path): the largest rate, linear in
	// depth or not, the scales drawn for the next forward/backward pair (dp_armed), their pinned
	// staging and the event after its upload, the current block's view the scratch points at
	double dp_rate;
	int dp_linear, dp_armed;
	KTensor dp_scale, dp_block; // (vis_layers, 2, B) pdt, (2, B) a view of it
	void *dp_host;
	KEvent *dp_up;

	// video tower: Lv = 1 + T'*P tokens, T' = frames / tubelet
	KTensor patches, pemb;          // (B, T'*P, 3*tt*p*p) from video, (B, T'*P, Wv)
	KTensor patch_in;               // view of the patches the last forward read, for backward
	KTensor x0, xpre, pre_m, pre_r; // (B, Lv, Wv) embedded and after ln_pre, (B*Lv) x2
	BlockActs *vacts;
	KTensor cls_pos;                         // (B) i32 zeros: class-token pooling
	KTensor vpool, vln, vln_m, vln_r, vproj; // (B, Wv) x2, (B) x2, (B, E)
	KTensor vfeat, vnorm;                    // (B, E) L2-normalized video features, (B)
	TowerScratch vs;

	// text tower: ctx_len tokens
	KTensor tx0; // (B, ctx, Wt)
	BlockActs *tacts;
	KTensor eot; // (B) i32 end-token positions
	KTensor tpool, tln, tln_m, tln_r, tproj, tfeat, tnorm;
	TowerScratch ts;
	KTensor text_ids; // view of the last forward's ids, for backward

	// local InfoNCE
	KTensor loss, dvfeat, dtfeat; // (1) pdt, (B, E) x2

	KTensor *owned[MODEL_MAX_TENSORS];
	int n_owned;
} ClipModel;

// dt: the activation dtype (f32, bf16 or f64). Parameters are zero until
// model_init_params(ctx, &cfg, &m->params, seed) or a weight load, then clip_model_sync_weights.
// Reserves the op workspace the model needs on ctx.
int clip_model_create(ClipModel **out, KernCtx *ctx, const ModelConfig *cfg, int batch, KDtype dt);
// Activation checkpointing per transformer block: forward keeps each block's output only (the
// internals of every block of a tower share one set of buffers), backward recomputes a block's
// forward from its input before its backward (the last block of each tower still holds its own).
// The ops are deterministic, so the gradients are the same bits as without it.
// vision_only (classification fine-tuning): no text-tower activations; only
// clip_model_forward_visual / clip_model_backward_visual may run (the parameters keep the full layout).
typedef struct {
	int grad_checkpoint;
	int vision_only;
} ClipModelOpts;
int clip_model_create_opts(ClipModel **out, KernCtx *ctx, const ModelConfig *cfg, int batch, KDtype dt,
			   const ClipModelOpts *o);
// what clip_model_create_opts would allocate on ctx's device, counted by the same code without
// allocating: parameters (master, gradients, the bf16 weight copy), activations (and the backward's
// scratch), and the op workspace it reserves (bytes)
typedef struct ClipModelBytes {
	size_t params, activations, workspace;
} ClipModelBytes;
int clip_model_bytes(KernCtx *ctx, const ModelConfig *cfg, int batch, KDtype dt, const ClipModelOpts *o,
		     ClipModelBytes *out);
void clip_model_destroy(ClipModel *m);
// refreshes m->weights from m->params after they changed (a no-op unless dt is bf16)
int clip_model_sync_weights(ClipModel *m);
// video (B, T, H, W, 3) normalized pixels, text (B, ctx) i32 ids -> m->vfeat, m->tfeat. Tubelets of
// more than one frame have no patchify op for float video: -ENOTSUP (use clip_model_forward_patches)
int clip_model_forward(ClipModel *m, const KTensor *video, const KTensor *text);
// the same from patches (B, T'*P, 3*tt*p*p) as kern_augment_tubelet writes them (kept for backward)
int clip_model_forward_patches(ClipModel *m, const KTensor *patches, const KTensor *text);
// gradients of both feature sets (B, E) from any loss: every parameter gradient but logit_scale's
// is written (not added) into m->grads, so nothing needs clearing; the loss writes logit_scale's
// before. The hook (if set) hears of each group of m->groups as it is done, logit_scale first.
int clip_model_backward(ClipModel *m, const KTensor *dvfeat, const KTensor *dtfeat);
void clip_model_set_grad_hook(ClipModel *m, ClipGradReadyFn fn, void *arg);
// The video tower alone, for classification: patches -> m->vln (B, Wv), ln_post of the class token
// (the pre-projection feature AVION fine-tunes on), or of the mean of the other tokens with
// MODEL_POOL_MEAN (VideoMAE's); visual.proj is not used.
int clip_model_forward_visual(ClipModel *m, const KTensor *patches);
// its backward from dvln (B, Wv): the video tower's gradients written; every other gradient
// (text tower, visual.proj, logit_scale) left as it is (zero in a vision_only model); every group
// reported to the hook in order
int clip_model_backward_visual(ClipModel *m, const KTensor *dvln);
// forward, symmetric InfoNCE on the local batch (incl. the logit scale), backward;
// Drop path (stochastic depth, training only) in the video tower's blocks: a block's attention and MLP
// branches are each scaled per sample, h + s[b]·branch, s = 1/keep or 0 from kern_drop_path_scales
// (kern_cls.h) of layers 2l and 2l + 1 for block l. Block l's rate is `rate` (uniform: AVION's CLIP ViT
// gives every block its drop_path_rate) or rate·l/(L − 1) (linear: timm's drop_path_rate, 0 for one
// block). Setup, once; rate in [0, 1] (0: off, no allocation). -EINVAL, -ENOMEM.
int clip_model_set_drop_path(ClipModel *m, double rate, int linear);
// block l's rate under that setting
double clip_model_drop_path_rate(const ClipModel *m, int l);
// Draws the scales of step `step` for the next forward and backward of the video tower: this rank's
// rows are rows row0 .. row0 + B − 1 of a global batch of `rows` (so K ranks draw what one rank of the
// concatenated batch would), keyed by seed. Queued (a pinned staging buffer, reused once its last
// upload is done: the host waits only when it runs a whole step ahead of that upload); the next
// clip_model_backward_visual or clip_model_backward disarms them, so a forward that follows without a
// draw (evaluation) has no drop path. Nothing when the rate is 0. -EINVAL unless 0 ≤ row0,
// row0 + B ≤ rows ≤ 2^18.
int clip_model_drop_path_draw(ClipModel *m, uint64_t seed, uint64_t step, int64_t row0, int64_t rows);
// *loss (may be NULL) gets the loss value
int clip_model_infonce_step(ClipModel *m, const KTensor *video, const KTensor *text, double *loss);

// ---- the masked video autoencoder (VideoMAE) ----
// VideoMAE pretraining on the op contract: the video tower's encoder (tubelet embedding, class token,
// learned spatial + temporal positions) on the visible tokens of a tube mask only, a light decoder
// over visible and mask tokens with fixed sinusoid positions, a linear head to the tubelets'
// pixels, the normalized-pixel target and the MSE on masked tokens (docs/training.md, "VideoMAE").

typedef struct {
	int dec_width, dec_layers, dec_heads; // the decoder (VideoMAE ViT-B: 384, 4, 6)
	double mask_ratio;                    // tube masking: floor(ratio x patches per slice) masked (0.9)
} MaeConfig;

// VideoMAE's decoder for an encoder preset (tiny 32/2/2, vit-s16 192/4/3, vit-b16 384/4/6, vit-l14
// 512/4/8), mask ratio 0.9, and the clip geometry it pretrains on: 16 frames in tubelets of 2 (tiny:
// 4 frames); -ENOENT for an unknown preset (nothing changed)
int mae_config_preset(MaeConfig *mae, ModelConfig *model, const char *preset);
// the decoder's flags over MaeConfig (--mask-ratio, --mae-decoder-width, --mae-decoder-layers,
// --mae-decoder-heads); defaults are mae_config_preset's (no .def)
const FlagSpec *mae_flag_table(int *n);
// 0 when the two agree (a tubelet of at least 2 pixels, at least one visible and one masked token
// per slice, heads dividing the decoder width); else -EINVAL and a sentence naming the flag
int mae_config_check(const ModelConfig *model, const MaeConfig *mae, char *msg, size_t len);
// "dec384/4/6 mask0.9" (checkpoints' avclip.mae) and back; parse: -EINVAL when malformed
void mae_config_str(const MaeConfig *mae, char *buf, size_t len);
int mae_config_parse(const char *s, MaeConfig *mae);
// tokens of one clip: Ns patches per slice, Tp slices, N = Tp·Ns, Nv visible and Nm masked
typedef struct {
	int Ns, Tp, N, Nv, Nm;
} MaeTokens;
int mae_tokens(const ModelConfig *model, const MaeConfig *mae, MaeTokens *t);
// FLOPs of one clip's forward (2 per multiply-add): the patch embedding over all N tokens (as
// VideoMAE's), the encoder's blocks over the class token and the Nv visible tokens only, the
// decoder over 1 + N and the head over the Nm masked ones; training counts 3x (MFU)
double mae_flops_per_sample(const ModelConfig *model, const MaeConfig *mae);

// The parameters: the encoder (model_layout_encoder: visual.* but visual.proj, at the same offsets),
// then decoder.mask_token (Dd), decoder.embed.weight (Dd, Wv) (VideoMAE's encoder_to_decoder, no
// bias), decoder.transformer.resblocks.<l>.* (the tower's block names, width Dd), decoder.ln.weight
// and .bias, decoder.head.weight (3K, Dd) and .bias (3K), K = tubelet·patch² pixels. Decay flags
// follow WD_OPEN_CLIP. specs NULL counts; n_encoder (may be NULL): the encoder's floats.
int mae_layout(const ModelConfig *model, const MaeConfig *mae, ParamSpec *specs, int *n_specs, int64_t *n_floats,
	       int64_t *n_encoder);
// the encoder as model_init_host gives a clip model of the same seed; the decoder as VideoMAE's
// _init_weights (Xavier-uniform matrices, zero biases, unit LayerNorm weights) and the mask token
// N(0, 0.02²), each tensor from a stream keyed by (seed, its name)
void mae_init_host(const ModelConfig *model, const MaeConfig *mae, const ParamSpec *specs, int n, float *host,
		   uint64_t seed);
int mae_init_params(KernCtx *ctx, const ModelConfig *model, const MaeConfig *mae, KTensor *flat, uint64_t seed);

struct StFile; // (the safetensors reader, below)
// An mae checkpoint's configuration: 1 with model and mae filled when f records avclip.objective
// mae, 0 when it is not an mae file, -EBADMSG when its avclip.model or avclip.mae does not parse
int mae_file_config(const struct StFile *f, ModelConfig *model, MaeConfig *mae);
// The dual encoder's flat f32 parameters (model_layout(model)) from an mae buffer: its encoder (the
// first n_encoder floats, the same tensors at the same offsets) as it is, every other tensor (the
// text tower, visual.proj, logit_scale) at its initialisation from seed: what a clip or classify run
// or tools/eval reads of a pretrained encoder. clip_host holds model_layout's floats. 0 or -ENOMEM.
int mae_encoder_to_clip(const ModelConfig *model, const float *mae_params, int64_t n_encoder, float *clip_host,
			uint64_t seed);

// the decoder's views into a flat buffer
typedef struct {
	KTensor mask_token, embed; // (Dd), (Dd, Wv)
	BlockWeights *blk;         // dec_layers
	KTensor ln_w, ln_b;        // (Dd)
	KTensor head_w, head_b;    // (3K, Dd), (3K)
} MaeDecoderWeights;

typedef struct {
	KernCtx *ctx;
	ModelConfig cfg;
	MaeConfig mae;
	MaeTokens tok;
	KDtype dt, pdt; // as ClipModel's
	int B, K3;      // batch; the head's width 3·tubelet·patch²
	ParamSpec *specs;
	int n_specs;
	int64_t n_params, n_encoder; // all floats; the encoder's, first
	KTensor params, grads, weights;
	ModelWeights w, g;        // the encoder's views (model_weights_bind_encoder)
	MaeDecoderWeights dw, dg; // the decoder's
	ClipGradGroup *groups;    // n_groups, in the order backward finishes them: decoder head, decoder
	int n_groups;             // blocks last to first, mask token + embed, ln_post, encoder blocks, stem
	ClipGradReadyFn hook;
	void *hook_arg;
	int grad_ckpt;
	BlockActs eshared, dshared;
	struct ClipModelBytes *count;

	// the masks: pinned host rows and their device copy, (B, 1+Nv) encoder rows [0, 1+v...], (B, Nm)
	// decoder rows 1+m and (B, Nm) masked tubelets m, one allocation; uploaded by mae_model_set_masks
	int32_t *host_idx;
	KTensor idx, enc_idx, dec_idx, mask_idx;
	KEvent *idx_up;  // recorded after the last upload from host_idx
	KTensor tail;    // (B, Nm) i32: rows 1+Nv .. N of the decoder's output (the mask tokens)
	KTensor dec_pos; // (1+N, Dd): row 0 zero (the class token), row 1+n VideoMAE's sinusoid of n

	// encoder: the stem over all N tokens, the blocks over Le = 1+Nv
	KTensor patches, pemb, x0;      // (B, N, 3K), (B, N, Wv), (B, 1+N, Wv); backward reuses pemb, x0
	KTensor xv, xpre, pre_m, pre_r; // (B, Le, Wv) gathered and after ln_pre, (B·Le) x2
	BlockActs *eacts;               // vis_layers
	KTensor enc, post_m, post_r;    // (B, Le, Wv) ln_post of every token, (B·Le) x2
	TowerScratch es;
	// decoder over Ld = 1+N tokens
	KTensor e2d, de2d, din;           // (B, Le, Dd) x2, (B, Ld, Dd)
	BlockActs *dacts;                 // dec_layers
	KTensor dtail, dln, dln_m, dln_r; // (B, Nm, Dd) x2, (B·Nm) x2
	KTensor pred, dpred;              // (B, Nm, 3K)
	KTensor ddln, ddtail;             // (B, Nm, Dd): head's and ln's input gradients
	KTensor target, target32, loss;   // (B, Nm, 3K) pdt (target32 f32 with an f64 model), (1) pdt
	TowerScratch ds;

	KTensor *owned[MODEL_MAX_TENSORS];
	int n_owned;
} MaeModel;

// dt: f32, bf16 or f64 activations; opts: grad_checkpoint (vision_only has no meaning here).
// Parameters are zero until mae_init_params or a load, then mae_model_sync_weights.
int mae_model_create(MaeModel **out, KernCtx *ctx, const ModelConfig *model, const MaeConfig *mae, int batch, KDtype dt,
		     const ClipModelOpts *opts);
// what mae_model_create allocates on the device, counted by the same code (visible tokens only in
// the encoder's activations)
int mae_model_bytes(KernCtx *ctx, const ModelConfig *model, const MaeConfig *mae, int batch, KDtype dt,
		    const ClipModelOpts *opts, ClipModelBytes *out);
void mae_model_destroy(MaeModel *m);
int mae_model_sync_weights(MaeModel *m);
void mae_model_set_grad_hook(MaeModel *m, ClipGradReadyFn fn, void *arg);
// The tube masks of the batch's clips at stream positions g (host, B values) from the counter RNG
// keyed by (seed, g) (kern_mae_tube_mask_batch), written into host_idx and queued for upload (waits
// only while the previous upload from host_idx still runs). -EINVAL on a bad position list.
int mae_model_set_masks(MaeModel *m, const int64_t *g, uint64_t seed);
// the same from explicit masked tubelets (B, Nm) rows, each ascending in [0, N) with Nm per row
// (tests and tools that show a given mask); -EINVAL when a row is not such a list
int mae_model_set_mask_rows(MaeModel *m, const int32_t *masked);
// clips (B, T, H, W, 3) u8, pos (B) i64 on the device, the masks set: patches (flip from (seed, g) as
// kern_augment_tubelet), the encoder on the visible tokens, the decoder, the head's prediction
// m->pred of the masked tubelets, the target (same flip) and the MSE into m->loss with its
// gradient m->dpred (scale: the upstream gradient of the loss, 1 for a plain step)
int mae_model_forward(MaeModel *m, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip, double scale);
// every gradient written (not added) into m->grads from m->dpred; the hook hears of each group
int mae_model_backward(MaeModel *m);

// ---- synthetic batches ----
// Deterministic synthetic video-text batches for tests, benchmarks and the CPU demo: a pool of
// `pool` fixed (video, caption) pairs, sampled per step, so a model can learn to match them.

// video (B, T, H, W, 3) f32/f64, text (B, ctx) i32: pair k of the pool has pixels uniform in
// [-1, 1] and a caption of 3..ctx-1 ids ending with the end token (vocab-1), zero padded.
// Which pairs a step gets is a function of (seed, step) only.
int model_synth_batch(KernCtx *ctx, const ModelConfig *cfg, uint64_t seed, uint64_t step, int pool, KTensor *video,
		      KTensor *text);
// One InfoNCE step of a fresh model on a synthetic batch, the backends' twin runs (test_kcuda_model,
// the trainer's self-check): B samples, weights from wseed, the batch step 1 of a pool of 64 from
// bseed. The model and batch stay in r for comparing (model_synth_step_free releases them, also
// after a failure).
typedef struct {
	ClipModel *m;
	KTensor video, text;
	double loss;
} ModelSynthStep;
int model_synth_step(KernCtx *c, const ModelConfig *cfg, int B, KDtype dt, uint64_t wseed, uint64_t bseed,
		     ModelSynthStep *r);
void model_synth_step_free(KernCtx *c, ModelSynthStep *r);

// ---- the optimizer ----
// Optimizer over the model's flat parameter buffer: one fused AdamW or LAMB op per step driven by a
// segment table (weight decay as each tensor's PARAM_NO_DECAY flag says), the global gradient norm
// and clip factor kept on the device, linear warmup then cosine LR.

typedef enum { OPT_ADAMW = 0, OPT_LAMB = 1 } OptKind;

typedef struct {
	OptKind kind;
	double lr, lr_min;    // peak LR after warmup, floor of the cosine
	int64_t warmup_steps; // linear from lr/warmup to lr
	int64_t total_steps;  // cosine reaches lr_min here and stays
	// A resumed run whose --steps changed: the schedule above is the new run's, and over updates
	// join_step .. join_step + join_len - 1 the LR goes linearly from join_lr (the checkpoint's LR
	// at join_step) to it, so a longer run does not jump back up to mid-cosine. join_len 0: none.
	int64_t join_step, join_len;
	double join_lr;
	double beta1, beta2, eps, weight_decay;
	double clip_norm; // global gradient L2 norm limit, 0 = off
	// layer-wise lr decay (BEiT/AVION fine-tuning): tensor of layer id i gets lr·decay^(L + 1 − i)
	// (optim_layer_id); 1 or 0 (a zero-initialised config) = off, the segments carry no scale
	double layer_decay;
} OptConfig;

typedef struct {
	KernCtx *ctx;
	OptConfig cfg;
	KOptSegment *segs; // one per parameter tensor, in the flat buffer's order
	char (*names)[96]; // the tensors' names (optim_set_rule)
	int n_segs;
	int64_t n_params;
	KOptPlan *plan;
	KTensor m, v;      // (n_params) f32 first and second moments, same layout as the parameters
	KTensor norm_clip; // (2) f32 on the device: [‖g‖ before clipping, clip factor] of the last step
	int64_t step;      // updates done so far
} Optimizer;

// FastCLIP's ViT settings: AdamW, betas 0.9/0.98, eps 1e-6, wd 0.1, no clipping
void optim_config_default(OptConfig *c);
// the optimizer's flags over OptConfig (--optimizer, --lr, --lr-min, --warmup-steps, --weight-decay,
// --beta1, --beta2, --adam-eps, --clip-norm), their defaults optim_config_default's
const FlagSpec *optim_flag_table(int *n);
// "optimizer=adamw lr=0.0005 ..." of c, for the effective-configuration log line; the characters written
int optim_config_describe(const OptConfig *c, char *buf, size_t len);
// LR of update number step+1 (step counts completed updates)
double optim_lr(const OptConfig *c, int64_t step);
// The rule of a resume whose --steps changed (c: the new schedule, old: the checkpoint's, step:
// its completed updates): the cosine is the new run's (as if it had started with the new --steps)
// and the LR joins it from the last one the old schedule gave (update `step`) linearly over
// --warmup-steps updates, or a tenth of the updates left when there is no warmup (at least 1).
void optim_join_schedule(OptConfig *c, const OptConfig *old, int64_t step);
// the same schedule (warmup, cosine to lr_min) applied to another peak rate: FastCLIP gives its
// temperature group its own peak and the model's schedule
double optim_lr_of(const OptConfig *c, double peak, int64_t step);
// BEiT's get_layer_id_for_vit over open_clip names, L = vision blocks: 0 for the patch embedding,
// class token, positional/temporal embeddings and ln_pre; i + 1 for visual.transformer.resblocks.i.*;
// L + 1 for everything else (ln_post, proj, heads, the text tower)
int optim_layer_id(const char *name, int L);
// segments from the parameter table: KSEG_DECAY unless PARAM_NO_DECAY, KSEG_LAMB for LAMB, and with
// layer_decay in (0, 1) KSEG_LR_SCALE with lr_scale = layer_decay^(L + 1 − optim_layer_id).
// -EINVAL on a bad configuration or a table that does not tile [0, n_params) in order, -ENOMEM.
int optim_create(Optimizer **out, KernCtx *ctx, const OptConfig *cfg, const ParamSpec *specs, int n_specs,
		 int64_t n_params);
void optim_destroy(Optimizer *o);
// adds KSEG_* flags (FROZEN: left alone and out of the norm; CLAMP to [lo, hi] after the update)
// to the tensor named `name` (setup time: rebuilds the plan). -ENOENT when there is no such tensor.
int optim_set_rule(Optimizer *o, const char *name, uint32_t flags, float lo, float hi);
// One update, queued: the global norm of grads (ACT, n_params) into norm_clip, clipping to
// clip_norm, AdamW/LAMB on params (f32 master) and, when copy is not NULL, every parameter's new
// value stored into copy (the bf16 weights the model reads). A non-finite norm latches -ERANGE
// ("optimizer") on the device: nothing changes and the next op or sync point returns it.
int optim_step(Optimizer *o, KTensor *params, KTensor *copy, const KTensor *grads);
// the same update with the gradient norm and clip factor another op left in norm_clip (2) STAT
// (kern_grad_norm_join: one norm over the buffers of several optimizers, --objective classify's
// tower and heads); o->norm_clip is not written
int optim_step_clipped(Optimizer *o, KTensor *params, KTensor *copy, const KTensor *grads, const KTensor *norm_clip);
// the same with the update's per-step values (lr, bias corrections) read from live, a
// (KOPT_LIVE_N) F64 device tensor, when the op runs: what a CUDA graph replays (kern_graph_begin);
// optim_live gives the values of the next update (o->step's) for the caller to write there
int optim_step_live(Optimizer *o, KTensor *params, KTensor *copy, const KTensor *grads, const KTensor *live);
void optim_live(const Optimizer *o, double out[KOPT_LIVE_N]);

// ---- safetensors files ----
// safetensors files: write named tensors with string metadata, and read them back through mmap with
// every header field checked (offsets inside the file, sizes matching shapes).

typedef enum { ST_F32, ST_F64, ST_F16, ST_BF16, ST_I32, ST_I64, ST_U64, ST_U8, ST_NDTYPES } StDtype;

#define ST_MAX_DIMS 8

typedef struct {
	char name[160];
	StDtype dtype;
	int ndim;
	int64_t shape[ST_MAX_DIMS];
	const void *data; // writer: the bytes to write; reader: points into the mapping
	size_t nbytes;
} StTensor;

typedef struct StFile StFile;

const char *st_dtype_name(StDtype d);
size_t st_dtype_size(StDtype d);
// writes header + data to fd at its current position; meta: NULL or n_meta key/value pairs.
// Returns 0 or -errno (ENOSPC, EFBIG, EIO...) from the first failing write; does not fsync.
int st_write_fd(int fd, const StTensor *t, int n, const char *const *meta_kv, int n_meta);
// the same into a new file at path (truncating an old one); not atomic, see ckpt_* for that
int st_write(const char *path, const StTensor *t, int n, const char *const *meta_kv, int n_meta);
// -errno for open/mmap failures, -EBADMSG for a malformed file. The reader follows the
// format strictly: header length at most 100,000,000 and inside the file, JSON starting with
// '{' and followed only by space padding, tensor names and metadata keys unique, and the
// tensors tiling the data section exactly (no overlap, hole or trailing bytes).
int st_open(StFile **out, const char *path);
// the same with the reason for -EBADMSG in err ("tensor x appears twice", "byte 93 after the
// JSON header is 0x01, not space padding", ...)
int st_open_err(StFile **out, const char *path, char *err, size_t errlen);
// the same with the whole sentence in err: "PATH: NOT_VALID: reason" for -EBADMSG (NOT_VALID:
// "not a valid checkpoint file"), else "PATH: strerror"
int st_open_as(StFile **out, const char *path, const char *not_valid, char *err, size_t errlen);
// parses size bytes at buf in place (buf must outlive the StFile; st_close does not free it)
int st_parse(StFile **out, const void *buf, size_t size, char *err, size_t errlen);
void st_close(StFile *f);
int st_count(const StFile *f);
const StTensor *st_entry(const StFile *f, int i);
const StTensor *st_find(const StFile *f, const char *name);
// value of a __metadata__ key, or NULL
const char *st_meta(const StFile *f, const char *key);

// ---- weights in safetensors ----
// Model weights <-> safetensors with open_clip tensor names and shapes, so a video tower can start
// from an open_clip / OpenAI CLIP checkpoint and our weights load in open_clip.

typedef struct {
	const char *prefix;      // load only tensors whose name starts with it ("visual."), NULL = all
	int allow_missing;       // tensors absent from the file keep their current values
	const char *const *skip; // n_skip names never loaded (keep their values): e.g. "visual.proj" when
	int n_skip;              // starting a 256-d AVION tower from a 512-d CLIP checkpoint
} StLoadOpts;

// t[] (room for n) describes every tensor of host (the flat f32 buffer) but `skip` (a name, or
// NULL) as F32 with its open_clip shape; returns how many
int st_model_tensors(StTensor *t, const ParamSpec *specs, int n, const float *host, const char *skip);
// every tensor as F32 with its open_clip shape; meta: n_meta key/value string pairs
int st_model_save(const char *path, KernCtx *ctx, const ParamSpec *specs, int n, const KTensor *params,
		  const char *const *meta, int n_meta);
// reads F32/F16/BF16/F64 tensors into params (f32). visual.temporal_embedding may always be
// absent (CLIP has none; it stays as it is, zero after init, as in AVION). Errors, with a
// sentence in err: -ENOENT a tensor is missing, -EINVAL a shape differs (both shapes named)
// or a dtype is not a float, other -errno from opening the file, -EBADMSG a malformed file.
int st_model_load(const char *path, KernCtx *ctx, const ParamSpec *specs, int n, KTensor *params,
		  const StLoadOpts *opts, char *err, size_t errlen);

// ---- open_clip interop ----
// open_clip interop: weights exported under open_clip's names with every size in the file's
// metadata (so open_clip loads them with strict=True), and a model started from an open_clip or
// OpenAI CLIP file (AVION starts its video tower from CLIP ViT-B/16).

#define ST_OPENCLIP_FORMAT "1" // metadata avclip.export

// Writes params (the model's flat f32 buffer, specs from model_layout(cfg)) to path as F32
// safetensors under open_clip's names. __metadata__: format pt, avclip.export, avclip.model (the
// configuration line), embed_dim, vision.{image_size, patch_size, width, layers, heads,
// head_width, frames}, text.{context_length, vocab_size, width, layers, heads}, mlp_ratio, act
// (gelu | quick_gelu). image != 0: an image model for open_clip: the temporal embedding of frame
// 0 is added to the patch positions (not the class token's) and not written, vision.frames = 1
// (for a 1-frame model the features are the same). 0 or -errno with a sentence in err.
// vocab, merges: the captions' vocabulary and its merges file to record as avclip.vocab and
// avclip.merges (NULL or "": none).
int st_openclip_export(const char *path, KernCtx *ctx, const ModelConfig *cfg, const ParamSpec *specs, int n,
		       const KTensor *params, int image, const char *vocab, const char *merges, char *err,
		       size_t errlen);

typedef struct {
	int skip_mismatched; // leave visual.proj / text_projection as they are when their shapes differ
	int visual_only;     // load the video tower's visual.* but visual.proj, nothing of the text tower
	char note[512];      // out: what was skipped or kept, for the log ("" when nothing)
	char loaded[512];    // out: the model's tensors found, their dtypes, parameters, the largest shape
	char tau[256];       // out: the file's logit_scale (τ), which is not loaded
	uint64_t vocab_hash; // out: the vocabulary the weights record (avclip.vocab), 0 when none (open_clip's files)
	int file_vocab;      // out: a foreign file's (no avclip.* metadata) token_embedding rows; 0: ours or absent
} StInitOpts;

// Loads an open_clip / OpenAI CLIP safetensors file into params for the model cfg: every tensor
// by name and shape, except visual.temporal_embedding (CLIP has none: it stays as it is, zero
// after initialisation, as AVION starts) and logit_scale (the loss's --temperature decides).
// The head counts and the activation are checked against the file's metadata when it has them.
// Projections whose widths differ (a 256-d embedding from a 512-d CLIP) are an error naming
// them, or skipped with o->skip_mismatched. o->visual_only (--objective classify): only the
// visual.* tensors but visual.proj, so a text tower of another shape (vocabulary, context, width)
// and its metadata are not looked at. 0 or -errno with a sentence in err; o says what was loaded
// and the vocabulary the file records.
int st_openclip_init(const char *path, KernCtx *ctx, const ModelConfig *cfg, const ParamSpec *specs, int n,
		     KTensor *params, StInitOpts *o, char *err, size_t errlen);

// ---- checkpoints ----
// Training checkpoints: model, optimizer moments and step, trainer state (step, stream position,
// RNG) and extra tables (FastCLIP u / tau) in one safetensors file, written atomically, with a
// LATEST marker naming the newest complete one.

#define CKPT_MARKER "LATEST"

typedef struct {
	int64_t step;        // optimizer updates completed
	uint64_t stream_pos; // next global sample position g of the data stream
	uint64_t rng[4];     // the trainer's RNG state, opaque here
} CkptState;

typedef struct {
	KernCtx *ctx;
	const ModelConfig *cfg;
	const ParamSpec *specs;
	int n_specs;
	KTensor *params; // flat f32
	Optimizer *opt;  // NULL when there is none
	StTensor *extra; // host tables saved as "extra/<name>" and restored in place (same dtype and size)
	int n_extra;
	const char *const *meta; // n_meta more key/value metadata pairs to save (the run's vocabulary, batch)
	int n_meta;
} CkptTarget;

// Writes dir/ckpt-<step>.safetensors through a temp file (fsync, rename, fsync dir), then moves
// LATEST to it the same way; keep_last > 0 removes older checkpoints beyond that many.
// On any failure (unwritable dir, full disk, file size limit) the temp file is removed, LATEST
// and the previous checkpoint stay as they were, and err says what failed.
int ckpt_save(const char *dir, const CkptTarget *t, const CkptState *st, int keep_last, char *err, size_t errlen);
// Loads the checkpoint LATEST names: -ENOENT when there is none (fresh start), -EINVAL when it was
// written for another model configuration or misses a tensor, with err saying which.
int ckpt_load_latest(const char *dir, CkptTarget *t, CkptState *st, char *err, size_t errlen);
// the checkpoint file dir/LATEST names, as dir/<file>; -ENOENT without a marker, -EBADMSG when
// the marker does not name a checkpoint file
int ckpt_latest_path(const char *dir, char *path, size_t len, char *err, size_t errlen);

#endif
