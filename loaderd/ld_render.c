// Crop, scale and convert of one decoded frame into the clip: fused (plane pointers moved to the
// crop's corner in YUV, swscale scales + converts only the crop; 4:2:0 in two steps) or naive (the whole frame to
// RGB, then crop + resize: the reference a decode-everything pipeline computes).
#include "ld_decoder_priv.h" // defines: LdDecoder, ld_render

#include "loader.h" // defines: LD_ERR_*

#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <stdio.h>
#include <stdlib.h>

#define LD_SWS_FLAGS SWS_BILINEAR

static void flip_rows(uint8_t *dst, int w, int h)
{
	for (int y = 0; y < h; y++) {
		uint8_t *row = dst + (size_t)y * w * 3;
		for (int a = 0, b = w - 1; a < b; a++, b--)
			for (int c = 0; c < 3; c++) {
				uint8_t t = row[3 * a + c];
				row[3 * a + c] = row[3 * b + c];
				row[3 * b + c] = t;
			}
	}
}

// crop clamped into the frame and aligned to the format's chroma subsampling
static int crop_fit(const AVFrame *f, const LdCrop *c, int *x, int *y, int *w, int *h, char *err, size_t errlen)
{
	const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(f->format);
	if (!desc || (desc->flags & (AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_HWACCEL))) {
		snprintf(err, errlen, "pixel format %s cannot be cropped", desc ? desc->name : "?");
		return -LD_ERR_CODEC;
	}
	int ax = 1 << desc->log2_chroma_w, ay = 1 << desc->log2_chroma_h;
	*x = c->x & ~(ax - 1);
	*y = c->y & ~(ay - 1);
	*w = c->w;
	*h = c->h;
	if (*x + *w > f->width)
		*w = f->width - *x;
	if (*y + *h > f->height)
		*h = f->height - *y;
	if (*w < 1 || *h < 1 || c->x < 0 || c->y < 0) {
		snprintf(err, errlen, "crop %dx%d+%d+%d outside the %dx%d frame", c->w, c->h, c->x, c->y, f->width,
			 f->height);
		return -LD_ERR_GEOMETRY;
	}
	return 0;
}

// scales and converts the w x h picture at src (format fmt) into dst (out_w x out_h RGB24), flipped if asked
static int scale_into(LdDecoder *d, const uint8_t *const src[4], const int stride[4], int w, int h, int fmt,
		      const LdDecodeOpts *o, uint8_t *dst, char *err, size_t errlen)
{
	d->sws_crop = sws_getCachedContext(d->sws_crop, w, h, fmt, o->out_w, o->out_h, AV_PIX_FMT_RGB24, LD_SWS_FLAGS,
					   NULL, NULL, NULL);
	if (!d->sws_crop) {
		snprintf(err, errlen, "no scaler from %s %dx%d", av_get_pix_fmt_name(fmt), w, h);
		return -LD_ERR_CODEC;
	}
	uint8_t *dp[4] = {dst, NULL, NULL, NULL};
	int ds[4] = {o->out_w * 3, 0, 0, 0};
	sws_scale(d->sws_crop, src, stride, 0, h, dp, ds);
	if (o->crop.flip)
		flip_rows(dst, o->out_w, o->out_h);
	return 0;
}

// 4:2:0 frames (every video chunk) in two swscale steps: the crop scaled in YUV into an out-sized
// yuv420p picture (swscale's SIMD planar scalers), then converted to RGB24 at that size (its SIMD
// converter). Scaling straight into packed RGB24 runs swscale's C output code, 3.5x the
// instructions (make bench-loader's conversion row); the price is chroma at half the output's
// resolution vertically too (interpolated horizontally, as before, from the source's chroma).
static int scale_two_step(LdDecoder *d, const uint8_t *const src[4], const int stride[4], int w, int h,
			  const LdDecodeOpts *o, uint8_t *dst, char *err, size_t errlen)
{
	if (d->yuv_w != o->out_w || d->yuv_h != o->out_h) {
		av_freep(&d->yuv[0]);
		d->yuv_w = d->yuv_h = 0;
		if (av_image_alloc(d->yuv, d->yuv_stride, o->out_w, o->out_h, AV_PIX_FMT_YUV420P, 64) < 0) {
			snprintf(err, errlen, "out of memory for a %dx%d picture", o->out_w, o->out_h);
			return -LD_ERR_NOMEM;
		}
		d->yuv_w = o->out_w, d->yuv_h = o->out_h;
	}
	d->sws_yuv = sws_getCachedContext(d->sws_yuv, w, h, AV_PIX_FMT_YUV420P, o->out_w, o->out_h, AV_PIX_FMT_YUV420P,
					  LD_SWS_FLAGS, NULL, NULL, NULL);
	d->sws_rgb = sws_getCachedContext(d->sws_rgb, o->out_w, o->out_h, AV_PIX_FMT_YUV420P, o->out_w, o->out_h,
					  AV_PIX_FMT_RGB24, LD_SWS_FLAGS, NULL, NULL, NULL);
	if (!d->sws_yuv || !d->sws_rgb) {
		snprintf(err, errlen, "no scaler from yuv420p %dx%d", w, h);
		return -LD_ERR_CODEC;
	}
	uint8_t *dp[4] = {dst, NULL, NULL, NULL};
	int ds[4] = {o->out_w * 3, 0, 0, 0};
	sws_scale(d->sws_yuv, src, stride, 0, h, d->yuv, d->yuv_stride);
	sws_scale(d->sws_rgb, (const uint8_t *const *)d->yuv, d->yuv_stride, 0, o->out_h, dp, ds);
	if (o->crop.flip)
		flip_rows(dst, o->out_w, o->out_h);
	return 0;
}

static int render_fused(LdDecoder *d, const AVFrame *f, const LdDecodeOpts *o, uint8_t *dst, char *err, size_t errlen)
{
	int x, y, w, h, rc;
	if ((rc = crop_fit(f, &o->crop, &x, &y, &w, &h, err, errlen)) != 0)
		return rc;
	const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(f->format);
	const uint8_t *src[4] = {0};
	int stride[4] = {0};
	for (int p = 0; p < 4 && f->data[p]; p++) {
		stride[p] = f->linesize[p];
		if (p == 1 && (desc->flags & AV_PIX_FMT_FLAG_PAL)) {
			src[p] = f->data[p];
			continue;
		}
		int step = 1, chroma = 0;
		for (int c = 0; c < desc->nb_components; c++)
			if (desc->comp[c].plane == p) {
				step = desc->comp[c].step;
				chroma = (c == 1 || c == 2) && !(desc->flags & AV_PIX_FMT_FLAG_RGB) &&
					 desc->nb_components >= 3;
			}
		int px = chroma ? x >> desc->log2_chroma_w : x, py = chroma ? y >> desc->log2_chroma_h : y;
		src[p] = f->data[p] + (ptrdiff_t)py * f->linesize[p] + (ptrdiff_t)px * step;
	}
	if (f->format == AV_PIX_FMT_YUV420P && !(o->out_w & 1) && !(o->out_h & 1))
		return scale_two_step(d, src, stride, w, h, o, dst, err, errlen);
	return scale_into(d, src, stride, w, h, f->format, o, dst, err, errlen);
}

// naive step 1: the whole frame to RGB (what a decode-everything pipeline does per frame)
static int naive_convert(LdDecoder *d, const AVFrame *f, char *err, size_t errlen)
{
	size_t need = (size_t)f->width * f->height * 3;
	if (need > d->rgb_cap) {
		uint8_t *p = realloc(d->rgb, need);
		if (!p) {
			snprintf(err, errlen, "out of memory for a %dx%d RGB frame", f->width, f->height);
			return -LD_ERR_NOMEM;
		}
		d->rgb = p;
		d->rgb_cap = need;
	}
	d->sws_full = sws_getCachedContext(d->sws_full, f->width, f->height, f->format, f->width, f->height,
					   AV_PIX_FMT_RGB24, LD_SWS_FLAGS, NULL, NULL, NULL);
	if (!d->sws_full) {
		snprintf(err, errlen, "no RGB converter for this pixel format");
		return -LD_ERR_CODEC;
	}
	uint8_t *dp[4] = {d->rgb, NULL, NULL, NULL};
	int ds[4] = {f->width * 3, 0, 0, 0};
	sws_scale(d->sws_full, (const uint8_t *const *)f->data, f->linesize, 0, f->height, dp, ds);
	return 0;
}

// naive step 2: crop the RGB frame and resize it into dst
static int naive_crop(LdDecoder *d, const AVFrame *f, const LdDecodeOpts *o, uint8_t *dst, char *err, size_t errlen)
{
	int x, y, w, h, rc;
	if ((rc = crop_fit(f, &o->crop, &x, &y, &w, &h, err, errlen)) != 0)
		return rc;
	const uint8_t *src[4] = {d->rgb + ((size_t)y * f->width + x) * 3, NULL, NULL, NULL};
	int ss[4] = {f->width * 3, 0, 0, 0};
	return scale_into(d, src, ss, w, h, AV_PIX_FMT_RGB24, o, dst, err, errlen);
}

int ld_render_every(LdDecoder *d, const AVFrame *f, const LdDecodeOpts *o, char *err, size_t errlen)
{
	if (o->mode != LD_MODE_NAIVE)
		return 0;
	uint64_t t0 = ld_cost_clock(d);
	int rc = naive_convert(d, f, err, errlen);
	d->cost.convert_ns += ld_cost_clock(d) - t0;
	return rc;
}

int ld_render(LdDecoder *d, const AVFrame *f, const LdDecodeOpts *o, uint8_t *dst, char *err, size_t errlen)
{
	uint64_t t0 = ld_cost_clock(d);
	int rc = 0;
	if (o->mode == LD_MODE_FUSED)
		rc = render_fused(d, f, o, dst, err, errlen);
	else if (o->mode == LD_MODE_NAIVE)
		rc = naive_crop(d, f, o, dst, err, errlen);
	d->cost.convert_ns += ld_cost_clock(d) - t0;
	return rc;
}
