// Tensors of the op interface: a backend-owned pointer with a dtype and a shape.
// Model code holds KTensors and passes them to ops; it never dereferences .data.
#ifndef KERN_TENSOR_H
#define KERN_TENSOR_H
// defines: KDtype, KTensor, KERN_MAX_DIMS, kern_dtype_size, kern_dtype_name, kern_numel,
//          kern_nbytes, kern_shape_str, kern_tensor_make, kern_view, kern_bf16_from_f32, kern_f32_from_bf16

#include <stddef.h>
#include <stdint.h>

// F32: the CPU backend's compute type and the master weights' type everywhere.
// BF16: activations/matmuls on the CUDA backend; the CPU backend only converts it.
// F64: CPU-only, used by tests to check backward passes against finite differences.
// I32: token ids and row positions.
typedef enum { KDT_F32 = 0, KDT_BF16 = 1, KDT_F64 = 2, KDT_I32 = 3, KDT_COUNT } KDtype;

#define KERN_MAX_DIMS 5

typedef struct {
	void *data; // backend memory (host memory on the CPU backend, device memory on CUDA)
	KDtype dtype;
	int ndim;
	int64_t shape[KERN_MAX_DIMS];
	int owned; // 1 when kern_alloc made it (kern_free releases it), 0 for views
} KTensor;

size_t kern_dtype_size(KDtype dt);
const char *kern_dtype_name(KDtype dt);
int64_t kern_numel(const KTensor *t);
size_t kern_nbytes(const KTensor *t);
// writes "(2, 3, 4)" into buf; returns buf
char *kern_shape_str(const KTensor *t, char *buf, size_t len);
// a tensor header (no memory) with the given shape; ndim <= KERN_MAX_DIMS
KTensor kern_tensor_make(void *data, KDtype dt, int ndim, const int64_t *shape);
// a view of `numel(shape)` elements of parent starting at element offset; -EINVAL when out of range
int kern_view(KTensor *out, const KTensor *parent, int64_t offset, int ndim, const int64_t *shape);

// round to nearest even, NaN kept quiet
uint16_t kern_bf16_from_f32(float f);
float kern_f32_from_bf16(uint16_t b);

#endif
