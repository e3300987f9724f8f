// Why a sample could not be produced: the codes the loader publishes in a ring slot's error
// field (positive, stable: consumers and ringstat may print them) and their names.
#ifndef LOADERD_LD_ERROR_H
#define LOADERD_LD_ERROR_H
// defines: LdError, ld_error_name

// Library calls return 0 or -LD_ERR_*; the code published in the ring is the positive value.
typedef enum {
	LD_OK = 0,
	LD_ERR_MISSING = 1,    // file not found / not readable
	LD_ERR_IO = 2,         // read failed or returned fewer bytes than the file has
	LD_ERR_EMPTY = 3,      // zero-length file or tar member
	LD_ERR_CORRUPT = 4,    // container or bitstream cannot be parsed
	LD_ERR_CODEC = 5,      // no video stream, or a codec the loader does not decode
	LD_ERR_SHORT = 6,      // fewer frames than the manifest says (or a frame number never seen)
	LD_ERR_TIMEOUT = 7,    // the per-sample watchdog fired
	LD_ERR_GEOMETRY = 8,   // decoded size differs from the manifest, or too small to crop
	LD_ERR_MANIFEST = 9,   // the sample record cannot be planned (bad reference, too many chunks)
	LD_ERR_NOMEM = 10,     // allocation failed
	LD_ERR_TRUNCATED = 11, // the container ends before its own index says it should
	LD_ERR_COUNT
} LdError;

// "missing", "corrupt", ...; "unknown" for codes outside the table
const char *ld_error_name(int code);

#endif
