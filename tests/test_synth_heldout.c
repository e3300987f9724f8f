// The synthetic dataset's split: training timelines never caption a held-out colour x action
// pair, held-out timelines caption only such pairs, and both cover every colour and action.
#include "../tools/synth.h" // defines: synth_timeline_make, synth_heldout_combo, ...

#include <stdio.h>
#include <string.h>

int main(void)
{
	int seen[2][SYNTH_N_COLOURS][SYNTH_N_ACTIONS] = {{{0}}}, fails = 0, events = 0;
	for (int heldout = 0; heldout < 2; heldout++)
		for (int v = 0; v < 20; v++) {
			SynthTimeline tl;
			if (synth_timeline_make(&tl, 7, heldout, v, 120, 320, 180))
				return 1;
			double last_end = 0;
			for (int i = 0; i < tl.n; i++) {
				const SynthEvent *e = &tl.ev[i];
				events++;
				if (e->start < last_end - 1e-9 || e->end <= e->start || e->end > tl.duration + 1e-9) {
					printf("FAIL video %d event %d: [%.2f, %.2f) overlaps or leaves the video\n", v,
					       i, e->start, e->end);
					fails++;
				}
				last_end = e->end;
				if (e->kind < 0) {
					if (e->captioned == heldout) {
						printf("FAIL appear/disappear captioned in the %s split\n",
						       heldout ? "held-out" : "training");
						fails++;
					}
					continue;
				}
				int c = e->from.colour, a = e->kind;
				char want[64];
				snprintf(want, sizeof(want), "a %s %s %s", synth_colour_names[c],
					 synth_shape_names[e->from.shape], synth_action_names[a]);
				if (strcmp(want, e->caption) != 0 || synth_heldout_combo(c, a) != heldout) {
					printf("FAIL %s video %d: '%s'\n", heldout ? "held-out" : "training", v,
					       e->caption);
					fails++;
				}
				// the state change matches the words
				double dx = e->to.x - e->from.x, dy = e->to.y - e->from.y,
				       ds = e->to.size - e->from.size;
				int ok = a == SYNTH_MOVE_LEFT    ? dx < 0
					 : a == SYNTH_MOVE_RIGHT ? dx > 0
					 : a == SYNTH_MOVE_UP    ? dy < 0
					 : a == SYNTH_MOVE_DOWN  ? dy > 0
					 : a == SYNTH_GROW       ? ds > 0
					 : a == SYNTH_SHRINK     ? ds < 0
								 : e->to.angle != e->from.angle;
				if (!ok) {
					printf("FAIL '%s' does not do what it says\n", e->caption);
					fails++;
				}
				seen[heldout][c][a]++;
			}
			synth_timeline_free(&tl);
		}
	// every colour and every action appears in training; held-out uses several pairs
	int pairs = 0;
	for (int c = 0; c < SYNTH_N_COLOURS; c++) {
		int any = 0;
		for (int a = 0; a < SYNTH_N_ACTIONS; a++)
			any += seen[0][c][a], pairs += seen[1][c][a] > 0;
		if (!any) {
			printf("FAIL colour %s never in training\n", synth_colour_names[c]);
			fails++;
		}
	}
	for (int a = 0; a < SYNTH_N_ACTIONS; a++) {
		int any = 0;
		for (int c = 0; c < SYNTH_N_COLOURS; c++)
			any += seen[0][c][a];
		if (!any) {
			printf("FAIL action %s never in training\n", synth_action_names[a]);
			fails++;
		}
	}
	if (pairs < 6) {
		printf("FAIL only %d held-out pairs occur\n", pairs);
		fails++;
	}
	printf("%d events, %d held-out pairs used: %s\n", events, pairs, fails ? "FAILED" : "split is clean");
	return fails ? 1 : 0;
}
