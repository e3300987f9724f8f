// Failures of the TCP exchange end every rank on time with a message naming it: a master of
// another job (token), no master at all (the timeout fires on time), a port already in use, a
// rank that disagrees on the world size, and one rank claimed by two processes.
#include <errno.h>

#include "test_rdv_util.h" // defines: tr_info, tr_spawn, tr_join, tr_free_port, tr_expect_error

#define W(...) ((const char *const[]){__VA_ARGS__, NULL})

static char master[64];

static RdvInfo info_of(int rank, int world, const char *job, int timeout_ms)
{
	return tr_info(rank, world, 1, master, job, RDV_TCP, NULL, timeout_ms);
}

// rank 2 of job B reaches the master of job A: B fails at once; A's master refuses it and
// times out naming rank 2 as missing; A's rank 1 is served
static void wrong_token(void)
{
	RdvResult *res = tr_results(3);
	pid_t pids[3];
	RdvInfo a0 = info_of(0, 3, "A", 2500), a1 = info_of(1, 3, "A", 2500), b2 = info_of(2, 3, "B", 2500);
	pids[0] = tr_spawn(&a0, NULL, 1, &res[0]);
	pids[1] = tr_spawn(&a1, NULL, 0, &res[1]);
	pids[2] = tr_spawn(&b2, NULL, 0, &res[2]);
	tr_join(pids, 3, 30);
	CHECK_EQ_INT(res[1].rc, 0);
	tr_expect_error(&res[2], -EPERM, W("rank 2", "another job", "job:B"), "wrong token, rank 2");
	CHECK(res[2].secs < 2.0); // at once, not at the deadline
	tr_expect_error(&res[0], -ETIMEDOUT, W("rank 0", "missing: 2", "another job were refused"),
			"wrong token, rank 0");
}

// no master: the rank gives up at its deadline (not before, not much later), naming itself
static void dead_master(void)
{
	RdvResult *res = tr_results(1);
	RdvInfo w = info_of(1, 2, "dead", 1500);
	pid_t pid = tr_spawn(&w, NULL, 0, &res[0]);
	tr_join(&pid, 1, 30);
	tr_expect_error(&res[0], -ETIMEDOUT, W("rank 1", "timed out after", "Connection refused"), "dead master");
	printf("dead master: gave up after %.2f s (timeout 1.50 s)\n", res[0].secs);
	CHECK(res[0].secs >= 1.5 - 0.005 && res[0].secs < 1.5 + 1.0); // the clock is read in ms; +1 s: a loaded machine
}

// the master's port is held by another listener: rank 0 fails at once, saying so
static void port_in_use(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = {
		.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_ANY)};
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 4) == 0);
	RdvResult *res = tr_results(1);
	RdvInfo m = info_of(0, 2, "busy", 3000);
	pid_t pid = tr_spawn(&m, NULL, 1, &res[0]);
	tr_join(&pid, 1, 30);
	close(fd);
	tr_expect_error(&res[0], -EADDRINUSE, W("rank 0", "Address already in use", "MASTER_PORT"), "port in use");
	CHECK(res[0].secs < 1.0);
}

// one job, but rank 1 believes in 3 ranks and the master in 2: both stop with the reason
static void world_mismatch(void)
{
	RdvResult *res = tr_results(2);
	pid_t pids[2];
	RdvInfo m = info_of(0, 2, "W", 5000), w = info_of(1, 3, "W", 5000);
	pids[0] = tr_spawn(&m, NULL, 1, &res[0]);
	pids[1] = tr_spawn(&w, NULL, 0, &res[1]);
	tr_join(pids, 2, 30);
	tr_expect_error(&res[1], -EPROTO, W("rank 1", "world sizes differ"), "world mismatch, rank 1");
	tr_expect_error(&res[0], -EPROTO, W("rank 0", "refused rank 1", "3 ranks", "2 ranks"),
			"world mismatch, rank 0");
}

// two processes both say rank 1: the second is refused and the master stops, naming the rank
static void duplicate_rank(void)
{
	RdvResult *res = tr_results(3);
	pid_t pids[3];
	RdvInfo m = info_of(0, 3, "D", 5000), w = info_of(1, 3, "D", 5000);
	pids[0] = tr_spawn(&m, NULL, 1, &res[0]);
	pids[1] = tr_spawn(&w, NULL, 0, &res[1]);
	while (!__atomic_load_n(&res[1].done, __ATOMIC_SEQ_CST))
		tr_sleep_ms(5);
	pids[2] = tr_spawn(&w, NULL, 0, &res[2]);
	tr_join(pids, 3, 30);
	CHECK_EQ_INT(res[1].rc, 0);
	tr_expect_error(&res[2], -EPROTO, W("rank 1", "already fetched"), "duplicate, second rank 1");
	tr_expect_error(&res[0], -EEXIST, W("rank 0", "rank 1 asked for the id twice"), "duplicate, rank 0");
}

int main(void)
{
	int port = tr_free_port();
	snprintf(master, sizeof master, "127.0.0.1:%d", port);
	wrong_token();
	dead_master();
	port_in_use(port);
	world_mismatch();
	duplicate_rank();
	printf("ok\n");
	return 0;
}
