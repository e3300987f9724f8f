# tools/: user-facing programs built in place (tools/ringstat, ...). They use the libraries below
# them through their public headers.
INC_DIRS += tools
# the one library of the folder (libtools): the evaluation tool's logic, the plot canvas, the text
# renderer and PNG writer, which several programs share; each fragment adds its sources
LIBS += tools
USES_tools := eval loaderd model kernels shm-layout data stream common
PROGS += tools/ringstat
tools/ringstat_SRCS := tools/ringstat.c
tools/ringstat_LIBS := shm-layout common

TESTS += test_ringstat
test_ringstat_LIBS := shm-layout common
test_ringstat_WHITEBOX := shm-layout # writes counters into the control block to see them shown

PROGS += tools/ringctl
tools/ringctl_SRCS := tools/ringctl.c
tools/ringctl_LIBS := shm-layout data common
SCRIPT_TESTS += tests/test_ringctl.sh

# tools/launch.sh end to end (needs loaderd, the trainer and the dataset tools)
ifeq ($(HAVE_LIBAV),1)
SCRIPT_TESTS += tests/test_launch.sh tests/test_launch_sigint.sh tests/test_launch_sigint_late.sh tests/test_launch_stop_mark.sh tests/test_launch_live_code.sh tests/test_launch_resume.sh tests/test_launch_nodes.sh tests/test_clipdump_grid.sh
# nothing joins or resumes the wrong job: ring and checkpoint record the dataset (issue 31)
SCRIPT_TESTS += tests/test_job_identity.sh tests/test_launch_data_changed.sh tests/test_run_dir_owner.sh
SCRIPT_TESTS += tests/test_launch_check_start.sh tests/test_launch_resume_loaders.sh
# the commands launch.sh prints are shell-quoted (a run directory with a space and a quote)
SCRIPT_TESTS += tests/test_launch_quoted.sh
# make bench-learn's script in its smoke mode (seconds of data, 5 steps, 2 seeds)
SCRIPT_TESTS += tests/test_bench_learn_smoke.sh
# make demo-finetune's script in its smoke mode: pretrain, export, probe, fine-tune, classify, plot
SCRIPT_TESTS += tests/test_demo_finetune_smoke.sh
# tools/bench/peers.sh in its smoke mode: the loader and the Python peers on the same clip plans
SCRIPT_TESTS += tests/test_peers_smoke.sh
# a control request is data: hostile ones run nothing and leave the supervisor alive
SCRIPT_TESTS += tests/test_launch_control_hostile.sh
# make demo-mae's smoke mode (issue 29): VideoMAE pretraining on synth, clipdump --mae, the probes
SCRIPT_TESTS += tests/test_demo_mae_smoke.sh
endif

.PHONY: bench-learn
bench-learn: all
	BUILD=$(BUILD) bash tools/bench/learn.sh $(BENCH_LEARN_ARGS)
# its report: paired differences and their intervals on fixed rows
SCRIPT_TESTS += tests/test_bench_learn_stats.sh
# the README's own-data walkthrough (videos and images), run as written
SCRIPT_TESTS += tests/test_readme_own_data.sh
