// Directories: make a path's missing folders, as `mkdir -p` does, for the programs' output
// folders (prep's --out, the trainer's checkpoint folder).
#ifndef COMMON_FS_DIR_H
#define COMMON_FS_DIR_H
// defines: fs_mkdir_p

#include <sys/types.h> // defines: mode_t

// Creates path and every missing folder above it with mode (less the umask). 0 when path is a
// directory afterwards (it may have existed); -errno otherwise (-ENOTDIR: a part is a file).
int fs_mkdir_p(const char *path, mode_t mode);

#endif
