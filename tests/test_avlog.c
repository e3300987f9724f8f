// libav's messages through the logger (tools/avlog): 333 messages of one kind make one line and
// one summary line with the count, another kind its own line, messages below the level none;
// verbose logs every one.
#include "../tools/avlog.h" // defines: avlog_install_level, avlog_summary, avlog_count
#include "log.h"            // defines: log_init

#include <libavutil/log.h> // defines: av_log, AVClass, AV_LOG_*
#include <stdio.h>         // defines: printf, tmpfile, fgets
#include <string.h>        // defines: strstr
#include <unistd.h>        // defines: dup, dup2

static const char *h264_name(void *p)
{
	(void)p;
	return "h264";
}
static const AVClass h264_class = {.class_name = "h264", .item_name = h264_name, .version = LIBAVUTIL_VERSION_INT};

static int fails;
#define CHECK(c, ...)                                                                                                  \
	do {                                                                                                           \
		if (!(c)) {                                                                                            \
			printf("FAIL line %d: ", __LINE__);                                                            \
			printf(__VA_ARGS__);                                                                           \
			printf("\n");                                                                                  \
			fails++;                                                                                       \
		}                                                                                                      \
	} while (0)

// what the logger wrote to stderr while f ran: lines with `a`, lines with `b`, all lines
static void run(int verbose, int *with_a, int *with_b, int *lines, char *summary, size_t cap)
{
	struct {
		const AVClass *c;
	} ctx = {&h264_class};
	FILE *tmp = tmpfile();
	fflush(stderr);
	int saved = dup(2);
	dup2(fileno(tmp), 2);
	avlog_install_level(AV_LOG_ERROR, verbose);
	for (int i = 0; i < 333; i++)
		av_log(&ctx, AV_LOG_ERROR, "error while decoding MB %d %d, bytestream %d\n", i % 20, i / 20, -5);
	av_log(&ctx, AV_LOG_INFO, "below the level\n");
	av_log(NULL, AV_LOG_ERROR, "a kind seen once\n");
	CHECK(verbose || avlog_count() == 334, "counted %llu messages, want 334", (unsigned long long)avlog_count());
	avlog_summary();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	char line[1024];
	*with_a = *with_b = *lines = 0;
	summary[0] = 0;
	while (fgets(line, sizeof line, tmp)) {
		(*lines)++;
		*with_a += strstr(line, "error while decoding MB") != NULL;
		*with_b += strstr(line, "a kind seen once") != NULL;
		CHECK(!strstr(line, "below the level"), "a message below the level was logged: %s", line);
		if (strstr(line, "messages '"))
			snprintf(summary, cap, "%s", line);
	}
	fclose(tmp);
}

int main(void)
{
	log_init("test_avlog", LOG_INFO);
	int a, b, n;
	char summary[1024];
	run(0, &a, &b, &n, summary, sizeof summary);
	CHECK(a == 2 && b == 1 && n == 3,
	      "summarized: %d lines of the frequent kind (want its first and the summary), %d "
	      "of the other (want 1), %d in all (want 3)",
	      a, b, n);
	CHECK(strstr(summary, "libav [h264]: 333 messages 'error while decoding MB %d %d, bytestream %d' (the first: "
			      "error while decoding MB 0 0, bytestream -5)"),
	      "summary line: %s", summary);
	run(1, &a, &b, &n, summary, sizeof summary);
	CHECK(a == 333 && b == 1 && !summary[0], "verbose: %d and %d lines, summary '%s'", a, b, summary);
	if (fails)
		return 1;
	printf("avlog: 333 libav messages of one kind are one line and a count; verbose shows every one\n");
	return 0;
}
