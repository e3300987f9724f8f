// The footage bench_prep_gop encodes: 15 s of the camera-like source (plain or hard: fast motion,
// strong shake and noise, parallax), or of a real video file scaled as tools/prep scales it.
#ifndef TESTS_BENCH_PREP_GOP_SRC_H
#define TESTS_BENCH_PREP_GOP_SRC_H
// defines: BpgSource, bpg_source_open, bpg_source_free, bpg_source_frame

#include <libavutil/frame.h>
#include <stddef.h>

typedef struct {
	char name[64];       // cam, cam-hard or the file's base name
	int width, height;   // the chunk's (short side 288 for files)
	int fps;             // whole frames per second
	int frames;          // frames of the chunk
	int source_frames;   // frames the file holds (the chunk plays them forward, backward, ...)
	unsigned char **yuv; // [source_frames] packed yuv420p pictures
} BpgSource;

// spec: "cam", "cam-hard" (512x288 at 30 fps) or a video file (its rate rounded, short side 288,
// bicubic as tools/prep; a file shorter than the chunk is played forward and backward in turn, so
// the chunk has no cut a loop would add). seconds: chunk length. 0 or -1 with a reason in err.
int bpg_source_open(BpgSource *s, const char *spec, int seconds, char *err, size_t errlen);
void bpg_source_free(BpgSource *s);
// copies chunk frame i (0 <= i < s->frames) into f (yuv420p, width x height, writable)
void bpg_source_frame(const BpgSource *s, int i, AVFrame *f);

#endif
