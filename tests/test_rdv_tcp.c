// The id exchange over loopback TCP between forked ranks: every rank gets rank 0's bytes over
// IPv4, IPv6 and a host name; ranks that start before the master retry until it is up; a
// stranger that connects and sends junk does not disturb the job.
#include <errno.h>

#include "test_rdv_util.h" // defines: tr_info, tr_spawn, tr_join, tr_free_port
#include "proc_time.h"     // defines: time_mono_s

#define WORLD 4

static int ipv6_loopback(void)
{
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = in6addr_loopback};
	int ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static void junk_client(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {
		.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	for (int i = 0; i < 200 && connect(fd, (struct sockaddr *)&a, sizeof a) < 0; i++)
		tr_sleep_ms(10);
	const char junk[] = "GET / HTTP/1.0\r\n\r\nmore bytes than a header holds";
	if (write(fd, junk, sizeof junk) < 0)
		perror("junk write");
	tr_sleep_ms(200);
	close(fd);
}

// ranks 1.. start first; rank 0 after delay_ms; every rank must end with rank 0's blob
static void scenario(const char *host, int delay_ms, int with_junk)
{
	char master[128];
	int port = tr_free_port();
	snprintf(master, sizeof master, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
	RdvResult *res = tr_results(WORLD);
	pid_t pids[WORLD + 1];
	uint64_t seed = (uint64_t)port * 7919u;
	double t0 = time_mono_s();
	for (int r = 1; r < WORLD; r++) {
		RdvInfo in = tr_info(r, WORLD, 1, master, "tcp-test", RDV_TCP, NULL, 20000);
		pids[r] = tr_spawn(&in, NULL, 0, &res[r]);
	}
	tr_sleep_ms(delay_ms);
	RdvInfo in0 = tr_info(0, WORLD, 1, master, "tcp-test", RDV_TCP, NULL, 20000);
	pids[0] = tr_spawn(&in0, NULL, seed, &res[0]);
	pids[WORLD] = -1;
	if (with_junk) {
		pids[WORLD] = fork();
		if (pids[WORLD] == 0) {
			junk_client(port);
			_exit(0);
		}
	}
	tr_join(pids, WORLD + 1, 60);
	uint8_t want[RDV_BLOB_MAX];
	tr_blob(want, sizeof want, seed);
	for (int r = 0; r < WORLD; r++) {
		if (res[r].rc) {
			fprintf(stderr, "%s: rank %d failed: %s\n", master, r, res[r].err);
			exit(1);
		}
		CHECK(memcmp(res[r].blob, want, sizeof want) == 0);
		// a rank that started before the master waited for it, and then finished
		CHECK(r == 0 || res[r].secs >= delay_ms / 1000.0 - 0.05);
	}
	printf("%s: %d ranks got the id in %.2f s (master started after %d ms%s)\n", master, WORLD, time_mono_s() - t0,
	       delay_ms, with_junk ? ", junk client" : "");
}

int main(void)
{
	scenario("127.0.0.1", 0, 0);
	scenario("localhost", 100, 0);
	if (ipv6_loopback())
		scenario("::1", 0, 0);
	else
		printf("note: no IPv6 loopback here; the IPv6 case was not run\n");
	scenario("127.0.0.1", 1500, 0); // a late master
	scenario("127.0.0.1", 300, 1);
	printf("ok\n");
	return 0;
}
