# common/: small libraries every program uses (logging, RNG, time).
LIBS += common
common_SRCS := common/log.c common/run_conf.c common/proc_ident.c common/proc_time.c common/proc_mem.c common/json_lex.c common/errbuf.c common/fs_dir.c \
               common/flags.c common/flags_text.c common/flags_tool.c common/shell_quote.c

# every header of common/ is public but the tokenizer's Unicode tables; common uses no folder
PUBLIC_HEADERS += common/hash_fnv.h common/flags.h common/log.h common/run_conf.h common/bpe_clean.h common/bpe_text.h common/bpe_tokenizer.h common/bpe_train.h \
                  common/eval_metrics.h common/eval_metrics_bench.h common/errbuf.h common/fs_dir.h common/eval_report.h common/json_lex.h common/manifest_format.h common/manifest_reader.h \
                  common/manifest_writer.h common/proc_ident.h common/proc_mem.h common/proc_time.h common/rng_philox.h common/shell_quote.h common/stream_perm.h common/tar.h
USES_common :=

TESTS += test_flags test_fs_dir test_shell_quote test_hash_fnv
TESTS += test_proc_meminfo
test_proc_meminfo_LIBS := common
SCRIPT_TESTS += tests/test_flags_shared.sh tests/test_flags_suggest.sh
