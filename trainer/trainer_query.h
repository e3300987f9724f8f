// `trainer query NAME [flags]`: the one-shot modes launchers and benchmarks ask the trainer
// (the ring geometry a model needs, the steps of a run, where a resume starts, whether a start
// would be refused, the largest batch that fits, the comm group's creation and removal). Each
// sets one TrainerConfig switch that trainer_main's launcher_mode acts on, then exits.
#ifndef TRAINER_TRAINER_QUERY_H
#define TRAINER_TRAINER_QUERY_H
// defines: trainer_query_take, trainer_query_help

#include <stddef.h> // defines: size_t

#include "trainer_flags.h" // defines: TrainerConfig

// When argv[1] is "query": checks argv[2] names a query, removes both from argv (*argc shrinks)
// and returns the query's index (>= 0); -1 when argv has no query. A flag that was one of these
// modes before (--print-geometry, --fit-batch, ...) anywhere in argv is refused with the query
// to use instead. -EINVAL with a sentence in err.
int trainer_query_take(int *argc, char **argv, char *err, size_t errlen);
// sets the switch of query q (from trainer_query_take) in cfg
void trainer_query_set(TrainerConfig *cfg, int q);
// the usage lines of the queries, into buf; the length written (as snprintf)
int trainer_query_help(char *buf, size_t len);

#endif
