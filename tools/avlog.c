// The libav log bridge (avlog.h): one table of message kinds under a mutex, filled by libav's
// callback from any decoding thread, printed by avlog_summary.
#include "avlog.h" // defines: avlog_install, avlog_install_level, avlog_summary, avlog_count

#include "log.h" // defines: log_msg, LOG_WARN, LOG_INFO

#include <libavutil/log.h> // defines: av_log_set_callback, AVClass, AV_LOG_*
#include <pthread.h>       // defines: pthread_mutex_t, pthread_mutex_lock, pthread_mutex_unlock
#include <stdarg.h>        // defines: va_list
#include <stdio.h>         // defines: snprintf, vsnprintf
#include <stdlib.h>        // defines: getenv
#include <string.h>        // defines: strcmp, strlen

enum { KINDS = 64 };

typedef struct {
	char who[32];    // the context's item name ("h264", "mov,mp4,m4a,3gp,3g2,mj2"), "libav" without one
	const char *fmt; // libav's format string: one kind of message
	char first[240]; // its first text
	uint64_t count;
} Kind;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static Kind kinds[KINDS];
static int n_kinds, av_level = AV_LOG_ERROR, av_verbose;
static uint64_t others, total; // messages of kinds past the table; all of them

static void callback(void *avcl, int level, const char *fmt, va_list vl)
{
	if (level > av_level || !fmt)
		return;
	char who[32] = "libav", text[240];
	const AVClass *c = avcl ? *(const AVClass *const *)avcl : NULL;
	const char *item = c && c->item_name ? c->item_name(avcl) : NULL;
	if (item && !strcmp(item, "NULL")) // a context without a name of its own: its class's
		item = c->class_name;
	if (item)
		snprintf(who, sizeof who, "%s", item);
	vsnprintf(text, sizeof text, fmt, vl);
	for (size_t l = strlen(text); l && (text[l - 1] == '\n' || text[l - 1] == '\r'); l--)
		text[l - 1] = 0;
	if (!text[0])
		return;
	const LogLevel ll = level <= AV_LOG_WARNING ? LOG_WARN : LOG_INFO;
	if (av_verbose) {
		log_msg(ll, 0, "libav [%s]: %s", who, text);
		return;
	}
	pthread_mutex_lock(&mu);
	total++;
	Kind *k = NULL;
	for (int i = 0; i < n_kinds && !k; i++)
		if (kinds[i].fmt == fmt && !strcmp(kinds[i].who, who))
			k = &kinds[i];
	if (!k && n_kinds < KINDS) {
		k = &kinds[n_kinds++];
		snprintf(k->who, sizeof k->who, "%s", who);
		snprintf(k->first, sizeof k->first, "%s", text);
		k->fmt = fmt;
		k->count = 0;
	}
	uint64_t seen = k ? ++k->count : ++others;
	pthread_mutex_unlock(&mu);
	if (seen == 1 && k)
		log_msg(ll, 0, "libav [%s]: %s (more like it are counted, see the summary at the end)", who, text);
}

void avlog_install(int verbose)
{
	verbose = verbose || getenv("AVCLIP_AV_LOG");
	avlog_install_level(verbose ? AV_LOG_INFO : AV_LOG_ERROR, verbose);
}

void avlog_install_level(int level, int verbose)
{
	av_level = level;
	av_verbose = verbose;
	av_log_set_level(verbose ? level : AV_LOG_QUIET); // the default callback's level; ours filters by av_level
	av_log_set_callback(callback);
}

void avlog_summary(void)
{
	pthread_mutex_lock(&mu);
	for (int i = 0; i < n_kinds; i++) {
		char fmt[160];
		snprintf(fmt, sizeof fmt, "%s", kinds[i].fmt);
		for (size_t l = strlen(fmt); l && fmt[l - 1] == '\n'; l--)
			fmt[l - 1] = 0;
		if (kinds[i].count > 1)
			log_msg(LOG_WARN, 0, "libav [%s]: %llu messages '%s' (the first: %s)", kinds[i].who,
				(unsigned long long)kinds[i].count, fmt, kinds[i].first);
	}
	if (others)
		log_msg(LOG_WARN, 0, "libav: %llu more messages of other kinds", (unsigned long long)others);
	n_kinds = 0;
	others = total = 0;
	pthread_mutex_unlock(&mu);
}

uint64_t avlog_count(void)
{
	pthread_mutex_lock(&mu);
	uint64_t n = total;
	pthread_mutex_unlock(&mu);
	return n;
}
