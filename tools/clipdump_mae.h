// clipdump --mae: what a masked autoencoder (trainer --objective mae) makes of clips: per clip a contact
// sheet of the input, its tube mask, the reconstruction, the normalized target and the prediction, and
// the reconstruction loss next to the per-patch-mean baseline over all of them.
#ifndef TOOLS_CLIPDUMP_MAE_H
#define TOOLS_CLIPDUMP_MAE_H
// defines: ClipdumpMae, clipdump_mae

#include <stdint.h> // defines: uint64_t

#include "loader.h"    // defines: LdParams
#include "manifest.h"  // defines: Manifest
#include "text_font.h" // defines: TextFont

typedef struct {
	const char *ckpt;           // the checkpoint file (an --objective mae one)
	const char *out;            // DIR: mae-pos<g>.png per clip and mae.json
	const Manifest *m;          // the clips' manifest
	LdParams p;                 // how they are decoded (frames and size: the model's)
	uint64_t first, last;       // stream positions
	uint64_t seed;              // the masks': the data stream's (a run's masks of position g)
	int scale, sheets, threads; // pixel scale (0: enlarge small frames); sheets written at most; CPU threads
	TextFont *font;
} ClipdumpMae;

// Decodes each position (as loaderd, without flip), masks it as the run would mask position g, runs
// the model on the CPU and writes the sheets and DIR/mae.json ({"clips", "step", "recon_mse",
// "baseline_mse", "ratio", ...}); error slots are skipped and counted. Exits through log_fatalx on a
// checkpoint that is not a masked autoencoder's or cannot be read; returns 0.
int clipdump_mae(const ClipdumpMae *a);

#endif
