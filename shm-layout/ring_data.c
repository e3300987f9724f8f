// Which dataset a ring serves (ring.h: RingDataId, ring_check_data): recorded at creation, compared
// by every loader and trainer that joins, so a job is never fed another dataset's clips and captions.
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ring_layout.h"

void ring_data_set(RingDataId *d, uint64_t id, uint64_t vocab_hash, const char *name)
{
	memset(d, 0, sizeof *d);
	d->id = id;
	d->vocab_hash = vocab_hash;
	size_t n = strlen(name), cap = sizeof d->name - 1;
	if (n <= cap)
		memcpy(d->name, name, n);
	else
		snprintf(d->name, sizeof d->name, "...%s", name + n - (cap - 3));
}

int ring_check_data(const Ring *r, const char *ring_name, const RingDataId *mine, const char *who, char *err,
		    size_t errlen)
{
	const RingDataId *d = &r->data;
	if (!d->id)
		return 0;
	if (mine->id == d->id && (!mine->vocab_hash || !d->vocab_hash || mine->vocab_hash == d->vocab_hash))
		return 0;
	if (!mine->id)
		snprintf(err, errlen,
			 "ring '%s' serves the dataset of %s (id %016" PRIx64 "), and %s names no manifest to check it "
			 "against: give it that --manifest",
			 ring_name, d->name, d->id, who);
	else if (mine->id == d->id)
		snprintf(err, errlen,
			 "ring '%s' serves the dataset of %s with captions of vocabulary bpe %016" PRIx64 ", %s reads "
			 "them as bpe %016" PRIx64 "",
			 ring_name, d->name, d->vocab_hash, who, mine->vocab_hash);
	else
		snprintf(err, errlen,
			 "ring '%s' serves the dataset of %s (id %016" PRIx64 "), but %s was given %s (id %016" PRIx64
			 "): another dataset, or the manifest was rewritten since the ring was made; start it with "
			 "the job's manifest, or start the job again (tools/launch.sh recreates the ring)",
			 ring_name, d->name, d->id, who, mine->name, mine->id);
	return -EINVAL;
}
