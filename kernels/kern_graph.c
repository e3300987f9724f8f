// Graphs on the op contract: a capture of the device work that ops queue on one stream, launched
// again as one unit (kern_ops.h, "Graphs"). The backend records and replays (CUDA graphs); here
// the capture's state, the latch a spoiled capture leaves, and the staleness check.
#include "kern_check.h" // defines: KBackend, struct KernCtx, kern_latched

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct KGraph {
	KernDev *dev;
	const KernCtx *ctx; // the handle that captured it: its stream and workspace
	void *exec;         // the backend's
	int64_t nodes;
	uint64_t ws_epoch; // ctx's workspace at the capture
};

static void say(char *why, size_t len, const char *fmt, const char *arg)
{
	if (why && len)
		snprintf(why, len, fmt, arg);
}

int kern_graph_supported(const KernCtx *ctx)
{
	return ctx && ctx->dev->be->graph_begin != NULL;
}

int kern_graph_begin(KernCtx *ctx, char *why, size_t len)
{
	if (!ctx)
		return -EINVAL;
	if (!kern_graph_supported(ctx)) {
		say(why, len, "the %s backend runs every op when it is called: nothing to capture", ctx->dev->be->name);
		return -ENOTSUP;
	}
	if (ctx->capturing) {
		say(why, len, "%s", "this stream captures already");
		return -EBUSY;
	}
	if (kern_latched(ctx)) {
		say(why, len, "%s", kern_error_message(ctx));
		return kern_latched(ctx);
	}
	int rc = ctx->dev->be->graph_begin(ctx, why, len);
	if (rc == 0) {
		ctx->capturing = 1;
		ctx->err_at_begin = kern_latched(ctx);
	}
	return rc;
}

int kern_graph_end(KernCtx *ctx, KGraph **out, char *why, size_t len)
{
	if (!ctx || !out)
		return -EINVAL;
	*out = NULL;
	if (!ctx->capturing) {
		say(why, len, "%s", "no capture is open on this stream");
		return -EINVAL;
	}
	ctx->capturing = 0;
	KernDev *d = ctx->dev;
	void *exec = NULL;
	int64_t nodes = 0;
	char bwhy[256] = "";
	int rc = d->be->graph_end(ctx, &exec, &nodes, bwhy, sizeof bwhy);
	const int lat = kern_latched(ctx);
	if (rc == 0 && !lat) {
		KGraph *g = calloc(1, sizeof *g);
		if (!g) {
			d->be->graph_destroy(d, exec);
			return -ENOMEM;
		}
		*g = (KGraph){.dev = d, .ctx = ctx, .exec = exec, .nodes = nodes, .ws_epoch = ctx->ws_epoch};
		*out = g;
		return 0;
	}
	// an op inside the capture failed (a refused wait or allocation): its message names it, and
	// the latch it set belongs to the capture, not to the device's work
	if (exec)
		d->be->graph_destroy(d, exec);
	say(why, len, "%s", lat ? kern_error_message(ctx) : bwhy[0] ? bwhy : strerror(-rc));
	if (lat && !ctx->err_at_begin)
		kern_error_clear(ctx);
	return lat ? lat : rc;
}

int kern_graph_launch(KernCtx *ctx, const KGraph *g)
{
	if (!ctx || !g || g->ctx != ctx || ctx->capturing)
		return -EINVAL;
	if (g->ws_epoch != ctx->ws_epoch)
		return -ESTALE;
	if (kern_latched(ctx))
		return kern_latched(ctx);
	return ctx->dev->be->graph_launch(ctx, g->exec);
}

int64_t kern_graph_nodes(const KGraph *g)
{
	return g ? g->nodes : 0;
}

void kern_graph_destroy(KGraph *g)
{
	if (!g)
		return;
	g->dev->be->graph_destroy(g->dev, g->exec);
	free(g);
}
