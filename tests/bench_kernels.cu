// make bench-kernels: own kernels in GB/s against a device-to-device copy, GEMMs and attention in
// TFLOP/s against a plain cuBLASLt bf16 GEMM, all measured in the same run; ratios printed last.
// Each own kernel adds one entry to the table in main. Exit 77 without a GPU.
#include "kattn.h" // defines: KAttn, kattn_create, kattn_fwd, kattn_bwd, kattn_ws_bytes
#include "kcuda.h" // defines: KLAUNCH, cuda_check
#include "kex.h"   // defines: kex_blocksum, kex_softmax_rows, kex_mma_gemm
#include "kgemm.h" // defines: kgemm
extern "C" {
#include "kern_ops.h" // defines: the op contract (the CUDA backend's ops are timed through it)
}

#include <deque>
#include <chrono>
#include <functional>
#include <string>
#include <stdio.h>
#include <string.h>
#include <vector>

struct Entry {
	const char *name;
	bool flops;     // work counts floating-point operations (TFLOP/s), else bytes moved (GB/s)
	double work;    // per call
	const char *vs; // the baseline entry it is compared with
	std::function<int()> run;
	KernCtx *ctx = nullptr; // an op of the backend: timed on the host, its stream drained
	double secs = 0;        // per call
};

// mean time of one call over enough calls to fill ~0.2 s, after a warm-up
static double time_it(const std::function<int()> &run)
{
	cudaEvent_t a, b;
	cuda_check(cudaEventCreate(&a));
	cuda_check(cudaEventCreate(&b));
	for (int i = 0; i < 3; i++)
		if (run())
			return -1;
	int reps = 1;
	float ms = 0;
	for (;;) {
		cuda_check(cudaEventRecord(a));
		for (int i = 0; i < reps; i++)
			run();
		cuda_check(cudaEventRecord(b));
		cuda_check(cudaEventSynchronize(b));
		cuda_check(cudaEventElapsedTime(&ms, a, b));
		if (ms > 200 || reps >= 1 << 14)
			break;
		reps *= 4;
	}
	cuda_check(cudaGetLastError());
	cuda_check(cudaEventDestroy(a));
	cuda_check(cudaEventDestroy(b));
	return ms * 1e-3 / reps;
}

// an op of the backend: it queues on the context's own stream, so the time is the host's over
// enough calls, the queue drained at the end (launch overhead hides behind kernels this long)
static double time_op(KernCtx *c, const std::function<int()> &run)
{
	for (int i = 0; i < 3; i++)
		if (run())
			return -1;
	if (kern_stream_sync(c))
		return -1;
	for (int reps = 1;; reps *= 4) {
		auto t0 = std::chrono::steady_clock::now();
		for (int i = 0; i < reps; i++)
			if (run())
				return -1;
		if (kern_stream_sync(c))
			return -1;
		double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		if (s > 0.2 || reps >= 1 << 14)
			return s / reps;
	}
}

static void fill_bf16(__nv_bfloat16 *d, size_t n)
{
	std::vector<__nv_bfloat16> h(n);
	for (size_t i = 0; i < n; i++)
		h[i] = __float2bfloat16((float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f);
	cuda_check(cudaMemcpy(d, h.data(), n * 2, cudaMemcpyHostToDevice));
}

// Attention at the model's shapes, forward and backward, for each implementation this build has:
// the own kernels (the backward's dQ in fixed order, the default, and by atomics: "own-atomic", the
// backward only) and cuDNN (forced; its backward is its fastest, atomic one). FLOPs are the
// algorithm's: 4·B·H·T²·hd forward (Q·Kᵀ and P·V), 2.5 times that backward (five T x T GEMMs, what
// the own backward does too), half under a causal mask.
struct AttnShape {
	const char *name;
	int B, T, H, hd, causal;
};
static const AttnShape attn_shapes[] = {
	{"vit-b16 T=4", 32, 785, 12, 64, 0}, {"vit-b16 T=16", 8, 3137, 12, 64, 0}, {"text", 256, 77, 8, 64, 1}};
static const char *const attn_label[3] = {"own", "own-atomic", "cudnn"};

struct AttnBufs {
	__nv_bfloat16 *qkv, *out, *dout, *dqkv;
	float *lse;
	void *ws;
	size_t wsb;
};
struct AttnBench {
	KAttn *impl[3]; // as attn_label (cuDNN NULL when this build or device has none)
	std::deque<AttnBufs> bufs;
	std::deque<std::string> names;
	~AttnBench()
	{
		for (AttnBufs &b : bufs)
			for (void *p :
			     {(void *)b.qkv, (void *)b.out, (void *)b.dout, (void *)b.dqkv, (void *)b.lse, b.ws})
				cuda_check(cudaFree(p));
		for (KAttn *k : impl)
			kattn_destroy(k);
	}
};

static void add_attention(std::vector<Entry> &t, AttnBench &ab, KErr &e, const char *peak)
{
	KAttn **impl = ab.impl;
	const KAttnOwnOpts atomic = {1, 0};
	if (kattn_create(&impl[0], KATTN_OWN, 0, &e) || kattn_create(&impl[1], KATTN_OWN, 0, &e))
		fprintf(stderr, "attention: %s\n", e.msg), exit(1);
	kattn_set_own_opts(impl[1], &atomic);
	if (!kattn_cudnn_available() || kattn_create(&impl[2], KATTN_CUDNN, 0, &e)) {
		printf("attention: cuDNN not in this build or not usable (%s): own kernel only\n", e.msg);
		kerr_clear(&e);
	}
	for (const AttnShape &a : attn_shapes) {
		const size_t D = (size_t)a.H * a.hd, nx = (size_t)a.B * a.T * 3 * D, no = (size_t)a.B * a.T * D;
		ab.bufs.push_back(AttnBufs());
		AttnBufs *b = &ab.bufs.back();
		cuda_check(cudaMalloc((void **)&b->qkv, nx * 2));
		cuda_check(cudaMalloc((void **)&b->dqkv, nx * 2));
		cuda_check(cudaMalloc((void **)&b->out, no * 2));
		cuda_check(cudaMalloc((void **)&b->dout, no * 2));
		cuda_check(cudaMalloc((void **)&b->lse, (size_t)a.B * a.H * a.T * 4));
		fill_bf16(b->qkv, nx), fill_bf16(b->dout, no);
		for (int i = 0; i < 3; i++)
			if (impl[i])
				b->wsb = std::max(b->wsb, kattn_ws_bytes(impl[i], a.B, a.T, a.H, a.hd));
		cuda_check(cudaMalloc(&b->ws, b->wsb + 256));
		const double fwd = 4.0 * a.B * a.H * (double)a.T * a.T * a.hd * (a.causal ? 0.5 : 1.0);
		for (int i = 0; i < 3; i++) {
			KAttn *k = impl[i];
			if (!k)
				continue;
			auto run_fwd = [=, &e] {
				return kattn_fwd(k, NULL, b->out, b->lse, b->qkv, a.B, a.T, a.H, a.hd, a.causal, b->ws,
						 b->wsb, &e);
			};
			auto run_bwd = [=, &e] {
				return kattn_bwd(k, NULL, b->dqkv, 0, b->dout, b->qkv, b->out, b->lse, a.B, a.T, a.H,
						 a.hd, a.causal, b->ws, b->wsb, &e);
			};
			if (run_fwd() || run_bwd()) { // cuDNN may refuse a shape: say so and go on
				printf("attention %s %s: not run: %s\n", attn_label[i], a.name, e.msg);
				kerr_clear(&e);
				continue;
			}
			if (i != 1) { // own-atomic's forward is own's
				ab.names.push_back(std::string("attn ") + attn_label[i] + " fwd " + a.name);
				t.push_back({ab.names.back().c_str(), true, fwd, peak, run_fwd});
			}
			ab.names.push_back(std::string("attn ") + attn_label[i] + " bwd " + a.name);
			t.push_back({ab.names.back().c_str(), true, 2.5 * fwd, peak, run_bwd});
		}
	}
}

// The own kernels' target (issue 25): at least 0.8 of cuDNN's rate forward and backward at head dim
// 64 with vit-b16's 785 and 3137 tokens; one line, with the backward by atomics beside it
static void attention_target(const std::vector<Entry> &t)
{
	auto rate = [&](const char *impl, const char *pass, const char *shape) {
		std::string n = std::string("attn ") + impl + " " + pass + " " + shape;
		for (const Entry &x : t)
			if (n == x.name)
				return x.work / x.secs;
		return 0.0;
	};
	const double goal = 0.8;
	bool met = true, any = false;
	printf("attention target (own >= %.2f x cuDNN, hd 64, 785 and 3137 tokens):", goal);
	for (const char *shape : {"vit-b16 T=4", "vit-b16 T=16"})
		for (const char *pass : {"fwd", "bwd"}) {
			double c = rate("cudnn", pass, shape), o = rate("own", pass, shape);
			if (c <= 0 || o <= 0) {
				printf(" %s %s n/a;", pass, shape);
				met = false;
				continue;
			}
			any = true;
			met = met && o / c >= goal;
			printf(" %s %s %.2f", pass, shape, o / c);
			if (!strcmp(pass, "bwd") && rate("own-atomic", pass, shape) > 0)
				printf(" (atomic dQ %.2f)", rate("own-atomic", pass, shape) / c);
			printf(";");
		}
	printf(" %s\n", !any ? "not measured (no cuDNN)" : met ? "met" : "NOT met");
}

// ---- the CUDA backend's ops, through the contract, at vit-b16's sizes ----
// vit-b16 at T = 4 frames of 224², a batch of BV clips: N = BV·785 token rows of width 768; text
// 77 tokens of width 512; FastCLIP's loss at B = 256 per rank of K = 8 (N = 2048), d = 256
enum {
	BV = 32,
	TV = 4,
	IMG = 224,
	PATCH = 16,
	PV = (IMG / PATCH) * (IMG / PATCH),
	LVV = 1 + TV * PV,
	WV = 768,
	LT = 77,
	WT = 512,
	VOCAB = 49408,
	EMB = 256,
	LB = 256,
	LK = 8
};
static const int64_t NV = (int64_t)BV * LVV, NPARAM = 150000000;

struct Tensors {
	std::vector<KTensor *> all;
	KTensor *make(KernCtx *c, KDtype dt, std::initializer_list<int64_t> sh)
	{
		KTensor *x = new KTensor;
		if (kern_alloc(c, x, dt, (int)sh.size(), sh.begin())) {
			fprintf(stderr, "bench: kern_alloc of %s failed\n", kern_dtype_name(dt));
			exit(1);
		}
		all.push_back(x);
		if (dt != KDT_F32 && dt != KDT_BF16)
			return x; // ids, positions and clips stay zero: valid for every op here
		std::vector<uint16_t> h16;
		std::vector<float> h32;
		size_t n = (size_t)kern_numel(x);
		for (size_t i = 0; i < n; i++) { // small values in [-0.5, 0.5): no overflow anywhere
			float v = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
			if (dt == KDT_BF16)
				h16.push_back(kern_bf16_from_f32(v));
			else
				h32.push_back(v);
		}
		const void *h = dt == KDT_BF16 ? (const void *)h16.data() : (const void *)h32.data();
		if (kern_upload(c, x, h, kern_nbytes(x))) {
			fprintf(stderr, "bench: upload failed: %s\n", kern_error_message(c));
			exit(1);
		}
		return x;
	}
	void release(KernCtx *c)
	{
		for (KTensor *x : all) {
			kern_free(c, x);
			delete x;
		}
	}
};

// a plain cuBLASLt bf16 GEMM C (m x n) = op(A) B of the same size as a linear layer's product
static int plain(KGemm *g, KErr *e, KgOp opA, KgOp opB, int m, int n, int k, const void *A, const void *B, void *C)
{
	KgCall x = {};
	x.opA = opA, x.opB = opB, x.M = m, x.N = n, x.K = k, x.A = A, x.B = B, x.C = C;
	x.lda = opA == KGEMM_N ? m : k, x.ldb = opB == KGEMM_N ? k : n, x.ldc = m;
	x.ab = KGEMM_BF16, x.c = KGEMM_BF16, x.alpha = 1.0f;
	return kgemm(g, NULL, &x, e);
}

static int add_backend_ops(std::vector<Entry> &t, KernCtx **out, Tensors *tn, KErr *e)
{
	KCtxOptions o = {KERN_BACKEND_CUDA, 0, 0, KERN_ATTN_AUTO};
	if (kern_ctx_create(out, &o)) {
		fprintf(stderr, "bench: kern_ctx_create(cuda) failed (is the backend linked?)\n");
		return 1;
	}
	KernCtx *c = *out;
	size_t ws = kern_loss_ws_bytes(c, LB, LB * LK, EMB), lw = kern_linear_ws_bytes(c);
	if (kern_ctx_reserve_workspace(c, ws > lw ? ws : lw))
		return 1;
	static KGemm *g;
	if (kgemm_create(&g, 0, e))
		return 1;
	const KDtype H = KDT_BF16, F = KDT_F32;
	// the linear layers of a block: in (N, 768) or (N, 3072), weights (OC, IC), epilogues as the model's
	KTensor *x768 = tn->make(c, H, {NV, WV}), *x3072 = tn->make(c, H, {NV, 4 * WV}),
		*pre = tn->make(c, H, {NV, 4 * WV});
	KTensor *y768 = tn->make(c, H, {NV, WV}), *y2304 = tn->make(c, H, {NV, 3 * WV}),
		*res = tn->make(c, H, {NV, WV});
	KTensor *wqkv = tn->make(c, H, {3 * WV, WV}), *bqkv = tn->make(c, H, {3 * WV}),
		*wfc = tn->make(c, H, {4 * WV, WV});
	KTensor *bfc = tn->make(c, H, {4 * WV}), *wpr = tn->make(c, H, {WV, 4 * WV}), *b768 = tn->make(c, H, {WV});
	KTensor *gw = tn->make(c, F, {WV, 4 * WV}), *gb = tn->make(c, F, {WV}), *gb2 = tn->make(c, F, {4 * WV});
	KTensor *dx3072 = tn->make(c, H, {NV, 4 * WV});
	struct Lin {
		const char *name, *plain_name;
		KTensor *in, *w, *b, *out, *pre, *res;
		int IC, OC;
		KAct act;
	};
	static const Lin lins[] = {
		{"linear qkv 768->2304 +bias", "plain GEMM N x 768 -> 2304", x768, wqkv, bqkv, y2304, nullptr, nullptr,
		 WV, 3 * WV, KACT_NONE},
		{"linear fc 768->3072 +bias +GELU", "plain GEMM N x 768 -> 3072", x768, wfc, bfc, x3072, pre, nullptr,
		 WV, 4 * WV, KACT_GELU},
		{"linear proj 3072->768 +bias +res", "plain GEMM N x 3072 -> 768", x3072, wpr, b768, y768, nullptr, res,
		 4 * WV, WV, KACT_NONE},
	};
	for (const Lin &l : lins) {
		const double f = 2.0 * NV * l.IC * l.OC;
		const Lin *p = &l;
		t.push_back({l.plain_name, true, f, NULL, [=] {
				     return plain(g, e, KGEMM_T, KGEMM_N, p->OC, (int)NV, p->IC, p->w->data,
						  p->in->data, p->out->data);
			     }});
		t.push_back({l.name, true, f, l.plain_name,
			     [=] {
				     KLinear a = {p->out, p->pre, p->in, p->w, 1, p->b, p->act, p->res};
				     return kern_linear(c, &a);
			     },
			     c});
	}
	// backward of c_proj with the GELU-backward epilogue into c_fc's pre and bias gradients (the
	// model's MLP backward), and of qkv: din and dW, against the two plain GEMMs
	const double fb = 4.0 * NV * WV * 4 * WV;
	t.push_back({"plain GEMMs din+dW 3072x768", true, fb, NULL, [=] {
			     int rc = plain(g, e, KGEMM_N, KGEMM_N, 4 * WV, (int)NV, WV, wpr->data, y768->data,
					    x3072->data);
			     return rc ? rc
				       : plain(g, e, KGEMM_N, KGEMM_T, 4 * WV, WV, (int)NV, x3072->data, y768->data,
					       wfc->data);
		     }});
	t.push_back({"linear_bwd proj +GELU' +biases", true, fb, "plain GEMMs din+dW 3072x768",
		     [=] {
			     KLinearBwd a = {KG_SET(dx3072), KG_ADD(gw), KG_ADD(gb), KG_ADD(gb2), y768,
					     x3072,          wpr,        1,          pre,         KACT_GELU};
			     return kern_linear_bwd(c, &a);
		     },
		     c});
	// own kernels in GB/s against the copy: the bytes each must move at least
	const char *cp = "copy (device to device)";
	KTensor *mean = tn->make(c, F, {NV}), *rstd = tn->make(c, F, {NV}), *lw_ = tn->make(c, H, {WV});
	KTensor *ldw = tn->make(c, F, {WV}), *ldb = tn->make(c, F, {WV});
	const double nc = (double)NV * WV;
	t.push_back({"layernorm fwd (bf16)", false, 4 * nc + 8.0 * NV, cp,
		     [=] { return kern_layernorm_fwd(c, y768, mean, rstd, x768, lw_, b768); }, c});
	t.push_back({"layernorm bwd (din, dw, db)", false, 6 * nc + 8.0 * NV, cp,
		     [=] {
			     return kern_layernorm_bwd(c, KG_SET(res), KG_ADD(ldw), KG_ADD(ldb), y768, x768, lw_, mean,
						       rstd);
		     },
		     c});
	t.push_back({"residual add (bf16)", false, 6 * nc, cp, [=] { return kern_add(c, res, res, y768); }, c});
	KTensor *clips = tn->make(c, KDT_U8, {BV, TV, IMG, IMG, 3}), *gpos = tn->make(c, KDT_I64, {BV});
	KTensor *patches = tn->make(c, H, {BV, TV * PV, 3 * PATCH * PATCH});
	const double px = (double)BV * TV * IMG * IMG * 3;
	t.push_back({"augment (u8 -> bf16 patches)", false, 3 * px, cp,
		     [=] { return kern_augment(c, patches, clips, gpos, 7, 1, PATCH); }, c});
	KTensor *pemb = tn->make(c, H, {BV, TV * PV, WV}), *cls = tn->make(c, H, {WV}),
		*vpos = tn->make(c, H, {1 + PV, WV});
	KTensor *tpos = tn->make(c, H, {TV, WV}), *dcls = tn->make(c, F, {WV}), *dvpos = tn->make(c, F, {1 + PV, WV});
	KTensor *dtpos = tn->make(c, F, {TV, WV});
	KTensor *x0 = tn->make(c, H, {BV, LVV, WV});
	t.push_back({"vis_embed fwd", false, 4 * nc, cp,
		     [=] { return kern_vis_embed_fwd(c, x0, pemb, cls, vpos, tpos); }, c});
	t.push_back(
		{"vis_embed bwd (dx, dcls, dpos, dtpos)", false, 4 * nc, cp,
		 [=] { return kern_vis_embed_bwd(c, KG_SET(pemb), KG_ADD(dcls), KG_ADD(dvpos), KG_ADD(dtpos), x0); },
		 c});
	KTensor *ids = tn->make(c, KDT_I32, {BV, LT}), *wte = tn->make(c, H, {VOCAB, WT}),
		*tp = tn->make(c, H, {LT, WT});
	KTensor *tx = tn->make(c, H, {BV, LT, WT}), *dwte = tn->make(c, F, {VOCAB, WT}),
		*dtp = tn->make(c, F, {LT, WT});
	const double nt = (double)BV * LT * WT;
	t.push_back({"tok_embed fwd", false, 6 * nt, cp, [=] { return kern_tok_embed_fwd(c, tx, ids, wte, tp); }, c});
	t.push_back({"tok_embed bwd (set: the table zeroed)", false, 2 * nt + 4.0 * VOCAB * WT, cp,
		     [=] { return kern_tok_embed_bwd(c, KG_SET(dwte), KG_ADD(dtp), tx, ids); }, c});
	// the loss ops: compute-bound in double; bytes are the features they read
	KTensor *E1 = tn->make(c, H, {LB * LK, EMB}), *E2 = tn->make(c, H, {LB * LK, EMB}), *ls = tn->make(c, F, {1});
	KTensor *loss = tn->make(c, F, {1}), *dE1 = tn->make(c, H, {LB * LK, EMB}),
		*dE2 = tn->make(c, H, {LB * LK, EMB});
	KTensor *dls = tn->make(c, F, {1}), *table = tn->make(c, F, {LB * LK, 2}), *sid = tn->make(c, KDT_I64, {LB});
	KTensor *pack = tn->make(c, F, {LB, 2}), *pall = tn->make(c, F, {LB * LK, 2});
	KTensor *de1 = tn->make(c, H, {LB, EMB}), *de2 = tn->make(c, H, {LB, EMB});
	static KTensor e1, e2;
	kern_view(&e1, E1, 0, 2, (const int64_t[]){LB, EMB});
	kern_view(&e2, E2, 0, 2, (const int64_t[]){LB, EMB});
	static KContrastBatch cb = {&e1, &e2, E1, E2, 0, nullptr};
	cb.log_s = ls;
	const double fb_ = 2.0 * 2 * LB * LK * EMB;
	t.push_back({"infonce B256 N2048 d256 (double)", false, fb_ + 4.0 * LB * EMB, cp,
		     [=] { return kern_infonce(c, &cb, loss, KG_SET(dE1), KG_SET(dE2), KG_SET(dls)); }, c});
	static KFccoParams fp = {KFCCO_V3, 0.8, 1e-14, 6.5, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	t.push_back({"fcco_local v3 (double)", false, fb_, cp,
		     [=] { return kern_fcco_local(c, &cb, sid, table, &fp, pack); }, c});
	t.push_back({"fcco_surrogate v3 (double)", false, fb_, cp,
		     [=] {
			     return kern_fcco_surrogate(c, &cb, pack, pall, &fp, loss, KG_SET(de1), KG_SET(de2),
							KG_SET(dls));
		     },
		     c});
	// the fused optimizer over vit-b16's parameter count, one segment per 1.5 M
	KTensor *w = tn->make(c, F, {NPARAM}), *gr = tn->make(c, F, {NPARAM}), *m = tn->make(c, F, {NPARAM});
	KTensor *v = tn->make(c, F, {NPARAM}), *cpy = tn->make(c, H, {NPARAM}), *ncl = tn->make(c, F, {2});
	std::vector<KOptSegment> segs, lsegs;
	for (int64_t o0 = 0; o0 < NPARAM; o0 += 1500000) {
		int64_t n = NPARAM - o0 < 1500000 ? NPARAM - o0 : 1500000;
		segs.push_back({o0, n, KSEG_DECAY, 0, 0, 0});
		lsegs.push_back({o0, n, KSEG_DECAY | KSEG_LAMB, 0, 0, 0});
	}
	static KOptPlan *plan, *lplan;
	if (kern_opt_plan_create(c, &plan, segs.data(), (int)segs.size(), NPARAM) ||
	    kern_opt_plan_create(c, &lplan, lsegs.data(), (int)lsegs.size(), NPARAM))
		return 1;
	static KOptHyper h = {1e-4, 0.9, 0.98, 1e-6, 0.1, 3, NULL};
	t.push_back({"grad_norm (f32 grads)", false, 4.0 * NPARAM, cp,
		     [=] { return kern_grad_norm(c, plan, ncl, gr, 1.0); }, c});
	t.push_back({"optimizer AdamW (+bf16 copy)", false, 30.0 * NPARAM, cp,
		     [=] { return kern_optimizer(c, plan, &h, w, cpy, gr, m, v, ncl); }, c});
	t.push_back({"optimizer LAMB (+bf16 copy)", false, 30.0 * NPARAM, cp,
		     [=] { return kern_optimizer(c, lplan, &h, w, cpy, gr, m, v, ncl); }, c});
	return 0;
}

int main()
{
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("no CUDA device: skipped\n");
		return 77;
	}
	cudaDeviceProp prop;
	cuda_check(cudaGetDeviceProperties(&prop, 0));
	printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);

	const size_t copy_bytes = (size_t)1 << 30, nsum = (size_t)1 << 28;
	const int G = 8192, rows = 32768, cols = 4096, gm = 4096; // GEMM sizes, softmax rows x cols
	void *src, *dst;
	cuda_check(cudaMalloc(&src, copy_bytes));
	cuda_check(cudaMalloc(&dst, copy_bytes));
	cuda_check(cudaMemset(src, 0, copy_bytes));
	__nv_bfloat16 *a, *b, *c;
	cuda_check(cudaMalloc((void **)&a, (size_t)G * G * 2));
	cuda_check(cudaMalloc((void **)&b, (size_t)G * G * 2));
	cuda_check(cudaMalloc((void **)&c, (size_t)G * G * 4));
	fill_bf16(a, (size_t)G * G), fill_bf16(b, (size_t)G * G);
	float *partials;
	cuda_check(cudaMalloc((void **)&partials, (kex_blocksum_partials(nsum) + 1) * sizeof(float)));
	KGemm *g;
	KErr e = {0, ""};
	if (kgemm_create(&g, 0, &e)) {
		fprintf(stderr, "kgemm_create: %s\n", e.msg);
		return 1;
	}
	// the plain cuBLASLt bf16 GEMM: C (G x G, bf16) = A^T B as the linear layers call it (TN)
	auto gemm = [&](int n) {
		KgCall k = {};
		k.opA = KGEMM_T, k.opB = KGEMM_N, k.M = n, k.N = n, k.K = n, k.A = a, k.lda = n, k.B = b, k.ldb = n,
		k.C = c;
		k.ldc = n, k.ab = KGEMM_BF16, k.c = KGEMM_BF16, k.alpha = 1.0f;
		return kgemm(g, NULL, &k, &e);
	};

	std::vector<Entry> t;
	t.push_back({"copy (device to device)", false, 2.0 * copy_bytes, NULL, [&] {
			     return cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice) == cudaSuccess ? 0
														   : -1;
		     }});
	t.push_back({"cuBLASLt bf16 GEMM 8192^3", true, 2.0 * G * G * G, NULL, [&] { return gemm(G); }});
	t.push_back({"cuBLASLt bf16 GEMM 4096^3", true, 2.0 * gm * gm * gm, NULL, [&] { return gemm(gm); }});
	// own kernels: name, work per call, baseline, call
	t.push_back({"example blocksum (f32)", false, 4.0 * nsum, "copy (device to device)",
		     [&] { return kex_blocksum(&e, (float *)dst, (const float *)src, nsum, partials, 0); }});
	t.push_back({"example softmax rows (bf16)", false, 2.0 * 2 * rows * cols, "copy (device to device)", [&] {
			     return kex_softmax_rows(&e, (__nv_bfloat16 *)dst, (const __nv_bfloat16 *)src, rows, cols,
						     0);
		     }});
	t.push_back({"example mma GEMM 4096^3", true, 2.0 * gm * gm * gm, "cuBLASLt bf16 GEMM 4096^3",
		     [&] { return kex_mma_gemm(&e, (float *)c, a, b, gm, gm, gm, 0); }});
	AttnBench ab = {};
	add_attention(t, ab, e, "cuBLASLt bf16 GEMM 8192^3");

	KernCtx *kc = nullptr;
	Tensors tn;
	if (add_backend_ops(t, &kc, &tn, &e))
		return 1;

	for (auto &x : t) {
		x.secs = x.ctx ? time_op(x.ctx, x.run) : time_it(x.run);
		if (x.secs < 0) {
			fprintf(stderr, "%s failed: %s\n", x.name, x.ctx ? kern_error_message(x.ctx) : e.msg);
			return 1;
		}
		printf("%-36s %9.3f ms  %8.1f %s\n", x.name, x.secs * 1e3, x.work / x.secs / (x.flops ? 1e12 : 1e9),
		       x.flops ? "TFLOP/s" : "GB/s");
	}
	printf("ratios:");
	for (auto &x : t) {
		if (!x.vs)
			continue;
		for (auto &base : t)
			if (!strcmp(base.name, x.vs))
				printf("  %s %.2f of %s;", x.name, (x.work / x.secs) / (base.work / base.secs),
				       base.name);
	}
	printf("\n");
	attention_target(t);
	// a benched op off cuBLASLt's path (an own GEMM, an unfused epilogue) times the wrong kernel
	char line[256];
	printf("slow paths (kern_ctx_slow_paths): %lld\n", (long long)kern_ctx_slow_paths(kc));
	while (kern_ctx_slow_path_note(kc, line, sizeof line))
		printf("  slow path: %s\n", line);
	kgemm_destroy(g);
	tn.release(kc);
	kern_ctx_destroy(kc);
	for (void *p : {src, dst, (void *)a, (void *)b, (void *)c, (void *)partials})
		cuda_check(cudaFree(p));
	return 0;
}
