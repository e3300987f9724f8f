// tools/prep: turns annotated long videos (CSV/TSV, Ego4D, EPIC-KITCHENS-100) or webdataset
// tar shards into chunks + one manifest; --info / --verify inspect a manifest.
#include "avlog.h"        // defines: avlog_install, avlog_summary
#include "bpe.h"          // defines: bpe_load, bpe_tokenize, ..., bpe_trainer_new, bpe_trainer_add, bpe_trainer_train
#include "proc_time.h"    // defines: time_mono_s
#include "fs_dir.h"       // defines: fs_mkdir_p, fs_fopen_new, fs_fopen_read, fs_dir_own
#include "log.h"          // defines: log_init, log_info, log_warnx, log_fatal, ...
#include "manifest.h"     // defines: manifest_writer_new, manifest_add_*, manifest_write
#include "prep_annot.h"   // defines: prep_annot_load, PrepAnnotList, ...
#include "prep_chunk.h"   // defines: prep_chunk_video, PrepVideoResult, ...
#include "prep_encode.h"  // defines: prep_encoder_available
#include "prep_info.h"    // defines: prep_info, prep_verify
#include "prep_labels.h"  // defines: prep_labels_load, PrepLabelOpts
#include "prep_opts.h"    // defines: PrepOpts, prep_opts_parse, prep_opts_usage
#include "prep_tar.h"     // defines: prep_tar_index, PrepTarIndex
#include "prep_upgrade.h" // defines: prep_upgrade
#include "shell_quote.h"  // defines: shell_quoted

#include <dirent.h>
#include <errno.h>
#include <libavutil/log.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

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
				snprintf(out, cap, "%s/%s%s/%s%s", root, prefix, form == 1 ? "/videos" : "", id,
					 ext[e]);
			if (is_file(out))
				return 0;
		}
	return -ENOENT;
}

typedef struct {
	const PrepOpts *o;
	char **ids, **src, **dirs; // dirs: each video's chunk folder under ROOT (chunk_folders)
	PrepVideoResult *res;
	int n, next, done;
	pthread_mutex_t mu;
	uint64_t frames;
	uint64_t *vdone, *vtotal; // (n) each video's frames so far and to come (prep_chunk.h)
	char *finished;           // (n) under mu
} Pool;

// the share of the work done: finished videos count 1, a video being cut its frames so far over
// the frames its duration promises, so one long video shows progress too (under p->mu)
static double pool_fraction(const Pool *p)
{
	double f = 0;
	for (int i = 0; i < p->n; i++) {
		uint64_t total = __atomic_load_n(&p->vtotal[i], __ATOMIC_RELAXED);
		double one = total ? (double)__atomic_load_n(&p->vdone[i], __ATOMIC_RELAXED) / (double)total : 0;
		f += p->finished[i] ? 1 : one < 0.99 ? one : 0.99;
	}
	return p->n ? f / p->n : 1;
}

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
			co.video_done = &p->vdone[i], co.video_total = &p->vtotal[i];
			prep_chunk_video(p->src[i], p->dirs[i], &co, &p->res[i]);
		}
		pthread_mutex_lock(&p->mu);
		p->finished[i] = 1;
		p->done++;
		pthread_mutex_unlock(&p->mu);
	}
}

static void run_pool(Pool *p, int jobs)
{
	pthread_t th[256];
	jobs = jobs < 1 ? 1 : jobs > 256 ? 256 : jobs;
	pthread_mutex_init(&p->mu, NULL);
	p->vdone = calloc((size_t)p->n + 1, sizeof *p->vdone);
	p->vtotal = calloc((size_t)p->n + 1, sizeof *p->vtotal);
	p->finished = calloc((size_t)p->n + 1, 1);
	if (!p->vdone || !p->vtotal || !p->finished)
		log_fatalx("out of memory");
	for (int i = 0; i < jobs; i++)
		if (pthread_create(&th[i], NULL, worker, p) != 0)
			log_fatalx("cannot start worker threads");
	int tty = isatty(2);
	const double every = p->o->progress_every > 0 ? p->o->progress_every : tty ? 1.0 : 10.0;
	double t0 = time_mono_s(), last = t0 - every; // the first line at once: prep has started
	for (;;) {
		usleep(every < 0.2 ? (useconds_t)(every * 1e6) : 200000);
		pthread_mutex_lock(&p->mu);
		int done = p->done;
		double frac = pool_fraction(p);
		pthread_mutex_unlock(&p->mu);
		double t = time_mono_s();
		if (done == p->n || t - last >= every) {
			uint64_t fr = __atomic_load_n(&p->frames, __ATOMIC_RELAXED);
			// the ETA goes by the share of frames done (inside videos too, from their durations);
			// at the end the line says how long it took
			double el = t - t0, eta = done == p->n ? el : frac > 0 ? el * (1 - frac) / frac : -1;
			char when[48] = "ETA unknown until frames are done";
			int s = done == p->n ? (int)eta : (int)ceil(eta); // never "ETA 0:00:00" before the end
			if (eta >= 0)
				snprintf(when, sizeof when, "%s %d:%02d:%02d", done == p->n ? "done in" : "ETA",
					 s / 3600, s / 60 % 60, s % 60);
			fprintf(stderr, "%sprep: %d/%d videos (%.0f%%), %llu frames encoded, %.0f frames/s, %s%s",
				tty ? "\r" : "", done, p->n, 100 * frac, (unsigned long long)fr, el > 0 ? fr / el : 0,
				when, tty && done < p->n ? "   " : "\n");
			last = t;
		}
		if (done == p->n)
			break;
	}
	for (int i = 0; i < jobs; i++)
		pthread_join(th[i], NULL);
	free(p->vdone), free(p->vtotal), free(p->finished);
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
	FILE *f = fs_fopen_read(path, "rb");
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
			log_fatalx(
				"%s holds another vocabulary than %s: the manifests next to it would disagree on token "
				"ids (write this manifest to another folder, or pass --bpe %s)",
				dst, src, shell_quoted(dst));
	} else {
		snprintf(tmp, sizeof(tmp), "%s.part", dst);
		FILE *f = fs_fopen_new(tmp, 0644);
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
		if ((rc = bpe_load(&t, src, &line)) < 0) {
			char where[4300];
			snprintf(where, sizeof where, line ? "%s:%d" : "%s", src, line);
			const char *why =
				!line ? strerror(-rc)
				: rc == -EILSEQ
					? "this line is not UTF-8"
					: "malformed line (a merges file has one header line, then \"LEFT RIGHT\" "
					  "lines)";
			if (src == own) // reused without being asked for: say how to get a good one
				log_fatalx(
					"%s: %s; it is not a merges file prep can use: remove it (or pass --train-bpe N) "
					"to train a new vocabulary, or pass --bpe FILE",
					where, why);
			log_fatalx("--bpe %s: %s", where, why);
		}
	} else if (n == 0) { // nothing to learn a vocabulary from, and nothing to tokenize with it
		log_warnx("no captions to prepare: no vocabulary trained and no manifest written (see the report)");
		return NULL;
	} else {
		t = train_vocabulary(o, caps, n);
		src = own;
	}
	merges_next_to_manifest(src, mdir);
	bpe_set_specials(t, (BpeSpecials)o->special_tokens);
	return t;
}

static BpeTokenizer *train_vocabulary(const PrepOpts *o, char *const *caps, size_t n)
{
	BpeTokenizer *t;
	int line, rc;
	BpeTrainer *tr;
	if (bpe_trainer_new(&tr))
		log_fatalx("out of memory");
	bpe_trainer_specials(tr, (BpeSpecials)o->special_tokens);
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
	// loaded before it is written: a vocabulary that does not load never reaches the file a rerun reuses
	if ((rc = bpe_load_mem(&t, text, len, &line)) < 0)
		log_fatalx("the vocabulary trained from %zu captions does not load (%s at its line %d): nothing "
			   "written; please report this with the captions",
			   n, strerror(-rc), line);
	snprintf(tmp, sizeof(tmp), "%s.part", path);
	FILE *f = fs_fopen_new(tmp, 0644);
	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		log_fatal("writing %s", path);
	}
	free(text);
	log_info("trained a BPE vocabulary of %d tokens (%d merges) from %zu captions: %s", bpe_vocab_size(t), n_merges,
		 n, path);
	return t;
}

// a chunk and its packet index into the manifest; a chunk prep cannot index (it always can) is
// recorded without one, so the loader demuxes it, and reported
static int64_t add_chunk(ManifestWriter *w, uint32_t video, const char *rel, const PrepVideoResult *r,
			 const PrepChunkInfo *ci, PrepAnnotList *rep)
{
	const LdChunkIndex *ix = &ci->ix;
	int64_t cid = manifest_add_chunk(
		w, video, rel, (uint32_t)llround(ci->start_frame * 1000.0 * r->fps_den / r->fps_num), ix->n_frames,
		r->fps_num, r->fps_den, ix->width, ix->height, ix->keyframes, ix->n_keyframes);
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

// One preparation: its options, output paths, the manifest being written and the counts the
// report ends with.
typedef struct {
	PrepOpts o;
	char manifest[4096], report[4096], mdir[4096];
	PrepAnnotList rep; // problems of every kind, and the clips of an annotation file
	ManifestWriter *w;
	BpeTokenizer *tok;
	size_t dropped_video, dropped_range, dropped_damage, damaged_videos, damaged_images, n_samples;
	char *in_root[7]; // the names of the outputs that lie in ROOT itself, NULL-ended (check_outputs)
} PrepRun;

// the manifest (default ROOT/manifest), its report and the folder the manifest is in
static void output_paths(PrepRun *run)
{
	const PrepOpts *o = &run->o;
	snprintf(run->manifest, sizeof(run->manifest), "%s", o->manifest ? o->manifest : "");
	if (!o->manifest)
		snprintf(run->manifest, sizeof(run->manifest), "%s/manifest", o->out);
	// a second manifest (--manifest DIR/heldout.manifest) gets its own report, never the first's
	snprintf(run->report, sizeof(run->report), "%s", o->report ? o->report : "");
	if (!o->report && !o->manifest)
		snprintf(run->report, sizeof(run->report), "%s/prep-report.txt", o->out);
	else if (!o->report) {
		size_t ml = strlen(o->manifest), sl = strlen(".manifest");
		int stem = ml > sl && !strcmp(o->manifest + ml - sl, ".manifest") ? (int)(ml - sl) : (int)ml;
		snprintf(run->report, sizeof(run->report), "%.*s-report.txt", stem, o->manifest);
	}
	snprintf(run->mdir, sizeof(run->mdir), "%s", run->manifest);
	char *slash = strrchr(run->mdir, '/');
	if (slash)
		*slash = 0;
	else
		strcpy(run->mdir, ".");
}

// every output path is a file or nothing yet, before any work: a folder there would fail prep
// only at its end; the names of those in ROOT itself are kept (no chunk folder may take them)
static void check_outputs(PrepRun *run)
{
	char own[4200], next[4200];
	snprintf(own, sizeof own, "%s/bpe_merges.txt", run->o.out);
	snprintf(next, sizeof next, "%s/bpe_merges.txt", run->mdir);
	// ROOT's default manifest and report too: another manifest written into ROOT (a held-out
	// split) must not take the folder names of the first one's
	char dflt_m[4200], dflt_r[4200];
	snprintf(dflt_m, sizeof dflt_m, "%s/manifest", run->o.out);
	snprintf(dflt_r, sizeof dflt_r, "%s/prep-report.txt", run->o.out);
	const char *path[] = {run->manifest, run->report, own, next, dflt_m, dflt_r};
	struct stat root, st;
	if (stat(run->o.out, &root) < 0)
		log_fatal("--out %s", run->o.out);
	size_t k = 0;
	for (size_t i = 0; i < sizeof path / sizeof path[0]; i++) {
		if (i < 4 && stat(path[i], &st) == 0 && !S_ISREG(st.st_mode)) // the first four: this run's
			log_fatalx("%s is not a file (a folder?): prep writes its output there; move it away", path[i]);
		char dir[4200];
		snprintf(dir, sizeof dir, "%s", path[i]);
		char *slash = strrchr(dir, '/'), *name = slash ? slash + 1 : dir;
		if (slash)
			*slash = 0;
		if (stat(slash ? (dir[0] ? dir : "/") : ".", &st) == 0 && st.st_dev == root.st_dev &&
		    st.st_ino == root.st_ino && k + 1 < sizeof run->in_root / sizeof run->in_root[0] &&
		    !(run->in_root[k++] = strdup(name)))
			log_fatalx("out of memory");
	}
}

// the .tar files of --shards, sorted; an empty folder is a report line
static char **shard_names(PrepRun *run, size_t *n)
{
	DIR *d = opendir(run->o.shards);
	if (!d)
		log_fatal("--shards %s", run->o.shards);
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
		run->rep.bad_record++;
		prep_annot_problem(&run->rep, "--shards %s: no .tar files in it", run->o.shards);
	}
	if (nn)
		qsort(names, nn, sizeof(char *), cmp_str);
	*n = nn;
	return names;
}

// --shards: index each tar, a vocabulary from every caption, then each image into the manifest
static void prep_shards(PrepRun *run)
{
	const PrepOpts *o = &run->o;
	PrepAnnotList *rep = &run->rep;
	size_t nn;
	char **names = shard_names(run, &nn);
	PrepTarIndex *ix = calloc(nn ? nn : 1, sizeof(PrepTarIndex));
	char **caps = NULL;
	size_t ncaps = 0;
	int rc;
	for (size_t i = 0; i < nn; i++) {
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", o->shards, names[i]);
		if ((rc = prep_tar_index(path, &ix[i], rep)) < 0) {
			rep->bad_record++;
			prep_annot_problem(rep, "%s: cannot read: %s", path,
					   rc == -EINVAL ? "not a regular file"
							 : strerror(-rc)); // prep_tar_index's -EINVAL
			continue;
		}
		int bad = o->no_check_images ? 0 : prep_tar_check_images(path, &ix[i], rep);
		if (bad < 0)
			log_fatalx("%s: cannot check its images: %s", path, strerror(-bad));
		run->damaged_images += (size_t)bad;
		if (ix[i].n == 0 && !bad) { // an empty shard is reported, never silently part of nothing
			rep->bad_record++;
			prep_annot_problem(rep, "%s: no image with a caption in this shard%s", path,
					   ix[i].size ? "" : " (empty file)");
		}
		caps = realloc(caps, (ncaps + ix[i].n + 1) * sizeof(char *));
		if (!caps)
			log_fatalx("out of memory");
		for (size_t k = 0; k < ix[i].n; k++)
			caps[ncaps++] = ix[i].img[k].caption;
	}
	run->tok = tokenizer(o, run->mdir, caps, ncaps);
	free(caps);
	if (run->tok &&
	    manifest_writer_new(&run->w, (uint32_t)o->context, (uint32_t)bpe_vocab_size(run->tok), 0, 0) < 0)
		log_fatalx("tokenizer vocabulary too large for the manifest");
	if (run->w)
		manifest_writer_set_vocab(run->w, bpe_vocab_hash(run->tok));
	for (size_t i = 0; i < nn; i++) {
		if (!run->w || (!ix[i].size && !ix[i].n)) { // nothing of it goes into a manifest
			prep_tar_free(&ix[i]);
			free(names[i]);
			continue;
		}
		char path[8192], rel[8192];
		snprintf(path, sizeof(path), "%s/%s", o->shards, names[i]);
		int64_t sid = manifest_add_shard(run->w, rel_path(run->mdir, path, rel, sizeof(rel)), ix[i].size);
		if (sid < 0)
			log_fatalx("manifest: %s", strerror((int)-sid));
		for (size_t k = 0; k < ix[i].n; k++) {
			int32_t ids[BPE_CONTEXT];
			if (bpe_tokenize(run->tok, ix[i].img[k].caption, ids, o->context) < 0 ||
			    manifest_add_image(run->w, (uint32_t)sid, ix[i].img[k].offset, ix[i].img[k].length, ids) <
				    0)
				log_fatalx("%s: key %s cannot be added", path, ix[i].img[k].key);
			run->n_samples++;
		}
		prep_tar_free(&ix[i]);
		free(names[i]);
	}
	free(ix);
	free(names);
}

// the folder of an id's first len bytes lies on an output in ROOT: its first path component is
// one of out[] (NULL-ended names), or that name's temporary file (NAME.part, NAME.tmp.PID)
static int is_output(const char *id, size_t len, const char *const *out)
{
	size_t c = strcspn(id, "/");
	c = c < len ? c : len;
	for (; *out; out++) {
		size_t l = strlen(*out);
		if (c >= l && !strncmp(id, *out, l) &&
		    (c == l || (c == l + 5 && !strncmp(id + l, ".part", 5)) ||
		     (c > l + 5 && !strncmp(id + l, ".tmp.", 5))))
			return 1;
	}
	return 0;
}

typedef struct {
	const char *dir;
	size_t i;
} DirRef;

static int cmp_dir(const void *a, const void *b)
{
	const DirRef *x = a, *y = b;
	int c = strcmp(x->dir, y->dir);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

// each video's chunk folder: its id without the file extension an annotation may give it
// ("bikes_120s.mp4" -> ROOT/bikes_120s/), but the id itself where a ROOT prepared before holds
// that folder finished (its manifests name those chunk paths; they stay valid) or where two ids
// would share a folder ("a.mp4" and "a.mkv") or where the shorter name is one of prep's own
// outputs in ROOT (out[], "manifest.mp4" -> ROOT/manifest.mp4/); NULL: even the whole id is one
static char **chunk_folders(const char *root, char **ids, size_t n, const char *const *out)
{
	static const char *const ext[] = {".mp4", ".mkv", ".webm", ".mov", ".avi", ".m4v", ".mpg", ".mpeg", ".ts"};
	char **dirs = calloc(n + 1, sizeof *dirs);
	DirRef *order = malloc((n + 1) * sizeof *order);
	if (!dirs || !order)
		log_fatalx("out of memory");
	for (size_t i = 0; i < n; i++) {
		const char *id = ids[i], *dot = strrchr(id, '.'), *slash = strrchr(id, '/');
		size_t keep = strlen(id);
		for (size_t e = 0; dot && dot > id && (!slash || dot > slash + 1) && e < sizeof ext / sizeof ext[0];
		     e++)
			if (!strcasecmp(dot, ext[e]))
				keep = (size_t)(dot - id);
		char old[4200];
		snprintf(old, sizeof old, "%s/%s/.done", root, id);
		if (keep < strlen(id) && access(old, F_OK) == 0)
			keep = strlen(id); // the layout of an earlier prep: reused, not encoded again
		if (keep < strlen(id) && is_output(id, keep, out))
			keep = strlen(id);
		if (is_output(id, strlen(id), out)) {
			order[i] = (DirRef){"", i}; // refused: no folder, never shared
			continue;
		}
		if (!(dirs[i] = strndup(id, keep)))
			log_fatalx("out of memory");
		order[i] = (DirRef){dirs[i], i};
	}
	qsort(order, n, sizeof *order, cmp_dir);
	char *shared = calloc(n + 1, 1);
	if (!shared)
		log_fatalx("out of memory");
	for (size_t k = 1; k < n; k++)
		if (order[k].dir[0] && !strcmp(order[k].dir, order[k - 1].dir))
			shared[order[k].i] = shared[order[k - 1].i] = 1;
	for (size_t i = 0; i < n; i++) // a shared folder: each keeps its whole id
		if (shared[i] && dirs[i]) {
			free(dirs[i]);
			if (!(dirs[i] = strdup(ids[i])))
				log_fatalx("out of memory");
		}
	free(shared);
	free(order);
	return dirs;
}

// the distinct videos of the clips, sorted (pointers into rep)
static char **video_ids(const PrepAnnotList *rep, size_t *n)
{
	char **ids = malloc((rep->n + 1) * sizeof(char *));
	if (!ids)
		log_fatalx("out of memory");
	size_t nv = 0, u = 0;
	for (size_t i = 0; i < rep->n; i++)
		ids[nv++] = rep->a[i].video;
	qsort(ids, nv, sizeof(char *), cmp_str);
	for (size_t i = 0; i < nv; i++)
		if (!u || strcmp(ids[u - 1], ids[i]))
			ids[u++] = ids[i];
	*n = u;
	return ids;
}

// each prepared video and its chunks into the manifest (vidx[i] -1: not there); damage reported
static void add_videos(PrepRun *run, const Pool *p, int64_t *vidx, uint32_t *first_chunk)
{
	for (int i = 0; i < p->n; i++) {
		const PrepVideoResult *r = &p->res[i];
		vidx[i] = -1;
		if (r->error[0] || !r->n_chunks) {
			prep_annot_problem(&run->rep, "video %s: %s", p->ids[i], r->error[0] ? r->error : "no chunks");
			continue;
		}
		if (r->damage.n) { // the chunks are kept; clips over the damage are cut out in add_clips
			char spans[600];
			prep_damage_format(&r->damage, r->fps_num, r->fps_den, 8, spans, sizeof spans);
			prep_annot_problem(
				&run->rep,
				"video %s: %llu frames decode with errors (%d decoder errors, %d concealed, %d "
				"corrupt frames): %s; clips overlapping them are dropped",
				p->ids[i], (unsigned long long)r->damage.frames, r->damage.errors, r->damage.concealed,
				r->damage.corrupt, spans);
			run->damaged_videos++;
		}
		vidx[i] = manifest_add_video(run->w, p->ids[i], (uint64_t)llround(r->duration * 1000));
		for (int k = 0; k < r->n_chunks; k++) {
			const PrepChunkInfo *ci = &r->chunks[k];
			char full[8192], rel[8192];
			snprintf(full, sizeof(full), "%s/%s", run->o.out, ci->path);
			int64_t cid = add_chunk(run->w, (uint32_t)vidx[i], rel_path(run->mdir, full, rel, sizeof(rel)),
						r, ci, &run->rep);
			if (k == 0)
				first_chunk[i] = (uint32_t)cid;
		}
	}
}

// each clip into the manifest, unless its video failed, it is outside it, or it overlaps damage
static void add_clips(PrepRun *run, const Pool *p, const int64_t *vidx, const uint32_t *first_chunk)
{
	PrepAnnotList *rep = &run->rep;
	for (size_t i = 0; i < rep->n; i++) {
		const PrepAnnot *a = &rep->a[i];
		char **hit = bsearch(&a->video, p->ids, (size_t)p->n, sizeof(char *), cmp_str);
		size_t v = (size_t)(hit - p->ids);
		if (vidx[v] < 0) {
			run->dropped_video++;
			continue;
		}
		const PrepVideoResult *r = &p->res[v];
		uint32_t c0, f0, c1, f1;
		const double end = isinf(a->end) ? r->duration : a->end; // a whole-video clip
		if (prep_clip_frames(r, a->start, end, &c0, &f0, &c1, &f1) < 0) {
			run->dropped_range++;
			prep_annot_problem(rep, "line %d: video %s: %.2f-%.2f s is outside the video (0-%.2f s)",
					   a->line, a->video, a->start, end, r->duration);
			continue;
		}
		uint64_t per = r->chunks[0].ix.n_frames, fb = c0 * per + f0, fe = c1 * per + f1;
		int dmg = prep_damage_overlap(&r->damage, fb, fe);
		if (dmg >= 0) {
			const PrepSpan *d = &r->damage.spans[dmg];
			run->dropped_damage++;
			prep_annot_problem(
				rep, "line %d: video %s: %.2f-%.2f s overlaps frames %llu-%llu that decode with errors",
				a->line, a->video, a->start, end, (unsigned long long)d->first,
				(unsigned long long)d->last);
			continue;
		}
		int32_t idsb[BPE_CONTEXT];
		if (bpe_tokenize(run->tok, a->caption, idsb, run->o.context) < 0)
			log_fatalx("line %d: tokenizer failed", a->line);
		int64_t sid = manifest_add_clip(run->w, (uint32_t)vidx[v], first_chunk[v] + c0, f0, first_chunk[v] + c1,
						f1, idsb);
		if (sid < 0)
			log_fatalx("line %d: manifest refused the clip (%s)", a->line, strerror((int)-sid));
		if (rep->heads.n && manifest_set_labels(run->w, (uint64_t)sid, a->label) < 0)
			log_fatalx("line %d: manifest refused the labels %d, %d", a->line, a->label[0], a->label[1]);
		run->n_samples++;
	}
}

// a labelled annotation file's heads (names, class counts, class names) into the manifest
static void set_heads(ManifestWriter *w, const PrepHeads *h)
{
	const char *names[2] = {h->name[0], h->name[1]};
	const uint32_t counts[2] = {(uint32_t)h->n_classes[0], (uint32_t)h->n_classes[1]};
	const char *const *classes[2] = {(const char *const *)h->class_names[0],
					 (const char *const *)h->class_names[1]};
	int rc = manifest_writer_set_heads(w, (uint32_t)h->n, names, counts, classes);
	if (rc < 0)
		log_fatalx("manifest: the label heads refused (%s)", strerror(-rc));
}

// annotations: load them, cut every video into chunks in parallel, then videos and clips into the manifest
static void prep_videos(PrepRun *run)
{
	const PrepOpts *o = &run->o;
	int rc;
	if (!prep_encoder_available())
		log_fatalx("this libavcodec has no H.264 encoder (libx264)");
	PrepAnnotList al;
	const PrepLabelOpts lo = {o->classes, o->num_classes, o->split, o->video_root};
	if ((rc = prep_bench_load(&al, o->annotations, o->format)) == 1 &&
	    (rc = prep_labels_load(&al, o->annotations, o->format, &lo)) == 1)
		rc = prep_annot_load(&al, o->annotations, o->format, o->ego4d_window);
	if (rc < 0)
		log_fatalx("%s: %s", o->annotations,
			   rc == -EBADMSG && al.n_problems ? al.problems[al.n_problems - 1]
			   : rc == -EINVAL                 ? "unknown format or layout (see --format)"
							   : strerror(-rc));
	run->rep = al; // the annotation problems start the report; clips stay in rep.a
	PrepAnnotList *rep = &run->rep;
	if (rep->n == 0 && rep->n_problems == 0) { // a header and nothing else
		rep->bad_record++;
		prep_annot_problem(rep, "%s: no annotation records", o->annotations);
	}
	size_t nv;
	char **ids = video_ids(rep, &nv);
	Pool p = {.o = o, .ids = ids, .n = (int)nv};
	p.src = calloc(nv + 1, sizeof(char *));
	p.dirs = chunk_folders(o->out, ids, nv, (const char *const *)run->in_root);
	p.res = calloc(nv + 1, sizeof(PrepVideoResult));
	for (size_t i = 0; i < nv; i++) {
		char path[8192];
		if (!p.dirs[i])
			snprintf(
				p.res[i].error, sizeof(p.res[i].error),
				"its chunk folder %.100s/ would be one of prep's own outputs in ROOT; refused (rename the video)",
				ids[i]);
		else if (find_video(o->video_root, ids[i], path, sizeof(path)) == 0)
			p.src[i] = strdup(path);
		else
			snprintf(p.res[i].error, sizeof(p.res[i].error), "not found under %s", o->video_root);
	}
	log_info("%zu clips of %zu videos; chunks of %d s, short side %d, GOP %d, %d jobs", rep->n, nv,
		 o->chunk.chunk_sec, o->chunk.short_side, o->chunk.gop, o->jobs);
	run_pool(&p, o->jobs);
	char **caps = malloc((rep->n + 1) * sizeof(char *));
	for (size_t i = 0; i < rep->n; i++)
		caps[i] = rep->a[i].caption;
	run->tok = tokenizer(o, run->mdir, caps, rep->n);
	free(caps);
	if (run->tok && manifest_writer_new(&run->w, (uint32_t)o->context, (uint32_t)bpe_vocab_size(run->tok),
					    (uint32_t)o->chunk.chunk_sec * 1000, (uint32_t)o->chunk.short_side) < 0)
		log_fatalx("tokenizer vocabulary too large for the manifest");
	if (run->w)
		manifest_writer_set_vocab(run->w, bpe_vocab_hash(run->tok));
	if (run->w && rep->heads.n)
		set_heads(run->w, &rep->heads);
	int64_t *vidx = malloc((nv + 1) * sizeof(int64_t));
	uint32_t *first_chunk = malloc((nv + 1) * sizeof(uint32_t));
	add_videos(run, &p, vidx, first_chunk);
	add_clips(run, &p, vidx, first_chunk);
	for (size_t i = 0; i < nv; i++) {
		prep_video_result_free(&p.res[i]);
		free(p.src[i]);
		free(p.dirs[i]);
	}
	free(p.res), free(p.src), free(p.dirs), free(ids), free(vidx), free(first_chunk);
}

// the report file and its summary line; the exit status (3: something dropped)
static int write_report(PrepRun *run)
{
	PrepAnnotList *rep = &run->rep;
	size_t dropped_parse;
	add_problem_counts(rep, &dropped_parse);
	// a damaged video counts even when no clip touched the damage: its chunks hold garbled frames
	size_t dropped = dropped_parse + run->dropped_video + run->dropped_range + run->dropped_damage +
			 run->damaged_images + run->damaged_videos;
	FILE *rf = fopen(run->report, "w");
	if (!rf)
		log_fatal("%s", run->report);
	for (size_t i = 0; i < rep->n_problems; i++) {
		fprintf(rf, "%s\n", rep->problems[i]);
		if (i < 20)
			log_warnx("%s", rep->problems[i]);
	}
	fprintf(rf,
		"summary: %zu samples, %zu dropped (%zu bad video, %zu invalid UTF-8, %zu bad time, %zu outside the "
		"video, %zu bad record, %zu damaged images, %zu over damaged frames); %zu videos with damaged frames\n",
		run->n_samples, dropped - run->damaged_videos, run->dropped_video, rep->bad_utf8, rep->bad_time,
		run->dropped_range, rep->bad_record, run->damaged_images, run->dropped_damage, run->damaged_videos);
	fclose(rf);
	if (rep->n_problems > 20)
		log_warnx("... %zu more problems in %s", rep->n_problems - 20, run->report);
	log_info(
		"%s: %zu samples; %zu dropped (%zu bad video, %zu invalid UTF-8, %zu bad time, %zu outside the video, %zu "
		"bad record, %zu damaged images, %zu over damaged frames); %zu videos with damaged frames; report %s",
		run->manifest, run->n_samples, dropped - run->damaged_videos, run->dropped_video, rep->bad_utf8,
		rep->bad_time, run->dropped_range, rep->bad_record, run->damaged_images, run->dropped_damage,
		run->damaged_videos, run->report);
	return dropped ? 3 : 0;
}

// the inputs exist and are of the right kind (a folder, a readable file), or prep stops naming them
static void check_inputs(const PrepOpts *o)
{
	struct stat st;
	const char *dir = o->shards ? o->shards : o->video_root;
	if (stat(dir, &st) < 0)
		log_fatal("%s %s", o->shards ? "--shards" : "--video-root", dir);
	if (!S_ISDIR(st.st_mode))
		log_fatalx("%s %s is not a folder", o->shards ? "--shards" : "--video-root", dir);
	if (o->annotations && (stat(o->annotations, &st) < 0 || access(o->annotations, R_OK) < 0))
		log_fatal("--annotations %s", o->annotations);
	if (o->annotations && S_ISDIR(st.st_mode))
		log_fatalx("--annotations %s is a folder, not an annotation file", o->annotations);
	if (o->annotations && !S_ISREG(st.st_mode))
		log_fatalx(
			"--annotations %s is not a regular file (a FIFO, socket or device): give the annotation file",
			o->annotations);
}

int main(int argc, char **argv)
{
	log_init("prep", LOG_INFO);
	// libx264 (0.164) reads a few bytes past the end of some of its own buffers; with B-frames those
	// bytes change its decisions, and from glibc's heap they depend on what other threads did, so
	// chunks came out different from run to run under -j (valgrind: invalid reads of size 16).
	// Buffers of 64 KiB and more mapped on their own end in zero-filled pages, but only when glibc
	// maps them (not when the top of a heap has room: one chunk of 1199 still differed at times);
	// tools/x264_alloc.c's memalign, which libx264 binds to, zeroes every block to its usable end.
	mallopt(M_MMAP_THRESHOLD, 64 << 10);
	static PrepRun run; // large path buffers
	PrepOpts *o = &run.o;
	prep_opts_parse(o, argc, argv);
	// libav's messages (a damaged video: one per macroblock row) once per kind, counted at exit;
	// below errors only when asked (libx264's banners otherwise)
	avlog_install(o->libav_verbose);
	atexit(avlog_summary);
	if (o->info)
		return prep_info(o->info);
	if (o->verify)
		return prep_verify(o->verify, o->deep);
	if (o->upgrade)
		return prep_upgrade(o->upgrade, o->jobs);
	if (!o->out || (!o->shards && (!o->annotations || !o->video_root)) || (o->shards && o->annotations)) {
		prep_opts_usage(stderr);
		return 1;
	}
	check_inputs(o); // before anything is made: a wrong path leaves no output folder behind
	int mrc = fs_mkdir_p(o->out, 0755);
	if (mrc < 0)
		log_fatal("cannot create the output folder %s: %s", o->out, strerror(-mrc));
	char why[1024]; // chunks, markers and the manifest are written there by name
	if (fs_dir_own(o->out, "--out", why, sizeof why) < 0)
		log_fatalx("%s", why);
	output_paths(&run);
	check_outputs(&run);
	o->chunk.root = o->out;
	if (o->shards)
		prep_shards(&run);
	else
		prep_videos(&run);
	int rc;
	if (run.w && (rc = manifest_write(run.w, run.manifest)) < 0)
		log_fatalx("writing %s: %s", run.manifest, strerror(-rc));
	manifest_writer_free(run.w);
	bpe_free(run.tok);
	rc = write_report(&run);
	prep_annot_free(&run.rep);
	for (size_t i = 0; run.in_root[i]; i++)
		free(run.in_root[i]);
	return rc;
}
