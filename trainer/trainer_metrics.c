// JSON-lines writer of the per-step metrics: fixed key order, %.9g numbers (non-finite values
// are written as null, which JSON has no other spelling for).
#include "trainer_metrics.h" // defines: TrainerMetrics, ...

#include <errno.h>  // defines: errno, ENOENT, EIO
#include <math.h>   // defines: isfinite
#include <stdio.h>  // defines: fopen, fgets, sscanf, rename
#include <unistd.h> // defines: unlink

FILE *trainer_metrics_open(const char *path, int64_t keep_through)
{
	if (keep_through < 0)
		return fopen(path, "w");
	FILE *in = fopen(path, "r");
	if (!in)
		return errno == ENOENT ? fopen(path, "a") : NULL;
	char tmp[4200], line[8192];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *out = fopen(tmp, "w");
	if (!out) {
		fclose(in);
		return NULL;
	}
	while (fgets(line, sizeof line, in)) {
		long long step;
		if (sscanf(line, "{\"step\":%lld", &step) == 1 && step <= keep_through)
			fputs(line, out);
	}
	int bad = ferror(in);
	fclose(in);
	if (fclose(out) || bad || rename(tmp, path)) {
		int e = bad ? EIO : errno;
		unlink(tmp);
		errno = e;
		return NULL;
	}
	return fopen(path, "a");
}

static void num(FILE *f, const char *key, double v)
{
	if (isfinite(v))
		fprintf(f, ",\"%s\":%.9g", key, v);
	else
		fprintf(f, ",\"%s\":null", key);
}

int trainer_metrics_write(FILE *f, const TrainerMetrics *m)
{
	fprintf(f, "{\"step\":%lld,\"epoch\":%d", (long long)m->step, m->epoch);
	num(f, "loss", m->loss);
	for (int k = 0; k < m->cls_heads && k < 2; k++) {
		char key[2][16];
		snprintf(key[0], sizeof key[0], "loss_head%d", k);
		snprintf(key[1], sizeof key[1], "top1_head%d", k);
		num(f, key[0], m->cls_loss[k]);
		num(f, key[1], m->cls_top1[k]);
	}
	if (m->mae) // the same figure under its own name, for tools/plot's panel
		num(f, "recon_loss", m->loss);
	if (!m->cls_heads && !m->mae) { // the contrastive objective's figures (mae: loss is the reconstruction MSE)
		num(f, "nce", m->nce);
		num(f, "acc", m->acc);
		num(f, "tau", m->tau);
	}
	num(f, "lr", m->lr);
	num(f, "grad_norm", m->grad_norm);
	num(f, "step_s", m->step_s);
	num(f, "samples_per_s", m->samples_per_s);
	num(f, "data_wait_s", m->data_wait_s);
	num(f, "error_slots", m->error_slots);
	num(f, "comm_bytes", m->comm_bytes);
	num(f, "allgather_bytes", m->allgather_bytes);
	num(f, "reduce_scatter_bytes", m->reduce_scatter_bytes);
	num(f, "allreduce_bytes", m->allreduce_bytes);
	num(f, "t_augment", m->t_augment);
	num(f, "t_forward", m->t_forward);
	num(f, "t_exchange", m->t_exchange);
	num(f, "t_backward", m->t_backward);
	num(f, "t_allreduce", m->t_allreduce);
	num(f, "t_update", m->t_update);
	num(f, "data_wait_pct", m->data_wait_pct);
	num(f, "mfu", m->mfu);
	num(f, "mem_bytes", m->mem_bytes);
	num(f, "mem_peak_bytes", m->mem_peak_bytes);
	fprintf(f, ",\"host_waits\":%lld,\"slow_paths\":%lld,\"launches\":%lld}\n", (long long)m->host_waits,
		(long long)m->slow_paths, (long long)m->launches);
	return ferror(f) ? -(errno ? errno : EIO) : 0;
}

int trainer_metrics_flush(FILE *f)
{
	if (fflush(f) || ferror(f))
		return -(errno ? errno : EIO);
	return 0;
}
