// A camera-like synthetic video source for benchmarks: a handheld camera wandering over a large
// textured world (1/f-like detail, hard-edged objects), moving objects, zoom, a little rotation,
// exposure drift and sensor noise. Any frame can be rendered on its own (closed-form motion).
#ifndef TOOLS_CAMSRC_H
#define TOOLS_CAMSRC_H
// defines: CamSource, cam_new, cam_free, cam_render

#include <libavutil/frame.h>
#include <stdint.h>

typedef struct CamSource CamSource;

// A source of width x height (even) frames at fps; seed picks the world and the motion.
// 0 or -ENOMEM.
int cam_new(CamSource **out, int width, int height, int fps, uint32_t seed);
void cam_free(CamSource *s);
// Renders frame n into f (yuv420p, width x height, writable).
void cam_render(const CamSource *s, int n, AVFrame *f);

#endif
