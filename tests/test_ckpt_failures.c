// Checks that a failed checkpoint save is clean: an unwritable directory and a file-size limit
// (RLIMIT_FSIZE, standing in for a full disk) fail with a message, leave no temp file, and the
// previous checkpoint and LATEST marker stay loadable and unchanged. Also: no marker is
// -ENOENT, a garbage marker -EBADMSG, another model configuration -EINVAL.
#include "model.h" // defines: ckpt_save, ckpt_load_latest, ClipModel

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static KernCtx *c;
static ModelConfig cfg;
static ClipModel *m;
static char dir[] = "/tmp/test_ckpt_failures_XXXXXX";

static CkptTarget target(void)
{
	return (CkptTarget){.ctx = c, .cfg = &cfg, .specs = m->specs, .n_specs = m->n_specs, .params = &m->params};
}

// runs a save of step 2 in a child with reduced rights; returns the child's rc (0 = save failed cleanly)
static int save_in_child(int mode)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (mode == 0) { // unwritable: root bypasses permission bits, so drop to nobody
			if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
				_exit(3);
		} else { // full disk stand-in: writes past 64 KiB fail with EFBIG
			signal(SIGXFSZ, SIG_IGN);
			struct rlimit rl = {64 << 10, 64 << 10};
			if (setrlimit(RLIMIT_FSIZE, &rl))
				_exit(3);
		}
		CkptState st = {.step = 2};
		CkptTarget t = target();
		char err[512];
		int rc = ckpt_save(dir, &t, &st, 0, err, sizeof err);
		printf("     save in child (%s): rc %d: %s\n", mode ? "RLIMIT_FSIZE 64 KiB" : "read-only dir", rc, err);
		fflush(stdout);
		_exit(rc < 0 && strstr(err, "previous checkpoint kept") ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

// LATEST still names step 1, no temp files, and step 1 loads with the saved weights
static int intact(const char *what, const float *want, size_t nb)
{
	int bad = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strstr(e->d_name, ".tmp") || strstr(e->d_name, "00000002")) {
			printf("FAIL %s: left %s behind\n", what, e->d_name);
			bad = 1;
		}
	if (d)
		closedir(d);
	kern_zero(c, &m->params);
	CkptState st;
	CkptTarget t = target();
	char err[512];
	float *got = malloc(nb);
	int rc = ckpt_load_latest(dir, &t, &st, err, sizeof err);
	kern_download(c, got, nb, &m->params);
	if (rc || st.step != 1 || memcmp(got, want, nb)) {
		printf("FAIL %s: previous checkpoint not intact (rc %d: %s)\n", what, rc, err);
		bad = 1;
	} else {
		printf("ok   %s: previous checkpoint intact\n", what);
	}
	free(got);
	return bad;
}

int main(void)
{
	if (kern_ctx_create_cpu(&c, 2) || model_config_preset(&cfg, "tiny"))
		return 1;
	cfg.vocab = 1000; // checkpoint of ~1 MB, well past the 64 KiB limit below
	if (clip_model_create(&m, c, &cfg, 1, KDT_F32) || model_init_params(c, &cfg, &m->params, 5) || !mkdtemp(dir))
		return 1;
	chmod(dir, 0755);
	int bad = 0;
	char err[512];
	CkptState st = {.step = 1};
	CkptTarget t = target();
	int rc = ckpt_load_latest(dir, &t, &st, err, sizeof err);
	printf("%-4s empty dir: rc %d: %s\n", rc == -ENOENT ? "ok" : "FAIL", rc, err);
	bad |= rc != -ENOENT;
	if (ckpt_save(dir, &t, &st, 0, err, sizeof err)) {
		printf("FAIL first save: %s\n", err);
		return 1;
	}
	size_t nb = kern_nbytes(&m->params);
	float *w1 = malloc(nb);
	kern_download(c, w1, nb, &m->params);

	if (geteuid() != 0)
		chmod(dir, 0555);
	rc = save_in_child(0);
	chmod(dir, 0755);
	bad |= rc != 0;
	bad |= intact("read-only dir", w1, nb);
	rc = save_in_child(1);
	bad |= rc != 0;
	bad |= intact("RLIMIT_FSIZE", w1, nb);

	ModelConfig other = cfg;
	other.vis_layers = 3;
	ClipModel *m2;
	if (clip_model_create(&m2, c, &other, 1, KDT_F32))
		return 1;
	CkptTarget t2 = {.ctx = c, .cfg = &other, .specs = m2->specs, .n_specs = m2->n_specs, .params = &m2->params};
	rc = ckpt_load_latest(dir, &t2, &st, err, sizeof err);
	printf("%-4s other model config: rc %d: %s\n",
	       rc == -EINVAL && strstr(err, "written for model") ? "ok" : "FAIL", rc, err);
	bad |= rc != -EINVAL;
	clip_model_destroy(m2);

	char p[256];
	snprintf(p, sizeof p, "%s/%s", dir, CKPT_MARKER);
	FILE *f = fopen(p, "w");
	fputs("../../etc/passwd\n", f);
	fclose(f);
	rc = ckpt_load_latest(dir, &t, &st, err, sizeof err);
	printf("%-4s garbage marker: rc %d: %s\n", rc == -EBADMSG ? "ok" : "FAIL", rc, err);
	bad |= rc != -EBADMSG;

	snprintf(p, sizeof p, "rm -rf %s", dir);
	if (system(p))
		bad = 1;
	free(w1);
	clip_model_destroy(m);
	kern_ctx_destroy(c);
	printf("%s\n",
	       bad ? "FAIL checkpoint failure handling" : "PASS failed saves leave the previous checkpoint intact");
	return bad;
}
