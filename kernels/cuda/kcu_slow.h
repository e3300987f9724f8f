// The CUDA backend's record of its slow paths: matrix products that ran on the own kernel where
// cuBLASLt refused or takes no such types, and epilogues cuBLASLt refused (done as an own pass).
#ifndef KCU_SLOW_H
#define KCU_SLOW_H
// defines: KcuSlow, KCU_SLOW_SHAPES, kcu_slow_init, kcu_slow_destroy, kcu_slow_hit, kcu_slow_count,
//          kcu_slow_note

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KCU_SLOW_SHAPES 64 // distinct shapes remembered; later ones are counted, not described

// one per device: every stream's hits, and each shape's line handed out once
typedef struct KcuSlow {
	pthread_mutex_t lock;
	int64_t count; // under lock
	int n, reported;
	char key[KCU_SLOW_SHAPES][96];   // what makes a shape: path, transposes, sizes, types
	char line[KCU_SLOW_SHAPES][256]; // its description with the first reason
} KcuSlow;

void kcu_slow_init(KcuSlow *s);
void kcu_slow_destroy(KcuSlow *s);
// one hit: key names the shape, why the reason (cuBLASLt's refusal message, or the types)
void kcu_slow_hit(KcuSlow *s, const char *key, const char *why);
int64_t kcu_slow_count(KcuSlow *s);
// 1 and the next shape's line not handed out before (each once), 0 when none is new
int kcu_slow_note(KcuSlow *s, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
