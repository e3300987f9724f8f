// tools/export: a trainer checkpoint as open_clip-named safetensors that open_clip loads with
// strict=True (--image: an image model, the temporal embedding folded into the positions).
#include "eval_model.h" // defines: EvalModel, eval_model_load, eval_model_free
#include "flags.h"      // defines: FlagSpec, FLAG_AT, FlagRest, FlagTool, flags_tool
#include "kern_ops.h"   // defines: kern_ctx_create_cpu, kern_ctx_destroy
#include "log.h"        // defines: log_init, log_info, log_fatalx
#include "model.h"      // defines: st_openclip_export

#include <stdio.h> // defines: printf

typedef struct {
	const char *out;
	int image, help;
} ExportFlags;

static const FlagSpec flag_table[] = {
	{"out", FLAG_STRPTR, FLAG_AT(ExportFlags, out), 0, 0, NULL, .help = "the safetensors file to write (required)"},
	{"image", FLAG_SWITCH, FLAG_AT(ExportFlags, image), 0, 0, "0",
	 .help = "an image model: the temporal embedding of frame 0 is added to the positional embedding and not written "
		 "(exact for a 1-frame model); without it the file keeps visual.temporal_embedding, which open_clip's image "
		 "tower does not have"},
	{"help", FLAG_SWITCH, FLAG_AT(ExportFlags, help), 0, 0, "0", .help = "this text", .alias = 'h'},
};
enum { N_FLAGS = sizeof flag_table / sizeof flag_table[0] };

static const FlagTool tool = {
	"export",
	"usage: export RUN_DIR|CKPT_DIR|CKPT_FILE --out FILE [--image]\n"
	"Writes the checkpoint's weights as F32 safetensors under open_clip's names, with every size in\n"
	"__metadata__ (embed_dim, vision.*, text.*, mlp_ratio, act), loadable by open_clip with strict=True.\n"
	"An --objective mae checkpoint gives its video encoder, the rest at an untrained initialisation\n"
	"(tubelets of 2 frames: our runs load it, open_clip has no 3-D patch embedding).\n",
	flag_table, N_FLAGS};

int main(int argc, char **argv)
{
	log_init("export", LOG_INFO);
	ExportFlags fl = {0};
	const char *pos[1];
	FlagRest rest = {.pos = pos, .max_pos = 1};
	flags_tool(&tool, &fl, argc, argv, &rest);
	const char *in = rest.n_pos ? pos[0] : NULL, *out = fl.out;
	int image = fl.image;
	if (!in || !out)
		log_fatalx("give a checkpoint (RUN_DIR, its ckpt/ folder or a ckpt-*.safetensors file) and --out FILE");
	KernCtx *ctx;
	EvalModel em;
	char err[1024];
	if (kern_ctx_create_cpu(&ctx, 1) < 0)
		log_fatalx("cannot create the CPU kernel context");
	if (eval_model_load(&em, ctx, in, NULL, 1, err, sizeof err) < 0)
		log_fatalx("%s", err);
	ClipModel *m = em.model;
	if (st_openclip_export(out, ctx, &em.cfg, m->specs, m->n_specs, &m->params, image, em.vocab, em.merges, err,
			       sizeof err) < 0)
		log_fatalx("%s", err);
	if (image && em.cfg.frames > 1)
		log_info(
			"--image on a %d-frame model: an image is its frame 0 (features differ from the video model's)",
			em.cfg.frames);
	log_info("wrote %s from %s (step %lld)%s", out, em.source, (long long)em.step,
		 image ? " as an image model" : "");
	if (em.mae)
		log_info(
			"a masked autoencoder's checkpoint: the file holds its video encoder (visual.* but visual.proj); "
			"visual.proj, the text tower and logit_scale are an untrained initialisation (seed 0), so a clip "
			"run from it (--init-from) starts them fresh and a classify run reads only the encoder");
	eval_model_free(&em);
	kern_ctx_destroy(ctx);
	return 0;
}
