// Damage bookkeeping of tools/prep (spans of output frames made from frames that decoded with
// errors, and their line in a video's .done marker) and the strict full decode of --verify --deep.
#include "prep_damage.h" // defines: PrepDamage, prep_damage_*, prep_frame_damaged, prep_decode_check
#include "fs_dir.h"      // defines: fs_open_regular
#include "manifest.h"    // defines: manifest_crc32 (IEEE CRC-32)
#include "loader.h"      // defines: ld_nal_framing, ld_nal_zeroed

#include <errno.h>
#include <inttypes.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int prep_damage_mark(PrepDamage *d, uint64_t f)
{
	d->frames++;
	if (d->n && d->spans[d->n - 1].last + 1 >= f) {
		if (f > d->spans[d->n - 1].last)
			d->spans[d->n - 1].last = f;
		return 0;
	}
	if (d->n == d->cap) {
		int cap = d->cap ? 2 * d->cap : 8;
		PrepSpan *s = realloc(d->spans, sizeof *s * (size_t)cap);
		if (!s)
			return -ENOMEM;
		d->spans = s;
		d->cap = cap;
	}
	d->spans[d->n++] = (PrepSpan){f, f};
	return 0;
}

int prep_damage_overlap(const PrepDamage *d, uint64_t fb, uint64_t fe)
{
	for (int i = 0; i < d->n; i++)
		if (d->spans[i].first < fe && d->spans[i].last >= fb)
			return i;
	return -1;
}

void prep_damage_format(const PrepDamage *d, uint32_t fps_num, uint32_t fps_den, int max, char *buf, size_t cap)
{
	size_t k = 0;
	buf[0] = 0;
	double sec = fps_num ? (double)fps_den / fps_num : 0;
	for (int i = 0; i < d->n && i < max && k < cap; i++) {
		const PrepSpan *s = &d->spans[i];
		if (s->first == s->last)
			k += (size_t)snprintf(buf + k, cap - k, "%s%s%" PRIu64 " (%.2f s)", i ? ", " : "",
					      i ? "" : "frame ", s->first, s->first * sec);
		else
			k += (size_t)snprintf(buf + k, cap - k, "%s%s%" PRIu64 "-%" PRIu64 " (%.2f-%.2f s)",
					      i ? ", " : "", i ? "" : "frames ", s->first, s->last, s->first * sec,
					      (s->last + 1) * sec);
	}
	if (d->n > max && k < cap)
		snprintf(buf + k, cap - k, " and %d more spans", d->n - max);
}

void prep_damage_line(const PrepDamage *d, char *buf, size_t cap)
{
	size_t k = d->n ? (size_t)snprintf(buf, cap, "damage errors=%d concealed=%d corrupt=%d", d->errors,
					   d->concealed, d->corrupt)
			: (size_t)snprintf(buf, cap, "damage none");
	for (int i = 0; i < d->n && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, " %" PRIu64 "-%" PRIu64, d->spans[i].first, d->spans[i].last);
}

int prep_damage_parse(PrepDamage *d, const char *line)
{
	memset(d, 0, sizeof *d);
	if (strncmp(line, "damage", 6) != 0)
		return -EINVAL;
	const char *p = line + 6;
	if (strcmp(p, " none") == 0)
		return 0;
	int used = 0;
	if (sscanf(p, " errors=%d concealed=%d corrupt=%d%n", &d->errors, &d->concealed, &d->corrupt, &used) != 3)
		goto bad;
	p += used;
	while (*p == ' ') {
		char *e;
		uint64_t a = strtoull(p + 1, &e, 10), b;
		if (e == p + 1 || *e != '-')
			goto bad;
		const char *q = e + 1;
		b = strtoull(q, &e, 10);
		if (e == q || b < a)
			goto bad;
		for (uint64_t f = a; f <= b; f++)
			if (prep_damage_mark(d, f))
				goto bad;
		p = e;
	}
	if (*p == 0 && d->n)
		return 0;
bad:
	prep_damage_free(d);
	memset(d, 0, sizeof *d);
	return -EINVAL;
}

void prep_damage_free(PrepDamage *d)
{
	free(d->spans);
	memset(d, 0, sizeof *d);
}

int prep_frame_damaged(const AVFrame *f)
{
	return f->decode_error_flags != 0 || (f->flags & AV_FRAME_FLAG_CORRUPT);
}

static void note(uint64_t n, PrepSpan *bad, int *any)
{
	if (!*any)
		bad->first = n;
	bad->last = n;
	*any = 1;
}

int prep_decode_check(const char *path, uint64_t *frames, PrepSpan *bad, char *why, size_t whylen)
{
	AVFormatContext *ic = NULL;
	AVCodecContext *dc = NULL;
	AVPacket *pkt = av_packet_alloc();
	AVFrame *f = av_frame_alloc();
	int rc = pkt && f ? avformat_open_input(&ic, path, NULL, NULL) : AVERROR(ENOMEM);
	const AVCodec *dec = NULL;
	int vs = rc < 0 ? rc : av_find_best_stream(ic, AVMEDIA_TYPE_VIDEO, -1, -1, &dec, 0);
	if (rc >= 0 && (vs < 0 || !dec))
		rc = vs < 0 ? vs : AVERROR_DECODER_NOT_FOUND;
	if (rc >= 0 && !(dc = avcodec_alloc_context3(dec)))
		rc = AVERROR(ENOMEM);
	if (rc >= 0 && (rc = avcodec_parameters_to_context(dc, ic->streams[vs]->codecpar)) >= 0) {
		dc->thread_count = 1;
		dc->err_recognition = AV_EF_EXPLODE | AV_EF_CRCCHECK | AV_EF_BITSTREAM | AV_EF_BUFFER;
		dc->flags |= AV_CODEC_FLAG_OUTPUT_CORRUPT;
		rc = avcodec_open2(dc, dec, NULL);
	}
	*frames = 0;
	int any = 0, errors = 0, flagged = 0, eof = 0;
	// zeroed bytes inside a NAL unit decode without an error or a flag: refused like a bad packet
	const AVCodecParameters *par = rc >= 0 ? ic->streams[vs]->codecpar : NULL;
	int framing = par ? ld_nal_framing(par->codec_id, par->extradata, par->extradata_size) : -1;
	size_t at;
	while (rc >= 0 && !eof) {
		int r = av_read_frame(ic, pkt);
		if (r == AVERROR_EOF) {
			eof = 1;
			r = avcodec_send_packet(dc, NULL);
		} else if (r < 0) {
			errors++; // the container itself is damaged past this point
			note(*frames, bad, &any);
			break;
		} else if (pkt->stream_index != vs) {
			av_packet_unref(pkt);
			continue;
		} else {
			r = ld_nal_zeroed(pkt->data, (size_t)pkt->size, framing, &at) ? AVERROR_INVALIDDATA
										      : avcodec_send_packet(dc, pkt);
			av_packet_unref(pkt);
		}
		if (r < 0 && r != AVERROR(EAGAIN) && r != AVERROR_EOF) {
			errors++;
			note(*frames, bad, &any);
		}
		while ((r = avcodec_receive_frame(dc, f)) >= 0) {
			if (prep_frame_damaged(f)) {
				flagged++;
				note(*frames, bad, &any);
			}
			(*frames)++;
			av_frame_unref(f);
		}
		if (r != AVERROR(EAGAIN) && r != AVERROR_EOF) {
			errors++;
			note(*frames, bad, &any);
		}
	}
	if (rc >= 0 && any)
		snprintf(why, whylen, "%d decoder error%s, %d frame%s flagged damaged", errors, errors == 1 ? "" : "s",
			 flagged, flagged == 1 ? "" : "s");
	av_frame_free(&f);
	av_packet_free(&pkt);
	avcodec_free_context(&dc);
	avformat_close_input(&ic);
	return rc < 0 ? rc : any;
}

int prep_file_crc(const char *path, uint32_t *crc)
{
	int fd = fs_open_regular(path, NULL); // a chunk replaced by a FIFO must not block
	if (fd < 0)
		return fd == -EISDIR ? -EINVAL : fd;
	static __thread uint8_t buf[1 << 16];
	uint32_t c = 0;
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR))
		if (r > 0)
			c = manifest_crc32(c, buf, (size_t)r);
	int e = r < 0 ? -errno : 0;
	close(fd);
	*crc = c;
	return e;
}

int prep_done_crc(const char *chunk_path, uint32_t *crc)
{
	char done[4300];
	const char *slash = strrchr(chunk_path, '/');
	const char *base = slash ? slash + 1 : chunk_path;
	snprintf(done, sizeof done, "%.*s.done", slash ? (int)(slash - chunk_path + 1) : 0, chunk_path);
	FILE *f = fopen(done, "r");
	if (!f)
		return -ENOENT;
	char line[600], name[512];
	unsigned v;
	int rc = -ENOENT;
	while (rc && fgets(line, sizeof line, f))
		if (sscanf(line, "crc %511s %x", name, &v) == 2 && strcmp(name, base) == 0) {
			*crc = v;
			rc = 0;
		}
	fclose(f);
	return rc;
}
