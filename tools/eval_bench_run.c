// The benchmark tasks of tools/eval (eval_bench_run.h): the manifest checked clip by clip against
// the benchmark's file, every clip embedded (strict: a damaged clip is an error, since a
// benchmark's figure covers all of its clips), text features of sentences, class prompts or
// queries, and the benchmark's metric.
#include "eval_bench_run.h" // defines: EvalBenchOpts, EvalBenchReport, eval_bench_run
#include "errbuf.h"         // defines: err_fmt, TRY
#include "proc_time.h"      // defines: time_mono_s

#include <errno.h>  // defines: EINVAL, ENOMEM, ENOTSUP
#include <math.h>   // defines: sqrt
#include <stdio.h>  // defines: snprintf
#include <stdlib.h> // defines: calloc, malloc, free
#include <string.h> // defines: memset, strcmp, strerror, strchr, strcspn

#include "bpe.h"        // defines: BpeTokenizer, bpe_load, bpe_tokenize, bpe_set_specials, bpe_free
#include "eval_input.h" // defines: eval_rel_read_shape, eval_prompt
#include "eval.h"       // defines: eval_similarity, eval_map, eval_ndcg, eval_rel_transpose

// the frames each benchmark's reference protocol takes per clip (LaViLa's eval_zeroshot.py)
static int protocol_frames(BenchKind k)
{
	return k == BENCH_EK100_MIR || k == BENCH_EGOMCQ
		       ? 4
		       : 16; // EK-100 CLS: LaViLa's zero-shot command's --clip-length 16
}

#define EGTEA_STRIDE 2 // LaViLa's EGTEA zero-shot command: --clip-length 16 --clip-stride 2

// --views against the task: EGTEA's protocol takes C temporal clips x S crops (S: 1 or 3, as
// LaViLa's SpatialCrop; video_transforms.py), midpoints and the other tasks one view
static int check_views(const EvalBenchOpts *b, char *err, size_t errlen)
{
	const int C = b->views_clips, S = b->views_crops, one = C == 1 && S == 1;
	if (b->kind != BENCH_EGTEA && !one)
		return err_fmt(err, errlen, -EINVAL, "--views is EGTEA's (%s takes one view)",
			       bench_kind_name(b->kind));
	if (b->kind == BENCH_EGTEA && b->midpoints && !one)
		return err_fmt(err, errlen, -EINVAL,
			       "egtea: --frame-protocol midpoints takes one view (--views 1x1, not %dx%d); --views CxS "
			       "belongs to the benchmark's protocol (16 frames at stride 2)",
			       C, S);
	if (S != 1 && S != 3)
		return err_fmt(
			err, errlen, -EINVAL,
			"egtea: --views %dx%d: the spatial crops are 1 (centre) or 3 (both ends and the centre of "
			"the long side), as LaViLa's SpatialCrop",
			C, S);
	return 0;
}

// what the embed path samples against the benchmark's protocol
static int check_protocol(const ClipModel *m, const EvalBenchOpts *b, EvalBenchReport *r, char *err, size_t errlen)
{
	const int f = m->cfg.frames, want = protocol_frames(b->kind);
	const char *name = bench_kind_name(b->kind);
	r->frames = f;
	TRY(check_views(b, err, errlen));
	if (!b->midpoints && f != want)
		return err_fmt(
			err, errlen, -EINVAL,
			"%s: the benchmark's protocol takes %d frames per clip, the model has %d; --frame-protocol "
			"midpoints evaluates with the model's %d (marked in the report)",
			name, want, f, f);
	r->benchmark_frames = !b->midpoints;
	r->views_clips = b->views_clips;
	r->views_crops = b->views_crops;
	if (b->kind == BENCH_EGTEA && !b->midpoints) {
		r->stride = EGTEA_STRIDE;
		snprintf(r->protocol, sizeof r->protocol,
			 "%d frames at stride %d, %dx%d views (clips over the video x crops), class scores the max "
			 "over views (the benchmark's)",
			 f, r->stride, b->views_clips, b->views_crops);
		return 0;
	}
	snprintf(r->protocol, sizeof r->protocol, "%d frames at segment midpoints, centre crop%s", f,
		 r->benchmark_frames ? " (the benchmark's)" : " (--frame-protocol midpoints: not the benchmark's)");
	return 0;
}

// sample i's video, start and end in seconds, and the video's duration
static void sample_span(const Manifest *man, uint64_t i, const char **video, double *s, double *e, double *dur,
			double *frame)
{
	const ManifestSample *x = manifest_sample(man, i);
	const ManifestChunk *c0 = manifest_chunk(man, x->clip.chunk_first),
			    *c1 = manifest_chunk(man, x->clip.chunk_last);
	const ManifestVideo *v = manifest_video(man, x->source);
	*video = manifest_string(man, v->name_off);
	*frame = (double)c0->fps_den / c0->fps_num;
	*s = c0->start_ms / 1000.0 + x->clip.frame_begin * *frame;
	*e = c1->start_ms / 1000.0 + x->clip.frame_end * *frame;
	*dur = (double)v->duration_ms / 1000.0;
}

// the manifest must be prep's import of the benchmark file: sample i = clip i, all of them
static int check_samples(const Manifest *man, const BenchSet *b, char *err, size_t errlen)
{
	const uint64_t n = manifest_header(man)->n_samples;
	if ((int64_t)n != b->n)
		return err_fmt(err, errlen, -EINVAL,
			       "the manifest has %llu samples, %s has %lld clips: it must be tools/prep --format %s of "
			       "that file with every clip kept (see prep's report for the ones it dropped)",
			       (unsigned long long)n, b->path, (long long)b->n, bench_kind_name(b->kind));
	for (uint64_t i = 0; i < n; i++) {
		if (manifest_sample(man, i)->kind != MANIFEST_KIND_CLIP)
			return err_fmt(err, errlen, -EINVAL, "manifest sample %llu is an image, not a clip",
				       (unsigned long long)i);
		const char *video;
		double s, e, dur, frame;
		sample_span(man, i, &video, &s, &e, &dur, &frame);
		TRY(bench_match_sample(b, (int64_t)i, video, s, e, dur, 1.5 * frame + 0.002, err, errlen));
	}
	return 0;
}

// the templates of --templates: "lavila", "none" or "T1|T2|..."; each holds "{}"
static int split_templates(const char *spec, char out[][256], int max, char *err, size_t errlen)
{
	const char *s = !strcmp(spec, "lavila") ? BENCH_TEMPLATES : !strcmp(spec, "none") ? "{}" : spec;
	int n = 0;
	while (*s && n < max) {
		size_t len = strcspn(s, "|");
		if (len >= 256 || !len)
			return err_fmt(err, errlen, -EINVAL, "--templates '%s': an empty or too long template", spec);
		memcpy(out[n], s, len);
		out[n][len] = 0;
		if (!strstr(out[n], "{}"))
			return err_fmt(err, errlen, -EINVAL, "--templates: '%s' has no {} for the class name", out[n]);
		n++;
		s += len + (s[len] == '|');
	}
	return n ? n : err_fmt(err, errlen, -EINVAL, "--templates '%s' names no template", spec);
}

static int load_bpe(const EvalOpts *o, BpeTokenizer **t, char *err, size_t errlen)
{
	if (!o->bpe)
		return err_fmt(err, errlen, -EINVAL, "text prompts need the manifest's BPE merges file (--bpe)");
	int bad = 0, rc = bpe_load(t, o->bpe, &bad);
	if (rc)
		return bad ? err_fmt(err, errlen, rc, "BPE merges %s:%d: a malformed line", o->bpe, bad)
			   : err_fmt(err, errlen, rc, "BPE merges %s: %s", o->bpe, strerror(-rc));
	bpe_set_specials(*t, (BpeSpecials)o->special_tokens);
	return 0;
}

static void normalize(float *x, int E)
{
	double s = 0;
	for (int k = 0; k < E; k++)
		s += (double)x[k] * x[k];
	const double inv = s > 0 ? 1 / sqrt(s) : 0;
	for (int k = 0; k < E; k++)
		x[k] = (float)(x[k] * inv);
}

// feat (n, E): class i is the normalised mean of the normalised features of its texts (off NULL:
// texts[i] alone; else texts[off[i] .. off[i + 1])) put into each template (LaViLa's class
// embeddings; one template "{}" is the text itself)
static int text_features(ClipModel *m, const EvalOpts *o, char *const *all, const int64_t *off, int64_t n,
			 const char *templates, float *feat, int *n_templates, char *err, size_t errlen)
{
	static char tmpl[16][256];
	const int T = split_templates(templates, tmpl, 16, err, errlen), ctx = m->cfg.ctx_len, E = m->cfg.embed_dim;
	if (T < 0)
		return T;
	*n_templates = T;
	char *const *texts = all;
	const int64_t n_classes = n;
	n = off ? off[n] : n; // the texts
	BpeTokenizer *t;
	TRY(load_bpe(o, &t, err, errlen));
	int32_t *ids = calloc((size_t)(n * T) * ctx, sizeof *ids);
	float *f = malloc(sizeof *f * (size_t)(n * T) * E);
	int rc = ids && f ? 0 : err_fmt(err, errlen, -ENOMEM, "out of memory for %lld prompts", (long long)(n * T));
	for (int64_t i = 0; i < n && !rc; i++)
		for (int k = 0; k < T && !rc; k++) {
			char p[2048];
			if (eval_prompt(tmpl[k], texts[i], p, sizeof p))
				rc = err_fmt(err, errlen, -EINVAL, "the prompt of '%.80s' is too long", texts[i]);
			else if ((rc = bpe_tokenize(t, p, ids + (size_t)(i * T + k) * ctx, ctx)) < 0)
				err_fmt(err, errlen, rc, "'%.80s' does not tokenize: %s", p, strerror(-rc));
			else
				rc = 0;
		}
	if (!rc)
		rc = eval_embed_texts(m, ids, n * T, f, err, errlen);
	for (int64_t i = 0; i < n_classes && !rc; i++) {
		float *out = feat + i * E;
		const int64_t a = off ? off[i] : i, b = off ? off[i + 1] : i + 1, cnt = (b - a) * T;
		memset(out, 0, sizeof *out * (size_t)E);
		for (int64_t k = a * T; k < b * T; k++) {
			float *x = f + (size_t)k * E;
			normalize(x, E);
			for (int e = 0; e < E; e++)
				out[e] += x[e] / (float)cnt;
		}
		normalize(out, E);
	}
	if (!rc)
		rc = eval_check_finite(feat, n_classes, E, "text feature", err, errlen);
	free(ids);
	free(f);
	bpe_free(t);
	return rc;
}

// EK-100 MIR: clips x sentences, the sentence's feature its clip's narration (the manifest's caption)
static int run_mir(const BenchSet *s, const EvalRel *rel, const float *vfeat, const float *tfeat, int E,
		   EvalBenchReport *r, char *err, size_t errlen)
{
	const int64_t n = s->n, ns = s->n_sentences;
	EvalRel relt = {0};
	float *ts = malloc(sizeof *ts * (size_t)(ns * E)), *sim = malloc(sizeof *sim * (size_t)(n * ns));
	int rc = ts && sim ? eval_rel_transpose(rel, &relt) : -ENOMEM;
	for (int64_t j = 0; !rc && j < ns; j++)
		memcpy(ts + j * E, tfeat + s->sentence_clip[j] * E, sizeof *ts * (size_t)E);
	if (!rc)
		rc = eval_similarity(vfeat, n, ts, ns, E, sim);
	if (!rc)
		rc = eval_check_finite(sim, n, ns, "similarity of clip (row) to sentence (element)", err, errlen);
	if (!rc) {
		eval_mir_rescale(sim, n * ns); // LaViLa's (S + 1) / 2, in float as it does
		r->n_sentences = ns;
		if ((rc = eval_map(sim, n, ns, 0, rel, &r->map_v2t, &r->map_used_v2t)) ||
		    (rc = eval_map(sim, ns, n, 1, &relt, &r->map_t2v, &r->map_used_t2v)))
			err_fmt(err, errlen, rc, "mAP: no query has a candidate of relevance 1");
		else if ((rc = eval_ndcg(sim, n, ns, 0, rel, &r->ndcg_v2t, &r->ndcg_used_v2t)) ||
			 (rc = eval_ndcg(sim, ns, n, 1, &relt, &r->ndcg_t2v, &r->ndcg_used_t2v)))
			err_fmt(err, errlen, rc, "nDCG: no query has a relevant candidate");
	} else if (rc == -ENOMEM)
		err_fmt(err, errlen, rc, "out of memory for %lld x %lld similarities", (long long)n, (long long)ns);
	free(ts);
	free(sim);
	eval_rel_free(&relt);
	return rc;
}

void eval_views_max(const float *sv, int64_t n, int V, int C, float *out)
{
	for (int64_t i = 0; i < n; i++)
		for (int k = 0; k < C; k++) {
			float best = sv[(size_t)(i * V) * C + k];
			for (int v = 1; v < V; v++)
				if (sv[(size_t)(i * V + v) * C + k] > best)
					best = sv[(size_t)(i * V + v) * C + k];
			out[(size_t)i * C + k] = best;
		}
}

// scores (n, C): the cosine similarity of each clip's V views to each class, combined as LaViLa's
// validate_zeroshot does for several views (eval_zeroshot.py:280-283: torch.stack of the views'
// logits, .max(0).values, then a softmax, which changes no ranking and so no EGTEA figure)
static int view_scores(const float *vfeat, int64_t n, int V, const float *cf, int C, int E, float *scores, char *err,
		       size_t errlen)
{
	if (V == 1)
		return eval_similarity(vfeat, n, cf, C, E, scores);
	float *sv = malloc(sizeof *sv * (size_t)(n * V) * C);
	int rc = sv ? eval_similarity(vfeat, n * V, cf, C, E, sv)
		    : err_fmt(err, errlen, -ENOMEM, "out of memory for %lld x %d view scores", (long long)(n * V), C);
	if (!rc)
		eval_views_max(sv, n, V, C, scores);
	free(sv);
	return rc;
}

// Charades-Ego, EGTEA and EK-100 CLS: every clip against every class prompt (cosine similarity, as LaViLa's
// zero-shot; EGTEA's views: view_scores)
static int run_classes(ClipModel *m, const EvalOpts *o, const EvalBenchOpts *b, const BenchSet *s, const float *vfeat,
		       int V, EvalBenchReport *r, char *err, size_t errlen)
{
	if (!s->classes)
		return err_fmt(err, errlen, -EINVAL, "%s needs its classes file (--bench-aux)",
			       bench_kind_name(b->kind));
	const int E = m->cfg.embed_dim, C = s->classes;
	float *cf = malloc(sizeof *cf * (size_t)C * E), *scores = malloc(sizeof *scores * (size_t)(s->n * C));
	int rc = cf && scores ? 0 : err_fmt(err, errlen, -ENOMEM, "out of memory for %d classes", C);
	if (!rc)
		rc = text_features(m, o, b->kind == BENCH_EK100_CLS ? s->class_text : s->class_name,
				   b->kind == BENCH_EK100_CLS ? s->class_text_off : NULL, C, b->templates, cf,
				   &r->templates, err, errlen);
	if (!rc)
		rc = view_scores(vfeat, s->n, V, cf, C, E, scores, err, errlen);
	if (!rc)
		rc = eval_check_finite(scores, s->n, C, "similarity of clip (row) to class (element)", err, errlen);
	r->classes = C;
	if (!rc && b->kind == BENCH_CHARADES_EGO) {
		if ((rc = eval_multilabel_map(scores, s->n, C, s->multi, &r->map, NULL, &r->classes_used)))
			err_fmt(err, errlen, rc, "mAP: no class has a positive video");
	} else if (!rc && b->kind == BENCH_EK100_CLS) {
		if ((rc = eval_ek100_cls(scores, s->n, C, s->act_verb, s->act_noun, s->label, &r->cls)))
			err_fmt(err, errlen, rc, "EK-100 accuracy: %s", rc == -ENOMEM ? "out of memory" : "bad labels");
	} else if (!rc && (rc = eval_class_accuracy(scores, s->n, C, s->label, &r->acc))) {
		err_fmt(err, errlen, rc, "accuracy: no labelled clip");
	}
	free(cf);
	free(scores);
	return rc;
}

// EgoMCQ: each question's query text against the videos of its choices
static int run_mcq(ClipModel *m, const EvalOpts *o, const BenchSet *s, const float *vfeat, EvalBenchReport *r,
		   char *err, size_t errlen)
{
	const int E = m->cfg.embed_dim, K = s->choices;
	const int64_t nq = s->n_questions;
	float *qf = malloc(sizeof *qf * (size_t)(nq * E)), *scores = malloc(sizeof *scores * (size_t)(nq * K));
	int t, rc = qf && scores ? 0 : err_fmt(err, errlen, -ENOMEM, "out of memory for %lld queries", (long long)nq);
	if (!rc)
		rc = text_features(m, o, s->query, NULL, nq, "none", qf, &t, err, errlen);
	for (int64_t q = 0; !rc && q < nq; q++)
		rc = eval_similarity(qf + q * E, 1, vfeat + q * K * E, K, E, scores + q * K);
	if (!rc)
		rc = eval_check_finite(scores, nq, K, "similarity of query (row) to choice (element)", err, errlen);
	if (!rc && (rc = eval_mcq_accuracy(scores, nq, K, s->answer, s->type, &r->mcq)))
		err_fmt(err, errlen, rc, "EgoMCQ accuracy: bad answers or types");
	r->questions = nq;
	r->choices = K;
	free(qf);
	free(scores);
	return rc;
}

int eval_bench_run(ClipModel *m, const Manifest *man, const EvalOpts *o, const EvalBenchOpts *b, EvalBenchReport *r,
		   char *err, size_t errlen)
{
	const double t0 = time_mono_s();
	memset(r, 0, sizeof *r);
	r->kind = b->kind;
	err[0] = 0;
	TRY(check_protocol(m, b, r, err, errlen));
	TRY(eval_check_manifest(m, man, err, errlen));
	if (b->kind == BENCH_EK100_MIR && (!b->aux || !b->relevance))
		return err_fmt(err, errlen, -EINVAL,
			       "ek100-mir needs --bench-aux EPIC_100_retrieval_test_sentence.csv and --relevance (the "
			       "relevancy pickle converted by tools/ek100_relevancy.py)");
	if (b->kind == BENCH_EK100_CLS && !b->aux)
		return err_fmt(
			err, errlen, -EINVAL,
			"ek100-cls needs --bench-aux EPIC_100_train.csv: LaViLa's label space is the (verb, noun) "
			"pairs of the train and validation files");
	BenchSet s;
	TRY(bench_read(&s, b->kind, b->file, b->aux, err, errlen));
	EvalRel rel = {0}; // side inputs before minutes of embedding
	int rc = check_samples(man, &s, err, errlen);
	if (!rc && b->kind == BENCH_EK100_MIR)
		rc = eval_rel_read_shape(b->relevance, s.n, s.n_sentences, &rel, err, errlen);
	const int E = m->cfg.embed_dim, V = r->stride ? b->views_clips * b->views_crops : 1;
	float *vfeat = malloc(sizeof(float) * (size_t)(s.n * V * E)),
	      *tfeat = malloc(sizeof(float) * (size_t)(s.n * E));
	if (!rc && (!vfeat || !tfeat))
		rc = err_fmt(err, errlen, -ENOMEM, "out of memory for the features of %lld clips", (long long)s.n);
	if (!rc) {
		EvalEmbedOpts eo = o->embed;
		eo.damaged = NULL; // every clip counts: a damaged one is an error
		eo.stride = r->stride;
		eo.views_clips = b->views_clips;
		eo.views_crops = b->views_crops;
		const double te = time_mono_s();
		rc = eval_embed_manifest(m, man, vfeat, tfeat, &eo, err, errlen);
		r->embed_s = time_mono_s() - te;
	}
	r->n = s.n;
	if (!rc && b->kind == BENCH_EK100_MIR)
		rc = run_mir(&s, &rel, vfeat, tfeat, E, r, err, errlen);
	else if (!rc && b->kind == BENCH_EGOMCQ)
		rc = run_mcq(m, o, &s, vfeat, r, err, errlen);
	else if (!rc)
		rc = run_classes(m, o, b, &s, vfeat, V, r, err, errlen);
	free(vfeat);
	free(tfeat);
	eval_rel_free(&rel);
	bench_free(&s);
	r->total_s = time_mono_s() - t0;
	return rc;
}
