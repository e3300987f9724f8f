// A camera-like synthetic video source for benchmarks: a handheld camera wandering over a large
// textured world (1/f-like detail, hard-edged objects), moving objects, zoom, a little rotation,
// exposure drift and sensor noise. Any frame can be rendered on its own (closed-form motion).
#ifndef TOOLS_CAMSRC_H
#define TOOLS_CAMSRC_H
// defines: CamSource, CamStyle, cam_new, cam_new_style, cam_free, cam_render

#include <libavutil/frame.h>
#include <stdint.h>

typedef struct CamSource CamSource;

// How hard the footage is to code (cam_new: all 1, parallax 0).
typedef struct {
	double motion; // speed of the pan, zoom and roll (3: head turns of ~20 pixels a frame)
	double shake;  // amplitude of the hand shake
	double noise;  // sensor noise (1: sd ~1.6 levels)
	int parallax;  // a near layer of large objects sliding at 2.5x the pan (occlusions that uncover)
} CamStyle;

// A source of width x height (even) frames at fps; seed picks the world and the motion.
// 0 or -ENOMEM.
int cam_new(CamSource **out, int width, int height, int fps, uint32_t seed);
// The same with a style (NULL: cam_new's); cam_new's frames are byte for byte those of style 1, 1, 1, 0.
int cam_new_style(CamSource **out, int width, int height, int fps, uint32_t seed, const CamStyle *style);
void cam_free(CamSource *s);
// Renders frame n into f (yuv420p, width x height, writable).
void cam_render(const CamSource *s, int n, AVFrame *f);

#endif
