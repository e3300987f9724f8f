// Shared declarations of tools/synth: the scene timeline (shapes, actions, captions), the
// renderer into YUV 4:2:0 frames, PNG encoding and the tar shard writer.
#ifndef TOOLS_SYNTH_H
#define TOOLS_SYNTH_H
// defines: SynthRng, synth_rng_seed, synth_rng_next, synth_rng_range, SynthShape, SynthEvent, SynthTimeline, SynthWorld, synth_world_basic, synth_world_hard, synth_world_find, synth_timeline_make, synth_timeline_free, synth_heldout_combo, synth_colour_names, synth_shape_names, synth_action_names, SynthFrame, synth_render_frame, synth_render_image, synth_texture_draw, synth_render_textured, synth_paint, synth_distractor, synth_png_encode, synth_world_compose, SynthCompose,
//          synth_compose_heldout_type, synth_compose_make, synth_compose_render

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

// the largest world's counts; the basic world uses the first 6 colours, 3 shapes and 7 actions
enum { SYNTH_N_COLOURS = 10, SYNTH_N_SHAPES = 6, SYNTH_N_ACTIONS = 10 };
enum {
	SYNTH_MOVE_LEFT,
	SYNTH_MOVE_RIGHT,
	SYNTH_MOVE_UP,
	SYNTH_MOVE_DOWN,
	SYNTH_GROW,
	SYNTH_SHRINK,
	SYNTH_ROTATE,
	SYNTH_MOVE_UP_LEFT,
	SYNTH_MOVE_DOWN_RIGHT,
	SYNTH_FADE
};
enum { SYNTH_SQUARE, SYNTH_CIRCLE, SYNTH_TRIANGLE, SYNTH_DIAMOND, SYNTH_CROSS, SYNTH_RING };
extern const char *const synth_colour_names[SYNTH_N_COLOURS];
extern const char *const synth_shape_names[SYNTH_N_SHAPES];
extern const char *const synth_action_names[SYNTH_N_ACTIONS];

// What a world holds. basic: the demo's (6 colours, 3 shapes, 7 actions, one shape on a plain
// gradient; colour x action pairs held out). hard: 10 colours, 6 shapes, 10 actions, an
// uncaptioned distractor shape drifting beside the actor, a textured background tinted per video;
// colour x shape x action triples held out (every pair of them is still seen in training), so
// that retrieval must compose three words and ignore a second object.
typedef struct {
	const char *name;
	int colours, shapes, actions;
	int distractor; // a second, uncaptioned shape during every actor event
	int texture;    // noise and a per-video tint on the background
	int triples;    // the held-out rule is over (colour, shape, action), else (colour, action)
	int compose;    // images only: two captioned objects in a relation (synth_compose_make)
} SynthWorld;
extern const SynthWorld synth_world_basic, synth_world_hard, synth_world_compose;
// the world named "basic", "hard" or "compose"; NULL for another name
const SynthWorld *synth_world_find(const char *name);
// whether the combination is reserved for the held-out split (never captioned in training)
int synth_heldout_combo(const SynthWorld *wd, int colour, int shape, int action);

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
	SynthShape dfrom, dto; // the distractor over the same span (alpha 0: none)
} SynthEvent;

typedef struct {
	SynthEvent *ev;
	int n;
	double duration; // seconds
	int texture;     // the world's background texture, with this video's key and tint
	uint64_t texture_key;
	int tint[3];
} SynthTimeline;

// Builds the scene of one video of world wd deterministically from (seed, heldout, index): a
// sequence of shapes, each appearing, doing 2-4 actions and disappearing. Training videos use
// only combinations that are not held out; held-out videos caption only held-out combinations.
// The basic world's timelines are those this function has always made.
int synth_timeline_make(SynthTimeline *tl, const SynthWorld *wd, uint64_t seed, int heldout, int index, double seconds,
			int w, int h);
void synth_timeline_free(SynthTimeline *tl);

// YUV 4:2:0 8-bit planes, BT.601 limited range
typedef struct {
	int w, h;           // even
	uint8_t *y, *u, *v; // (h, w), (h/2, w/2), (h/2, w/2)
} SynthFrame;
void synth_render_frame(const SynthTimeline *tl, double t, SynthFrame *f);
// one shape on the plain background, as packed RGB24 (h, w, 3)
void synth_render_image(const SynthShape *s, int w, int h, uint8_t *rgb);
// draws a textured background's key and tint from r into tl (a video's, or one image's)
void synth_texture_draw(SynthTimeline *tl, SynthRng *r);
// the hard world's background of tl (its texture key and tint) into rgb; synth_paint draws a
// shape over what rgb holds
void synth_render_textured(const SynthTimeline *tl, int w, int h, uint8_t *rgb);
void synth_paint(const SynthShape *s, int w, int h, uint8_t *rgb);
// the hard world's second shape: another (colour, shape) than the actor's, anywhere in the frame
SynthShape synth_distractor(const SynthShape *actor, const SynthWorld *wd, int w, int h, SynthRng *r);

// The compose world's image (synth_compose.c): two captioned objects, one large and one small,
// side by side or one above the other, an uncaptioned smaller distractor of a third type, a
// textured background. The caption names the left (or upper) object first: "a large red circle
// left of a small blue square", "a small green ring above a large white cross". An object type
// (colour, shape) with (colour + 2 shape) % 5 == 0 is held out (12 of 60; every colour keeps 4-5
// shapes and every shape 8 colours in training): held-out images hold at least one, training
// images none. The words stay true under the loader's crops (area 0.5-1, aspect 3/4-4/3, no flip):
// sizes are relative, and the relation's axis dominates the other by 1.5 or more.
typedef struct {
	SynthShape first, second, distractor; // first: the object the caption names first
	int above;                            // 0: first left of second; 1: first above second
	SynthTimeline background;             // texture key and tint
	char caption[96];
} SynthCompose;
// object types that are held out
int synth_compose_heldout_type(int colour, int shape);
// draws one image's scene from r for the held-out split or training, in a w x h frame
void synth_compose_make(const SynthWorld *wd, SynthRng *r, int heldout, int w, int h, SynthCompose *sc);
// renders the scene into packed RGB24 (h, w, 3)
void synth_compose_render(const SynthCompose *sc, int w, int h, uint8_t *rgb);

// PNG of packed RGB24 (h, w, 3); *out malloc'ed
int synth_png_encode(const uint8_t *rgb, int w, int h, uint8_t **out, size_t *len);

#endif
