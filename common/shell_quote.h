// One word of a command printed for the user to copy into a shell: a path with spaces or
// quotes comes out quoted, so the pasted command sees it as one argument.
#ifndef COMMON_SHELL_QUOTE_H
#define COMMON_SHELL_QUOTE_H
// defines: shell_quote, shell_quoted

#include <stddef.h> // defines: size_t

// s as one POSIX shell word into buf: unchanged when every character is safe ([A-Za-z0-9_./,:=+@%^-]),
// else in single quotes with each ' written '\''. The characters written (as snprintf: may exceed len).
int shell_quote(const char *s, char *buf, size_t len);
// shell_quote into one of 4 rotating static buffers of 4 KiB, for up to 4 words in one printf
const char *shell_quoted(const char *s);

#endif
