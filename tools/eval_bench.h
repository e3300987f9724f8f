// Readers of the files the egocentric zero-shot benchmarks distribute (EK-100 MIR, Charades-Ego,
// EGTEA, EgoMCQ): the clips in file order (one manifest sample each, as tools/prep imports them)
// and each benchmark's labels. Strict: a missing column, an unknown class id, a time outside the
// video or a repeated id is an error naming the file, line and reason.
#ifndef TOOLS_EVAL_BENCH_H
#define TOOLS_EVAL_BENCH_H
// defines: BenchKind, BenchClip, BenchSet, bench_kind_parse, bench_kind_name, bench_read, bench_free,
//          bench_match_sample, BENCH_TEMPLATES

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t, uint8_t

typedef enum { BENCH_EK100_MIR, BENCH_CHARADES_EGO, BENCH_EGTEA, BENCH_EGOMCQ, BENCH_EK100_CLS } BenchKind;

typedef struct {
	char *video;       // video id (the file prep looks for under --video-root)
	double start, end; // seconds in that video; end INFINITY: to the end of the video (an EGTEA clip file)
	char *caption;     // the text prep stores with the clip
	int line;          // its record's line in the file
} BenchClip;

typedef struct {
	BenchKind kind;
	char *path;      // the main file
	BenchClip *clip; // (n) the samples, in the order prep writes them
	int64_t n;
	// EK-100 MIR: the sentences (the text side of the relevance matrix, clips x sentences) and the
	// clip whose narration each is: LaViLa embeds the sentence as that clip's narration
	char **sentence; // (n_sentences)
	int64_t *sentence_clip;
	int64_t n_sentences;
	// Charades-Ego, EGTEA: class names, index = class id (Charades "c092" -> 92, EGTEA id - 1)
	char **class_name; // (classes)
	int classes;
	uint8_t *multi; // Charades-Ego (n, classes) 0/1: the video's actions
	int *label;     // EGTEA, EK-100 CLS (n): the clip's action
	// EK-100 CLS (LaViLa's label space): class c is the (verb, noun) pair act_verb[c], act_noun[c]
	// of the pairs in the validation and train files, in the order of their "verb:noun" strings
	// (class_name); its prompts are the pair's distinct narrations, class_text[class_text_off[c] ..
	// class_text_off[c + 1])
	int *act_verb, *act_noun; // (classes)
	char **class_text;        // (n_class_text)
	int64_t *class_text_off;  // (classes + 1)
	int64_t n_class_text;
	// EgoMCQ: question q has the text query[q] and the clips q * choices .. + choices - 1
	char **query; // (n_questions)
	int *answer;  // (n_questions) 0-based choice
	int *type;    // (n_questions) 1 inter-video, 2 intra-video
	int64_t n_questions;
	int choices;
} BenchSet;

// "ek100-mir", "charades-ego", "egtea", "egomcq", "ek100-cls"; -EINVAL for another name
int bench_kind_parse(const char *name, BenchKind *kind);
const char *bench_kind_name(BenchKind kind);

// main: EPIC_100_retrieval_test.csv, CharadesEgo_v1_test_only1st.csv, an EGTEA split file
// (test_split1.txt), egomcq.json or EPIC_100_validation.csv. aux: the second file of the benchmark,
// or NULL for the clips alone (what prep needs): EPIC_100_retrieval_test_sentence.csv,
// Charades_v1_classes.txt, EGTEA's action_idx.txt, EPIC_100_train.csv (EK-100 CLS: the pairs it
// adds to the label space); EgoMCQ has none (aux must be NULL). 0, or -errno with file:line: reason in err.
int bench_read(BenchSet *b, BenchKind kind, const char *main, const char *aux, char *err, size_t errlen);
void bench_free(BenchSet *b);

// Sample i of a manifest against clip i: the same video and the same start and end within tol
// seconds (a frame of the chunks; a whole-video clip ends at duration). 0, or -EINVAL with both
// named in err.
int bench_match_sample(const BenchSet *b, int64_t i, const char *video, double start, double end, double duration,
		       double tol, char *err, size_t errlen);

// LaViLa's class prompts (eval_zeroshot.py --cls-use-template): each class's text embedding is the
// normalised mean of these, filled with the class name
#define BENCH_TEMPLATES "#C C {}|#C {}"

#endif
