// Which packets of an indexed chunk a set of needed frames requires: per closed GOP, the key
// packet and the last packet (in decode order) that must be decoded. The plan reads those byte
// ranges; the indexed decoder sends exactly those packets, skipping unneeded non-references.
#ifndef LOADERD_LD_GOP_H
#define LOADERD_LD_GOP_H
// defines: LdGop, ld_gops, ld_gop_sends, ld_frame_needed

#include "manifest.h" // defines: ManifestPacket, MANIFEST_PKT_*

#include <stdint.h>

typedef struct {
	uint32_t first, last; // decode positions: the GOP's key packet .. the last packet to send
} LdGop;

// frames[0..n): ascending frame numbers (repeats allowed) of a chunk of n_frames frames with
// keyframes kf[0..nk) and packets pk[0..n_frames). Writes at most n GOPs, ascending, into out and
// returns their count, or -1 when a frame is not in its GOP's packets.
int ld_gops(const ManifestPacket *pk, uint32_t n_frames, const uint32_t *kf, uint32_t nk, const uint32_t *frames, int n,
	    LdGop *out);

// 1 when frame is among frames[0..n) (ascending)
int ld_frame_needed(uint32_t frame, const uint32_t *frames, int n);
// 1 when packet pk must be decoded: other frames may reference it, or frames[] needs it
int ld_gop_sends(const ManifestPacket *pk, const uint32_t *frames, int n);

#endif
