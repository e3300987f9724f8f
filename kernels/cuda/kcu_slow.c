// The CUDA backend's slow-path record (kcu_slow.h): a count and each shape's first reason, so
// that a product cuBLASLt turns down is neither silent nor logged once per call.
#include "kcu_slow.h" // defines: KcuSlow, kcu_slow_*

#include <stdio.h>
#include <string.h>

void kcu_slow_init(KcuSlow *s)
{
	memset(s, 0, sizeof *s);
	pthread_mutex_init(&s->lock, NULL);
}

void kcu_slow_destroy(KcuSlow *s)
{
	pthread_mutex_destroy(&s->lock);
}

static int seen(const KcuSlow *s, const char *key)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->key[i], key))
			return 1;
	return 0;
}

void kcu_slow_hit(KcuSlow *s, const char *key, const char *why)
{
	pthread_mutex_lock(&s->lock);
	s->count++;
	if (s->n < KCU_SLOW_SHAPES && !seen(s, key)) {
		snprintf(s->key[s->n], sizeof s->key[0], "%s", key);
		snprintf(s->line[s->n], sizeof s->line[0], "%s: %s", key, why);
		s->n++;
	}
	pthread_mutex_unlock(&s->lock);
}

int64_t kcu_slow_count(KcuSlow *s)
{
	pthread_mutex_lock(&s->lock);
	int64_t n = s->count;
	pthread_mutex_unlock(&s->lock);
	return n;
}

int kcu_slow_note(KcuSlow *s, char *buf, size_t len)
{
	pthread_mutex_lock(&s->lock);
	int got = s->reported < s->n;
	if (got && len)
		snprintf(buf, len, "%s", s->line[s->reported]);
	s->reported += got;
	pthread_mutex_unlock(&s->lock);
	return got;
}
