// The tools' one PNG writer round-trips: indexed and RGB images (flat areas, repeated rows,
// noise, 1-pixel and wider-than-the-window shapes) decode with Python's zlib to the same pixels.
#include "../tools/png_write.h" // defines: PngImage, png_encode, png_write_file
#include "testutil.h"           // defines: CHECK, CHECK_OK, CHECK_EQ_INT, test_skip

#include <errno.h>  // defines: EINVAL
#include <stdio.h>  // defines: FILE, fopen, fwrite, snprintf
#include <stdlib.h> // defines: malloc, free, mkdtemp, system
#include <string.h> // defines: memcmp
#include <unistd.h> // defines: rmdir

// an independent decoder: chunk CRCs, zlib inflate, filter bytes, palette expansion, size
static const char *DECODE_PY = "import struct, sys, zlib\n"
			       "d = open(sys.argv[1], 'rb').read(); want = open(sys.argv[2], 'rb').read()\n"
			       "assert d[:8] == b'\\x89PNG\\r\\n\\x1a\\n'\n"
			       "i, idat, plte, ihdr, end = 8, b'', None, None, False\n"
			       "while i < len(d):\n"
			       "    n, t = struct.unpack('>I4s', d[i:i + 8]); body = d[i + 8:i + 8 + n]\n"
			       "    assert zlib.crc32(t + body) == struct.unpack('>I', d[i + 8 + n:i + 12 + n])[0], t\n"
			       "    if t == b'IHDR': ihdr = struct.unpack('>IIBBBBB', body)\n"
			       "    elif t == b'PLTE': plte = body\n"
			       "    elif t == b'IDAT': idat += body\n"
			       "    elif t == b'IEND': end = i + 12 + n == len(d)\n"
			       "    i += 12 + n\n"
			       "assert end, 'IEND is not last'\n"
			       "w, h, depth, ctype = ihdr[:4]; ch = 1 if ctype == 3 else 3\n"
			       "assert depth == 8 and ctype in (2, 3) and (ctype == 2 or plte)\n"
			       "raw = zlib.decompress(idat); line = w * ch\n"
			       "assert len(raw) == h * (line + 1), (len(raw), h, line)\n"
			       "out = bytearray()\n"
			       "for y in range(h):\n"
			       "    assert raw[y * (line + 1)] == 0\n"
			       "    row = raw[y * (line + 1) + 1:(y + 1) * (line + 1)]\n"
			       "    out += row if ch == 3 else b''.join(plte[3 * p:3 * p + 3] for p in row)\n"
			       "assert bytes(out) == want, 'pixels differ'\n";

static char dir[] = "/tmp/test_png_write_XXXXXX";

// writes im through png_write_file, its expected RGB next to it, and decodes it in Python
static void roundtrip(const char *name, const PngImage *im)
{
	char png[256], rgb[256], cmd[1024];
	snprintf(png, sizeof png, "%s/%s.png", dir, name);
	snprintf(rgb, sizeof rgb, "%s/%s.rgb", dir, name);
	CHECK_OK(png_write_file(im, png));
	FILE *f = fopen(rgb, "wb");
	CHECK(f);
	for (size_t i = 0; i < (size_t)im->w * im->h; i++)
		if (im->channels == 3)
			CHECK(fwrite(im->px + 3 * i, 1, 3, f) == 3);
		else
			CHECK(fwrite(im->palette[im->px[i]], 1, 3, f) == 3);
	CHECK(fclose(f) == 0);
	snprintf(cmd, sizeof cmd, "python3 %s/decode.py %s %s", dir, png, rgb);
	CHECK(system(cmd) == 0);
	uint8_t *mem;
	size_t n;
	CHECK_OK(png_encode(im, &mem, &n)); // the file is exactly the encoded bytes
	f = fopen(png, "rb");
	CHECK(f);
	uint8_t *disk = malloc(n + 1);
	CHECK(disk && fread(disk, 1, n + 1, f) == n && !memcmp(disk, mem, n));
	fclose(f);
	printf("ok: %s %dx%d x%d: %zu bytes for %zu pixel bytes\n", name, im->w, im->h, im->channels, n,
	       (size_t)im->w * im->h * im->channels);
	free(disk);
	free(mem);
	remove(png);
	remove(rgb);
}

int main(void)
{
	if (system("python3 -c 'import zlib' 2>/dev/null") != 0)
		test_skip("python3 with zlib is needed to decode the PNGs");
	CHECK(mkdtemp(dir));
	char py[256];
	snprintf(py, sizeof py, "%s/decode.py", dir);
	FILE *f = fopen(py, "w");
	CHECK(f && fputs(DECODE_PY, f) >= 0 && fclose(f) == 0);

	static const uint8_t pal[4][3] = {{0, 0, 0}, {255, 255, 255}, {200, 30, 30}, {10, 20, 250}};
	uint32_t s = 12345;
	// indexed: flat areas, a repeated row pattern, a noisy band
	enum { PW = 301, PH = 97 };
	uint8_t *idx = malloc(PW * PH);
	CHECK(idx);
	for (int y = 0; y < PH; y++)
		for (int x = 0; x < PW; x++) {
			s = s * 1664525u + 1013904223u;
			idx[y * PW + x] = y < 30 ? (x / 17) % 4 : y < 60 ? (uint8_t)(s >> 30) : (x == y ? 2 : 1);
		}
	roundtrip("indexed", &(PngImage){.w = PW, .h = PH, .channels = 1, .px = idx, .palette = pal, .n_colours = 4});
	roundtrip("one", &(PngImage){.w = 1, .h = 1, .channels = 1, .px = idx, .palette = pal, .n_colours = 4});

	// RGB: a gradient, a flat background, noise; then rows wider than the 32 KiB window
	enum { RW = 211, RH = 64 };
	uint8_t *rgbp = malloc(RW * RH * 3);
	CHECK(rgbp);
	for (int i = 0; i < RW * RH; i++) {
		s = s * 1664525u + 1013904223u;
		int y = i / RW, x = i % RW;
		uint8_t *p = rgbp + 3 * i;
		p[0] = y < 20 ? (uint8_t)x : y < 40 ? 24 : (uint8_t)(s >> 24);
		p[1] = y < 20 ? (uint8_t)y : y < 40 ? 24 : (uint8_t)(s >> 16);
		p[2] = y < 20 ? 7 : y < 40 ? 24 : (uint8_t)(s >> 8);
	}
	roundtrip("rgb", &(PngImage){.w = RW, .h = RH, .channels = 3, .px = rgbp});
	enum { WW = 12000, WH = 3 };
	uint8_t *wide = malloc(WW * WH * 3);
	CHECK(wide);
	for (int i = 0; i < WW * WH * 3; i++)
		wide[i] = (uint8_t)(i % 7 == 0 ? i : 99);
	roundtrip("wide", &(PngImage){.w = WW, .h = WH, .channels = 3, .px = wide});

	// refusals
	uint8_t *out;
	size_t n;
	CHECK_EQ_INT(png_encode(&(PngImage){.w = 0, .h = 1, .channels = 3, .px = rgbp}, &out, &n), -EINVAL);
	CHECK_EQ_INT(png_encode(&(PngImage){.w = 1, .h = 1, .channels = 2, .px = rgbp}, &out, &n), -EINVAL);
	CHECK_EQ_INT(png_encode(&(PngImage){.w = 1, .h = 1, .channels = 1, .px = idx}, &out, &n), -EINVAL);
	CHECK(png_write_file(&(PngImage){.w = 1, .h = 1, .channels = 3, .px = rgbp}, "/nonexistent/x.png") < 0);

	free(idx);
	free(rgbp);
	free(wide);
	remove(py);
	CHECK(rmdir(dir) == 0);
	printf("PNG writer: indexed and RGB images decode to the pixels written\n");
	return 0;
}
