// The one PNG writer of the tools' pictures (tools/plot's palette charts, clipdump's RGB contact
// sheets): 8-bit indexed or RGB, a zlib stream of one fixed-Huffman deflate block, CRC-32 chunks.
#ifndef TOOLS_PNG_WRITE_H
#define TOOLS_PNG_WRITE_H
// defines: PngImage, png_encode, png_write_file

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: uint8_t

typedef struct {
	int w, h;
	int channels;                // 1: palette indices into `palette`, 3: RGB
	const uint8_t *px;           // (h, w, channels)
	const uint8_t (*palette)[3]; // channels 1 only: n_colours RGB entries
	int n_colours;               // 1..256 with channels 1
} PngImage;

// the whole file in *out (malloc'd), *out_n bytes; 0, -EINVAL or -ENOMEM
int png_encode(const PngImage *im, uint8_t **out, size_t *out_n);
// writes path through path.tmp + rename, so a reader never sees half a file; 0 or -errno
int png_write_file(const PngImage *im, const char *path);

#endif
