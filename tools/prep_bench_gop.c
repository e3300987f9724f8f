// Measures what the chunk GOP length costs: chunk size against the decode work of a random
// 4-frame clip over 2 s (seek to the keyframe before it, decode forward), on a 15-s 30-fps
// 512x288 chunk of panning texture with moving shapes and sensor-like noise.
#include "prep_encode.h" // defines: prep_encoder_open, prep_encoder_write, prep_encoder_close

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/log.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { W = 512, H = 288, FPS = 30, N = 450, CLIPS = 40 };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint32_t rng = 12345;
static uint32_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
	return rng;
}

static void render(AVFrame *f, int n)
{
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			double u = x + 2.0 * n, v = y + 1.0 * n; // the camera pans
			double t = 128 + 40 * sin(u * 0.031) * cos(v * 0.027) + 30 * sin((u + v) * 0.013 + 1.7) +
				   20 * cos(u * 0.071 - v * 0.05);
			double cx = 100 + 3.0 * n, cy = 140 + 40 * sin(n * 0.05); // an object moving across
			if ((x - fmod(cx, W)) * (x - fmod(cx, W)) + (y - cy) * (y - cy) < 40 * 40)
				t = 220;
			t += (int)(next() % 5) - 2; // sensor noise
			f->data[0][y * f->linesize[0] + x] = (uint8_t)(t < 16 ? 16 : t > 235 ? 235 : t);
		}
	for (int y = 0; y < H / 2; y++)
		for (int x = 0; x < W / 2; x++) {
			f->data[1][y * f->linesize[1] + x] = (uint8_t)(128 + 20 * sin((x + n) * 0.05));
			f->data[2][y * f->linesize[2] + x] = (uint8_t)(128 + 20 * cos((y + n) * 0.04));
		}
}

// decodes frames [first, first + span) needing only `need` of them; returns frames decoded
static int random_clip(const char *path, int first, int span, double *secs)
{
	double t0 = now();
	AVFormatContext *ic = NULL;
	avformat_open_input(&ic, path, NULL, NULL);
	AVStream *st = ic->streams[0];
	const AVCodec *dec = avcodec_find_decoder(st->codecpar->codec_id);
	AVCodecContext *c = avcodec_alloc_context3(dec);
	avcodec_parameters_to_context(c, st->codecpar);
	c->thread_count = 1;
	avcodec_open2(c, dec, NULL);
	int64_t ts = av_rescale_q(first, (AVRational){1, FPS}, st->time_base);
	av_seek_frame(ic, 0, ts, AVSEEK_FLAG_BACKWARD);
	AVPacket *p = av_packet_alloc();
	AVFrame *f = av_frame_alloc();
	int decoded = 0, done = 0;
	while (!done && av_read_frame(ic, p) >= 0) {
		avcodec_send_packet(c, p);
		av_packet_unref(p);
		while (avcodec_receive_frame(c, f) >= 0) {
			decoded++;
			int idx = (int)av_rescale_q(f->best_effort_timestamp, st->time_base, (AVRational){1, FPS});
			av_frame_unref(f);
			if (idx >= first + span - 1)
				done = 1;
		}
	}
	av_frame_free(&f);
	av_packet_free(&p);
	avcodec_free_context(&c);
	avformat_close_input(&ic);
	*secs += now() - t0;
	return decoded;
}

int main(void)
{
	av_log_set_level(AV_LOG_ERROR);
	if (!prep_encoder_available()) {
		printf("no H.264 encoder\n");
		return 77;
	}
	static const int gops[] = {1, 4, 8, 16, 32, 64, 450};
	printf("# %dx%d, %d fps, %d frames, x264 veryfast crf 23, no B-frames; %d random 4-frame clips over 2 s\n", W, H,
	       FPS, N, CLIPS);
	printf("# forward: seek once, decode through the 2-s span; per-frame: seek again whenever the next\n"
	       "# needed frame lies past a keyframe (frames counted, 4 needed frames at segment midpoints)\n");
	printf("# gop   size_kB   full_decode_s   forward_clip_ms   forward_frames   per_frame_frames\n");
	for (size_t g = 0; g < sizeof(gops) / sizeof(gops[0]); g++) {
		char path[64];
		snprintf(path, sizeof(path), "/tmp/bench_gop_%d.mp4", gops[g]);
		PrepEncodeOpts eo = {.width = W, .height = H, .fps_num = FPS, .fps_den = 1, .gop = gops[g], .crf = 23,
				     .preset = "veryfast", .faststart = 1};
		PrepEncoder *e;
		if (prep_encoder_open(&e, path, &eo) < 0)
			return 1;
		AVFrame *f = av_frame_alloc();
		f->format = AV_PIX_FMT_YUV420P, f->width = W, f->height = H;
		av_frame_get_buffer(f, 0);
		rng = 12345;
		for (int n = 0; n < N; n++) {
			av_frame_make_writable(f);
			render(f, n);
			prep_encoder_write(e, f);
		}
		prep_encoder_close(e, NULL);
		av_frame_free(&f);
		struct stat st;
		stat(path, &st);
		double full = 0;
		random_clip(path, 0, N, &full);
		double secs = 0;
		long frames = 0;
		srand(7);
		for (int k = 0; k < CLIPS; k++)
			frames += random_clip(path, rand() % (N - 2 * FPS), 2 * FPS, &secs);
		// per-frame seeking, counted: needed frames 7, 22, 37, 52 of the span
		srand(7);
		long smart = 0;
		for (int k = 0; k < CLIPS; k++) {
			int first = rand() % (N - 2 * FPS), pos = -1;
			for (int j = 0; j < 4; j++) {
				int need = first + 7 + 15 * j, key = need / gops[g] * gops[g];
				int from = pos >= key ? pos + 1 : key;
				smart += need - from + 1;
				pos = need;
			}
		}
		printf("%6d %9.0f %15.2f %17.1f %16.1f %18.1f\n", gops[g], st.st_size / 1024.0, full, 1000 * secs / CLIPS,
		       (double)frames / CLIPS, (double)smart / CLIPS);
		unlink(path);
	}
	return 0;
}
