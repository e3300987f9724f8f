// Demuxing from a whole-chunk buffer: a custom AVIOContext (EOF, AVSEEK_SIZE, AVSEEK_FORCE
// stripped) whose read callback and the format's interrupt callback enforce the watchdog.
#ifndef LOADERD_LD_AVIO_H
#define LOADERD_LD_AVIO_H
// defines: LdMemIO, ld_avio_open, ld_avio_close

#include <libavformat/avformat.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	const uint8_t *buf;
	size_t size, pos;
	uint64_t deadline_ns;     // 0: none
	const atomic_int *cancel; // non-zero: stop now (loaderd stopping); may be NULL
	int timed_out;            // set when a callback refused because of the deadline or cancel
	AVFormatContext *fc;
	AVIOContext *io;
} LdMemIO;

// Opens the container in m->buf and reads stream info. 0 or -LD_ERR_* with a reason.
int ld_avio_open(LdMemIO *m, const uint8_t *buf, size_t size, uint64_t deadline_ns, const atomic_int *cancel, char *err,
		 size_t errlen);
void ld_avio_close(LdMemIO *m);

#endif
