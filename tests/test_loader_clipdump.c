// tools/clipdump writes valid PNG contact sheets whose frames equal the in-process decode of
// the same positions (manifest mode), error positions as sheets without frames, and takes
// clips from a live ring as rank 0's consumer (ring mode).
#include "test_loader_harness.h" // defines: Th, th_setup, th_spawn, th_stop, ...

static uint8_t *png_read(const char *path, int *w, int *h)
{
	size_t n = 0, cap = 0;
	uint8_t *buf = NULL;
	char err[256];
	CHECK(ld_file_read(path, 0, 0, 0, &buf, &cap, &n, err, sizeof(err)) == 0);
	const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_PNG);
	AVCodecContext *c = avcodec_alloc_context3(codec);
	CHECK(avcodec_open2(c, codec, NULL) == 0);
	AVPacket *pkt = av_packet_alloc();
	CHECK(av_new_packet(pkt, (int)n) == 0);
	memcpy(pkt->data, buf, n);
	AVFrame *f = av_frame_alloc();
	CHECK(avcodec_send_packet(c, pkt) == 0);
	CHECK(avcodec_receive_frame(c, f) == 0);
	CHECK(f->format == AV_PIX_FMT_RGB24);
	*w = f->width;
	*h = f->height;
	uint8_t *rgb = malloc((size_t)f->width * f->height * 3);
	for (int y = 0; y < f->height; y++)
		memcpy(rgb + (size_t)y * f->width * 3, f->data[0] + (size_t)y * f->linesize[0], (size_t)f->width * 3);
	av_frame_free(&f);
	av_packet_free(&pkt);
	avcodec_free_context(&c);
	free(buf);
	return rgb;
}

int main(void)
{
	Th t;
	th_setup(&t, "ldcd");
	if (access("tools/clipdump", X_OK) != 0)
		test_skip("tools/clipdump is not built");
	char gone[400], cmd[1400], out[400], png[500];
	snprintf(gone, sizeof(gone), "%s/chunks/vid00_0.mp4", t.dir);
	CHECK(unlink(gone) == 0);
	snprintf(out, sizeof(out), "%s/sheets", t.dir);
	snprintf(
		cmd, sizeof(cmd),
		"tools/clipdump --manifest %s --positions 0-11 --seed %d --frames %d --image-size %d --scale 1 --out %s",
		t.manifest, TH_SEED, TH_T, TH_HW, out);
	CHECK(system(cmd) == 0);
	int errors = 0;
	char err[512];
	for (uint64_t g = 0; g <= 11; g++) {
		snprintf(png, sizeof(png), "%s/pos%llu.png", out, (unsigned long long)g);
		int w, h;
		uint8_t *rgb = png_read(png, &w, &h);
		CHECK(w >= TH_T * TH_HW && h > TH_HW);
		LdPlan plan;
		int rc = ld_sample_load(t.d, &t.files, t.m, g, &t.p, &plan, t.expect, err, sizeof(err));
		int text = 0;
		for (int y = TH_HW; y < h; y++)
			for (int x = 0; x < w; x++)
				text += rgb[((size_t)y * w + x) * 3] == 235;
		CHECK(text > 50); // the label was drawn
		for (int k = 0; k < TH_T && !rc; k++)
			for (int y = 0; y < TH_HW; y++)
				CHECK(!memcmp(rgb + ((size_t)y * w + (size_t)k * TH_HW) * 3,
					      t.expect + (((size_t)k * TH_HW + y) * TH_HW) * 3, TH_HW * 3));
		if (rc) { // an error sheet has no frames: background where frames would be
			errors++;
			CHECK(rgb[0] == 24 && rgb[((size_t)10 * w + 10) * 3] == 24);
		}
		free(rgb);
	}
	CHECK(errors > 0 && errors < 12);
	// ring mode: clipdump is rank 0's consumer while a loader fills the ring
	ring_consumer_detach(t.c);
	pid_t a = th_spawn(&t, "a", NULL);
	snprintf(out, sizeof(out), "%s/ring", t.dir);
	snprintf(cmd, sizeof(cmd), "tools/clipdump --ring %s --rank 0 --count 3 --scale 1 --out %s", t.ring, out);
	CHECK(system(cmd) == 0);
	for (int g = 0; g < 3; g++) {
		snprintf(png, sizeof(png), "%s/pos%d.png", out, g);
		int w, h;
		free(png_read(png, &w, &h));
		CHECK(w >= TH_T * TH_HW);
	}
	CHECK(ring_consumer_attach(t.r, 0, &t.c) == 0);
	th_stop(a);
	printf("12 manifest sheets match the in-process decode (%d error sheets); 3 sheets from a live ring\n", errors);
	th_teardown(&t);
	return 0;
}
