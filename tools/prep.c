// tools/prep: turns annotated long videos (CSV/TSV, Ego4D, EPIC-KITCHENS-100) or webdataset
// tar shards into chunks + one manifest; --info / --verify inspect a manifest.
#include "bpe_tokenizer.h"   // defines: bpe_load, bpe_tokenize, ...
#include "bpe_train.h"       // defines: bpe_trainer_new, bpe_trainer_add, bpe_trainer_train
#include "log.h"             // defines: log_init, log_info, log_warnx, log_fatal, ...
#include "manifest_writer.h" // defines: manifest_writer_new, manifest_add_*, manifest_write
#include "prep_annot.h"      // defines: prep_annot_load, PrepAnnotList, ...
#include "prep_chunk.h"      // defines: prep_chunk_video, PrepVideoResult, ...
#include "prep_defaults.h"   // defines: PREP_DEFAULT_*
#include "prep_encode.h"     // defines: prep_encoder_available
#include "prep_info.h"       // defines: prep_info, prep_verify
#include "prep_tar.h"        // defines: prep_tar_index, PrepTarIndex
#include "prep_upgrade.h"    // defines: prep_upgrade

#include <dirent.h>
#include <errno.h>
#include <libavutil/log.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
	const char *annotations, *format, *video_root, *out, *manifest, *bpe, *report, *shards;
	int train_bpe, train_bpe_set, jobs;
	double ego4d_window;
	PrepChunkOpts chunk;
} PrepOpts;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: prep --annotations FILE --video-root DIR --out ROOT [options]\n"
		"       prep --shards DIR --out ROOT [options]\n"
		"       prep --info MANIFEST | --verify MANIFEST [--deep] | --upgrade MANIFEST [-j N]\n"
		"Cuts videos into ROOT/<video-id>/<start-sec>.mp4 chunks (or indexes tar shards) and\n"
		"writes ROOT/manifest. Exit status: 0 all prepared, 3 some input dropped (see the\n"
		"report), 1 failure. --upgrade converts a version 1 manifest in place (chunks indexed,\n"
		"not re-encoded; the old file kept as MANIFEST.v1).\n"
		"  --format F        auto|csv|tsv|epic|ego4d (default auto)\n"
		"  --manifest M      manifest path (default ROOT/manifest)\n"
		"  --chunk-sec N     chunk length in seconds (default 15)\n"
		"  --short-side N    short side of the chunks in pixels (default 288)\n"
		"  --fps N[/D]       output frame rate (default: the source's, rounded)\n"
		"  --gop N           keyframe interval in frames (default 32)\n"
		"  --crf N           x264 quality (default 23); --preset P (default veryfast)\n"
		"  --bframes N       most B-frames in a row (default 7; never references, so the loader\n"
		"                    skips the ones a clip does not need; 0: decode order is display order)\n"
		"  --entropy E       cavlc (default: cheaper to decode, about 5%% larger) | cabac\n"
		"  -j, --jobs N      videos prepared in parallel (default: CPUs)\n"
		"  --bpe FILE        OpenAI-CLIP merges file (bpe_simple_vocab_16e6.txt)\n"
		"  --train-bpe N     without --bpe: train a vocabulary of N tokens (default 49408)\n"
		"                    from the captions, saved as ROOT/bpe_merges.txt; without either,\n"
		"                    an existing ROOT/bpe_merges.txt is used (a second manifest in ROOT)\n"
		"                    The vocabulary is also copied next to the manifest (for eval).\n"
		"  --report FILE     problems, one line each (default ROOT/prep-report.txt, or with\n"
		"                    --manifest DIR/NAME[.manifest]: DIR/NAME-report.txt)\n"
		"  --ego4d-window S  seconds either side of an Ego4D narration (default 1.0)\n");
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

// <root>/<id>[.ext], and EPIC's <root>/<P01>/videos/<P01_01>.MP4 or <root>/<P01>/<P01_01>.MP4
static int find_video(const char *root, const char *id, char *out, size_t cap)
{
	static const char *const ext[] = {"", ".mp4", ".MP4", ".mkv", ".webm", ".mov", ".MOV", ".avi"};
	char prefix[256];
	snprintf(prefix, sizeof(prefix), "%.*s", (int)strcspn(id, "_"), id);
	for (int form = 0; form < 3; form++)
		for (size_t e = 0; e < sizeof(ext) / sizeof(ext[0]); e++) {
			if (form == 0)
				snprintf(out, cap, "%s/%s%s", root, id, ext[e]);
			else
				snprintf(out, cap, "%s/%s%s/%s%s", root, prefix, form == 1 ? "/videos" : "", id, ext[e]);
			if (is_file(out))
				return 0;
		}
	return -ENOENT;
}

typedef struct {
	const PrepOpts *o;
	char **ids, **src;
	PrepVideoResult *res;
	int n, next, done;
	pthread_mutex_t mu;
	uint64_t frames;
} Pool;

static void *worker(void *arg)
{
	Pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		int i = p->next < p->n ? p->next++ : -1;
		pthread_mutex_unlock(&p->mu);
		if (i < 0)
			return NULL;
		if (p->src[i]) {
			PrepChunkOpts co = p->o->chunk;
			co.frames_done = &p->frames;
			// fewer videos than jobs: the spare cores decode (the encoder stays single-threaded
			// so the bytes do not depend on -j)
			co.decode_threads = p->o->jobs > p->n ? p->o->jobs / p->n : 1;
			prep_chunk_video(p->src[i], p->ids[i], &co, &p->res[i]);
		}
		pthread_mutex_lock(&p->mu);
		p->done++;
		pthread_mutex_unlock(&p->mu);
	}
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run_pool(Pool *p, int jobs)
{
	pthread_t th[256];
	jobs = jobs < 1 ? 1 : jobs > 256 ? 256 : jobs;
	pthread_mutex_init(&p->mu, NULL);
	for (int i = 0; i < jobs; i++)
		if (pthread_create(&th[i], NULL, worker, p) != 0)
			log_fatalx("cannot start worker threads");
	int tty = isatty(2);
	double t0 = now(), last = t0 - (tty ? 1.0 : 10.0); // the first line at once: prep has started
	for (;;) {
		usleep(200000);
		pthread_mutex_lock(&p->mu);
		int done = p->done;
		pthread_mutex_unlock(&p->mu);
		double t = now();
		if (done == p->n || t - last >= (tty ? 1.0 : 10.0)) {
			uint64_t fr = __atomic_load_n(&p->frames, __ATOMIC_RELAXED);
			// the ETA needs one finished video to go by; at the end the line says how long it took
			double el = t - t0, eta = done == p->n ? el : done ? el * (p->n - done) / done : -1;
			char when[48] = "ETA unknown until a video is done";
			if (eta >= 0)
				snprintf(when, sizeof when, "%s %d:%02d:%02d", done == p->n ? "done in" : "ETA", (int)eta / 3600,
					 (int)eta / 60 % 60, (int)eta % 60);
			fprintf(stderr, "%sprep: %d/%d videos, %llu frames encoded, %.0f frames/s, %s%s", tty ? "\r" : "", done, p->n,
				(unsigned long long)fr, el > 0 ? fr / el : 0, when, tty && done < p->n ? "   " : "\n");
			last = t;
		}
		if (done == p->n)
			break;
	}
	for (int i = 0; i < jobs; i++)
		pthread_join(th[i], NULL);
}

// path as stored in the manifest: relative to the manifest's folder when inside it
static const char *rel_path(const char *mdir, const char *path, char *buf, size_t cap)
{
	char a[PATH_MAX], b[PATH_MAX];
	if (realpath(mdir, a) && realpath(path, b)) {
		size_t n = strlen(a);
		if (strncmp(a, b, n) == 0 && b[n] == '/')
			snprintf(buf, cap, "%s", b + n + 1);
		else
			snprintf(buf, cap, "%s", b);
		return buf;
	}
	snprintf(buf, cap, "%s", path);
	return buf;
}

// a whole small file (a vocabulary), malloc'ed; NULL with errno set
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0, k;
	do {
		if (n == cap) {
			char *nb = cap < (64u << 20) ? realloc(buf, cap = cap ? 2 * cap : 1 << 16) : NULL;
			if (!nb) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
		}
	} while ((k = fread(buf + n, 1, cap - n, f)) > 0 && (n += k));
	fclose(f);
	*len = n;
	return buf;
}

// eval and clipdump look for bpe_merges.txt next to a manifest, so the vocabulary src goes
// there too; a different one already there is an error (that folder's manifests would
// disagree on token ids)
static void merges_next_to_manifest(const char *src, const char *mdir)
{
	char dst[4200], tmp[4300], a[PATH_MAX], b[PATH_MAX];
	snprintf(dst, sizeof(dst), "%s/bpe_merges.txt", mdir);
	if (realpath(src, a) && realpath(dst, b) && !strcmp(a, b))
		return;
	size_t n, m;
	char *want = slurp(src, &n), *have = NULL;
	if (!want)
		log_fatal("reading %s", src);
	if (is_file(dst)) {
		have = slurp(dst, &m);
		if (!have || m != n || memcmp(want, have, n))
			log_fatalx("%s holds another vocabulary than %s: the manifests next to it would disagree on token "
				   "ids (write this manifest to another folder, or pass --bpe %s)", dst, src, dst);
	} else {
		snprintf(tmp, sizeof(tmp), "%s.part", dst);
		FILE *f = fopen(tmp, "wb");
		if (!f || fwrite(want, 1, n, f) != n || fclose(f) != 0 || rename(tmp, dst) < 0)
			log_fatal("writing %s", dst);
		log_info("vocabulary copied next to the manifest: %s", dst);
	}
	free(want);
	free(have);
}

static BpeTokenizer *train_vocabulary(const PrepOpts *o, char *const *caps, size_t n);

// --bpe FILE; else ROOT/bpe_merges.txt when it exists and --train-bpe was not asked for (a
// held-out manifest written into the training ROOT must share its token ids); else one trained
// from the captions. The merges end up next to the manifest as well.
static BpeTokenizer *tokenizer(const PrepOpts *o, const char *mdir, char *const *caps, size_t n)
{
	BpeTokenizer *t;
	int line, rc;
	char own[4200];
	snprintf(own, sizeof(own), "%s/bpe_merges.txt", o->out);
	const char *src = o->bpe;
	if (!src && !o->train_bpe_set && is_file(own)) {
		src = own;
		log_info("using the vocabulary in %s (--train-bpe N trains a new one)", own);
	}
	if (src) {
		if ((rc = bpe_load(&t, src, &line)) < 0)
			log_fatalx("--bpe %s: %s%s", src, strerror(-rc), line ? " (see its line number in the file)" : "");
	} else if (n == 0) { // nothing to learn a vocabulary from, and nothing to tokenize with it
		log_warnx("no captions to prepare: no vocabulary trained and no manifest written (see the report)");
		return NULL;
	} else {
		t = train_vocabulary(o, caps, n);
		src = own;
	}
	merges_next_to_manifest(src, mdir);
	return t;
}

static BpeTokenizer *train_vocabulary(const PrepOpts *o, char *const *caps, size_t n)
{
	BpeTokenizer *t;
	int line, rc;
	BpeTrainer *tr;
	if (bpe_trainer_new(&tr))
		log_fatalx("out of memory");
	for (size_t i = 0; i < n; i++)
		bpe_trainer_add(tr, caps[i]);
	char *text;
	size_t len;
	int n_merges;
	if ((rc = bpe_trainer_train(tr, o->train_bpe, &text, &len, &n_merges)) < 0)
		log_fatalx("--train-bpe %d: %s", o->train_bpe, strerror(-rc));
	bpe_trainer_free(tr);
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/bpe_merges.txt", o->out);
	snprintf(tmp, sizeof(tmp), "%s.part", path);
	FILE *f = fopen(tmp, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0 || rename(tmp, path) < 0)
		log_fatal("writing %s", path);
	if ((rc = bpe_load_mem(&t, text, len, &line)) < 0)
		log_fatalx("trained vocabulary does not load: %s", strerror(-rc));
	free(text);
	log_info("trained a BPE vocabulary of %d tokens (%d merges) from %zu captions: %s", bpe_vocab_size(t), n_merges, n,
		 path);
	return t;
}

// a chunk and its packet index into the manifest; a chunk prep cannot index (it always can) is
// recorded without one, so the loader demuxes it, and reported
static int64_t add_chunk(ManifestWriter *w, uint32_t video, const char *rel, const PrepVideoResult *r,
			 const PrepChunkInfo *ci, PrepAnnotList *rep)
{
	const LdChunkIndex *ix = &ci->ix;
	int64_t cid = manifest_add_chunk(w, video, rel, (uint32_t)llround(ci->start_frame * 1000.0 * r->fps_den / r->fps_num),
					 ix->n_frames, r->fps_num, r->fps_den, ix->width, ix->height, ix->keyframes,
					 ix->n_keyframes);
	if (cid < 0)
		log_fatalx("manifest: chunk %s refused (%s)", ci->path, strerror((int)-cid));
	if (ix->codec == MANIFEST_CODEC_NONE) {
		prep_annot_problem(rep, "chunk %s: no packet index (%s): the loader will demux it", ci->path, ix->why);
		return cid;
	}
	int rc = manifest_set_chunk_index(w, (uint32_t)cid, ix->codec, ix->packets, ix->n_frames, ix->config,
					  ix->config_size, ix->file_size);
	if (rc < 0)
		log_fatalx("manifest: the packet index of chunk %s refused (%s)", ci->path, strerror(-rc));
	return cid;
}

static void add_problem_counts(PrepAnnotList *r, size_t *dropped)
{
	*dropped = r->bad_utf8 + r->bad_time + r->bad_record;
}

int main(int argc, char **argv)
{
	log_init("prep", LOG_INFO);
	// libx264 (0.164) reads a few bytes past the end of some of its own buffers; with B-frames those
	// bytes change its decisions, and from glibc's heap they depend on what other threads did, so
	// chunks came out different from run to run under -j (valgrind: invalid reads of size 16).
	// Buffers of 64 KiB and more mapped on their own end in zero-filled pages: the same bytes always.
	mallopt(M_MMAP_THRESHOLD, 64 << 10);
	av_log_set_level(getenv("AVCLIP_AV_LOG") ? AV_LOG_INFO : AV_LOG_ERROR); // libx264 banners otherwise
	PrepOpts o = {.format = "auto", .train_bpe = 49408, .jobs = (int)sysconf(_SC_NPROCESSORS_ONLN), .ego4d_window = 1.0,
		      .chunk = {.chunk_sec = PREP_DEFAULT_CHUNK_SEC, .short_side = PREP_DEFAULT_SHORT_SIDE,
				.gop = PREP_DEFAULT_GOP, .bframes = PREP_DEFAULT_BFRAMES, .cavlc = PREP_DEFAULT_CAVLC,
				.crf = PREP_DEFAULT_CRF,
				.preset = PREP_DEFAULT_PRESET}};
	const char *info = NULL, *verify = NULL, *upgrade = NULL;
	int deep = 0;
	static const struct option lo[] = {
		{"annotations", 1, 0, 'a'}, {"format", 1, 0, 'F'},  {"video-root", 1, 0, 'r'}, {"out", 1, 0, 'o'},
		{"manifest", 1, 0, 'M'},    {"chunk-sec", 1, 0, 'c'}, {"short-side", 1, 0, 's'}, {"fps", 1, 0, 'f'},
		{"gop", 1, 0, 'g'},         {"crf", 1, 0, 'C'},     {"preset", 1, 0, 'P'},     {"bframes", 1, 0, 'B'}, {"entropy", 1, 0, 'E'},
		{"jobs", 1, 0, 'j'},        {"bpe", 1, 0, 'b'},     {"train-bpe", 1, 0, 't'},  {"report", 1, 0, 'R'},
		{"ego4d-window", 1, 0, 'w'}, {"shards", 1, 0, 'S'}, {"info", 1, 0, 'i'},       {"verify", 1, 0, 'v'},
		{"deep", 0, 0, 'd'},        {"upgrade", 1, 0, 'U'}, {"help", 0, 0, 'h'},    {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "j:h", lo, NULL)) != -1) {
		char *end = (char *)"";
		switch (c) {
		case 'a': o.annotations = optarg; break;
		case 'F': o.format = optarg; break;
		case 'r': o.video_root = optarg; break;
		case 'o': o.out = optarg; break;
		case 'M': o.manifest = optarg; break;
		case 'c': o.chunk.chunk_sec = (int)strtol(optarg, &end, 10); break;
		case 's': o.chunk.short_side = (int)strtol(optarg, &end, 10); break;
		case 'f':
			o.chunk.fps_num = (int)strtol(optarg, &end, 10), o.chunk.fps_den = 1;
			if (*end == '/')
				o.chunk.fps_den = (int)strtol(end + 1, &end, 10);
			break;
		case 'g': o.chunk.gop = (int)strtol(optarg, &end, 10); break;
		case 'C': o.chunk.crf = (int)strtol(optarg, &end, 10); break;
		case 'P': o.chunk.preset = optarg; break;
		case 'B': o.chunk.bframes = (int)strtol(optarg, &end, 10); break;
		case 'E':
			if (strcmp(optarg, "cavlc") && strcmp(optarg, "cabac"))
				log_fatalx("--entropy: '%s' is neither cavlc nor cabac", optarg);
			o.chunk.cavlc = !strcmp(optarg, "cavlc");
			break;
		case 'j': o.jobs = (int)strtol(optarg, &end, 10); break;
		case 'b': o.bpe = optarg; break;
		case 't': o.train_bpe = (int)strtol(optarg, &end, 10), o.train_bpe_set = 1; break;
		case 'R': o.report = optarg; break;
		case 'w': o.ego4d_window = strtod(optarg, &end); break;
		case 'S': o.shards = optarg; break;
		case 'i': info = optarg; break;
		case 'v': verify = optarg; break;
		case 'd': deep = 1; break;
		case 'U': upgrade = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
		if (*end)
			log_fatalx("'%s' is not a number (see --help)", optarg);
	}
	if (info)
		return prep_info(info);
	if (verify)
		return prep_verify(verify, deep);
	if (upgrade)
		return prep_upgrade(upgrade, o.jobs);
	if (!o.out || (!o.shards && (!o.annotations || !o.video_root)) || (o.shards && o.annotations)) {
		usage(stderr);
		return 1;
	}
	if (o.chunk.chunk_sec < 1 || o.chunk.short_side < 16 || o.chunk.short_side > 4096 || o.chunk.short_side % 2 ||
	    o.chunk.gop < 1 || o.chunk.crf < 0 || o.chunk.crf > 51 || o.chunk.bframes < 0 || o.chunk.bframes > 16 ||
	    o.jobs < 1 || (o.chunk.fps_num && (o.chunk.fps_num < 1 || o.chunk.fps_den < 1)) || o.train_bpe < 515 ||
	    o.train_bpe > 65536 || o.ego4d_window <= 0)
		log_fatalx("bad option value (see --help)");
	if (mkdir(o.out, 0755) < 0 && errno != EEXIST)
		log_fatal("cannot create %s", o.out);
	char manifest[4096], report[4096], mdir[4096];
	snprintf(manifest, sizeof(manifest), "%s", o.manifest ? o.manifest : "");
	if (!o.manifest)
		snprintf(manifest, sizeof(manifest), "%s/manifest", o.out);
	// a second manifest (--manifest DIR/heldout.manifest) gets its own report, never the first's
	snprintf(report, sizeof(report), "%s", o.report ? o.report : "");
	if (!o.report && !o.manifest)
		snprintf(report, sizeof(report), "%s/prep-report.txt", o.out);
	else if (!o.report) {
		size_t ml = strlen(o.manifest), sl = strlen(".manifest");
		int stem = ml > sl && !strcmp(o.manifest + ml - sl, ".manifest") ? (int)(ml - sl) : (int)ml;
		snprintf(report, sizeof(report), "%.*s-report.txt", stem, o.manifest);
	}
	snprintf(mdir, sizeof(mdir), "%s", manifest);
	char *slash = strrchr(mdir, '/');
	if (slash)
		*slash = 0;
	else
		strcpy(mdir, ".");
	o.chunk.root = o.out;

	PrepAnnotList rep = {0}; // problems of every kind, and the clips of an annotation file
	size_t dropped_video = 0, dropped_range = 0, dropped_damage = 0, damaged_videos = 0, n_samples = 0;
	ManifestWriter *w = NULL;
	BpeTokenizer *tok = NULL;
	int rc;
	if (o.shards) {
		DIR *d = opendir(o.shards);
		if (!d)
			log_fatal("--shards %s", o.shards);
		char **names = NULL;
		size_t nn = 0;
		struct dirent *de;
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name);
			if (l > 4 && strcmp(de->d_name + l - 4, ".tar") == 0) {
				names = realloc(names, (nn + 1) * sizeof(char *));
				if (!names || !(names[nn++] = strdup(de->d_name)))
					log_fatalx("out of memory");
			}
		}
		closedir(d);
		if (nn == 0) {
			rep.bad_record++;
			prep_annot_problem(&rep, "--shards %s: no .tar files in it", o.shards);
		}
		if (nn)
			qsort(names, nn, sizeof(char *), cmp_str);
		PrepTarIndex *ix = calloc(nn ? nn : 1, sizeof(PrepTarIndex));
		char **caps = NULL;
		size_t ncaps = 0;
		for (size_t i = 0; i < nn; i++) {
			char path[8192];
			snprintf(path, sizeof(path), "%s/%s", o.shards, names[i]);
			if ((rc = prep_tar_index(path, &ix[i], &rep)) < 0) {
				rep.bad_record++;
				prep_annot_problem(&rep, "%s: cannot read: %s", path, strerror(-rc));
				continue;
			}
			if (ix[i].n == 0) { // an empty shard is reported, never silently part of nothing
				rep.bad_record++;
				prep_annot_problem(&rep, "%s: no image with a caption in this shard%s", path,
						   ix[i].size ? "" : " (empty file)");
			}
			caps = realloc(caps, (ncaps + ix[i].n + 1) * sizeof(char *));
			if (!caps)
				log_fatalx("out of memory");
			for (size_t k = 0; k < ix[i].n; k++)
				caps[ncaps++] = ix[i].img[k].caption;
		}
		tok = tokenizer(&o, mdir, caps, ncaps);
		free(caps);
		if (tok && manifest_writer_new(&w, BPE_CONTEXT, (uint32_t)bpe_vocab_size(tok), 0, 0) < 0)
			log_fatalx("tokenizer vocabulary too large for the manifest");
		for (size_t i = 0; i < nn; i++) {
			if (!w || (!ix[i].size && !ix[i].n)) { // nothing of it goes into a manifest
				prep_tar_free(&ix[i]);
				free(names[i]);
				continue;
			}
			char path[8192], rel[8192];
			snprintf(path, sizeof(path), "%s/%s", o.shards, names[i]);
			int64_t sid = manifest_add_shard(w, rel_path(mdir, path, rel, sizeof(rel)), ix[i].size);
			if (sid < 0)
				log_fatalx("manifest: %s", strerror((int)-sid));
			for (size_t k = 0; k < ix[i].n; k++) {
				int32_t ids[BPE_CONTEXT];
				if (bpe_tokenize(tok, ix[i].img[k].caption, ids, BPE_CONTEXT) < 0 ||
				    manifest_add_image(w, (uint32_t)sid, ix[i].img[k].offset, ix[i].img[k].length, ids) < 0)
					log_fatalx("%s: key %s cannot be added", path, ix[i].img[k].key);
				n_samples++;
			}
			prep_tar_free(&ix[i]);
			free(names[i]);
		}
		free(ix);
		free(names);
	} else {
		if (!prep_encoder_available())
			log_fatalx("this libavcodec has no H.264 encoder (libx264)");
		PrepAnnotList al;
		if ((rc = prep_annot_load(&al, o.annotations, o.format, o.ego4d_window)) < 0)
			log_fatalx("%s: %s", o.annotations,
				   rc == -EBADMSG && al.n_problems ? al.problems[al.n_problems - 1]
				   : rc == -EINVAL		   ? "unknown format or layout (see --format)"
								   : strerror(-rc));
		rep = al; // the annotation problems start the report; clips stay in rep.a
		if (rep.n == 0 && rep.n_problems == 0) { // a header and nothing else
			rep.bad_record++;
			prep_annot_problem(&rep, "%s: no annotation records", o.annotations);
		}
		// distinct videos, sorted
		char **ids = malloc((rep.n + 1) * sizeof(char *));
		size_t nv = 0;
		for (size_t i = 0; i < rep.n; i++)
			ids[nv++] = rep.a[i].video;
		qsort(ids, nv, sizeof(char *), cmp_str);
		size_t u = 0;
		for (size_t i = 0; i < nv; i++)
			if (!u || strcmp(ids[u - 1], ids[i]))
				ids[u++] = ids[i];
		nv = u;
		Pool p = {.o = &o, .ids = ids, .n = (int)nv};
		p.src = calloc(nv + 1, sizeof(char *));
		p.res = calloc(nv + 1, sizeof(PrepVideoResult));
		for (size_t i = 0; i < nv; i++) {
			char path[8192];
			if (find_video(o.video_root, ids[i], path, sizeof(path)) == 0)
				p.src[i] = strdup(path);
			else
				snprintf(p.res[i].error, sizeof(p.res[i].error), "not found under %s", o.video_root);
		}
		log_info("%zu clips of %zu videos; chunks of %d s, short side %d, GOP %d, %d jobs", rep.n, nv,
			 o.chunk.chunk_sec, o.chunk.short_side, o.chunk.gop, o.jobs);
		run_pool(&p, o.jobs);
		char **caps = malloc((rep.n + 1) * sizeof(char *));
		for (size_t i = 0; i < rep.n; i++)
			caps[i] = rep.a[i].caption;
		tok = tokenizer(&o, mdir, caps, rep.n);
		free(caps);
		if (tok && manifest_writer_new(&w, BPE_CONTEXT, (uint32_t)bpe_vocab_size(tok), (uint32_t)o.chunk.chunk_sec * 1000,
					       (uint32_t)o.chunk.short_side) < 0)
			log_fatalx("tokenizer vocabulary too large for the manifest");
		int64_t *vidx = malloc((nv + 1) * sizeof(int64_t));
		uint32_t *first_chunk = malloc((nv + 1) * sizeof(uint32_t));
		for (size_t i = 0; i < nv; i++) {
			PrepVideoResult *r = &p.res[i];
			vidx[i] = -1;
			if (r->error[0] || !r->n_chunks) {
				prep_annot_problem(&rep, "video %s: %s", ids[i], r->error[0] ? r->error : "no chunks");
				continue;
			}
			if (r->damage.n) { // the chunks are kept; clips over the damage are cut out below
				char spans[600];
				prep_damage_format(&r->damage, r->fps_num, r->fps_den, 8, spans, sizeof spans);
				prep_annot_problem(&rep,
						   "video %s: %llu frames decode with errors (%d decoder errors, %d concealed, %d "
						   "corrupt frames): %s; clips overlapping them are dropped",
						   ids[i], (unsigned long long)r->damage.frames, r->damage.errors, r->damage.concealed,
						   r->damage.corrupt, spans);
				damaged_videos++;
			}
			vidx[i] = manifest_add_video(w, ids[i], (uint64_t)llround(r->duration * 1000));
			for (int k = 0; k < r->n_chunks; k++) {
				PrepChunkInfo *ci = &r->chunks[k];
				char full[8192], rel[8192];
				snprintf(full, sizeof(full), "%s/%s", o.out, ci->path);
				int64_t cid = add_chunk(w, (uint32_t)vidx[i], rel_path(mdir, full, rel, sizeof(rel)), r, ci, &rep);
				if (k == 0)
					first_chunk[i] = (uint32_t)cid;
			}
		}
		for (size_t i = 0; i < rep.n; i++) {
			const PrepAnnot *a = &rep.a[i];
			char **hit = bsearch(&a->video, ids, nv, sizeof(char *), cmp_str);
			size_t v = (size_t)(hit - ids);
			if (vidx[v] < 0) {
				dropped_video++;
				continue;
			}
			const PrepVideoResult *r = &p.res[v];
			uint32_t c0, f0, c1, f1;
			if (prep_clip_frames(r, a->start, a->end, &c0, &f0, &c1, &f1) < 0) {
				dropped_range++;
				prep_annot_problem(&rep, "line %d: video %s: %.2f-%.2f s is outside the video (0-%.2f s)", a->line,
						   a->video, a->start, a->end, r->duration);
				continue;
			}
			uint64_t per = r->chunks[0].ix.n_frames, fb = c0 * per + f0, fe = c1 * per + f1;
			int dmg = prep_damage_overlap(&r->damage, fb, fe);
			if (dmg >= 0) {
				const PrepSpan *d = &r->damage.spans[dmg];
				dropped_damage++;
				prep_annot_problem(&rep, "line %d: video %s: %.2f-%.2f s overlaps frames %llu-%llu that decode with errors",
						   a->line, a->video, a->start, a->end, (unsigned long long)d->first,
						   (unsigned long long)d->last);
				continue;
			}
			int32_t idsb[BPE_CONTEXT];
			if (bpe_tokenize(tok, a->caption, idsb, BPE_CONTEXT) < 0)
				log_fatalx("line %d: tokenizer failed", a->line);
			int64_t sid = manifest_add_clip(w, (uint32_t)vidx[v], first_chunk[v] + c0, f0, first_chunk[v] + c1, f1, idsb);
			if (sid < 0)
				log_fatalx("line %d: manifest refused the clip (%s)", a->line, strerror((int)-sid));
			n_samples++;
		}
		for (size_t i = 0; i < nv; i++) {
			prep_video_result_free(&p.res[i]);
			free(p.src[i]);
		}
		free(p.res), free(p.src), free(ids), free(vidx), free(first_chunk);
	}
	if (w && (rc = manifest_write(w, manifest)) < 0)
		log_fatalx("writing %s: %s", manifest, strerror(-rc));
	manifest_writer_free(w);
	bpe_free(tok);
	size_t dropped_parse;
	add_problem_counts(&rep, &dropped_parse);
	// a damaged video counts even when no clip touched the damage: its chunks hold garbled frames
	size_t dropped = dropped_parse + dropped_video + dropped_range + dropped_damage + damaged_videos;
	FILE *rf = fopen(report, "w");
	if (!rf)
		log_fatal("%s", report);
	for (size_t i = 0; i < rep.n_problems; i++) {
		fprintf(rf, "%s\n", rep.problems[i]);
		if (i < 20)
			log_warnx("%s", rep.problems[i]);
	}
	fprintf(rf, "summary: %zu samples, %zu dropped (%zu bad video, %zu invalid UTF-8, %zu bad time, %zu outside the "
		    "video, %zu bad record, %zu over damaged frames); %zu videos with damaged frames\n",
		n_samples, dropped - damaged_videos, dropped_video, rep.bad_utf8, rep.bad_time, dropped_range, rep.bad_record,
		dropped_damage, damaged_videos);
	fclose(rf);
	if (rep.n_problems > 20)
		log_warnx("... %zu more problems in %s", rep.n_problems - 20, report);
	log_info("%s: %zu samples; %zu dropped (%zu bad video, %zu invalid UTF-8, %zu bad time, %zu outside the video, %zu "
		 "bad record, %zu over damaged frames); %zu videos with damaged frames; report %s",
		 manifest, n_samples, dropped - damaged_videos, dropped_video, rep.bad_utf8, rep.bad_time, dropped_range,
		 rep.bad_record, dropped_damage, damaged_videos, report);
	prep_annot_free(&rep);
	return dropped ? 3 : 0;
}
