// Process identity from /proc/<pid>/stat: state and start time, read by length (the command
// name may hold spaces and parentheses, so fields are counted after its last ')').
#include "proc_ident.h" // defines: proc_start_time, proc_is_dead

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// state letter and start time of pid; 0, -ENOENT when gone, another -errno when /proc is not there
static int proc_stat(int pid, char *state, uint64_t *start)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT; // the process went away between open and read
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	p += 2;
	*state = *p;
	// fields after the state: 4 ppid ... 22 starttime -> skip 19 more fields
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	*start = p ? strtoull(p, NULL, 10) : 0;
	return 0;
}

uint64_t proc_start_time(int pid)
{
	char st;
	uint64_t start = 0;
	return pid > 0 && proc_stat(pid, &st, &start) == 0 ? start : 0;
}

int proc_is_dead(int pid, uint64_t start)
{
	if (pid <= 0)
		return 1;
	char st;
	uint64_t now = 0;
	int err = proc_stat(pid, &st, &now);
	if (err == -ENOENT)
		return 1;
	if (err < 0) // no /proc: the pid alone
		return kill(pid, 0) < 0 && errno == ESRCH;
	if (st == 'Z' || st == 'X')
		return 1;
	return start && now != start;
}
