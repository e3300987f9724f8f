// The ring's mapping can be registered with CUDA as a whole (4 KiB-aligned payloads) and a
// slot copied to the GPU and back without a staging buffer. Skips (77) without a GPU.
#include <cuda_runtime.h>

#include "ring_layout.h"
#include "ring_testutil.h"

#define CUDA_CHECK(call)                                                                                               \
	do {                                                                                                           \
		cudaError_t _e = (call);                                                                               \
		if (_e != cudaSuccess) {                                                                               \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(_e));         \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

int main(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)
		test_skip("no CUDA device");
	RingCreateOptions o;
	ring_create_options_default(&o);
	o.slots = 4;
	char name[64], err[256];
	snprintf(name, sizeof name, "%s", test_ring_name("cuda"));
	Ring *r;
	CHECK_OK(ring_create(&r, name, &o, err, sizeof err));
	snprintf(test_ring_created, sizeof test_ring_created, "%s", name);
	atexit(test_ring_cleanup);
	RingInfo info;
	ring_info(r, &info);
	struct Ring *raw = (struct Ring *)r;
	CUDA_CHECK(cudaHostRegister(raw->base, raw->bytes, cudaHostRegisterDefault));

	RingProducer *p;
	RingConsumer *c;
	CHECK_OK(ring_producer_attach(r, 0, &p));
	CHECK_OK(ring_consumer_attach(r, 0, &c));
	uint8_t *dev, *back = malloc(info.payload_bytes);
	CUDA_CHECK(cudaMalloc((void **)&dev, info.payload_bytes));
	cudaStream_t stream;
	CUDA_CHECK(cudaStreamCreate(&stream));
	for (int i = 0; i < 8; i++) { // two laps: every slot copied from its registered mapping
		RingSlot s;
		CHECK_OK(ring_producer_claim(p, &s, 0));
		test_fill_payload(s.payload, info.payload_bytes, s.text, info.geometry.text_len, info.seed, s.position);
		CHECK_OK(ring_producer_publish(p, &s));
		CHECK_OK(ring_consumer_acquire(c, &s, 0));
		CUDA_CHECK(cudaMemcpyAsync(dev, s.payload, info.payload_bytes, cudaMemcpyHostToDevice, stream));
		CUDA_CHECK(cudaStreamSynchronize(stream));
		CHECK_OK(ring_consumer_release(c, &s));
		CUDA_CHECK(cudaMemcpy(back, dev, info.payload_bytes, cudaMemcpyDeviceToHost));
		CHECK(test_check_payload(back, info.payload_bytes, NULL, 0, info.seed, s.position));
	}
	CUDA_CHECK(cudaHostUnregister(raw->base));
	CUDA_CHECK(cudaFree(dev));
	free(back);
	ring_consumer_detach(c);
	ring_producer_detach(p);
	ring_close(r);
	printf("ring mapping registered with CUDA; 8 slots copied to the device intact\n");
	return 0;
}
