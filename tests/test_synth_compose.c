// The compose world's scenes (tools/synth_compose.c): each caption says what the image shows and
// stays true under the loader's crops (the named relation's axis dominates by 1.5, the large object
// is 1.4x the small one), objects lie inside the frame and apart, the distractor is a third type
// and smaller than both; training never shows a held-out (colour, shape) type, every held-out
// image shows one, and each held-out type's colour and shape are seen in training.
#include "../tools/synth.h" // defines: synth_compose_make, synth_compose_render, SynthCompose, ...

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define FAIL(...) (printf("FAIL " __VA_ARGS__), printf("\n"), fails++)

static int held(const SynthShape *s)
{
	return synth_compose_heldout_type(s->colour, s->shape);
}

static int inside(const SynthShape *s, int w, int h)
{
	double r = 0.75 * s->size;
	return s->x - r >= -0.5 && s->x + r <= w + 0.5 && s->y - r >= -0.5 && s->y + r <= h + 0.5;
}

static int apart(const SynthShape *a, const SynthShape *b)
{
	double dx = a->x - b->x, dy = a->y - b->y, d = 0.6 * (a->size + b->size);
	return dx * dx + dy * dy >= d * d - 1e-9;
}

static void check(const SynthCompose *sc, int heldout, int w, int h, int i)
{
	const SynthShape *f = &sc->first, *s = &sc->second, *d = &sc->distractor;
	char want[96];
	snprintf(want, sizeof want, "a %s %s %s %s a %s %s %s", f->size > s->size ? "large" : "small",
		 synth_colour_names[f->colour], synth_shape_names[f->shape], sc->above ? "above" : "left of",
		 f->size > s->size ? "small" : "large", synth_colour_names[s->colour], synth_shape_names[s->shape]);
	if (strcmp(want, sc->caption))
		FAIL("image %d: caption '%s', want '%s'", i, sc->caption, want);
	double big = fmax(f->size, s->size), small = fmin(f->size, s->size);
	if (big < 1.4 * small - 1e-9)
		FAIL("image %d: sizes %.1f and %.1f are not 1.4x apart", i, big, small);
	double dx = s->x - f->x, dy = s->y - f->y;
	if (sc->above ? !(dy > 0 && dy >= 1.5 * fabs(dx)) : !(dx > 0 && dx >= 1.5 * fabs(dy)))
		FAIL("image %d: '%s' but the second is at (%+.0f, %+.0f) from the first", i, sc->caption, dx, dy);
	if (!inside(f, w, h) || !inside(s, w, h) || (d->alpha > 0 && !inside(d, w, h)))
		FAIL("image %d: an object leaves the frame", i);
	if (!apart(f, s) || (d->alpha > 0 && (!apart(d, f) || !apart(d, s))))
		FAIL("image %d: objects overlap", i);
	if ((f->colour == s->colour && f->shape == s->shape) || (d->colour == f->colour && d->shape == f->shape) ||
	    (d->colour == s->colour && d->shape == s->shape))
		FAIL("image %d: two objects of one type", i);
	if (d->size >= 0.8 * small)
		FAIL("image %d: the distractor (%.1f) is not clearly smaller than the small object (%.1f)", i, d->size,
		     small);
	if ((held(f) || held(s)) != heldout)
		FAIL("image %d: '%s' in the %s split", i, sc->caption, heldout ? "held-out" : "training");
}

int main(void)
{
	const SynthWorld *wd = synth_world_find("compose");
	if (!wd || !wd->compose || synth_world_find("hard")->compose) {
		printf("FAIL synth_world_find(\"compose\")\n");
		return 1;
	}
	enum { W = 64, H = 64, N = 3000 };
	int colour[2][SYNTH_N_COLOURS] = {{0}}, shape[2][SYNTH_N_SHAPES] = {{0}},
	    type[2][SYNTH_N_COLOURS][SYNTH_N_SHAPES];
	int rel[2][2] = {{0}}, first_large[2][2] = {{0}}, no_distractor = 0;
	memset(type, 0, sizeof type);
	for (int heldout = 0; heldout < 2; heldout++) {
		SynthRng r;
		synth_rng_seed(&r, 3, 0x1000000000ull + (uint64_t)heldout);
		for (int i = 0; i < N; i++) {
			SynthCompose sc;
			synth_compose_make(wd, &r, heldout, W, H, &sc);
			check(&sc, heldout, W, H, i);
			const SynthShape *o[2] = {&sc.first, &sc.second};
			for (int k = 0; k < 2; k++) {
				colour[heldout][o[k]->colour]++, shape[heldout][o[k]->shape]++;
				type[heldout][o[k]->colour][o[k]->shape]++;
			}
			rel[heldout][sc.above]++;
			first_large[heldout][sc.first.size > sc.second.size]++;
			no_distractor += sc.distractor.alpha == 0;
		}
	}
	int held_types = 0;
	for (int c = 0; c < wd->colours; c++)
		for (int s = 0; s < wd->shapes; s++) {
			if (!synth_compose_heldout_type(c, s))
				continue;
			held_types++;
			if (!type[1][c][s])
				FAIL("held-out type %s %s never in a held-out image", synth_colour_names[c],
				     synth_shape_names[s]);
			if (!colour[0][c] || !shape[0][s])
				FAIL("held-out type %s %s: its colour or shape never in training",
				     synth_colour_names[c], synth_shape_names[s]);
		}
	if (held_types != 12)
		FAIL("%d held-out types, want 12 of 60", held_types);
	for (int h = 0; h < 2; h++)
		if (rel[h][0] < N / 5 || rel[h][1] < N / 5 || first_large[h][0] < N / 5 || first_large[h][1] < N / 5)
			FAIL("split %d: left/above %d/%d, first small/large %d/%d", h, rel[h][0], rel[h][1],
			     first_large[h][0], first_large[h][1]);
	if (no_distractor > 2 * N / 100)
		FAIL("%d of %d images without a distractor", no_distractor, 2 * N);
	// the render draws each object where it is: its centre differs from the background (a ring's
	// centre is its hole: 0.4 of its half-size off the centre, on the ring)
	SynthRng r;
	synth_rng_seed(&r, 3, 5);
	SynthCompose sc;
	synth_compose_make(wd, &r, 0, W, H, &sc);
	uint8_t *img = malloc(W * H * 3), *bg = malloc(W * H * 3);
	synth_compose_render(&sc, W, H, img);
	synth_render_textured(&sc.background, W, H, bg);
	const SynthShape *o[2] = {&sc.first, &sc.second};
	for (int k = 0; k < 2; k++) {
		int x = (int)o[k]->x + (o[k]->shape == SYNTH_RING ? (int)(0.4 * o[k]->size) : 0), y = (int)o[k]->y;
		if (!memcmp(img + 3 * (y * W + x), bg + 3 * (y * W + x), 3))
			FAIL("object %d of '%s' is not drawn at its place", k, sc.caption);
	}
	free(img), free(bg);
	printf("%s (left/above %d/%d, %d images without a distractor)\n", fails ? "FAILED" : "compose scenes are right",
	       rel[0][0] + rel[1][0], rel[0][1] + rel[1][1], no_distractor);
	return fails ? 1 : 0;
}
