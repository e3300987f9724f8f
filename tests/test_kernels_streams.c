// Checks the device side of the contract on the CPU backend: memory belongs to the device (any
// stream uses it, it outlives the handle that made it), events and timed events, asynchronous copies only from
// pinned or registered host memory, registration overlaps refused, and the host-wait counter
// counting sync points and nothing else; the attention selection of the options (the CPU backend
// runs its reference and refuses cuDNN).
#include "kern_gradcheck.h" // defines: kgc_*
#include "kern_ops.h"       // defines: the device API

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int bad;

static void expect(const char *what, long long got, long long want)
{
	printf("%-4s %-58s %lld (want %lld)\n", got == want ? "ok" : "FAIL", what, got, want);
	bad |= got != want;
}

int main(void)
{
	KernCtx *c, *c2, *tmp;
	KCtxOptions cuda = {.backend = KERN_BACKEND_CUDA}, dev1 = {.backend = KERN_BACKEND_CPU, .device = 1};
	expect("a CUDA context in a build without the CUDA backend", kern_ctx_create(&tmp, &cuda), -ENODEV);
	expect("CPU device 1", kern_ctx_create(&tmp, &dev1), -ENODEV);
	KCtxOptions cudnn = {.backend = KERN_BACKEND_CPU, .attention = KERN_ATTN_CUDNN};
	KCtxOptions att7 = {.backend = KERN_BACKEND_CPU, .attention = (KAttention)7};
	KCtxOptions own = {.backend = KERN_BACKEND_CPU, .threads = 1, .attention = KERN_ATTN_OWN};
	expect("cuDNN attention on the CPU backend", kern_ctx_create(&tmp, &cudnn), -ENOTSUP);
	expect("attention selection 7", kern_ctx_create(&tmp, &att7), -EINVAL);
	expect("own attention on the CPU backend", kern_ctx_create(&tmp, &own), 0);
	expect("... is the CPU reference", strstr(kern_ctx_attention(tmp), "CPU reference") != NULL, 1);
	kern_ctx_destroy(tmp);
	if (kern_ctx_create_cpu(&c, 2) || kern_stream_create(c, &c2))
		return 1;
	expect("the second stream is on device 0", kern_ctx_device(c2), 0);
	KTensor t, u;
	const int64_t sh[] = {256};
	if (kern_alloc(c, &t, KDT_F32, 1, sh) || kern_alloc(c2, &u, KDT_F32, 1, sh))
		return 1;
	float src[256], dst[256];
	for (int i = 0; i < 256; i++)
		src[i] = (float)i;

	// waits: sync points count, queued ops do not
	int64_t w0 = kern_ctx_host_waits(c);
	kern_upload(c2, &t, src, sizeof src);   // +1
	kern_copy(c, &u, &t);                   // queued
	kern_add(c, &u, &u, &t);                // queued
	kern_download(c2, dst, sizeof dst, &u); // +1
	kern_sync(c);                           // +1
	kern_stream_sync(c2);                   // +1
	expect("host waits: upload, download, sync, stream sync", kern_ctx_host_waits(c2) - w0, 4);
	expect("a tensor of one stream used on the other", (long long)dst[100], 200);

	// events
	KEvent *ev;
	if (kern_event_create(c, &ev))
		return 1;
	expect("an event never recorded is complete", kern_event_query(ev), 1);
	expect("record on stream 2", kern_event_record(ev, c2), 0);
	expect("stream 1 waits for it on the device", kern_stream_wait_event(c, ev), 0);
	expect("the host does not wait for that", kern_ctx_host_waits(c) - w0, 4);
	expect("query", kern_event_query(ev), 1);
	expect("event sync", kern_event_sync(ev), 0);
	expect("... is a host wait", kern_ctx_host_waits(c) - w0, 5);

	// timed events: milliseconds between two records (the CPU's ops have run when queued)
	KEvent *ta, *tb;
	double ms = -1;
	if (kern_event_create_timed(c, &ta) || kern_event_create_timed(c2, &tb))
		return 1;
	expect("elapsed before either was recorded", kern_event_elapsed(ta, tb, &ms), -EINVAL);
	expect("record the first", kern_event_record(ta, c), 0);
	usleep(20000);
	expect("record the second, on the other stream", kern_event_record(tb, c2), 0);
	expect("elapsed", kern_event_elapsed(ta, tb, &ms), 0);
	expect("... spans the 20 ms between the records", ms >= 19.5 && ms < 1e4, 1);
	expect("elapsed against an event without timing", kern_event_elapsed(ta, ev, &ms), -EINVAL);
	expect("no host wait in any of it", kern_ctx_host_waits(c) - w0, 5);
	kern_event_destroy(ta), kern_event_destroy(tb);

	// host memory for asynchronous copies
	void *pinned;
	size_t bytes = sizeof src;
	if (kern_host_alloc(c, &pinned, 8192))
		return 1;
	memcpy(pinned, src, bytes);
	expect("async upload from pinned memory", kern_upload_async(c2, &t, pinned, bytes), 0);
	char *map = aligned_alloc(4096, 3 * 4096); // stands in for the ring's mapping
	expect("async upload from unregistered memory", kern_upload_async(c2, &t, map, bytes), -EINVAL);
	expect("register a mapping", kern_host_register(c, map, 2 * 4096), 0);
	expect("register an overlapping range", kern_host_register(c2, map + 4096, 4096), -EEXIST);
	memcpy(map + 100, src, bytes);
	expect("async upload from the registered mapping", kern_upload_async(c2, &t, map + 100, bytes), 0);
	expect("... but not past its end", kern_upload_async(c2, &t, map + 2 * 4096 - 100, bytes), -EINVAL);
	expect("async download into the registered mapping", kern_download_async(c2, map + 2000, bytes, &t), 0);
	expect("record and sync an event after the copies", kern_event_record(ev, c2) | kern_event_sync(ev), 0);
	expect("the copies landed", memcmp(map + 2000, src, bytes) == 0, 1);
	expect("unregister", kern_host_unregister(c, map), 0);
	expect("async upload after unregistering", kern_upload_async(c2, &t, map + 100, bytes), -EINVAL);
	expect("unregister twice", kern_host_unregister(c, map), -ENOENT);
	kern_host_free(c, pinned);
	free(map);

	// the device outlives the handle that opened it
	kern_event_destroy(ev);
	kern_ctx_destroy(c);
	memset(dst, 0, sizeof dst);
	expect("download through the surviving stream", kern_download(c2, dst, sizeof dst, &t), 0);
	expect("... of memory allocated through the closed one", (long long)dst[255], 255);
	kern_ctx_destroy(c2);
	printf("%s\n", bad ? "FAIL device, streams and host memory" : "PASS device, streams, events and host memory");
	return bad;
}
