// Position g -> (epoch, sample): every epoch visits every sample exactly once, epochs follow
// g / n, shuffle 0 keeps dataset order, the mapping is deterministic, n == 0 is refused.
#include "stream.h"   // defines: stream_position
#include "testutil.h" // defines: CHECK, CHECK_EQ_INT

#include <errno.h>

int main(void)
{
	enum { N = 37 };
	StreamPos p, q;
	for (uint64_t e = 0; e < 4; e++) {
		int count[N] = {0};
		for (uint64_t i = 0; i < N; i++) {
			uint64_t g = e * N + i;
			CHECK_OK(stream_position(99, g, N, 1, &p));
			CHECK_OK(stream_position(99, g, N, 1, &q));
			CHECK(p.epoch == e && p.offset == i && p.sample < N && p.sample == q.sample);
			count[p.sample]++;
		}
		for (int k = 0; k < N; k++)
			CHECK_EQ_INT(count[k], 1);
	}
	CHECK_OK(stream_position(99, 2 * N + 5, N, 0, &p));
	CHECK(p.epoch == 2 && p.sample == 5);
	CHECK_EQ_INT(stream_position(99, 3, 0, 1, &p), -EINVAL);
	printf("epochs cover every sample once; eval order kept\n");
	return 0;
}
