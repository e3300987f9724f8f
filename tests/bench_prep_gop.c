// make bench-prep-gop: what prep-time encoding choices cost and save. Per source (the camera-like
// source, its hard variant, real videos) and per setting (GOP, B-frame structure, references,
// entropy coder, deblocking, CRF), one 15-s chunk is encoded as tools/prep does, indexed, and
// measured: size, luma PSNR against the source, and the loader's product path on random clips
// (4 frames of 4 s, 16 of 4 s, 4 of 1 s): frames decoded, ms of one core (thread CPU, best of
// --rounds) and, with --callgrind, instructions per clip (callgrind, the same clips).
#include "bench_prep_gop_src.h" // defines: BpgSource, bpg_source_open, bpg_source_frame
#include "bench_run.h"          // defines: bench_run_clips, bench_run_rate, BenchRun
#include "ld_fixture.h"         // defines: ld_fixture_tmpdir
#include "loader.h"             // defines: ld_index_chunk, ld_decoder_new, ld_reader_new
#include "manifest.h"           // defines: manifest_writer_new, manifest_open, manifest_add_clip
#include "prep_defaults.h"      // defines: PREP_DEFAULT_*
#include "prep_encode.h"        // defines: prep_encode_frames, PrepEncodeOpts

#include <errno.h>
#include <fcntl.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_SRC = 8, MAX_SET = 64, N_KINDS = 3, SAMPLES = 64 };

typedef struct {
	int gop, bframes, b_fixed, b_pyramid, refs, cavlc, no_deblock, crf, fullpel;
} Setting;

// the clips measured: frames per clip and the clip's length in seconds
static const struct {
	int frames, seconds;
} kinds[N_KINDS] = {{4, 4}, {16, 4}, {4, 1}};

static struct {
	int seconds, clips, rounds, cg_clips, callgrind, frame_types, smoke;
	const char *keep, *self;
} g = {.seconds = 15, .clips = 64, .rounds = 3, .cg_clips = 16};

static void die(const char *fmt, const char *what)
{
	fprintf(stderr, "bench_prep_gop: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\n");
	exit(1);
}

static Setting prep_defaults(void)
{
	return (Setting){.gop = PREP_DEFAULT_GOP,
			 .bframes = PREP_DEFAULT_BFRAMES,
			 .b_fixed = PREP_DEFAULT_B_FIXED,
			 .b_pyramid = PREP_DEFAULT_B_PYRAMID,
			 .cavlc = PREP_DEFAULT_CAVLC,
			 .no_deblock = PREP_DEFAULT_NO_DEBLOCK,
			 .crf = PREP_DEFAULT_CRF};
}

// "gop=64,bf=15,fixed=1,pyr=none,ref=1,ent=cavlc,dbk=off,crf=23": any subset, the rest prep's defaults
static int setting_parse(const char *spec, Setting *s)
{
	*s = prep_defaults();
	char buf[200], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		if (!v)
			return -1;
		*v++ = 0;
		char *end;
		long n = strtol(v, &end, 10);
		int num = *v && !*end;
		if (!strcmp(kv, "gop") && num && n >= 1 && n <= 1000)
			s->gop = (int)n;
		else if (!strcmp(kv, "bf") && num && n >= 0 && n <= 16)
			s->bframes = (int)n;
		else if (!strcmp(kv, "fixed") && num && (n == 0 || n == 1))
			s->b_fixed = (int)n;
		else if (!strcmp(kv, "ref") && num && n >= 0 && n <= 16)
			s->refs = (int)n;
		else if (!strcmp(kv, "crf") && num && n >= 1 && n <= 51)
			s->crf = (int)n;
		else if (!strcmp(kv, "pyr") && (!strcmp(v, "none") || !strcmp(v, "normal") || !strcmp(v, "strict")))
			s->b_pyramid = v[0] == 'n' ? (v[1] == 'o' ? 1 + (v[2] == 'r') : 1) : 3;
		else if (!strcmp(kv, "ent") && (!strcmp(v, "cavlc") || !strcmp(v, "cabac")))
			s->cavlc = v[2] == 'v';
		else if (!strcmp(kv, "fullpel") && num && (n == 0 || n == 1))
			s->fullpel = (int)n;
		else if (!strcmp(kv, "dbk") && (!strcmp(v, "on") || !strcmp(v, "off")))
			s->no_deblock = v[1] == 'f';
		else
			return -1;
	}
	return 0;
}

static const char *pyramid_name(const Setting *s)
{
	static const char *names[] = {"preset", "none", "normal", "strict"};
	return s->bframes ? names[s->b_pyramid] : "-";
}

// the previous defaults (until issue 27 §2): the ratio line compares prep's defaults with them
#define PREVIOUS_DEFAULTS "gop=32,bf=7,fixed=0,ent=cavlc,dbk=on,crf=23"

// the default table: prep's defaults, the previous ones, then one axis at a time from a base of
// fixed 7-frame B runs in GOP 32 (every spec names every field it cares about: prep's defaults move)
static int default_settings(Setting *set)
{
	static const char *specs[] = {
		PREVIOUS_DEFAULTS,
		"gop=16,bf=0,ent=cabac,dbk=on,crf=23",                     // the defaults before those
		"gop=1,bf=0,ent=cavlc,dbk=on,crf=23",                      // intra only: a needed frame is its own key
		"gop=32,bf=0,ent=cavlc,dbk=on,crf=23",                     // no B-frames: every frame a reference
		"gop=32,bf=7,fixed=1,ent=cavlc,dbk=on,crf=23",             // fixed B runs: fewer references per frame
		"gop=32,bf=15,fixed=1,ent=cavlc,dbk=on,crf=23",            // longer runs
		"gop=64,bf=15,fixed=1,ent=cavlc,dbk=on,crf=23",            // a longer GOP shared by a clip's frames
		"gop=64,bf=15,fixed=1,pyr=normal,ent=cavlc,dbk=on,crf=23", // pyramid: the middle B a reference
		"gop=32,bf=7,fixed=1,ref=3,ent=cavlc,dbk=on,crf=23",       // three references, not one
		"gop=32,bf=7,fixed=1,ent=cabac,dbk=on,crf=23",             // CABAC
		"gop=32,bf=7,fixed=1,ent=cavlc,dbk=off,crf=23",            // no deblocking
		"gop=16,bf=7,fixed=1,ent=cavlc,dbk=off,crf=22",            // a shorter GOP at the defaults
	};
	int n = 0;
	set[n++] = prep_defaults();
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (setting_parse(specs[i], &set[n++]) != 0)
			die("bad built-in setting %s", specs[i]);
	return n;
}

typedef struct {
	const BpgSource *src;
	AVFrame *pic;
} Paint;

static void paint(void *ctx, int i, AVFrame *f)
{
	bpg_source_frame(((const Paint *)ctx)->src, i, f);
}

// encodes the chunk as tools/prep does with setting s
static void encode(const BpgSource *src, const Setting *s, const char *path)
{
	PrepEncodeOpts o = {.width = src->width,
			    .height = src->height,
			    .fps_num = src->fps,
			    .fps_den = 1,
			    .gop = s->gop,
			    .crf = s->crf,
			    .preset = PREP_DEFAULT_PRESET,
			    .faststart = 1,
			    .bframes = s->bframes,
			    .refs = s->refs,
			    .b_pyramid = s->b_pyramid,
			    .b_fixed = s->b_fixed,
			    .cavlc = s->cavlc,
			    .no_deblock = s->no_deblock,
			    .fullpel = s->fullpel};
	Paint p = {src, NULL};
	if (prep_encode_frames(path, &o, src->frames, paint, &p) < 0)
		die("cannot encode %s", path);
}

// luma PSNR of every frame of path against the source
static double psnr_of(const char *path, const BpgSource *src)
{
	AVFormatContext *ic = NULL;
	if (avformat_open_input(&ic, path, NULL, NULL) < 0 || avformat_find_stream_info(ic, NULL) < 0)
		die("cannot open %s", path);
	AVStream *st = ic->streams[0];
	const AVCodec *dec = avcodec_find_decoder(st->codecpar->codec_id);
	AVCodecContext *c = avcodec_alloc_context3(dec);
	avcodec_parameters_to_context(c, st->codecpar);
	c->thread_count = 1;
	if (avcodec_open2(c, dec, NULL) < 0)
		die("cannot decode %s", path);
	AVPacket *p = av_packet_alloc();
	AVFrame *f = av_frame_alloc(), *ref = av_frame_alloc();
	ref->format = AV_PIX_FMT_YUV420P, ref->width = src->width, ref->height = src->height;
	av_frame_get_buffer(ref, 0);
	double se = 0;
	int frames = 0, eof = 0;
	while (!eof) {
		eof = av_read_frame(ic, p) < 0;
		avcodec_send_packet(c, eof ? NULL : p);
		av_packet_unref(p);
		while (avcodec_receive_frame(c, f) >= 0) {
			bpg_source_frame(src, frames++, ref);
			for (int y = 0; y < src->height; y++)
				for (int x = 0; x < src->width; x++) {
					double e = (double)f->data[0][y * f->linesize[0] + x] -
						   ref->data[0][y * ref->linesize[0] + x];
					se += e * e;
				}
			av_frame_unref(f);
		}
	}
	if (frames != src->frames)
		die("%s decodes to another frame count than was encoded", path);
	av_frame_free(&f), av_frame_free(&ref), av_packet_free(&p);
	avcodec_free_context(&c);
	avformat_close_input(&ic);
	return 10 * log10(255.0 * 255.0 * src->width * src->height * (double)frames / se);
}

// dir/m<seconds>.bin: SAMPLES clips of that many seconds at seeded random starts over dir/chunk.mp4
// (the same starts for every setting of a source)
static void write_manifest(const char *dir, const BpgSource *src, int seconds)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/chunk.mp4", dir);
	LdChunkIndex ix;
	if (ld_index_chunk(path, &ix) < 0 || ix.codec == MANIFEST_CODEC_NONE)
		die("cannot index %s", path);
	ManifestWriter *w;
	uint32_t n = ix.n_frames, len = (uint32_t)(seconds * src->fps);
	len = len < n ? len : n;
	int rc = manifest_writer_new(&w, 77, 49408, (uint32_t)(g.seconds * 1000), (uint32_t)src->height);
	int64_t vid = rc ? -1 : manifest_add_video(w, "v", (uint64_t)g.seconds * 1000);
	int64_t ci = vid < 0 ? -1
			     : manifest_add_chunk(w, (uint32_t)vid, "chunk.mp4", 0, ix.n_frames, ix.fps_num, ix.fps_den,
						  ix.width, ix.height, ix.keyframes, ix.n_keyframes);
	if (ci < 0 || manifest_set_chunk_index(w, (uint32_t)ci, ix.codec, ix.packets, ix.n_frames, ix.config,
					       ix.config_size, ix.file_size) < 0)
		die("cannot build the manifest of %s", path);
	uint32_t rng = 12345;
	int32_t tok[77] = {49406, 320, 49407};
	for (int s = 0; s < SAMPLES; s++) {
		rng = rng * 1664525u + 1013904223u;
		uint32_t a = (rng >> 8) % (n - len + 1);
		if (manifest_add_clip(w, (uint32_t)vid, (uint32_t)ci, a, (uint32_t)ci, a + len, tok) < 0)
			die("cannot add a clip to the manifest of %s", path);
	}
	snprintf(path, sizeof(path), "%s/m%d.bin", dir, seconds);
	if (manifest_write(w, path) < 0)
		die("cannot write %s", path);
	manifest_writer_free(w);
	ld_index_free(&ix);
}

static void params_for(LdParams *p, int frames)
{
	ld_params_default(p);
	p->seed = 7, p->frames = frames, p->timeout_ms = 0;
}

// the measured loop: positions [0, n) of the manifest (callgrind counts inside this function only)
__attribute__((noinline)) void bpg_measure(const Manifest *m, LdDecoder *d, LdReader *rd, const LdParams *p, int n,
					   uint8_t *dst, BenchRun *run)
{
	char err[512];
	if (bench_run_clips(m, d, rd, p, 0, n, dst, run, err, sizeof(err)) != 0)
		die("clips: %s", err);
}

typedef struct {
	double ms, frames,
		mi; // per clip: ms of one core (best round), frames decoded, M instructions (-1: not counted)
} Cost;

static Cost clip_cost(const char *mpath, int frames)
{
	Manifest *m;
	LdDecoder *d;
	LdReader *rd;
	char err[512];
	if (manifest_open(&m, mpath, err, sizeof(err)) || ld_decoder_new(&d) ||
	    ld_reader_new(&rd, LD_MAX_RANGES, 0, err, sizeof(err)))
		die("cannot open %s", mpath);
	LdParams p;
	params_for(&p, frames);
	uint8_t *dst = malloc((size_t)frames * 224 * 224 * 3);
	Cost c = {1e9, 0, -1};
	for (int r = 0; r < g.rounds; r++) {
		BenchRun run = {0};
		bpg_measure(m, d, rd, &p, g.clips, dst, &run);
		c.ms = fmin(c.ms, 1e3 / bench_run_rate(&run));
		c.frames = (double)run.cost.frames / run.clips;
	}
	free(dst);
	ld_reader_free(rd);
	ld_decoder_free(d);
	manifest_close(m);
	return c;
}

// --measure M T N (run under callgrind by --callgrind): one warm-up clip, then N clips in bpg_measure
static int measure_main(const char *mpath, int frames, int n)
{
	Manifest *m;
	LdDecoder *d;
	LdReader *rd;
	char err[512];
	if (manifest_open(&m, mpath, err, sizeof(err)) || ld_decoder_new(&d) ||
	    ld_reader_new(&rd, LD_MAX_RANGES, 0, err, sizeof(err)))
		die("cannot open %s", mpath);
	LdParams p;
	params_for(&p, frames);
	uint8_t *dst = malloc((size_t)frames * 224 * 224 * 3);
	BenchRun warm = {0}, run = {0};
	if (bench_run_clips(m, d, rd, &p, (uint64_t)n, 1, dst, &warm, err, sizeof(err)) != 0)
		die("warm-up clip: %s", err);
	bpg_measure(m, d, rd, &p, n, dst, &run);
	free(dst);
	ld_reader_free(rd);
	ld_decoder_free(d);
	manifest_close(m);
	return 0;
}

// the instructions callgrind counts (with toggle, e.g. --toggle-collect=F) running this program with args;
// its output file out is removed
static double run_callgrind(const char *out, const char *toggle, const char *const *args)
{
	char of[700];
	snprintf(of, sizeof(of), "--callgrind-out-file=%s", out);
	const char *argv[16] = {"valgrind", "--tool=callgrind", of, "--collect-atstart=no", toggle, g.self};
	int k = 6;
	for (int i = 0; args[i] && k < 15; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1), dup2(null, 2);
		execvp("valgrind", (char *const *)argv);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		die("valgrind --tool=callgrind failed for %s (is valgrind installed?)", out);
	FILE *f = fopen(out, "r");
	char line[512];
	double ir = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "summary:", 8) || !strncmp(line, "totals:", 7))
			ir = atof(strchr(line, ':') + 1);
	if (f)
		fclose(f);
	unlink(out);
	if (ir <= 0)
		die("no instruction count in %s", out);
	return ir;
}

// M instructions per clip: this program's --measure under callgrind, counting inside bpg_measure
static double callgrind_mi(const char *mpath, int frames, int n)
{
	char out[700], tf[16], nf[16];
	snprintf(out, sizeof(out), "%s.cg", mpath);
	snprintf(tf, sizeof(tf), "%d", frames);
	snprintf(nf, sizeof(nf), "%d", n);
	return run_callgrind(out, "--toggle-collect=bpg_measure", (const char *[]){"--measure", mpath, tf, nf, NULL}) /
	       n * 1e-6;
}

// --frame-types CHUNK (run under callgrind by --callgrind, once per type): every packet of the
// chunk in decode order through one decoder as the loader opens it; each packet is sent by the
// function of its type, so callgrind can count one type at a time
typedef int (*SendFn)(AVCodecContext *c, AVPacket *p, AVFrame *f);
static int send_and_drain(AVCodecContext *c, AVPacket *p, AVFrame *f)
{
	int rc = avcodec_send_packet(c, p);
	while (rc >= 0 && avcodec_receive_frame(c, f) >= 0)
		av_frame_unref(f);
	return rc < 0 ? rc : 0;
}
__attribute__((noinline)) int bpg_send_key(AVCodecContext *c, AVPacket *p, AVFrame *f)
{
	return send_and_drain(c, p, f);
}
__attribute__((noinline)) int bpg_send_ref(AVCodecContext *c, AVPacket *p, AVFrame *f)
{
	return send_and_drain(c, p, f);
}
__attribute__((noinline)) int bpg_send_nonref(AVCodecContext *c, AVPacket *p, AVFrame *f)
{
	return send_and_drain(c, p, f);
}

static int packet_type(const ManifestPacket *p)
{
	return p->flags & MANIFEST_PKT_KEY ? 0 : p->flags & MANIFEST_PKT_REF ? 1 : 2;
}

static int frame_types_main(const char *chunk)
{
	LdChunkIndex ix;
	FILE *fp = fopen(chunk, "rb");
	if (!fp || ld_index_chunk(chunk, &ix) < 0 || ix.codec == MANIFEST_CODEC_NONE)
		die("cannot index %s", chunk);
	uint8_t *buf = malloc(ix.file_size);
	if (!buf || fread(buf, 1, ix.file_size, fp) != ix.file_size)
		die("cannot read %s", chunk);
	fclose(fp);
	const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_H264);
	AVCodecContext *c = avcodec_alloc_context3(codec);
	c->extradata = av_mallocz(ix.config_size + AV_INPUT_BUFFER_PADDING_SIZE);
	memcpy(c->extradata, ix.config, ix.config_size);
	c->extradata_size = (int)ix.config_size;
	c->thread_count = 1;
	if (avcodec_open2(c, codec, NULL) < 0)
		die("cannot open a decoder for %s", chunk);
	static const SendFn send[3] = {bpg_send_key, bpg_send_ref, bpg_send_nonref};
	AVPacket *p = av_packet_alloc();
	AVFrame *f = av_frame_alloc();
	for (uint32_t i = 0; i < ix.n_frames; i++) {
		const ManifestPacket *q = &ix.packets[i];
		if (av_new_packet(p, (int)q->size) < 0)
			die("out of memory for %s", chunk);
		memcpy(p->data, buf + q->offset, q->size);
		p->pts = q->frame;
		p->flags = q->flags & MANIFEST_PKT_KEY ? AV_PKT_FLAG_KEY : 0;
		if (send[packet_type(q)](c, p, f) < 0)
			die("%s does not decode", chunk);
		av_packet_unref(p);
	}
	send_and_drain(c, NULL, f);
	av_frame_free(&f), av_packet_free(&p);
	avcodec_free_context(&c);
	free(buf);
	ld_index_free(&ix);
	return 0;
}

// per frame type of chunk (key, other references, non-references): count, mean kB, M instructions to decode one
static void frame_type_costs(const char *chunk, const BpgSource *src)
{
	static const char *fn[3] = {"bpg_send_key", "bpg_send_ref", "bpg_send_nonref"},
			  *name[3] = {"key", "ref", "non-ref"};
	LdChunkIndex ix;
	if (ld_index_chunk(chunk, &ix) < 0 || ix.codec == MANIFEST_CODEC_NONE)
		die("cannot index %s", chunk);
	int count[3] = {0};
	double bytes[3] = {0};
	for (uint32_t i = 0; i < ix.n_frames; i++)
		count[packet_type(&ix.packets[i])]++, bytes[packet_type(&ix.packets[i])] += ix.packets[i].size;
	ld_index_free(&ix);
	printf("    %s frame types:", src->name);
	for (int t = 0; t < 3; t++) {
		if (!count[t])
			continue;
		char out[600], tog[64];
		snprintf(out, sizeof(out), "%s.types.cg", chunk);
		snprintf(tog, sizeof(tog), "--toggle-collect=%s", fn[t]);
		double ir = run_callgrind(out, tog, (const char *[]){"--frame-types", chunk, NULL});
		printf(" %s %d x %.1f kB, %.2f Minstr;", name[t], count[t], bytes[t] / count[t] / 1e3,
		       ir / count[t] * 1e-6);
	}
	printf("\n");
}

static void print_header(void)
{
	printf("# one %d-s chunk per source and setting, x264 %s, closed GOP, as tools/prep encodes; loader: packet index,\n"
	       "# default loop filter, 224x224 train crops of %d random clips: ms of one core (thread CPU, best of %d),\n"
	       "# frames decoded%s per clip\n",
	       g.seconds, PREP_DEFAULT_PRESET, g.clips, g.rounds,
	       g.callgrind ? " and M instructions (callgrind, the first clips)" : "");
	printf("# %-9s %4s %3s %5s %6s %3s %5s %3s %4s %3s %7s %6s", "source", "gop", "bf", "runs", "pyr", "ref", "ent",
	       "dbk", "mv", "crf", "kB/15s", "PSNR");
	for (int k = 0; k < N_KINDS; k++)
		printf("  | T=%d/%ds: %5s %6s %6s", kinds[k].frames, kinds[k].seconds, "ms", "frames", "Minstr");
	printf("\n");
}

static void measure_setting(const BpgSource *src, const Setting *s, const char *root, Cost *out, double *kb,
			    double *psnr)
{
	char dir[400], chunk[500], m[500];
	// a folder per source, length and setting: --keep reuses what an earlier run encoded
	snprintf(dir, sizeof(dir), "%s/%s-%ds-g%d-b%d%c-p%d-r%d-%s-d%d-c%d", root, src->name, g.seconds, s->gop,
		 s->bframes, s->b_fixed ? 'f' : 'a', s->b_pyramid, s->refs, s->cavlc ? "cavlc" : "cabac",
		 !s->no_deblock, s->crf);
	if (s->fullpel)
		strncat(dir, "-fullpel", sizeof(dir) - strlen(dir) - 1);
	snprintf(chunk, sizeof(chunk), "%s/chunk.mp4", dir);
	snprintf(m, sizeof(m), "%s/encoded", dir);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die("cannot create %s", dir);
	if (!g.keep || access(m, F_OK) != 0) {
		encode(src, s, chunk);
		FILE *f = fopen(m, "w");
		if (!f || fclose(f) != 0)
			die("cannot write %s", m);
	}
	struct stat st;
	if (stat(chunk, &st) < 0)
		die("no %s", chunk);
	*kb = st.st_size / 1024.0 * 15 / ((double)src->frames / src->fps);
	*psnr = psnr_of(chunk, src);
	for (int k = 0; k < N_KINDS; k++) {
		snprintf(m, sizeof(m), "%s/m%d.bin", dir, kinds[k].seconds);
		if (k == 0 || kinds[k].seconds != kinds[k - 1].seconds)
			write_manifest(dir, src, kinds[k].seconds);
		out[k] = clip_cost(m, kinds[k].frames);
		if (g.callgrind)
			out[k].mi = callgrind_mi(m, kinds[k].frames, g.cg_clips);
	}
	printf("  %-9.9s %4d %3d %5s %6s %3d %5s %3s %4s %3d %7.0f %6.2f", src->name, s->gop, s->bframes,
	       !s->bframes  ? "-"
	       : s->b_fixed ? "fixed"
			    : "adapt",
	       pyramid_name(s), s->refs ? s->refs : 1, s->cavlc ? "cavlc" : "cabac", s->no_deblock ? "off" : "on",
	       s->fullpel ? "full" : "qpel", s->crf, *kb, *psnr);
	for (int k = 0; k < N_KINDS; k++) {
		if (out[k].mi >= 0)
			printf("  | %13.1f %6.1f %6.1f", out[k].ms, out[k].frames, out[k].mi);
		else
			printf("  | %13.1f %6.1f %6s", out[k].ms, out[k].frames, "-");
	}
	printf("\n");
	if (g.frame_types)
		frame_type_costs(chunk, src);
	fflush(stdout);
}

static const char usage[] =
	"usage: bench_prep_gop [--source cam|cam-hard|FILE]... [--set SPEC]... [--seconds S] [--clips N] [--rounds R]\n"
	"                      [--callgrind [--cg-clips N]] [--keep DIR] [--smoke]\n"
	"Encodes one chunk per source and setting as tools/prep does and prints its size, luma PSNR against the\n"
	"source and the loader's cost per clip (4 frames of 4 s, 16 frames of 4 s, 4 frames of 1 s).\n"
	"  --source S   cam (the camera-like source), cam-hard (fast motion, shake, noise, parallax) or a video\n"
	"               file (scaled to short side 288; played forward and backward to fill the chunk);\n"
	"               repeatable (default: cam and cam-hard)\n"
	"  --set SPEC   gop=G,bf=B,fixed=0|1,pyr=none|normal|strict,ref=R,ent=cavlc|cabac,dbk=on|off,crf=C,\n"
	"               fullpel=0|1 (any subset; the rest are prep's defaults; fixed: B runs bf long, x264 b-adapt 0;\n"
	"               fullpel: whole-pixel motion, subme 0); repeatable (default: prep's defaults, the previous\n"
	"               ones, then one axis at a time)\n"
	"  --seconds S  chunk length (15); --clips N clips per measure (64); --rounds R best of R (3)\n"
	"  --callgrind  also count instructions per clip with valgrind's callgrind on the first --cg-clips (16)\n"
	"  --frame-types  after each row, instructions to decode one key, other reference and non-reference\n"
	"               frame of the chunk (callgrind, the whole chunk in decode order)\n"
	"  --keep DIR   encode into DIR and keep the chunks, reusing those an earlier run left there (default: a\n"
	"               temporary folder, removed)\n"
	"  --smoke      cam only, prep's defaults and the previous ones, 4-s chunks, 4 clips, one round\n"
	"               (make test's check that it runs: its figures mean nothing)\n";

int main(int argc, char **argv)
{
	const char *srcs[MAX_SRC];
	Setting set[MAX_SET];
	int n_src = 0, n_set = 0;
	g.self = argv[0];
	if (argc == 5 && !strcmp(argv[1], "--measure"))
		return measure_main(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "--frame-types"))
		return frame_types_main(argv[2]);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--smoke")) {
			g.smoke = 1, g.seconds = 4, g.clips = 4, g.rounds = 1;
		} else if (!strcmp(a, "--callgrind")) {
			g.callgrind = 1;
		} else if (!strcmp(a, "--frame-types")) {
			g.frame_types = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (v && !strcmp(a, "--source") && n_src < MAX_SRC) {
			srcs[n_src++] = v, i++;
		} else if (v && !strcmp(a, "--set") && n_set < MAX_SET) {
			if (setting_parse(v, &set[n_set++]) != 0)
				die("--set %s: not a setting (see --help)", v);
			i++;
		} else if (v && !strcmp(a, "--keep")) {
			g.keep = v, i++;
		} else if (v && (!strcmp(a, "--seconds") || !strcmp(a, "--clips") || !strcmp(a, "--rounds") ||
				 !strcmp(a, "--cg-clips"))) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || n < 1 || n > (strcmp(a, "--clips") && strcmp(a, "--cg-clips") ? 600 : SAMPLES))
				die("%s: want a positive count in range", a);
			*(!strcmp(a, "--seconds")  ? &g.seconds
			  : !strcmp(a, "--clips")  ? &g.clips
			  : !strcmp(a, "--rounds") ? &g.rounds
						   : &g.cg_clips) = (int)n;
			i++;
		} else {
			fprintf(stderr, "bench_prep_gop: unknown argument '%s'\n%s", a, usage);
			return 2;
		}
	}
	av_log_set_level(AV_LOG_ERROR);
	if (!prep_encoder_available()) {
		printf("skip: no libx264 encoder\n");
		return 77;
	}
	if (!n_src) {
		srcs[n_src++] = "cam";
		if (!g.smoke)
			srcs[n_src++] = "cam-hard";
	}
	if (g.smoke) {
		n_set = 0;
		set[n_set++] = prep_defaults();
		setting_parse(PREVIOUS_DEFAULTS, &set[n_set++]);
	} else if (!n_set) {
		n_set = default_settings(set);
	}
	char root[256];
	if (g.keep)
		snprintf(root, sizeof(root), "%s", g.keep);
	else if (ld_fixture_tmpdir(root, sizeof(root)) != 0)
		return 1;
	if (mkdir(root, 0755) < 0 && errno != EEXIST)
		die("cannot create %s", root);
	print_header();
	// the ratio line: prep's defaults against the previous ones, where both are rows
	Setting now = prep_defaults(), prev;
	setting_parse(PREVIOUS_DEFAULTS, &prev);
	char ratio[MAX_SRC][200];
	int ratios = 0;
	for (int si = 0; si < n_src; si++) {
		BpgSource src;
		char err[512] = "";
		if (bpg_source_open(&src, srcs[si], g.seconds, err, sizeof(err)) != 0)
			die("%s", err);
		Cost c_now[N_KINDS], c_prev[N_KINDS];
		double psnr_now = 0, psnr_prev = 0, kb_now = 0, kb_prev = 0;
		int have = 0;
		for (int i = 0; i < n_set; i++) {
			Cost c[N_KINDS];
			double kb, psnr;
			measure_setting(&src, &set[i], root, c, &kb, &psnr);
			if (!memcmp(&set[i], &now, sizeof(now)))
				memcpy(c_now, c, sizeof(c)), psnr_now = psnr, kb_now = kb, have |= 1;
			if (!memcmp(&set[i], &prev, sizeof(prev)))
				memcpy(c_prev, c, sizeof(c)), psnr_prev = psnr, kb_prev = kb, have |= 2;
		}
		if (have == 3) {
			int n = snprintf(ratio[ratios], sizeof(ratio[0]), "%s", src.name);
			for (int k = 0; k < N_KINDS; k++)
				n += snprintf(ratio[ratios] + n, sizeof(ratio[0]) - (size_t)n, " %.2fx",
					      g.callgrind ? c_prev[k].mi / c_now[k].mi : c_prev[k].ms / c_now[k].ms);
			snprintf(ratio[ratios] + n, sizeof(ratio[0]) - (size_t)n, " (%+.2f dB, %+.0f%% bytes)",
				 psnr_now - psnr_prev, 100 * (kb_now / kb_prev - 1));
			ratios++;
		}
		bpg_source_free(&src);
	}
	printf("ratio previous defaults (%s) / prep's defaults, per-clip %s at T=4/4s, T=16/4s, T=4/1s:",
	       PREVIOUS_DEFAULTS, g.callgrind ? "instructions" : "CPU time");
	for (int r = 0; r < ratios; r++)
		printf("%s %s", r ? ";" : "", ratio[r]);
	printf("%s\n", ratios ? "" : " none (both settings must be rows)");
	if (!g.keep) {
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", root);
	}
	return 0;
}
