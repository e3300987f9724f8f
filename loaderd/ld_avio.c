// Memory-backed AVIOContext for demuxing whole chunks already read into a buffer (no file
// access inside libavformat), with the per-sample deadline checked on every read and interrupt.
#include "ld_avio.h"   // defines: ld_avio_open, ld_avio_close
#include "proc_time.h" // defines: time_mono_ns
#include "loader.h"    // defines: LD_ERR_*

#include <stdio.h>
#include <string.h>

#define LD_AVIO_BUFSZ 65536

static int expired(LdMemIO *m)
{
	if ((m->deadline_ns && time_mono_ns() > m->deadline_ns) ||
	    (m->cancel && atomic_load_explicit(m->cancel, memory_order_relaxed)))
		m->timed_out = 1;
	return m->timed_out;
}

static int mem_read(void *opaque, uint8_t *dst, int len)
{
	LdMemIO *m = opaque;
	if (expired(m))
		return AVERROR_EXIT;
	if (m->pos >= m->size)
		return AVERROR_EOF;
	size_t n = m->size - m->pos;
	if (n > (size_t)len)
		n = (size_t)len;
	memcpy(dst, m->buf + m->pos, n);
	m->pos += n;
	return (int)n;
}

static int64_t mem_seek(void *opaque, int64_t off, int whence)
{
	LdMemIO *m = opaque;
	whence &= ~AVSEEK_FORCE;
	if (whence == AVSEEK_SIZE)
		return (int64_t)m->size;
	int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)m->pos : (int64_t)m->size;
	if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END)
		return AVERROR(EINVAL);
	int64_t p = base + off;
	if (p < 0 || p > (int64_t)m->size)
		return AVERROR(EINVAL);
	m->pos = (size_t)p;
	return p;
}

static int interrupt_cb(void *opaque)
{
	return expired(opaque);
}

int ld_avio_open(LdMemIO *m, const uint8_t *buf, size_t size, uint64_t deadline_ns, const atomic_int *cancel, char *err,
		 size_t errlen)
{
	memset(m, 0, sizeof(*m));
	m->buf = buf;
	m->size = size;
	m->deadline_ns = deadline_ns;
	m->cancel = cancel;
	if (size == 0) {
		snprintf(err, errlen, "zero-length input");
		return -LD_ERR_EMPTY;
	}
	uint8_t *iobuf = av_malloc(LD_AVIO_BUFSZ);
	m->fc = avformat_alloc_context();
	if (iobuf)
		m->io = avio_alloc_context(iobuf, LD_AVIO_BUFSZ, 0, m, mem_read, NULL, mem_seek);
	if (!iobuf || !m->fc || !m->io) {
		if (!m->io)
			av_free(iobuf);
		ld_avio_close(m);
		snprintf(err, errlen, "out of memory opening the demuxer");
		return -LD_ERR_NOMEM;
	}
	m->fc->pb = m->io;
	m->fc->flags |= AVFMT_FLAG_CUSTOM_IO;
	m->fc->interrupt_callback.callback = interrupt_cb;
	m->fc->interrupt_callback.opaque = m;
	int rc = avformat_open_input(&m->fc, NULL, NULL, NULL);
	if (rc < 0) {
		// avformat_open_input frees the context on failure
		m->fc = NULL;
		ld_avio_close(m);
		if (m->timed_out) {
			snprintf(err, errlen, "watchdog: deadline passed while opening the container");
			return -LD_ERR_TIMEOUT;
		}
		snprintf(err, errlen, "container not recognised: %s", av_err2str(rc));
		return -LD_ERR_CORRUPT;
	}
	// mp4 headers already carry the codec parameters; probing by decoding costs frames
	int need_probe = m->fc->nb_streams == 0;
	for (unsigned i = 0; i < m->fc->nb_streams; i++) {
		const AVCodecParameters *par = m->fc->streams[i]->codecpar;
		if (par->codec_type == AVMEDIA_TYPE_VIDEO && (par->width <= 0 || par->format < 0))
			need_probe = 1;
	}
	rc = need_probe ? avformat_find_stream_info(m->fc, NULL) : 0;
	if (rc < 0) {
		int to = m->timed_out;
		ld_avio_close(m);
		snprintf(err, errlen, to ? "watchdog: deadline passed reading stream info" : "no stream info: %s",
			 to ? "" : av_err2str(rc));
		return to ? -LD_ERR_TIMEOUT : -LD_ERR_CORRUPT;
	}
	return 0;
}

void ld_avio_close(LdMemIO *m)
{
	if (m->fc)
		avformat_close_input(&m->fc);
	if (m->io) {
		av_freep(&m->io->buffer);
		avio_context_free(&m->io);
	}
}
