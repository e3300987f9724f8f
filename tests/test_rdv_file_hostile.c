// The file method in a folder another user can write: rank 0 never opens a name someone planted
// (a link at its temporary name leaves the link's target untouched), a folder anyone may write
// without the sticky bit is refused naming it, and a reader finding a FIFO or a link at the path
// fails at once with the path instead of blocking.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_rdv_util.h" // defines: tr_info, tr_blob

static char dir[256], path[320];

static RdvInfo at(int rank, int timeout_ms)
{
	return tr_info(rank, 2, 1, NULL, "hostile", RDV_FILE, path, timeout_ms);
}

static int publish(char *err, size_t errlen)
{
	RdvInfo i = at(0, 1000);
	uint8_t b[RDV_BLOB_MAX];
	tr_blob(b, sizeof b, 7);
	return rdv_exchange_file(&i, b, sizeof b, err, errlen);
}

static int fetch(char *err, size_t errlen)
{
	RdvInfo i = at(1, 1500);
	uint8_t b[RDV_BLOB_MAX];
	return rdv_exchange_file(&i, b, sizeof b, err, errlen);
}

static void read_file(const char *p, char *out, size_t len)
{
	int fd = open(p, O_RDONLY);
	CHECK(fd >= 0);
	ssize_t n = read(fd, out, len - 1);
	CHECK(n >= 0);
	out[n] = 0;
	close(fd);
}

// a link planted at every temporary name rank 0 could pick by its pid: the target stays as it was
static void planted_link(void)
{
	char victim[320], tmp[400], err[512], got[64];
	snprintf(victim, sizeof victim, "%s/victim", dir);
	FILE *f = fopen(victim, "w");
	CHECK(f && fputs("precious\n", f) >= 0 && fclose(f) == 0);
	snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
	CHECK(symlink(victim, tmp) == 0);
	int rc = publish(err, sizeof err);
	if (rc)
		fprintf(stderr, "publish: %s\n", err);
	CHECK(rc == 0);
	read_file(victim, got, sizeof got);
	if (strcmp(got, "precious\n") != 0) {
		fprintf(stderr, "FAIL: the link's target was overwritten (%zu bytes now)\n", strlen(got));
		exit(1);
	}
	struct stat st;
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	CHECK(fetch(err, sizeof err) == 0); // the record rank 0 wrote is good
	unlink(tmp);
	unlink(path);
	printf("planted link: the target is untouched, the id went to %s\n", path);
}

static void open_folder(void)
{
	char err[512];
	CHECK(chmod(dir, 0777) == 0);
	int rc = publish(err, sizeof err);
	printf("folder of mode 0777: rc %d: %s\n", rc, err);
	CHECK(rc == -EPERM && strstr(err, dir) && strstr(err, "sticky"));
	CHECK(access(path, F_OK) != 0);
	CHECK(chmod(dir, 01777) == 0); // /tmp's mode: allowed
	rc = publish(err, sizeof err);
	if (rc)
		fprintf(stderr, "publish: %s\n", err);
	CHECK(rc == 0);
	unlink(path);
	CHECK(chmod(dir, 0700) == 0);
}

static void fifo_and_link_at_path(void)
{
	char err[512], target[400];
	CHECK(mkfifo(path, 0666) == 0);
	alarm(10); // the old code blocked in open() here for good
	int rc = fetch(err, sizeof err);
	alarm(0);
	printf("FIFO at the path: rc %d: %s\n", rc, err);
	CHECK(rc < 0 && rc != -ETIMEDOUT && strstr(err, path) && strstr(err, "not a regular file"));
	unlink(path);
	snprintf(target, sizeof target, "%s/victim", dir);
	CHECK(symlink(target, path) == 0);
	rc = fetch(err, sizeof err);
	printf("link at the path: rc %d: %s\n", rc, err);
	CHECK(rc == -ELOOP && strstr(err, path));
	unlink(path);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/avclip-rdvh.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/rdv", dir);
	planted_link();
	open_folder();
	fifo_and_link_at_path();
	char victim[320];
	snprintf(victim, sizeof victim, "%s/victim", dir);
	unlink(victim);
	rmdir(dir);
	printf("ok: the rendezvous file is never opened through a planted name\n");
	return 0;
}
