// Consistency of an indexed chunk's packet index (one packet per frame, decode order, closed
// GOPs matching the keyframe table), shared by the manifest writer and reader; keyframe search.
#include "manifest.h" // defines: manifest_packets_check, manifest_keyframe_index, ManifestPacket, ManifestChunk

#include <string.h>

const char *manifest_packets_check(const ManifestChunk *c, const uint32_t *kf, const ManifestPacket *pkt, uint8_t *seen)
{
	if (c->codec != MANIFEST_CODEC_H264)
		return "unknown codec";
	if (c->pkt_count != c->n_frames || c->n_frames > MANIFEST_MAX_INDEXED_FRAMES)
		return "packet count differs from the frame count (or more than 65536 frames)";
	if (!c->config_size || !c->file_size)
		return "no codec configuration or file size";
	memset(seen, 0, c->n_frames);
	uint64_t end = 0;
	int64_t max_frame = -1;
	uint32_t keys = 0;
	for (uint32_t i = 0; i < c->pkt_count; i++) {
		const ManifestPacket *p = &pkt[i];
		if (p->flags & ~(MANIFEST_PKT_KEY | MANIFEST_PKT_REF))
			return "unknown packet flags";
		if (!p->size || p->offset < end || (uint64_t)p->offset + p->size > c->file_size)
			return "packet bytes overlap, go backwards or lie past the file size";
		if (p->frame >= c->n_frames || seen[p->frame])
			return "packet frame numbers are not each frame exactly once";
		seen[p->frame] = 1;
		if (p->flags & MANIFEST_PKT_KEY) {
			// closed GOP: everything decoded before a keyframe is shown before it
			if (p->frame != i || max_frame >= (int64_t)i || keys >= c->kf_count || kf[keys] != i)
				return "key packets do not start closed GOPs at the keyframe table's frames";
			keys++;
		} else if (i == 0) {
			return "the first packet is not a key packet";
		}
		if (p->frame > max_frame)
			max_frame = p->frame;
		end = (uint64_t)p->offset + p->size;
	}
	return keys == c->kf_count ? NULL : "fewer key packets than keyframes";
}

uint32_t manifest_keyframe_index(const uint32_t *kf, uint32_t n, uint32_t frame)
{
	uint32_t lo = 0, hi = n;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (kf[mid] <= frame)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
