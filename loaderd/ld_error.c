// Names of the loader's error codes, for logs, clipdump sheets and tests.
#include "loader.h" // defines: ld_error_name

const char *ld_error_name(int code)
{
	static const char *const names[LD_ERR_COUNT] = {
		[LD_OK] = "ok",
		[LD_ERR_MISSING] = "missing",
		[LD_ERR_IO] = "io",
		[LD_ERR_EMPTY] = "empty",
		[LD_ERR_CORRUPT] = "corrupt",
		[LD_ERR_CODEC] = "unsupported-codec",
		[LD_ERR_SHORT] = "short",
		[LD_ERR_TIMEOUT] = "timeout",
		[LD_ERR_GEOMETRY] = "geometry",
		[LD_ERR_MANIFEST] = "manifest",
		[LD_ERR_NOMEM] = "nomem",
		[LD_ERR_TRUNCATED] = "truncated",
	};
	if (code < 0)
		code = -code;
	return code < LD_ERR_COUNT && names[code] ? names[code] : "unknown";
}
