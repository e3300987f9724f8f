// A ring another user made (after the job's ring went, under the same name), or one that group or
// other users may write, is refused for writing with a message naming its owner or mode; the owner
// named explicitly, or a shared mode asked for, is accepted, and a read-only look always is.
// Making a segment of another owner needs root (fchown): skipped otherwise.
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring_testutil.h"

int main(void)
{
	char name[64], path[128], err[512] = "";
	snprintf(name, sizeof name, "%s", test_ring_name("foreign"));
	snprintf(path, sizeof path, "/dev/shm/%s", name);
	Ring *r = test_ring_create(name, 4, 1);
	ring_close(r);
	struct stat st;
	CHECK(stat(path, &st) == 0);
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		fprintf(stderr, "FAIL: a new ring has mode %04o: others may write it\n",
			(unsigned)(st.st_mode & 07777));
		return 1;
	}
	Ring *o = NULL;
	CHECK_OK(ring_open(&o, name, NULL, err, sizeof err)); // our own, mode 0600
	ring_close(o);

	CHECK(chmod(path, 0666) == 0);
	int rc = ring_open(&o, name, NULL, err, sizeof err);
	printf("mode 0666: rc %d: %s\n", rc, rc ? err : "(opened)");
	CHECK(rc == -EPERM && strstr(err, "mode 0666") && strstr(err, path));
	RingOpenOptions shared = {.allow_shared_write = 1};
	CHECK_OK(ring_open(&o, name, &shared, err, sizeof err));
	ring_close(o);
	CHECK(chmod(path, 0600) == 0);

	if (geteuid() != 0) {
		printf("skip: making a segment of another owner needs root (fchown)\n");
		return 77;
	}
	struct passwd *pw = getpwnam("nobody");
	if (!pw) {
		printf("skip: no user nobody to own the segment\n");
		return 77;
	}
	CHECK(chown(path, pw->pw_uid, (gid_t)-1) == 0);
	rc = ring_open(&o, name, NULL, err, sizeof err);
	printf("owned by %s (uid %u): rc %d: %s\n", pw->pw_name, (unsigned)pw->pw_uid, rc, rc ? err : "(opened)");
	char uid[32];
	snprintf(uid, sizeof uid, "uid %u", (unsigned)pw->pw_uid);
	CHECK(rc == -EPERM && strstr(err, uid) && strstr(err, "another user made it"));
	RingOpenOptions ro = {.read_only = 1};
	CHECK_OK(ring_open(&o, name, &ro, err, sizeof err)); // ringstat may look at it
	ring_close(o);
	RingOpenOptions named = {.owner_given = 1, .owner_uid = (unsigned)pw->pw_uid};
	CHECK_OK(ring_open(&o, name, &named, err, sizeof err));
	ring_close(o);
	CHECK(chown(path, 0, (gid_t)-1) == 0);
	printf("ok: a ring of another owner or a shared mode is not joined unless asked for\n");
	return 0;
}
