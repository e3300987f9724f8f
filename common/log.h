// Levelled logging for the project's programs: every line names the process.
// Library code never logs (it returns -errno); only programs call these.
#ifndef COMMON_LOG_H
#define COMMON_LOG_H
// defines: LogLevel, log_init, log_msg, log_debug, log_info, log_warn, log_warnx, log_fatal, log_fatalx

#include <stdarg.h>

typedef enum { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3 } LogLevel;

// name: shown in every line as "name[pid]"; level: lines below it are dropped.
void log_init(const char *name, LogLevel level);
// parses "debug|info|warn|error"; returns -1 when unknown
int log_parse_level(const char *s);

void log_msg(LogLevel level, int with_errno, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define log_debug(...) log_msg(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, 0, __VA_ARGS__)
// log_warn appends strerror(errno); log_warnx does not
#define log_warn(...) log_msg(LOG_WARN, 1, __VA_ARGS__)
#define log_warnx(...) log_msg(LOG_WARN, 0, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, 0, __VA_ARGS__)
// prints "name[pid] fatal: ..." and exits 1
void log_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void log_fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
