// The best checkpoint by held-out score (--keep-best): a checkpoint directory of its own under
// RUN_DIR/ckpt, written by ckpt_io like the others, plus best.json saying what it scored.
// Order of a replacement: the new checkpoint and LATEST (atomic), then best.json (atomic), then
// the old file; a crash at any point leaves LATEST naming a complete checkpoint.
#include "trainer_best.h" // defines: TrainerBest, trainer_best_open, trainer_best_offer, ...

#include <errno.h>    // defines: errno, EEXIST
#include <stdio.h>    // defines: snprintf, fopen, fprintf, rename
#include <string.h>   // defines: strcmp, strstr, strerror
#include <sys/stat.h> // defines: mkdir
#include <unistd.h>   // defines: unlink, fsync

#include "shell_quote.h"  // defines: shell_quoted
#include "trainer_ckpt.h" // defines: trainer_ckpt_save

static int read_json(TrainerBest *b, char *metric, size_t mlen)
{
	char path[1300], text[512];
	snprintf(path, sizeof path, "%s/best.json", b->dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	const char *m = strstr(text, "\"metric\":\""), *s = strstr(text, "\"score\":"), *st = strstr(text, "\"step\":");
	long long step;
	double score;
	char name[16];
	if (!m || !s || !st || sscanf(m + 10, "%15[a-z0-9_]", name) != 1 || sscanf(s + 8, "%lf", &score) != 1 ||
	    sscanf(st + 7, "%lld", &step) != 1)
		return -EBADMSG;
	snprintf(metric, mlen, "%s", name);
	b->score = score;
	b->step = step;
	return 0;
}

int trainer_best_open(TrainerBest *b, const char *ckdir, const char *metric, int resumed, char *err, size_t errlen)
{
	memset(b, 0, sizeof *b);
	b->score = -1, b->step = -1, b->old = -1;
	snprintf(b->metric, sizeof b->metric, "%s", metric);
	if ((size_t)snprintf(b->dir, sizeof b->dir, "%s/best", ckdir) >= sizeof b->dir) {
		snprintf(err, errlen, "--keep-best: the path %s/best is too long", ckdir);
		return -ENAMETOOLONG;
	}
	if (mkdir(b->dir, 0755) && errno != EEXIST) {
		int e = errno;
		snprintf(err, errlen, "--keep-best: cannot create %s: %s", b->dir, strerror(e));
		return -e;
	}
	char had[16] = "";
	if (read_json(b, had, sizeof had) < 0)
		return 0; // nothing kept yet
	b->old = b->step;
	if (!resumed || strcmp(had, metric))
		b->score = -1, b->step = -1; // the next evaluation replaces it
	return 0;
}

double trainer_best_value(const TrainerBest *b, const EvalReport *r)
{
	const EvalRetrieval *x = b->metric[0] == 't' ? &r->t2v : &r->v2t;
	const char *k = b->metric + 4; // after "t2v_" / "v2t_"
	return !strcmp(k, "r1") ? x->r1 : !strcmp(k, "r5") ? x->r5 : x->r10;
}

static int write_json(const TrainerBest *b, char *err, size_t errlen)
{
	char path[1300], tmp[1310];
	snprintf(path, sizeof path, "%s/best.json", b->dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	int rc = f ? 0 : -errno;
	if (f) {
		fprintf(f, "{\"metric\":\"%s\",\"score\":%.6g,\"step\":%lld,\"file\":\"ckpt-%08lld.safetensors\"}\n",
			b->metric, b->score, (long long)b->step, (long long)b->step);
		if (fflush(f) || fsync(fileno(f)))
			rc = -errno;
		if (fclose(f) && !rc)
			rc = -errno;
	}
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		snprintf(err, errlen, "--keep-best: cannot write %s: %s", path, strerror(-rc));
		unlink(tmp);
	}
	return rc;
}

int trainer_best_offer(TrainerBest *b, const EvalReport *r, TrainStep *ts, int64_t step, const uint64_t *positions,
		       int ranks, uint64_t data_seed, char *err, size_t errlen)
{
	double v = trainer_best_value(b, r);
	if (b->step >= 0 && !(v > b->score))
		return 0;
	// keep_last 0: best/ holds one file, removed below by name (a stale one may have a later step)
	int rc = trainer_ckpt_save(b->dir, ts, step, positions, ranks, data_seed, 0, err, errlen);
	if (rc < 0)
		return rc;
	b->score = v, b->step = step;
	if ((rc = write_json(b, err, errlen)) < 0)
		return rc;
	if (b->old >= 0 && b->old != step) {
		char p[1300];
		snprintf(p, sizeof p, "%s/ckpt-%08lld.safetensors", b->dir, (long long)b->old);
		unlink(p);
	}
	b->old = step;
	return 1;
}

int trainer_best_describe(const TrainerBest *b, char *buf, size_t len)
{
	if (b->step < 0)
		return snprintf(buf, len, "--keep-best %s: no evaluation yet, %s holds nothing of this run", b->metric,
				b->dir);
	return snprintf(buf, len, "best %s %.1f%% at step %lld: %s (tools/eval --ckpt %s)", b->metric, 100 * b->score,
			(long long)b->step, b->dir, shell_quoted(b->dir));
}
