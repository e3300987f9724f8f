# trainer/ the trainer program (issue 6/7 CPU backend): the training step as library avtrain
# (model + FastCLIP exchange + bucketed all-reduce + optimizer + temperature), and trainer/trainer.
LIBS += avtrain
avtrain_SRCS := trainer/trainer_comm_local.c trainer/trainer_step.c

TRAINER_TESTS := test_trainer_dist test_trainer_learn
TESTS += $(TRAINER_TESTS)
