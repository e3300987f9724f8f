// err_fmt: the one formatter of the libraries' error buffers (manifest reader, rendezvous).
#include "errbuf.h" // defines: err_fmt

#include <stdarg.h> // defines: va_list
#include <stdio.h>  // defines: vsnprintf

int err_fmt(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}
