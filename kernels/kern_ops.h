// The op contract: everything a training step does to device memory, as one C interface that
// every backend implements (the CPU reference in kernels/cpu/, CUDA in kernels/cuda/).
#ifndef KERN_OPS_H
#define KERN_OPS_H
// defines: KDtype, KTensor, KGrad, KG_SET, KG_ADD, KG_NONE, KernCtx, KEvent, KBackendKind, KCtxOptions,
//          KAttention, KERN_ATTN_*, KAct, KLinear, KLinearBwd, KContrastBatch, KFccoVersion, KFccoParams,
//          KFCCO_P_*, KFCCO_T_*,
//          KTempStep, KOptSegment, KSEG_*, KOptPlan, KOptHyper, KERN_MAX_DIMS, KERN_OPT_CHUNK,
//          KOPT_LIVE_*, KTEMP_LIVE_*, kern_opt_live, kern_temp_live,
//          KGraph, kern_graph_supported, kern_graph_begin, kern_graph_end, kern_graph_launch, kern_graph_nodes,
//          kern_graph_destroy,
//          kern_dtype_size, kern_dtype_name, kern_numel, kern_nbytes, kern_tensor_make,
//          kern_view, kern_bf16_from_f32, kern_f32_from_bf16,
//          kern_ctx_create, kern_ctx_create_cpu, kern_stream_create, kern_ctx_destroy, kern_ctx_backend_name,
//          kern_ctx_attention, KMemInfo, kern_ctx_memory, kern_stream_native,
//          kern_ctx_device, kern_ctx_threads, kern_ctx_set_blas_threads, kern_ctx_reserve_workspace,
//          kern_ctx_workspace_bytes, kern_ctx_host_waits, kern_ctx_slow_paths, kern_ctx_slow_path_note, kern_ctx_launches,
//          KPlanOp, KPlanFn, kern_ctx_set_plan,
//          kern_sync, kern_stream_sync, kern_error_message, kern_refusal,
//          kern_error_clear, kern_event_create, kern_event_destroy, kern_event_record, kern_stream_wait_event,
//          kern_event_query, kern_event_sync, kern_event_create_timed, kern_event_elapsed, kern_alloc, kern_free, kern_host_alloc, kern_host_free,
//          kern_host_register, kern_host_unregister, kern_upload, kern_download, kern_upload_async,
//          kern_download_async, kern_zero, kern_copy, kern_convert,
//          kern_linear_ws_bytes, kern_linear, kern_linear_bwd, kern_layernorm_fwd, kern_layernorm_bwd, kern_add,
//          kern_augment, kern_patchify_fwd, kern_patchify_bwd, kern_vis_embed_fwd, kern_vis_embed_bwd,
//          kern_tok_embed_fwd, kern_tok_embed_bwd, kern_argmax_rows, kern_pool_fwd, kern_pool_bwd,
//          kern_l2norm_fwd, kern_l2norm_bwd, kern_attention_ws_bytes, kern_attention_fwd, kern_attention_bwd,
//          kern_loss_ws_bytes, kern_infonce, kern_fcco_pack_width, kern_fcco_table_width, kern_fcco_local,
//          kern_fcco_scatter, kern_fcco_surrogate, kern_clip_metrics, kern_temp_step, kern_opt_plan_create,
//          kern_opt_plan_destroy, kern_grad_norm, kern_optimizer,
//          KSoftCe, kern_softce, KMixup, kern_mixup_fwd, kern_mixup_bwd, kern_row_scale, KDropout, kern_dropout,
//          kern_grad_norm_join,
//          kern_mae_mask_count, kern_mae_tube_mask, kern_mae_tube_mask_batch, kern_mae_sinusoid_table,
//          kern_augment_tubelet, kern_token_gather_fwd, kern_token_gather_bwd, kern_mae_decoder_input_fwd,
//          kern_mae_decoder_input_bwd, kern_mae_target, kern_mae_mse, kern_token_mean_fwd, kern_token_mean_bwd
//
// ---- How to read this contract (a backend must do exactly this) ----
//
// ERRORS. Every function returns 0 or a negative errno. Argument errors are returned at once and
// nothing runs: -EINVAL (shape, dtype, layout, NULL), -ENOSPC (the stream's workspace is smaller than
// the op needs), -ENOTSUP (a dtype this backend does not compute in: the f64 path is CPU only).
// Errors that depend on tensor CONTENTS (a token id out of range, a non-finite gradient norm) or
// that a device reports later are "asynchronous": the op returns 0, the backend latches the first
// such error in the device context with the op's name, and the next sync point returns it
// (kern_error_message says "op: what"). Once an error is latched every op and sync point of the
// device returns it at once, until kern_error_clear. The CPU backend behaves the same way (it
// detects the error immediately but reports it only at the next sync), so code that trains on
// the CPU already handles errors where a GPU reports them.
//
// STREAMS. A KernCtx handle is one stream of one device: ops queued on a handle run in order;
// ops on two handles of the same device may overlap unless ordered with events. kern_ctx_create
// opens a device (index in KCtxOptions) and its first stream; kern_stream_create adds a stream on
// the same device. Memory belongs to the DEVICE, not the stream: a tensor allocated through any
// handle may be used on every handle of its device. One thread issues to a handle at a time.
// The CPU backend runs every op at once on the calling thread; its events are complete once
// recorded. The API is still the asynchronous one: results are valid for the host only after a
// sync point.
//
// SYNC POINTS (the host waits; each adds one to kern_ctx_host_waits): kern_sync,
// kern_stream_sync, kern_event_sync, kern_upload and kern_download.
// The setup calls (kern_alloc, kern_free, kern_host_*, kern_ctx_reserve_workspace, kern_opt_plan_*,
// kern_stream_create, kern_event_create) may wait too, are not counted and do not belong in a
// step. Other ops are queued and return, with two uncounted exceptions on the CUDA backend:
// with KERN_CUDA_SYNC=1 every op waits for its stream (to name a failing kernel), and the
// attention ops' first call for a new shape builds a cuDNN plan (cudaMalloc, a synchronous
// cudaMemcpy, cudaFree of the plan it evicts from its 32-entry cache), which waits for the
// device. kern_attention_ws_bytes builds the plans of its shape, so asking it at setup keeps
// that wait out of the step.
//
// DTYPES are per argument, in four classes:
//   ACT   activations, weights and their gradients: F32 or BF16 storage, chosen per tensor;
//   STAT  statistics (layernorm mean/rstd, attention lse, L2 norms), losses, scalars, FastCLIP
//         tables and packs, master weights, optimizer moments: F32;
//   I32/I64/U8 as named (token ids i32, sample ids and stream positions i64, clips u8).
// Arithmetic and accumulation are f32 (or wider: the CPU reference accumulates the loss ops and
// every reduction that feeds a norm in f64). A BF16 store is the round-to-nearest-even of the f32
// value (NaN stays NaN, overflow becomes inf), once per element per op: an accumulating output is
// widened, summed in f32 and rounded once. THE F64 PATH: when the first ACT argument of an op is
// F64, every ACT and STAT argument must be F64 and the op computes in double (CPU only, for
// finite-difference tests; a device backend returns -ENOTSUP).
//
// LAYOUTS are row-major and contiguous; "(N, C)" means C varies fastest. "N = all leading dims"
// means the op flattens every dim but the last. Outputs never alias inputs unless an op says so.
//
// GRADIENT OUTPUTS are KGrad pairs: KG_SET(t) writes t, KG_ADD(t) adds into it (t += result),
// KG_NONE skips it. So backward needs no memsets: the first writer of a gradient buffer uses
// KG_SET, later contributions KG_ADD.
//
// WORKSPACE belongs to the stream handle, in bytes: kern_ctx_reserve_workspace(ctx, bytes) once
// at setup with the largest *_ws_bytes of the ops that handle will run. An op needing more than
// the reserve returns -ENOSPC (an argument error: it never allocates inside a step).
//
// DETERMINISM: every reduction has a fixed order; a backend gives the same bits run to run, and
// the CPU backend also for any thread count. Ops use no atomics whose order could change a result.
// The one exception is a library's: with KCtxOptions.attention auto or cudnn, a CUDA device's
// attention backward is cuDNN's where it accepts the shape, which is not promised to repeat to the
// bit (it accumulates dQ with atomics); KERN_ATTN_OWN keeps the rule.

#include <stddef.h>
#include <stdint.h>

// ======================================================================================
// Tensors
// ======================================================================================

// F32 compute/master type; BF16 storage; F64 CPU-only test path; I32 token ids and row positions;
// U8 clips; I64 sample ids and stream positions (a u64 position g < 2^63 is stored as is)
typedef enum { KDT_F32 = 0, KDT_BF16 = 1, KDT_F64 = 2, KDT_I32 = 3, KDT_U8 = 4, KDT_I64 = 5, KDT_COUNT } KDtype;

#define KERN_MAX_DIMS 5

typedef struct {
	// device memory (host memory on the CPU backend). The model passes it to ops and never
	// dereferences it; the backends, the CPU comm group (its ranks' tensors are host memory)
	// and bench_trainer_cpu's BLAS comparison (CPU backend only) do.
	void *data;
	KDtype dtype;
	int ndim;
	int64_t shape[KERN_MAX_DIMS];
	int owned; // 1 when kern_alloc made it (kern_free releases it), 0 for views
} KTensor;

size_t kern_dtype_size(KDtype dt);
const char *kern_dtype_name(KDtype dt);
int64_t kern_numel(const KTensor *t);
size_t kern_nbytes(const KTensor *t);
// a tensor header (no memory) with the given shape; ndim <= KERN_MAX_DIMS
KTensor kern_tensor_make(void *data, KDtype dt, int ndim, const int64_t *shape);
// a view of numel(shape) elements of parent starting at element offset; -EINVAL when out of range
int kern_view(KTensor *out, const KTensor *parent, int64_t offset, int ndim, const int64_t *shape);
// the store rule of every backend: round to nearest even; NaN stays a (quiet) NaN
uint16_t kern_bf16_from_f32(float f);
float kern_f32_from_bf16(uint16_t b);

// a gradient output and how it is written
typedef struct {
	KTensor *t; // NULL: not wanted
	int acc;    // 0: t = result; 1: t += result
} KGrad;
#define KG_SET(tp) ((KGrad){(tp), 0})
#define KG_ADD(tp) ((KGrad){(tp), 1})
#define KG_NONE ((KGrad){NULL, 0})

// ======================================================================================
// Devices, streams, events, errors
// ======================================================================================

typedef struct KernCtx KernCtx;
typedef struct KEvent KEvent;

typedef enum { KERN_BACKEND_CPU = 0, KERN_BACKEND_CUDA = 1 } KBackendKind;

// Which implementation runs the attention ops of a CUDA device: its own FlashAttention-2-style
// kernel, cuDNN's fused attention (an op cuDNN refuses, or a build without cuDNN, is -ENOTSUP),
// or cuDNN where it accepts the call and the own kernel elsewhere. The CPU backend has one
// implementation, its reference: it accepts AUTO and OWN and refuses CUDNN (-ENOTSUP).
typedef enum { KERN_ATTN_AUTO = 0, KERN_ATTN_OWN = 1, KERN_ATTN_CUDNN = 2 } KAttention;

typedef struct {
	KBackendKind backend;
	int device;           // device index (CUDA ordinal); the CPU backend has only device 0
	int threads;          // CPU: OpenMP threads, <= 0 for all that OpenMP offers; ignored by CUDA
	KAttention attention; // 0 (zero-initialised options): KERN_ATTN_AUTO
} KCtxOptions;

// opens the device and its first stream; -ENODEV when the backend is not built in or the device
// does not exist, -EINVAL on bad options, -ENOMEM
int kern_ctx_create(KernCtx **out, const KCtxOptions *opt);
int kern_ctx_create_cpu(KernCtx **out, int threads);
// another stream (handle) on ctx's device: shares its memory, host registrations and error latch,
// has its own queue and workspace
int kern_stream_create(KernCtx *ctx, KernCtx **out);
// waits for the handle's queue and releases it; the device and every tensor still allocated on it
// are released with its last handle (tensors and views are invalid afterwards)
void kern_ctx_destroy(KernCtx *ctx);
const char *kern_ctx_backend_name(const KernCtx *ctx); // "cpu", "cuda"
// what runs this handle's attention ops, for a startup log line: the selection and, once the
// shapes are known (kern_attention_ws_bytes), what each shape got. Valid until the next call on ctx.
const char *kern_ctx_attention(const KernCtx *ctx);
int kern_ctx_device(const KernCtx *ctx);
int kern_ctx_threads(const KernCtx *ctx);
// CPU backend: threads of BLAS calls (1 after creation: the OpenMP team is the only pool);
// -EINVAL on other backends
int kern_ctx_set_blas_threads(KernCtx *ctx, int n);
// grows this handle's workspace to at least bytes (setup time: waits)
int kern_ctx_reserve_workspace(KernCtx *ctx, size_t bytes);
size_t kern_ctx_workspace_bytes(const KernCtx *ctx);
// host waits (sync points) on the device so far, every handle counted
int64_t kern_ctx_host_waits(const KernCtx *ctx);
// Slow paths taken so far, every handle of the device counted: on CUDA a matrix product that ran
// on the own kernel (cuBLASLt refused it when planning or running, or takes no such types) or an
// epilogue cuBLASLt refused (done as an own pass); 0 on the CPU. A sudden count is a shape or
// alignment cuBLASLt does not take: kern_ctx_slow_path_note names each such shape once (1 and a
// line in buf; 0 when no shape is new), for the caller to log.
int64_t kern_ctx_slow_paths(const KernCtx *ctx);
// device work items queued so far (CUDA: own kernel launches and cuBLASLt matmuls, this process's;
// 0 on the CPU): a step's launch count is the difference across it. A graph launch counts one;
// the work a capture records counts in kern_graph_nodes instead.
int64_t kern_ctx_launches(const KernCtx *ctx);

// The plan of a run (bench-plan): once a recorder is set, every op that queues device work (the
// model, loss and optimizer ops, kern_copy, kern_zero, kern_convert) reports itself as it returns.
// Work is counted from the op's tensors, the same on every backend: flops its arithmetic (a matrix
// product 2·M·N·K), bytes each tensor read and written once (the least traffic the op can have).
typedef struct {
	const char *op;   // the contract's name without "kern_": "linear", "attention_bwd", ...
	char shape[64];   // its sizes, e.g. "100480x768 -> 2304"
	double flops;     // floating-point operations
	double bytes;     // bytes read + written
	int gemm;         // matrix products (tensor cores): 1 the model's (model_flops_per_sample), 2 others
	double recompute; // of flops: products backward redoes beyond the model's 2x (attention's scores)
	int64_t launches; // the backend's device work items queued inside the op (kern_ctx_launches; CPU 0)
} KPlanOp;
typedef void (*KPlanFn)(void *arg, const KPlanOp *op);
// Sets the recorder of ctx's device (fn NULL: none). dry 1: ops are recorded and not run (no backend
// call: outputs keep what they held) and new tensors are not zero-filled, so the op list of a step
// too large to compute here comes from the real step code; only for planning, results are garbage.
void kern_ctx_set_plan(KernCtx *ctx, KPlanFn fn, void *arg, int dry);
int kern_ctx_slow_path_note(KernCtx *ctx, char *buf, size_t len);

// Memory of ctx's device: what the contract's tensors hold (kern_alloc'd, live and the most at any
// time since the device opened; workspaces and pinned host memory are not counted) and what the
// device has. 0, or -ENOTSUP when the backend cannot tell its device's memory (the tensor counts
// are filled anyway; device_free and device_total are then 0). The CPU backend reports the
// machine's available and total RAM.
typedef struct {
	size_t tensor_bytes, tensor_peak;
	size_t device_free, device_total;
} KMemInfo;
int kern_ctx_memory(const KernCtx *ctx, KMemInfo *out);
// the backend's native handle of this stream (CUDA: its cudaStream_t), for libraries that queue
// their own work on it (NCCL); NULL on the CPU backend or when the backend does not expose it
void *kern_stream_native(KernCtx *ctx);

// waits for every stream of the device; returns the latched error (0 when none)
int kern_sync(KernCtx *ctx);
// waits for this handle's stream only; returns the latched error
int kern_stream_sync(KernCtx *ctx);
// "" or "op: what happened" for the latched error of ctx's device
const char *kern_error_message(const KernCtx *ctx);
// "" or "function: condition" of the last argument check an op refused (-EINVAL) on this thread,
// for a caller's error line ("step 0 failed: Invalid argument" says nothing of which op or why)
const char *kern_refusal(void);
void kern_error_clear(KernCtx *ctx);

int kern_event_create(KernCtx *ctx, KEvent **out);
void kern_event_destroy(KEvent *ev);
// the event completes when every op queued on stream before this call has completed
int kern_event_record(KEvent *ev, KernCtx *stream);
// ops queued on stream after this call start after ev completes; the host does not wait
int kern_stream_wait_event(KernCtx *stream, KEvent *ev);
// 1 complete (or never recorded), 0 pending, < 0 the latched error; never waits
int kern_event_query(KEvent *ev);
// the host waits for ev; returns the latched error
int kern_event_sync(KEvent *ev);
// an event that also keeps the time it completed at (device time on a GPU; a CPU backend's op has
// run when queued, so there it is the host's clock at the record), for kern_event_elapsed
int kern_event_create_timed(KernCtx *ctx, KEvent **out);
// *ms = milliseconds from a's completion to b's (both timed events of one device); never waits:
// -EAGAIN while either is pending, -EINVAL when either is not timed or was never recorded, or the
// latched error
int kern_event_elapsed(KEvent *a, KEvent *b, double *ms);

// ---- Graphs (CUDA graphs: a sequence of ops queued again as one launch) ----
// kern_graph_begin starts recording the device work that ops queue on ctx's stream: from then on
// they run nothing. kern_graph_end stops and makes the recorded work a graph, which
// kern_graph_launch queues on ctx's stream again, as one launch, as often as wanted. A replay runs
// each op with the arguments of its capture: the tensors' pointers, the sizes and every host scalar
// of that call (a learning rate, a step count, a view's offset). A value that changes between
// launches must therefore reach the graph through device memory written before each launch
// (KOptHyper.live, KTempStep.live, a tensor uploaded asynchronously), and every tensor the captured
// ops use must stay allocated while the graph lives. Inside a capture, what waits for the device,
// allocates, or copies from pageable host memory is refused by the runtime (CUDA's capture rules:
// the op fails with -EPERM and the capture is spoiled); host state an op keeps (an optimizer's step
// count) moves as if it had run. Only the thread that began a capture may queue into it.
typedef struct KGraph KGraph;
// 1 when ctx's backend records graphs (CUDA), 0 when not (the CPU's ops run when called)
int kern_graph_supported(const KernCtx *ctx);
// -ENOTSUP: no graphs on this backend, or KERN_CUDA_SYNC=1 (every op waits); -EBUSY: ctx captures
// already; the latched error, if any; why gets a sentence on failure
int kern_graph_begin(KernCtx *ctx, char *why, size_t len);
// *out: the graph (freed with kern_graph_destroy). A capture an op spoiled fails with that op's
// error (-EPERM when it was a refused call) and why naming it; its error is taken off the latch,
// so ctx goes on (the recorded work never ran: run it again without a graph).
int kern_graph_end(KernCtx *ctx, KGraph **out, char *why, size_t len);
// queues g on ctx, the handle that captured it; -ESTALE when ctx's workspace was reallocated since
// the capture (kern_ctx_reserve_workspace: capture again)
int kern_graph_launch(KernCtx *ctx, const KGraph *g);
// the device work items the graph replays (counted as kern_ctx_launches counts them)
int64_t kern_graph_nodes(const KGraph *g);
void kern_graph_destroy(KGraph *g);

// ======================================================================================
// Memory
// ======================================================================================

// zero-filled device memory of the given dtype and shape (setup time: may wait)
int kern_alloc(KernCtx *ctx, KTensor *t, KDtype dt, int ndim, const int64_t *shape);
void kern_free(KernCtx *ctx, KTensor *t);
// pinned host memory (zero-filled) that asynchronous copies may use
int kern_host_alloc(KernCtx *ctx, void **p, size_t bytes);
void kern_host_free(KernCtx *ctx, void *p);
// makes an existing host mapping (the ring) usable by asynchronous copies, like
// cudaHostRegister; -EEXIST when it overlaps a registered range; unregister before unmapping
int kern_host_register(KernCtx *ctx, void *p, size_t bytes);
int kern_host_unregister(KernCtx *ctx, void *p);
// synchronous copies of exactly kern_nbytes bytes (nbytes must match), any host memory: both wait
// for the stream, then copy, and return the latched error (sync points)
int kern_upload(KernCtx *ctx, KTensor *dst, const void *host, size_t nbytes);
int kern_download(KernCtx *ctx, void *host, size_t nbytes, const KTensor *src);
// queued copies: host must lie in kern_host_alloc'd or registered memory (-EINVAL otherwise) and
// must stay untouched until an event recorded after the copy completes
int kern_upload_async(KernCtx *ctx, KTensor *dst, const void *host, size_t nbytes);
int kern_download_async(KernCtx *ctx, void *host, size_t nbytes, const KTensor *src);
int kern_zero(KernCtx *ctx, KTensor *t);
// same dtype and element count
int kern_copy(KernCtx *ctx, KTensor *dst, const KTensor *src);
// element-wise between F32, BF16 and F64 (to BF16: the store rule)
int kern_convert(KernCtx *ctx, KTensor *dst, const KTensor *src);

// ======================================================================================
// Dense layers
// ======================================================================================

// Activations an op can apply after the bias (forward) or differentiate (backward):
//   GELU       exact 0.5·x·(1 + erf(x/√2)) (torch.nn.GELU, open_clip's default)
//   GELU_TANH  0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (the form cuBLASLt's GELU epilogues are
//              taken to compute: PyTorch fuses only approximate='tanh' into them; the CUDA twin
//              test against this CPU op decides before a backend relies on it)
//   QUICKGELU  x·σ(1.702·x) (OpenAI CLIP's weights)
typedef enum { KACT_NONE = 0, KACT_GELU = 1, KACT_GELU_TANH = 2, KACT_QUICKGELU = 3 } KAct;

// Forward: out = act(in·op(W) + bias), keeping pre = in·op(W) + bias; or, without an activation,
// out = in·op(W) + residual + bias (the residual add of a pre-LN block).
//   in (N, IC) ACT, N = all leading dims; out, pre, residual (N, OC) ACT (last dim OC)
//   trans_w = 1: W (OC, IC), op(W) = Wᵀ (torch nn.Linear.weight, open_clip's in_proj / c_fc ...)
//   trans_w = 0: W (IC, OC), op(W) = W (open_clip's visual.proj / text_projection)
//   bias (OC) ACT or NULL; pre only with an activation, where backward needs it (NULL: not
//   kept); residual NULL or (N, OC), only with act == KACT_NONE; out may be residual (in place).
// cuBLASLt (column-major): a row-major (R, C) buffer is a column-major (C, R) matrix, so the op is
//   Dᵀ(OC, N) = op(A)·B with B = in as (IC, N), ldb IC; A = W: trans_w 1 → OP_T, lda IC; trans_w 0 →
//   OP_N, lda OC; m = OC, n = N, k = IC; D = out ld OC; C = residual, beta 1 (else beta 0); bias by
//   EPILOGUE_BIAS (one value per m); act by GELU_AUX_BIAS with AUX = pre (ld OC) for GELU_TANH.
//   Exact GELU and QuickGELU are not cuBLASLt epilogues: one product with the BIAS epilogue into
//   pre, then an own element-wise kernel out = act(pre) from pre as stored: with bf16 storage out
//   is act of the rounded pre (the CPU backend: of the f32 value; the twin tests' tolerance
//   KT_TOL_BF16_PRE says by how much). The residual is cuBLASLt's C, out its D: no copy first.
typedef struct {
	KTensor *out;
	KTensor *pre;
	const KTensor *in;
	const KTensor *w;
	int trans_w;
	const KTensor *bias;
	KAct act;
	const KTensor *residual;
} KLinear;
// workspace bytes any linear on this handle needs (0 on both backends today; cuBLASLt's own
// workspace is the stream's)
size_t kern_linear_ws_bytes(KernCtx *ctx);
int kern_linear(KernCtx *ctx, const KLinear *a);

// Backward of pre = in·op(W) + bias, given dout = d(pre) (N, OC):
//   dw    trans_w 1: dW (OC, IC) = doutᵀ·in; trans_w 0: dW (IC, OC) = inᵀ·dout
//   dbias (OC) = Σ_n dout[n, :]                                     (bias-gradient epilogue)
//   din   (N, IC) = dout·op(W)ᵀ, then with in_act != NONE: din ⊙ in_act'(in_pre), i.e. the gradient
//         of the pre-activation of the layer that produced in = in_act(in_pre)  (GELU-backward
//         epilogue; din must then be KG_SET)
//   din_bias (IC) = Σ_n din[n, :] after that epilogue: the previous layer's bias gradient (only
//         with in_act != NONE)
// So an MLP's backward is: c_proj backward with in_pre = c_fc's pre and in_act = GELU (giving
// d(c_fc pre) and c_fc's bias gradient), then c_fc backward with dbias = KG_NONE.
// cuBLASLt: din: Dᵀ(IC, N) = op(A)·B, A = W (trans_w 1: OP_N lda IC; trans_w 0: OP_T lda OC),
//   B = dout (OC, N) ld OC, m = IC, n = N, k = OC, epilogue DGELU_BGRAD (AUX = in_pre, bias ptr =
//   din_bias) for GELU_TANH. dW: trans_w 1: Dᵀ(IC, OC) = in(IC, N)·dout(OC, N)ᵀ (OP_N, OP_T,
//   m = IC, n = OC, k = N), dbias by BGRADB; trans_w 0: Dᵀ(OC, IC) = dout(OC, N)·in(IC, N)ᵀ
//   (OP_N, OP_T, m = OC, n = IC, k = N), dbias by BGRADA. KG_ADD is beta = 1 with C = D.
//   Exact GELU and QuickGELU: the product stored into din, then one own pass din ⊙ act'(in_pre)
//   with din_bias's column sums (bf16 din: rounded twice, the sums of the stored values).
typedef struct {
	KGrad din;
	KGrad dw;
	KGrad dbias;
	KGrad din_bias;
	const KTensor *dout;
	const KTensor *in;
	const KTensor *w;
	int trans_w;
	const KTensor *in_pre;
	KAct in_act;
} KLinearBwd;
int kern_linear_bwd(KernCtx *ctx, const KLinearBwd *a);

// LayerNorm over the last dim C with eps 1e-5 and the biased variance:
// out (N, C) = (in − mean)·rstd·w + b; mean, rstd (N) STAT saved for backward; w, b (C) ACT
int kern_layernorm_fwd(KernCtx *ctx, KTensor *out, KTensor *mean, KTensor *rstd, const KTensor *in, const KTensor *w,
		       const KTensor *b);
int kern_layernorm_bwd(KernCtx *ctx, KGrad din, KGrad dw, KGrad db, const KTensor *dout, const KTensor *in,
		       const KTensor *w, const KTensor *mean, const KTensor *rstd);
// residual add: out = a + b, all the same element count; out may be a or b (in place). Backward
// needs no op: accumulate the gradient into both branches with KG_ADD.
int kern_add(KernCtx *ctx, KTensor *out, const KTensor *a, const KTensor *b);

// ======================================================================================
// Augmentation, embeddings, pooling
// ======================================================================================

// u8 clips straight to the patch embedding's input, in one pass:
//   clips (B, T, H, W, 3) U8; pos (B) I64 stream positions g; out (B, T·P, 3·p·p) ACT with
//   P = (H/p)·(W/p) patches in raster order, each flattened as (c, i, j) like open_clip's conv1:
//   out[b, t·P + py·(W/p) + px, (c·p + i)·p + j] = LUT[c][clips[b, t, py·p + i, x, c]],
//   x = px·p + j, or W − 1 − (px·p + j) when clip b is flipped.
//   LUT[c][v] = (float)(((double)v / 255 − mean[c]) / std[c]) computed in double with OpenAI CLIP's
//   mean (0.48145466, 0.4578275, 0.40821073) and std (0.26862954, 0.26130258, 0.27577711).
//   Clip b is flipped when flip != 0 and bit 0 of word 0 of Philox4x32-10 (Random123 constants)
//   with counter {g lo32, g hi32, 3, 0} and key {seed lo32, seed hi32} is 1 (g = pos[b]; 3 is
//   the trainer's augmentation stream): the same rule and values as the host twin tests/ref/augment_ref.c.
// H and W must be multiples of patch.
int kern_augment(KernCtx *ctx, KTensor *out, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip,
		 int patch);
// normalized video (B, T, H, W, C) ACT channels-last -> out (B, T·P, C·p·p), the same patch order
// as kern_augment (evaluation feeds host-normalized video this way); backward scatters back
int kern_patchify_fwd(KernCtx *ctx, KTensor *out, const KTensor *img, int patch);
int kern_patchify_bwd(KernCtx *ctx, KGrad dimg, const KTensor *dout, int patch);
// x (B, T·P, D) -> out (B, 1 + T·P, D): out[b, 0] = cls + pos[0];
// out[b, 1 + t·P + q] = x[b, t·P + q] + pos[1 + q] + tpos[t]; cls (D), pos (1 + P, D), tpos (T, D)
int kern_vis_embed_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KTensor *cls, const KTensor *pos,
		       const KTensor *tpos);
int kern_vis_embed_bwd(KernCtx *ctx, KGrad dx, KGrad dcls, KGrad dpos, KGrad dtpos, const KTensor *dout);
// ids (B, L) I32 -> out (B, L, D) = wte[ids] + pos[:L]; wte (V, D), pos (Lmax >= L, D).
// An id outside [0, V) latches -ERANGE ("tok_embed"); the output is then unspecified.
int kern_tok_embed_fwd(KernCtx *ctx, KTensor *out, const KTensor *ids, const KTensor *wte, const KTensor *pos);
// dwte (V, D), dpos (Lmax, D): KG_SET writes zeros to the rows no token uses
int kern_tok_embed_bwd(KernCtx *ctx, KGrad dwte, KGrad dpos, const KTensor *dout, const KTensor *ids);
// pos (B) I32 = index of each row's largest id, the first on ties (CLIP's end token has the largest id)
int kern_argmax_rows(KernCtx *ctx, KTensor *pos, const KTensor *ids);
// out (B, D) = x[b, pos[b], :], x (B, L, D), pos (B) I32: end-token pooling (pos from
// kern_argmax_rows) and class-token pooling (pos all 0). A pos outside [0, L) latches -ERANGE.
int kern_pool_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KTensor *pos);
// dx (B, L, D): KG_SET writes zeros to the rows that were not pooled
int kern_pool_bwd(KernCtx *ctx, KGrad dx, const KTensor *dout, const KTensor *pos);
// out (N, C) = in / max(‖in‖, 1e-12) per row; norm (N) STAT saved for backward
int kern_l2norm_fwd(KernCtx *ctx, KTensor *out, KTensor *norm, const KTensor *in);
int kern_l2norm_bwd(KernCtx *ctx, KGrad din, const KTensor *dout, const KTensor *out, const KTensor *norm);

// ======================================================================================
// Attention
// ======================================================================================

// qkv (B, T, 3·D) packed as [q | k | v], each D = H·hd split into heads (open_clip's in_proj
// layout) -> out (B, T, D) = softmax(q·kᵀ/√hd [causal: keys ≤ query]) · v per head, and
// lse (B, H, T) STAT = the log-sum-exp of each query row's scaled scores. No T×T matrix is stored;
// backward recomputes the scores from lse. Workspace: kern_attention_ws_bytes.
size_t kern_attention_ws_bytes(KernCtx *ctx, KDtype dt, int B, int T, int H, int hd);
int kern_attention_fwd(KernCtx *ctx, KTensor *out, KTensor *lse, const KTensor *qkv, int heads, int causal);
int kern_attention_bwd(KernCtx *ctx, KGrad dqkv, const KTensor *dout, const KTensor *qkv, const KTensor *out,
		       const KTensor *lse, int heads, int causal);

// ======================================================================================
// Contrastive losses (FastCLIP and OpenCLIP), exactly as their host twins (tests/ref/fastclip_ref) compute them
// ======================================================================================

// One rank's view of a step: N = K·B gathered rows, this rank's at [offset, offset + B).
typedef struct {
	const KTensor *e1, *e2; // (B, d) ACT: this rank's video / text features (L2-normalized)
	const KTensor *E1, *E2; // (N, d) ACT: every rank's features, gathered without gradient
	int offset;             // rank·B
	const KTensor *log_s;   // (1) STAT: log(1/τ) of the global temperature (unused by v2)
} KContrastBatch;

// workspace of the loss ops for B local and N gathered rows of width d (kern_clip_metrics: N = B)
size_t kern_loss_ws_bytes(KernCtx *ctx, int B, int N, int d);

// OpenCLIP's ClipLoss over the gathered batch (local loss, gather-with-gradient), s = exp(log_s):
//   loss (1) STAT = 1/(2B) Σ_i [CE(s·e1_i·E2ᵀ, offset+i) + CE(s·e2_i·E1ᵀ, offset+i)]
//   dE1, dE2 (N, d) ACT: gradients w.r.t. the gathered rows, each anchor's own gradient added to its
//   row offset+i (a sum reduce-scatter over the ranks gives each rank dL/de1, dL/de2; with K = 1
//   and E = e this is the local InfoNCE and dE its full gradient); dlog_s (1) ACT: dloss/dlog_s
//   (ACT so that it may be the logit_scale entry of the flat gradient buffer).
int kern_infonce(KernCtx *ctx, const KContrastBatch *b, KTensor *loss, KGrad dE1, KGrad dE2, KGrad dlog_s);

typedef enum { KFCCO_V0 = 0, KFCCO_V1 = 1, KFCCO_V2 = 2, KFCCO_V3 = 3 } KFccoVersion;

// the pack one sample contributes to the all-gather (B or N rows of kern_fcco_pack_width floats:
// 2 for v0/v1/v3 (U1, U2), 12 for v2), in this order
enum {
	KFCCO_P_U1 = 0,
	KFCCO_P_U2,
	KFCCO_P_TAU1,
	KFCCO_P_TAU2,
	KFCCO_P_B1,
	KFCCO_P_B2,
	KFCCO_P_TAU1_OLD,
	KFCCO_P_TAU2_OLD,
	KFCCO_P_M1,
	KFCCO_P_M2,
	KFCCO_P_V1,
	KFCCO_P_V2,
};
// the per-sample table (n, kern_fcco_table_width) STAT, one row per dataset sample: 2 columns
// (U1, U2; start 0) for v0/v1/v3, 10 for v2 (TAU start at the initial τ, the rest at 0)
enum {
	KFCCO_T_U1 = 0,
	KFCCO_T_U2,
	KFCCO_T_TAU1,
	KFCCO_T_TAU2,
	KFCCO_T_B1,
	KFCCO_T_B2,
	KFCCO_T_M1,
	KFCCO_T_M2,
	KFCCO_T_V1,
	KFCCO_T_V2,
};
int kern_fcco_pack_width(KFccoVersion v);
int kern_fcco_table_width(KFccoVersion v);

typedef struct {
	KFccoVersion version;
	double gamma; // inner rate of this step (the epoch's γ)
	double eps;   // ε in u + ε
	double rho;   // ρ of v2's τ gradient and v3's RGCL-g objective
	// v2's per-sample τ update (FastCLIPLossIndividual)
	double lr_tau, beta1, beta2, eps_tau; // beta1/2 as the epoch uses them (0 in epoch 0)
	double tau_min, tau_max, grad_clamp;
	int epoch; // bias correction 1 − β^(epoch+1)
	// FastCLIP's own rule: bad u (< 1e-35, inf, NaN) is reset to g only when γ < 1; at γ = 1 u is
	// (1−γ)·u·rescale + γ·g as written (rescale held in the STAT dtype), so a non-finite u or
	// rescale gives NaN (0·inf). 0: the reset at every γ (finite u: the same result)
	int upstream_reset;
} KFccoParams;

// The local phase (fastclip_local): for each local anchor i with sample id = ids[i], row r = offset+i,
// pos = e1_i·e2_i, and rows of the table gathered by id:
//   v0/v1/v3, s = exp(log_s):
//     g1 = 1/(N−1) Σ_{j≠r} exp((e1_i·E2_j − pos)·s),  g2 = 1/(N−1) Σ_{j≠r} exp((e2_i·E1_j − pos)·s)
//     u_k' = bad(u_k) ? g_k : (1−γ)·u_k + γ·g_k, bad(u) = NaN, ±inf or u < 1e-35
//     pack[i] = (u1', u2')
//   v2, per side k (k = 1: a = e1_i vs M = E2; k = 2: a = e2_i vs M = E1) with the row's τ, bound
//   b0, u, m, v: x_j = (a·M_j − pos)/τ; b = (float) max(b0, max_j x_j over every j incl. r);
//     g = 1/(N−1) Σ_{j≠r} exp(x_j − b); sx = Σ_{j≠r} exp(x_j − b)·x_j
//     u' = (float) (bad(u) ? g : (1−γ)·u·exp(b0 − b) + γ·g)
//     grad = clamp(−sx/(u'+ε)/(N−1) + log(u'+ε) + b + ρ, ±grad_clamp)
//     m' = (float)(β1·m + (1−β1)·grad); v' = (float)(β2·v + (1−β2)·grad²)
//     τ' = (float) clamp(τ − lr_tau·(m'/(1−β1^(e+1))) / (√(v'/(1−β2^(e+1))) + eps_tau), tau_min, tau_max)
//     pack[i]: U_k = u', TAU_k = τ', B_k = b, TAU_k_OLD = τ, M_k = m', V_k = v'
// ids (B) I64; table (n, width) STAT read only; pack (B, pack width) STAT written. An id outside
// [0, n) latches -ERANGE ("fcco_local"). N ≥ 2.
int kern_fcco_local(KernCtx *ctx, const KContrastBatch *b, const KTensor *ids, const KTensor *table,
		    const KFccoParams *p, KTensor *pack);
// Writes gathered packs into the table (fastclip_tables_scatter): for r = 0..N−1 in order, row
// ids_all[r] gets the pack's U1, U2 (v2 also TAU, B, M, V); a later r wins when ids repeat (a
// device must resolve duplicates so, not by racing). ids_all (N) I64, pack_all (N, pack width).
// An id outside [0, n) latches -ERANGE ("fcco_scatter") and nothing is written.
int kern_fcco_scatter(KernCtx *ctx, KTensor *table, const KTensor *ids_all, const KTensor *pack_all, KFccoVersion v);
// The surrogate whose gradient is the FCCO estimator (fastclip_surrogate), s = exp(log_s); for v2
// each anchor uses its pack's TAU_k_OLD (scale 1/τ) and bound B_k, the others scale s and bound 0:
//   L = Σ_i Σ_{j≠r} w_i·exp((e1_i·E2_j − pos_i)·sc1_i − b1_i)  + (the same for e2_i vs E1, u2)
//     + Σ_j Σ_{i≠j−offset} W_j·exp((E1_j·e2_i − D_j)·SC1_j − B1_j) + (E2_j vs e1_i, U2)
//   with w_i = 1/(2B(N−1)(u1_i+ε)) from pack (local), W_j from pack_all (gathered), D_j = E1_j·E2_j;
//   gradients flow into e1, e2 only (E and the second term's anchors are detached).
//   v0: dlog_s = ∂L/∂log s; v1, v2: dlog_s = 0; v3 (RGCL-g): with c = ρ + ½·mean_i(log u1_i + log u2_i):
//   loss = (L + c)/s, de = ∂L/∂e / s, dlog_s = ∂L/∂log s / s − c/s. loss (1) STAT, de1/de2 (B, d) ACT,
//   dlog_s (1) ACT. pack (B, width) local, pack_all (N, width) gathered. N ≥ 2.
int kern_fcco_surrogate(KernCtx *ctx, const KContrastBatch *b, const KTensor *pack, const KTensor *pack_all,
			const KFccoParams *p, KTensor *loss, KGrad de1, KGrad de2, KGrad dlog_s);
// Logged metrics of the local B×B batch at s = exp(log_s), sim = e1·e2ᵀ: metrics (2) STAT =
// [symmetric InfoNCE ½·mean(CE rows + CE columns), fraction of rows i whose first maximum of sim_i
// is at j = i]
int kern_clip_metrics(KernCtx *ctx, KTensor *metrics, const KTensor *e1, const KTensor *e2, const KTensor *log_s);

// Adam on the global temperature (FastclipTemp) with g = grad·factor (factor = norm_clip[1], the
// clip factor kern_grad_norm left on the device, or 1 when norm_clip is NULL: FastCLIP clips τ's
// gradient with the model's): m' = β1·m + (1−β1)·g; v' = β2·v + (1−β2)·g²;
// log_s' = clamp(log_s − r/(1−β1^step)·m'/(√v'/√(1−β2^step) + eps), lo, hi) where r = lr_low if
// exp(−log_s) ≤ tau_low else lr (v3: lr/3 below τ 0.03; tau_low 0: never).
// live: NULL, or a (KTEMP_LIVE_N) F64 tensor on the device holding kern_temp_live's values, read
// when the op runs in place of lr, lr_low and step (a graph replays the op: see kern_graph_begin)
typedef struct {
	double lr, lr_low, tau_low;
	double beta1, beta2, eps;
	int64_t step; // 1 on the first update
	double lo, hi;
	const KTensor *live;
} KTempStep;
enum { KTEMP_LIVE_LR = 0, KTEMP_LIVE_LR_LOW, KTEMP_LIVE_BC1, KTEMP_LIVE_BC2, KTEMP_LIVE_N };
// out = [lr, lr_low, 1 − β1^step, 1 − β2^step] in double, as the op computes them from h
void kern_temp_live(const KTempStep *h, double out[KTEMP_LIVE_N]);
// log_s (1), mv (2) = (m, v): STAT; grad (1) ACT; norm_clip (2) STAT or NULL; copy (1) ACT or NULL
// receives log_s' too (e.g. the model's logit_scale weight). A non-finite g latches -ERANGE
// ("temp_step"), nothing changes.
int kern_temp_step(KernCtx *ctx, KTensor *log_s, KTensor *mv, const KTensor *grad, const KTensor *norm_clip,
		   KTensor *copy, const KTempStep *h);

// ======================================================================================
// Optimizer over the flat parameter buffer
// ======================================================================================

// A segment of the flat buffers (one parameter tensor), its update rule from flags:
//   KSEG_DECAY   weight decay applies (AdamW: decoupled p·(1 − lr·wd); LAMB: + wd·p in r)
//   KSEG_LAMB    LAMB instead of AdamW; its trust ratio ‖p‖/‖r‖ (1 if a norm is 0) is used only
//                when KSEG_DECAY is set too, else 1 (upstream fast_clip's LAMB)
//   KSEG_FROZEN  not updated (moments untouched) and left out of the gradient norm
//   KSEG_EXTERNAL in the gradient norm, but not updated here (another op updates it: the global
//                τ's kern_temp_step, which reads the same clip factor)
//   KSEG_CLAMP   the master value is clamped to [clamp_lo, clamp_hi] after the update
//   KSEG_LR_SCALE the segment's rate is lr·lr_scale wherever lr appears (the step, AdamW's decoupled
//                decay, LAMB's lr·trust): a param group's lr_scale in BEiT/timm's layer-wise decay.
//                Without the flag the rate is lr exactly (lr_scale is not read)
typedef struct {
	int64_t offset, length; // elements
	uint32_t flags;
	float clamp_lo, clamp_hi;
	double lr_scale; // > 0, read only with KSEG_LR_SCALE
} KOptSegment;
enum { KSEG_DECAY = 1u, KSEG_LAMB = 2u, KSEG_FROZEN = 4u, KSEG_CLAMP = 8u, KSEG_EXTERNAL = 16u, KSEG_LR_SCALE = 32u };
// reductions run over chunks of at most KERN_OPT_CHUNK elements that never straddle a segment,
// summed per segment in chunk order: the fixed order every backend uses
#define KERN_OPT_CHUNK 4096

typedef struct KOptPlan KOptPlan;
// segments sorted by offset, not overlapping, inside [0, n_params); elements in no segment are
// never touched. The plan holds the chunk table and per-chunk partial sums on the device, so one
// stream at a time uses it.
int kern_opt_plan_create(KernCtx *ctx, KOptPlan **out, const KOptSegment *segs, int n_segs, int64_t n_params);
void kern_opt_plan_destroy(KOptPlan *plan);

// norm_clip (2) STAT = [‖g‖ over every non-frozen segment, clip factor], factor =
// clip_norm / (‖g‖ + 1e-6) when clip_norm > 0 and ‖g‖ > clip_norm, else 1 (torch's
// clip_grad_norm_); NaN when ‖g‖ is not finite. grads (n_params) ACT.
int kern_grad_norm(KernCtx *ctx, const KOptPlan *plan, KTensor *norm_clip, const KTensor *grads, double clip_norm);
// One gradient norm over two flat buffers with two plans (a model and the heads it trains with,
// --objective classify): norm_clip (2) STAT holds kern_grad_norm's [‖g1‖, ·] of the first and other
// (2) STAT the second's; norm_clip becomes [√(‖g1‖² + ‖g2‖²), its clip factor for clip_norm] by
// kern_grad_norm's rule (the sum in double), so both updates read one factor. NaN stays NaN.
int kern_grad_norm_join(KernCtx *ctx, KTensor *norm_clip, const KTensor *other, double clip_norm);

// Hyper-parameters of one update, host arguments per call. live: NULL, or a (KOPT_LIVE_N) F64
// tensor on the device holding kern_opt_live's values, read when the op runs in place of lr and
// step (a graph replays the op with its captured arguments: see kern_graph_begin)
typedef struct {
	double lr, beta1, beta2, eps, weight_decay;
	int64_t step; // 1 on the first update (bias correction as torch: 1 − β^step)
	const KTensor *live;
} KOptHyper;
enum { KOPT_LIVE_LR = 0, KOPT_LIVE_BC1, KOPT_LIVE_BC2, KOPT_LIVE_N };
// out = [lr, 1 − β1^step, 1 − β2^step] in double: every per-step number the update uses is one of
// these or computed from them by exact operations (/, sqrt, the float rounding), so a device reading
// them gets the bits a host-side call gets
void kern_opt_live(const KOptHyper *h, double out[KOPT_LIVE_N]);

// One fused AdamW/LAMB update of every non-frozen segment with g = grads·factor (factor from
// norm_clip[1], or 1 when norm_clip is NULL); m' = β1·m + (1−β1)·g; v' = β2·v + (1−β2)·g²:
//   AdamW (torch.optim.AdamW): p' = p·(1 − lr·wd) − (lr/(1−β1^t))·m' / (√v'/√(1−β2^t) + eps)
//   (lr: the segment's rate, lr·lr_scale on KSEG_LR_SCALE segments)
//   LAMB: r = (m'/(1−β1^t)) / (√(v'/(1−β2^t)) + eps) + wd·p; p' = p − lr·trust·r
// with wd = weight_decay on KSEG_DECAY segments, else 0, then the KSEG_CLAMP clamp. master
// (n_params) STAT; copy (n_params) ACT or NULL: every element of every segment (frozen ones too)
// gets its master value, stored (the bf16 weights the model reads); grads ACT; m, v STAT. A
// non-finite factor latches -ERANGE ("optimizer") and changes nothing.
int kern_optimizer(KernCtx *ctx, const KOptPlan *plan, const KOptHyper *h, KTensor *master, KTensor *copy,
		   const KTensor *grads, KTensor *m, KTensor *v, const KTensor *norm_clip);

// ======================================================================================
// Classification fine-tuning (issue 28 §1, --objective classify; AVION's EPIC-KITCHENS-100
// verb/noun recipe): timm's soft-target cross-entropy with mixup targets and label smoothing,
// Mixup/CutMix of the augmented batch, the per-sample scale of drop path. The host-side draws
// that feed them (mixup parameters, drop-path scales) are kern_cls.h's. docs/kernels.md.
// ======================================================================================

typedef struct {
	double lam;   // weight of class a (timm's lam; 1: no mixing), in [0, 1]
	double eps;   // label smoothing, in [0, 1)
	double scale; // the upstream gradient dL/dloss (1 when the mean loss is the objective), finite
} KSoftCe;

// Soft-target cross-entropy, forward and backward in one pass, computed in double: timm's
// SoftTargetCrossEntropy against mixup_target(y, K, lam, eps) with the pair (a_n, b_n) as (y, y.flip(0)):
//   t_n[j] = lam·s(a_n)[j] + (1−lam)·s(b_n)[j],  s(y)[j] = eps/K + (1−eps)·[j = y]
//   l_n = −Σ_j t_n[j]·log softmax(z_n)[j] = logsumexp(z_n) − Σ_j t_n[j]·z_n[j]
// Row n is LABELLED when a_n ≥ 0 and b_n ≥ 0. Id −1 marks a missing label (EK-100's heads: a clip
// without a noun); a row whose own or partner's id is −1 is left out of the mean and gets no
// gradient. With M the number of labelled rows:
//   loss (1) STAT = Σ_labelled l_n / M, 0 when M = 0
//   rows (N) STAT or NULL: l_n on labelled rows, 0 on the others
//   dlogits (N, K) ACT, a KGrad (KG_NONE: forward only) = scale·(softmax(z_n) − t_n)/M on labelled
//   rows, 0 on the others (KG_ADD adds those zeros too)
// logits (N, K) ACT; a, b (N) I32 (b = a: no mixing; timm's flip pairs row n with N−1−n, so b_n =
// a_{N−1−n}). 1 ≤ N ≤ 2^19, K ≥ 1. An id < −1 or ≥ K latches -ERANGE ("softce"); the outputs are
// then unspecified.
int kern_softce(KernCtx *ctx, KTensor *loss, KTensor *rows, KGrad dlogits, const KTensor *logits, const KTensor *a,
		const KTensor *b, const KSoftCe *p);

typedef struct {
	int cutmix;         // 0: mixup (blend the pair), 1: cutmix (paste the partner's box)
	double lam;         // mixup: weight of the row itself, in [0, 1]; unused by cutmix
	int y0, y1, x0, x1; // cutmix: the box [y0, y1) × [x0, x1) in pixels of the H×W frame (empty allowed)
} KMixup;

// Mixup / CutMix of the batch kern_augment or kern_augment_tubelet writes: x (B, T'·P, 3·tt·p·p) ACT,
// P = (H/p)·(W/p), tt = x's last dimension / (3·p·p) (1 for kern_augment), where element
// (b, t'·P + py·(W/p) + px, ((c·tt + dt)·p + i)·p + j) is pixel (y, x) = (py·p + i, px·p + j) of frame
// t'·tt + dt of clip b. Row b's partner is B−1−b (timm's x.flip(0); the middle row of an odd B is its own):
//   mixup:  out[b] = (float)lam·x[b] + (float)(1−lam)·x[B−1−b]   (f32 arithmetic)
//   cutmix: out[b] = x[B−1−b] at pixels inside the box, x[b] elsewhere; one box for every frame of
//           every clip (timm's x[:, :, y0:y1, x0:x1] = x.flip(0)[:, :, y0:y1, x0:x1])
// Out of place, or IN PLACE (out == x): each pair (b, B−1−b) is read before either is written, so
// the result is the out-of-place one. Any other overlap of out and x is not allowed. H, W multiples
// of patch; 0 ≤ y0 ≤ y1 ≤ H, 0 ≤ x0 ≤ x1 ≤ W.
int kern_mixup_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KMixup *m, int H, int W, int patch);
// The input gradient: the map is its own transpose (mixup: dx[b] = lam·dout[b] + (1−lam)·dout[B−1−b];
// cutmix sends the box back to the partner), so this is the forward applied to dout, written by the
// KGrad rule (KG_SET may be in place over dout). Training does not backpropagate into pixels: this
// is for tests (the adjoint identity) and for a caller that learns an input transform.
int kern_mixup_bwd(KernCtx *ctx, KGrad dx, const KTensor *dout, const KMixup *m, int H, int W, int patch);

// Per-row scale: out[b, i] = x[b, i]·scale[b] (KG_SET; in place allowed, out == x) or
// out[b, i] += x[b, i]·scale[b] (KG_ADD: the residual add h += drop_path(branch) fused), f32
// arithmetic. x and out (B, ...) ACT of one shape, scale (B) STAT. Drop path (stochastic depth):
// forward with the scales of kern_drop_path_scales (kern_cls.h), backward dbranch = dout·scale by
// the same op with the same scales.
int kern_row_scale(KernCtx *ctx, KGrad out, const KTensor *x, const KTensor *scale);

typedef struct {
	double rate;   // the chance an element is zeroed, in [0, 1]
	uint64_t seed; // the Philox key (the trainer's data seed)
} KDropout;
// Dropout (torch.nn.Dropout in training) whose mask is a pure function of (seed, the row's stream
// position g, the element's index i in its row), so a sample gets the same mask whatever the rank
// count or its row in the batch: x (B, ...) ACT, pos (B) I64 the rows' positions g, keep = 1 − rate.
// Element (b, i), i < n/B, is kept when u < keep for u = (w >> 8)·2^−24, w the word 0 of
// Philox4x32-10 (Random123's constants) at counter {g lo32, g hi32, RNG_STREAM_DROPOUT (8), i}, key
// {seed lo32, seed hi32}, g = pos[b]; kept: x·(float)(1/keep) (f32 arithmetic), else 0.
// rate 0: every element kept with factor 1 (out = x, no draw); rate 1: out = 0.
// KG_SET (in place allowed: out == x) or KG_ADD (not in place); out (B, ...) ACT of x's element
// count, any mix of F32/BF16 (a bf16 x into an f32 out converts exactly). The map is diagonal, so
// the backward is this op on dout with the same pos, seed and rate. n/B < 2^32.
int kern_dropout(KernCtx *ctx, KGrad out, const KTensor *x, const KTensor *pos, const KDropout *p);

// ======================================================================================
// VideoMAE pretraining: tubelets, tube masks, token gather, the decoder's input, the
// normalized-pixel target and the masked MSE (docs/kernels.md, "VideoMAE ops")
// ======================================================================================

// TUBELETS. A clip (T, H, W, 3) is cut into T' = T/tt slices of tt frames and each slice into
// Ns = (H/p)·(W/p) spatial patches in raster order (q = py·(W/p) + px). Token n = t'·Ns + q is
// tubelet (t', q): slice-major, the order of VideoMAE's Conv3d patch embedding flattened.
//
// INDEX ROWS. The I32 index arguments below are (B, M) lists of token indices, each row strictly
// ascending inside [0, N) (what kern_mae_tube_mask writes). An op that reads a row breaking this
// latches -ERANGE under its name ("index %d at [b·M + m] is outside [0, N) or not above the one
// before it"); its outputs are then unspecified.

// m = floor(ratio·Ns), VideoMAE's int(mask_ratio · num_patches_per_frame) (the product in double);
// -EINVAL unless Ns >= 1, 0 <= ratio < 1 and m < Ns
int kern_mae_mask_count(int Ns, double ratio);
// The tube mask of the clip at stream position g (host, deterministic): the m = kern_mae_mask_count
// masked spatial positions are the first m entries of a partial Fisher–Yates shuffle of 0..Ns−1
// (perm = identity; for i = 0..m−1: swap perm[i] and perm[i + d_i]) with d_i = rng_next_below(Ns − i),
// the i-th such draw of rng_stream_init(seed, g, RNG_STREAM_MASK) (Philox4x32-10, key seed, counter
// {g lo32, g hi32, 7, block}). Every slice masks the same positions (a tube). vis ((Ns − m)·Tp) and
// masked (m·Tp) receive the visible and the masked token indices t'·Ns + q, each ascending.
// Returns Nm = m·Tp, or -EINVAL (bad Ns, ratio, Tp < 1, NULL lists, more than INT32_MAX tokens).
int kern_mae_tube_mask(uint64_t seed, uint64_t g, int Ns, int Tp, double ratio, int32_t *vis, int32_t *masked);
// the same for B clips at positions g[b]: vis (B, Nv) and masked (B, Nm) row-major; clip b's rows
// depend on (seed, g[b]) alone. Returns Nm or -EINVAL.
int kern_mae_tube_mask_batch(uint64_t seed, const int64_t *g, int B, int Ns, int Tp, double ratio, int32_t *vis,
			     int32_t *masked);
// VideoMAE's fixed position table (get_sinusoid_encoding_table): out (n, d) row-major,
// out[pos·d + j] = (float) sin(a) for even j, (float) cos(a) for odd j, a = pos / 10000^(2·floor(j/2)/d),
// in double. 0, or -EINVAL when n < 1, d < 1 or out is NULL.
int kern_mae_sinusoid_table(float *out, int n, int d);

// kern_augment with tubelets of tt frames (VideoMAE's 2×16×16 Conv3d embedding as a matmul):
//   out (B, T'·Ns, 3·tt·p·p) ACT, T' = T/tt; element ((c·tt + dt)·p + i)·p + j of token t'·Ns + q
//   (PyTorch's Conv3d weight (OC, c, dt, i, j) flattened) = LUT[c][clips[b, t'·tt + dt, py·p + i, x, c]]
//   with x, LUT and the per-clip flip exactly kern_augment's. tt = 1 gives kern_augment's bytes.
//   T % tt == 0, H and W multiples of p.
int kern_augment_tubelet(KernCtx *ctx, KTensor *out, const KTensor *clips, const KTensor *pos, uint64_t seed, int flip,
			 int patch, int tubelet);
// out (B, M, D) = x[b, idx[b, m], :]; x (B, N, D) ACT, idx (B, M) I32 index rows into [0, N)
// (the encoder's visible tokens)
int kern_token_gather_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, const KTensor *idx);
// dx (B, N, D): row idx[b, m] gets dout[b, m] (KG_ADD adds it); KG_SET writes zeros to the rows
// the index row does not name
int kern_token_gather_bwd(KernCtx *ctx, KGrad dx, const KTensor *dout, const KTensor *idx);
// The decoder's input, VideoMAE's concatenation (visible first, then the mask tokens in masked-index
// order): out (B, Nv + Nm, D) with out[b, m] = x_vis[b, m] + pos[vis_idx[b, m]] for m < Nv and
// out[b, Nv + j] = mask_token + pos[mask_idx[b, j]]; x_vis (B, Nv, D), mask_token (D), pos (N, D) ACT;
// vis_idx (B, Nv), mask_idx (B, Nm) I32 index rows into [0, N)
int kern_mae_decoder_input_fwd(KernCtx *ctx, KTensor *out, const KTensor *x_vis, const KTensor *mask_token,
			       const KTensor *pos, const KTensor *vis_idx, const KTensor *mask_idx);
// dx_vis (B, Nv, D) = dout[:, :Nv]; dmask_token (D) = Σ_b Σ_j dout[b, Nv + j]; dpos (N, D): row n gets
// the sum over b (in order) of dout's visible row naming n, then its masked row naming n; KG_SET
// writes zeros to rows no index names. dpos KG_NONE (VideoMAE's table is fixed): the index rows are
// then not read, only their shapes (B, Nv) and (B, Nm) checked against dout (B, Nv + Nm, D).
int kern_mae_decoder_input_bwd(KernCtx *ctx, KGrad dx_vis, KGrad dmask_token, KGrad dpos, const KTensor *dout,
			       const KTensor *vis_idx, const KTensor *mask_idx);
// The normalized-pixel target of the masked tokens (VideoMAE's norm_pix_loss): out (B, Nm, K·3) F32
// with K = tt·p·p; row j of clip b is tubelet n = mask_idx[b, j] = t'·Ns + q of clips (B, T, H, W, 3)
// U8, its pixels read as kern_augment_tubelet reads them (the same flip from seed, flip, pos (B) I64).
// Element ((dt·p + i)·p + jj)·3 + c (VideoMAE's rearrange to '(p0 p1 p2) c', then '(p c)') of pixel
// value v (channel c at frame t'·tt + dt, row py·p + i, column x of px·p + jj):
//   out = (float)((v/255.0 − mean) / (sd + 1e-6)), mean = S/(255.0·K),
//   sd = sqrt((K·S2 − S²) / (K·(K−1)·255²)) (the unbiased deviation of v/255),
// S = Σ v and S2 = Σ v² over the K pixels of channel c (exact integers), each step in double.
// K >= 2; mask_idx index rows into [0, T'·Ns).
int kern_mae_target(KernCtx *ctx, KTensor *out, const KTensor *clips, const KTensor *pos, const KTensor *mask_idx,
		    uint64_t seed, int flip, int patch, int tubelet);
// The masked MSE: pred ACT and target STAT of n = numel elements each (B, Nm, K·3: only the masked
// tokens), loss (1) STAT (or NULL) = Σ (pred − target)² / n summed in double; dpred ACT (same shape)
// = (pred − target)·c with c = 2·scale/n (scale: the upstream gradient), computed in double, stored.
int kern_mae_mse(KernCtx *ctx, KTensor *loss, KGrad dpred, const KTensor *pred, const KTensor *target, double scale);
// Mean pooling of tokens (VideoMAE's fine-tuning feature; the tower's --pool mean): out (B, D) =
// (Σ_{t=first..L−1} x[b, t]) / (L − first), x (B, L, D) ACT, 0 <= first < L (first 1 skips a class
// token); the sum in token order in f32 (f64 on the f64 path), then one division, so both backends
// give the same bits.
int kern_token_mean_fwd(KernCtx *ctx, KTensor *out, const KTensor *x, int first);
// dx (B, L, D): rows t >= first get dout[b] / (L − first) (KG_ADD adds it); KG_SET writes zeros to
// the rows before first
int kern_token_mean_bwd(KernCtx *ctx, KGrad dx, const KTensor *dout, int first);

#endif
