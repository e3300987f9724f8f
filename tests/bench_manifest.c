// What checking a manifest's data at open costs: a manifest of one million clip samples
// (1000 videos x 10 chunks of 15 s at 30 fps, each chunk with its packet index as prep writes
// it), opened with the structure checks only (the packet index's consistency included) and
// with the data checksum and token range as loaderd, eval and clipdump open it. Best of 5, CPU
// time.
#include "manifest.h" // defines: manifest_open, manifest_open_verified, manifest_writer_new, manifest_add_*, manifest_write
#include "proc_time.h" // defines: time_cpu_s

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const uint64_t samples = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	char path[64], err[256];
	snprintf(path, sizeof path, "/tmp/bench_manifest_%d.bin", (int)getpid());
	ManifestWriter *w;
	if (manifest_writer_new(&w, 77, 49408, 15000, 288))
		return 1;
	uint32_t kf[29];
	for (int k = 0; k < 29; k++)
		kf[k] = (uint32_t)k * 16;
	int32_t tok[77] = {49406};
	// a packet index like x264's at GOP 16 without B-frames: one packet per frame in display order
	ManifestPacket pk[450];
	for (int i = 0; i < 450; i++)
		pk[i] = (ManifestPacket){.offset = (uint32_t)i * 1000,
					 .size = 1000,
					 .frame = (uint16_t)i,
					 .flags = i % 16 ? MANIFEST_PKT_REF : MANIFEST_PKT_KEY | MANIFEST_PKT_REF};
	const uint8_t config[40] = {1, 100, 0, 31};
	for (int v = 0; v < 1000; v++) {
		char name[32], p[64];
		snprintf(name, sizeof name, "video%04d", v);
		manifest_add_video(w, name, 150000);
		for (int c = 0; c < 10; c++) {
			snprintf(p, sizeof p, "%s/%d.mp4", name, c * 15);
			int64_t ch = manifest_add_chunk(w, (uint32_t)v, p, (uint32_t)c * 15000, 450, 30, 1, 512, 288,
							kf, 29);
			if (ch < 0 || manifest_set_chunk_index(w, (uint32_t)ch, MANIFEST_CODEC_H264, pk, 450, config,
							       sizeof config, 450 * 1000))
				return 1;
		}
	}
	srand(1);
	for (uint64_t i = 0; i < samples; i++) {
		uint32_t v = (uint32_t)rand() % 1000, c = v * 10 + (uint32_t)rand() % 10, f = (uint32_t)rand() % 400;
		for (int k = 1; k < 12; k++)
			tok[k] = 1 + rand() % 49000;
		tok[12] = 49407;
		if (manifest_add_clip(w, v, c, f, c, f + 50, tok) < 0)
			return 1;
	}
	if (manifest_write(w, path))
		return 1;
	manifest_writer_free(w);
	struct stat st;
	stat(path, &st);
	double best[2] = {1e9, 1e9};
	for (int rep = 0; rep < 5; rep++)
		for (int verified = 0; verified < 2; verified++) {
			Manifest *m;
			double t0 = time_cpu_s();
			int rc = verified ? manifest_open_verified(&m, path, err, sizeof err)
					  : manifest_open(&m, path, err, sizeof err);
			double t = time_cpu_s() - t0;
			if (rc) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			manifest_close(m);
			best[verified] = t < best[verified] ? t : best[verified];
		}
	// the checksum alone over the same bytes
	FILE *f = fopen(path, "rb");
	uint8_t *b = malloc((size_t)st.st_size);
	if (!f || !b || fread(b, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		return 1;
	fclose(f);
	double crc_best = 1e9;
	for (int rep = 0; rep < 5; rep++) {
		double t0 = time_cpu_s();
		volatile uint32_t c = manifest_crc32(0, b, (size_t)st.st_size);
		(void)c;
		crc_best = time_cpu_s() - t0 < crc_best ? time_cpu_s() - t0 : crc_best;
	}
	free(b);
	printf("CRC-32 alone: %.3f s CPU (%.2f GB/s)\n", crc_best, st.st_size / 1e9 / crc_best);
	unlink(path);
	printf("manifest of %llu samples, %.0f MB (page cache warm, CPU time): open %.3f s, open with data checksum and "
	       "token check %.3f s (+%.3f s, %.2f GB/s)\n",
	       (unsigned long long)samples, st.st_size / 1e6, best[0], best[1], best[1] - best[0],
	       st.st_size / 1e9 / (best[1] - best[0]));
	return 0;
}
