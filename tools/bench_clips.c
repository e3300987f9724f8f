// The clip list of tools/bench/peers.sh: each position's plan (frames per source chunk, the one
// crop of the clip) as a text line, from the same ld_plan_make the loader times.
#include "bench_clips.h" // defines: bench_clips_write

#include "manifest.h" // defines: MANIFEST_KIND_CLIP

#include <string.h>

int bench_clips_write(FILE *f, const Manifest *m, const LdParams *p, uint64_t g0, int n, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		uint64_t g = g0 + (uint64_t)i;
		LdPlan plan;
		char why[256];
		if (ld_plan_make(m, g, p, &plan, why, sizeof(why)) != 0) {
			snprintf(err, errlen, "position %llu: %s", (unsigned long long)g, why);
			return -1;
		}
		if (plan.kind != MANIFEST_KIND_CLIP) {
			snprintf(err, errlen,
				 "position %llu is sample %llu, an image: the clip list is for video readers",
				 (unsigned long long)g, (unsigned long long)plan.sample);
			return -1;
		}
		const LdCrop *c = &plan.crop;
		fprintf(f, "clip\t%d\t%d\t%d\t%llu\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d", plan.frames, p->out_h, p->out_w,
			(unsigned long long)g, plan.src_w, plan.src_h, c->x, c->y, c->w, c->h, c->flip, plan.n_sources);
		for (int k = 0; k < plan.n_sources; k++) {
			if (strpbrk(plan.src[k].path, "\t\n\r")) {
				snprintf(err, errlen, "position %llu: chunk path '%s' has a tab or line break",
					 (unsigned long long)g, plan.src[k].path);
				return -1;
			}
			fprintf(f, "\t%s\t", plan.src[k].path);
			const char *sep = "";
			for (int t = 0; t < plan.frames; t++)
				if (plan.frame_src[t] == k) {
					fprintf(f, "%s%u", sep, plan.frame_no[t]);
					sep = ",";
				}
		}
		fputc('\n', f);
	}
	return ferror(f) ? (snprintf(err, errlen, "cannot write the clip list"), -1) : 0;
}
