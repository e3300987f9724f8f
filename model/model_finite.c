// The finiteness check of loaded weights: one pass over the flat buffer, and the name of the
// tensor (parameter spec) that holds the first non-finite value.
#include "model.h" // defines: model_params_check_finite, ParamSpec

#include <errno.h>
#include <math.h>
#include <stdio.h>

int model_params_check_finite(const ParamSpec *specs, int n, const float *flat, int64_t numel, const char *what,
			      char *err, size_t errlen)
{
	int64_t first = -1, count = 0;
	for (int64_t i = 0; i < numel; i++)
		if (!isfinite(flat[i])) {
			if (first < 0)
				first = i;
			count++;
		}
	if (first < 0)
		return 0;
	const ParamSpec *s = NULL;
	for (int k = 0; k < n && !s; k++)
		if (first >= specs[k].offset && first < specs[k].offset + specs[k].numel)
			s = &specs[k];
	char where[160];
	if (s)
		snprintf(where, sizeof where, "tensor %s", s->name);
	else
		snprintf(where, sizeof where, "the parameter buffer");
	snprintf(err, errlen, "%s: %s holds %lld non-finite value%s (first: %s at element %lld)", what, where,
		 (long long)count, count == 1 ? "" : "s",
		 isnan(flat[first]) ? "nan"
		 : flat[first] > 0  ? "inf"
				    : "-inf",
		 (long long)(s ? first - s->offset : first));
	return -EINVAL;
}
