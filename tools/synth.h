// Shared declarations of tools/synth: the scene timeline (shapes, actions, captions), the
// renderer into YUV 4:2:0 frames, PNG encoding and the tar shard writer.
#ifndef TOOLS_SYNTH_H
#define TOOLS_SYNTH_H
// defines: SynthRng, synth_rng_seed, synth_rng_next, synth_rng_range, SynthShape, SynthEvent, SynthTimeline, synth_timeline_make, synth_timeline_free, synth_heldout_combo, synth_colour_names, synth_shape_names, synth_action_names, SynthFrame, synth_render_frame, synth_render_image, synth_png_encode

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
	uint64_t s;
} SynthRng;
void synth_rng_seed(SynthRng *r, uint64_t seed, uint64_t stream);
uint64_t synth_rng_next(SynthRng *r);
// uniform integer in [lo, hi]
int synth_rng_range(SynthRng *r, int lo, int hi);

enum { SYNTH_N_COLOURS = 6, SYNTH_N_SHAPES = 3, SYNTH_N_ACTIONS = 7 };
enum { SYNTH_MOVE_LEFT, SYNTH_MOVE_RIGHT, SYNTH_MOVE_UP, SYNTH_MOVE_DOWN, SYNTH_GROW, SYNTH_SHRINK, SYNTH_ROTATE };
enum { SYNTH_SQUARE, SYNTH_CIRCLE, SYNTH_TRIANGLE };
extern const char *const synth_colour_names[SYNTH_N_COLOURS];
extern const char *const synth_shape_names[SYNTH_N_SHAPES];
extern const char *const synth_action_names[SYNTH_N_ACTIONS];
// colour x action combinations reserved for the held-out split (never in training)
int synth_heldout_combo(int colour, int action);

// a shape's state at an instant; x, y: centre in pixels; size: side or diameter in pixels
typedef struct {
	int colour, shape;
	double x, y, size, angle, alpha; // angle in degrees, alpha 0..1
} SynthShape;

// one step of the actor: state goes linearly from `from` to `to` over [start, end) seconds
typedef struct {
	double start, end;
	SynthShape from, to;
	int kind;      // -1 appears, -2 disappears, else a SYNTH_* action
	int captioned; // whether this event gets a caption line
	char caption[64];
} SynthEvent;

typedef struct {
	SynthEvent *ev;
	int n;
	double duration; // seconds
} SynthTimeline;

// Builds the scene of one video deterministically from (seed, heldout, index): a sequence
// of shapes, each appearing, doing 2-4 actions and disappearing. Training videos use only
// combinations that are not held out; held-out videos caption only held-out combinations.
int synth_timeline_make(SynthTimeline *tl, uint64_t seed, int heldout, int index, double seconds, int w, int h);
void synth_timeline_free(SynthTimeline *tl);

// YUV 4:2:0 8-bit planes, BT.601 limited range
typedef struct {
	int w, h;           // even
	uint8_t *y, *u, *v; // (h, w), (h/2, w/2), (h/2, w/2)
} SynthFrame;
void synth_render_frame(const SynthTimeline *tl, double t, SynthFrame *f);
// one shape on the background, as packed RGB24 (h, w, 3)
void synth_render_image(const SynthShape *s, int w, int h, uint8_t *rgb);

// PNG of packed RGB24 (h, w, 3); *out malloc'ed
int synth_png_encode(const uint8_t *rgb, int w, int h, uint8_t **out, size_t *len);

#endif
