// The libraries' error sentences: a function that fails returns -errno and, when the caller
// passed a buffer, says why in it; the caller decides whether to print it.
#ifndef COMMON_ERRBUF_H
#define COMMON_ERRBUF_H
// defines: err_fmt, TRY

#include <stddef.h> // defines: size_t

// formats into err (when err and errlen are set) and returns rc, so `return err_fmt(...)` fails
int err_fmt(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

// evaluates x once; when it failed (< 0, a -errno) the calling function returns it
#define TRY(x)                                                                                                         \
	do {                                                                                                           \
		int rc_ = (x);                                                                                         \
		if (rc_ < 0)                                                                                           \
			return rc_;                                                                                    \
	} while (0)

#endif
