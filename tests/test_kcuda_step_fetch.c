// test_step_fetch on the CUDA backend through the execution shim: the same checks, where under
// asynchronous streams (KEMU_SCHED_SEED) a row read before its copy landed is the poison's NaN.
#define STEP_FETCH_CUDA 1
#include "test_step_fetch.c"
