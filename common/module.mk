# common/: small libraries every program uses (logging, RNG, time).
LIBS += common
common_SRCS := common/log.c common/run_conf.c
