// Chunker: decode any FFmpeg-readable video, resample to a constant frame rate (latest
// source frame at each output instant, as ffmpeg's cfr mode), scale to the short side in
// 8-bit 4:2:0, and cut into fixed-length H.264 chunks written as temp file + rename.
#include "prep_chunk.h"    // defines: prep_chunk_video, prep_index_chunk, ...
#include "fs_dir.h"        // defines: fs_fopen_new
#include "loader.h"        // defines: ld_nal_framing, ld_nal_zeroed
#include "prep_defaults.h" // defines: PREP_DEFAULT_B_PYRAMID
#include "prep_encode.h"   // defines: prep_encoder_open, prep_encoder_write, prep_encoder_close

#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int prep_index_chunk(const char *path, PrepChunkInfo *info)
{
	return ld_index_chunk(path, &info->ix);
}

void prep_video_result_free(PrepVideoResult *res)
{
	for (int i = 0; i < res->n_chunks; i++)
		ld_index_free(&res->chunks[i].ix);
	free(res->chunks);
	res->chunks = NULL;
	res->n_chunks = 0;
	prep_damage_free(&res->damage);
}

int prep_clip_frames(const PrepVideoResult *res, double start, double end, uint32_t *c0, uint32_t *f0, uint32_t *c1,
		     uint32_t *f1)
{
	if (!res->n_chunks)
		return -ERANGE;
	double fps = (double)res->fps_num / res->fps_den;
	int64_t fb = llround(start * fps), fe = llround(end * fps), n = (int64_t)res->n_frames;
	if (fe > n && end <= res->duration + 0.5 / fps)
		fe = n;
	if (fe <= fb)
		fe = fb + 1;
	if (start < 0 || fb >= n || fe > n)
		return -ERANGE;
	// every chunk but the last has the same length
	uint64_t per = res->chunks[0].ix.n_frames;
	*c0 = (uint32_t)((uint64_t)fb / per), *f0 = (uint32_t)((uint64_t)fb % per);
	*c1 = (uint32_t)((uint64_t)(fe - 1) / per), *f1 = (uint32_t)((uint64_t)(fe - 1) % per) + 1;
	return 0;
}

typedef struct {
	const PrepChunkOpts *o;
	const char *id;
	PrepVideoResult *res;
	int fps_num, fps_den;
	uint32_t per_chunk; // frames per chunk
	uint64_t i;         // next output frame
	AVFrame *prev;      // latest decoded source frame
	int have_prev, prev_scaled;
	int prev_damaged; // prev decoded with errors, or stands in for frames that failed to decode
	int tainted;      // an error since the last clean keyframe: later frames may reference it
	double prev_t;
	AVFrame *out; // scaled yuv420p
	struct SwsContext *sws;
	int rotate;       // clockwise degrees the display matrix asks for: 0, 90, 180, 270
	AVFrame *upright; // scaled but not yet rotated (rotate != 0)
	int out_w, out_h;
	PrepEncoder *enc;
	int skipping; // current chunk exists already
	int stale;    // the video's chunks were made with other settings: none is kept
	char part[4200], final[4200];
} Run;

static void chunk_paths(const Run *r, uint64_t k, char *rel, size_t rel_cap)
{
	snprintf(rel, rel_cap, "%s/%llu.mp4", r->id, (unsigned long long)(k * (uint64_t)r->o->chunk_sec));
}

static int set_error(PrepVideoResult *res, int rc, const char *what)
{
	char e[AV_ERROR_MAX_STRING_SIZE] = "";
	av_strerror(rc, e, sizeof(e));
	snprintf(res->error, sizeof(res->error), "%s: %s", what, e);
	return rc;
}

// keyframes exactly every gop frames: a chunk made with another --gop is not reused
static int gop_matches(const LdChunkIndex *c, int gop)
{
	if (c->n_keyframes != (c->n_frames + (uint32_t)gop - 1) / (uint32_t)gop)
		return 0;
	for (uint32_t k = 0; k < c->n_keyframes; k++)
		if (c->keyframes[k] != k * (uint32_t)gop)
			return 0;
	return 1;
}

// the encoding settings a finished video's chunks were made with (its .done marker)
static void params_line(const PrepChunkOpts *o, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "chunk_sec=%d short_side=%d gop=%d crf=%d bframes=%d preset=%s", o->chunk_sec,
			 o->short_side, o->gop, o->crf, o->bframes, o->preset ? o->preset : "veryfast");
	// settings an older prep did not have are named only when they differ from what it did, so its
	// finished videos are still reused when its settings are given
	if (o->bframes && n > 0 && (size_t)n < cap) // it made B-frames references
		n += snprintf(buf + n, cap - (size_t)n, " b_pyramid=none");
	if (o->cavlc && n > 0 && (size_t)n < cap) // it used CABAC
		n += snprintf(buf + n, cap - (size_t)n, " entropy=cavlc");
	if (o->bframes && o->b_fixed && n > 0 && (size_t)n < cap) // x264 picked the runs' lengths
		n += snprintf(buf + n, cap - (size_t)n, " b_runs=fixed");
	if (o->no_deblock && n > 0 && (size_t)n < cap) // it deblocked
		snprintf(buf + n, cap - (size_t)n, " deblock=off");
}

static int begin_chunk(Run *r)
{
	uint64_t k = r->i / r->per_chunk;
	char rel[512];
	chunk_paths(r, k, rel, sizeof(rel));
	if (snprintf(r->final, sizeof(r->final), "%s/%s", r->o->root, rel) >= (int)sizeof(r->final) ||
	    snprintf(r->part, sizeof(r->part), "%s.part", r->final) >= (int)sizeof(r->part))
		return set_error(r->res, AVERROR(ENAMETOOLONG), "chunk path");
	// resume: a complete chunk with the full frame count is kept as it is
	PrepChunkInfo info = {0};
	if (!r->stale && access(r->final, F_OK) == 0 && prep_index_chunk(r->final, &info) == 0 &&
	    info.ix.n_frames == r->per_chunk && info.ix.width == r->out_w && info.ix.height == r->out_h &&
	    gop_matches(&info.ix, r->o->gop)) {
		ld_index_free(&info.ix);
		r->skipping = 1;
		return 0;
	}
	ld_index_free(&info.ix);
	r->skipping = 0;
	PrepEncodeOpts eo = {.width = r->out_w,
			     .height = r->out_h,
			     .fps_num = r->fps_num,
			     .fps_den = r->fps_den,
			     .gop = r->o->gop,
			     .crf = r->o->crf,
			     .preset = r->o->preset,
			     .faststart = 1,
			     .bframes = r->o->bframes,
			     .b_pyramid = PREP_DEFAULT_B_PYRAMID,
			     .b_fixed = r->o->b_fixed,
			     .cavlc = r->o->cavlc,
			     .no_deblock = r->o->no_deblock};
	int rc = prep_encoder_open(&r->enc, r->part, &eo);
	return rc < 0 ? set_error(r->res, rc, "cannot open the H.264 encoder") : 0;
}

static int end_chunk(Run *r)
{
	if (r->skipping || !r->enc)
		return 0;
	int rc = prep_encoder_close(r->enc, NULL);
	r->enc = NULL;
	if (rc < 0) {
		unlink(r->part);
		return set_error(r->res, rc, "encoding a chunk");
	}
	if (rename(r->part, r->final) < 0) {
		rc = AVERROR(errno);
		unlink(r->part);
		return set_error(r->res, rc, "renaming a chunk");
	}
	return 0;
}

static void out_size(const AVFrame *f, int short_side, int rotate, int *w, int *h)
{
	double dw = f->width, dh = f->height;
	if (f->sample_aspect_ratio.num > 0 && f->sample_aspect_ratio.den > 0)
		dw *= av_q2d(f->sample_aspect_ratio);
	if (rotate == 90 || rotate == 270) {
		double t = dw;
		dw = dh, dh = t;
	}
	if (dw >= dh) {
		*h = short_side;
		*w = 2 * (int)lround(dw * short_side / dh / 2);
	} else {
		*w = short_side;
		*h = 2 * (int)lround(dh * short_side / dw / 2);
	}
	if (*w < 2)
		*w = 2;
	if (*h < 2)
		*h = 2;
}

// dst = src turned clockwise by deg (90, 180, 270), plane by plane (4:2:0: chroma at half size)
static void rotate_planes(const AVFrame *src, AVFrame *dst, int deg)
{
	for (int pl = 0; pl < 3; pl++) {
		int sw = pl ? src->width / 2 : src->width, sh = pl ? src->height / 2 : src->height;
		int dw = pl ? dst->width / 2 : dst->width, dh = pl ? dst->height / 2 : dst->height;
		const uint8_t *s = src->data[pl];
		uint8_t *d = dst->data[pl];
		int sl = src->linesize[pl], dl = dst->linesize[pl];
		for (int y = 0; y < dh; y++)
			for (int x = 0; x < dw; x++) {
				int sx, sy;
				if (deg == 90)
					sx = y, sy = sh - 1 - x;
				else if (deg == 270)
					sx = sw - 1 - y, sy = x;
				else
					sx = sw - 1 - x, sy = sh - 1 - y;
				d[y * dl + x] = s[sy * sl + sx];
			}
	}
}

// output frame r->i shows r->prev
static int emit(Run *r)
{
	int rc;
	if (r->i % r->per_chunk == 0 && (rc = begin_chunk(r)) < 0)
		return rc;
	if (r->prev_damaged && prep_damage_mark(&r->res->damage, r->i) < 0)
		return set_error(r->res, AVERROR(ENOMEM), "out of memory");
	if (!r->skipping) {
		if (!r->prev_scaled) {
			AVFrame *p = r->prev;
			AVFrame *dst = r->rotate ? r->upright : r->out;
			r->sws = sws_getCachedContext(r->sws, p->width, p->height, p->format, dst->width, dst->height,
						      AV_PIX_FMT_YUV420P, SWS_BICUBIC, NULL, NULL, NULL);
			if (!r->sws)
				return set_error(r->res, AVERROR(EINVAL), "no conversion from this pixel format");
			if ((rc = av_frame_make_writable(r->out)) < 0)
				return set_error(r->res, rc, "frame buffer");
			sws_scale(r->sws, (const uint8_t *const *)p->data, p->linesize, 0, p->height, dst->data,
				  dst->linesize);
			if (r->rotate)
				rotate_planes(r->upright, r->out, r->rotate);
			r->prev_scaled = 1;
		}
		if ((rc = prep_encoder_write(r->enc, r->out)) < 0)
			return set_error(r->res, rc, "encoding");
	}
	r->i++;
	if (r->o->frames_done && !r->skipping) // the progress line counts encoding work only
		__atomic_add_fetch(r->o->frames_done, 1, __ATOMIC_RELAXED);
	if (r->o->video_done)
		__atomic_add_fetch(r->o->video_done, 1, __ATOMIC_RELAXED);
	if (r->i % r->per_chunk == 0)
		return end_chunk(r);
	return 0;
}

static int on_frame(Run *r, AVFrame *f, AVStream *st, int64_t *origin, int damaged)
{
	int64_t pts = f->best_effort_timestamp;
	double t;
	if (pts == AV_NOPTS_VALUE)
		t = r->have_prev ? r->prev_t + 1.0 * r->fps_den / r->fps_num : 0;
	else {
		if (*origin == AV_NOPTS_VALUE)
			*origin = pts;
		t = (double)(pts - *origin) * av_q2d(st->time_base);
	}
	if (!r->have_prev) {
		out_size(f, r->o->short_side, r->rotate, &r->out_w, &r->out_h);
		r->out->format = AV_PIX_FMT_YUV420P, r->out->width = r->out_w, r->out->height = r->out_h;
		int rc = av_frame_get_buffer(r->out, 0);
		if (rc >= 0 && r->rotate) {
			int quarter = r->rotate == 90 || r->rotate == 270;
			r->upright->format = AV_PIX_FMT_YUV420P;
			r->upright->width = quarter ? r->out_h : r->out_w,
			r->upright->height = quarter ? r->out_w : r->out_h;
			rc = av_frame_get_buffer(r->upright, 0);
		}
		if (rc < 0)
			return set_error(r->res, rc, "frame buffer");
		av_frame_move_ref(r->prev, f);
		r->prev_t = t;
		r->have_prev = 1;
		r->prev_scaled = 0;
		r->prev_damaged = damaged;
		return 0;
	}
	if (t <= r->prev_t) // out-of-order or repeated timestamp: the newer frame replaces it
		t = r->prev_t + 1e-9;
	while ((double)r->i * r->fps_den / r->fps_num < t - 1e-6) {
		int rc = emit(r);
		if (rc < 0)
			return rc;
	}
	av_frame_unref(r->prev);
	av_frame_move_ref(r->prev, f);
	r->prev_t = t;
	r->prev_scaled = 0;
	r->prev_damaged = damaged;
	return 0;
}

// Whether a decoded frame is damaged, and the taint that follows a damaged frame until the
// next clean keyframe (frames in between may predict from the damage without being flagged).
static int frame_damage(Run *r, const AVFrame *f)
{
	int flagged = prep_frame_damaged(f);
	r->res->damage.concealed += f->decode_error_flags != 0;
	r->res->damage.corrupt += (f->flags & AV_FRAME_FLAG_CORRUPT) != 0;
	if (flagged)
		r->tainted = 1;
	else if (f->key_frame)
		r->tainted = 0;
	return flagged || r->tainted;
}

// a packet or frame the decoder refused: the frame it held is lost, so the previous one that
// stands in for it (and what follows until a clean keyframe) is damaged
static void decode_failed(Run *r)
{
	r->res->damage.errors++;
	r->tainted = 1;
	r->prev_damaged = r->have_prev;
}

static int write_done(const char *dir, const Run *r, uint32_t n_chunks)
{
	char path[4300], tmp[4400];
	snprintf(path, sizeof(path), "%s/.done", dir);
	snprintf(tmp, sizeof(tmp), "%s.part", path);
	FILE *f = fs_fopen_new(tmp, 0644);
	if (!f)
		return -errno;
	char params[256];
	params_line(r->o, params, sizeof(params));
	char damage[4096];
	prep_damage_line(&r->res->damage, damage, sizeof damage);
	fprintf(f, "chunks %u\nframes %llu\nfps %d/%d\n%s\n%s\n", n_chunks, (unsigned long long)r->i, r->fps_num,
		r->fps_den, params, damage);
	for (uint32_t k = 0; k < n_chunks; k++) { // what --verify --deep and a resume compare the chunks with
		const char *base = strrchr(r->res->chunks[k].path, '/');
		fprintf(f, "crc %s %08x\n", base ? base + 1 : r->res->chunks[k].path, r->res->chunks[k].crc);
	}
	if (fclose(f) != 0 || rename(tmp, path) < 0)
		return -errno;
	return 0;
}

// index every chunk of a finished video; 0 when all match what .done promises
static int index_all(const char *root, const char *id, uint32_t n_chunks, uint64_t n_frames, int chunk_sec,
		     uint32_t per_chunk, PrepVideoResult *res)
{
	res->chunks = calloc(n_chunks ? n_chunks : 1, sizeof(PrepChunkInfo));
	if (!res->chunks)
		return AVERROR(ENOMEM);
	for (uint32_t k = 0; k < n_chunks; k++) {
		PrepChunkInfo *c = &res->chunks[k];
		snprintf(c->path, sizeof(c->path), "%s/%llu.mp4", id, (unsigned long long)k * (uint64_t)chunk_sec);
		char full[4200];
		snprintf(full, sizeof(full), "%s/%s", root, c->path);
		int rc = prep_index_chunk(full, c);
		res->n_chunks = (int)k + 1;
		uint64_t want = k + 1 < n_chunks ? per_chunk : n_frames - (uint64_t)k * per_chunk;
		if (rc < 0)
			return set_error(res, rc, "indexing a chunk");
		if (c->ix.n_frames != want || c->ix.n_keyframes == 0 || c->ix.keyframes[0] != 0) {
			snprintf(res->error, sizeof(res->error), "chunk %.200s has %u frames, expected %llu", c->path,
				 c->ix.n_frames, (unsigned long long)want);
			return AVERROR_INVALIDDATA;
		}
		if ((rc = prep_file_crc(full, &c->crc)) < 0)
			return set_error(res, AVERROR(-rc), "reading a chunk");
		c->start_frame = k * per_chunk;
	}
	return 0;
}

// 1 when every chunk still has the CRC its .done marker recorded; a chunk changed since (or
// without a CRC) is removed, so preparing the video again encodes it anew instead of reusing it
static int chunks_unchanged(const char *root, const PrepVideoResult *res)
{
	int same = 1;
	for (int k = 0; k < res->n_chunks; k++) {
		char full[4200];
		uint32_t want;
		snprintf(full, sizeof(full), "%s/%s", root, res->chunks[k].path);
		if (prep_done_crc(full, &want) != 0 || want != res->chunks[k].crc) {
			unlink(full);
			same = 0;
		}
	}
	return same;
}

// a rejected video leaves no empty folders: dir and its parents up to root, each only if empty
static void remove_empty_dirs(char *dir, const char *root)
{
	size_t keep = strlen(root);
	while (strlen(dir) > keep && rmdir(dir) == 0) {
		char *slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) <= keep)
			break;
		*slash = 0;
	}
}

// ROOT/ID and every folder level above it (ids may name sub-folders: "kitchen/P01_01")
static int make_chunk_dir(const PrepChunkOpts *o, const char *id, char *dir, size_t cap, PrepVideoResult *res)
{
	snprintf(dir, cap, "%s/%s", o->root, id);
	for (char *q = dir + strlen(o->root) + 1; (q = strchr(q, '/')); q++) {
		*q = 0;
		int bad = mkdir(dir, 0755) < 0 && errno != EEXIST;
		*q = '/';
		if (bad)
			return set_error(res, AVERROR(errno), "cannot create the chunk folder");
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return set_error(res, AVERROR(errno), "cannot create the chunk folder");
	return 0;
}

// A video finished before with the same settings and unchanged chunks: re-index only (1).
// Otherwise its marker is removed so the video is prepared again: -1 when the marker names other
// encoding settings (none of its chunks may be kept: --b-runs or --deblock leave the GOP, which a
// kept chunk is checked against, as it was), else 0.
static int reuse_done(const PrepChunkOpts *o, const char *id, const char *dir, PrepVideoResult *res)
{
	char done[4300];
	snprintf(done, sizeof(done), "%s/.done", dir);
	FILE *df = fopen(done, "r");
	if (!df)
		return 0;
	unsigned nc = 0;
	unsigned long long nf = 0;
	int fn = 0, fd = 0;
	char line[256] = "", want[256], damage[4096] = "";
	int ok = fscanf(df, "chunks %u\nframes %llu\nfps %d/%d\n", &nc, &nf, &fn, &fd) == 4 && fn > 0 && fd > 0 &&
		 fgets(line, sizeof(line), df) && fgets(damage, sizeof(damage), df);
	fclose(df);
	line[strcspn(line, "\n")] = 0;
	damage[strcspn(damage, "\n")] = 0;
	params_line(o, want, sizeof(want));
	int stale = ok && strcmp(line, want) != 0;
	ok = ok && !stale;                                       // other settings: prepare the video again
	ok = ok && prep_damage_parse(&res->damage, damage) == 0; // a marker without it: prepare again
	uint32_t per = ok ? (uint32_t)llround((double)o->chunk_sec * fn / fd) : 0;
	if (ok && (!o->fps_num || (int64_t)o->fps_num * fd == (int64_t)fn * o->fps_den) &&
	    index_all(o->root, id, nc, nf, o->chunk_sec, per, res) == 0 && chunks_unchanged(o->root, res)) {
		res->n_frames = nf, res->fps_num = (uint32_t)fn, res->fps_den = (uint32_t)fd;
		res->duration = (double)nf * fd / fn;
		return 1;
	}
	prep_video_result_free(res);
	res->error[0] = 0;
	unlink(done);
	return stale ? -1 : 0;
}

// The source's video stream and its decoder (other streams discarded), the display rotation
// and the output rate (--fps, or the source's rounded). 0 or a negative AVERROR, res->error set.
static int open_source(Run *r, const char *src, AVFormatContext **ic, AVCodecContext **dc, int *vs,
		       AVRational *src_rate)
{
	PrepVideoResult *res = r->res;
	int rc;
	if ((rc = avformat_open_input(ic, src, NULL, NULL)) < 0)
		return set_error(res, rc, "cannot open");
	if ((rc = avformat_find_stream_info(*ic, NULL)) < 0)
		return set_error(res, rc, "cannot read stream info");
	const AVCodec *dec = NULL;
	*vs = av_find_best_stream(*ic, AVMEDIA_TYPE_VIDEO, -1, -1, &dec, 0);
	if (*vs < 0 || !dec)
		return set_error(res, *vs < 0 ? *vs : AVERROR_DECODER_NOT_FOUND, "no decodable video stream");
	for (unsigned s = 0; s < (*ic)->nb_streams; s++)
		if ((int)s != *vs)
			(*ic)->streams[s]->discard = AVDISCARD_ALL;
	AVStream *st = (*ic)->streams[*vs];
	*dc = avcodec_alloc_context3(dec);
	if (!*dc || (rc = avcodec_parameters_to_context(*dc, st->codecpar)) < 0)
		return set_error(res, *dc ? rc : AVERROR(ENOMEM), "decoder setup");
	(*dc)->thread_count = r->o->decode_threads > 1 ? r->o->decode_threads : 1; // mostly parallel across videos (-j)
	(*dc)->flags |= AV_CODEC_FLAG_OUTPUT_CORRUPT; // damaged frames come out flagged, never silently dropped
	// phones store portrait video as landscape frames plus a display rotation: apply it
	const int32_t *dm = (const int32_t *)av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, NULL);
	if (dm) {
		double theta = -av_display_rotation_get(dm);
		if (!isnan(theta)) {
			int q = (int)lround(theta / 90.0) % 4;
			r->rotate = (q < 0 ? q + 4 : q) * 90;
		}
	}
	if ((rc = avcodec_open2(*dc, dec, NULL)) < 0)
		return set_error(res, rc, "cannot open the decoder");
	*src_rate = st->avg_frame_rate.num ? st->avg_frame_rate : st->r_frame_rate;
	if (r->o->fps_num) {
		r->fps_num = r->o->fps_num, r->fps_den = r->o->fps_den;
	} else {
		r->fps_num = src_rate->num && src_rate->den ? (int)lround(av_q2d(*src_rate)) : 0, r->fps_den = 1;
		if (r->fps_num < 1 || r->fps_num > 1000) {
			snprintf(res->error, sizeof(res->error), "unknown frame rate (give --fps)");
			return AVERROR_INVALIDDATA;
		}
	}
	r->per_chunk = (uint32_t)llround((double)r->o->chunk_sec * r->fps_num / r->fps_den);
	if (r->o->video_total && (*ic)->duration > 0) // progress inside a long video, not only per video
		__atomic_store_n(r->o->video_total,
				 (uint64_t)llround((double)(*ic)->duration / AV_TIME_BASE * r->fps_num / r->fps_den),
				 __ATOMIC_RELAXED);
	return 0;
}

// every packet of the stream through the decoder into on_frame; damaged packets and frames are
// counted (decode_failed, frame_damage), never a stop. A packet with zeroed bytes inside a NAL
// unit counts as one the decoder refused and is not sent: libavcodec would decode it into a
// garbled frame without an error or a flag (ld_nal_zeroed). 0 or a negative AVERROR.
static int decode_all(Run *r, AVFormatContext *ic, AVCodecContext *dc, int vs, AVPacket *pkt, AVFrame *f,
		      int *decode_errors)
{
	AVStream *st = ic->streams[vs];
	int framing = ld_nal_framing(st->codecpar->codec_id, st->codecpar->extradata, st->codecpar->extradata_size);
	int64_t origin = AV_NOPTS_VALUE;
	int rc, eof = 0;
	size_t at;
	while (!eof) {
		rc = av_read_frame(ic, pkt);
		if (rc == AVERROR_EOF || (rc < 0 && ic->pb && avio_feof(ic->pb))) {
			eof = 1;
			rc = avcodec_send_packet(dc, NULL);
		} else if (rc < 0) {
			return set_error(r->res, rc, "read error");
		} else {
			if (pkt->stream_index != vs) {
				av_packet_unref(pkt);
				continue;
			}
			rc = ld_nal_zeroed(pkt->data, (size_t)pkt->size, framing, &at) ? AVERROR_INVALIDDATA
										       : avcodec_send_packet(dc, pkt);
			av_packet_unref(pkt);
			if (rc < 0 && rc != AVERROR(EAGAIN)) {
				(*decode_errors)++; // a damaged packet: the decoder resynchronises at the next one
				decode_failed(r);
				continue;
			}
		}
		while ((rc = avcodec_receive_frame(dc, f)) >= 0) {
			rc = on_frame(r, f, st, &origin, frame_damage(r, f));
			av_frame_unref(f);
			if (rc < 0)
				return rc;
		}
		if (rc != AVERROR(EAGAIN) && rc != AVERROR_EOF) {
			(*decode_errors)++;
			decode_failed(r);
		}
	}
	return 0;
}

// after the last packet: frames up to the end of the last one, the last chunk, the index of
// every chunk and the done marker. 0 or a negative AVERROR.
static int finish_video(Run *r, const char *dir, const AVStream *st, AVRational src_rate)
{
	PrepVideoResult *res = r->res;
	int rc;
	// the last frame lasts its own duration (or one source frame interval)
	double dur = r->prev->pkt_duration > 0 ? r->prev->pkt_duration * av_q2d(st->time_base)
		     : src_rate.num            ? 1 / av_q2d(src_rate)
					       : 1.0 * r->fps_den / r->fps_num;
	double t_end = r->prev_t + dur;
	while ((double)r->i * r->fps_den / r->fps_num < t_end - 1e-6)
		if ((rc = emit(r)) < 0)
			return rc;
	if (r->i % r->per_chunk && (rc = end_chunk(r)) < 0)
		return rc;
	uint32_t n_chunks = (uint32_t)((r->i + r->per_chunk - 1) / r->per_chunk);
	if ((rc = index_all(r->o->root, r->id, n_chunks, r->i, r->o->chunk_sec, r->per_chunk, res)) < 0)
		return rc;
	for (uint32_t k = 0; k < n_chunks; k++)
		res->chunks[k].reused = 0;
	res->n_frames = r->i, res->fps_num = (uint32_t)r->fps_num, res->fps_den = (uint32_t)r->fps_den;
	res->duration = (double)r->i * r->fps_den / r->fps_num;
	if ((rc = write_done(dir, r, n_chunks)) < 0)
		return set_error(res, AVERROR(-rc), "writing the done marker");
	return 0;
}

int prep_chunk_video(const char *src, const char *id, const PrepChunkOpts *o, PrepVideoResult *res)
{
	memset(res, 0, sizeof(*res));
	char dir[4200];
	int rc = make_chunk_dir(o, id, dir, sizeof dir, res);
	if (rc < 0)
		return rc;
	int reuse = reuse_done(o, id, dir, res);
	if (reuse > 0)
		return 0;
	Run r = {.o = o, .id = id, .res = res, .stale = reuse < 0};
	AVFormatContext *ic = NULL;
	AVCodecContext *dc = NULL;
	AVPacket *pkt = av_packet_alloc();
	AVFrame *f = av_frame_alloc();
	r.prev = av_frame_alloc();
	r.out = av_frame_alloc();
	r.upright = av_frame_alloc();
	int vs = -1, decode_errors = 0;
	AVRational src_rate;
	if (!pkt || !f || !r.prev || !r.out || !r.upright)
		rc = set_error(res, AVERROR(ENOMEM), "out of memory");
	else if ((rc = open_source(&r, src, &ic, &dc, &vs, &src_rate)) >= 0 &&
		 (rc = decode_all(&r, ic, dc, vs, pkt, f, &decode_errors)) >= 0) {
		if (!r.have_prev) {
			rc = AVERROR_INVALIDDATA;
			snprintf(res->error, sizeof(res->error), "no decodable video frames%s",
				 decode_errors ? " (corrupt data)" : "");
		} else {
			rc = finish_video(&r, dir, ic->streams[vs], src_rate);
		}
	}
	if (r.enc) {
		prep_encoder_abort(r.enc);
		unlink(r.part);
	}
	if (rc < 0) {
		prep_video_result_free(res);
		remove_empty_dirs(dir, o->root);
	}
	sws_freeContext(r.sws);
	av_frame_free(&r.prev);
	av_frame_free(&r.out);
	av_frame_free(&r.upright);
	av_frame_free(&f);
	av_packet_free(&pkt);
	avcodec_free_context(&dc);
	avformat_close_input(&ic);
	return rc < 0 ? rc : 0;
}
