// GOP arithmetic over a chunk's packet index. GOPs are closed (manifest_packets_check), so the
// GOP of frame x occupies decode positions [k, next keyframe) where k is the last keyframe <= x,
// and x's own packet is found inside that window.
#include "ld_gop.h" // defines: ld_gops, ld_gop_sends, ld_frame_needed

int ld_gops(const ManifestPacket *pk, uint32_t n_frames, const uint32_t *kf, uint32_t nk, const uint32_t *frames, int n,
	    LdGop *out)
{
	int count = 0;
	for (int i = 0; i < n; i++) {
		uint32_t k = manifest_keyframe_index(kf, nk, frames[i]);
		uint32_t a = kf[k], b = k + 1 < nk ? kf[k + 1] : n_frames, pos = b;
		for (uint32_t j = a; j < b; j++)
			if (pk[j].frame == frames[i]) {
				pos = j;
				break;
			}
		if (pos == b)
			return -1;
		if (count && out[count - 1].first == a) {
			if (pos > out[count - 1].last)
				out[count - 1].last = pos;
		} else {
			out[count++] = (LdGop){a, pos};
		}
	}
	return count;
}

int ld_frame_needed(uint32_t frame, const uint32_t *frames, int n)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (frames[mid] < frame)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && frames[lo] == frame;
}

int ld_gop_sends(const ManifestPacket *pk, const uint32_t *frames, int n)
{
	return (pk->flags & MANIFEST_PKT_REF) || ld_frame_needed(pk->frame, frames, n);
}
