// A temporary file the programs create beside their outputs is never opened through a name someone
// planted: a symbolic link at a checkpoint's temporary name (and at the LATEST marker's) leaves the
// link's target untouched and the checkpoint loads; fs_create_new replaces a stale temporary and
// never follows a link.
#include "fs_dir.h" // defines: fs_create_new, fs_fopen_new
#include "model.h"  // defines: ckpt_save, ckpt_load_latest, ClipModel

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/test_ckpt_planted_XXXXXX";
static int bad;

static void victim_intact(const char *victim, const char *what)
{
	char got[64] = "";
	FILE *f = fopen(victim, "r");
	if (f) {
		size_t n = fread(got, 1, sizeof got - 1, f);
		got[n] = 0;
		fclose(f);
	}
	int ok = !strcmp(got, "precious\n");
	printf("%-4s %s: the link's target %s\n", ok ? "ok" : "FAIL", what, ok ? "is untouched" : "was overwritten");
	bad |= !ok;
}

static void plant(const char *victim, const char *at)
{
	FILE *f = fopen(victim, "w");
	if (!f || fputs("precious\n", f) < 0 || fclose(f) || symlink(victim, at)) {
		printf("FAIL cannot plant %s\n", at);
		exit(1);
	}
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	char victim[256], tmp[256], latest_tmp[256], path[256];
	snprintf(victim, sizeof victim, "%s/victim", dir);
	snprintf(tmp, sizeof tmp, "%s/.ckpt-00000001.safetensors.tmp", dir);
	snprintf(latest_tmp, sizeof latest_tmp, "%s/.%s.tmp", dir, CKPT_MARKER);
	plant(victim, tmp);
	if (symlink(victim, latest_tmp))
		return 1;

	KernCtx *c;
	ModelConfig cfg;
	ClipModel *m;
	if (kern_ctx_create_cpu(&c, 1) || model_config_preset(&cfg, "tiny"))
		return 1;
	cfg.vocab = 300;
	if (clip_model_create(&m, c, &cfg, 1, KDT_F32) || model_init_params(c, &cfg, &m->params, 5))
		return 1;
	CkptTarget t = {.ctx = c, .cfg = &cfg, .specs = m->specs, .n_specs = m->n_specs, .params = &m->params};
	CkptState st = {.step = 1};
	char err[512] = "";
	int rc = ckpt_save(dir, &t, &st, 0, err, sizeof err);
	printf("%-4s checkpoint save with links at its temporaries: rc %d %s\n", rc ? "FAIL" : "ok", rc, err);
	bad |= rc != 0;
	victim_intact(victim, "checkpoint");
	struct stat sb;
	snprintf(path, sizeof path, "%s/ckpt-00000001.safetensors", dir);
	int reg = lstat(path, &sb) == 0 && S_ISREG(sb.st_mode);
	printf("%-4s the checkpoint is a file of its own, not the link\n", reg ? "ok" : "FAIL");
	bad |= !reg;
	rc = ckpt_load_latest(dir, &t, &st, err, sizeof err);
	printf("%-4s it loads: rc %d %s\n", rc ? "FAIL" : "ok", rc, err);
	bad |= rc != 0;

	// the helper itself: a stale temporary is replaced, a link is not followed
	snprintf(tmp, sizeof tmp, "%s/out.part", dir);
	FILE *f = fopen(tmp, "w");
	fputs("stale\n", f);
	fclose(f);
	int fd = fs_create_new(tmp, 0644);
	int ok = fd >= 0 && lstat(tmp, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0;
	printf("%-4s fs_create_new over a stale temporary\n", ok ? "ok" : "FAIL");
	bad |= !ok;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	if (symlink(victim, tmp))
		return 1;
	f = fs_fopen_new(tmp, 0644);
	ok = f && fputs("new\n", f) >= 0 && fclose(f) == 0 && lstat(tmp, &sb) == 0 && S_ISREG(sb.st_mode);
	printf("%-4s fs_fopen_new over a link makes a file of its own\n", ok ? "ok" : "FAIL");
	bad |= !ok;
	victim_intact(victim, "fs_fopen_new");

	clip_model_destroy(m);
	kern_ctx_destroy(c);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		bad = 1;
	printf("%s\n", bad ? "FAIL a planted link was followed" : "ok: no temporary is opened through a planted link");
	return bad;
}
