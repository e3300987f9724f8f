// --info and --verify of tools/prep: summary of a manifest, and a full check of it against
// the files it references (existence, sizes, frame counts and keyframes by demuxing).
#ifndef TOOLS_PREP_INFO_H
#define TOOLS_PREP_INFO_H
// defines: prep_info, prep_verify

// print a summary of manifest path to stdout; 0, or 1 when it cannot be opened
int prep_info(const char *path);
// 0 when everything checks, 1 when problems were found (one line each on stdout)
int prep_verify(const char *path, int deep);

#endif
