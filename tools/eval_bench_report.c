// The report of a benchmark task (eval_bench_run.h): a short table, or one JSON line with the
// task's figures as fractions (tools/plot reads JSON lines).
#include "eval_bench_run.h" // defines: EvalBenchReport, eval_bench_report_table, eval_bench_report_json

#include <math.h>  // defines: isfinite
#include <stdio.h> // defines: FILE, fprintf, fputs, fputc

void eval_bench_report_table(FILE *f, const EvalBenchReport *r)
{
	fprintf(f, "%s: %lld clips, %s\n", bench_kind_name(r->kind), (long long)r->n, r->protocol);
	switch (r->kind) {
	case BENCH_EK100_MIR:
		fprintf(f, "  %lld sentences; similarity rescaled (S+1)/2\n", (long long)r->n_sentences);
		fprintf(f, "  mAP   V->T %.2f  T->V %.2f  avg %.2f\n", 100 * r->map_v2t, 100 * r->map_t2v,
			50 * (r->map_v2t + r->map_t2v));
		fprintf(f, "  nDCG  V->T %.2f  T->V %.2f  avg %.2f\n", 100 * r->ndcg_v2t, 100 * r->ndcg_t2v,
			50 * (r->ndcg_v2t + r->ndcg_t2v));
		break;
	case BENCH_CHARADES_EGO:
		fprintf(f, "  %d classes (%d with a positive video), %d prompt templates\n", r->classes,
			r->classes_used, r->templates);
		fprintf(f, "  mAP %.2f\n", 100 * r->map);
		break;
	case BENCH_EGTEA:
		fprintf(f, "  %d classes (%d labelled), %d prompt templates\n", r->classes, r->acc.present,
			r->templates);
		fprintf(f,
			"  mean class accuracy %.2f (LaViLa's, over labelled or predicted classes: %.2f)  top-1 %.2f\n",
			100 * r->acc.mean_class, 100 * r->acc.mean_class_union, 100 * r->acc.top1);
		break;
	case BENCH_EK100_CLS:
		fprintf(f,
			"  %d actions (the verb, noun pairs of train and validation: %d verbs, %d nouns), %d prompt templates\n",
			r->classes, r->cls.verbs, r->cls.nouns, r->templates);
		fprintf(f, "  action top-1 %.2f  top-5 %.2f  mean class %.2f\n", 100 * r->cls.action.top1,
			100 * r->cls.action_top5, 100 * r->cls.action.mean_class_union);
		fprintf(f, "  verb   top-1 %.2f  top-5 %.2f  mean class %.2f  (marginalised from the actions)\n",
			100 * r->cls.verb.top1, 100 * r->cls.verb_top5, 100 * r->cls.verb.mean_class_union);
		fprintf(f, "  noun   top-1 %.2f  top-5 %.2f  mean class %.2f\n", 100 * r->cls.noun.top1,
			100 * r->cls.noun_top5, 100 * r->cls.noun.mean_class_union);
		break;
	case BENCH_EGOMCQ:
		fprintf(f, "  %lld questions of %d choices\n", (long long)r->questions, r->choices);
		fprintf(f, "  inter-video %.2f (%lld)  intra-video %.2f (%lld)\n", 100 * r->mcq.inter,
			(long long)r->mcq.n_inter, 100 * r->mcq.intra, (long long)r->mcq.n_intra);
		break;
	}
	fprintf(f, "  embedding %.1f s, all %.1f s\n", r->embed_s, r->total_s);
}

// a figure, or null where there is none (no question of a type)
static void num(FILE *f, const char *key, double v)
{
	if (isfinite(v))
		fprintf(f, ",\"%s\":%.6f", key, v);
	else
		fprintf(f, ",\"%s\":null", key);
}

void eval_bench_report_json(FILE *f, const EvalBenchReport *r, int64_t step, const char *source)
{
	fputs("{\"task\":", f);
	eval_json_str(f, bench_kind_name(r->kind));
	fprintf(f, ",\"n\":%lld,\"frames\":%d,\"benchmark_protocol\":%s,\"protocol\":", (long long)r->n, r->frames,
		r->benchmark_frames ? "true" : "false");
	eval_json_str(f, r->protocol);
	fprintf(f, ",\"views\":\"%dx%d\",\"stride\":%d", r->views_clips, r->views_crops, r->stride);
	switch (r->kind) {
	case BENCH_EK100_MIR:
		fprintf(f, ",\"sentences\":%lld", (long long)r->n_sentences);
		num(f, "map_v2t", r->map_v2t);
		num(f, "map_t2v", r->map_t2v);
		num(f, "map_avg", (r->map_v2t + r->map_t2v) / 2);
		num(f, "ndcg_v2t", r->ndcg_v2t);
		num(f, "ndcg_t2v", r->ndcg_t2v);
		num(f, "ndcg_avg", (r->ndcg_v2t + r->ndcg_t2v) / 2);
		break;
	case BENCH_CHARADES_EGO:
		fprintf(f, ",\"classes\":%d,\"classes_used\":%d,\"templates\":%d", r->classes, r->classes_used,
			r->templates);
		num(f, "map", r->map);
		break;
	case BENCH_EGTEA:
		fprintf(f, ",\"classes\":%d,\"classes_present\":%d,\"templates\":%d", r->classes, r->acc.present,
			r->templates);
		num(f, "mean_class_acc", r->acc.mean_class);
		num(f, "mean_class_acc_lavila", r->acc.mean_class_union);
		num(f, "top1", r->acc.top1);
		break;
	case BENCH_EK100_CLS:
		fprintf(f, ",\"classes\":%d,\"verbs\":%d,\"nouns\":%d,\"templates\":%d", r->classes, r->cls.verbs,
			r->cls.nouns, r->templates);
		num(f, "action_top1", r->cls.action.top1);
		num(f, "action_top5", r->cls.action_top5);
		num(f, "action_mean_class_acc", r->cls.action.mean_class_union);
		num(f, "verb_top1", r->cls.verb.top1);
		num(f, "verb_top5", r->cls.verb_top5);
		num(f, "verb_mean_class_acc", r->cls.verb.mean_class_union);
		num(f, "noun_top1", r->cls.noun.top1);
		num(f, "noun_top5", r->cls.noun_top5);
		num(f, "noun_mean_class_acc", r->cls.noun.mean_class_union);
		break;
	case BENCH_EGOMCQ:
		fprintf(f, ",\"questions\":%lld,\"choices\":%d,\"n_inter\":%lld,\"n_intra\":%lld",
			(long long)r->questions, r->choices, (long long)r->mcq.n_inter, (long long)r->mcq.n_intra);
		num(f, "inter_video_acc", r->mcq.inter);
		num(f, "intra_video_acc", r->mcq.intra);
		break;
	}
	eval_json_end(f, r->embed_s, r->total_s, step, source);
}
