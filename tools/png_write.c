// The tools' one PNG writer. The deflate encoder emits one fixed-Huffman block and looks for
// matches only at distance 1 (runs of a byte), one pixel back (runs of a colour) and one row up
// (repeated rows): that is where the redundancy of charts and contact sheets lives, and it keeps
// the encoder a page long.
#include "png_write.h" // defines: PngImage, png_encode, png_write_file

#include <errno.h>  // defines: EINVAL, ENOMEM, errno
#include <stdio.h>  // defines: FILE, fopen, fwrite, rename, snprintf
#include <stdlib.h> // defines: malloc, realloc, free
#include <string.h> // defines: memcpy

#include "fs_dir.h" // defines: fs_fopen_new
#include "crc32.h"  // defines: crc32_ieee (IEEE CRC-32, as PNG uses)

typedef struct {
	uint8_t *buf;
	size_t n, cap;
	uint32_t bits; // pending bits, LSB first
	int nbits;
	int oom;
} Bits;

static void put_byte(Bits *b, uint8_t v)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4096;
		uint8_t *x = realloc(b->buf, cap);
		if (!x) {
			b->oom = 1;
			return;
		}
		b->buf = x;
		b->cap = cap;
	}
	b->buf[b->n++] = v;
}

// value's low n bits, least significant first (deflate's order for everything but Huffman codes)
static void put_bits(Bits *b, uint32_t value, int n)
{
	b->bits |= value << b->nbits;
	b->nbits += n;
	while (b->nbits >= 8) {
		put_byte(b, (uint8_t)b->bits);
		b->bits >>= 8;
		b->nbits -= 8;
	}
}

// a Huffman code of n bits goes most significant bit first
static void put_code(Bits *b, uint32_t code, int n)
{
	uint32_t r = 0;
	for (int i = 0; i < n; i++)
		r |= ((code >> i) & 1u) << (n - 1 - i);
	put_bits(b, r, n);
}

static void put_litlen(Bits *b, int sym)
{
	if (sym < 144)
		put_code(b, 0x30u + (uint32_t)sym, 8);
	else if (sym < 256)
		put_code(b, 0x190u + (uint32_t)(sym - 144), 9);
	else if (sym < 280)
		put_code(b, (uint32_t)(sym - 256), 7);
	else
		put_code(b, 0xc0u + (uint32_t)(sym - 280), 8);
}

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
				      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
				      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
				       33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
				       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
				       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

static void put_match(Bits *b, int len, int dist)
{
	int s = 28;
	while (len_base[s] > len)
		s--;
	put_litlen(b, 257 + s);
	put_bits(b, (uint32_t)(len - len_base[s]), len_extra[s]);
	int d = 29;
	while (dist_base[d] > dist)
		d--;
	put_code(b, (uint32_t)d, 5);
	put_bits(b, (uint32_t)(dist - dist_base[d]), dist_extra[d]);
}

static size_t match_len(const uint8_t *in, size_t n, size_t i, size_t dist)
{
	if (dist == 0 || dist > 32768 || dist > i)
		return 0;
	size_t l = 0;
	while (l < 258 && i + l < n && in[i + l] == in[i + l - dist])
		l++;
	return l;
}

// zlib stream (RFC 1950/1951, fixed Huffman) of in[0..n) into *out (malloc'd), *out_n bytes;
// matches are looked for at distance 1, bpp (one pixel back) and row_len (one row up)
static int png_deflate(const uint8_t *in, size_t n, int bpp, int row_len, uint8_t **out, size_t *out_n)
{
	Bits b = {0};
	put_byte(&b, 0x78); // zlib: deflate, 32 KiB window
	put_byte(&b, 0x01); // no dictionary, fastest; (0x78 << 8 | 0x01) % 31 == 0
	put_bits(&b, 1, 1); // final block
	put_bits(&b, 1, 2); // fixed Huffman
	const size_t dists[3] = {1, bpp > 1 ? (size_t)bpp : 0, row_len > 1 ? (size_t)row_len : 0};
	for (size_t i = 0; i < n;) {
		size_t len = 0, dist = 0;
		for (int k = 0; k < 3; k++) {
			size_t l = match_len(in, n, i, dists[k]);
			if (l > len)
				len = l, dist = dists[k];
		}
		if (len >= 3) {
			put_match(&b, (int)len, (int)dist);
			i += len;
		} else {
			put_litlen(&b, in[i++]);
		}
	}
	put_litlen(&b, 256);
	if (b.nbits)
		put_bits(&b, 0, 8 - b.nbits);
	uint32_t s1 = 1, s2 = 0; // Adler-32
	for (size_t i = 0; i < n; i++) {
		s1 = (s1 + in[i]) % 65521;
		s2 = (s2 + s1) % 65521;
	}
	uint32_t adler = (s2 << 16) | s1;
	for (int k = 3; k >= 0; k--)
		put_byte(&b, (uint8_t)(adler >> (8 * k)));
	if (b.oom) {
		free(b.buf);
		return -ENOMEM;
	}
	*out = b.buf;
	*out_n = b.n;
	return 0;
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

// length, type, data, CRC-32 of type and data; IEND has no data and no memcpy of a NULL buffer
static void put_chunk(Bits *b, const char *type, const uint8_t *data, size_t n)
{
	uint8_t w[4];
	be32(w, (uint32_t)n);
	for (int k = 0; k < 4; k++)
		put_byte(b, w[k]);
	for (int k = 0; k < 4; k++)
		put_byte(b, (uint8_t)type[k]);
	for (size_t i = 0; i < n; i++)
		put_byte(b, data[i]);
	uint32_t crc = crc32_ieee(0, type, 4);
	if (n)
		crc = crc32_ieee(crc, data, n);
	be32(w, crc);
	for (int k = 0; k < 4; k++)
		put_byte(b, w[k]);
}

int png_encode(const PngImage *im, uint8_t **out, size_t *out_n)
{
	const int ch = im->channels;
	if (im->w <= 0 || im->h <= 0 || im->w > 65536 || im->h > 65536 || !im->px || (ch != 1 && ch != 3))
		return -EINVAL;
	if (ch == 1 && (!im->palette || im->n_colours < 1 || im->n_colours > 256))
		return -EINVAL;
	const size_t line = (size_t)im->w * ch, row = line + 1; // filter byte 0 (none), then the row
	uint8_t *raw = malloc(row * (size_t)im->h), *z = NULL;
	size_t zn = 0;
	if (!raw)
		return -ENOMEM;
	for (int y = 0; y < im->h; y++) {
		raw[(size_t)y * row] = 0;
		memcpy(raw + (size_t)y * row + 1, im->px + (size_t)y * line, line);
	}
	int rc = png_deflate(raw, row * (size_t)im->h, ch, (int)row, &z, &zn);
	free(raw);
	if (rc)
		return rc;
	uint8_t ihdr[13];
	be32(ihdr, (uint32_t)im->w);
	be32(ihdr + 4, (uint32_t)im->h);
	ihdr[8] = 8;               // bit depth
	ihdr[9] = ch == 1 ? 3 : 2; // indexed colour or RGB
	ihdr[10] = 0;              // deflate
	ihdr[11] = 0;              // adaptive filtering (every row uses filter 0)
	ihdr[12] = 0;              // no interlace
	Bits b = {0};
	static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	for (int k = 0; k < 8; k++)
		put_byte(&b, sig[k]);
	put_chunk(&b, "IHDR", ihdr, sizeof ihdr);
	if (ch == 1)
		put_chunk(&b, "PLTE", &im->palette[0][0], (size_t)im->n_colours * 3);
	put_chunk(&b, "IDAT", z, zn);
	put_chunk(&b, "IEND", NULL, 0);
	free(z);
	if (b.oom) {
		free(b.buf);
		return -ENOMEM;
	}
	*out = b.buf;
	*out_n = b.n;
	return 0;
}

int png_write_file(const PngImage *im, const char *path)
{
	uint8_t *png;
	size_t n;
	int rc = png_encode(im, &png, &n);
	if (rc)
		return rc;
	char tmp[4200];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		free(png);
		return -ENAMETOOLONG;
	}
	FILE *f = fs_fopen_new(tmp, 0644);
	if (!f) {
		rc = -errno;
		free(png);
		return rc;
	}
	rc = fwrite(png, 1, n, f) == n ? 0 : -EIO;
	free(png);
	if (fclose(f) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		remove(tmp);
	return rc;
}
