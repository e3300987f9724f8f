// Private to the rendezvous files: the wire and file header both exchange methods share,
// deadlines with backoff, and the error formatter.
#ifndef TRAINER_RDV_INTERNAL_H
#define TRAINER_RDV_INTERNAL_H
// defines: RdvHeader, RDV_MAGIC, RDV_VERSION, RDV_HEADER_BYTES, RdvKind, RdvReason,
//          rdv_backoff, rdv_check_len, rdv_header_put, rdv_header_get, rdv_reason_text

#include <stddef.h>
#include <stdint.h>

#include "comm.h"   // defines: RdvInfo
#include "errbuf.h" // defines: err_fmt

// Both methods start with the same 32-byte little-endian header; the file and an OK reply
// follow it with the blob (and the file with an FNV-1a checksum of header and blob).
#define RDV_MAGIC 0x5a525641u // "AVRZ"
#define RDV_VERSION 1
#define RDV_HEADER_BYTES 32

typedef enum { RDV_HELLO = 1, RDV_OK = 2, RDV_REJECT = 3, RDV_FILE_RECORD = 4 } RdvKind;

// why a master refused a rank (in a REJECT)
typedef enum {
	RDV_R_NONE = 0,
	RDV_R_OTHER_JOB, // the tokens differ: the rank reached another job's master
	RDV_R_WORLD,     // same job, another world size
	RDV_R_RANK,      // rank not below the world size, or 0
	RDV_R_DUPLICATE, // this rank already has its copy from another process
	RDV_R_LENGTH,    // the blob lengths differ
	RDV_R_VERSION,   // another protocol version
} RdvReason;

typedef struct {
	uint32_t magic;
	uint16_t version, kind;
	uint64_t token;
	uint32_t world;
	uint32_t rank; // HELLO: the sender; REJECT: the reason (RdvReason)
	uint32_t len;  // blob bytes
	uint32_t pid;  // the sender's pid
} RdvHeader;

void rdv_header_put(uint8_t out[RDV_HEADER_BYTES], const RdvHeader *h);
void rdv_header_get(RdvHeader *h, const uint8_t in[RDV_HEADER_BYTES]);
const char *rdv_reason_text(RdvReason r);

// writes the message into err and returns rc (a negative errno)
// -EINVAL (and err) unless blob is 1..RDV_BLOB_MAX bytes
int rdv_check_len(const RdvInfo *i, const void *blob, size_t len, char *err, size_t errlen);
// sleeps *delay_ms (not past deadline_ms), then grows it ×1.5 up to cap_ms
void rdv_backoff(int *delay_ms, int cap_ms, int64_t deadline_ms);

#endif
