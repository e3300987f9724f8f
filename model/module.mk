# model/: the model side (issue 5): the dual encoder on the op interface, optimizers, safetensors
# weights and checkpoints, as library model on top of kernels.
PUBLIC_HEADERS += model/model.h
USES_model := kernels stream common
LIBS += model
model_SRCS := model/model_config.c model/model_params.c model/model_block.c model/model_clip.c model/model_droppath.c \
                model/model_synth.c model/optim_adam.c model/st_file.c model/st_model.c model/st_openclip.c model/ckpt_io.c \
                model/model_finite.c model/mae_config.c model/model_mae.c

MODEL_TESTS := test_model_bf16 test_model_init_names test_model_grad_hook test_model_grad_ckpt test_model_flops test_model_grad test_model_config test_optim_schedule test_optim_step test_st_roundtrip test_st_errors test_st_strict test_ckpt_resume test_ckpt_failures test_model_twin test_optim_twin test_model_train test_model_openclip_names test_model_threads \
               test_optim_lamb_nodecay test_optim_wd_groups test_optim_schedule_extend
# a non-finite value in any tensor of a checkpoint is refused at load
MODEL_TESTS += test_ckpt_nonfinite
# a link planted at a checkpoint's temporary name is not followed
MODEL_TESTS += test_ckpt_planted_link
MODEL_TESTS += test_optim_flags # issue 30 §6: the optimizer flags are a table over OptConfig
MODEL_TESTS += test_optim_layer_decay # issue 28 §1: layer-wise lr decay (OptConfig.layer_decay)
MODEL_TESTS += test_model_droppath # issue 28 §1: drop path in the video tower's blocks
SCRIPT_TESTS += tests/test_model_droppath_torch.sh
TESTS += $(MODEL_TESTS)
$(foreach t,$(MODEL_TESTS),$(eval $(t)_LIBS := model kernels stream common))
# issue 29: the masked video autoencoder (VideoMAE): its gradient against finite differences, its
# encoder on the visible tokens against the tower on those tokens alone
MAE_TESTS := test_mae_grad test_mae_masked test_mae_twin
TESTS += $(MAE_TESTS)
$(foreach t,$(MAE_TESTS),$(eval $(t)_LIBS := model kernels stream common))
