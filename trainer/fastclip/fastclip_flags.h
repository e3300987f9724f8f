// The FastCLIP flags as a table (name, bounds, default, help): setting one from its string,
// the --help text, and the effective-configuration line a trainer logs at start.
#ifndef TRAINER_FASTCLIP_FLAGS_H
#define TRAINER_FASTCLIP_FLAGS_H
// defines: fastclip_flag_set, fastclip_flags_help, fastclip_config_describe

#include <stddef.h> // defines: size_t

#include "fastclip_config.h" // defines: FastclipConfig

// name without "--" ("gamma-min"). Choose the kind first (fastclip_kind_parse on --loss, then
// fastclip_config_default), since it sets kind-dependent defaults. -ENOENT for an unknown name,
// -EINVAL for a value that does not parse, -ERANGE for one outside the flag's bounds.
int fastclip_flag_set(FastclipConfig *cfg, const char *name, const char *value);
// "  --gamma-min X   γ after the decay [0.0001, 1] (default 0.8)\n" ...; returns snprintf's count
int fastclip_flags_help(char *buf, size_t len);
// "loss=fastclip-v3 gamma-min=0.8 ..." (every flag's effective value)
int fastclip_config_describe(const FastclipConfig *cfg, char *buf, size_t len);

#endif
