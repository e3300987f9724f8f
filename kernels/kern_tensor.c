// Tensor headers, shapes, views and the bf16 <-> f32 store rule shared by all backends.
// Nothing here allocates or touches backend memory.
#include "kern_ops.h" // defines: KTensor helpers

#include <errno.h>
#include <stdio.h>
#include <string.h>

size_t kern_dtype_size(KDtype dt)
{
	switch (dt) {
	case KDT_F32: return 4;
	case KDT_BF16: return 2;
	case KDT_F64: return 8;
	case KDT_I32: return 4;
	case KDT_U8: return 1;
	case KDT_I64: return 8;
	default: return 0;
	}
}

const char *kern_dtype_name(KDtype dt)
{
	static const char *names[KDT_COUNT] = {"f32", "bf16", "f64", "i32", "u8", "i64"};
	return (unsigned)dt < KDT_COUNT ? names[dt] : "?";
}

int64_t kern_numel(const KTensor *t)
{
	int64_t n = 1;
	for (int i = 0; i < t->ndim; i++)
		n *= t->shape[i];
	return n;
}

size_t kern_nbytes(const KTensor *t)
{
	return (size_t)kern_numel(t) * kern_dtype_size(t->dtype);
}

KTensor kern_tensor_make(void *data, KDtype dt, int ndim, const int64_t *shape)
{
	KTensor t;
	memset(&t, 0, sizeof t);
	t.data = data;
	t.dtype = dt;
	t.ndim = ndim > KERN_MAX_DIMS ? KERN_MAX_DIMS : ndim;
	for (int i = 0; i < t.ndim; i++)
		t.shape[i] = shape[i];
	return t;
}

int kern_view(KTensor *out, const KTensor *parent, int64_t offset, int ndim, const int64_t *shape)
{
	if (ndim < 0 || ndim > KERN_MAX_DIMS || offset < 0)
		return -EINVAL;
	KTensor v = kern_tensor_make(NULL, parent->dtype, ndim, shape);
	if (offset + kern_numel(&v) > kern_numel(parent))
		return -EINVAL;
	v.data = (char *)parent->data + (size_t)offset * kern_dtype_size(parent->dtype);
	*out = v;
	return 0;
}

uint16_t kern_bf16_from_f32(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a NaN after truncation
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

float kern_f32_from_bf16(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}
