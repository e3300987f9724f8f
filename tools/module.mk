# tools/: user-facing programs built in place (tools/ringstat, ...).
PROGS += tools/ringstat
tools/ringstat_SRCS := tools/ringstat.c
tools/ringstat_LIBS := ring

TESTS += test_ringstat
test_ringstat_LIBS := ring
