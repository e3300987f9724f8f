// Scenes of tools/synth: a seeded timeline of shapes that appear, move, grow, shrink, rotate
// and disappear, with a caption per event, and the renderer that draws any instant of it.
#include "synth.h"  // defines: SynthTimeline, synth_timeline_make, synth_render_frame, ...
#include "stream.h" // defines: rng_splitmix64

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const synth_colour_names[SYNTH_N_COLOURS] = {"red",   "green",  "blue", "yellow", "purple",
							 "white", "orange", "cyan", "pink",   "brown"};
const char *const synth_shape_names[SYNTH_N_SHAPES] = {"square", "circle", "triangle", "diamond", "cross", "ring"};
const char *const synth_action_names[SYNTH_N_ACTIONS] = {
	"moves left", "moves right", "moves up",      "moves down",       "grows",
	"shrinks",    "rotates",     "moves up left", "moves down right", "fades"};
static const uint8_t colour_rgb[SYNTH_N_COLOURS][3] = {{220, 40, 40},   {40, 190, 60},   {50, 80, 230},  {235, 215, 40},
						       {150, 60, 190},  {240, 240, 240}, {245, 140, 30}, {40, 205, 215},
						       {245, 125, 185}, {135, 85, 45}};

const SynthWorld synth_world_basic = {"basic", 6, 3, 7, 0, 0, 0, 0};
const SynthWorld synth_world_hard = {"hard", 10, 6, 10, 1, 1, 1, 0};
const SynthWorld synth_world_compose = {"compose", 10, 6, 0, 1, 1, 0, 1};

const SynthWorld *synth_world_find(const char *name)
{
	if (!strcmp(name, synth_world_basic.name))
		return &synth_world_basic;
	if (!strcmp(name, synth_world_hard.name))
		return &synth_world_hard;
	if (!strcmp(name, synth_world_compose.name))
		return &synth_world_compose;
	return NULL;
}

// basic: every colour keeps 5-6 seen actions and every action 5-6 seen colours, so a held-out
// caption combines a known colour with a known action in a pairing never trained on (the shape
// plays no part). hard: 1 in 7 triples, (c + 2s + 3a) % 7 == 0; for any two of the three fixed,
// at most two values of the third are held out, so every pair is also seen in training.
int synth_heldout_combo(const SynthWorld *wd, int colour, int shape, int action)
{
	if (wd->triples)
		return (colour + 2 * shape + 3 * action) % 7 == 0;
	return (colour + action) % 5 == 0;
}

// splitmix64 over (seed, stream): independent, reproducible streams per video
void synth_rng_seed(SynthRng *r, uint64_t seed, uint64_t stream)
{
	r->s = seed * 0x9e3779b97f4a7c15ull ^ (stream + 1) * 0xbf58476d1ce4e5b9ull;
}

uint64_t synth_rng_next(SynthRng *r)
{
	return rng_splitmix64(&r->s);
}

int synth_rng_range(SynthRng *r, int lo, int hi)
{
	return lo + (int)(synth_rng_next(r) % (uint64_t)(hi - lo + 1));
}

static int push(SynthTimeline *tl, int *cap, const SynthEvent *e)
{
	if (tl->n == *cap) {
		int c = *cap ? 2 * *cap : 64;
		SynthEvent *ev = realloc(tl->ev, (size_t)c * sizeof(SynthEvent));
		if (!ev)
			return -ENOMEM;
		tl->ev = ev;
		*cap = c;
	}
	tl->ev[tl->n++] = *e;
	return 0;
}

// extent of the shape around its centre (half the diagonal of a rotated square)
static double reach(double size)
{
	return size * 0.75;
}

// the state after doing action a from s, or 0 when the frame has no room for it
static int plan_action(const SynthShape *s, int a, int w, int h, SynthRng *r, SynthShape *to)
{
	*to = *s;
	double room_l = s->x - reach(s->size), room_r = w - s->x - reach(s->size);
	double room_u = s->y - reach(s->size), room_d = h - s->y - reach(s->size);
	double dx = w * 0.3, dy = h * 0.3;
	switch (a) {
	case SYNTH_MOVE_LEFT:
		if (room_l < dx / 3)
			return 0;
		to->x -= fmin(dx, room_l);
		return 1;
	case SYNTH_MOVE_RIGHT:
		if (room_r < dx / 3)
			return 0;
		to->x += fmin(dx, room_r);
		return 1;
	case SYNTH_MOVE_UP:
		if (room_u < dy / 3)
			return 0;
		to->y -= fmin(dy, room_u);
		return 1;
	case SYNTH_MOVE_DOWN:
		if (room_d < dy / 3)
			return 0;
		to->y += fmin(dy, room_d);
		return 1;
	case SYNTH_GROW: {
		double lim = fmin(fmin(s->x, w - s->x), fmin(s->y, h - s->y)) / 0.75;
		if (lim < s->size * 1.25)
			return 0;
		to->size = fmin(s->size * 1.6, lim);
		return 1;
	}
	case SYNTH_SHRINK:
		if (s->size * 0.6 < h / 12.0)
			return 0;
		to->size = s->size * 0.6;
		return 1;
	case SYNTH_MOVE_UP_LEFT:
		if (room_l < dx / 3 || room_u < dy / 3)
			return 0;
		to->x -= fmin(dx, room_l), to->y -= fmin(dy, room_u);
		return 1;
	case SYNTH_MOVE_DOWN_RIGHT:
		if (room_r < dx / 3 || room_d < dy / 3)
			return 0;
		to->x += fmin(dx, room_r), to->y += fmin(dy, room_d);
		return 1;
	case SYNTH_FADE:
		if (s->alpha < 0.9)
			return 0;
		to->alpha = 0.35;
		return 1;
	default: // rotate: a circle or a ring looks the same turned
		if (s->shape == SYNTH_CIRCLE || s->shape == SYNTH_RING)
			return 0;
		to->angle += (synth_rng_next(r) & 1) ? 90 : -90;
		return 1;
	}
}

void synth_texture_draw(SynthTimeline *tl, SynthRng *r)
{
	tl->texture = 1;
	tl->texture_key = synth_rng_next(r);
	for (int k = 0; k < 3; k++)
		tl->tint[k] = synth_rng_range(r, -25, 25);
}

SynthShape synth_distractor(const SynthShape *actor, const SynthWorld *wd, int w, int h, SynthRng *r)
{
	SynthShape d = {.alpha = 0};
	do {
		d.colour = synth_rng_range(r, 0, wd->colours - 1);
		d.shape = synth_rng_range(r, 0, wd->shapes - 1);
	} while (d.colour == actor->colour && d.shape == actor->shape);
	d.size = synth_rng_range(r, h / 8, h / 5);
	d.x = synth_rng_range(r, (int)reach(d.size) + 1, w - (int)reach(d.size) - 1);
	d.y = synth_rng_range(r, (int)reach(d.size) + 1, h - (int)reach(d.size) - 1);
	d.angle = synth_rng_range(r, 0, 89);
	return d;
}

// where the distractor drifts to over one event: a short random step that stays in the frame
static SynthShape distractor_drift(const SynthShape *d, int w, int h, SynthRng *r)
{
	SynthShape to = *d;
	double m = reach(d->size) + 1;
	to.x = fmin(fmax(d->x + synth_rng_range(r, -w / 8, w / 8), m), w - m);
	to.y = fmin(fmax(d->y + synth_rng_range(r, -h / 8, h / 8), m), h - m);
	to.angle += synth_rng_range(r, -30, 30);
	return to;
}

// the distractor of the next event (wd->distractor), its state carried in *d; alpha_to: its
// alpha at the event's end (appearing with the actor, gone with it)
static void distractor_step(const SynthWorld *wd, SynthEvent *e, SynthShape *d, double alpha_to, int w, int h,
			    SynthRng *r)
{
	if (!wd->distractor)
		return;
	e->dfrom = *d;
	e->dto = distractor_drift(d, w, h, r);
	e->dto.alpha = alpha_to;
	*d = e->dto;
}

static int caption_event(SynthTimeline *tl, int *cap, SynthEvent *e, const char *what)
{
	snprintf(e->caption, sizeof(e->caption), "a %s %s %s", synth_colour_names[e->from.colour],
		 synth_shape_names[e->from.shape], what);
	return push(tl, cap, e);
}

int synth_timeline_make(SynthTimeline *tl, const SynthWorld *wd, uint64_t seed, int heldout, int index, double seconds,
			int w, int h)
{
	memset(tl, 0, sizeof(*tl));
	tl->duration = seconds;
	SynthRng r;
	synth_rng_seed(&r, seed, (uint64_t)heldout << 32 | (uint32_t)index);
	if (wd->texture)
		synth_texture_draw(tl, &r);
	int cap = 0;
	double t = 0.5;
	while (t + 6.0 <= seconds) {
		SynthShape s = {.colour = synth_rng_range(&r, 0, wd->colours - 1),
				.shape = synth_rng_range(&r, 0, wd->shapes - 1),
				.alpha = 0};
		s.size = synth_rng_range(&r, h / 6, h / 4);
		s.x = synth_rng_range(&r, (int)reach(s.size) + 1, w - (int)reach(s.size) - 1);
		s.y = synth_rng_range(&r, (int)reach(s.size) + 1, h - (int)reach(s.size) - 1);
		SynthShape d = wd->distractor ? synth_distractor(&s, wd, w, h, &r) : (SynthShape){.alpha = 0};
		SynthEvent e = {.start = t, .end = t + 1.0, .from = s, .to = s, .kind = -1, .captioned = !heldout};
		e.to.alpha = 1;
		distractor_step(wd, &e, &d, 1, w, h, &r);
		if (caption_event(tl, &cap, &e, "appears"))
			return -ENOMEM;
		t = e.end;
		s.alpha = 1;
		int n_act = synth_rng_range(&r, 2, 4);
		for (int k = 0; k < n_act && t + 5.0 <= seconds; k++) {
			// allowed actions of this split, tried from a random start so every one occurs
			int first = synth_rng_range(&r, 0, wd->actions - 1), a = -1;
			SynthShape to;
			for (int j = 0; j < wd->actions && a < 0; j++) {
				int c = (first + j) % wd->actions;
				if (synth_heldout_combo(wd, s.colour, s.shape, c) == heldout &&
				    plan_action(&s, c, w, h, &r, &to))
					a = c;
			}
			if (a < 0)
				break;
			double dur = synth_rng_range(&r, 20, 40) / 10.0;
			e = (SynthEvent){.start = t, .end = t + dur, .from = s, .to = to, .kind = a, .captioned = 1};
			distractor_step(wd, &e, &d, 1, w, h, &r);
			if (caption_event(tl, &cap, &e, synth_action_names[a]))
				return -ENOMEM;
			t = e.end;
			s = to;
		}
		e = (SynthEvent){.start = t, .end = t + 1.0, .from = s, .to = s, .kind = -2, .captioned = !heldout};
		e.to.alpha = 0;
		distractor_step(wd, &e, &d, 0, w, h, &r);
		if (caption_event(tl, &cap, &e, "disappears"))
			return -ENOMEM;
		t = e.end + 0.5;
	}
	return 0;
}

void synth_timeline_free(SynthTimeline *tl)
{
	free(tl->ev);
	memset(tl, 0, sizeof(*tl));
}

static void background(int x, int y, int w, int h, uint8_t rgb[3])
{
	// a fixed diagonal gradient: some texture for the encoder, nothing that moves
	int g = 30 + 40 * (x + y) / (w + h);
	rgb[0] = (uint8_t)g, rgb[1] = (uint8_t)(g + 4), rgb[2] = (uint8_t)(g + 12);
}

static int inside(const SynthShape *s, double px, double py)
{
	double dx = px - s->x, dy = py - s->y, half = s->size / 2;
	if (s->shape == SYNTH_CIRCLE)
		return dx * dx + dy * dy <= half * half;
	if (s->shape == SYNTH_RING) {
		double r2 = dx * dx + dy * dy;
		return r2 <= half * half && r2 >= 0.3 * half * half;
	}
	double rad = s->angle * M_PI / 180, c = cos(rad), sn = sin(rad);
	double qx = c * dx + sn * dy, qy = -sn * dx + c * dy;
	if (s->shape == SYNTH_SQUARE)
		return fabs(qx) <= half && fabs(qy) <= half;
	if (s->shape == SYNTH_DIAMOND)
		return fabs(qx) + fabs(qy) <= half;
	if (s->shape == SYNTH_CROSS)
		return (fabs(qx) <= half / 3 && fabs(qy) <= half) || (fabs(qy) <= half / 3 && fabs(qx) <= half);
	// equilateral triangle, apex up, circumradius half: each edge at half/2 from the centre
	return qy <= half / 2 && -0.8660254037844386 * qx - 0.5 * qy <= half / 2 &&
	       0.8660254037844386 * qx - 0.5 * qy <= half / 2;
}

void synth_paint(const SynthShape *s, int w, int h, uint8_t *rgb)
{
	if (s->alpha <= 0)
		return;
	int x0 = (int)floor(s->x - reach(s->size)), x1 = (int)ceil(s->x + reach(s->size));
	int y0 = (int)floor(s->y - reach(s->size)), y1 = (int)ceil(s->y + reach(s->size));
	x0 = x0 < 0 ? 0 : x0, y0 = y0 < 0 ? 0 : y0, x1 = x1 > w ? w : x1, y1 = y1 > h ? h : y1;
	int a = (int)lround(s->alpha * 256);
	const uint8_t *c = colour_rgb[s->colour];
	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++)
			if (inside(s, x + 0.5, y + 0.5)) {
				uint8_t *p = rgb + 3 * ((size_t)y * w + x);
				for (int k = 0; k < 3; k++)
					p[k] = (uint8_t)((c[k] * a + p[k] * (256 - a)) >> 8);
			}
}

void synth_render_image(const SynthShape *s, int w, int h, uint8_t *rgb)
{
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			background(x, y, w, h, rgb + 3 * ((size_t)y * w + x));
	synth_paint(s, w, h, rgb);
}

static uint8_t clamp8(int v)
{
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

void synth_render_textured(const SynthTimeline *tl, int w, int h, uint8_t *rgb)
{
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			uint8_t *p = rgb + 3 * ((size_t)y * w + x);
			background(x, y, w, h, p);
			uint64_t k = tl->texture_key ^ ((uint64_t)(y / 2) << 32 | (uint32_t)(x / 2));
			int n = (int)(rng_splitmix64(&k) % 41) - 20;
			for (int c = 0; c < 3; c++)
				p[c] = clamp8(p[c] + tl->tint[c] + n);
		}
}

// the state at fraction u of the way from a to b
static SynthShape lerp_shape(const SynthShape *a, const SynthShape *b, double u)
{
	SynthShape s = *a;
	s.x += u * (b->x - a->x);
	s.y += u * (b->y - a->y);
	s.size += u * (b->size - a->size);
	s.angle += u * (b->angle - a->angle);
	s.alpha += u * (b->alpha - a->alpha);
	return s;
}

void synth_render_frame(const SynthTimeline *tl, double t, SynthFrame *f)
{
	int w = f->w, h = f->h;
	uint8_t *rgb = malloc((size_t)w * h * 3);
	if (!rgb)
		return;
	SynthShape cur = {.alpha = 0}, dis = {.alpha = 0};
	for (int i = 0; i < tl->n; i++) {
		const SynthEvent *e = &tl->ev[i];
		if (t >= e->start && t < e->end) {
			double u = (t - e->start) / (e->end - e->start);
			cur = lerp_shape(&e->from, &e->to, u);
			dis = lerp_shape(&e->dfrom, &e->dto, u);
			break;
		}
	}
	if (tl->texture) {
		synth_render_textured(tl, w, h, rgb);
		synth_paint(&dis, w, h, rgb);
		synth_paint(&cur, w, h, rgb);
	} else {
		synth_render_image(&cur, w, h, rgb);
	}
	// BT.601 limited range; chroma from the mean of each 2x2 block
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			const uint8_t *p = rgb + 3 * ((size_t)y * w + x);
			f->y[(size_t)y * w + x] = (uint8_t)(((66 * p[0] + 129 * p[1] + 25 * p[2] + 128) >> 8) + 16);
		}
	for (int y = 0; y < h / 2; y++)
		for (int x = 0; x < w / 2; x++) {
			int s[3] = {0, 0, 0};
			for (int k = 0; k < 4; k++) {
				const uint8_t *p = rgb + 3 * ((size_t)(2 * y + k / 2) * w + 2 * x + k % 2);
				s[0] += p[0], s[1] += p[1], s[2] += p[2];
			}
			int R = s[0] / 4, G = s[1] / 4, B = s[2] / 4;
			f->u[(size_t)y * (w / 2) + x] = (uint8_t)(((-38 * R - 74 * G + 112 * B + 128) >> 8) + 128);
			f->v[(size_t)y * (w / 2) + x] = (uint8_t)(((112 * R - 94 * G - 18 * B + 128) >> 8) + 128);
		}
	free(rgb);
}
