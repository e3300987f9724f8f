// clipdump: shows what the model will see. Takes clips from a live ring (as rank R's consumer)
// or renders positions of a manifest in-process, and writes PNG contact sheets: one clip per
// sheet, or a grid of several, with captions in UTF-8 (FreeType) or the built-in bitmap font.
#include "bpe.h"            // defines: bpe_load, bpe_decode, bpe_free
#include "avlog.h"          // defines: avlog_install, avlog_summary
#include "clipdump_mae.h"   // defines: ClipdumpMae, clipdump_mae
#include "clipdump_sheet.h" // defines: Sheet, sheet_new, sheet_put_frames, sheet_text, sheet_write_png
#include "eval_model.h"     // defines: eval_config_parse
#include "flags.h"          // defines: FlagSpec, FLAG_AT, FlagTool, flags_tool, flags_tool_usage
#include "fs_dir.h"         // defines: fs_mkdir_p, fs_dir_own
#include "loader.h"         // defines: ld_sample_load, LdFiles, LdPlan, LdParams, ld_error_name
#include "log.h"            // defines: log_init, log_info, log_warnx, log_fatalx
#include "model.h"          // defines: ckpt_latest_path, st_open, st_meta, st_close
#include "ring.h"           // defines: ring_open, ring_consumer_attach, ring_consumer_acquire, ...
#include "run_conf.h"       // defines: run_conf_get
#include "text_font.h"      // defines: TextFont, text_font_open, text_font_bitmap

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
	const char *ring, *manifest, *out, *bpe, *font, *run_dir, *positions;
	int rank, count, frames, size, eval, flip, grid, scale, libav_verbose, help, mae, mae_sheets;
	long long seed; // -1 until given: the run's, else 1
	uint64_t first, last;
} Opts;

static const FlagSpec flag_table[] = {
	{"ring", FLAG_STRPTR, FLAG_AT(Opts, ring), 0, 0, NULL,
	 .help = "read clips from this ring as rank --rank's consumer"},
	{"rank", FLAG_INT, FLAG_AT(Opts, rank), 0, 4095, "0", .help = "the ring rank whose positions are read"},
	{"count", FLAG_INT, FLAG_AT(Opts, count), 1, 1000000, "1", .help = "clips read from the ring"},
	{"manifest", FLAG_STRPTR, FLAG_AT(Opts, manifest), 0, 0, NULL,
	 .help = "read clips from this manifest, decoded as loaderd would (with --ring: only to read the video ids, time "
		 "ranges and vocabulary of the ring's samples)"},
	{"run-dir", FLAG_STRPTR, FLAG_AT(Opts, run_dir), 0, 0, NULL,
	 .help = "take the manifest and data seed from this run of tools/launch.sh, frames and image size from its checkpoint"},
	{"positions", FLAG_STRPTR, FLAG_AT(Opts, positions), 0, 0, NULL,
	 .help = "stream positions A-B (or A) to render"},
	{"seed", FLAG_I64, FLAG_AT(Opts, seed), 0, 9.2e18, NULL,
	 .help = "data stream seed (default: the run's, else 1 as tools/launch.sh)"},
	{"frames", FLAG_INT, FLAG_AT(Opts, frames), 1, LD_MAX_FRAMES, NULL,
	 .help = "frames per clip (default: the run's, else 4)"},
	{"image-size", FLAG_INT, FLAG_AT(Opts, size), 8, 4096, NULL,
	 .help = "clip side in pixels (default: the run's, else 224)"},
	{"eval", FLAG_SWITCH, FLAG_AT(Opts, eval), 0, 0, "0",
	 .help = "evaluation clips (segment midpoints, centre crop)"},
	{"flip", FLAG_SWITCH, FLAG_AT(Opts, flip), 0, 0, "0",
	 .help = "random horizontal flip per clip, as loaderd --flip"},
	{"out", FLAG_STRPTR, FLAG_AT(Opts, out), 0, 0, NULL, .help = "output directory (required)"},
	{"grid", FLAG_INT, FLAG_AT(Opts, grid), 1, 256, "1", .help = "clips per sheet, one per row"},
	{"scale", FLAG_INT, FLAG_AT(Opts, scale), 0, 16, "0",
	 .help = "each frame pixel drawn as an N x N block (0: small frames enlarged to at least 128 pixels high)"},
	{"bpe", FLAG_STRPTR, FLAG_AT(Opts, bpe), 0, 0, NULL,
	 .help = "merges to decode captions (default bpe_merges.txt next to the manifest)"},
	{"font", FLAG_STRPTR, FLAG_AT(Opts, font), 0, 0, NULL,
	 .help = "caption font (default $AVCLIP_FONT or " TEXT_FONT_DEFAULT ")"},
	{"mae", FLAG_SWITCH, FLAG_AT(Opts, mae), 0, 0, "0",
	 .help = "with --run-dir of a trainer --objective mae run: its reconstructions (input, tube mask, reconstruction, "
		 "normalized target and prediction per clip) and the reconstruction loss against the per-patch-mean "
		 "baseline over the positions (DIR/mae.json)"},
	{"mae-sheets", FLAG_INT, FLAG_AT(Opts, mae_sheets), 0, 100000, "16",
	 .help = "--mae: contact sheets of the first N positions (the loss covers them all)"},
	{"libav-verbose", FLAG_SWITCH, FLAG_AT(Opts, libav_verbose), 0, 0, "0",
	 .help = "every message of libav as it says it (default: each kind once, with a count at the end; AVCLIP_AV_LOG=1 "
		 "does the same)"},
	{"help", FLAG_SWITCH, FLAG_AT(Opts, help), 0, 0, "0", .help = "this text", .alias = 'h'},
};
enum { N_FLAGS = sizeof flag_table / sizeof flag_table[0] };

// the sheet being filled: o->grid rows, one clip each; the error slots seen, by code
typedef struct {
	Sheet s;
	TextFont *font;
	const Manifest *m; // the samples' manifest (video ids and times), or NULL
	FILE *index;       // DIR/clips.txt: each clip's text, one line
	int rows, files, scale;
	uint64_t g0, g1, clips, errors, by_code[LD_ERR_COUNT + 1];
} Page;

static const FlagTool tool = {
	"clipdump",
	"usage: clipdump --ring NAME --rank R --count K --out DIR [--grid G] [--bpe MERGES] [--font FILE]\n"
	"       clipdump --manifest FILE --positions A-B --out DIR [--seed S] [--frames T] [--image-size N]\n"
	"                [--eval] [--flip] [--grid G] [--bpe MERGES] [--font FILE]\n"
	"       clipdump --run-dir RUN --positions A-B --out DIR [--grid G] ...\n"
	"       clipdump --ring NAME --manifest FILE ... (video ids, times and vocabulary of the ring's samples)\n"
	"       clipdump --run-dir RUN --mae --positions A-B --out DIR [--manifest HELDOUT] [--eval]\n"
	"Writes DIR/pos<g>.png (DIR is made if missing; DIR/clips.txt has each clip's text as one line):\n"
	"the clip's frames side by side, with position,\n"
	"sample id, video id and time range (or image), crop box and caption (decoded with --bpe or the\n"
	"manifest's bpe_merges.txt, else token ids) under them; error slots say the error on the sheet and\n"
	"on the console, with a count by error at the end. --grid G\n"
	"puts G clips on a sheet, one per row (DIR/grid<first>-<last>.png). Captions are drawn in UTF-8\n"
	"through FreeType; without FreeType or the font, in the built-in bitmap font (ASCII, upper case).\n"
	"With --ring, clipdump is rank R's consumer: run it when no trainer holds that rank.\n"
	"--mae (an --objective mae run): DIR/mae-pos<g>.png, the clip, its tube mask (the run's for position g),\n"
	"the reconstruction, the normalized target and the prediction, and DIR/mae.json with the reconstruction\n"
	"MSE over the positions next to the per-patch-mean baseline's (predicting each tubelet's mean).\n",
	flag_table, N_FLAGS};

static void caption(BpeTokenizer *bpe, const int32_t *tok, int n, char *buf, size_t cap)
{
	int len = 0;
	while (len < n && tok[len])
		len++;
	if (bpe && bpe_decode(bpe, tok, len, buf, cap) >= 0)
		return;
	size_t k = (size_t)snprintf(buf, cap, "TOKENS");
	for (int i = 0; i < len && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, " %d", tok[i]);
}

static void page_flush(const Opts *o, Page *pg)
{
	if (!pg->rows)
		return;
	char path[1024];
	if (o->grid == 1)
		snprintf(path, sizeof(path), "%s/pos%llu.png", o->out, (unsigned long long)pg->g0);
	else
		snprintf(path, sizeof(path), "%s/grid%llu-%llu.png", o->out, (unsigned long long)pg->g0,
			 (unsigned long long)pg->g1);
	pg->s.h = pg->rows * pg->s.row_h; // a last, partial grid is cut after its rows
	int rc = sheet_write_png(&pg->s, path);
	if (rc)
		log_fatalx("%s: %s", path, strerror(-rc));
	sheet_free(&pg->s);
	pg->rows = 0;
	pg->files++;
}

// where sample i comes from: "video ID 12.40-14.00 s" or "image SHARD @OFFSET" ("" without a manifest)
static void sample_source(const Manifest *m, uint64_t i, char *buf, size_t cap)
{
	buf[0] = 0;
	const ManifestSample *s = m && i < manifest_header(m)->n_samples ? manifest_sample(m, i) : NULL;
	if (!s)
		return;
	if (s->kind == MANIFEST_KIND_IMAGE) {
		const ManifestShard *sh = manifest_shard(m, s->source);
		const char *path = sh ? manifest_string(m, sh->path_off) : "", *base = strrchr(path, '/');
		snprintf(buf, cap, " image %s @%llu", base ? base + 1 : path, (unsigned long long)s->image.offset);
		return;
	}
	const ManifestVideo *v = manifest_video(m, s->source);
	const ManifestChunk *a = manifest_chunk(m, s->clip.chunk_first), *b = manifest_chunk(m, s->clip.chunk_last);
	if (!v || !a || !b || !a->fps_num || !b->fps_num)
		return;
	double t0 = a->start_ms / 1e3 + (double)s->clip.frame_begin * a->fps_den / a->fps_num;
	double t1 = b->start_ms / 1e3 + (double)s->clip.frame_end * b->fps_den / b->fps_num;
	snprintf(buf, cap, " video %s %.2f-%.2f s", manifest_string(m, v->name_off), t0, t1);
}

static void page_add(const Opts *o, Page *pg, uint64_t g, const uint8_t *frames, int T, int W, int H, int errcode,
		     const char *errtext, uint64_t sample, const uint16_t crop[4], const char *cap)
{
	if (!pg->scale) // small frames enlarged to at least 128 pixels high, by a whole factor
		pg->scale = o->scale ? o->scale : H >= 128 ? 1 : (127 + H) / H > 8 ? 8 : (127 + H) / H;
	if (!pg->rows &&
	    sheet_new(&pg->s, o->grid, T, W * pg->scale, H * pg->scale, o->grid > 1 ? 4 : 6, pg->font) != 0)
		log_fatalx("out of memory for a %dx%d sheet of %d clips", T * W * pg->scale, H * pg->scale, o->grid);
	if (!pg->rows)
		pg->g0 = g;
	pg->g1 = g;
	pg->clips++;
	char line[1400], src[300];
	sample_source(pg->m, sample, src, sizeof src);
	if (errcode) {
		snprintf(line, sizeof(line), "position %llu sample %llu%s ERROR %d (%s) %s", (unsigned long long)g,
			 (unsigned long long)sample, src, errcode, ld_error_name(errcode), errtext ? errtext : "");
		log_warnx("%s", line); // not only inside the PNG
		pg->errors++;
		pg->by_code[errcode > 0 && errcode < LD_ERR_COUNT ? errcode : LD_ERR_COUNT]++;
	} else {
		sheet_put_frames(&pg->s, pg->rows, frames, T, W, H, pg->scale);
		snprintf(line, sizeof(line), "position %llu sample %llu%s crop x=%u y=%u w=%u h=%u\n%s",
			 (unsigned long long)g, (unsigned long long)sample, src, crop[0], crop[1], crop[2], crop[3],
			 cap);
	}
	sheet_text(&pg->s, pg->rows, 0, line);
	for (char *nl = strchr(line, '\n'); nl; nl = strchr(nl, '\n'))
		*nl = '\t';
	fprintf(pg->index, "%s\n", line);
	if (++pg->rows == o->grid)
		page_flush(o, pg);
}

// the console's count of error slots, by error ("" when there were none)
static void error_summary(const Page *pg)
{
	if (!pg->errors) {
		log_info("no error slots among the %llu clips", (unsigned long long)pg->clips);
		return;
	}
	char by[512];
	size_t n = 0;
	by[0] = 0;
	for (int c = 1; c <= LD_ERR_COUNT && n < sizeof by; c++)
		if (pg->by_code[c])
			n += (size_t)snprintf(by + n, sizeof by - n, "%s%llu %s", n ? ", " : "",
					      (unsigned long long)pg->by_code[c],
					      c < LD_ERR_COUNT ? ld_error_name(c) : "unknown");
	log_warnx("%llu of %llu clips are error slots (%s): their sheets say which sample and why",
		  (unsigned long long)pg->errors, (unsigned long long)pg->clips, by);
}

static int from_ring(const Opts *o, BpeTokenizer *bpe, Page *pg)
{
	Ring *r;
	RingConsumer *c;
	char err[256];
	if (ring_open(&r, o->ring, NULL, err, sizeof(err)) != 0)
		log_fatalx("ring %s: %s", o->ring, err);
	RingInfo info;
	ring_info(r, &info);
	if (info.geometry.channels != 3)
		log_fatalx("ring %s holds %u channels per pixel; contact sheets show RGB (3)", o->ring,
			   info.geometry.channels);
	int rc = ring_consumer_attach(r, (uint32_t)o->rank, &c);
	if (rc)
		log_fatalx("rank %d of ring %s: %s%s", o->rank, o->ring,
			   rc == -EPROTO ? "the ring is damaged" : strerror(-rc),
			   rc == -EBUSY ? " (a trainer holds it)" : "");
	for (int i = 0; i < o->count; i++) {
		RingSlot s;
		if ((rc = ring_consumer_acquire(c, &s, 60000)) != 0)
			log_fatalx("ring %s: acquire: %s", o->ring,
				   rc == -EPROTO
					   ? "the ring is damaged (a slot holds a position no sound ring can have)"
					   : strerror(-rc));
		char cap[1024];
		caption(bpe, s.text, (int)info.geometry.text_len, cap, sizeof(cap));
		page_add(o, pg, s.position, s.payload, (int)info.geometry.frames, (int)info.geometry.width,
			 (int)info.geometry.height, s.flags & RING_SLOT_ERROR ? s.error : 0, NULL, s.sample_id, s.crop,
			 cap);
		ring_consumer_release(c, &s);
	}
	page_flush(o, pg);
	ring_consumer_detach(c);
	ring_close(r);
	log_info("wrote %d clips on %d sheets from rank %d of ring %s into %s", o->count, pg->files, o->rank, o->ring,
		 o->out);
	error_summary(pg);
	return 0;
}

static int from_manifest(const Opts *o, BpeTokenizer *bpe, Page *pg, Manifest *m)
{
	char err[512];
	LdParams p;
	ld_params_default(&p);
	p.seed = (uint64_t)o->seed;
	p.frames = o->frames;
	p.out_w = p.out_h = o->size;
	p.train = !o->eval;
	p.flip = o->flip;
	LdDecoder *d;
	if (ld_decoder_new(&d) != 0)
		log_fatalx("out of memory");
	LdFiles files = {0};
	uint8_t *clip = malloc((size_t)p.frames * p.out_w * p.out_h * 3);
	if (!clip)
		log_fatalx("out of memory");
	uint32_t ctx = manifest_header(m)->context;
	for (uint64_t g = o->first; g <= o->last; g++) {
		LdPlan plan;
		int rc = -ld_sample_load(d, &files, m, g, &p, &plan, clip, err, sizeof(err));
		uint16_t crop[4] = {(uint16_t)plan.crop.x, (uint16_t)plan.crop.y, (uint16_t)plan.crop.w,
				    (uint16_t)plan.crop.h};
		int32_t tok[512];
		const uint16_t *t16 = manifest_tokens(m, plan.sample);
		for (uint32_t i = 0; i < ctx && i < 512; i++)
			tok[i] = t16 ? t16[i] : 0;
		char cap[1024];
		caption(bpe, tok, (int)(ctx < 512 ? ctx : 512), cap, sizeof(cap));
		page_add(o, pg, g, clip, p.frames, p.out_w, p.out_h, rc, err, plan.sample, crop, cap);
	}
	page_flush(o, pg);
	log_info("wrote %llu clips on %d sheets into %s", (unsigned long long)(o->last - o->first + 1), pg->files,
		 o->out);
	error_summary(pg);
	free(clip);
	ld_files_free(&files);
	ld_decoder_free(d);
	return 0;
}

// --run-dir: the run's manifest and data seed (launch.conf), and frames and size of the model
// its last checkpoint was written for, each unless given on the command line
static void from_run_dir(Opts *o)
{
	static char manifest[4096];
	char seed[32], ck[4200], path[4400], err[512];
	int rc;
	if (!o->manifest) {
		if ((rc = run_conf_get(o->run_dir, "MANIFEST", manifest, sizeof manifest)) < 0)
			log_fatalx("--run-dir %s: no manifest in its launch.conf (%s)", o->run_dir,
				   rc == -ENOENT ? "there is no launch.conf" : strerror(-rc));
		o->manifest = manifest;
	}
	if (o->seed < 0 && run_conf_get(o->run_dir, "SEED", seed, sizeof seed) == 0)
		o->seed = atoll(seed);
	if (o->frames && o->size)
		return;
	snprintf(ck, sizeof ck, "%s/ckpt", o->run_dir);
	StFile *f;
	ModelConfig mc;
	if (ckpt_latest_path(ck, path, sizeof path, err, sizeof err) < 0)
		log_fatalx("--run-dir %s: %s (give --frames and --image-size)", o->run_dir, err);
	if ((rc = st_open(&f, path)) < 0)
		log_fatalx("--run-dir %s: cannot read %s: %s", o->run_dir, path, strerror(-rc));
	const char *meta = st_meta(f, "avclip.model");
	if (!meta || eval_config_parse(meta, &mc) < 0)
		log_fatalx("--run-dir %s: %s names no readable model configuration (give --frames and --image-size)",
			   o->run_dir, path);
	st_close(f);
	if (!o->frames)
		o->frames = mc.frames;
	if (!o->size)
		o->size = mc.image_size;
	log_info("the run's model: %d frames of %dx%d (from %s)", o->frames, o->size, o->size, path);
}

// the captions' font: a real one through FreeType, else the bitmap font, saying why
static TextFont *caption_font(const Opts *o)
{
	TextFont *f;
	int rc = text_font_open(&f, o->font, 13);
	if (rc == 0)
		return f;
	if (o->font && rc != -ENOTSUP)
		log_fatalx("--font %s: %s", o->font, rc == -ENOENT ? "no such file" : "FreeType cannot read it");
	log_info("captions in the built-in bitmap font (ASCII, upper case): %s",
		 rc == -ENOTSUP  ? "this build has no FreeType (apt install libfreetype-dev, then make config)"
		 : rc == -ENOENT ? "no font file (apt install fonts-dejavu-core, or --font FILE)"
				 : "FreeType cannot read the font");
	return text_font_bitmap(1);
}

// --mae: the run's latest checkpoint on the positions of the manifest
static int mae_sheets(const Opts *o, Manifest *m)
{
	char dir[4200], path[4400], err[512];
	snprintf(dir, sizeof dir, "%s/ckpt", o->run_dir);
	if (ckpt_latest_path(dir, path, sizeof path, err, sizeof err) < 0)
		log_fatalx("--mae: %s", err);
	ClipdumpMae a = {.ckpt = path,
			 .out = o->out,
			 .m = m,
			 .first = o->first,
			 .last = o->last,
			 .seed = (uint64_t)o->seed,
			 .scale = o->scale,
			 .sheets = o->mae_sheets,
			 .threads = 0,
			 .font = caption_font(o)};
	ld_params_default(&a.p);
	a.p.seed = (uint64_t)o->seed;
	a.p.frames = o->frames;
	a.p.out_w = a.p.out_h = o->size;
	a.p.train = !o->eval;
	int rc = clipdump_mae(&a);
	text_font_close(a.font);
	manifest_close(m);
	return rc;
}

// bpe_merges.txt next to the manifest, as tools/eval and tools/prep keep it
static const char *default_bpe(const char *manifest)
{
	static char path[4200];
	const char *slash = strrchr(manifest, '/');
	snprintf(path, sizeof path, "%.*sbpe_merges.txt", slash ? (int)(slash - manifest + 1) : 0, manifest);
	return access(path, R_OK) == 0 ? path : NULL;
}

int main(int argc, char **argv)
{
	log_init("clipdump", LOG_INFO);
	Opts o = {.seed = -1};
	char err[400], *end;
	flags_tool(&tool, &o, argc, argv, NULL);
	if (o.positions) {
		o.first = strtoull(o.positions, &end, 10);
		o.last = *end == '-' ? strtoull(end + 1, &end, 10) : o.first;
		if (*end || end == o.positions || o.last < o.first || o.last - o.first > 100000)
			log_fatalx("--positions %s: want A-B with A <= B (at most 100000 positions)", o.positions);
	}
	if (o.run_dir && o.ring)
		log_fatalx("--run-dir renders the run's manifest; a running job's ring ranks are held by its trainers");
	if (o.mae && (!o.run_dir || o.ring || o.flip))
		log_fatalx(
			"--mae needs --run-dir (the run whose checkpoint reconstructs) and takes neither --ring nor --flip");
	if (o.run_dir)
		from_run_dir(&o);
	if (o.seed < 0)
		o.seed = 1;
	if (!o.frames)
		o.frames = 4;
	if (!o.size)
		o.size = 224;
	if (!o.out || (!o.ring && !o.manifest) || (!o.ring && !o.positions)) {
		flags_tool_usage(&tool, stderr);
		log_fatalx(
			"need --out and either --ring (with --rank/--count) or --manifest/--run-dir with --positions");
	}
	int rc = fs_mkdir_p(o.out, 0755);
	if (rc < 0)
		log_fatalx("--out %s: cannot make it: %s", o.out, strerror(-rc));
	char own[1024]; // the pictures are written there by name
	if (fs_dir_own(o.out, "--out", own, sizeof own) < 0)
		log_fatalx("%s", own);
	avlog_install(o.libav_verbose);
	atexit(avlog_summary); // error slots: libav's messages once per kind, counted at the end
	Manifest *m = NULL;
	if (o.manifest && manifest_open_verified(&m, o.manifest, err, sizeof err) != 0)
		log_fatalx("manifest %s: %s", o.manifest, err);
	if (!o.bpe && o.manifest)
		o.bpe = default_bpe(o.manifest);
	BpeTokenizer *bpe = NULL;
	int bad = 0;
	if (o.bpe && bpe_load(&bpe, o.bpe, &bad) != 0)
		log_fatalx("--bpe %s: cannot load (line %d)", o.bpe, bad);
	if (bpe && m) { // captions decoded with another vocabulary would read as other words
		uint64_t have;
		if (manifest_vocab(m, &have, NULL, 0) && have != bpe_vocab_hash(bpe))
			log_fatalx(
				"--bpe %s is another vocabulary (bpe %016llx) than the one %s was tokenized with (bpe "
				"%016llx): give the merges file it was prepared with (its bpe_merges.txt)",
				o.bpe, (unsigned long long)bpe_vocab_hash(bpe), o.manifest, (unsigned long long)have);
	}
	if (o.mae) {
		if (bpe)
			bpe_free(bpe);
		return mae_sheets(&o, m);
	}
	char index[4200];
	snprintf(index, sizeof index, "%s/clips.txt", o.out);
	Page pg = {.font = caption_font(&o), .m = m, .index = fopen(index, "w")};
	if (!pg.index)
		log_fatal("cannot write %s", index);
	rc = o.ring ? from_ring(&o, bpe, &pg) : from_manifest(&o, bpe, &pg, m);
	if (fclose(pg.index))
		log_fatal("writing %s", index);
	text_font_close(pg.font);
	if (m)
		manifest_close(m);
	if (bpe)
		bpe_free(bpe);
	return rc;
}
