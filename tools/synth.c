// tools/synth: makes a synthetic video-caption dataset from a seed (shapes that appear,
// move, grow, shrink, rotate, disappear, narrated with timestamps) plus image-text shards.
#include "flags.h"       // defines: FlagSpec, FLAG_AT, FlagTool, flags_tool, flags_tool_usage, flags_renamed_used
#include "log.h"         // defines: log_init, log_info, log_fatal, ...
#include "prep_encode.h" // defines: prep_encoder_open, prep_encoder_write, prep_encoder_close
#include "synth.h"       // defines: synth_timeline_make, synth_render_frame, synth_png_encode, ...
#include "tar.h"         // defines: TarWriter, tar_open, tar_add, tar_close

#include <errno.h>
#include <libavutil/log.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
	const char *out;
	int videos, heldout, fps, gop, w, h, images, heldout_images, shard_size;
	double minutes;
	uint64_t seed;
	const char *size;     // --size WxH, into w and h
	const char *fps_text; // --fps, into fps
	char world_name[8];   // --world
	const SynthWorld *world;
	int labels; // --write-labels: DIR/{train,heldout}-labels.csv and DIR/classes-{action,object}.txt
	int help;
} SynthOpts;

static const FlagSpec flag_table[] = {
	{"out", FLAG_STRPTR, FLAG_AT(SynthOpts, out), 0, 0, NULL, .help = "output directory (required)"},
	{"videos", FLAG_INT, FLAG_AT(SynthOpts, videos), 0, 100000, "4", .help = "training videos"},
	{"heldout", FLAG_INT, FLAG_AT(SynthOpts, heldout), 0, 100000, "2",
	 .help = "held-out videos, captioning only the combinations training never sees"},
	{"world", FLAG_CHOICE, FLAG_AT(SynthOpts, world_name), 0, 0, "basic",
	 .help = "basic: 6 colours, 3 shapes, 7 actions, one shape on a plain gradient, colour x action pairs held out "
		 "(the demo's); hard: 10 colours, 6 shapes, 10 actions, an uncaptioned distractor shape beside the actor, "
		 "a textured background tinted per video, colour x shape x action triples held out (every pair of them "
		 "seen in training): retrieval far from both chance and 100%; compose (images only: --videos 0 --heldout 0 "
		 "--images N): two captioned objects, one large and one small, one left of or above the other, beside an "
		 "uncaptioned distractor on a textured background ('a large red circle left of a small blue square'), "
		 "held-out images holding a (colour, shape) object training never shows",
	 .choices = "basic|hard|compose"},
	{"minutes", FLAG_DOUBLE, FLAG_AT(SynthOpts, minutes), 0, 600, "1",
	 .help = "length of each video in minutes (7 s or more: one event)"},
	{"size", FLAG_STRPTR, FLAG_AT(SynthOpts, size), 0, 0, "320x180",
	 .help = "frame size WxH, even numbers from 64 to 4096"},
	{"fps", FLAG_STRPTR, FLAG_AT(SynthOpts, fps_text), 0, 0, "15",
	 .help = "frames per second, a whole number from 1 to 240 (text, as prep's N/D --fps)"},
	{"gop", FLAG_INT, FLAG_AT(SynthOpts, gop), 1, 100000, NULL,
	 .help = "keyframe interval of the source videos in frames (default 2 s)"},
	{"scene-seed", FLAG_U64, FLAG_AT(SynthOpts, seed), 0, 0, "1",
	 .help = "seed of the generated videos and captions: everything follows from it (--seed elsewhere is the data "
		 "stream's)"},
	{"seed", FLAG_U64, FLAG_AT(SynthOpts, seed), 0, 0, NULL, .renamed = "scene-seed"},
	{"images", FLAG_INT, FLAG_AT(SynthOpts, images), 0, 100000000, "0",
	 .help = "image-text pairs for the training shards"},
	{"heldout-images", FLAG_INT, FLAG_AT(SynthOpts, heldout_images), 0, 100000000, NULL,
	 .help = "image-text pairs for the held-out shards, of combinations the training images never show (default: "
		 "a quarter of --images, at least 1)"},
	{"shard-size", FLAG_INT, FLAG_AT(SynthOpts, shard_size), 1, 100000000, "1000", .help = "images per tar shard"},
	{"write-labels", FLAG_SWITCH, FLAG_AT(SynthOpts, labels), 0, 0, "0",
	 .help = "also DIR/train-labels.csv and DIR/heldout-labels.csv (prep --format labels-csv: video,start,end,label,"
		 "label2 = each caption's action and shape) and DIR/classes-action.txt, DIR/classes-object.txt (every "
		 "world's names in one order, so both splits and both worlds number classes alike)"},
	{"help", FLAG_SWITCH, FLAG_AT(SynthOpts, help), 0, 0, "0", .help = "this text", .alias = 'h'},
};
enum { N_FLAGS = sizeof flag_table / sizeof flag_table[0] };

static const FlagTool tool = {
	"synth",
	"usage: synth --out DIR [flags]\n"
	"Makes DIR/videos/*.mp4 with DIR/train.csv and DIR/heldout.csv (video,start,end,caption),\n"
	"and with --images N, DIR/shards/{train,heldout}-NNNNN.tar (key.png + key.txt); with --write-labels,\n"
	"DIR/{train,heldout}-labels.csv and DIR/classes-{action,object}.txt for prep --format labels-csv.\n",
	flag_table, N_FLAGS};

static void mkdir_p(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		log_fatal("mkdir %s", buf);
}

// renders and encodes one video, writes its caption lines to csv
// the action class of an event: synth_action_names, then appears and disappears (classes-action.txt)
static const char *event_action(const SynthEvent *e)
{
	return e->kind == -1 ? "appears" : e->kind == -2 ? "disappears" : synth_action_names[e->kind];
}

// DIR/NAME written through NAME.tmp: the open file (*tmp holds the temporary path)
static FILE *open_out(const char *out, const char *name, char *tmp, size_t len)
{
	snprintf(tmp, len, "%s/%s.tmp", out, name);
	FILE *f = fopen(tmp, "w");
	if (!f)
		log_fatal("%s", tmp);
	return f;
}

// closes f and renames its temporary tmp to DIR/NAME
static void close_out(FILE *f, const char *tmp)
{
	char path[4200];
	snprintf(path, sizeof path, "%.*s", (int)(strlen(tmp) - 4), tmp);
	if (fclose(f) != 0 || rename(tmp, path) < 0)
		log_fatal("%s", path);
}

// classes-action.txt and classes-object.txt: the largest world's names, one a line, in one order
static void write_classes(const char *out)
{
	char tmp[4200];
	FILE *f = open_out(out, "classes-action.txt", tmp, sizeof tmp);
	for (int a = 0; a < SYNTH_N_ACTIONS; a++)
		fprintf(f, "%s\n", synth_action_names[a]);
	fprintf(f, "appears\ndisappears\n");
	close_out(f, tmp);
	f = open_out(out, "classes-object.txt", tmp, sizeof tmp);
	for (int s = 0; s < SYNTH_N_SHAPES; s++)
		fprintf(f, "%s\n", synth_shape_names[s]);
	close_out(f, tmp);
}

// lab: NULL, or the labels CSV that gets one row (action, shape) per caption row
static void make_video(const SynthOpts *o, int heldout, int index, FILE *csv, FILE *lab)
{
	char id[64], path[4096], tmp[4200];
	snprintf(id, sizeof(id), "%s-%04d", heldout ? "heldout" : "train", index);
	snprintf(path, sizeof(path), "%s/videos/%s.mp4", o->out, id);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	SynthTimeline tl;
	if (synth_timeline_make(&tl, o->world, o->seed, heldout, index, o->minutes * 60, o->w, o->h))
		log_fatalx("out of memory");
	for (int i = 0; i < tl.n; i++)
		if (tl.ev[i].captioned) {
			const SynthEvent *e = &tl.ev[i];
			fprintf(csv, "%s,%.2f,%.2f,%s\n", id, e->start, e->end, e->caption);
			if (lab)
				fprintf(lab, "%s,%.2f,%.2f,%s,%s\n", id, e->start, e->end, event_action(e),
					synth_shape_names[e->from.shape]);
		}
	PrepEncodeOpts eo = {.width = o->w,
			     .height = o->h,
			     .fps_num = o->fps,
			     .fps_den = 1,
			     .gop = o->gop,
			     .crf = 23,
			     .preset = "veryfast",
			     .faststart = 0,
			     .bframes = 2};
	PrepEncoder *e;
	int rc = prep_encoder_open(&e, tmp, &eo);
	if (rc < 0)
		log_fatalx("%s: cannot open H.264 encoder: %s", tmp, av_err2str(rc));
	AVFrame *f = av_frame_alloc();
	if (!f)
		log_fatalx("out of memory");
	f->format = AV_PIX_FMT_YUV420P, f->width = o->w, f->height = o->h;
	if (av_frame_get_buffer(f, 0) < 0)
		log_fatalx("out of memory");
	SynthFrame sf = {o->w, o->h, malloc((size_t)o->w * o->h), malloc((size_t)o->w * o->h / 4),
			 malloc((size_t)o->w * o->h / 4)};
	if (!sf.y || !sf.u || !sf.v)
		log_fatalx("out of memory");
	int64_t n = (int64_t)(o->minutes * 60 * o->fps + 0.5);
	for (int64_t i = 0; i < n; i++) {
		synth_render_frame(&tl, (double)i / o->fps, &sf);
		if (av_frame_make_writable(f) < 0)
			log_fatalx("out of memory");
		for (int y = 0; y < o->h; y++)
			memcpy(f->data[0] + (size_t)y * f->linesize[0], sf.y + (size_t)y * o->w, (size_t)o->w);
		for (int y = 0; y < o->h / 2; y++) {
			memcpy(f->data[1] + (size_t)y * f->linesize[1], sf.u + (size_t)y * (o->w / 2),
			       (size_t)o->w / 2);
			memcpy(f->data[2] + (size_t)y * f->linesize[2], sf.v + (size_t)y * (o->w / 2),
			       (size_t)o->w / 2);
		}
		if ((rc = prep_encoder_write(e, f)) < 0)
			log_fatalx("%s: encode: %s", tmp, av_err2str(rc));
	}
	if ((rc = prep_encoder_close(e, NULL)) < 0)
		log_fatalx("%s: finish: %s", tmp, av_err2str(rc));
	if (rename(tmp, path) < 0)
		log_fatal("rename %s", tmp);
	av_frame_free(&f);
	free(sf.y), free(sf.u), free(sf.v);
	synth_timeline_free(&tl);
	log_info("%s: %lld frames, %.0f s", path, (long long)n, o->minutes * 60);
}

// the basic world's image: one shape; colour x shape pairs with (colour + 2 shape) % 5 == 0 are
// held out, as for videos; the caption says where it is when it is not in the middle third
static int basic_image(const SynthWorld *wd, SynthRng *r, int heldout, int w, int h, uint8_t *rgb, char *cap, size_t cn)
{
	SynthShape s = {.alpha = 1};
	do {
		s.colour = synth_rng_range(r, 0, wd->colours - 1);
		s.shape = synth_rng_range(r, 0, wd->shapes - 1);
	} while (((s.colour + 2 * s.shape) % 5 == 0) != heldout);
	s.size = synth_rng_range(r, h / 4, h / 2);
	s.x = synth_rng_range(r, (int)(s.size * 0.75) + 1, w - (int)(s.size * 0.75) - 1);
	s.y = synth_rng_range(r, (int)(s.size * 0.75) + 1, h - (int)(s.size * 0.75) - 1);
	s.angle = synth_rng_range(r, 0, 89);
	synth_render_image(&s, w, h, rgb);
	const char *where = s.x < w / 3 ? " on the left" : s.x > 2 * w / 3 ? " on the right" : "";
	return snprintf(cap, cn, "a %s %s%s", synth_colour_names[s.colour], synth_shape_names[s.shape], where);
}

// the hard world's image: a shape beside an uncaptioned distractor on a textured background; the
// caption names colour, shape and third of the frame, and (colour + 2 shape + 3 third) % 7 == 0
// triples are held out (each of their pairs is seen in training)
static int hard_image(const SynthWorld *wd, SynthRng *r, int heldout, int w, int h, uint8_t *rgb, char *cap, size_t cn)
{
	static const char *const where[3] = {"on the left", "in the middle", "on the right"};
	SynthShape s = {.alpha = 1};
	int third;
	do {
		s.colour = synth_rng_range(r, 0, wd->colours - 1);
		s.shape = synth_rng_range(r, 0, wd->shapes - 1);
		s.size = synth_rng_range(r, h / 4, h / 2);
		s.x = synth_rng_range(r, (int)(s.size * 0.75) + 1, w - (int)(s.size * 0.75) - 1);
		third = s.x < w / 3 ? 0 : s.x > 2 * w / 3 ? 2 : 1;
	} while (((s.colour + 2 * s.shape + 3 * third) % 7 == 0) != heldout);
	s.y = synth_rng_range(r, (int)(s.size * 0.75) + 1, h - (int)(s.size * 0.75) - 1);
	s.angle = synth_rng_range(r, 0, 89);
	SynthShape d = synth_distractor(&s, wd, w, h, r);
	d.alpha = 1;
	SynthTimeline bg = {0};
	synth_texture_draw(&bg, r);
	synth_render_textured(&bg, w, h, rgb);
	synth_paint(&d, w, h, rgb);
	synth_paint(&s, w, h, rgb);
	return snprintf(cap, cn, "a %s %s %s", synth_colour_names[s.colour], synth_shape_names[s.shape], where[third]);
}

// image-text pairs: one captioned shape per image; held-out images use held-out combinations
static void make_images(const SynthOpts *o, int heldout, int count)
{
	SynthRng r;
	synth_rng_seed(&r, o->seed, 0x1000000000ull + (uint64_t)heldout);
	int w = o->h, h = o->h; // square images of the video height
	uint8_t *rgb = malloc((size_t)w * h * 3);
	if (!rgb)
		log_fatalx("out of memory");
	TarWriter tar = {0};
	int shard = -1;
	for (int i = 0; i < count; i++) {
		if (i % o->shard_size == 0) {
			if (shard >= 0 && tar_close(&tar))
				log_fatal("closing shard");
			char path[4096];
			snprintf(path, sizeof(path), "%s/shards/%s-%05d.tar", o->out, heldout ? "heldout" : "train",
				 ++shard);
			if (tar_open(&tar, path))
				log_fatal("%s", path);
		}
		char name[64], cap[128];
		int n;
		if (o->world->compose) {
			SynthCompose sc;
			synth_compose_make(o->world, &r, heldout, w, h, &sc);
			synth_compose_render(&sc, w, h, rgb);
			n = snprintf(cap, sizeof cap, "%s", sc.caption);
		} else {
			n = o->world->triples ? hard_image(o->world, &r, heldout, w, h, rgb, cap, sizeof cap)
					      : basic_image(o->world, &r, heldout, w, h, rgb, cap, sizeof cap);
		}
		uint8_t *png;
		size_t len;
		if (synth_png_encode(rgb, w, h, &png, &len) < 0)
			log_fatalx("PNG encoder failed");
		snprintf(name, sizeof(name), "%08d.png", i);
		if (tar_add(&tar, name, png, len, NULL))
			log_fatalx("writing shard");
		snprintf(name, sizeof(name), "%08d.txt", i);
		if (tar_add(&tar, name, cap, (size_t)n, NULL))
			log_fatalx("writing shard");
		free(png);
	}
	if (shard >= 0 && tar_close(&tar))
		log_fatal("closing shard");
	free(rgb);
	log_info("%d %s images in %d shard(s)", count, heldout ? "held-out" : "training", shard + 1);
}

int main(int argc, char **argv)
{
	log_init("synth", LOG_INFO);
	av_log_set_level(getenv("AVCLIP_AV_LOG") ? AV_LOG_INFO : AV_LOG_ERROR); // libx264 banners otherwise
	SynthOpts o = {.gop = -1, .heldout_images = -1};
	char err[300];
	flags_tool(&tool, &o, argc, argv, NULL);
	if (flags_renamed_used(flag_table, N_FLAGS, argc, argv, err, sizeof err))
		log_warnx("%s", err);
	if (!o.out) {
		flags_tool_usage(&tool, stderr);
		return 2;
	}
	o.world = synth_world_find(o.world_name); // the table's choices are the worlds
	char tail;
	if (sscanf(o.size, "%dx%d%c", &o.w, &o.h, &tail) != 2)
		log_fatalx("--size wants WxH, got '%s'", o.size);
	if (o.w < 64 || o.h < 64 || o.w % 2 || o.h % 2 || o.w > 4096 || o.h > 4096)
		log_fatalx("--size %dx%d: want even sizes from 64 to 4096", o.w, o.h);
	char *end;
	long fps = strtol(o.fps_text, &end, 10);
	if (*end || end == o.fps_text || fps < 1 || fps > 240)
		log_fatalx("--fps wants a whole number of frames per second from 1 to 240, got '%s'", o.fps_text);
	o.fps = (int)fps;
	if (o.gop < 0)
		o.gop = 2 * o.fps;
	if (o.heldout_images < 0)
		o.heldout_images = o.images / 4 > 0 ? o.images / 4 : 1;
	if (o.world->compose && (o.videos || o.heldout || !o.images))
		log_fatalx("--world compose makes images only: give --videos 0 --heldout 0 --images N (got %d, %d, %d)",
			   o.videos, o.heldout, o.images);
	if (o.minutes * 60 < 7)
		log_fatalx("--minutes %.3f: videos need at least 7 seconds for one event", o.minutes);
	char path[4096];
	snprintf(path, sizeof(path), "%s/videos", o.out);
	mkdir_p(path);
	for (int split = 0; split < 2; split++) {
		const char *name = split ? "heldout" : "train";
		char tmp[4200], ltmp[4200], lname[64];
		snprintf(path, sizeof(path), "%s.csv", name);
		FILE *csv = open_out(o.out, path, tmp, sizeof tmp), *lab = NULL;
		fprintf(csv, "video,start,end,caption\n");
		if (o.labels) {
			snprintf(lname, sizeof lname, "%s-labels.csv", name);
			lab = open_out(o.out, lname, ltmp, sizeof ltmp);
			fprintf(lab, "video,start,end,label,label2\n");
		}
		for (int i = 0, n = split ? o.heldout : o.videos; i < n; i++)
			make_video(&o, split, i, csv, lab);
		close_out(csv, tmp);
		if (lab)
			close_out(lab, ltmp);
	}
	if (o.labels)
		write_classes(o.out);
	if (o.images) {
		snprintf(path, sizeof(path), "%s/shards", o.out);
		mkdir_p(path);
		make_images(&o, 0, o.images);
		make_images(&o, 1, o.heldout_images);
	}
	log_info("done: %d training + %d held-out videos of %.2f min, %dx%d at %d fps, seed %llu", o.videos, o.heldout,
		 o.minutes, o.w, o.h, o.fps, (unsigned long long)o.seed);
	return 0;
}
