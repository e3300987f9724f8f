// The own attention kernels at every length 1..130 and at the last tiles of vit-b16's 785 and 3137
// tokens, head dims 32, 64 and 128, against the CPU reference: test_kattn.cu's harness, KT_LENGTHS.
#define KT_LENGTHS 1
#include "test_kattn.cu" // defines: main, the harness
