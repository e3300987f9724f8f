// CRC-32 (IEEE 802.3, reflected, the one zlib, gzip and PNG use): the manifest's header and data
// checksums, PNG chunks, chunk files. Eight bytes per step (slicing-by-8: the manifest's data
// checksum is verified at every open of a program that reads samples); tables built on first use.
#include "crc32.h" // defines: crc32_ieee

#include <string.h>

static uint32_t crc_table[8][256];
static int crc_ready;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c; // racing threads write the same values
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
	__atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
}

uint32_t crc32_ieee(uint32_t crc, const void *buf, size_t n)
{
	if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE))
		crc_init();
	const unsigned char *p = buf;
	crc = ~crc;
	for (; n >= 8; n -= 8, p += 8) { // little-endian hosts only (crc32.h asserts it)
		uint32_t lo, hi;
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= crc;
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^ crc_table[5][(lo >> 16) & 0xff] ^
		      crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
	}
	for (; n; n--, p++)
		crc = crc_table[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
	return ~crc;
}
