// Clip sampling (segment midpoints over [start, end), jittered in training, as LaViLa/AVION)
// and the random-resized-crop of torchvision/AVION, drawn from Philox keyed by (seed, g).
#include "loader.h" // defines: ld_plan_make, ld_crop_make, ld_params_default, LD_ERR_*

#include "ld_gop.h"  // defines: LdGop, ld_gops
#include "ld_view.h" // defines: LD_VIEW_BLANK, ld_view_check, ld_view_frames, ld_view_slide
#include "stream.h"  // defines: RngStream, rng_stream_init, rng_next_float, rng_next_below, stream_position

#include <math.h>
#include <stdio.h>
#include <string.h>

// ranges closer than this are read as one (a page: fewer reads, little extra)
#define LD_RANGE_MERGE_GAP 4096

void ld_params_default(LdParams *p)
{
	memset(p, 0, sizeof(*p));
	p->frames = 4;
	p->out_w = p->out_h = 224;
	p->train = 1;
	p->scale_min = 0.5f;
	p->scale_max = 1.0f;
	p->ratio_min = 3.0f / 4.0f;
	p->ratio_max = 4.0f / 3.0f;
	p->threads = 1;
	p->clip_decoders = 1;
	p->timeout_ms = 10000;
	p->loop_filter = LD_LOOP_FILTER_REF;
}

static int even_down(int v)
{
	return v & ~1;
}

void ld_crop_make(const LdParams *p, uint64_t g, int w, int h, LdCrop *c)
{
	RngStream s;
	rng_stream_init(&s, p->seed, g, RNG_STREAM_CROP);
	memset(c, 0, sizeof(*c));
	int done = 0;
	if (p->train) {
		double area = (double)w * h;
		double lr0 = log(p->ratio_min), lr1 = log(p->ratio_max);
		for (int t = 0; t < 10 && !done; t++) {
			double ta = area * (p->scale_min + (p->scale_max - p->scale_min) * rng_next_float(&s));
			double ar = exp(lr0 + (lr1 - lr0) * rng_next_float(&s));
			int cw = (int)lround(sqrt(ta * ar)), ch = (int)lround(sqrt(ta / ar));
			if (cw > 0 && cw <= w && ch > 0 && ch <= h) {
				c->w = cw;
				c->h = ch;
				c->x = (int)rng_next_below(&s, (uint32_t)(w - cw + 1));
				c->y = (int)rng_next_below(&s, (uint32_t)(h - ch + 1));
				done = 1;
			}
		}
		if (!done) { // centre crop at the nearest allowed ratio
			double in_ratio = (double)w / h;
			c->w = w;
			c->h = h;
			if (in_ratio < p->ratio_min)
				c->h = (int)lround(w / p->ratio_min);
			else if (in_ratio > p->ratio_max)
				c->w = (int)lround(h * p->ratio_max);
		}
		c->flip = p->flip && rng_next_float(&s) < 0.5f;
	} else { // the largest centred box of the output's aspect (resize short side, centre crop)
		double want = (double)p->out_w / p->out_h;
		c->w = w;
		c->h = h;
		if ((double)w / h > want)
			c->w = (int)lround(h * want);
		else
			c->h = (int)lround(w / want);
	}
	if (!done) {
		c->x = (w - c->w) / 2;
		c->y = (h - c->h) / 2;
	}
	// 4:2:0 chroma: offsets and size even (a 1-pixel source is left as is)
	c->x = even_down(c->x);
	c->y = even_down(c->y);
	if (c->w > 1)
		c->w = even_down(c->w);
	if (c->h > 1)
		c->h = even_down(c->h);
	if (!p->train && p->crop_pos != LD_CROP_CENTRE)
		ld_view_slide(p->crop_pos, w, h, c);
}

// T frame indices in [0, n): midpoints of T equal segments, jittered uniformly within each
// segment in training
static void sample_frames(const LdParams *p, uint64_t g, uint64_t n, uint64_t *out)
{
	RngStream s;
	rng_stream_init(&s, p->seed, g, RNG_STREAM_CLIP_SAMPLE);
	double seg = (double)n / p->frames;
	for (int t = 0; t < p->frames; t++) {
		uint64_t a = (uint64_t)floor(seg * t), b = (uint64_t)floor(seg * (t + 1));
		if (b <= a)
			b = a + 1;
		uint64_t f = p->train ? a + rng_next_below(&s, (uint32_t)(b - a)) : (a + b - 1) / 2;
		out[t] = f < n ? f : n - 1;
	}
}

// source k's byte ranges: the whole file, or from an indexed chunk's packet index one range per
// GOP holding needed frames (key packet .. last packet to decode), adjacent ones merged
static int plan_ranges(const Manifest *m, const LdParams *p, LdPlan *plan, int k, char *err, size_t errlen)
{
	LdSource *src = &plan->src[k];
	src->first_range = plan->n_ranges;
	uint32_t n_pk, nk;
	const ManifestPacket *pk = manifest_packets(m, src->chunk, &n_pk);
	const ManifestChunk *c = manifest_chunk(m, src->chunk);
	src->indexed = pk && !p->demux && !p->no_seek && p->mode != LD_MODE_NAIVE;
	if (!src->indexed) {
		plan->ranges[plan->n_ranges++] = (LdRange){0, 0};
		src->n_ranges = 1;
		return 0;
	}
	src->file_size = c->file_size;
	uint32_t frames[LD_MAX_FRAMES];
	int n = 0;
	for (int t = 0; t < plan->frames; t++)
		if (plan->frame_src[t] == k)
			frames[n++] = plan->frame_no[t];
	LdGop gops[LD_MAX_FRAMES];
	const uint32_t *kf = manifest_keyframes(m, src->chunk, &nk);
	int ng = ld_gops(pk, c->n_frames, kf, nk, frames, n, gops);
	if (ng < 0) {
		snprintf(err, errlen, "chunk %u: a needed frame is missing from its packet index", src->chunk);
		return -LD_ERR_MANIFEST;
	}
	for (int i = 0; i < ng; i++) {
		uint64_t a = pk[gops[i].first].offset, b = (uint64_t)pk[gops[i].last].offset + pk[gops[i].last].size;
		LdRange *last = src->n_ranges ? &plan->ranges[plan->n_ranges - 1] : NULL;
		if (last && a <= last->offset + last->length + LD_RANGE_MERGE_GAP) {
			last->length = b - last->offset;
			continue;
		}
		if (plan->n_ranges == LD_MAX_RANGES) {
			snprintf(err, errlen, "more than %d byte ranges in one sample", LD_MAX_RANGES);
			return -LD_ERR_MANIFEST;
		}
		plan->ranges[plan->n_ranges++] = (LdRange){a, b - a};
		src->n_ranges++;
	}
	return 0;
}

int ld_plan_make(const Manifest *m, uint64_t g, const LdParams *p, LdPlan *plan, char *err, size_t errlen)
{
	memset(plan, 0, sizeof(*plan));
	const ManifestHeader *hd = manifest_header(m);
	if (p->frames < 1 || p->frames > LD_MAX_FRAMES) {
		snprintf(err, errlen, "frames per clip %d outside 1..%d", p->frames, LD_MAX_FRAMES);
		return -LD_ERR_MANIFEST;
	}
	int rc = ld_view_check(p, err, errlen);
	if (rc)
		return rc;
	StreamPos sp;
	if (stream_position(p->seed, g, hd->n_samples, p->train, &sp) != 0) {
		snprintf(err, errlen, "the manifest has no samples");
		return -LD_ERR_MANIFEST;
	}
	const ManifestSample *s = manifest_sample(m, sp.sample);
	plan->position = g;
	plan->sample = sp.sample;
	plan->epoch = sp.epoch;
	plan->kind = s->kind;
	plan->frames = p->frames;
	if (s->kind == MANIFEST_KIND_IMAGE) {
		const ManifestShard *sh = manifest_shard(m, s->source);
		plan->n_sources = 1;
		plan->src[0].offset = s->image.offset;
		plan->src[0].length = s->image.length;
		plan->src[0].n_ranges = 1;
		plan->ranges[0] = (LdRange){s->image.offset, s->image.length};
		plan->n_ranges = 1;
		if (!sh || manifest_resolve(m, manifest_string(m, sh->path_off), plan->src[0].path, LD_PATH_MAX) != 0) {
			snprintf(err, errlen, "sample %llu: shard %u has no usable path", (unsigned long long)sp.sample,
				 s->source);
			return -LD_ERR_MANIFEST;
		}
		return 0; // crop after decoding, when the size is known
	}
	uint64_t n = manifest_clip_frames(m, s);
	if (s->kind != MANIFEST_KIND_CLIP || n == 0 || s->clip.chunk_last - s->clip.chunk_first >= LD_MAX_SOURCES) {
		snprintf(err, errlen, "sample %llu: not a clip of 1..%d chunks with frames",
			 (unsigned long long)sp.sample, LD_MAX_SOURCES);
		return -LD_ERR_MANIFEST;
	}
	uint64_t idx[LD_MAX_FRAMES];
	if (p->stride)
		ld_view_frames(p, n, idx);
	else
		sample_frames(p, g, n, idx);
	const ManifestChunk *c0 = manifest_chunk(m, s->clip.chunk_first);
	plan->src_w = c0->width;
	plan->src_h = c0->height;
	for (int t = 0; t < p->frames; t++) {
		uint32_t chunk, frame;
		if (idx[t] == LD_VIEW_BLANK) {
			plan->frame_src[t] = LD_FRAME_BLANK;
			continue;
		}
		if (manifest_clip_locate(m, s, idx[t], &chunk, &frame) != 0) {
			snprintf(err, errlen, "sample %llu: frame %llu cannot be located",
				 (unsigned long long)sp.sample, (unsigned long long)idx[t]);
			return -LD_ERR_MANIFEST;
		}
		int k = 0;
		while (k < plan->n_sources && plan->src[k].chunk != chunk)
			k++;
		if (k == plan->n_sources) {
			const ManifestChunk *c = manifest_chunk(m, chunk);
			if (c->width != c0->width || c->height != c0->height) {
				snprintf(err, errlen, "sample %llu: its chunks differ in size (%ux%u vs %ux%u)",
					 (unsigned long long)sp.sample, c->width, c->height, c0->width, c0->height);
				return -LD_ERR_GEOMETRY;
			}
			plan->src[k].chunk = chunk;
			if (manifest_resolve(m, manifest_string(m, c->path_off), plan->src[k].path, LD_PATH_MAX) != 0) {
				snprintf(err, errlen, "chunk %u has no usable path", chunk);
				return -LD_ERR_MANIFEST;
			}
			plan->n_sources++;
		}
		plan->frame_src[t] = (uint8_t)k;
		plan->frame_no[t] = frame;
	}
	ld_crop_make(p, g, plan->src_w, plan->src_h, &plan->crop);
	for (int k = 0; k < plan->n_sources && !rc; k++)
		rc = plan_ranges(m, p, plan, k, err, errlen);
	return rc;
}
