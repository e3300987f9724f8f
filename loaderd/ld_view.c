// LaViLa's multi-view test clips (lavila/data/datasets.py, get_raw_item's egtea branch, eval) and
// three crops (lavila/data/video_transforms.py, uniform_crop), in source frames and pixels.
#include "ld_view.h" // defines: ld_view_check, ld_view_frames, ld_view_slide

#include "loader.h" // defines: LD_ERR_MANIFEST

#include <stdio.h> // defines: snprintf

int ld_view_check(const LdParams *p, char *err, size_t errlen)
{
	const int clips = p->view_clips > 1 ? p->view_clips : 1;
	const char *why = NULL;
	if (p->train && (p->stride || p->view_clips > 1 || p->view_clip || p->crop_pos))
		why = "eval views (stride, temporal clip, crop position) are eval mode's";
	else if (p->stride < 0 || p->stride > LD_MAX_STRIDE)
		why = "the frame stride is outside 0..1024";
	else if (!p->stride && (p->view_clips > 1 || p->view_clip))
		why = "temporal clips need a frame stride";
	else if (p->view_clips < 0 || p->view_clip < 0 || p->view_clip >= clips)
		why = "the temporal clip is not one of the view's clips";
	else if (p->crop_pos < LD_CROP_CENTRE || p->crop_pos > LD_CROP_END)
		why = "the crop position is not centre, start or end";
	if (!why)
		return 0;
	snprintf(err, errlen, "%s (stride %d, clip %d of %d, crop %d)", why, p->stride, p->view_clip, p->view_clips,
		 (int)p->crop_pos);
	return -LD_ERR_MANIFEST;
}

// The clip starts are np.linspace(0, n - T * stride, clips, dtype=int) (datasets.py, egtea, eval:
// `for start_id in np.linspace(0, end_frame - clip_length * clip_stride, num_clips, dtype=int)`):
// numpy takes c * (delta / (clips - 1)) in double, the last point exactly delta, one point 0, and
// the cast truncates. Frames start + t * stride. A sample shorter than T * stride: LaViLa loads
// frames 0..n-1, pads zeros to T * stride and keeps every stride-th, the same for every clip.
void ld_view_frames(const LdParams *p, uint64_t n, uint64_t *idx)
{
	const uint64_t span = (uint64_t)p->frames * (uint64_t)p->stride;
	const int clips = p->view_clips > 1 ? p->view_clips : 1, c = p->view_clip;
	uint64_t start = 0;
	if (n >= span && clips > 1) {
		const uint64_t last = n - span;
		start = c == clips - 1 ? last : (uint64_t)(c * ((double)last / (clips - 1)));
	}
	for (int t = 0; t < p->frames; t++) {
		const uint64_t f = start + (uint64_t)t * (uint64_t)p->stride;
		idx[t] = f < n ? f : LD_VIEW_BLANK;
	}
}

// uniform_crop: spatial_idx 0/1/2 is left/centre/right when width >= height, top/centre/bottom
// when height > width. Its offsets are in the resized frame (short side = crop size); here the box
// is in source pixels and offsets stay even for 4:2:0 chroma, so the end box ends within a pixel
// of the edge and the centre one is the plain eval centre crop.
void ld_view_slide(LdCropPos pos, int w, int h, LdCrop *c)
{
	int *off = h > w ? &c->y : &c->x;
	const int slack = h > w ? h - c->h : w - c->w;
	if (pos == LD_CROP_START)
		*off = 0;
	else if (pos == LD_CROP_END)
		*off = slack & ~1;
}
