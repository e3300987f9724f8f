# shm-layout/: the ring ABI and protocol (public header: ring.h); uses common/proc_ident only.
PUBLIC_HEADERS += shm-layout/ring.h
USES_shm-layout := common
LIBS += shm-layout
shm-layout_SRCS := shm-layout/ring_segment.c shm-layout/ring_create.c shm-layout/ring_proto.c shm-layout/ring_reap.c \
             shm-layout/ring_stats.c shm-layout/ring_boot.c shm-layout/ring_data.c

TESTS += test_ring_transitions test_ring_wraparound test_ring_abi_mismatch test_ring_geometry_mismatch \
         test_ring_attach_detach test_ring_instance test_ring_waits test_ring_first_position \
         test_ring_dead_consumer test_ring_options test_ring_attach_killed test_ring_boot test_ring_damaged \
         test_ring_create_limits test_ring_create_killed
# a ring another user made, or others may write, is not joined for writing
TESTS += test_ring_foreign

# multi-process and threaded stress (tests/ring_stress.c is the shared harness)
STRESS_TESTS := test_ring_stress_3x2 test_ring_stress_1x4 test_ring_kill test_ring_threads
TESTS += $(STRESS_TESTS)
# tests that read or damage the byte layout (ring_layout.h) on purpose
$(foreach t,test_ring_abi_mismatch test_ring_attach_killed test_ring_boot test_ring_options test_ring_damaged \
            test_ring_create_limits,$(eval $(t)_WHITEBOX := shm-layout))
SAN_TESTS += $(STRESS_TESTS) test_ring_transitions test_ring_attach_detach test_ring_waits test_ring_boot
test_ring_boot_LIBS := shm-layout common
$(foreach t,$(STRESS_TESTS),$(eval $(t)_SRCS := tests/$(t).c tests/ring_stress.c))

BENCHES += bench_ring
.PHONY: bench-ring
bench-ring: $(BUILD)/tests/bench_ring
	$(BUILD)/tests/bench_ring 3

ifeq ($(HAVE_CUDART),1)
GPU_TESTS += test_ring_cuda
test_ring_cuda_LIBS := shm-layout common
test_ring_cuda_LDLIBS := $(CUDART_LIBS)
$(BUILD)/obj/tests/test_ring_cuda.o: CFLAGS += $(CUDART_CFLAGS)
endif
