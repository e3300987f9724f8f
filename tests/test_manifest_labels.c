// Class labels in the manifest (version 3): a manifest without labels is still version 2 and
// reads as "no labels"; one with two heads (names, class counts, class names of one head) reads
// back label for label; the data checksum covers the labels; hostile labels sections with valid
// checksums (a label past its head's classes, a head too many, sections on each other, names
// outside the strings) are refused at open, each with its reason; the writer refuses bad labels.
// With an argument DIR it also writes the labelled manifest as DIR/labels (the fuzz seed).
#include "manifest.h" // defines: manifest_open, manifest_label_*, manifest_labels, manifest_writer_new, manifest_writer_set_heads, manifest_set_labels
#include "manifest_recrc.h" // defines: manifest_recrc

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(cond)                                                                                                    \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			printf("FAIL line %d: %s\n", __LINE__, #cond);                                                 \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

enum { N_SAMPLES = 5 };
static const int32_t want_labels[N_SAMPLES][2] = {{0, 299}, {96, 0}, {5, -1}, {-1, 7}, {-1, -1}};

// two videos, five clips; with labels: heads verb (97, unnamed) and noun (300, named n0..n299)
static ManifestWriter *make(int labelled)
{
	ManifestWriter *w;
	if (manifest_writer_new(&w, 8, 1000, 15000, 288))
		return NULL;
	int32_t tok[8] = {998, 5, 6, 999};
	uint32_t kf[] = {0, 8};
	manifest_add_video(w, "a", 2000);
	manifest_add_chunk(w, 0, "a/0.mp4", 0, 50, 25, 1, 320, 288, kf, 2);
	manifest_add_video(w, "b", 2000);
	manifest_add_chunk(w, 1, "b/0.mp4", 0, 50, 25, 1, 320, 288, kf, 2);
	for (int i = 0; i < N_SAMPLES; i++)
		manifest_add_clip(w, (uint32_t)(i % 2), (uint32_t)(i % 2), (uint32_t)i, (uint32_t)(i % 2),
				  (uint32_t)(i + 10), tok);
	if (!labelled)
		return w;
	static char names[300][8];
	static const char *noun[300];
	for (int c = 0; c < 300; c++)
		snprintf(names[c], sizeof names[c], "n%d", c), noun[c] = names[c];
	const char *head_names[] = {"verb", "noun"};
	const uint32_t n_classes[] = {97, 300};
	const char *const *class_names[] = {NULL, noun};
	CHECK(manifest_set_labels(w, 0, want_labels[0]) == -EINVAL); // no heads yet
	CHECK(manifest_writer_set_heads(w, 2, head_names, n_classes, class_names) == 0);
	CHECK(manifest_writer_set_heads(w, 2, head_names, n_classes, class_names) == -EINVAL); // once
	for (int i = 0; i < N_SAMPLES - 1; i++) // the last keeps the default: no label
		CHECK(manifest_set_labels(w, (uint64_t)i, want_labels[i]) == 0);
	const int32_t over[2] = {97, 0}, under[2] = {-2, 0}, third[2] = {0, 300};
	CHECK(manifest_set_labels(w, 1, over) == -EINVAL);
	CHECK(manifest_set_labels(w, 1, under) == -EINVAL);
	CHECK(manifest_set_labels(w, 1, third) == -EINVAL);
	CHECK(manifest_set_labels(w, N_SAMPLES, want_labels[0]) == -EINVAL);
	return w;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	uint8_t *p = aligned_alloc(8, (*n + 7) / 8 * 8);
	if (p && fread(p, 1, *n, f) != *n)
		free(p), p = NULL;
	fclose(f);
	return p;
}

// the image with one change and valid checksums is refused at open naming `want`
static void expect_refused(const char *what, const uint8_t *img, size_t n, void (*change)(uint8_t *), const char *want)
{
	uint8_t *p = aligned_alloc(8, (n + 7) / 8 * 8);
	memcpy(p, img, n);
	change(p);
	manifest_recrc(p, n);
	Manifest *m;
	char err[256] = "";
	int rc = manifest_open_mem(&m, p, n, "/tmp", err, sizeof err);
	if (rc != -EBADMSG || !strstr(err, want)) {
		printf("FAIL %s: rc %d, '%s' (want -EBADMSG naming '%s')\n", what, rc, err, want);
		fails++;
		if (!rc)
			manifest_close(m);
	} else {
		printf("refused, %s: %s\n", what, err);
	}
	free(p);
}

static ManifestHeader *hdr(uint8_t *p)
{
	return (ManifestHeader *)p;
}
static ManifestHead *heads(uint8_t *p)
{
	return (ManifestHead *)(p + hdr(p)->labels_off);
}
static int32_t *labels(uint8_t *p)
{
	return (int32_t *)(heads(p) + MANIFEST_MAX_HEADS);
}
static void label_past_classes(uint8_t *p)
{
	labels(p)[2] = 97; // sample 1, verb
}
static void label_below_none(uint8_t *p)
{
	labels(p)[1] = -2;
}
static void three_heads(uint8_t *p)
{
	hdr(p)->n_heads = 3;
}
static void no_heads(uint8_t *p)
{
	hdr(p)->n_heads = 0;
}
static void labels_on_samples(uint8_t *p)
{
	hdr(p)->labels_off = hdr(p)->samples_off;
}
static void labels_past_end(uint8_t *p)
{
	hdr(p)->labels_off = hdr(p)->file_size - 8;
}
static void names_outside(uint8_t *p)
{
	heads(p)[1].classes_off = hdr(p)->strings_size - 3; // "n299" is the table's last string
}
static void some_named(uint8_t *p)
{
	heads(p)[1].n_named = 5;
}
static void zero_classes(uint8_t *p)
{
	heads(p)[0].n_classes = 0;
}
static void head_name_outside(uint8_t *p)
{
	heads(p)[0].name_off = hdr(p)->strings_size;
}
static void label_of_absent_head(uint8_t *p)
{
	hdr(p)->n_heads = 1;
	memset(&heads(p)[1], 0, sizeof(ManifestHead));
	labels(p)[2 * 4 + 1] = 3; // sample 4 had none; now head 1 (absent) has a label
}
static void stray_head(uint8_t *p)
{
	hdr(p)->n_heads = 1; // head 1's record stays
}

static void check_labelled(const char *path)
{
	Manifest *m;
	char err[256];
	if (manifest_open_verified(&m, path, err, sizeof err)) {
		printf("FAIL open labelled: %s\n", err);
		fails++;
		return;
	}
	CHECK(manifest_header(m)->version == 3);
	CHECK(manifest_label_heads(m) == 2);
	CHECK(manifest_label_classes(m, 0) == 97 && manifest_label_classes(m, 1) == 300);
	CHECK(manifest_label_classes(m, 2) == 0);
	CHECK(!strcmp(manifest_label_head_name(m, 0), "verb") && !strcmp(manifest_label_head_name(m, 1), "noun"));
	CHECK(manifest_label_class_name(m, 0, 3) == NULL); // verb: no names recorded
	CHECK(manifest_label_class_name(m, 1, 0) && !strcmp(manifest_label_class_name(m, 1, 0), "n0"));
	CHECK(manifest_label_class_name(m, 1, 299) && !strcmp(manifest_label_class_name(m, 1, 299), "n299"));
	CHECK(manifest_label_class_name(m, 1, 300) == NULL);
	for (int i = 0; i < N_SAMPLES; i++) {
		int32_t l[2];
		manifest_labels(m, (uint64_t)i, l);
		const int32_t *want = i < N_SAMPLES - 1 ? want_labels[i] : (const int32_t[2]){-1, -1};
		CHECK(l[0] == want[0] && l[1] == want[1]);
	}
	// what a program that knows nothing of labels reads is unchanged
	CHECK(manifest_header(m)->n_samples == N_SAMPLES && manifest_tokens(m, 3)[1] == 5);
	CHECK(manifest_sample(m, 4)->clip.frame_end == 14);
	manifest_close(m);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/test_manifest_labels_XXXXXX", plain[256], lab[256];
	if (!mkdtemp(dir))
		return 1;
	snprintf(plain, sizeof plain, "%s/plain", dir);
	snprintf(lab, sizeof lab, "%s/labelled", dir);
	ManifestWriter *w = make(0);
	CHECK(w && manifest_write(w, plain) == 0);
	manifest_writer_free(w);
	w = make(1);
	CHECK(w && manifest_write(w, lab) == 0);
	manifest_writer_free(w);

	// without labels: version 2 with its reserved fields zero, labels "none"
	Manifest *m;
	char err[256];
	if (manifest_open_verified(&m, plain, err, sizeof err) == 0) {
		const ManifestHeader *h = manifest_header(m);
		CHECK(h->version == 2 && h->n_heads == 0 && h->labels_off == 0);
		CHECK(manifest_label_heads(m) == 0 && manifest_label_classes(m, 0) == 0);
		CHECK(manifest_label_class_name(m, 0, 0) == NULL && !strcmp(manifest_label_head_name(m, 0), ""));
		int32_t l[2] = {5, 5};
		manifest_labels(m, 0, l);
		CHECK(l[0] == -1 && l[1] == -1);
		manifest_close(m);
	} else {
		printf("FAIL open plain: %s\n", err);
		fails++;
	}
	check_labelled(lab);

	size_t n, n_plain;
	uint8_t *img = slurp(lab, &n), *img_plain = slurp(plain, &n_plain);
	if (!img || !img_plain)
		return 1;
	// the labels add exactly the section: 48 bytes of heads and 8 per sample (plus strings)
	CHECK(n > n_plain + 48 + 8 * N_SAMPLES);
	// the data checksum covers the labels
	uint8_t *p = aligned_alloc(8, (n + 7) / 8 * 8);
	memcpy(p, img, n);
	labels(p)[0] = 1;
	if (manifest_open_mem(&m, p, n, "/tmp", err, sizeof err) == 0) {
		CHECK(manifest_check_data(m, err, sizeof err) == -EBADMSG && strstr(err, "data checksum"));
		manifest_close(m);
	} else {
		printf("FAIL a changed label must open (its checksum is the data's): %s\n", err);
		fails++;
	}
	// a version 2 header with labels fields set is still read as version 2: no labels
	memcpy(p, img_plain, n_plain);
	hdr(p)->n_heads = 2;
	manifest_recrc(p, n_plain);
	if (manifest_open_mem(&m, p, n_plain, "/tmp", err, sizeof err) == 0) {
		CHECK(manifest_label_heads(m) == 0);
		manifest_close(m);
	} else {
		printf("FAIL version 2 with n_heads set: %s\n", err);
		fails++;
	}
	free(p);

	expect_refused("a label past its head's classes", img, n, label_past_classes, "outside its 97 classes");
	expect_refused("a label below -1", img, n, label_below_none, "label -2 of head 1");
	expect_refused("three heads", img, n, three_heads, "3 label heads");
	expect_refused("version 3 without heads", img, n, no_heads, "0 label heads");
	expect_refused("labels on the samples", img, n, labels_on_samples, "overlaps");
	expect_refused("labels past the end", img, n, labels_past_end, "labels section");
	expect_refused("class names outside the strings", img, n, names_outside, "outside the strings");
	expect_refused("some classes named", img, n, some_named, "with 5 names");
	expect_refused("a head of no classes", img, n, zero_classes, "0 classes");
	expect_refused("a head name outside the strings", img, n, head_name_outside, "name out of range");
	expect_refused("a label of a head that is not there", img, n, label_of_absent_head, "outside its 0 classes");
	expect_refused("a head record beyond the heads", img, n, stray_head, "beyond the 1 heads");

	if (argc > 1) { // the fuzz seed: tests/fuzz/corpus/manifest/labels
		char seed[4200];
		snprintf(seed, sizeof seed, "%s/labels", argv[1]);
		FILE *f = fopen(seed, "wb");
		CHECK(f && fwrite(img, 1, n, f) == n && fclose(f) == 0);
	}
	free(img);
	free(img_plain);
	remove(plain), remove(lab), remove(dir);
	printf("%s\n", fails ? "FAIL" : "ok");
	return fails ? 1 : 0;
}
