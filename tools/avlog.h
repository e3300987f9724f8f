// libav's own messages through the project's logger, summarized: a damaged video makes libavcodec
// print one "[h264 @ 0x...] error while decoding MB ..." per macroblock row (333 lines for one
// file); here each kind of message (the context's name and the message's format) is logged once,
// counted after that, and avlog_summary says how many of each there were.
#ifndef TOOLS_AVLOG_H
#define TOOLS_AVLOG_H
// defines: avlog_install, avlog_install_level, avlog_summary, avlog_count

#include <stdint.h> // defines: uint64_t

// Routes av_log through log_msg (av_log_set_callback): libav's errors, each kind once; verbose
// (or AVCLIP_AV_LOG set in the environment): every message down to libav's info level, as libav
// says it, nothing summarized. Thread-safe; for a program's main (the callback is process-wide).
void avlog_install(int verbose);
// the same with libav's level given (AV_LOG_ERROR, AV_LOG_INFO, ...)
void avlog_install_level(int level, int verbose);
// One warning line per kind of message seen more than once: "libav [h264]: 333 messages 'error
// while decoding MB %d %d, bytestream %d' (the first: ...)". Clears the counts.
void avlog_summary(void);
// messages counted since the last summary (for tests)
uint64_t avlog_count(void);

#endif
