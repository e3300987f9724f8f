// The compose world of tools/synth: images of two captioned objects (one large, one small) in a
// relation, beside an uncaptioned distractor, whose captions must be composed word by word.
#include "synth.h" // defines: SynthCompose, synth_compose_make, synth_paint, synth_render_textured, ...

#include <math.h>
#include <stdio.h>

// sizes in hundredths of the frame's short side: the large object is at least 1.4x the small one,
// which is at least 1.27x the distractor, so "large" and "small" name the two captioned objects
// however the crop scales the image
enum { LARGE_LO = 28, LARGE_HI = 36, SMALL_LO = 14, SMALL_HI = 20, DISTRACTOR_LO = 8, DISTRACTOR_HI = 11 };

int synth_compose_heldout_type(int colour, int shape)
{
	return (colour + 2 * shape) % 5 == 0;
}

// extent of a shape around its centre (half the diagonal of a rotated square)
static double reach(double size)
{
	return size * 0.75;
}

static double draw_size(SynthRng *r, int side, int lo, int hi)
{
	return side * synth_rng_range(r, lo, hi) / 100.0;
}

// a centre anywhere the shape stays inside the frame
static void place(SynthShape *s, int w, int h, SynthRng *r)
{
	int mx = (int)ceil(reach(s->size)), my = mx;
	s->x = synth_rng_range(r, mx, w - mx);
	s->y = synth_rng_range(r, my, h - my);
}

// whether a and b are apart: centres at least 0.6 x the sum of the sizes apart (outlines clear,
// but for the corners of two turned squares)
static int apart(const SynthShape *a, const SynthShape *b)
{
	double dx = a->x - b->x, dy = a->y - b->y, d = 0.6 * (a->size + b->size);
	return dx * dx + dy * dy >= d * d;
}

// a (colour, shape) type of the world
static void draw_type(const SynthWorld *wd, SynthRng *r, SynthShape *s)
{
	s->colour = synth_rng_range(r, 0, wd->colours - 1);
	s->shape = synth_rng_range(r, 0, wd->shapes - 1);
}

void synth_compose_make(const SynthWorld *wd, SynthRng *r, int heldout, int w, int h, SynthCompose *sc)
{
	int side = w < h ? w : h;
	SynthShape a = {.alpha = 1}, b = {.alpha = 1}; // a large, b small
	for (;;) {                                     // training: no held-out type; held-out: at least one
		draw_type(wd, r, &a);
		draw_type(wd, r, &b);
		int held =
			synth_compose_heldout_type(a.colour, a.shape) || synth_compose_heldout_type(b.colour, b.shape);
		if (held == heldout && (a.colour != b.colour || a.shape != b.shape))
			break;
	}
	a.size = draw_size(r, side, LARGE_LO, LARGE_HI);
	b.size = draw_size(r, side, SMALL_LO, SMALL_HI);
	a.angle = synth_rng_range(r, 0, 89);
	b.angle = synth_rng_range(r, 0, 89);
	// the relation's axis dominates the other by 1.5 or more, so a crop's aspect (3/4 to 4/3)
	// never turns "left of" into "above"
	double dx, dy;
	do {
		place(&a, w, h, r);
		place(&b, w, h, r);
		dx = fabs(a.x - b.x), dy = fabs(a.y - b.y);
	} while (!apart(&a, &b) || (dx < 1.5 * dy && dy < 1.5 * dx));
	sc->above = dy > dx;
	int a_first = sc->above ? a.y < b.y : a.x < b.x;
	sc->first = a_first ? a : b;
	sc->second = a_first ? b : a;
	SynthShape d = {.alpha = 1};
	do
		draw_type(wd, r, &d);
	while ((d.colour == a.colour && d.shape == a.shape) || (d.colour == b.colour && d.shape == b.shape));
	d.size = draw_size(r, side, DISTRACTOR_LO, DISTRACTOR_HI);
	d.angle = synth_rng_range(r, 0, 89);
	int tries = 0;
	do
		place(&d, w, h, r);
	while ((!apart(&d, &a) || !apart(&d, &b)) && ++tries < 200);
	if (tries == 200) // no room beside the two (rare): no distractor in this image
		d.alpha = 0;
	sc->distractor = d;
	sc->background = (SynthTimeline){0};
	synth_texture_draw(&sc->background, r);
	const SynthShape *f = &sc->first, *s = &sc->second;
	snprintf(sc->caption, sizeof sc->caption, "a %s %s %s %s a %s %s %s", f->size > s->size ? "large" : "small",
		 synth_colour_names[f->colour], synth_shape_names[f->shape], sc->above ? "above" : "left of",
		 s->size > f->size ? "large" : "small", synth_colour_names[s->colour], synth_shape_names[s->shape]);
}

void synth_compose_render(const SynthCompose *sc, int w, int h, uint8_t *rgb)
{
	synth_render_textured(&sc->background, w, h, rgb);
	synth_paint(&sc->distractor, w, h, rgb);
	// the large object first, so that the small one is whole where their corners meet
	int first_large = sc->first.size > sc->second.size;
	synth_paint(first_large ? &sc->first : &sc->second, w, h, rgb);
	synth_paint(first_large ? &sc->second : &sc->first, w, h, rgb);
}
