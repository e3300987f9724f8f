// Shell quoting of the words of printed commands (see shell_quote.h).
#include "shell_quote.h" // defines: shell_quote, shell_quoted

#include <string.h> // defines: strchr

static int safe(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("_./,:=+@%^-", c));
}

int shell_quote(const char *s, char *buf, size_t len)
{
	size_t n = 0;
	int plain = *s != 0;
	for (const char *p = s; *p; p++)
		plain &= safe(*p);
#define PUT(ch)                                                                                                        \
	do {                                                                                                           \
		if (n + 1 < len)                                                                                       \
			buf[n] = (ch);                                                                                 \
		n++;                                                                                                   \
	} while (0)
	if (!plain)
		PUT('\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'' && !plain) {
			PUT('\'');
			PUT('\\');
			PUT('\'');
			PUT('\'');
		} else {
			PUT(*p);
		}
	}
	if (!plain)
		PUT('\'');
#undef PUT
	if (len)
		buf[n < len ? n : len - 1] = 0;
	return (int)n;
}

const char *shell_quoted(const char *s)
{
	static _Thread_local char bufs[4][4096];
	static _Thread_local int next;
	char *b = bufs[next++ & 3];
	shell_quote(s, b, sizeof bufs[0]);
	return b;
}
