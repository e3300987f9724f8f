# tests/: the runner make test uses (tests/run.sh) has a test of its own
SCRIPT_TESTS += tests/test_run_sh.sh

# test and benchmark data (synthetic chunks, image shards, manifests through the manifest writer):
# a library of tests/, linked only by tests and benchmarks
ifeq ($(HAVE_LIBAV),1)
LIBS += loaderfix
loaderfix_SRCS := tests/ld_fixture.c
endif
