// Fuzz harness: the manifest reader on a mapped buffer ending at a guard page, then every
// accessor a loader uses (chunks, keyframe lookups, clip frame location, tokens, strings,
// path resolution) and the data check; each input twice, as it is and with its file size and
// checksums made valid (anyone can recompute them), so mutations reach past the checksums.
#include "../manifest_recrc.h" // defines: manifest_recrc
#include "fuzz_util.h"         // defines: FuzzBuf, fuzz_guarded
#include "manifest.h"          // defines: manifest_open_mem, manifest_*

static void open_and_read(const uint8_t *data, size_t size)
{
	Manifest *m;
	char err[256], path[512];
	if (manifest_open_mem(&m, data, size, "/data", err, sizeof err) == 0) {
		const ManifestHeader *h = manifest_header(m);
		manifest_check_data(m, err, sizeof err);
		for (uint32_t i = 0; i < h->n_chunks; i++) {
			const ManifestChunk *c = manifest_chunk(m, i);
			manifest_resolve(m, manifest_string(m, c->path_off), path, sizeof path);
			manifest_keyframe_at_or_before(m, i, c->n_frames - 1);
			manifest_keyframe_at_or_before(m, i, c->n_frames / 2);
		}
		for (uint64_t i = 0; i < h->n_samples && i < 4096; i++) {
			const ManifestSample *s = manifest_sample(m, i);
			volatile uint16_t t = manifest_tokens(m, i)[h->context - 1];
			(void)t;
			uint64_t n = manifest_clip_frames(m, s);
			uint32_t chunk, frame;
			for (uint64_t k = 0; k < n; k += 1 + n / 8)
				if (manifest_clip_locate(m, s, k, &chunk, &frame) == 0)
					manifest_keyframe_at_or_before(m, chunk, frame);
			if (s->kind == MANIFEST_KIND_IMAGE)
				manifest_resolve(m, manifest_string(m, manifest_shard(m, s->source)->path_off), path,
						 sizeof path);
		}
		for (uint32_t i = 0; i < h->n_videos; i++)
			manifest_string(m, manifest_video(m, i)->name_off);
		manifest_close(m);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzBuf b;
	if (fuzz_guarded(&b, data, size, 8))
		return 0;
	open_and_read(b.data, size);
	if (size >= sizeof(ManifestHeader)) { // the copy is writable: repair it in place
		uint64_t file_size = size;
		memcpy(b.data + offsetof(ManifestHeader, file_size), &file_size, sizeof file_size);
		manifest_recrc(b.data, size);
		open_and_read(b.data, size);
	}
	fuzz_release(&b);
	return 0;
}
