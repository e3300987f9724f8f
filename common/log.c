// Levelled, process-named logging to stderr: "2026-11-30 03:40:01 loaderd[123] warn: ...".
// One write(2) per line so lines from several processes sharing a log never interleave.
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char log_name[32] = "avclip";
static LogLevel log_level = LOG_INFO;

void log_init(const char *name, LogLevel level)
{
	snprintf(log_name, sizeof log_name, "%s", name);
	log_level = level;
}

int log_parse_level(const char *s)
{
	static const char *names[] = {"debug", "info", "warn", "error"};
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

static void log_vwrite(const char *tag, int errnum, const char *fmt, va_list ap)
{
	char line[2048];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	int n = (int)strftime(line, sizeof line, "%Y-%m-%d %H:%M:%S ", &tm);
	n += snprintf(line + n, sizeof line - (size_t)n, "%s[%d] %s: ", log_name, (int)getpid(), tag);
	if (n < (int)sizeof line)
		n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	if (errnum && n < (int)sizeof line)
		n += snprintf(line + n, sizeof line - (size_t)n, ": %s", strerror(errnum));
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, (size_t)n);
	(void)w;
}

void log_msg(LogLevel level, int with_errno, const char *fmt, ...)
{
	int errnum = errno;
	if (level < log_level)
		return;
	static const char *tags[] = {"debug", "info", "warn", "error"};
	va_list ap;
	va_start(ap, fmt);
	log_vwrite(tags[level], with_errno ? errnum : 0, fmt, ap);
	va_end(ap);
	errno = errnum;
}

void log_fatal(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;
	va_start(ap, fmt);
	log_vwrite("fatal", errnum, fmt, ap);
	va_end(ap);
	exit(1);
}

void log_fatalx(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vwrite("fatal", 0, fmt, ap);
	va_end(ap);
	exit(1);
}
