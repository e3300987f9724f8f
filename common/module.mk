# common/: the base library every program uses.
LIBS += common
common_SRCS := common/crc32.c common/log.c common/run_conf.c common/proc_ident.c common/proc_time.c common/proc_mem.c common/json_lex.c common/errbuf.c common/fs_dir.c \
               common/flags.c common/flags_text.c common/flags_tool.c common/shell_quote.c

# common/: the base layer (log, flags, JSON, errbuf, clocks, CRC, process identity, files);
# it uses no folder, and every folder may use it
PUBLIC_HEADERS += common/crc32.h common/hash_fnv.h common/flags.h common/log.h common/run_conf.h common/errbuf.h common/fs_dir.h \
                  common/json_lex.h common/proc_ident.h common/proc_mem.h common/proc_time.h common/shell_quote.h
USES_common :=

TESTS += test_flags test_fs_dir test_shell_quote test_hash_fnv
TESTS += test_proc_meminfo
test_proc_meminfo_LIBS := common
SCRIPT_TESTS += tests/test_flags_shared.sh tests/test_flags_suggest.sh
