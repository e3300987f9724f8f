// Directories: make a path's missing folders, as `mkdir -p` does, for the programs' output
// folders (prep's --out, the trainer's checkpoint folder).
#ifndef COMMON_FS_DIR_H
#define COMMON_FS_DIR_H
// defines: fs_mkdir_p, fs_create_new, fs_fopen_new, fs_dir_own, fs_open_regular, fs_fopen_read, fs_strerror

#include <stdio.h>     // defines: FILE
#include <sys/stat.h>  // defines: struct stat
#include <sys/types.h> // defines: mode_t

// Creates path and every missing folder above it with mode (less the umask). 0 when path is a
// directory afterwards (it may have existed); -errno otherwise (-ENOTDIR: a part is a file).
int fs_mkdir_p(const char *path, mode_t mode);

// A new file at path for writing (a temporary that is renamed into place), never one another user
// planted: whatever is at path (a crashed run's temporary, a symbolic link) is unlinked first, and
// the file is created O_EXCL|O_NOFOLLOW, so nothing made in between is opened or followed. The fd
// (O_CLOEXEC) or -errno (-EEXIST: something reappeared at path, or could not be removed).
int fs_create_new(const char *path, mode_t mode);
// the same as a stdio stream ("w"); NULL with errno set
FILE *fs_fopen_new(const char *path, mode_t mode);

// An input file opened for reading (O_RDONLY|O_CLOEXEC) only when it is a regular file: a FIFO,
// socket or device at the path (a hostile manifest's or a typo's) would block the open or the reads
// forever, so it is opened non-blocking and checked first. The fd, or -errno: -EISDIR for a folder,
// -EINVAL for another file that is not regular (fs_strerror words it). st (may be NULL) gets the
// file's status whenever fstat succeeded, also on those two refusals.
int fs_open_regular(const char *path, struct stat *st);
// the same as a stdio stream ("r" or "rb"); NULL with errno set
FILE *fs_fopen_read(const char *path, const char *mode);
// strerror, except EINVAL: "not a regular file (a FIFO, socket or device)", fs_fopen_read's refusal
const char *fs_strerror(int e);

// A folder the program writes files into by name (a run directory: metrics, logs, checkpoints)
// must be one no other user can plant names in: a directory of this euid that others cannot write
// (group-writable is allowed: a user-private group under umask 002). 0, or -EPERM / -ENOTDIR /
// -errno with the reason and the fix in why (what names the folder in it, e.g. "--run-dir").
int fs_dir_own(const char *path, const char *what, char *why, size_t whylen);

#endif
