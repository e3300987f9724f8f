# stream/: counter-based RNG (Philox4x32-10) and the per-epoch keyed permutation
# that turn (seed, position g) into a sample and its random parameters; loader and trainer share them.
PUBLIC_HEADERS += stream/stream.h
USES_stream :=
LIBS += stream
stream_SRCS := stream/rng_philox.c stream/stream_perm.c

TESTS += test_rng_philox test_rng_uniform test_stream_bijection test_stream_position
