// For hostile-manifest tests and the manifest fuzz harness: recomputes a manifest's checksums
// after its bytes were changed, as anyone can, so that what follows the checksum is tested.
#ifndef TESTS_MANIFEST_RECRC_H
#define TESTS_MANIFEST_RECRC_H
// defines: manifest_recrc, manifest_file_get, manifest_file_put

#include "manifest_format.h" // defines: ManifestHeader, manifest_crc32

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// p[0..n): a manifest whose header sizes itself as this build's (else nothing is done). The
// data checksum over [header_size, n) and the header checksum (its field zero) as
// manifest_open and manifest_check_data check them; file_size is left as it is.
static inline void manifest_recrc(uint8_t *p, size_t n)
{
	ManifestHeader h;
	if (n < sizeof h)
		return;
	memcpy(&h, p, sizeof h);
	if (h.header_size != sizeof h)
		return;
	h.data_crc = manifest_crc32(0, p + sizeof h, n - sizeof h);
	h.header_crc = 0;
	h.header_crc = manifest_crc32(0, &h, sizeof h);
	memcpy(p, &h, sizeof h);
}

// a whole file into a malloc'd buffer (size in *n), NULL when it cannot be read
static inline uint8_t *manifest_file_get(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	uint8_t *buf = malloc(*n);
	if (buf && fread(buf, 1, *n, f) != *n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

// buf[0..n) as the whole file p: 0, or -1 when it cannot be written
static inline int manifest_file_put(const char *p, const void *buf, size_t n)
{
	FILE *f = fopen(p, "wb");
	int ok = f && fwrite(buf, 1, n, f) == n;
	return (f && fclose(f) == 0 && ok) ? 0 : -1;
}

#endif
