// make bench-prep-gop: what prep-time encoding choices cost and save. For each GOP length,
// B-frame, reference and entropy-coding setting, one 15-s 30-fps 512x288 chunk of the camera-like source is
// encoded as tools/prep does (x264 veryfast, crf 23, closed GOP), indexed, and measured: size,
// quality against the source (luma PSNR), a full decode, and the loader's product path (packet
// index, default loop filter) on 4-s clips with 4 and 16 frames: ms of one core and frames
// decoded per clip.
#include "bench_data.h"    // defines: bench_data_make, BenchDataOpts
#include "proc_time.h"     // defines: time_thread_cpu_ns
#include "bench_run.h"     // defines: bench_run_clips, bench_run_rate
#include "camsrc.h"        // defines: cam_new, cam_render, cam_free
#include "ld_fixture.h"    // defines: ld_fixture_tmpdir
#include "prep_defaults.h" // defines: PREP_DEFAULT_*

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { W = 512, H = 288, FPS = 30, N = 450, CLIP = 120, ROUNDS = 2 };
// frames per chunk, clips and rounds of clip_cost: N, 64 and ROUNDS, or 150, 8 and 1 in the smoke mode
static int g_frames = N, g_clips = 64, g_rounds = ROUNDS;

typedef struct {
	int gop, bframes, b_pyramid, refs, cavlc;
} Setting;

// decodes every frame of path: luma PSNR against the source, thread CPU ms of the decode
static int full_decode(const char *path, const CamSource *cs, double *psnr, double *ms)
{
	AVFormatContext *ic = NULL;
	if (avformat_open_input(&ic, path, NULL, NULL) < 0)
		return -1;
	AVStream *st = ic->streams[0];
	const AVCodec *dec = avcodec_find_decoder(st->codecpar->codec_id);
	AVCodecContext *c = avcodec_alloc_context3(dec);
	avcodec_parameters_to_context(c, st->codecpar);
	c->thread_count = 1;
	avcodec_open2(c, dec, NULL);
	AVPacket *p = av_packet_alloc();
	AVFrame *f = av_frame_alloc(), *ref = av_frame_alloc();
	ref->format = AV_PIX_FMT_YUV420P, ref->width = W, ref->height = H;
	av_frame_get_buffer(ref, 0);
	double se = 0, dec_ns = 0;
	int frames = 0, eof = 0;
	while (!eof) {
		eof = av_read_frame(ic, p) < 0;
		uint64_t t0 = time_thread_cpu_ns();
		avcodec_send_packet(c, eof ? NULL : p);
		av_packet_unref(p);
		for (;;) {
			int rc = avcodec_receive_frame(c, f);
			dec_ns += time_thread_cpu_ns() - t0;
			if (rc < 0)
				break;
			cam_render(cs, frames++, ref);
			for (int y = 0; y < H; y++)
				for (int x = 0; x < W; x++) {
					double e = (double)f->data[0][y * f->linesize[0] + x] -
						   ref->data[0][y * ref->linesize[0] + x];
					se += e * e;
				}
			av_frame_unref(f);
			t0 = time_thread_cpu_ns();
		}
	}
	*psnr = 10 * log10(255.0 * 255.0 * W * H * (double)frames / se);
	*ms = dec_ns * 1e-6;
	av_frame_free(&f), av_frame_free(&ref), av_packet_free(&p);
	avcodec_free_context(&c);
	avformat_close_input(&ic);
	return frames == g_frames ? 0 : -1;
}

// ms of one core and frames decoded per clip for T frames over the manifest's 4-s clips (best of ROUNDS)
static void clip_cost(const Manifest *m, LdDecoder *d, LdReader *rd, int T, double *ms, double *frames)
{
	LdParams p;
	ld_params_default(&p);
	p.seed = 7, p.frames = T, p.timeout_ms = 0;
	uint8_t *dst = malloc((size_t)T * 224 * 224 * 3);
	char err[512];
	*ms = 1e9;
	for (int r = 0; r < g_rounds; r++) {
		BenchRun run = {0};
		if (bench_run_clips(m, d, rd, &p, 0, g_clips, dst, &run, err, sizeof(err)) != 0) {
			fprintf(stderr, "clips: %s\n", err);
			exit(1);
		}
		*ms = fmin(*ms, 1e3 / bench_run_rate(&run));
		*frames = (double)run.cost.frames / run.clips;
	}
	free(dst);
}

static const char usage[] =
	"usage: bench_prep_gop [--smoke]\n"
	"Encodes one chunk of the camera-like source per GOP / B-frame / reference / entropy setting as\n"
	"tools/prep does and prints size, PSNR, a full decode and the loader's cost per 4- and 16-frame clip.\n"
	"  --smoke  two settings (prep's defaults and GOP 8 without B-frames), 8 clips, one round, for\n"
	"           make test: its figures mean nothing\n";

int main(int argc, char **argv)
{
	int smoke = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--smoke")) {
			smoke = 1, g_frames = 150, g_clips = 8, g_rounds = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		} else {
			fprintf(stderr, "bench_prep_gop: unknown argument '%s'\n%s", argv[i], usage);
			return 2;
		}
	}
	av_log_set_level(AV_LOG_ERROR);
	if (!avcodec_find_encoder_by_name("libx264")) {
		printf("skip: no libx264 encoder\n");
		return 77;
	}
	static const Setting set[] = {
		{8, 0, 0, 0, 0},  {16, 0, 0, 0, 0}, {32, 0, 0, 0, 0}, {64, 0, 0, 0, 0}, {450, 0, 0, 0, 0},
		{16, 3, 1, 0, 0}, {32, 3, 1, 0, 0}, {32, 3, 2, 0, 0}, {16, 7, 1, 0, 0}, {32, 7, 1, 0, 0},
		{64, 7, 1, 0, 0}, {32, 7, 1, 3, 0}, {32, 7, 1, 0, 1}, {64, 7, 1, 0, 1}, {16, 0, 0, 0, 1},
	};
	char root[256], err[512];
	if (ld_fixture_tmpdir(root, sizeof(root)) != 0)
		return 1;
	CamSource *cs;
	LdDecoder *d;
	LdReader *rd;
	char why[128];
	if (cam_new(&cs, W, H, FPS, 1) || ld_decoder_new(&d) || ld_reader_new(&rd, LD_MAX_RANGES, 0, why, sizeof(why)))
		return 1;
	printf("# one %d-frame %dx%d %d-fps chunk of the camera-like source per setting, x264 %s crf %d, closed GOP;\n"
	       "# loader: packet index, default loop filter, 224x224 train crops, %d random 4-s clips, thread CPU time;\n"
	       "# prep defaults: --gop %d --bframes %d (B-frames never references) --entropy %s\n",
	       g_frames, W, H, FPS, PREP_DEFAULT_PRESET, PREP_DEFAULT_CRF, g_clips, PREP_DEFAULT_GOP,
	       PREP_DEFAULT_BFRAMES, PREP_DEFAULT_CAVLC ? "cavlc" : "cabac");
	printf("# gop  bframes  pyramid  refs  entropy   size_kB  psnr_dB  full_decode_ms   T=4 ms  frames   T=16 ms  frames\n");
	// the smoke: the first setting and prep's defaults (GOP 32, 7 B-frames never references, cavlc)
	static const size_t smoke_set[] = {0, 12};
	const size_t n_set = smoke ? 2 : sizeof(set) / sizeof(set[0]);
	for (size_t k = 0; k < n_set; k++) {
		const size_t i = smoke ? smoke_set[k] : k;
		const Setting *s = &set[i];
		char dir[400], chunk[500], mpath[500];
		snprintf(dir, sizeof(dir), "%s/s%zu", root, i);
		BenchDataOpts o = {.videos = 1,
				   .chunks_per_video = 1,
				   .width = W,
				   .height = H,
				   .fps = FPS,
				   .frames_per_chunk = g_frames,
				   .seed = 1,
				   .clip_frames = CLIP,
				   .enc = {.gop = s->gop,
					   .bframes = s->bframes,
					   .b_pyramid = s->b_pyramid,
					   .refs = s->refs,
					   .cavlc = s->cavlc,
					   .crf = PREP_DEFAULT_CRF,
					   .preset = PREP_DEFAULT_PRESET}};
		if (bench_data_make(dir, &o, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		snprintf(chunk, sizeof(chunk), "%s/chunks/vid00_0.mp4", dir);
		snprintf(mpath, sizeof(mpath), "%s/manifest.bin", dir);
		struct stat st;
		double psnr, full_ms, ms4, f4, ms16, f16;
		Manifest *m;
		if (stat(chunk, &st) || full_decode(chunk, cs, &psnr, &full_ms) ||
		    manifest_open(&m, mpath, err, sizeof(err))) {
			fprintf(stderr, "%s: cannot measure\n", chunk);
			return 1;
		}
		clip_cost(m, d, rd, 4, &ms4, &f4);
		clip_cost(m, d, rd, 16, &ms16, &f16);
		manifest_close(m);
		printf("%5d  %7d  %7s  %4d  %7s  %8.0f  %7.2f  %14.0f  %7.1f  %6.1f  %8.1f  %6.1f\n", s->gop,
		       s->bframes,
		       !s->bframes         ? "-"
		       : s->b_pyramid == 1 ? "none"
					   : "normal",
		       s->refs ? s->refs : 1, s->cavlc ? "cavlc" : "cabac", st.st_size / 1024.0, psnr, full_ms, ms4, f4,
		       ms16, f16);
		fflush(stdout);
	}
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	cam_free(cs);
	ld_reader_free(rd);
	ld_decoder_free(d);
	return 0;
}
