// Bad manifests give an error code and a one-line reason, never a crash: missing, empty,
// wrong magic, other version (version 1 names the upgrade), corrupt header, truncated, trailing
// bytes, corrupt data, out-of-range references, an inconsistent packet index; and the writer
// refuses inconsistent records.
#include "manifest.h" // defines: manifest_open, manifest_check_data, manifest_writer_new, manifest_add_*, manifest_write

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fails;
static char dir[] = "/tmp/test_manifest_err_XXXXXX", good[256], bad[256];
static unsigned char *img;
static size_t img_n;

static void put_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	fwrite(p, 1, n, f);
	fclose(f);
}

// opens bytes p[0..n) and expects rc and a reason containing want
static void expect(const char *what, const void *p, size_t n, int want_rc, const char *want)
{
	put_file(bad, p, n);
	Manifest *m = NULL;
	char err[256] = "";
	int rc = manifest_open(&m, bad, err, sizeof(err));
	if (rc != want_rc || !strstr(err, want) || m) {
		printf("FAIL %s: rc %d '%s', want %d '%s'\n", what, rc, err, want_rc, want);
		fails++;
	} else {
		printf("ok   %-28s %s\n", what, err);
	}
	manifest_close(m);
}

static void fix_header_crc(unsigned char *p)
{
	ManifestHeader *h = (ManifestHeader *)p;
	h->header_crc = 0;
	h->header_crc = manifest_crc32(0, h, sizeof(*h));
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(good, sizeof(good), "%s/good.manifest", dir);
	snprintf(bad, sizeof(bad), "%s/bad.manifest", dir);
	ManifestWriter *w;
	manifest_writer_new(&w, 77, 1000, 15000, 288);
	int32_t tok[77] = {998, 5, 999};
	uint32_t kf[] = {0, 8};
	manifest_add_video(w, "v", 30000);
	manifest_add_chunk(w, 0, "v/0.mp4", 0, 16, 8, 1, 512, 288, kf, 2);
	manifest_add_chunk(w, 0, "v/15.mp4", 15000, 16, 8, 1, 512, 288, kf, 2);
	manifest_add_clip(w, 0, 0, 10, 1, 4, tok);
	// chunk 1 gets a packet index: 16 frames in display order, keyframes 0 and 8
	ManifestPacket pk[16], bad_pk[16];
	const uint8_t config[] = {1, 0x64, 0, 0x1f, 0xff, 0xe1};
	for (int i = 0; i < 16; i++)
		pk[i] = (ManifestPacket){.offset = 100 + 50 * (uint32_t)i,
					 .size = 50,
					 .frame = (uint16_t)i,
					 .flags = MANIFEST_PKT_REF | (i % 8 ? 0 : MANIFEST_PKT_KEY)};
	struct {
		const char *what;
		int field, value;
	} pkbad[] = {
		{"duplicate frame", 2, 3}, {"key packet off its keyframe", 3, MANIFEST_PKT_KEY}, {"overlap", 1, 0}};
	for (size_t i = 0; i < sizeof(pkbad) / sizeof(pkbad[0]); i++) {
		memcpy(bad_pk, pk, sizeof(pk));
		if (pkbad[i].field == 2)
			bad_pk[5].frame = (uint16_t)pkbad[i].value;
		else if (pkbad[i].field == 3)
			bad_pk[5].flags |= (uint16_t)pkbad[i].value;
		else
			bad_pk[5].offset = bad_pk[4].offset + 10;
		if (manifest_set_chunk_index(w, 1, MANIFEST_CODEC_H264, bad_pk, 16, config, sizeof(config), 1000) !=
		    -EINVAL) {
			printf("FAIL writer accepted a packet index with a %s\n", pkbad[i].what);
			fails++;
		}
	}
	if (manifest_set_chunk_index(w, 1, MANIFEST_CODEC_H264, pk, 15, config, sizeof(config), 1000) != -EINVAL ||
	    manifest_set_chunk_index(w, 1, MANIFEST_CODEC_H264, pk, 16, config, sizeof(config), 800) != -EINVAL) {
		printf("FAIL writer accepted a short packet index or packets past the file size\n");
		fails++;
	}
	if (manifest_set_chunk_index(w, 1, MANIFEST_CODEC_H264, pk, 16, config, sizeof(config), 1000) != 0) {
		printf("FAIL writer refused a good packet index\n");
		fails++;
	}

	// writer refusals
	int32_t badtok[77] = {998, 1000, 999}, notok[77] = {0};
	uint32_t kf_bad[] = {0, 20}, kf_nozero[] = {4};
	struct {
		const char *what;
		int64_t rc;
	} wr[] = {
		{"chunk of unknown video", manifest_add_chunk(w, 5, "x.mp4", 0, 16, 8, 1, 64, 64, kf, 2)},
		{"keyframe past the end", manifest_add_chunk(w, 0, "x.mp4", 0, 16, 8, 1, 64, 64, kf_bad, 2)},
		{"first keyframe not 0", manifest_add_chunk(w, 0, "x.mp4", 0, 16, 8, 1, 64, 64, kf_nozero, 1)},
		{"zero frames", manifest_add_chunk(w, 0, "x.mp4", 0, 0, 8, 1, 64, 64, kf, 1)},
		{"clip frame past chunk", manifest_add_clip(w, 0, 0, 16, 0, 17, tok)},
		{"clip empty range", manifest_add_clip(w, 0, 0, 5, 0, 5, tok)},
		{"clip chunk of other video", manifest_add_clip(w, 0, 0, 0, 7, 1, tok)},
		{"token >= vocabulary", manifest_add_clip(w, 0, 0, 0, 0, 4, badtok)},
		{"no tokens", manifest_add_clip(w, 0, 0, 0, 0, 4, notok)},
		{"image of unknown shard", manifest_add_image(w, 3, 0, 10, tok)},
	};
	for (size_t i = 0; i < sizeof(wr) / sizeof(wr[0]); i++)
		if (wr[i].rc != -EINVAL) {
			printf("FAIL writer accepted: %s (%lld)\n", wr[i].what, (long long)wr[i].rc);
			fails++;
		}
	ManifestWriter *w2;
	if (manifest_writer_new(&w2, 77, 70000, 0, 0) != -EINVAL) {
		printf("FAIL vocabulary > 65536 accepted (ids are uint16)\n");
		fails++;
	}
	if (manifest_write(w, good) != 0) {
		printf("cannot write %s\n", good);
		return 1;
	}
	manifest_writer_free(w);
	FILE *f = fopen(good, "rb");
	fseek(f, 0, SEEK_END);
	img_n = (size_t)ftell(f);
	rewind(f);
	img = malloc(img_n + 64);
	if (fread(img, 1, img_n, f) != img_n)
		return 1;
	fclose(f);
	unsigned char *p = malloc(img_n + 64);
	ManifestHeader *h = (ManifestHeader *)p;

	Manifest *m;
	char err[256];
	if (manifest_open(&m, dir, err, sizeof(err)) != -EINVAL) {
		printf("FAIL directory opened\n");
		fails++;
	}
	snprintf(err, sizeof(err), "%s/none", dir);
	if (manifest_open(&m, err, err, sizeof(err)) != -ENOENT) {
		printf("FAIL missing file: not ENOENT\n");
		fails++;
	}
	expect("empty file", img, 0, -EBADMSG, "not a manifest");
	expect("tiny file", img, 12, -EBADMSG, "not a manifest");
	expect("text file", "hello, this is not a manifest at all", 36, -EBADMSG, "magic");
	memcpy(p, img, img_n);
	h->version = MANIFEST_VERSION + 1;
	fix_header_crc(p);
	expect("a later version", p, img_n, -EPROTONOSUPPORT, "version 4");
	h->version = 1;
	fix_header_crc(p);
	expect("version 1", p, img_n, -EPROTONOSUPPORT, "prep --upgrade");
	memcpy(p, img, img_n);
	p[offsetof(ManifestHeader, n_chunks)] ^= 1;
	expect("header bit flip", p, img_n, -EBADMSG, "header checksum");
	expect("truncated header", img, 100, -EBADMSG, "truncated");
	expect("truncated data", img, img_n - 8, -EBADMSG, "truncated");
	memcpy(p, img, img_n);
	memset(p + img_n, 0, 8);
	expect("trailing bytes", p, img_n + 8, -EBADMSG, "trailing");
	memcpy(p, img, img_n);
	h->samples_off = img_n - 8;
	fix_header_crc(p);
	expect("section past the end", p, img_n, -EBADMSG, "samples section");
	memcpy(p, img, img_n);
	ManifestSample *s = (ManifestSample *)(p + ((ManifestHeader *)img)->samples_off);
	s->clip.frame_end = 17;
	expect("clip frame out of range", p, img_n, -EBADMSG, "sample 0");
	memcpy(p, img, img_n);
	s->clip.chunk_last = 9;
	expect("clip chunk out of range", p, img_n, -EBADMSG, "sample 0");
	memcpy(p, img, img_n);
	ManifestChunk *c = (ManifestChunk *)(p + ((ManifestHeader *)img)->chunks_off);
	c->kf_count = 1000;
	expect("keyframe range", p, img_n, -EBADMSG, "chunk 0");
	memcpy(p, img, img_n);
	ManifestPacket *pp = (ManifestPacket *)(p + ((ManifestHeader *)img)->packets_off);
	static const struct {
		const char *what, *want;
	} pkcase[] = {{"packet frame twice", "chunk 1: packet index"},
		      {"packet past the file", "chunk 1: packet index"},
		      {"packet range", "chunk 1: packet or codec configuration range"},
		      {"unknown codec", "unknown codec"},
		      {"packets without a codec", "chunk 0: packets"}};
	for (int k = 0; k < 5; k++) {
		memcpy(p, img, img_n);
		if (k == 0)
			pp[6].frame = 2;
		else if (k == 1)
			pp[9].offset = 2000;
		else if (k == 2)
			c[1].pkt_first = 5;
		else if (k == 3)
			c[1].codec = 7;
		else
			c[0].pkt_count = 3;
		expect(pkcase[k].what, p, img_n, -EBADMSG, pkcase[k].want);
	}
	memcpy(p, img, img_n);
	p[((ManifestHeader *)img)->strings_off + ((ManifestHeader *)img)->strings_size - 1] = 'x';
	expect("unterminated strings", p, img_n, -EBADMSG, "string table");
	// every field the loader turns into work is range-checked (a frame rate of 1/1 made a loader
	// seek short and repeat forever)
	memcpy(p, img, img_n);
	c->fps_num = 1;
	c->fps_den = 2;
	expect("16 frames at 0.5 fps", p, img_n, -EBADMSG,
	       "16 frames at 1/2 fps last 32.0 s, longer than the 15.0-s chunks");
	memcpy(p, img, img_n);
	c->fps_den = 0;
	expect("fps 8/0", p, img_n, -EBADMSG, "frame rate 8/0");
	memcpy(p, img, img_n);
	c->fps_num = 0;
	expect("fps 0/1", p, img_n, -EBADMSG, "frame rate 0/1");
	memcpy(p, img, img_n);
	c->fps_num = 0x80000008u;
	c->fps_den = 0x80000000u;
	expect("fps with huge terms", p, img_n, -EBADMSG, "frame rate 2147483656/2147483648");
	memcpy(p, img, img_n);
	c->width = 0;
	expect("zero width", p, img_n, -EBADMSG, "chunk 0");

	// an image past its shard's end
	{
		ManifestWriter *wi;
		manifest_writer_new(&wi, 77, 1000, 0, 0);
		manifest_add_shard(wi, "s.tar", 1000);
		manifest_add_image(wi, 0, 900, 100, tok);
		char ip[300];
		snprintf(ip, sizeof ip, "%s/img.manifest", dir);
		manifest_write(wi, ip);
		manifest_writer_free(wi);
		FILE *fi = fopen(ip, "r+b");
		ManifestHeader ih;
		ManifestSample is;
		if (!fi || fread(&ih, sizeof ih, 1, fi) != 1 || fseek(fi, (long)ih.samples_off, SEEK_SET) ||
		    fread(&is, sizeof is, 1, fi) != 1)
			return 1;
		is.image.length = 200; // the writer refuses it: made by hand
		fseek(fi, (long)ih.samples_off, SEEK_SET);
		fwrite(&is, sizeof is, 1, fi);
		fclose(fi);
		char e2[256] = "";
		Manifest *mi = NULL;
		int rc = manifest_open(&mi, ip, e2, sizeof e2);
		if (rc != -EBADMSG || !strstr(e2, "sample 0: shard or byte range")) {
			printf("FAIL image past its shard: rc %d '%s'\n", rc, e2);
			fails++;
		} else
			printf("ok   %-28s %s\n", "image past its shard", e2);
		manifest_close(mi);
		unlink(ip);
	}

	// a flipped token passes the structural check; the data check finds it
	memcpy(p, img, img_n);
	uint16_t *t = (uint16_t *)(p + ((ManifestHeader *)img)->tokens_off);
	t[1] = 1001;
	put_file(bad, p, img_n);
	if (manifest_open(&m, bad, err, sizeof(err)) != 0) {
		printf("FAIL token flip refused at open: %s\n", err);
		fails++;
	} else {
		if (manifest_check_data(m, err, sizeof(err)) != -EBADMSG || !strstr(err, "checksum")) {
			printf("FAIL data corruption not found: %s\n", err);
			fails++;
		} else {
			printf("ok   %-28s %s\n", "corrupt token", err);
		}
		manifest_close(m);
	}
	// what the programs that read samples open with: the data checksum at open
	if (manifest_open_verified(&m, bad, err, sizeof(err)) != -EBADMSG || m || !strstr(err, "checksum")) {
		printf("FAIL manifest_open_verified accepted corrupt data: %s\n", err);
		fails++;
	} else
		printf("ok   %-28s %s\n", "verified open, corrupt data", err);
	if (manifest_open_verified(&m, good, err, sizeof(err)) != 0) {
		printf("FAIL manifest_open_verified refused a good manifest: %s\n", err);
		fails++;
	} else
		manifest_close(m);
	unlink(good);
	unlink(bad);
	rmdir(dir);
	free(p);
	free(img);
	printf("%s\n", fails ? "FAILED" : "every corrupt manifest is refused with a reason");
	return fails ? 1 : 0;
}
