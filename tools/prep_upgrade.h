// tools/prep --upgrade: converts a version 1 manifest (no packet index) to the current version
// by indexing the chunks it names; nothing is re-encoded and samples keep their numbers.
#ifndef TOOLS_PREP_UPGRADE_H
#define TOOLS_PREP_UPGRADE_H
// defines: prep_upgrade

// Rewrites path in place (the old file kept as path.v1) using `jobs` threads to index chunks.
// Returns the exit status: 0 done (or already current), 1 failure with a line on stderr.
int prep_upgrade(const char *path, int jobs);

#endif
