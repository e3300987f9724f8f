// trainer_feeder: a synthetic ring producer for the trainer tests. Position g carries a clip of
// coloured noise whose colour is the class of sample(seed, g), and the caption "class, end":
// learnable pairs that are openly synthetic. Everything is a pure function of (seed, g).
#include <errno.h>  // defines: ETIMEDOUT, ESHUTDOWN
#include <signal.h> // defines: sigaction, SIGTERM, SIGINT
#include <stdio.h>  // defines: fprintf
#include <stdlib.h> // defines: strtoull
#include <string.h> // defines: strcmp, memset

#include "log.h"    // defines: log_init, log_info, log_fatalx
#include "ring.h"   // defines: ring_open, ring_producer_*
#include "stream.h" // defines: rng_stream_init, rng_next_u32, RNG_STREAM_CLIP_SAMPLE, stream_position

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	g_stop = sig;
}

static uint64_t num(const char *flag, const char *v)
{
	char *end;
	unsigned long long x = strtoull(v, &end, 10);
	if (!*v || *end || v[0] == '-')
		log_fatalx("%s: '%s' is not a non-negative integer", flag, v);
	return x;
}

int main(int argc, char **argv)
{
	log_init("trainer_feeder", LOG_INFO);
	const char *ring = "avclip";
	uint64_t n = 64, classes = 8, error_every = 0, vocab = 49408, noise = 24, stop_after = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help")) {
			printf("usage: trainer_feeder --ring NAME [--dataset-size N] [--classes C] [--vocab V] [--noise A]\n"
			       "                      [--error-every K] [--stop-after G]\n"
			       "  fills ring slots until SIGTERM: position g = coloured noise of class(sample(seed, g)),\n"
			       "  caption [1 + class, V - 1]; every K-th position is published as an error slot;\n"
			       "  --stop-after G: exit once positions below G are all produced\n");
			return 0;
		}
		if (!v)
			log_fatalx("%s needs a value", a);
		i++;
		if (!strcmp(a, "--ring"))
			ring = v;
		else if (!strcmp(a, "--dataset-size"))
			n = num(a, v);
		else if (!strcmp(a, "--classes"))
			classes = num(a, v);
		else if (!strcmp(a, "--vocab"))
			vocab = num(a, v);
		else if (!strcmp(a, "--noise"))
			noise = num(a, v);
		else if (!strcmp(a, "--error-every"))
			error_every = num(a, v);
		else if (!strcmp(a, "--stop-after"))
			stop_after = num(a, v);
		else
			log_fatalx("unknown flag %s (see --help)", a);
	}
	if (n < 1 || classes < 1 || vocab < classes + 2 || noise > 127)
		log_fatalx("need --dataset-size >= 1, --classes >= 1, --vocab >= classes + 2, --noise <= 127");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	Ring *r;
	char err[256] = "";
	int rc = ring_open(&r, ring, NULL, err, sizeof err);
	if (rc < 0)
		log_fatalx("cannot open ring '%s': %s", ring, err[0] ? err : strerror(-rc));
	RingInfo info;
	ring_info(r, &info);
	const RingGeometry *g = &info.geometry;
	if (g->channels != 3 || g->text_len < 2)
		log_fatalx("ring '%s' needs 3 channels and a text length >= 2", ring);
	RingProducer *p;
	if ((rc = ring_producer_attach(r, -1, &p)) < 0)
		log_fatalx("cannot attach to ring '%s' as a producer: %s", ring, strerror(-rc));
	const size_t pixels = (size_t)g->frames * g->height * g->width;
	uint64_t made = 0;
	while (!g_stop) {
		RingSlot s;
		rc = ring_producer_claim(p, &s, 100);
		if (rc == -ETIMEDOUT)
			continue;
		if (rc == -ESHUTDOWN)
			break;
		if (rc < 0)
			log_fatalx("claim failed: %s", strerror(-rc));
		if (stop_after && s.position >= stop_after) { // beyond the wanted range: leave it to be adopted
			g_stop = 1;
			break;
		}
		if (error_every && s.position % error_every == error_every - 1) {
			rc = ring_producer_publish_error(p, &s, 1);
		} else {
			StreamPos sp;
			stream_position(info.seed, s.position, n, 1, &sp);
			uint64_t cls = sp.sample % classes;
			RngStream cs, px;
			rng_stream_init(&cs, info.seed ^ 0xc0102ull, cls, RNG_STREAM_CLIP_SAMPLE); // the class's colour
			int base[3];
			for (int c = 0; c < 3; c++)
				base[c] = 40 + (int)rng_next_below(&cs, 176);
			rng_stream_init(&px, info.seed, s.position, RNG_STREAM_CLIP_SAMPLE);
			for (size_t i = 0; i < pixels; i++)
				for (int c = 0; c < 3; c++) {
					int v = base[c] + (int)rng_next_below(&px, (uint32_t)(2 * noise + 1)) -
						(int)noise;
					s.payload[i * 3 + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
				}
			memset(s.text, 0, g->text_len * sizeof(int32_t));
			s.text[0] = (int32_t)(1 + cls);
			s.text[1] = (int32_t)(vocab - 1);
			s.sample_id = sp.sample;
			rc = ring_producer_publish(p, &s);
		}
		if (rc < 0)
			log_fatalx("publish of position %llu failed: %s", (unsigned long long)s.position,
				   strerror(-rc));
		made++;
	}
	ring_producer_detach(p);
	ring_close(r);
	log_info("produced %llu positions", (unsigned long long)made);
	return 0;
}
