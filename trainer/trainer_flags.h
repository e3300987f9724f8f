// The trainer's configuration as a table (name, type, bounds, default, help): parsing argv,
// the generated --help, and the effective-configuration line logged at start. Model sizes and
// FastCLIP hyper-parameters come from their own tables (model_config_set, fastclip_flag_set).
#ifndef TRAINER_FLAGS_H
#define TRAINER_FLAGS_H
// defines: TrainerConfig, trainer_flags_parse, trainer_flags_help, trainer_flags_describe,
//          trainer_steps_per_epoch

#include <stddef.h> // defines: size_t
#include <stdint.h> // defines: int64_t, uint64_t

#include "comm.h"     // defines: RdvInfo
#include "fastclip.h" // defines: FastclipConfig
#include "kern_ops.h" // defines: KAttention, KBackendKind
#include "model.h"    // defines: ModelConfig, OptConfig

typedef struct {
	char backend[8], master[256], rdv[8], rdv_file[1024];
	char ring[128], comm[128], run_dir[1024], config[1024], manifest[1024], eval_manifest[1024], eval_ring[128],
		model_name[32], loss_name[32], log_level[16], eval_match[16], wd_groups[16], init_from[1024],
		precision[8], attention[16], keep_best[16], objective[16], drop_path_schedule[16];
	int classify; // --objective classify
	// --objective mae: VideoMAE pretraining of the video tower; its decoder and mask ratio (the model
	// preset's, mae_config_preset, then mae_flag_table's flags); the peak lr per 256 clips of the
	// global batch when --lr is not given (VideoMAE's rule)
	int mae;
	MaeConfig mae_cfg;
	double mae_base_lr;
	// classification fine-tuning (--objective classify): Beta α of mixup and cutmix, label smoothing,
	// drop path of the blocks (its schedule above), dropout before the heads, layer-wise lr decay (0:
	// the objective's default)
	double mixup, cutmix, label_smoothing, drop_path, head_dropout, layer_decay;
	int device;             // --device: CUDA ordinal, -1 = the local rank
	int grad_checkpoint;    // --grad-checkpoint: recompute each block's activations in backward
	int cuda_graph;         // --cuda-graph: the steady-state step as CUDA graphs (--no-cuda-graph: eager)
	double memory_limit_gb; // --memory-limit: device bytes the run may plan for (0: what the device has)
	double peak_tflops;     // --peak-tflops: the MFU's denominator (0: none known, no MFU)
	// who this rank is: --rank/--ranks or the launcher's environment (trainer_dist_resolve)
	int local_rank, local_ranks, node, nodes;
	RdvInfo rdv_info;
	int rank, ranks, batch_size, threads, flip, keep_last, resume, help, init_skip_mismatched, metrics_every;
	int comm_create, comm_unlink; // launcher modes: create / remove the comm segment, then exit
	int resume_on_new_data;       // --resume-on-new-data: a resume may continue on another dataset
	int resume_position;          // launcher mode: print where the ring of a resumed run starts, exit
	int self_check;               // --self-check: check the backend against the CPU backend, exit
	int print_geometry;           // launcher mode: print the ringctl geometry flags the model needs, exit
	int print_params;             // print the model's parameter counts as one JSON line, exit
	int fit_batch;                // print the largest batch whose step fits the device, exit
	int print_steps;              // launcher mode: print "steps S steps-per-epoch E" of this run, exit
	int check_start;              // launcher mode: what a start would refuse, checked alone (trainer_start.h), exit
	int64_t steps, stop_after_steps, dataset_size, train_num_samples, ckpt_every, eval_every, log_every;
	uint64_t seed; // --init-seed: the model's initial weights (the data seed is the ring's)
	double epochs; // > 0: --steps resolved from it (trainer_steps_per_epoch)
	double comm_timeout, data_timeout, bucket_mb;
	int64_t max_error_run; // failed positions in a row that stop the run (0: never)
	// resolved from the above
	ModelConfig model;
	FastclipConfig loss;
	OptConfig opt; // the optimizer's flags (optim_flag_table) and the schedule's total steps
	WdGroups wd;
	KAttention attention_impl; // --attention
	KBackendKind backend_kind; // --backend
} TrainerConfig;

// Fills cfg from defaults, the --config file if any, and argv (--name value or --name=value;
// booleans take no value).
// 0, or -EINVAL with one sentence in err naming the flag and what is wrong with it.
int trainer_flags_parse(TrainerConfig *cfg, int argc, char **argv, char *err, size_t errlen);
// the --help text (usage, every flag with bounds and default, model and FastCLIP flags)
int trainer_flags_help(char *buf, size_t len);
// Steps per epoch of this run: FastCLIP's epoch, ceil(train-num-samples (default dataset-size) /
// (batch-size x ranks)) (fastclip_steps_per_epoch), 0 when neither size is known. The trainer's
// one epoch: --epochs, the epoch passed to the γ schedule and the log all use it.
int64_t trainer_steps_per_epoch(const TrainerConfig *cfg);
// "ring=avclip rank=0 ... | model ... | loss=fastclip-v3 ..." with every effective value
int trainer_flags_describe(const TrainerConfig *cfg, char *buf, size_t len);

#endif
