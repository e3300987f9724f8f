// The shim's fibers on ucontext (swapcontext) instead of the hand-written x86-64 switch: the
// fallback for other architectures, built here so that it is tested and measured too.
#define KEMU_UCONTEXT 1
#include "kemu_fiber.cpp"
