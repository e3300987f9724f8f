// A run directory's launch.conf (written by tools/launch.sh) read from C: the settings tools
// take from a run (ringstat --run-dir: its ring; clipdump --run-dir: manifest and seed).
#ifndef COMMON_RUN_CONF_H
#define COMMON_RUN_CONF_H
// defines: run_conf_get

#include <stddef.h> // defines: size_t

// The value of KEY (N, MANIFEST, RING, SEED, ...) in RUN_DIR/launch.conf, with the shell's
// backslash quoting (printf %q) undone. 0; -ENOENT no launch.conf; -ESRCH no such key;
// -ENAMETOOLONG the value does not fit; -EINVAL a quoting this reader does not undo ($'...').
int run_conf_get(const char *run_dir, const char *key, char *out, size_t len);

#endif
