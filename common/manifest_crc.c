// CRC-32 (IEEE 802.3, reflected, the one zlib and gzip use) for the manifest's header and
// data checksums; table built on first use.
#include "manifest_format.h" // defines: manifest_crc32

static uint32_t crc_table[256];
static int crc_ready;

uint32_t manifest_crc32(uint32_t crc, const void *buf, size_t n)
{
	if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE)) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
			crc_table[i] = c; // racing threads write the same values
		}
		__atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
	}
	const unsigned char *p = buf;
	crc = ~crc;
	for (size_t i = 0; i < n; i++)
		crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}
