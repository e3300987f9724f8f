// The report of --task probe|classify (eval_cls.h): a table per head next to chance with its
// confusion summary, or one JSON line with the figures as fractions (tools/plot reads JSON lines).
#include "eval_cls.h" // defines: EvalClsReport, eval_cls_report_table, eval_cls_report_json

#include <math.h>  // defines: isfinite
#include <stdio.h> // defines: FILE, fprintf, fputs, fputc, snprintf

// class c of head k: its name in the manifest, else its id
static const char *cls_name(const Manifest *man, int k, int c, char *buf, size_t cap)
{
	const char *s = man ? manifest_label_class_name(man, (uint32_t)k, (uint32_t)c) : NULL;
	if (s && s[0])
		return s;
	snprintf(buf, cap, "%d", c);
	return buf;
}

static void views_line(FILE *f, const EvalClsReport *r)
{
	if (r->stride > 0)
		fprintf(f, "%dx%d views (%d clips of %d frames %d apart x %d crop%s), logits averaged", r->views_clips,
			r->views_crops, r->views_clips, r->frames, r->stride, r->views_crops,
			r->views_crops == 1 ? "" : "s");
	else
		fprintf(f, "1x1 view (%d frames at segment midpoints, centre crop)", r->frames);
}

static void summary(FILE *f, const EvalHeadAcc *a, const Manifest *man, int k)
{
	char x[16], y[16];
	if (a->n_confused) {
		fprintf(f, "    most confused (true -> predicted: clips):");
		for (int i = 0; i < a->n_confused; i++)
			fprintf(f, "%s %s -> %s: %lld", i ? "," : "", cls_name(man, k, a->confused[i].truth, x, sizeof x),
				cls_name(man, k, a->confused[i].pred, y, sizeof y), (long long)a->confused[i].count);
		fputc('\n', f);
	} else {
		fprintf(f, "    no mistakes\n");
	}
	const EvalRecall *lists[2] = {a->worst, a->best};
	static const char *const title[2] = {"lowest recall", "highest recall"};
	for (int l = 0; l < 2; l++) {
		fprintf(f, "    %s:", title[l]);
		for (int i = 0; i < a->n_worst; i++)
			fprintf(f, "%s %s %lld/%lld", i ? "," : "", cls_name(man, k, lists[l][i].cls, x, sizeof x),
				(long long)lists[l][i].right, (long long)lists[l][i].n);
		fputc('\n', f);
	}
	fprintf(f, "    %d of the %d labelled classes never predicted right\n", a->zero_recall, a->present);
}

void eval_cls_report_table(FILE *f, const EvalClsReport *r, const Manifest *man)
{
	if (r->probe)
		fprintf(f,
			"linear probe: heads fitted on %lld train clips' frozen features (the video tower's %d-wide "
			"pre-projection feature), L2 %g, evaluated on %lld held-out clips; ",
			(long long)r->n_train, r->width, r->l2, (long long)r->n);
	else
		fprintf(f, "classification heads over the video tower's %d-wide pre-projection feature, %lld clips; ",
			r->width, (long long)r->n);
	views_line(f, r);
	fprintf(f, "\n  %-12s %7s %6s %7s %7s %10s   %-14s %s\n", "head", "classes", "clips", "top-1", "top-5",
		"mean-class", "chance 1 / 5", "most frequent class");
	for (int k = 0; k < r->heads; k++) {
		const EvalHeadAcc *a = &r->head[k].acc;
		char x[16];
		fprintf(f, "  %-12s %7d %6lld %6.2f%% %6.2f%% %9.2f%%   %5.2f / %5.2f%%  %.2f%% (%s)\n", r->head[k].name,
			a->classes, (long long)a->n, 100 * a->top1, 100 * a->top5, 100 * a->mean_class,
			100 * a->chance_top1, 100 * a->chance_top5, 100 * a->majority_top1,
			cls_name(man, k, a->majority, x, sizeof x));
		if (r->probe) {
			const EvalProbeFit *p = &r->head[k].fit;
			fprintf(f, "    probe: %d of %d classes have train clips (the others are never predicted); %d L-BFGS iterations",
				p->classes, a->classes, p->iters);
			if (p->converged)
				fprintf(f, " (converged)");
			else
				fprintf(f, " (NOT converged: stopped at a gradient of %.1e; raise --probe-iters)", p->grad_max);
			fprintf(f, "; train top-1 %.2f%% over %lld clips\n", 100 * p->train_top1, (long long)p->n);
		}
		summary(f, a, man, k);
	}
	fprintf(f, "  mean-class: recall averaged over the classes with a clip (AVION's, over labelled or predicted "
		   "classes:");
	for (int k = 0; k < r->heads; k++)
		fprintf(f, " %s %.2f%%", r->head[k].name, 100 * r->head[k].acc.mean_class_union);
	fprintf(f, ")\n  embedding %.1f s, all %.1f s\n", r->embed_s, r->total_s);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void num(FILE *f, int k, const char *key, double v)
{
	if (isfinite(v))
		fprintf(f, ",\"head%d_%s\":%.6f", k, key, v);
	else
		fprintf(f, ",\"head%d_%s\":null", k, key);
}

void eval_cls_report_json(FILE *f, const EvalClsReport *r, int64_t step, const char *source)
{
	fprintf(f, "{\"task\":\"%s\",\"n\":%lld", r->probe ? "probe" : "classify", (long long)r->n);
	if (r->probe)
		fprintf(f, ",\"n_train\":%lld,\"probe_l2\":%g", (long long)r->n_train, r->l2);
	fprintf(f, ",\"frames\":%d,\"views\":\"%dx%d\",\"stride\":%d,\"width\":%d,\"heads\":%d", r->frames,
		r->stride > 0 ? r->views_clips : 1, r->stride > 0 ? r->views_crops : 1, r->stride, r->width, r->heads);
	for (int k = 0; k < r->heads; k++) {
		const EvalHeadAcc *a = &r->head[k].acc;
		fprintf(f, ",\"head%d\":", k);
		json_str(f, r->head[k].name);
		fprintf(f, ",\"head%d_classes\":%d,\"head%d_n\":%lld", k, a->classes, k, (long long)a->n);
		num(f, k, "top1", a->top1);
		num(f, k, "top5", a->top5);
		num(f, k, "mean_class", a->mean_class);
		num(f, k, "mean_class_union", a->mean_class_union);
		num(f, k, "chance_top1", a->chance_top1);
		num(f, k, "chance_top5", a->chance_top5);
		num(f, k, "majority_top1", a->majority_top1);
		fprintf(f, ",\"head%d_majority\":%d,\"head%d_zero_recall\":%d,\"head%d_confused\":[", k, a->majority, k,
			a->zero_recall, k);
		for (int i = 0; i < a->n_confused; i++)
			fprintf(f, "%s[%d,%d,%lld]", i ? "," : "", a->confused[i].truth, a->confused[i].pred,
				(long long)a->confused[i].count);
		const EvalRecall *lists[2] = {a->worst, a->best};
		static const char *const key[2] = {"worst", "best"};
		for (int l = 0; l < 2; l++) {
			fprintf(f, "],\"head%d_%s\":[", k, key[l]);
			for (int i = 0; i < a->n_worst; i++)
				fprintf(f, "%s[%d,%lld,%lld]", i ? "," : "", lists[l][i].cls, (long long)lists[l][i].right,
					(long long)lists[l][i].n);
		}
		fputc(']', f);
		if (r->probe) {
			fprintf(f, ",\"head%d_probe_classes\":%d,\"head%d_probe_iters\":%d,\"head%d_probe_converged\":%s", k,
				r->head[k].fit.classes, k, r->head[k].fit.iters, k, r->head[k].fit.converged ? "true" : "false");
			num(f, k, "train_top1", r->head[k].fit.train_top1);
		}
	}
	fprintf(f, ",\"embed_s\":%.3f,\"total_s\":%.3f", r->embed_s, r->total_s);
	if (step >= 0)
		fprintf(f, ",\"step\":%lld", (long long)step);
	if (source) {
		fputs(",\"source\":", f);
		json_str(f, source);
	}
	fputs("}\n", f);
}
