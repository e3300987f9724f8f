# trainer/ model side (issue 5): the dual encoder on the op interface, optimizers, safetensors
# weights and checkpoints, as library avmodel on top of kernels.
LIBS += avmodel
avmodel_SRCS := trainer/model_config.c trainer/model_params.c trainer/model_block.c trainer/model_clip.c \
                trainer/model_synth.c trainer/optim_adam.c trainer/st_file.c trainer/st_model.c trainer/ckpt_io.c

MODEL_TESTS := test_model_grad test_model_config test_optim_schedule test_optim_step test_st_roundtrip test_st_errors test_ckpt_resume test_ckpt_failures
TESTS += $(MODEL_TESTS)
$(foreach t,$(MODEL_TESTS),$(eval $(t)_LIBS := avmodel kernels common))
