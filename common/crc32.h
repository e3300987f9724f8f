// CRC-32 (IEEE 802.3, reflected): the checksum of zlib, gzip and PNG.
#ifndef COMMON_CRC32_H
#define COMMON_CRC32_H
// defines: crc32_ieee

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint32_t

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "crc32_ieee reads words little-endian");

// crc = crc32_ieee(crc, buf, n), starting with 0: crc32_ieee(0, "123456789", 9) = 0xcbf43926
uint32_t crc32_ieee(uint32_t crc, const void *buf, size_t n);

#endif
