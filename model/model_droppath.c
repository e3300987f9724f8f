// Drop path (stochastic depth) of the video tower's blocks: the per-block rates, the draw of one
// step's per-sample scales on the host (kern_drop_path_scales) and their queued upload.
#include "model_droppath.h" // defines: model_drop_path_block, model_drop_path_free
#include "errbuf.h"         // defines: TRY
#include "kern_cls.h"       // defines: kern_drop_path_scales

#include <errno.h>
#include <stdlib.h>

int clip_model_set_drop_path(ClipModel *m, double rate, int linear)
{
	if (!m || !(rate >= 0 && rate <= 1) || m->dp_scale.data)
		return -EINVAL;
	m->dp_rate = rate;
	m->dp_linear = linear != 0;
	if (rate == 0)
		return 0;
	TRY(kern_alloc(m->ctx, &m->dp_scale, m->pdt, 3, (const int64_t[]){m->cfg.vis_layers, 2, m->B}));
	TRY(kern_host_alloc(m->ctx, &m->dp_host, kern_nbytes(&m->dp_scale)));
	return kern_event_create(m->ctx, &m->dp_up);
}

double clip_model_drop_path_rate(const ClipModel *m, int l)
{
	const int L = m->cfg.vis_layers;
	if (!m->dp_linear)
		return m->dp_rate;
	return L > 1 ? m->dp_rate * l / (L - 1) : 0.0; // torch.linspace(0, rate, L)[l]
}

// the staging buffer may be written once its last upload is done
static int staging_free(ClipModel *m)
{
	int q = kern_event_query(m->dp_up);
	return q < 0 ? q : q == 1 ? 0 : kern_event_sync(m->dp_up);
}

int clip_model_drop_path_draw(ClipModel *m, uint64_t seed, uint64_t step, int64_t row0, int64_t rows)
{
	if (!m)
		return -EINVAL;
	m->dp_armed = 0;
	if (m->dp_rate == 0)
		return 0;
	if (row0 < 0 || row0 + m->B > rows || rows > (1 << 18))
		return -EINVAL;
	TRY(staging_free(m));
	float *all = malloc(sizeof(float) * (size_t)rows);
	if (!all)
		return -ENOMEM;
	const int L = m->cfg.vis_layers, B = m->B;
	int rc = 0;
	for (int k = 0; k < 2 * L && !rc; k++) { // k = 2l + branch: the layer index of the draw
		rc = kern_drop_path_scales(all, (int)rows, clip_model_drop_path_rate(m, k / 2), seed, step, k);
		for (int b = 0; b < B && !rc; b++) {
			if (m->pdt == KDT_F64)
				((double *)m->dp_host)[k * B + b] = all[row0 + b];
			else
				((float *)m->dp_host)[k * B + b] = all[row0 + b];
		}
	}
	free(all);
	TRY(rc);
	TRY(kern_upload_async(m->ctx, &m->dp_scale, m->dp_host, kern_nbytes(&m->dp_scale)));
	TRY(kern_event_record(m->dp_up, m->ctx));
	m->dp_armed = 1;
	return 0;
}

const KTensor *model_drop_path_block(ClipModel *m, int l)
{
	if (!m->dp_armed || clip_model_drop_path_rate(m, l) == 0)
		return NULL;
	if (kern_view(&m->dp_block, &m->dp_scale, (int64_t)l * 2 * m->B, 2, (const int64_t[]){2, m->B}))
		return NULL;
	return &m->dp_block;
}

void model_drop_path_free(ClipModel *m)
{
	if (m->dp_up) {
		kern_event_sync(m->dp_up); // the staging buffer may still be read by its upload
		kern_event_destroy(m->dp_up);
	}
	kern_host_free(m->ctx, m->dp_host);
	kern_free(m->ctx, &m->dp_scale);
}
