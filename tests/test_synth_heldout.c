// The synthetic dataset's split, in each world: training timelines never caption a held-out
// combination, held-out timelines caption only such combinations, both cover every colour, shape
// and action, each caption says what its event does; in the hard world every colour x action
// and shape x action pair a shape can do is seen in training (only the triple is new) and the
// distractor is another object than the actor, present through every actor event.
#include "../tools/synth.h" // defines: synth_timeline_make, synth_heldout_combo, SynthWorld, ...

#include <math.h>
#include <stdio.h>
#include <string.h>

static int fails;
#define FAIL(...) (printf("FAIL " __VA_ARGS__), printf("\n"), fails++)

// the state change matches the words
static int does_what_it_says(const SynthEvent *e)
{
	double dx = e->to.x - e->from.x, dy = e->to.y - e->from.y, ds = e->to.size - e->from.size;
	switch (e->kind) {
	case SYNTH_MOVE_LEFT: return dx < 0 && dy == 0;
	case SYNTH_MOVE_RIGHT: return dx > 0 && dy == 0;
	case SYNTH_MOVE_UP: return dy < 0 && dx == 0;
	case SYNTH_MOVE_DOWN: return dy > 0 && dx == 0;
	case SYNTH_GROW: return ds > 0;
	case SYNTH_SHRINK: return ds < 0;
	case SYNTH_MOVE_UP_LEFT: return dx < 0 && dy < 0;
	case SYNTH_MOVE_DOWN_RIGHT: return dx > 0 && dy > 0;
	case SYNTH_FADE: return e->to.alpha < e->from.alpha;
	default: return e->to.angle != e->from.angle && e->from.shape != SYNTH_CIRCLE && e->from.shape != SYNTH_RING;
	}
}

static void check_distractor(const SynthWorld *wd, const SynthEvent *e, int v)
{
	if (!wd->distractor) {
		if (e->dfrom.alpha != 0 || e->dto.alpha != 0)
			FAIL("basic video %d: a distractor at %.2f", v, e->start);
		return;
	}
	if (e->dfrom.colour == e->from.colour && e->dfrom.shape == e->from.shape)
		FAIL("hard video %d: the distractor at %.2f is the actor's object", v, e->start);
	if (e->kind >= 0 && (e->dfrom.alpha != 1 || e->dto.alpha != 1))
		FAIL("hard video %d: no distractor through the event at %.2f", v, e->start);
}

static void world(const SynthWorld *wd, int videos, int min_heldout)
{
	static int seen[2][SYNTH_N_COLOURS][SYNTH_N_SHAPES][SYNTH_N_ACTIONS];
	memset(seen, 0, sizeof seen);
	int events = 0;
	for (int heldout = 0; heldout < 2; heldout++)
		for (int v = 0; v < videos; v++) {
			SynthTimeline tl;
			if (synth_timeline_make(&tl, wd, 7, heldout, v, 120, 320, 180)) {
				FAIL("out of memory");
				return;
			}
			if (tl.texture != wd->texture)
				FAIL("%s video %d: texture %d", wd->name, v, tl.texture);
			double last_end = 0;
			for (int i = 0; i < tl.n; i++) {
				const SynthEvent *e = &tl.ev[i];
				events++;
				if (e->start < last_end - 1e-9 || e->end <= e->start || e->end > tl.duration + 1e-9)
					FAIL("video %d event %d: [%.2f, %.2f) overlaps or leaves the video", v, i,
					     e->start, e->end);
				last_end = e->end;
				check_distractor(wd, e, v);
				if (e->kind < 0) {
					if (e->captioned == heldout)
						FAIL("appear/disappear captioned in the %s split",
						     heldout ? "held-out" : "training");
					continue;
				}
				int c = e->from.colour, s = e->from.shape, a = e->kind;
				char want[64];
				snprintf(want, sizeof(want), "a %s %s %s", synth_colour_names[c], synth_shape_names[s],
					 synth_action_names[a]);
				if (c >= wd->colours || s >= wd->shapes || a >= wd->actions ||
				    strcmp(want, e->caption) || synth_heldout_combo(wd, c, s, a) != heldout)
					FAIL("%s %s video %d: '%s'", wd->name, heldout ? "held-out" : "training", v,
					     e->caption);
				if (!does_what_it_says(e))
					FAIL("'%s' does not do what it says", e->caption);
				seen[heldout][c][s][a]++;
			}
			synth_timeline_free(&tl);
		}
	int combos = 0, ca[SYNTH_N_COLOURS][SYNTH_N_ACTIONS] = {{0}}, sa[SYNTH_N_SHAPES][SYNTH_N_ACTIONS] = {{0}};
	int col[SYNTH_N_COLOURS] = {0}, shp[SYNTH_N_SHAPES] = {0}, act[SYNTH_N_ACTIONS] = {0};
	for (int c = 0; c < wd->colours; c++)
		for (int s = 0; s < wd->shapes; s++)
			for (int a = 0; a < wd->actions; a++) {
				int n = seen[0][c][s][a];
				combos += seen[1][c][s][a] > 0;
				ca[c][a] += n, sa[s][a] += n, col[c] += n, shp[s] += n, act[a] += n;
			}
	for (int c = 0; c < wd->colours; c++)
		if (!col[c])
			FAIL("%s: colour %s never in training", wd->name, synth_colour_names[c]);
	for (int s = 0; s < wd->shapes; s++)
		if (!shp[s])
			FAIL("%s: shape %s never in training", wd->name, synth_shape_names[s]);
	for (int a = 0; a < wd->actions; a++)
		if (!act[a])
			FAIL("%s: action %s never in training", wd->name, synth_action_names[a]);
	if (wd->triples) // only the triple is new: each of its pairs with the action was trained on
		for (int a = 0; a < wd->actions; a++) {
			for (int c = 0; c < wd->colours; c++)
				if (!ca[c][a])
					FAIL("hard: '%s ... %s' never in training", synth_colour_names[c],
					     synth_action_names[a]);
			for (int s = 0; s < wd->shapes; s++)
				if (!sa[s][a] && !(a == SYNTH_ROTATE && (s == SYNTH_CIRCLE || s == SYNTH_RING)))
					FAIL("hard: '%s %s' never in training", synth_shape_names[s],
					     synth_action_names[a]);
		}
	if (combos < min_heldout)
		FAIL("%s: only %d held-out combinations occur", wd->name, combos);
	printf("%s: %d events, %d held-out combinations used\n", wd->name, events, combos);
}

int main(void)
{
	world(&synth_world_basic, 20, 6);
	world(&synth_world_hard, 40, 40);
	if (!synth_world_find("basic") || !synth_world_find("hard") || synth_world_find("Hard"))
		FAIL("synth_world_find");
	printf("%s\n", fails ? "FAILED" : "splits are clean");
	return fails ? 1 : 0;
}
