// One evaluation of a model on a held-out manifest, in-process for tools/eval: embed (decoding
// through loaderd's library), retrieval both ways, optional mAP/nDCG and zero-shot accuracy.
#ifndef TOOLS_EVAL_RUN_H
#define TOOLS_EVAL_RUN_H
// defines: EvalOpts, eval_run

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t

#include "eval_embed.h" // defines: EvalEmbedOpts
#include "eval.h"       // defines: EvalReport, EvalRetrieval
#include "manifest.h"   // defines: Manifest
#include "model.h"      // defines: ClipModel

typedef struct {
	const char *relevance;        // relevance file (eval_input.h), or NULL
	int relevance_from_captions;  // EPIC-style relevance of synth captions instead
	const char *classes, *labels; // class names + per-sample labels, or NULL
	const char *classes_from;     // or derived from synth captions: action | object | caption
	const char *prompt;           // class prompt template, "{}" = class name (NULL: "a video of {}")
	const char *bpe;              // merges file of the manifest's captions (needed for prompts)
	int match_caption;            // a retrieval hit is any sample with the same caption (not only itself)
	int special_tokens;           // BpeSpecials of prompts and class names (prep's --special-tokens)
	int strict; // a sample that cannot be decoded ends the evaluation (else it is skipped, counted)
	EvalEmbedOpts embed;
} EvalOpts;

// 0 or -errno with a sentence in err. Without o->strict, samples that cannot be decoded are left
// out of every figure (r->skipped, r->skipped_first); all of them damaged is an error.
int eval_run(ClipModel *m, const Manifest *man, const EvalOpts *o, EvalReport *r, char *err, size_t errlen);

#endif
