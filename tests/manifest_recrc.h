// For hostile-manifest tests and the manifest fuzz harness: recomputes a manifest's checksums
// after its bytes were changed, as anyone can, so that what follows the checksum is tested.
#ifndef TESTS_MANIFEST_RECRC_H
#define TESTS_MANIFEST_RECRC_H
// defines: manifest_recrc

#include "manifest.h" // defines: ManifestHeader, manifest_crc32

#include <stddef.h>
#include <stdint.h>
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

#endif
