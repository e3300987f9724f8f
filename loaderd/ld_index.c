// Chunk indexer: one pass of libavformat over the file collects each packet's byte range,
// presentation time and key flag; the NAL headers inside each packet say whether it is an IDR
// picture and whether any slice is a reference (nal_ref_idc != 0). The packet index is kept
// only when the loader can feed those packets to a decoder with no demuxer and get exactly the
// frames the manifest numbers (see ManifestPacket).
#include "loader.h" // defines: ld_index_chunk, ld_index_free

#include <errno.h>
#include <libavformat/avformat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
	int64_t pos, pts;
	uint32_t size;
	int key, idr, ref, discard;
} Pkt;

static int cmp_pts(const void *a, const void *b)
{
	int64_t x = (*(const Pkt *const *)a)->pts, y = (*(const Pkt *const *)b)->pts;
	return x < y ? -1 : x > y;
}

// slice NAL units of an AVCC packet: any IDR (type 5), any reference slice; -1 when malformed
static int parse_avcc(const uint8_t *d, int n, int len_size, int *idr, int *ref)
{
	*idr = *ref = 0;
	int slices = 0;
	for (int i = 0; i + len_size < n;) {
		uint32_t len = 0;
		for (int k = 0; k < len_size; k++)
			len = len << 8 | d[i + k];
		i += len_size;
		if (len == 0 || len > (uint32_t)(n - i))
			return -1;
		int type = d[i] & 31, ref_idc = (d[i] >> 5) & 3;
		if (type == 1 || type == 5) {
			slices++;
			*idr |= type == 5;
			*ref |= ref_idc != 0;
		}
		i += (int)len;
	}
	return slices ? 0 : -1;
}

// why the packets cannot be fed without a demuxer, or NULL; fills ix->packets and ix->config
static const char *build_index(LdChunkIndex *ix, AVStream *st, Pkt *p, Pkt **order, size_t n)
{
	const AVCodecParameters *par = st->codecpar;
	if (par->codec_id != AV_CODEC_ID_H264)
		return "not H.264";
	if (par->extradata_size < 7 || par->extradata[0] != 1)
		return "H.264 without an avcC configuration (Annex B stream)";
	if (n > MANIFEST_MAX_INDEXED_FRAMES || ix->file_size > UINT32_MAX)
		return "more than 65536 frames or a file over 4 GiB";
	AVRational dur = {(int)ix->fps_den, (int)ix->fps_num};
	for (size_t r = 0; r < n; r++) { // display rank r must be the frame number the demuxer path computes
		int64_t f = av_rescale_q_rnd(order[r]->pts - order[0]->pts, st->time_base, dur,
					     AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
		if (f != (int64_t)r)
			return "timestamps are not one frame apart (variable frame rate)";
		order[r]->pts = (int64_t)r; // from here on: the frame number
	}
	ix->packets = calloc(n, sizeof(ManifestPacket));
	ix->config = malloc((size_t)par->extradata_size);
	if (!ix->packets || !ix->config)
		return "out of memory";
	memcpy(ix->config, par->extradata, (size_t)par->extradata_size);
	ix->config_size = (uint32_t)par->extradata_size;
	for (size_t i = 0; i < n; i++) {
		if (p[i].discard || p[i].pos < 0 || p[i].ref < 0)
			return "packets the demuxer discards, without a byte position or with malformed NAL units";
		if (p[i].key && !p[i].idr)
			return "keyframes that are not IDR pictures (open GOP)";
		ix->packets[i] = (ManifestPacket){
			.offset = (uint32_t)p[i].pos,
			.size = p[i].size,
			.frame = (uint16_t)p[i].pts,
			.flags = (uint16_t)((p[i].key ? MANIFEST_PKT_KEY : 0) | (p[i].ref ? MANIFEST_PKT_REF : 0))};
	}
	ManifestChunk c = {.n_frames = (uint32_t)n,
			   .kf_count = ix->n_keyframes,
			   .codec = MANIFEST_CODEC_H264,
			   .pkt_count = (uint32_t)n,
			   .config_size = ix->config_size,
			   .file_size = ix->file_size};
	uint8_t *seen = malloc(n);
	const char *why = seen ? manifest_packets_check(&c, ix->keyframes, ix->packets, seen) : "out of memory";
	free(seen);
	return why;
}

// reads every packet: byte range, pts, flags (NAL headers parsed with the avcC length size)
static int read_packets(AVFormatContext *ic, int vs, Pkt **out, size_t *count)
{
	const AVCodecParameters *par = ic->streams[vs]->codecpar;
	int avcc = par->codec_id == AV_CODEC_ID_H264 && par->extradata_size >= 7 && par->extradata[0] == 1;
	int len_size = avcc ? (par->extradata[4] & 3) + 1 : 4;
	AVPacket *pkt = av_packet_alloc();
	size_t n = 0, cap = 512;
	Pkt *p = malloc(cap * sizeof(Pkt));
	int rc = !pkt || !p ? AVERROR(ENOMEM) : 0;
	while (!rc && (rc = av_read_frame(ic, pkt)) >= 0) {
		if (pkt->stream_index == vs) {
			if (n == cap) {
				Pkt *q = realloc(p, 2 * cap * sizeof(Pkt));
				if (!q) {
					av_packet_unref(pkt);
					rc = AVERROR(ENOMEM);
					break;
				}
				p = q, cap *= 2;
			}
			Pkt *x = &p[n++];
			*x = (Pkt){.pos = pkt->pos,
				   .pts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts,
				   .size = (uint32_t)pkt->size,
				   .key = !!(pkt->flags & AV_PKT_FLAG_KEY),
				   .discard = !!(pkt->flags & AV_PKT_FLAG_DISCARD)};
			if (avcc && parse_avcc(pkt->data, pkt->size, len_size, &x->idr, &x->ref) < 0)
				x->ref = -1;
		}
		av_packet_unref(pkt);
	}
	av_packet_free(&pkt);
	if (rc == AVERROR_EOF)
		rc = 0;
	if (rc) {
		free(p);
		return rc;
	}
	*out = p;
	*count = n;
	return 0;
}

int ld_index_chunk(const char *path, LdChunkIndex *ix)
{
	memset(ix, 0, sizeof(*ix));
	struct stat sb;
	if (stat(path, &sb) != 0)
		return AVERROR(errno);
	ix->file_size = (uint64_t)sb.st_size;
	AVFormatContext *ic = NULL;
	int rc = avformat_open_input(&ic, path, NULL, NULL);
	if (rc < 0)
		return rc;
	int vs = av_find_best_stream(ic, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	Pkt *p = NULL, **order = NULL;
	size_t n = 0;
	if (vs < 0) {
		rc = vs;
		goto out;
	}
	AVStream *st = ic->streams[vs];
	if ((rc = read_packets(ic, vs, &p, &n)) < 0)
		goto out;
	// frames in display order: the demuxer hands out packets in decode order
	size_t kept = 0;
	order = malloc((n ? n : 1) * sizeof(Pkt *));
	if (!order) {
		rc = AVERROR(ENOMEM);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (!p[i].discard)
			order[kept++] = &p[i];
	if (kept == 0) {
		rc = AVERROR_INVALIDDATA;
		goto out;
	}
	qsort(order, kept, sizeof(Pkt *), cmp_pts);
	ix->keyframes = malloc(kept * sizeof(uint32_t));
	if (!ix->keyframes) {
		rc = AVERROR(ENOMEM);
		goto out;
	}
	for (size_t r = 0; r < kept; r++)
		if (order[r]->key)
			ix->keyframes[ix->n_keyframes++] = (uint32_t)r;
	ix->n_frames = (uint32_t)kept;
	// constant rate: every frame one tick step after the previous; else what the container says
	AVRational fr = st->avg_frame_rate.num ? st->avg_frame_rate : st->r_frame_rate;
	int64_t step = kept > 1 ? order[1]->pts - order[0]->pts : 0;
	for (size_t r = 2; r < kept && step > 0; r++)
		if (order[r]->pts - order[r - 1]->pts != step)
			step = 0;
	if (step > 0 && step <= INT32_MAX / st->time_base.num)
		fr = (AVRational){st->time_base.den, (int)step * st->time_base.num};
	av_reduce(&fr.num, &fr.den, fr.num, fr.den, 1 << 30);
	ix->fps_num = (uint32_t)fr.num, ix->fps_den = (uint32_t)fr.den;
	ix->width = (uint16_t)st->codecpar->width, ix->height = (uint16_t)st->codecpar->height;
	const char *why = kept != n            ? "packets the demuxer discards (edit list)"
			  : !fr.num || !fr.den ? "no frame rate"
					       : build_index(ix, st, p, order, n);
	if (why) {
		free(ix->packets), free(ix->config);
		ix->packets = NULL, ix->config = NULL, ix->config_size = 0;
		snprintf(ix->why, sizeof(ix->why), "%s", why);
	} else {
		ix->codec = MANIFEST_CODEC_H264;
	}
out:
	free(order);
	free(p);
	avformat_close_input(&ic);
	if (rc < 0)
		ld_index_free(ix);
	return rc;
}

void ld_index_free(LdChunkIndex *ix)
{
	free(ix->keyframes);
	free(ix->packets);
	free(ix->config);
	ix->keyframes = NULL, ix->packets = NULL, ix->config = NULL;
	ix->n_keyframes = ix->config_size = 0;
	ix->codec = MANIFEST_CODEC_NONE;
}
