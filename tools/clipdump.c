// clipdump: shows what the model will see. Takes clips from a live ring (as rank R's consumer)
// or renders positions of a manifest in-process, and writes each as a PNG contact sheet.
#include "bpe_tokenizer.h"  // defines: bpe_load, bpe_decode, bpe_free
#include "clipdump_sheet.h" // defines: Sheet, sheet_new, sheet_put_frames, sheet_text, sheet_write_png
#include "ld_clip.h"        // defines: ld_sample_load, LdFiles, LdPlan, LdParams
#include "ld_error.h"       // defines: ld_error_name
#include "log.h"            // defines: log_init, log_info, log_fatalx
#include "ring.h"           // defines: ring_open, ring_consumer_attach, ring_consumer_acquire, ...

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
	const char *ring, *manifest, *out, *bpe;
	int rank, count, frames, size, eval, flip;
	long long seed;
	uint64_t first, last;
} Opts;

static void usage(void)
{
	printf("usage: clipdump --ring NAME --rank R --count K --out DIR [--bpe MERGES]\n"
	       "       clipdump --manifest FILE --positions A-B --out DIR [--seed S] [--frames T] [--size N]\n"
	       "                [--eval] [--flip] [--bpe MERGES]\n"
	       "Writes DIR/pos<g>.png: the clip's frames side by side, with position, sample id, crop box and\n"
	       "caption (decoded with --bpe, else token ids) under them; error slots say the error.\n"
	       "With --ring, clipdump is rank R's consumer: run it when no trainer holds that rank.\n");
}

static void caption(const Opts *o, BpeTokenizer *bpe, const int32_t *tok, int n, char *buf, size_t cap)
{
	int len = 0;
	while (len < n && tok[len])
		len++;
	if (bpe && bpe_decode(bpe, tok, len, buf, cap) >= 0)
		return;
	size_t k = (size_t)snprintf(buf, cap, "TOKENS");
	for (int i = 0; i < len && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, " %d", tok[i]);
	(void)o;
}

static void write_sheet(const Opts *o, uint64_t g, const uint8_t *frames, int T, int W, int H, int errcode,
			const char *errtext, uint64_t sample, const uint16_t crop[4], const char *cap)
{
	Sheet s;
	if (sheet_new(&s, T, W, H, 8) != 0)
		log_fatalx("out of memory for a %dx%d sheet", T * W, H);
	char line[1200];
	if (errcode) {
		snprintf(line, sizeof(line), "POSITION %llu SAMPLE %llu ERROR %d (%s) %s", (unsigned long long)g,
			 (unsigned long long)sample, errcode, ld_error_name(errcode), errtext ? errtext : "");
		sheet_text(&s, 0, line);
	} else {
		sheet_put_frames(&s, frames, T, W, H);
		snprintf(line, sizeof(line), "POSITION %llu SAMPLE %llu CROP X=%u Y=%u W=%u H=%u\n%s", (unsigned long long)g,
			 (unsigned long long)sample, crop[0], crop[1], crop[2], crop[3], cap);
		sheet_text(&s, 0, line);
	}
	char path[1024];
	snprintf(path, sizeof(path), "%s/pos%llu.png", o->out, (unsigned long long)g);
	int rc = sheet_write_png(&s, path);
	if (rc)
		log_fatalx("%s: %s", path, strerror(-rc));
	sheet_free(&s);
}

static int from_ring(const Opts *o, BpeTokenizer *bpe)
{
	Ring *r;
	RingConsumer *c;
	char err[256];
	if (ring_open(&r, o->ring, NULL, err, sizeof(err)) != 0)
		log_fatalx("ring %s: %s", o->ring, err);
	RingInfo info;
	ring_info(r, &info);
	int rc = ring_consumer_attach(r, (uint32_t)o->rank, &c);
	if (rc)
		log_fatalx("rank %d of ring %s: %s%s", o->rank, o->ring, strerror(-rc),
			   rc == -EBUSY ? " (a trainer holds it)" : "");
	for (int i = 0; i < o->count; i++) {
		RingSlot s;
		if ((rc = ring_consumer_acquire(c, &s, 60000)) != 0)
			log_fatalx("acquire: %s", strerror(-rc));
		char cap[1024];
		caption(o, bpe, s.text, (int)info.geometry.text_len, cap, sizeof(cap));
		write_sheet(o, s.position, s.payload, (int)info.geometry.frames, (int)info.geometry.width,
			    (int)info.geometry.height, s.flags & RING_SLOT_ERROR ? s.error : 0, NULL, s.sample_id, s.crop,
			    cap);
		ring_consumer_release(c, &s);
	}
	ring_consumer_detach(c);
	ring_close(r);
	log_info("wrote %d sheets from rank %d of ring %s into %s", o->count, o->rank, o->ring, o->out);
	return 0;
}

static int from_manifest(const Opts *o, BpeTokenizer *bpe)
{
	Manifest *m;
	char err[512];
	if (manifest_open(&m, o->manifest, err, sizeof(err)) != 0)
		log_fatalx("manifest %s: %s", o->manifest, err);
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
		uint16_t crop[4] = {(uint16_t)plan.crop.x, (uint16_t)plan.crop.y, (uint16_t)plan.crop.w, (uint16_t)plan.crop.h};
		int32_t tok[512];
		const uint16_t *t16 = manifest_tokens(m, plan.sample);
		for (uint32_t i = 0; i < ctx && i < 512; i++)
			tok[i] = t16 ? t16[i] : 0;
		char cap[1024];
		caption(o, bpe, tok, (int)(ctx < 512 ? ctx : 512), cap, sizeof(cap));
		write_sheet(o, g, clip, p.frames, p.out_w, p.out_h, rc, err, plan.sample, crop, cap);
	}
	log_info("wrote %llu sheets into %s", (unsigned long long)(o->last - o->first + 1), o->out);
	free(clip);
	ld_files_free(&files);
	ld_decoder_free(d);
	manifest_close(m);
	return 0;
}

int main(int argc, char **argv)
{
	log_init("clipdump", LOG_INFO);
	Opts o = {.rank = 0, .count = 1, .frames = 4, .size = 224, .seed = 0, .first = 0, .last = 0};
	int have_pos = 0;
	static const struct option lo[] = {
		{"ring", 1, 0, 'r'},  {"rank", 1, 0, 'k'},  {"count", 1, 0, 'c'}, {"out", 1, 0, 'o'},
		{"manifest", 1, 0, 'm'}, {"positions", 1, 0, 'p'}, {"seed", 1, 0, 's'}, {"frames", 1, 0, 't'},
		{"size", 1, 0, 'z'},  {"eval", 0, 0, 'e'},  {"flip", 0, 0, 'f'},  {"bpe", 1, 0, 'b'},
		{"help", 0, 0, 'h'},  {0, 0, 0, 0}};
	int ch;
	char *end;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'r': o.ring = optarg; break;
		case 'k': o.rank = atoi(optarg); break;
		case 'c': o.count = atoi(optarg); break;
		case 'o': o.out = optarg; break;
		case 'm': o.manifest = optarg; break;
		case 'p':
			o.first = strtoull(optarg, &end, 10);
			o.last = *end == '-' ? strtoull(end + 1, &end, 10) : o.first;
			if (*end || o.last < o.first || o.last - o.first > 100000)
				log_fatalx("--positions %s: want A-B with A <= B (at most 100000 positions)", optarg);
			have_pos = 1;
			break;
		case 's': o.seed = atoll(optarg); break;
		case 't': o.frames = atoi(optarg); break;
		case 'z': o.size = atoi(optarg); break;
		case 'e': o.eval = 1; break;
		case 'f': o.flip = 1; break;
		case 'b': o.bpe = optarg; break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
	}
	if (!o.out || (!o.ring == !o.manifest) || (o.manifest && !have_pos)) {
		usage();
		log_fatalx("need --out and either --ring (with --rank/--count) or --manifest with --positions");
	}
	if (o.count < 1 || o.rank < 0 || o.frames < 1 || o.frames > LD_MAX_FRAMES || o.size < 8 || o.size > 4096)
		log_fatalx("--count >= 1, --rank >= 0, --frames 1..%d, --size 8..4096", LD_MAX_FRAMES);
	mkdir(o.out, 0755);
	ld_libav_quiet();
	BpeTokenizer *bpe = NULL;
	int bad = 0;
	if (o.bpe && bpe_load(&bpe, o.bpe, &bad) != 0)
		log_fatalx("--bpe %s: cannot load (line %d)", o.bpe, bad);
	int rc = o.ring ? from_ring(&o, bpe) : from_manifest(&o, bpe);
	if (bpe)
		bpe_free(bpe);
	return rc;
}
