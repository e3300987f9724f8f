// JSON-lines writer of the per-step metrics: fixed key order, %.9g numbers (non-finite values
// are written as null, which JSON has no other spelling for).
#include "trainer_metrics.h" // defines: TrainerMetrics, ...

#include <errno.h> // defines: errno
#include <math.h>  // defines: isfinite

FILE *trainer_metrics_open(const char *path, int append)
{
	return fopen(path, append ? "a" : "w");
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
	num(f, "nce", m->nce);
	num(f, "acc", m->acc);
	num(f, "tau", m->tau);
	num(f, "lr", m->lr);
	num(f, "grad_norm", m->grad_norm);
	num(f, "step_s", m->step_s);
	num(f, "samples_per_s", m->samples_per_s);
	num(f, "data_wait_s", m->data_wait_s);
	num(f, "error_slots", m->error_slots);
	num(f, "comm_bytes", m->comm_bytes);
	num(f, "t_forward", m->t_forward);
	num(f, "t_exchange", m->t_exchange);
	num(f, "t_backward", m->t_backward);
	num(f, "t_allreduce", m->t_allreduce);
	num(f, "t_update", m->t_update);
	fputs("}\n", f);
	if (fflush(f) || ferror(f))
		return -(errno ? errno : EIO);
	return 0;
}
