// shell_quote: a word of a printed command comes back from a shell as the same one argument,
// whatever it holds (spaces, quotes, $, backticks, globs), and plain paths stay as they are.
#include "shell_quote.h" // defines: shell_quote, shell_quoted

#include <stdio.h>  // defines: printf, popen, fread
#include <string.h> // defines: strcmp

static int fails;

// what sh -c "printf %s WORD" prints
static void round_trip(const char *s)
{
	char cmd[1200], out[600] = "";
	snprintf(cmd, sizeof cmd, "printf %%s %s", shell_quoted(s));
	FILE *p = popen(cmd, "r");
	size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
	out[n] = 0;
	if (p)
		pclose(p);
	if (strcmp(out, s)) {
		printf("FAIL: '%s' quoted as %s came back as '%s'\n", s, shell_quoted(s), out);
		fails++;
	}
}

int main(void)
{
	static const char *const words[] = {
		"runs/it's a run",  "a b",        "$HOME", "`id`", "*", "x\"y", "tab\there", "new\nline", "--resume",
		"/data/run-1/ckpt", "ümlaut dir", "'"};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		round_trip(words[i]);
	char buf[64];
	if (strcmp(shell_quoted("/data/run-1/ckpt_2.safetensors"), "/data/run-1/ckpt_2.safetensors") ||
	    strcmp(shell_quoted(""), "''") || (shell_quote("it's", buf, sizeof buf), strcmp(buf, "'it'\\''s'"))) {
		printf("FAIL: plain '%s', empty '%s', quote '%s'\n", shell_quoted("/data/run-1/ckpt_2.safetensors"),
		       shell_quoted(""), buf);
		fails++;
	}
	if (shell_quote("a b c", buf, 4) != 7 || strcmp(buf, "'a ")) {
		printf("FAIL: a short buffer: '%s'\n", buf);
		fails++;
	}
	if (fails)
		return 1;
	printf("shell_quote: 12 words round-trip through sh; plain paths unchanged\n");
	return 0;
}
