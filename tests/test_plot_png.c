// tools/plot's PNG writer: the file has the PNG signature, an IHDR with the canvas size (8-bit
// indexed), a PLTE of the palette, chunks with valid CRCs, and an IDAT zlib stream whose header
// checks and whose Adler-32 trailer matches the filtered rows (so the deflate covered every byte).
#include "../tools/plot_chart.h" // defines: plot_palette, plot_chart, plot_ticks, PlotSeries, PlotBox
#include "../tools/plot_draw.h"  // defines: plot_line, plot_text
#include "../tools/plot_png.h"   // defines: PlotImage, plot_image_new, plot_png_write, plot_deflate
#include "crc32.h"               // defines: crc32_ieee
#include "testutil.h"            // defines: CHECK, CHECK_OK, CHECK_EQ_INT

#include <errno.h>  // defines: EINVAL, ENOENT, ...
#include <math.h>   // defines: fabs, isnan, log2
#include <stdlib.h> // defines: malloc, free, system, mkdtemp
#include <string.h> // defines: memcmp, strstr, strcmp

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t adler32(const uint8_t *d, size_t n)
{
	uint32_t a = 1, b = 0;
	for (size_t i = 0; i < n; i++) {
		a = (a + d[i]) % 65521;
		b = (b + a) % 65521;
	}
	return b << 16 | a;
}

static void check_png(const char *path, const PlotImage *im)
{
	FILE *f = fopen(path, "rb");
	CHECK(f);
	static uint8_t buf[1 << 22];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	CHECK(n > 8 && n < sizeof buf);
	CHECK(!memcmp(buf, "\x89PNG\r\n\x1a\n", 8));
	size_t at = 8;
	int seen_ihdr = 0, seen_plte = 0, seen_iend = 0;
	uint8_t *idat = malloc(n);
	size_t idat_n = 0;
	CHECK(idat);
	while (at + 12 <= n) {
		uint32_t len = be32(buf + at);
		const uint8_t *type = buf + at + 4, *data = buf + at + 8;
		CHECK(at + 12 + len <= n);
		CHECK_EQ_INT(be32(data + len), crc32_ieee(crc32_ieee(0, type, 4), data, len));
		if (!memcmp(type, "IHDR", 4)) {
			CHECK(!seen_ihdr && at == 8 && len == 13);
			CHECK_EQ_INT(be32(data), im->w);
			CHECK_EQ_INT(be32(data + 4), im->h);
			CHECK_EQ_INT(data[8], 8);
			CHECK_EQ_INT(data[9], 3);
			seen_ihdr = 1;
		} else if (!memcmp(type, "PLTE", 4)) {
			CHECK_EQ_INT(len, 3 * im->n_colours);
			CHECK(!memcmp(data, im->palette, len));
			seen_plte = 1;
		} else if (!memcmp(type, "IDAT", 4)) {
			memcpy(idat + idat_n, data, len);
			idat_n += len;
		} else if (!memcmp(type, "IEND", 4)) {
			CHECK(at + 12 == n);
			seen_iend = 1;
		}
		at += 12 + len;
	}
	CHECK(seen_ihdr && seen_plte && seen_iend && idat_n > 6);
	CHECK((idat[0] * 256 + idat[1]) % 31 == 0 && (idat[0] & 15) == 8);
	// rows with filter byte 0
	size_t row = (size_t)im->w + 1;
	uint8_t *raw = malloc(row * im->h);
	CHECK(raw);
	for (int y = 0; y < im->h; y++) {
		raw[y * row] = 0;
		memcpy(raw + y * row + 1, im->px + (size_t)y * im->w, im->w);
	}
	CHECK_EQ_INT(be32(idat + idat_n - 4), adler32(raw, row * im->h));
	printf("ok: %s %dx%d, %zu bytes (%zu raw)\n", path, im->w, im->h, n, row * im->h);
	free(raw);
	free(idat);
}

int main(void)
{
	char path[] = "/tmp/test_plot_png_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	PlotImage im;
	CHECK_EQ_INT(plot_image_new(&im, 0, 10), -EINVAL);
	CHECK_OK(plot_image_new(&im, 333, 201));
	CHECK_EQ_INT(plot_png_write(&im, path), -EINVAL); // no palette yet
	plot_palette(&im);
	double x[50], y[50];
	for (int i = 0; i < 50; i++) {
		x[i] = i;
		y[i] = i == 20 ? NAN : sin(i / 5.0);
	}
	PlotSeries s = {.x = x, .y = y, .n = 50, .colour = PC_BLUE, .label = "SIN"};
	plot_chart(&im, (PlotBox){0, 0, 333, 201}, "A TEST", "STEP", &s, 1, NULL);
	for (int i = 0; i < 333; i += 7) // a noisy stripe: literals as well as matches
		im.px[100 * 333 + i] = (uint8_t)(i % PC_COUNT);
	CHECK_OK(plot_png_write(&im, path));
	check_png(path, &im);
	plot_image_free(&im);

	// a canvas wider than the deflate window: no row matches, still valid
	CHECK_OK(plot_image_new(&im, 40000, 2));
	plot_palette(&im);
	plot_line(&im, 0, 0, 39999, 1, PC_RED, 3);
	CHECK_OK(plot_png_write(&im, path));
	check_png(path, &im);
	plot_image_free(&im);

	// ticks are round numbers covering the range
	double first, step;
	int n;
	plot_ticks(0.03, 0.071, 6, &first, &step, &n);
	CHECK(fabs(step - 0.01) < 1e-12 && fabs(first - 0.03) < 1e-12 && n == 5);
	plot_ticks(-3, 297, 7, &first, &step, &n);
	CHECK(step == 50 && first == 0 && n == 6);
	remove(path);
	printf("plot PNG: signature, IHDR, PLTE, CRCs, zlib header and Adler-32 all valid\n");
	return 0;
}
